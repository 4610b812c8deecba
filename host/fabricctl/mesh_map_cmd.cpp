#include "mesh_map_cmd.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/mesh_graph.h"
#include "fabric/topology_map.h"
#include "mesh_mapping.h"

namespace fabricctl {

using fabric::ClusterDescriptor;
using fabric::MeshGraph;
using fabric::TopologyMap;
using nlohmann::json;

namespace {

std::string ring_name(const fabric::MeshSpec& m) {
    if (m.ring_ns && m.ring_ew) return "torus";
    if (m.ring_ns) return "torus in rows (N/S)";
    if (m.ring_ew) return "torus in columns (E/W)";
    return "mesh";
}

void print_grid(const TopologyMap& map, const fabric::MeshSpec& m) {
    fmt::print("mesh {}: {} x {}, {}, {} channel{} per neighbour pair ({})\n", m.id, m.rows, m.cols,
               ring_name(m), m.channels, m.channels == 1 ? "" : "s", fabric::policy_name(m.policy));
    std::string head = "       ";
    for (uint32_t c = 0; c < m.cols; ++c) head += fmt::format(" {:>6}", fmt::format("col {}", c));
    fmt::print("{}\n", head);
    for (uint32_t r = 0; r < m.rows; ++r) {
        std::string line = fmt::format("  row {:<2}", r);
        for (uint32_t c = 0; c < m.cols; ++c)
            line += fmt::format(" {:>6}", map.chip_of({m.id, r * m.cols + c}));
        fmt::print("{}\n", line);
    }
}

void print_map(const TopologyMap& map, bool with_links) {
    const MeshGraph& g = map.graph();
    const auto unused = map.unused_chips();
    fmt::print(
        "mesh graph {} on cluster {}: {} mesh{}, {} devices on {} of {} chips, {} routing "
        "plane{}\n",
        g.source(), map.cluster().source(), g.mesh_count(), g.mesh_count() == 1 ? "" : "es",
        g.device_count(), g.device_count(), map.cluster().chip_count(), map.planes(),
        map.planes() == 1 ? "" : "s");
    for (const fabric::MeshSpec& m : g.meshes()) print_grid(map, m);
    if (with_links) {
        fmt::print("links:\n");
        for (const fabric::PortLink* l : links_once(map)) {
            fmt::print("  {:<16} -> {:<16} {} <-> {} ({})\n", l->self.str(), l->peer.str(),
                       l->self_eth.str(), l->peer_eth.str(), l->how);
        }
    }
    fmt::print("unused chips: {}\n",
               unused.empty() ? "none" : fmt::format("{}", fmt::join(unused, ",")));
}

class MeshMap final : public CliCommand {
  public:
    MeshMap(CLI::App& mesh, bool& as_json) : as_json_(as_json) {
        cmd_ = mesh.add_subcommand(
            "map", "Find which chip of a cluster plays each mesh device, and print it");
        cmd_->add_option("--cluster", cluster_, "Cluster descriptor (tt-umd YAML)")->required();
        args_.add_options(
            *cmd_, "Mesh graph descriptor (MGD 2.0 .textproto or YAML); default: the largest mesh");
        cmd_->add_flag("--links", links_, "Also print every port's link");
        cmd_->add_flag("--json", as_json_, "Print the result as JSON");
    }
    bool parsed() const override { return cmd_->parsed(); }
    int run() const override {
        const ClusterDescriptor cluster = ClusterDescriptor::load_file(cluster_);
        const MeshGraph g = args_.graph_for(cluster);
        const TopologyMap map = fabric::map_topology(g, cluster, args_.map_options());
        if (as_json_) {
            print_json(map_json(map, args_.derived()));
            return kOk;
        }
        if (args_.derived()) fmt::print("{}\n", derived_note(g, cluster));
        print_map(map, links_);
        return kOk;
    }

  private:
    CLI::App* cmd_ = nullptr;
    bool& as_json_;
    std::string cluster_;
    MappingArgs args_;
    bool links_ = false;
};

}  // namespace

CliCommandPtr add_mesh_map_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshMap>(mesh_group(app), as_json);
}

}  // namespace fabricctl
