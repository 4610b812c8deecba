#include "mesh_mapping.h"

#include <fmt/format.h>

#include "fabric/error.h"

namespace fabricctl {

using fabric::ClusterDescriptor;
using fabric::ErrorCategory;
using fabric::MeshGraph;

void MappingArgs::add_options(CLI::App& cmd, const std::string& graph_help) {
    cmd.add_option("--mesh-graph", graph, graph_help);
    cmd.add_option("--pin", pins, "Place a device on a chip, MESH:DEVICE=CHIP (repeatable)");
    cmd.add_option("--topology", topology, "mesh, or torus (every mesh wraps in both dimensions)")
        ->check(CLI::IsMember({"mesh", "torus"}))
        ->capture_default_str();
}

MeshGraph MappingArgs::graph_for(const ClusterDescriptor& cluster) const {
    MeshGraph g = graph.empty() ? fabric::derive_mesh_graph(cluster, map_options())
                                : MeshGraph::load_file(graph);
    return topology == "torus" ? g.as_torus() : g;
}

fabric::MapOptions MappingArgs::map_options() const {
    fabric::MapOptions o;
    for (const std::string& p : pins) {
        const auto pin = fabric::parse_chip_pin(p);
        if (!pin) {
            fabric::fail(ErrorCategory::BadInput,
                         "--pin '{}': expected MESH:DEVICE=CHIP, e.g. 0:0=5", p);
        }
        o.pins.push_back(*pin);
    }
    return o;
}

std::string derived_note(const MeshGraph& g, const ClusterDescriptor& cluster) {
    const fabric::MeshSpec& m = g.mesh(0);
    return fmt::format(
        "no --mesh-graph: the largest mesh {} holds is {} x {} with {} routing plane{}",
        cluster.source(), m.rows, m.cols, m.channels, m.channels == 1 ? "" : "s");
}

}  // namespace fabricctl
