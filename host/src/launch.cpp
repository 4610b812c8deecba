#include "fabric/launch.h"

#include <algorithm>
#include <set>

#include "fabric/error.h"
#include "fabric/exit_mailbox.h"
#include "hal/arch_map.h"
#include "protocol/erisc_base_fw.h"

namespace fabric {

namespace bfw = protocol::base_fw;

std::string_view outcome_name(LaunchOutcome o) {
    switch (o) {
        case LaunchOutcome::Exited:
            return "exited";
        case LaunchOutcome::Trapped:
            return "trapped";
        case LaunchOutcome::Timeout:
            return "timeout";
        default:
            return "invalid";
    }
}

void load_elf(Device& device, const CoreLocation& core, const ElfImage& image) {
    for (const auto& s : image.segments()) device.write(core, s.address, s.bytes);
}

LaunchResult launch(Device& device, const CoreLocation& core, const ElfImage& image,
                    const PlacementRules& placement, const LaunchOptions& options) {
    const LaunchTarget t{core, &image, placement};
    return launch_many(device, std::span<const LaunchTarget>(&t, 1), options).front();
}

namespace {

// Load one target without starting it.
void prepare(Device& device, const LaunchTarget& t, LaunchMethod method) {
    namespace c = hal::common;
    switch (method) {
        case LaunchMethod::ResetPc:
            device.write32(t.core, c::kSoftResetReg, c::kSoftResetAllRiscs);  // hold every RISC
            clear_exit_mailbox(device, t.core);
            load_elf(device, t.core, *t.image);
            device.write32(t.core, c::kErisc0ResetPcReg, t.image->entry());
            return;
        case LaunchMethod::LaunchFlag:
            if (t.image->entry() != bfw::kAppBase) {
                fail(ErrorCategory::BadElf,
                     "{}: entry {} is not the firmware base {} where the base firmware on {} calls "
                     "the application",
                     t.image->name(), hex32(t.image->entry()), hex32(bfw::kAppBase), t.core.str());
            }
            if (device.read32(t.core, bfw::kLaunchAppFlag) != 0) {
                fail(ErrorCategory::Device,
                     "{}: an application is still running on {} (launch flag {} is set)",
                     device.description(), t.core.str(), hex32(bfw::kLaunchAppFlag));
            }
            clear_exit_mailbox(device, t.core);
            load_elf(device, t.core, *t.image);
            return;
        default:
            fail(ErrorCategory::Internal, "launch: unknown launch method {}",
                 static_cast<int>(method));
    }
}

// The device's own view of the core (the model's run state: the fast path); where it cannot tell,
// the firmware's exit mailbox (silicon).
CoreStatus observed_status(Device& device, const CoreLocation& core) {
    CoreStatus s = device.core_status(core);
    if (s.state != CoreRunState::Unknown) return s;
    if (auto from_mailbox = exit_mailbox_core_status(read_exit_mailbox_header(device, core))) {
        from_mailbox->pc = s.pc;
        return *from_mailbox;
    }
    return s;
}

void start(Device& device, const LaunchTarget& t, LaunchMethod method) {
    namespace c = hal::common;
    if (method == LaunchMethod::ResetPc) {
        device.write32(t.core, c::kSoftResetReg, c::kSoftResetAllRiscs & ~c::kSoftResetErisc0);
    } else {
        device.write32(t.core, bfw::kLaunchAppFlag, 1);
    }
}

}  // namespace

std::vector<LaunchMethod> load_many(Device& device, std::span<const LaunchTarget> targets) {
    std::set<CoreLocation> seen;
    for (const auto& t : targets) {
        if (t.image == nullptr)
            fail(ErrorCategory::Internal, "launch: no image for {}", t.core.str());
        if (!seen.insert(t.core).second) {
            fail(ErrorCategory::BadInput, "launch: {} is given more than one image", t.core.str());
        }
        t.image->check_placement(t.placement);
    }
    std::vector<LaunchMethod> methods(targets.size());
    for (size_t i = 0; i < targets.size(); ++i) {
        methods[i] = device.launch_method(targets[i].core);
        prepare(device, targets[i], methods[i]);
    }
    return methods;
}

void start_many(Device& device, std::span<const LaunchTarget> targets,
                std::span<const LaunchMethod> methods) {
    if (methods.size() != targets.size()) {
        fail(ErrorCategory::Internal, "launch: {} launch methods for {} targets", methods.size(),
             targets.size());
    }
    for (size_t i = 0; i < targets.size(); ++i) start(device, targets[i], methods[i]);
}

std::vector<LaunchResult> launch_many(Device& device, std::span<const LaunchTarget> targets,
                                      const LaunchOptions& options) {
    if (options.poll_cycles == 0) fail(ErrorCategory::BadInput, "launch: poll interval is 0");
    const std::vector<LaunchMethod> methods = load_many(device, targets);
    start_many(device, targets, methods);
    return wait_many(device, targets, methods, options);
}

std::vector<LaunchResult> wait_many(Device& device, std::span<const LaunchTarget> targets,
                                    std::span<const LaunchMethod> methods,
                                    const LaunchOptions& options,
                                    const std::function<void()>& each_poll) {
    if (options.poll_cycles == 0) fail(ErrorCategory::BadInput, "launch: poll interval is 0");
    if (methods.size() != targets.size()) {
        fail(ErrorCategory::Internal, "launch: {} launch methods for {} targets", methods.size(),
             targets.size());
    }
    std::vector<LaunchResult> results(targets.size());
    for (size_t i = 0; i < targets.size(); ++i) results[i].method = methods[i];

    std::vector<size_t> pending(targets.size());
    for (size_t i = 0; i < pending.size(); ++i) pending[i] = i;
    uint64_t elapsed = 0;
    while (elapsed < options.max_cycles && !pending.empty()) {
        const uint64_t want = std::min(options.poll_cycles, options.max_cycles - elapsed);
        const uint64_t ran = device.advance(want);
        elapsed += ran;
        if (each_poll) each_poll();
        std::vector<size_t> still;
        for (const size_t i : pending) {
            const LaunchTarget& t = targets[i];
            LaunchResult& r = results[i];
            r.cycles = elapsed;
            r.status = observed_status(device, t.core);
            switch (r.status.state) {
                case CoreRunState::Exited:
                    r.outcome = LaunchOutcome::Exited;
                    continue;
                case CoreRunState::Trapped:
                    r.outcome = LaunchOutcome::Trapped;
                    continue;
                case CoreRunState::Reset:
                    fail(ErrorCategory::Device, "{}: {} is still in reset after release of ERISC0",
                         device.description(), t.core.str());
                case CoreRunState::Running:
                case CoreRunState::Unknown:
                    if (r.method == LaunchMethod::LaunchFlag &&
                        device.read32(t.core, bfw::kLaunchAppFlag) == 0) {
                        r.outcome = LaunchOutcome::Exited;
                        r.returned_to_base_firmware = true;
                        r.status.state = CoreRunState::Exited;
                        r.status.exit_status = device.read32(
                            t.core, bfw::kStatusBlock + offsetof(bfw::StatusBlock, app_result));
                        continue;
                    }
                    if (ran == 0) {
                        fail(ErrorCategory::Device,
                             "{}: {} has not ended (state {}) but the device clock does not "
                             "advance",
                             device.description(), t.core.str(), run_state_name(r.status.state));
                    }
                    still.push_back(i);
                    break;
                default:
                    fail(ErrorCategory::Internal, "launch: unexpected core state {}",
                         static_cast<int>(r.status.state));
            }
        }
        pending = std::move(still);
    }
    for (const size_t i : pending) results[i].outcome = LaunchOutcome::Timeout;
    for (size_t i = 0; i < targets.size(); ++i)
        results[i].mailbox = read_exit_mailbox(device, targets[i].core);
    return results;
}

}  // namespace fabric
