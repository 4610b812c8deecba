#include "fabric/launch.h"

#include <algorithm>

#include "fabric/error.h"
#include "hal/arch_map.h"

namespace fabric {

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
    image.check_placement(placement);
    if (options.poll_cycles == 0) fail(ErrorCategory::BadInput, "launch: poll interval is 0");

    namespace c = hal::common;
    device.write32(core, c::kSoftResetReg, c::kSoftResetAllRiscs);  // hold every RISC
    load_elf(device, core, image);
    device.write32(core, c::kErisc0ResetPcReg, image.entry());
    device.write32(core, c::kSoftResetReg, c::kSoftResetAllRiscs & ~c::kSoftResetErisc0);

    LaunchResult result;
    while (result.cycles < options.max_cycles) {
        const uint64_t want = std::min(options.poll_cycles, options.max_cycles - result.cycles);
        const uint64_t ran = device.advance(want);
        result.cycles += ran;
        result.status = device.core_status(core);
        switch (result.status.state) {
            case CoreRunState::Exited:
                result.outcome = LaunchOutcome::Exited;
                return result;
            case CoreRunState::Trapped:
                result.outcome = LaunchOutcome::Trapped;
                return result;
            case CoreRunState::Reset:
                fail(ErrorCategory::Device, "{}: {} is still in reset after release of ERISC0",
                     device.description(), core.str());
            case CoreRunState::Running:
            case CoreRunState::Unknown:
                if (ran == 0) {
                    fail(ErrorCategory::Device,
                         "{}: {} reports running but the device clock does not advance",
                         device.description(), core.str());
                }
                break;
            default:
                fail(ErrorCategory::Internal, "launch: unexpected core state {}",
                     static_cast<int>(result.status.state));
        }
    }
    result.outcome = LaunchOutcome::Timeout;
    return result;
}

}  // namespace fabric
