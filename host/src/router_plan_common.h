// What the 1D plan (fabric_plan.cpp) and the 2D plan (mesh_plan.cpp) check and decide the same
// way: payload, slot counts and timeouts, the RouterConfig fields every router shares, the slot
// choice, and the links between two chips. Errors are Error(BadInput) prefixed with `who` ("fabric
// plan", "mesh plan"), so each plan's messages name their origin.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/soc_descriptor.h"
#include "protocol/fabric.h"

namespace fabric::plan_detail {

// The router options both plans take (FabricOptions and MeshFabricOptions spell them the same).
struct RouterTuning {
    uint32_t payload_bytes = 0;
    uint32_t sender_slots = 0;  // 0 with receiver_slots 0: choose
    uint32_t receiver_slots = 0;
    uint32_t handshake_timeout_us = 0, ready_timeout_us = 0, drain_timeout_us = 0,
             progress_timeout_us = 0;
    uint32_t stall_timeout_us = 0;  // 0: off
    protocol::fabric::StallAction stall_action = protocol::fabric::StallAction::Drop;
};
template <typename Options>
RouterTuning tuning_of(const Options& o) {
    return RouterTuning{o.payload_bytes,        o.sender_slots,     o.receiver_slots,
                        o.handshake_timeout_us, o.ready_timeout_us, o.drain_timeout_us,
                        o.progress_timeout_us,  o.stall_timeout_us, o.stall_action};
}

// payload_bytes (multiple of 16, <= the arch's maximum), slots set both or neither, every timeout
// in 1..kMaxRouterTimeoutUs.
void check_tuning(std::string_view who, const RouterTuning& t, const SocDescriptor& soc);

// magic, version, topology, payload and timeouts; no slots, chips or links yet.
protocol::fabric::RouterConfig base_router_config(protocol::fabric::Topology topology,
                                                  const RouterTuning& t);

struct SlotChoice {
    uint32_t sender;
    uint32_t receiver;
};

// `used` marks a router's channels with slot count 1 (0 = unused), a 2D fallback channel (fed only
// while its fallback is rerouted) with kFallbackChannel; the result has `slots` on the first and
// kFallbackSlots on the second.
inline constexpr uint32_t kFallbackChannel = 0xFB;
// One slot: the others keep their counts (a t3k mesh on two planes: 7 / 14, as on one), and a
// rerouted link moves a packet per round trip over its fallback (docs/RELIABILITY.md).
inline constexpr uint32_t kFallbackSlots = 1;
protocol::fabric::RouterConfig with_slots(protocol::fabric::RouterConfig used, SlotChoice slots);

// The automatic choices, most first: {S, 2S} for S = 8, 4, 2, 1 (a line or ring, whose planner
// then doubles ch0 where that fits) or for every S = 8 .. 1 (a mesh: a middle router with many
// channels takes the largest S its L1 holds, not the next power of 2 down).
enum class SlotSteps { Halving, Every };

// The explicit slots of `t` (1..kMaxRouterSlots, checked to fit) or the first automatic choice
// whose layout fits the router block and the eth L1 for every router shape in `used` (configs as
// for with_slots). `what` names the topology in messages.
SlotChoice choose_slots(std::string_view who, std::string_view what, const RouterTuning& t,
                        const SocDescriptor& soc,
                        std::span<const protocol::fabric::RouterConfig> used, SlotSteps steps);

// The layout fits the router block and the core's L1.
bool layout_fits(const SocDescriptor& soc, const protocol::fabric::RouterLayout& l);

// Links between chips a and b, as (channel on a, channel on b), ascending by the channel on a.
std::vector<std::pair<uint32_t, uint32_t>> links_between(const ClusterDescriptor& cluster, ChipId a,
                                                         ChipId b);

}  // namespace fabric::plan_detail
