#include "fabric/traffic_verdict.h"

#include <fmt/format.h>

#include <algorithm>

#include "fabric/error.h"
#include "protocol/fabric.h"
#include "protocol/test_mailbox.h"

namespace fabric {

namespace {

// A kernel may wait this long at most, however large the budget: 20 ms.
constexpr uint64_t kMaxTrafficTimeoutUs = 20'000;

}  // namespace

uint32_t traffic_timeout_us(uint64_t budget_cycles, hal::Arch arch) {
    const uint64_t budget_us = budget_cycles / hal::arch_map(arch).aiclk_mhz;
    return static_cast<uint32_t>(std::clamp<uint64_t>(budget_us / 2, 1, kMaxTrafficTimeoutUs));
}

std::optional<std::string> traffic_problem(std::string_view name, const MeshWorkerOutcome& outcome,
                                           uint32_t expected_packets) {
    const LaunchResult& r = outcome.launch;
    if (r.outcome == LaunchOutcome::Trapped) {
        return fmt::format("{} trapped: {} at pc {}", name, r.status.trap_name,
                           hex32(r.status.trap_pc));
    }
    if (r.outcome == LaunchOutcome::Timeout) {
        return fmt::format("{} still running after {} cycles", name, r.cycles);
    }
    if (r.status.exit_status != 0 ||
        outcome.status != static_cast<uint32_t>(protocol::TestStatus::Done)) {
        const auto& f = outcome.results.failure;
        return fmt::format(
            "{} failed: exit {}, code {}, step {}, detail {}, hal status {}, stuck at {}, packets "
            "sent {}",
            name, r.status.exit_status, f.code, f.step, f.detail, f.hal_status,
            hex32(outcome.stuck_at), outcome.results.packets_sent);
    }
    if (outcome.results.packets_sent != expected_packets) {
        return fmt::format("{} sent {} packets, expected {}", name, outcome.results.packets_sent,
                           expected_packets);
    }
    return std::nullopt;
}

TrafficFailure traffic_failure(std::span<const MeshWorkerOutcome> outcomes) {
    const auto any = [&](LaunchOutcome what) {
        return std::any_of(outcomes.begin(), outcomes.end(),
                           [&](const MeshWorkerOutcome& o) { return o.launch.outcome == what; });
    };
    if (any(LaunchOutcome::Trapped)) return TrafficFailure::Trapped;
    if (any(LaunchOutcome::Timeout)) return TrafficFailure::Timeout;
    return TrafficFailure::Fabric;
}

void check_router_counters(std::span<const RouterSnapshot> snaps, uint64_t expect_deliveries,
                           std::vector<std::string>& problems) {
    uint64_t sent = 0, received = 0, delivered = 0;
    // A router whose link a drain cut counts what it dropped as sent, and what it sent was never
    // received (the account has those packets): its link, both ends, is left out of the balance
    // (the other end may have ended before it could cut it too).
    const auto cut = [&](ChipId chip, uint32_t eth) {
        return std::any_of(snaps.begin(), snaps.end(), [&](const RouterSnapshot& s) {
            return s.chip == chip && s.eth_channel == eth && s.control.cut != 0;
        });
    };
    for (const auto& s : snaps) {
        if (!cut(s.chip, s.eth_channel) && !cut(s.block.peer_chip, s.block.peer_channel)) {
            sent += s.sent();
            received += s.received();
        }
        delivered += s.block.delivered;
        if (s.block.bad_packets) {
            problems.push_back(fmt::format("chip {} eth {} rejected {} packets", s.chip,
                                           s.eth_channel, s.block.bad_packets));
        }
    }
    if (sent != received) {
        problems.push_back(fmt::format("routers sent {} packets but received {}", sent, received));
    }
    if (delivered != expect_deliveries) {
        problems.push_back(
            fmt::format("routers delivered {} packets, expected {}", delivered, expect_deliveries));
    }
}

std::vector<RouterSnapshot> terminate_fabric(FabricRunner& runner, uint64_t budget_cycles,
                                             std::vector<std::string>& problems) {
    namespace pf = protocol::fabric;
    if (problems.empty()) return runner.terminate(pf::Termination::Graceful, budget_cycles);
    std::vector<RouterSnapshot> snaps = runner.status();
    try {
        (void)runner.terminate(pf::Termination::Immediate, budget_cycles);
    } catch (const Error& e) {
        problems.push_back(e.what());
    }
    return snaps;
}

uint64_t delivered_so_far(FabricRunner& runner) {
    uint64_t n = 0;
    for (const auto& s : runner.status()) n += s.block.delivered;
    return n;
}

}  // namespace fabric
