#include "topology_cmd.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "fabric/error.h"
#include "fabric/soc_descriptor.h"

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

namespace {

std::string ring_name(const fabric::MeshSpec& m) {
    if (m.ring_ns && m.ring_ew) return "torus";
    if (m.ring_ns) return "torus in rows (N/S)";
    if (m.ring_ew) return "torus in columns (E/W)";
    return "mesh";
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

json short_json(const fabric::ShortPair& s) {
    json links = json::array();
    for (const auto& [a, b] : s.links)
        links.push_back(
            {{"chip", a.chip}, {"chan", a.chan}, {"peer_chip", b.chip}, {"peer_chan", b.chan}});
    return json{{"pair", s.pair},         {"chip", s.chip_a},
                {"peer_chip", s.chip_b},  {"links", links},
                {"channels", s.channels}, {"policy", fabric::policy_name(s.policy)}};
}

json stray_json(const fabric::StrayLink& s) {
    return json{{"chip", s.a.chip},      {"chan", s.a.chan},       {"peer_chip", s.b.chip},
                {"peer_chan", s.b.chan}, {"node", s.node_a.str()}, {"peer_node", s.node_b.str()}};
}

// "chip 3 [n300 0x1000000000123]" (its board) where the descriptor says, else "chip 3".
std::string chip_name(const ClusterDescriptor& c, fabric::ChipId chip) {
    const auto board = c.board(chip);
    return board ? fmt::format("chip {} [{} {:#x}]", chip, fabric::escape_control(board->type),
                               board->id)
                 : fmt::format("chip {}", chip);
}

std::string short_text(const ClusterDescriptor& c, const fabric::ShortPair& s) {
    std::string have;
    for (const auto& [a, b] : s.links)
        have += fmt::format("{}{} <-> {}", have.empty() ? "" : ", ", a.str(), b.str());
    return fmt::format("missing: {} ({} - {}) has {} of {} link{} ({}){}", s.pair,
                       chip_name(c, s.chip_a), chip_name(c, s.chip_b), s.links.size(), s.channels,
                       s.channels == 1 ? "" : "s", fabric::policy_name(s.policy),
                       have.empty() ? "" : ": " + have);
}

class ClusterCheck final : public CliCommand {
  public:
    ClusterCheck(CLI::App& app, bool& as_json) : as_json_(as_json) {
        auto* cluster = app.add_subcommand("cluster", "Cluster descriptors (tt-umd YAML)");
        cluster->require_subcommand(1);
        cmd_ = cluster->add_subcommand(
            "check",
            "Check a cluster's cabling against a mesh graph: missing links, links "
            "between the wrong chips, duplicate and asymmetric entries");
        cmd_->add_option("--cluster", cluster_, "Cluster descriptor (tt-umd YAML)")->required();
        args_.add_options(*cmd_,
                          "Mesh graph descriptor the cluster must host; default: the largest mesh");
        cmd_->add_flag("--json", as_json_, "Print the result as JSON");
    }
    bool parsed() const override { return cmd_->parsed(); }
    int run() const override;

  private:
    void print_report_json(const fabric::ClusterLintReport& lint, const MeshGraph& g,
                           const fabric::CablingReport& r, int code) const;

    CLI::App* cmd_ = nullptr;
    bool& as_json_;
    std::string cluster_;
    MappingArgs args_;
};

// Links between chips whose devices are not neighbours in the graph. Once the graph maps they are
// only unused (a torus wrap a mesh graph does not use, say): counted, since listing each would
// bury what matters. Otherwise each is a wrong pair, named.
void print_stray_links(const ClusterDescriptor& cluster, const MeshGraph& g,
                       const fabric::CablingReport& r) {
    if (r.stray_links.empty()) return;
    if (r.hostable) {
        fmt::print("unused: {} link{} between chips whose devices are not neighbours in {}\n",
                   r.stray_links.size(), r.stray_links.size() == 1 ? "" : "s", g.source());
        return;
    }
    for (const auto& s : r.stray_links) {
        fmt::print(
            "wrong pair: {} <-> {} joins {} on {} and {} on {}, which are not neighbours in {}\n",
            s.a.str(), s.b.str(), s.node_a.str(), chip_name(cluster, s.a.chip), s.node_b.str(),
            chip_name(cluster, s.b.chip), g.source());
    }
}

// The descriptor's own wiring problems (duplicate, asymmetric, self-connected entries, unknown
// chips or channels), then the cabling against the graph on what is left of it.
int ClusterCheck::run() const {
    const fabric::ClusterLintReport lint = ClusterDescriptor::lint_file(cluster_);
    const ClusterDescriptor& cluster = lint.usable;
    const MeshGraph g = args_.graph_for(cluster);
    const fabric::CablingReport r = fabric::check_cabling(g, cluster, args_.map_options());
    const int code = !lint.findings.empty() ? kBadDescriptor : r.hostable ? kOk : kBadInput;
    if (as_json_) {
        print_report_json(lint, g, r, code);
        return code;
    }
    fmt::print("cluster {}: {} {} chip{}, {} link{}\n", cluster.source(), cluster.chip_count(),
               fabric::arch_name(cluster.arch()), cluster.chip_count() == 1 ? "" : "s",
               cluster.connections().size(), cluster.connections().size() == 1 ? "" : "s");
    for (const auto& f : lint.findings) {
        fmt::print("{}: {}:{}: {}: {}\n", fabric::cluster_lint_kind_name(f.kind), cluster.source(),
                   f.line, f.field, f.message);
    }
    if (args_.derived()) fmt::print("{}\n", derived_note(g, cluster));
    for (const auto& s : r.short_pairs) fmt::print("{}\n", short_text(cluster, s));
    print_stray_links(cluster, g, r);
    if (!lint.findings.empty()) {
        log_line(fmt::format("cluster check failed: {} has {} wiring problem{} (listed above){}",
                             cluster.source(), lint.findings.size(),
                             lint.findings.size() == 1 ? "" : "s",
                             r.hostable ? "" : "; " + r.refusal));
    } else if (r.hostable) {
        log_line(fmt::format(
            "cluster check passed: {} can host {}{}", cluster.source(), g.source(),
            r.short_pairs.empty() ? "" : " (with fewer routing planes where links are missing)"));
    } else {
        log_line(fmt::format("cluster check failed: {}", r.refusal));
    }
    return code;
}

void ClusterCheck::print_report_json(const fabric::ClusterLintReport& lint, const MeshGraph& g,
                                     const fabric::CablingReport& r, int code) const {
    json findings = json::array(), shorts = json::array(), strays = json::array(),
         placement = json::object();
    for (const auto& f : lint.findings) {
        findings.push_back({{"kind", fabric::cluster_lint_kind_name(f.kind)},
                            {"line", f.line},
                            {"field", f.field},
                            {"message", f.message}});
    }
    for (const auto& s : r.short_pairs) shorts.push_back(short_json(s));
    for (const auto& s : r.stray_links) strays.push_back(stray_json(s));
    const char* strays_key = r.hostable ? "unused" : "wrong_pair";
    for (const auto& [node, chip] : r.placement) placement[node.str()] = chip;
    json out{{"ok", code == kOk},        {"cluster", lint.usable.source()},
             {"mesh_graph", g.source()}, {"derived", args_.derived()},
             {"hostable", r.hostable},   {"wiring", findings},
             {"missing", shorts},        {strays_key, strays},
             {"placement", placement},   {"exit_code", code}};
    if (!r.hostable) out["refusal"] = r.refusal;
    print_json(out);
}

}  // namespace

CliCommands add_topology_commands(CLI::App& app, bool& as_json) {
    return {std::make_shared<MeshMap>(mesh_group(app), as_json),
            std::make_shared<ClusterCheck>(app, as_json)};
}

}  // namespace fabricctl
