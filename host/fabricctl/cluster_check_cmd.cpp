#include "cluster_check_cmd.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fabric/cluster_descriptor.h"
#include "fabric/error.h"
#include "fabric/mesh_graph.h"
#include "fabric/topology_map.h"
#include "mesh_mapping.h"

namespace fabricctl {

using fabric::ClusterDescriptor;
using fabric::MeshGraph;
using nlohmann::json;

namespace {

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
        CLI::App& cluster = command_group(app, "cluster", "Cluster descriptors (tt-umd YAML)");
        cmd_ = cluster.add_subcommand(
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

CliCommandPtr add_cluster_check_command(CLI::App& app, bool& as_json) {
    return std::make_shared<ClusterCheck>(app, as_json);
}

}  // namespace fabricctl
