#include "traffic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "cli_common.h"
#include "fabric/error.h"
#include "fabric/mesh_graph.h"
#include "protocol/fabric.h"
#include "protocol/test_mailbox.h"

namespace fabricctl {

namespace pf = protocol::fabric;
using nlohmann::json;

uint32_t traffic_timeout_us(uint64_t budget_cycles, hal::Arch arch) {
    return static_cast<uint32_t>(
        std::clamp<uint64_t>(budget_cycles / hal::arch_map(arch).aiclk_mhz / 2, 1, 20'000));
}

std::optional<std::string> traffic_problem(std::string_view name, const TrafficOutcome& o,
                                           uint32_t expected_packets) {
    const fabric::LaunchResult& r = o.launch;
    if (r.outcome == fabric::LaunchOutcome::Trapped) {
        return fmt::format("{} trapped: {} at pc {}", name, r.status.trap_name,
                           fabric::hex32(r.status.trap_pc));
    }
    if (r.outcome == fabric::LaunchOutcome::Timeout) {
        return fmt::format("{} still running after {} cycles", name, r.cycles);
    }
    if (r.status.exit_status != 0 ||
        o.status != static_cast<uint32_t>(protocol::TestStatus::Done)) {
        const auto& f = o.results.failure;
        return fmt::format(
            "{} failed: exit {}, code {}, step {}, detail {}, hal status {}, stuck at {}, packets "
            "sent {}",
            name, r.status.exit_status, f.code, f.step, f.detail, f.hal_status,
            fabric::hex32(o.stuck_at), o.results.packets_sent);
    }
    if (o.results.packets_sent != expected_packets) {
        return fmt::format("{} sent {} packets, expected {}", name, o.results.packets_sent,
                           expected_packets);
    }
    return std::nullopt;
}

int traffic_failure_code(std::span<const TrafficOutcome> outcomes) {
    const auto any = [&](fabric::LaunchOutcome what) {
        return std::any_of(outcomes.begin(), outcomes.end(),
                           [&](const TrafficOutcome& o) { return o.launch.outcome == what; });
    };
    if (any(fabric::LaunchOutcome::Trapped)) return kTrap;
    if (any(fabric::LaunchOutcome::Timeout)) return kTimeout;
    return kFabric;
}

void check_router_counters(std::span<const fabric::RouterSnapshot> snaps,
                           uint64_t expect_deliveries, std::vector<std::string>& problems) {
    uint64_t sent = 0, received = 0, delivered = 0;
    for (const auto& s : snaps) {
        sent += s.sent();
        received += s.received();
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

std::vector<fabric::RouterSnapshot> terminate_fabric(fabric::FabricRunner& runner,
                                                     uint64_t budget_cycles,
                                                     std::vector<std::string>& problems) {
    if (problems.empty()) return runner.terminate(pf::Termination::Graceful, budget_cycles);
    // The snapshot before the immediate stop shows where the fabric was when it failed.
    std::vector<fabric::RouterSnapshot> snaps = runner.status();
    try {
        (void)runner.terminate(pf::Termination::Immediate, budget_cycles);
    } catch (const fabric::Error& e) {
        problems.push_back(e.what());
    }
    return snaps;
}

double bytes_per_cycle(uint64_t bytes, uint64_t cycles) {
    return cycles ? static_cast<double>(bytes) / static_cast<double>(cycles) : 0.0;
}

json router_json(const fabric::RouterSnapshot& s, const fabric::RouterPlacement& p,
                 uint32_t packet_bytes, uint64_t cycles) {
    const pf::RouterStatusBlock& b = s.block;
    // A 1D router has three sender channels, a 2D one all of them.
    const size_t senders = p.mesh ? pf::kMaxSenderChannels : pf::kNumSenderChannels;
    const std::vector<uint32_t> sent(b.sent, b.sent + senders);
    const std::vector<uint32_t> completed(b.completed, b.completed + senders);
    json j{{"chip", s.chip}, {"eth_channel", s.eth_channel}, {"core", s.core.core.str()}};
    if (p.mesh) {
        j["mesh"] = p.mesh->node.mesh;
        j["device"] = p.mesh->node.device;
        j["dir"] = std::string(1, fabric::dir_letter(p.mesh->dir));
        j["plane"] = p.mesh->plane;
        j["inter_mesh"] = p.mesh->inter_mesh;
    } else {
        j["dir"] = fabric::dir_name(s.dir);
    }
    j.update(json{{"peer_chip", p.config.peer_chip_id},
                  {"peer_eth_channel", p.config.peer_eth_channel},
                  {"is_master", p.config.is_master != 0},
                  {"dateline", p.config.dateline != 0},
                  {"status", s.status_name()},
                  {"stage", s.stage_name()},
                  {"stuck_at", s.stuck_at_name()},
                  {"detail", b.detail},
                  {"core_state", fabric::run_state_name(s.run.state)},
                  {"sent", sent},
                  {"completed", completed},
                  {"received", {b.received[0], b.received[1]}},
                  {"delivered", b.delivered},
                  {"forwarded", b.forwarded},
                  {"bad_packets", b.bad_packets},
                  {"undrained", b.undrained},
                  {"heartbeat", b.heartbeat},
                  {"packets_sent", s.sent()},
                  {"packets_received", s.received()},
                  {"bytes_sent", s.sent() * packet_bytes},
                  {"bytes_received", s.received() * packet_bytes},
                  {"bytes_per_cycle", bytes_per_cycle(s.sent() * packet_bytes, cycles)}});
    return j;
}

uint64_t delivered_so_far(fabric::FabricRunner& runner) {
    uint64_t n = 0;
    for (const auto& s : runner.status()) n += s.block.delivered;
    return n;
}

}  // namespace fabricctl
