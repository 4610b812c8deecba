// fabricctl mesh map and fabricctl cluster check: which physical chip plays each mesh device, and
// whether a cluster's cabling can host a mesh graph (fabric/topology_map.h).
//
//   fabricctl mesh map --cluster FILE [--mesh-graph FILE] [--pin M:D=CHIP ...]
//                      [--topology mesh|torus] [--links] [--json]
//   fabricctl cluster check --cluster FILE [--mesh-graph FILE] [--pin M:D=CHIP ...] [--json]
//
// Without --mesh-graph both use the largest 2D mesh the cluster holds and say so. `mesh map`
// prints every mesh as a grid of chip ids (--links: every port's link; --json: all of it).
// `cluster check` lists every expected link that is missing, every link between chips of the
// fabric that are not neighbours in it, and the descriptor's own problems (entries listed twice,
// a port with two peers), naming chips, channels and mesh devices; it exits 0 when the cluster can
// host the graph, 101 when it cannot, 102 when the descriptor itself is invalid.
//
// The mesh up | status | down | run commands take the same mapping options through
// MappingArgs (mesh_fabric_cmd.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/mesh_graph.h"
#include "fabric/topology_map.h"

namespace fabricctl {

// The options every command that maps a mesh graph onto a cluster takes.
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

// Adds `mesh map` to the `mesh` subcommand and `cluster check` to the app.
CliCommands add_topology_commands(CLI::App& app, bool& as_json);

}  // namespace fabricctl
