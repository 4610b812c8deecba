// The mapping options every command that places a mesh graph on a cluster takes (`mesh map`,
// `cluster check`, `mesh up|status|down|run`): --mesh-graph (default: the largest mesh the cluster
// holds), --pin MESH:DEVICE=CHIP and --topology mesh|torus (fabric/topology_map.h).
#pragma once

#include <CLI/CLI.hpp>
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

}  // namespace fabricctl
