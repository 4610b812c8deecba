// The 2D fabric plan: the routers of a mesh graph (mesh_graph.h) on the chips of a cluster, with
// the RouterConfig, MeshRouterConfig and exit table each gets (protocol/fabric.h, "2D mesh
// routing"). A pure function like plan_fabric: no Device, nothing written anywhere. The result is
// a FabricPlan, so FabricRunner brings it up, runs workers on it and terminates it as it does a
// line or a ring.
//
// Mapping: which chip plays each device and which link carries each port come from the topology
// mapping (topology_map.h): a graph embedding of the mesh graph into the cluster's Ethernet
// links, so chip ids need not be mesh positions and the two ends of a link may use any channels.
// Routers come up on the ports of the selected planes (a cross-plane cable between meshes brings
// up both its ends); two devices must not be neighbours in two directions. Rings come from the
// graph (MGD dim_types RING, YAML TORUS_* boards, MeshGraph::as_torus()): a mesh that wraps in a
// dimension is a torus, and a torus must be the graph's only mesh.
//
// Each router (fabric.routers, in (mesh, device, plane as listed in the options, N E S W) order):
//   RouterConfig   topology Mesh, or Torus when the mesh wraps; is_master = lower chip id (also
//   across meshes); sender
//                  channels ch0 (workers), ch1 + F for each other router of the chip facing F on
//                  the plane (VC0), ch5 + F on VC1 (torus: from the opposite router only; a graph
//                  of several meshes: from each, for traffic that entered the mesh); rx0, and rx1
//                  on a torus or a graph of several meshes (a torus must be the only mesh);
//                  torus: the wrap links of a dimension that wraps are datelines (E in the last
//                  column, W in column 0, S in the last row, N in row 0), ring_size = cols (E/W)
//                  or rows (N/S); no downstream; line_reach = line_chips().size().
//   MeshRouterConfig  neighbor[d] = kMeshNeighborPresent | y << 8 | x of the router facing d (0:
//                  none, and its own direction); inter_mesh; exit_dirs (bit d: the router facing
//                  d is inter-mesh); exit_count = the mesh count (<= kMeshExitEntries).
//   exit table     one word per mesh: for a mesh reachable from here, kMeshExitValid |
//                  port << 8 | exit, where exit = RoutingTables::l1_exit(mesh, device, m).exit and
//                  port the direction of the exit node's inter-mesh port towards the next mesh on
//                  this plane (what an entry router needs to route on); 0 for the own mesh and an
//                  unreachable one.
// RouterPlacement::dir is East (meaningless) and index_in_line the chip id; fabric.chips are the
// mapped chips in (mesh, device) order. Slots: chosen (first of {S, 2S}, S = 8 .. 1) so that every
// router fits, or given and checked as for plan_fabric.
//
// Every problem is Error(BadInput) naming the option, the mesh node, the chips or the missing link.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_plan.h"
#include "fabric/mesh_graph.h"
#include "fabric/routing_tables.h"
#include "fabric/soc_descriptor.h"
#include "fabric/topology_map.h"
#include "protocol/fabric.h"

namespace fabric {

// MeshRouterPlacement (RouterPlacement::mesh) is in fabric_plan.h.
static_assert(static_cast<uint32_t>(MeshDir::N) ==
                  static_cast<uint32_t>(protocol::fabric::MeshDirection::N) &&
              static_cast<uint32_t>(MeshDir::E) ==
                  static_cast<uint32_t>(protocol::fabric::MeshDirection::E) &&
              static_cast<uint32_t>(MeshDir::S) ==
                  static_cast<uint32_t>(protocol::fabric::MeshDirection::S) &&
              static_cast<uint32_t>(MeshDir::W) ==
                  static_cast<uint32_t>(protocol::fabric::MeshDirection::W));

struct MeshFabricOptions {
    // Mesh: the rings the graph gives (MGD dim_types, YAML TORUS_* boards). Torus: every mesh
    // wraps in both dimensions whatever its descriptor says (a YAML Mesh board carries no rings);
    // plan_mesh(graph, ...) maps graph.as_torus(), plan_mesh(map, ...) needs a map of one.
    protocol::fabric::Topology topology = protocol::fabric::Topology::Mesh;
    std::vector<uint32_t> planes = {
        0};  // routing planes to bring up (each < TopologyMap::planes())
    uint32_t payload_bytes = protocol::fabric::kDefaultPayloadBytes;
    // 0 = choose: the first of {sender S, rx 2S}, S = 8 .. 1, that fits L1.
    uint32_t sender_slots = 0;
    uint32_t receiver_slots = 0;
    uint32_t handshake_timeout_us = 20'000, ready_timeout_us = 200'000, drain_timeout_us = 20'000,
             progress_timeout_us = 10'000;
    // Timeouts (seeds/000 §7.3; RouterConfig::stall_timeout_us): 0 = off, else at most
    // kMaxRouterTimeoutUs; what a router does with a packet stalled that long.
    uint32_t stall_timeout_us = 0;
    protocol::fabric::StallAction stall_action = protocol::fabric::StallAction::Drop;
};

// Where a worker on `src` sends a packet for `dst` on `plane`: the router of src's chip to connect
// to (its ch0) and the header route (dst_node set). Inside a mesh: X then Y
// (protocol::fabric::mesh_route_xy; on a torus each dimension the shorter way round, over the wrap
// links: mesh_path_torus_xy). To another mesh: to src's exit
// node (RoutingTables::l1_exit) and out through its inter-mesh port (mesh_route_path with
// write_last = false: the last hop command is 0); the entry routers do the rest.
struct MeshSend {
    const RouterPlacement* router = nullptr;
    protocol::fabric::Route route;
    uint32_t hops = 0;  // hops this route covers (to the destination, or to the first entry node)
};

// One link a packet crosses: the router that sends it, and the virtual channel of the buffer it
// waits in there (1: on a torus past a dateline and straight on, between meshes from the first
// entry router on).
struct MeshHop {
    const RouterPlacement* router = nullptr;
    uint32_t vc = 0;
};

struct MeshPlan {
    FabricPlan fabric;  // topology Mesh/Torus; every router has `mesh` set
    RoutingTables tables;
    std::vector<uint32_t> planes;
    std::shared_ptr<const TopologyMap> map;

    ChipId chip_of(MeshNode n) const;  // Error(BadInput) for a node the graph lacks
    MeshNode node_of(ChipId c) const;  // Error(BadInput) for a chip that plays no device
    // The router of `node` facing `dir` on `plane`; Error(BadInput) if there is none.
    const RouterPlacement& router(MeshNode node, MeshDir dir, uint32_t plane) const;
    // Error(BadInput) for src == dst, unknown nodes, a plane not brought up, no route.
    MeshSend send(MeshNode src, MeshNode dst, uint32_t plane) const;
    protocol::fabric::WorkerChannel worker_channel(const RouterPlacement& r) const;
    // The chips a worker connected to router `r` reaches along its line (the line API:
    // protocol/fabric.h LineInfo), in hop order: r's row or column of the mesh in r's direction
    // up to its edge, or round the wrap link back to r's chip where that dimension is a ring;
    // none from an inter-mesh router; at most kMaxLineHops. RouterConfig::line_reach is their
    // count.
    std::vector<ChipId> line_chips(const RouterPlacement& r) const;

    // Every link a packet from src to dst crosses on `plane`, in order, as the routers route it
    // (entry routers included). Errors as send().
    std::vector<MeshHop> links(MeshNode src, MeshNode dst, uint32_t plane) const;
    // Whether this traffic can deadlock: a cycle of buffers in which each flow holds one while it
    // waits for the next ("M2D8 E -> M3D6 E -> ... -> M2D8 E"), or nullopt. Conservative (one
    // buffer per link and VC). The 2D routers are deadlock-free inside a mesh or torus; between
    // meshes VC1 keeps entered traffic apart from each mesh's own, and what is left (transit
    // traffic around a cycle of meshes) is checked here (firmware/router/README.md).
    std::optional<std::string> wait_cycle(std::span<const std::pair<MeshNode, MeshNode>> flows,
                                          uint32_t plane) const;

  private:
    std::vector<MeshDir> segment(MeshNode node, MeshNode dst, uint32_t plane, bool& leaves) const;
};

MeshPlan plan_mesh(const TopologyMap& map, const SocDescriptor& soc,
                   const MeshFabricOptions& options);
// map_topology, then plan_mesh.
MeshPlan plan_mesh(const MeshGraph& graph, const ClusterDescriptor& cluster,
                   const SocDescriptor& soc, const MeshFabricOptions& options,
                   const MapOptions& map_options = {});

}  // namespace fabric
