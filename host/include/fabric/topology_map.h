// Topology mapping: which physical chip of a cluster plays each device of a mesh graph, and which
// Ethernet link carries each port (reference/mesh-graph-descriptor-2.md, host-and-pcie.md §6.2).
//
// Chip ids in a cluster descriptor are the driver's enumeration order, not mesh positions, and the
// two ends of a link use unrelated channel numbers. The mapping is a graph embedding of the
// logical graph (every mesh's grid, its wrap-around links on a ring dimension, and the
// connections between meshes) into the cluster's Ethernet graph:
//   - each logical neighbour pair lands on two chips joined by at least `channels` links
//     (Strict) or at least one (Relaxed); more links, other chips and other links are fine;
//   - a connection between two meshes (MGD) needs `channels` links between their chips, on
//     devices with a free direction (not taken by a neighbour of their own mesh); the mapping
//     chooses those links and gives each a port (MeshGraph::resolved);
//   - devices pinned by the user (`--pin M:D=CHIP`) or the descriptor (MGD pinnings, matched to
//     ClusterDescriptor::asic_position: a Galaxy's tray from the PCI bus and the ASIC location;
//     tray = chip id + 1 elsewhere) are placed where pinned.
// The search is a depth-first embedding in breadth-first order of the logical graph, so every
// device after the first of its mesh is placed next to a placed neighbour. Candidates are tried in
// a fixed order (the chip whose Ethernet coordinates match the device's position, then the chip
// whose id equals the device's row-major index, then ascending id), so the same files always give
// the same mapping, and a cluster wired in mesh order maps onto itself.
//
// Routing planes: plane k of a neighbour pair is its k-th link, in ascending channel order on the
// end with the lower (mesh, device), whatever the channel at the other end (crossed cabling).
// The fabric has as many planes as its thinnest intra-mesh neighbour pair offers (at most the
// channel count).
//
// When no embedding exists the error names what is missing: the logical neighbour pair, the chips
// it would need, the links they have and the links expected ("M0D1 -E- M0D2 needs 2 links (STRICT);
// chip 5 and chip 2 have 1: chip 5 chan 0 <-> chip 2 chan 14"), found by a second search that
// tolerates one short pair. Every problem is Error(BadInput).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/mesh_graph.h"

namespace fabric {

// `--pin M:D=CHIP`: device D of mesh M is chip CHIP.
struct ChipPin {
    MeshNode node;
    ChipId chip = 0;
};
// "0:5=12"; nullopt if malformed.
std::optional<ChipPin> parse_chip_pin(std::string_view text);

struct MapOptions {
    std::vector<ChipPin> pins;
    // Search steps (placements tried) before giving up; bounds the time a cluster that cannot host
    // the graph takes to refuse. Each step is a few microseconds.
    uint64_t step_budget = 4'000'000;
};

// One port of the fabric and the physical link behind it.
struct PortLink {
    MeshPort self;
    MeshPort peer;
    EthPortRef self_eth;
    EthPortRef peer_eth;
    bool inter_mesh = false;
    std::string how;  // "mesh neighbour", "torus wrap", "inter-mesh connection (... line N)"
};

class TopologyMap {
  public:
    // The graph with its inter-mesh connections resolved to ports (MeshGraph::resolved).
    const MeshGraph& graph() const { return graph_; }
    const ClusterDescriptor& cluster() const { return cluster_; }

    ChipId chip_of(MeshNode n) const;                 // Error(BadInput) for a node the graph lacks
    std::optional<MeshNode> node_of(ChipId c) const;  // nullopt: the chip is not used
    // Every port that leads somewhere, on every plane its neighbour pair has a link for, in
    // (node, dir, plane) order.
    const std::map<MeshPort, PortLink>& ports() const { return ports_; }
    // The link of one port; nullptr if that port has none.
    const PortLink* port(const MeshPort& p) const;
    // Routing planes every intra-mesh neighbour pair offers (0 for single-chip meshes only).
    uint32_t planes() const { return planes_; }
    // Chips of the cluster no device uses, ascending.
    std::vector<ChipId> unused_chips() const;

  private:
    TopologyMap(MeshGraph graph, ClusterDescriptor cluster)
        : graph_(std::move(graph)), cluster_(std::move(cluster)) {}

    MeshGraph graph_;
    ClusterDescriptor cluster_;
    std::vector<std::vector<ChipId>> chips_;  // [mesh][device]
    std::map<ChipId, MeshNode> nodes_;
    std::map<MeshPort, PortLink> ports_;
    uint32_t planes_ = 0;

    friend class TopologyMapper;
};

// Map `graph` onto `cluster`. Error(BadInput) naming what is missing when no embedding exists, a
// pin that is out of range or contradicts another, or an arch mismatch.
TopologyMap map_topology(const MeshGraph& graph, const ClusterDescriptor& cluster,
                         const MapOptions& options = {});

// What `fabricctl cluster check` finds when it holds a cluster against a mesh graph.
struct ShortPair {     // a logical neighbour pair with fewer links than its channel count
    std::string pair;  // "M0D1 -E- M0D2"
    ChipId chip_a = 0;
    ChipId chip_b = 0;
    uint32_t channels = 0;
    ChannelPolicy policy = ChannelPolicy::Strict;
    std::vector<std::pair<EthPortRef, EthPortRef>> links;  // the ones there are
};
struct StrayLink {  // a link between two chips of the fabric that are not neighbours in it
    EthPortRef a;
    EthPortRef b;
    MeshNode node_a;
    MeshNode node_b;
};
struct CablingReport {
    bool hostable = false;                 // the graph maps onto the cluster
    std::map<MeshNode, ChipId> placement;  // the mapping, or the closest one found; may be empty
    std::vector<ShortPair> short_pairs;  // missing links (a Relaxed pair may be short and hostable)
    std::vector<StrayLink> stray_links;
    std::string refusal;  // why it does not map (map_topology's message); empty when hostable
};
// Holds the cluster against the graph: the mapping if there is one, else the closest placement that
// tolerates up to `max_short` short neighbour pairs. Errors as map_topology for bad pins or arch.
CablingReport check_cabling(const MeshGraph& graph, const ClusterDescriptor& cluster,
                            const MapOptions& options = {}, uint32_t max_short = 8);

// The largest single 2D mesh the cluster's Ethernet graph holds (most chips; among equal sizes the
// squarest, rows <= cols), with as many routing planes as its thinnest neighbour pair offers:
// what `mesh up` runs without a mesh graph. `source` names the derived graph in messages.
MeshGraph derive_mesh_graph(const ClusterDescriptor& cluster, const MapOptions& options = {});

}  // namespace fabric
