// The 1D fabric plan: which Ethernet cores run routers for a line or ring of chips, and the
// RouterConfig / RouterLayout each of them gets (protocol/fabric.h). A pure function of the
// cluster descriptor, the SoC descriptor and the options: no Device, nothing written anywhere.
//
//   chips = {c0, c1, ..., cn-1}       East = towards the next chip in the list, West = back.
//
//   c0 [E]==link==[W] c1 [E]==link==[W] c2 ...        (ring: also cn-1 [E]==link==[W] c0)
//
// For the link between c[i] and c[i+1] (and, on a ring, c[n-1] -> c[0]) the links between the two
// chips are sorted by the channel on c[i] and `link_index` picks one; the East router of c[i]
// uses its end, the West router of c[i+1] the other end. A ring of two chips uses link
// `link_index` for c0 -> c1 and link `link_index + 1` (same ordering, by c0's channel) for the
// wrap c1 -> c0.
//
// Every bad option is Error(BadInput) with a message naming the option, the chips or the link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/coord.h"
#include "fabric/mesh_graph.h"
#include "fabric/soc_descriptor.h"
#include "hal/arch_map.h"
#include "protocol/fabric.h"

namespace fabric {

// East: towards the next chip in the chip list; West: back.
enum class FabricDir : uint8_t { East = 0, West = 1 };

std::string_view dir_name(FabricDir d);                        // "east", "west"
std::string_view topology_name(protocol::fabric::Topology t);  // "line", "ring", "mesh", "torus"

// Upper bound of every router timeout option (one minute): a longer one is a typo, and a router
// that waits that long is hung anyway.
inline constexpr uint32_t kMaxRouterTimeoutUs = 60'000'000;

// Most slots per channel the router accepts (its per-slot bookkeeping; firmware/router/router.cpp
// kMaxSlots, which refuses more with ConfigInvalid): the plan refuses more up front.
inline constexpr uint32_t kMaxRouterSlots = 32;

struct FabricOptions {
    protocol::fabric::Topology topology = protocol::fabric::Topology::Line;
    std::vector<ChipId> chips;  // the line/ring order; >= 2 chips (ring: >= 2), distinct
    uint32_t payload_bytes =
        protocol::fabric::kDefaultPayloadBytes;  // multiple of 16, <= max_payload_bytes(arch)
    uint32_t link_index = 0;  // which of the (ascending-channel) links between two neighbours
    // slot counts; 0 = choose automatically: the first of {sender 8, rx 16}, {4, 8}, {2, 4}, {1, 2}
    // that fits L1, then ch0 (the workers') doubled if that still fits. Either both 0 or both set
    // (1..kMaxRouterSlots each).
    uint32_t sender_slots = 0;    // ch0 and ch1 (and ch2 on a ring) each
    uint32_t receiver_slots = 0;  // rx0 (and rx1 on a ring) each
    // 1..kMaxRouterTimeoutUs each
    uint32_t handshake_timeout_us = 20'000, ready_timeout_us = 200'000, drain_timeout_us = 20'000,
             progress_timeout_us = 10'000;
    // Timeouts (seeds/000 §7.3; RouterConfig::stall_timeout_us): 0 = off, else at most
    // kMaxRouterTimeoutUs; what a router does with a packet stalled that long.
    uint32_t stall_timeout_us = 0;
    protocol::fabric::StallAction stall_action = protocol::fabric::StallAction::Drop;
};

// The mesh side of one router (RouterPlacement::mesh).
struct MeshRouterPlacement {
    MeshNode node;
    MeshDir dir = MeshDir::N;
    uint32_t plane = 0;
    bool inter_mesh = false;  // the peer is in another mesh
    protocol::fabric::MeshRouterConfig config{};
    std::vector<uint32_t> exit_table;  // config.exit_count words, written at layout.exit_table

    MeshPort port() const { return MeshPort{node, dir, plane}; }  // str(): "M0D5 E plane 0"
};

struct RouterPlacement {
    ChipId chip;
    uint32_t eth_channel;
    CoreLocation core;
    FabricDir dir;
    size_t index_in_line;  // position of `chip` in options.chips
    protocol::fabric::RouterConfig config;
    protocol::fabric::RouterLayout layout;
    std::optional<MeshRouterPlacement> mesh;  // 2D plans (mesh_plan.h); `dir` is then meaningless
};

struct FabricPlan {
    hal::Arch arch;
    protocol::fabric::Topology topology;
    std::vector<ChipId> chips;
    std::vector<RouterPlacement> routers;  // every router (2 per link)

    // Throws Error(BadInput) if there is none (e.g. the West router of a line's first chip).
    const RouterPlacement& router(ChipId chip, FabricDir dir) const;
    // Hops from `from` to `to` travelling `dir` (1..n-1), or throws Error(BadInput) if `to` is not
    // reachable that way (line), either chip is not in the plan, or from == to.
    uint32_t hops(ChipId from, ChipId to, FabricDir dir) const;
    // What a worker on `chip` needs to connect to the ch0 of the router facing `dir`.
    protocol::fabric::WorkerChannel worker_channel(ChipId chip, FabricDir dir) const;
    // The chips a worker connected to router `r` reaches along its line (the line API:
    // protocol/fabric.h LineInfo), in hop order (hop k: element k - 1): a line's chips ahead in
    // r's direction, a ring's others from r's neighbour round; at most kMaxLineHops.
    // RouterConfig::line_reach is their count. 1D only (MeshPlan::line_chips for 2D).
    std::vector<ChipId> line_chips(const RouterPlacement& r) const;
    // The time to live every route of the plan carries (PacketHeader::ttl): a legitimate route
    // visits a chip at most once, so it is at most chips - 1 hops, and a packet needs one more
    // to be taken at its last chip. Capped at protocol::fabric::kMaxTtl.
    uint32_t ttl() const;
};

FabricPlan plan_fabric(const ClusterDescriptor& cluster, const SocDescriptor& soc,
                       const FabricOptions& options);

}  // namespace fabric
