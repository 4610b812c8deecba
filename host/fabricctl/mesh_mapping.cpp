#include "mesh_mapping.h"

#include <fmt/format.h>

#include "fabric/error.h"

namespace fabricctl {

using fabric::ClusterDescriptor;
using fabric::ErrorCategory;
using fabric::MeshGraph;
using fabric::TopologyMap;
using nlohmann::json;

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

// Each link once, from the end that sorts first.
std::vector<const fabric::PortLink*> links_once(const TopologyMap& map) {
    std::vector<const fabric::PortLink*> out;
    for (const auto& [port, link] : map.ports()) {
        if (port < link.peer) out.push_back(&link);
    }
    return out;
}

json port_json(const fabric::MeshPort& p) {
    return json{{"node", p.node.str()},
                {"mesh", p.node.mesh},
                {"device", p.node.device},
                {"dir", std::string(1, fabric::dir_letter(p.dir))},
                {"plane", p.plane}};
}

json map_json(const TopologyMap& map, bool derived) {
    json meshes = json::array();
    for (const fabric::MeshSpec& m : map.graph().meshes()) {
        json devices = json::array();
        for (uint32_t d = 0; d < m.device_count(); ++d) {
            devices.push_back({{"device", d},
                               {"row", m.row_of(d)},
                               {"col", m.col_of(d)},
                               {"chip", map.chip_of({m.id, d})}});
        }
        meshes.push_back({{"id", m.id},
                          {"rows", m.rows},
                          {"cols", m.cols},
                          {"ring_ns", m.ring_ns},
                          {"ring_ew", m.ring_ew},
                          {"channels", m.channels},
                          {"policy", fabric::policy_name(m.policy)},
                          {"devices", devices}});
    }
    json links = json::array();
    for (const fabric::PortLink* l : links_once(map)) {
        links.push_back({{"port", port_json(l->self)},
                         {"peer", port_json(l->peer)},
                         {"chip", l->self_eth.chip},
                         {"chan", l->self_eth.chan},
                         {"peer_chip", l->peer_eth.chip},
                         {"peer_chan", l->peer_eth.chan},
                         {"how", l->how}});
    }
    return json{{"ok", true},
                {"mesh_graph", map.graph().source()},
                {"cluster", map.cluster().source()},
                {"derived", derived},
                {"planes", map.planes()},
                {"meshes", meshes},
                {"links", links},
                {"unused_chips", map.unused_chips()}};
}

}  // namespace fabricctl
