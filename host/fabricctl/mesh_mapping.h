// The mapping options every command that places a mesh graph on a cluster takes (`mesh map`,
// `cluster check`, `mesh up|status|down|run`): --mesh-graph (default: the largest mesh the cluster
// holds), --pin MESH:DEVICE=CHIP and --topology mesh|torus (fabric/topology_map.h).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/mesh_graph.h"
#include "fabric/topology_map.h"

namespace fabricctl {

struct MappingArgs {
    std::string graph;  // empty: derive the largest mesh
    std::vector<std::string> pins;
    std::string topology = "mesh";  // "torus": every mesh wraps in both dimensions

    // --mesh-graph, --pin and --topology on `cmd` (--cluster is the caller's: it differs in help).
    void add_options(CLI::App& cmd, const std::string& graph_help);
    // The graph as the options ask: loaded (as_torus() for --topology torus), or derived.
    fabric::MeshGraph graph_for(const fabric::ClusterDescriptor& cluster) const;
    fabric::MapOptions map_options() const;  // Error(BadInput) for a malformed --pin
    bool derived() const { return graph.empty(); }
};

// "no --mesh-graph: the largest mesh <cluster> holds is 2 x 4 with 2 routing planes"
std::string derived_note(const fabric::MeshGraph& g, const fabric::ClusterDescriptor& cluster);

// Each link of the map once, from the end that sorts first.
std::vector<const fabric::PortLink*> links_once(const fabric::TopologyMap& map);
// A mesh port: {"node": "M0D5", "mesh", "device", "dir": "E", "plane"}.
nlohmann::json port_json(const fabric::MeshPort& p);
// The mapping (`mesh map --json`): the descriptors, every mesh's devices on their chips, every
// link's ports and Ethernet channels, the chips left unused.
nlohmann::json map_json(const fabric::TopologyMap& map, bool derived);

}  // namespace fabricctl
