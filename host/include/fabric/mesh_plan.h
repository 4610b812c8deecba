// The 2D fabric plan: the routers of a mesh graph (mesh_graph.h) on the chips of a cluster, with
// the RouterConfig, MeshRouterConfig and exit table each gets (protocol/fabric.h, "2D mesh
// routing"). A pure function like plan_fabric: no Device, nothing written anywhere. The result is
// a FabricPlan, so FabricRunner brings it up, runs workers on it and terminates it as it does a
// line or a ring.
//
// Mapping (this project's convention, checked against the cluster): the devices of mesh m are the
// chips first_chip(m) .. first_chip(m) + rows * cols - 1 in device order, where first_chip(m) is
// the device count of meshes 0..m-1 (one mesh: chip id = device id = row * cols + col, as in
// t3k_cluster.yaml and galaxy_8x4_cluster.yaml).
//
// Ports: a device's port (dir, plane) is the plane-th link, by ascending channel on this chip,
// between its chip and the chip of its neighbour in `dir` (inside the mesh, the torus wrap
// neighbour, or the other end of an inter-mesh connection from that port). The neighbour's end of
// that link is its port (opposite dir, plane). A router runs on every such port of the selected
// planes; each chip's routers of one plane know each other (MeshRouterConfig::neighbor). Both
// ends of a link must agree on its rank (the links between two chips in the same channel order on
// both), a port must not lead to two places (a torus wrap and an inter-mesh cable), and two chips
// must not be neighbours in two directions. A torus needs >= 3 rows and >= 3 columns per mesh.
// Only the selected planes need links: plane k of a port needs k + 1 links to its neighbour.
//
// Each router (fabric.routers, in (mesh, device, plane as listed in the options, N E S W) order):
//   RouterConfig   topology Mesh/Torus; is_master = lower chip id (also across meshes); sender
//                  channels ch0 (workers), ch1 + F for each other router of the chip facing F on
//                  the plane (VC0), ch5 + F on VC1 (torus: from the opposite router only; a graph
//                  of several meshes: from each, for traffic that entered the mesh); rx0, and rx1
//                  on a torus or a graph of several meshes (a torus must be the only mesh);
//                  torus: the wrap links are datelines (E in the last column, W in column 0, S in
//                  the last row, N in row 0), ring_size = cols (E/W) or rows (N/S); no downstream.
//   MeshRouterConfig  neighbor[d] = kMeshNeighborPresent | y << 8 | x of the router facing d (0:
//                  none, and its own direction); inter_mesh; exit_dirs (bit d: the router facing
//                  d is inter-mesh); exit_count = the mesh count (<= kMeshExitEntries).
//   exit table     one word per mesh: for a mesh reachable from here, kMeshExitValid |
//                  port << 8 | exit, where exit = RoutingTables::l1_exit(mesh, device, m).exit and
//                  port the direction of the exit node's inter-mesh port towards the next mesh on
//                  this plane (what an entry router needs to route on); 0 for the own mesh and an
//                  unreachable one.
// RouterPlacement::dir is East (meaningless) and index_in_line the chip id; fabric.chips are all
// the mapped chips. Slots: chosen (first of {S, 2S}, S = 8 .. 1) so that every router
// fits, or given and checked as for plan_fabric.
//
// Every problem is Error(BadInput) naming the option, the mesh node, the chips or the missing link.
#pragma once

#include <cstdint>
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
    // Mesh or Torus (Torus: every mesh wraps in both dimensions; each dimension needs >= 3
    // devices, so that the N and S (E and W) neighbours are different chips).
    protocol::fabric::Topology topology = protocol::fabric::Topology::Mesh;
    std::vector<uint32_t> planes = {0};  // routing planes to bring up (each < ports_per_direction)
    uint32_t payload_bytes = protocol::fabric::kDefaultPayloadBytes;
    // 0 = choose: the first of {sender S, rx 2S}, S = 8 .. 1, that fits L1.
    uint32_t sender_slots = 0;
    uint32_t receiver_slots = 0;
    uint32_t handshake_timeout_us = 20'000, ready_timeout_us = 200'000, drain_timeout_us = 20'000,
             progress_timeout_us = 10'000;
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

    ChipId chip_of(MeshNode n) const;  // Error(BadInput) for a node the graph lacks
    MeshNode node_of(ChipId c) const;  // Error(BadInput) for a chip outside the meshes
    // The router of `node` facing `dir` on `plane`; Error(BadInput) if there is none.
    const RouterPlacement& router(MeshNode node, MeshDir dir, uint32_t plane) const;
    // Error(BadInput) for src == dst, unknown nodes, a plane not brought up, no route.
    MeshSend send(MeshNode src, MeshNode dst, uint32_t plane) const;
    protocol::fabric::WorkerChannel worker_channel(const RouterPlacement& r) const;

    // Every link a packet from src to dst crosses on `plane`, in order, as the routers route it
    // (entry routers included). Errors as send().
    std::vector<MeshHop> links(MeshNode src, MeshNode dst, uint32_t plane) const;
    // Whether this traffic can deadlock: a cycle of buffers in which each flow holds one while it
    // waits for the next ("M2D8 E -> M3D6 E -> ... -> M2D8 E"), or nullopt. Conservative (one
    // buffer per link and VC). The 2D routers are deadlock-free inside a mesh or torus; between
    // meshes VC1 keeps entered traffic apart from each mesh's own, and what is left (transit
    // traffic around a cycle of meshes) is checked here (firmware/router/README.md).
    std::optional<std::string> wait_cycle(std::span<const std::pair<MeshNode, MeshNode>> flows, uint32_t plane) const;

  private:
    std::vector<MeshDir> segment(MeshNode node, MeshNode dst, uint32_t plane, bool& leaves) const;
};

MeshPlan plan_mesh(const MeshGraph& graph, const ClusterDescriptor& cluster,
                   const SocDescriptor& soc, const MeshFabricOptions& options);

}  // namespace fabric
