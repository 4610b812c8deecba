// Routing tables of a mesh graph (seeds/000 §2.2.1): L0 (intra-mesh) source routes by dimension
// order, L1 (inter-mesh) exit nodes, routing planes, and whole source routes between two devices.
//
// L0: inside a mesh a packet goes X first (E/W, along its row), then Y (N/S, along the column).
// The L0 entry of (src, dst) is that list of directions; src == dst is empty (local).
//
// L1: the meshes form a directed graph (one edge A -> B when Graph has a connection from A to B).
// The mesh path from A to B is a shortest one; among shortest paths the next mesh with the lowest
// id wins, at every step, so the next mesh depends only on (current mesh, destination mesh) and
// paths never loop. The L1 entry of (mesh, device, destination mesh) is the exit node: among the
// devices of the mesh with a connection to the next mesh, the one closest to `device` (hops of
// its L0 route, i.e. Manhattan distance), ties to the lowest device id. Its direction is the
// first hop of the L0 route to the exit, or the connection's own direction at the exit itself.
//
// Cycles: a route that crosses meshes holds the link it arrived on while it waits for the next
// one. Building the tables collects every (arrival link -> departure link) pair of every mesh
// path; if those dependencies form a cycle, traffic could deadlock, and build() rejects the graph
// with Error(BadDescriptor) naming the links of the cycle. Links are taken per ordered mesh pair
// (all cables from A to B together), which can only over-report.
//
// Routing planes (seeds/000 §2.2.2): plane k of a device is the k-th port of every direction; a
// route on plane k uses only plane-k channels inside a mesh. An inter-mesh cable usually joins
// equal planes; where it joins two (TG: a gateway's plane 1 to the Galaxy's plane 0), the route
// continues on the plane of the end it arrives at.
//
// Tables are built for graphs whose inter-mesh links are known port by port (YAML Graph, or an
// MGD graph after the topology mapping: MeshGraph::resolved). An MGD graph of several connected
// meshes alone is refused (Error(BadInput): it needs a cluster descriptor); a single mesh is fine.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabric/mesh_graph.h"

namespace fabric {

// An L1 table entry.
struct ExitEntry {
    MeshDeviceId exit = 0;     // exit node in the current mesh
    MeshDir dir = MeshDir::N;  // first hop from the device towards it (or out of it, at the exit)
    MeshId next_mesh = 0;      // the mesh the exit leads to
};

struct RouteHop {
    MeshNode from;
    MeshNode to;
    MeshDir dir = MeshDir::N;   // direction of the port on `from`
    uint32_t eth_channel = 0;   // channel of that port on `from` (ChipSpec::eth_channel)
    uint32_t peer_channel = 0;  // channel it arrives on at `to`
    bool inter_mesh = false;    // leaves `from`'s mesh (from = exit node, to = entry node)
};

struct SourceRoute {
    MeshNode src;
    MeshNode dst;
    uint32_t plane = 0;          // the plane the route starts on
    std::vector<MeshId> meshes;  // the mesh path, src.mesh first
    std::vector<RouteHop> hops;  // empty when src == dst
    // "M0D0 -E-> M0D1 ... =S=> M2D1" (=X=> marks an inter-mesh hop)
    std::string str() const;
};

class RoutingTables {
  public:
    // Error(BadDescriptor) naming the source file and the links when the inter-mesh routes form
    // a dependency cycle; Error(BadInput) for a graph with unresolved MeshConnections. The
    // tables keep their own copy of the graph.
    static RoutingTables build(const MeshGraph& graph);

    const MeshGraph& graph() const { return *graph_; }

    // L0: the dimension-ordered route from src to dst inside mesh `mesh` ("EES"). Error(BadInput)
    // for an unknown mesh or device.
    std::vector<MeshDir> l0_route(MeshId mesh, MeshDeviceId src, MeshDeviceId dst) const;
    std::string l0_string(MeshId mesh, MeshDeviceId src, MeshDeviceId dst) const;  // "" = local

    // L1: the exit node of `mesh` for traffic from `src` to mesh `dst_mesh`; nullopt when
    // dst_mesh == mesh or no path leads there.
    std::optional<ExitEntry> l1_exit(MeshId mesh, MeshDeviceId src, MeshId dst_mesh) const;

    // The next mesh from `from` towards `to`; nullopt when from == to or `to` is unreachable.
    std::optional<MeshId> next_mesh(MeshId from, MeshId to) const;
    // The mesh path from `from` to `to` (both included); empty when unreachable.
    std::vector<MeshId> mesh_path(MeshId from, MeshId to) const;

    // Routing planes: the channel of `node` facing `dir` on `plane`, if that port leads somewhere
    // (a device of the same mesh, or an inter-mesh connection from this port); nullopt otherwise.
    std::optional<uint32_t> eth_channel(MeshNode node, MeshDir dir, uint32_t plane) const;
    // The inter-mesh connection leaving `node` through (dir, plane), if any.
    const InterMeshLink* link_from(MeshNode node, MeshDir dir, uint32_t plane) const;
    // Per-channel forwarding: a packet for `dst` that a router at `node` holds on channel
    // `channel` leaves on the channel of the same plane in the routing direction; nullopt if it is
    // for this device or has nowhere to go on that plane. Error(BadInput) for a channel that is no
    // N/E/S/W port.
    std::optional<uint32_t> forward_channel(MeshNode node, uint32_t channel, MeshNode dst) const;

    // A whole source route starting on `start_plane`: L0 hops to each exit node, the inter-mesh
    // hop, and L0 hops from the entry node onward (on the plane the hop arrived on).
    // Error(BadInput) for unknown nodes, a plane that does not exist, an unreachable mesh, or an
    // exit node without a connection on the route's plane.
    SourceRoute source_route(MeshNode src, MeshNode dst, uint32_t start_plane = 0) const;

  private:
    RoutingTables() = default;

    std::optional<MeshDir> first_hop(MeshNode node, MeshNode dst) const;

    std::shared_ptr<const MeshGraph> graph_;
    // L0 routes are computed on demand (dimension order needs no table).
    // next_[from][to]: next mesh, or nullopt
    std::vector<std::vector<std::optional<MeshId>>> next_;
    // exit_[mesh][device]: one entry per neighbouring mesh (L1 = exit towards next_[mesh][dst])
    std::vector<std::vector<std::vector<ExitEntry>>> exit_;
};

}  // namespace fabric
