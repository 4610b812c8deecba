#include "traffic.h"

#include <fmt/format.h>

#include "cli_common.h"
#include "fabric/mesh_graph.h"
#include "protocol/fabric.h"

namespace fabricctl {

namespace pf = protocol::fabric;
using nlohmann::json;

int traffic_failure_code(std::span<const TrafficOutcome> outcomes) {
    switch (fabric::traffic_failure(outcomes)) {
        case fabric::TrafficFailure::Trapped:
            return kTrap;
        case fabric::TrafficFailure::Timeout:
            return kTimeout;
        default:
            return kFabric;
    }
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

}  // namespace fabricctl
