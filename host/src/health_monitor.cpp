#include "fabric/health_monitor.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>

#include "protocol/erisc_base_fw.h"

namespace fabric {

namespace pf = protocol::fabric;

std::string_view stuck_reason_name(StuckReason r) {
    switch (r) {
        case StuckReason::Stalled:
            return "stalled";
        case StuckReason::Error:
            return "error";
        case StuckReason::Trapped:
            return "trapped";
        case StuckReason::Stopped:
            return "stopped";
        default:
            return "invalid";
    }
}

std::string StuckReport::describe() const {
    return fmt::format(
        "{} ({}): {}; status {}, stage {}, stuck at {}, detail {}, heartbeat {} unchanged for {} "
        "cycles, {}",
        component, core.str(), stuck_reason_name(reason), status_name, stage_name, stuck_at_name,
        detail_name, head.heartbeat, unchanged_cycles, describe_core(run));
}

std::string describe_stuck(const std::vector<StuckReport>& reports, size_t watched) {
    std::string out;
    for (const StuckReport& r : reports) out += (out.empty() ? "" : "; ") + r.describe();
    return fmt::format("{} of {} component{} stuck: {}", reports.size(), watched,
                       watched == 1 ? "" : "s", out);
}

namespace {

void check_component(const WatchedComponent& c) {
    const ComponentKind& k = c.kind;
    if (k.name.empty() || !k.status_name || !k.stage_name || !k.stuck_at_name || !k.is_error ||
        !k.beating || !k.done) {
        fail(ErrorCategory::BadInput, "health monitor: component '{}' on {} has no complete kind",
             c.name, c.core.str());
    }
}

}  // namespace

HealthMonitor::HealthMonitor(Device& device, std::vector<WatchedComponent> components,
                             uint64_t stall_cycles)
    : device_(device), stall_cycles_(stall_cycles) {
    if (stall_cycles_ == 0) fail(ErrorCategory::BadInput, "health monitor: stall window is 0");
    for (auto& c : components) add(std::move(c));
}

void HealthMonitor::add(WatchedComponent component) {
    check_component(component);
    components_.push_back(std::move(component));
    tracks_.emplace_back();
}

std::vector<StuckReport> HealthMonitor::poll() {
    namespace bfw = protocol::base_fw;
    const uint64_t now = device_.cycles();
    std::vector<StuckReport> out;
    for (size_t i = 0; i < components_.size(); ++i) {
        const WatchedComponent& c = components_[i];
        const ComponentKind& k = c.kind;
        Track& t = tracks_[i];
        pf::ComponentStatusHead head{};
        std::vector<uint8_t> raw(sizeof(head));
        device_.read(c.core, c.status_addr, raw);
        std::memcpy(&head, raw.data(), sizeof(head));
        CoreStatus run = device_.core_status(c.core);
        bool stopped = run.state == CoreRunState::Exited || run.state == CoreRunState::Trapped ||
                       run.state == CoreRunState::Reset;
        if (!stopped && c.method == LaunchMethod::LaunchFlag &&
            device_.read32(c.core, bfw::kLaunchAppFlag) == 0 && head.status != k.not_started) {
            stopped = true;  // returned to the base firmware
            run.state = CoreRunState::Exited;
            run.exit_status =
                device_.read32(c.core, bfw::kStatusBlock + offsetof(bfw::StatusBlock, app_result));
        }
        if (!t.seen || t.status != head.status || t.heartbeat != head.heartbeat) {
            t.seen = true;
            t.status = head.status;
            t.heartbeat = head.heartbeat;
            t.since = now;
        }
        const uint64_t unchanged = now - t.since;

        std::optional<StuckReason> reason;
        if (run.state == CoreRunState::Trapped) {
            reason = StuckReason::Trapped;
        } else if (k.is_error(head.status)) {
            reason = StuckReason::Error;
        } else if (stopped && !k.done(head.status) &&
                   !(head.status == k.not_started && run.state == CoreRunState::Reset)) {
            reason = StuckReason::Stopped;  // (a core in reset that never started is just loaded)
        } else if (!stopped && k.beating(head.status) && unchanged >= stall_cycles_) {
            reason = StuckReason::Stalled;
        }
        if (!reason) continue;
        StuckReport r;
        r.core = c.core;
        r.component = c.name;
        r.kind = k.name;
        r.reason = *reason;
        r.head = head;
        r.status_name = k.status_name(head.status);
        r.stage_name = k.stage_name(head.stage);
        r.stuck_at_name = k.stuck_at_name(head.stuck_at);
        r.detail_name =
            k.detail_name ? k.detail_name(head.status, head.detail) : hex32(head.detail);
        r.unchanged_cycles = unchanged;
        r.at_cycle = now;
        r.run = std::move(run);
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<StuckReport> HealthMonitor::watch(uint64_t cycles, uint64_t poll_cycles) {
    if (poll_cycles == 0) fail(ErrorCategory::BadInput, "health monitor: poll interval is 0");
    auto found = poll();
    uint64_t elapsed = 0;
    while (found.empty() && elapsed < cycles) {
        const uint64_t ran = device_.advance(std::min(poll_cycles, cycles - elapsed));
        elapsed += ran;
        found = poll();
        if (ran == 0) break;  // nothing on the device is busy: nothing can change any more
    }
    return found;
}

}  // namespace fabric
