#include "mesh_routes_cmd.h"

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli_common.h"
#include "fabric/error.h"
#include "fabric/mesh_graph.h"
#include "fabric/routing_tables.h"
#include "fabric/soc_descriptor.h"
#include "fabric/topology_map.h"

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using fabric::MeshDir;
using fabric::MeshGraph;
using fabric::MeshId;
using fabric::MeshNode;
using fabric::RoutingTables;
using nlohmann::json;

std::string dir_str(MeshDir d) {
    return std::string(1, fabric::dir_letter(d));
}

json node_json(MeshNode n) {
    return json{{"mesh", n.mesh}, {"device", n.device}};
}

MeshNode parse_node(const std::string& text, const char* option, const MeshGraph& g) {
    const auto n = fabric::parse_mesh_node(text);
    if (!n) {
        fabric::fail(ErrorCategory::BadInput, "{} '{}': expected MESH:DEVICE, e.g. 0:5", option,
                     text);
    }
    if (!g.contains(*n)) {
        try {
            g.check_node(*n);
        } catch (const fabric::Error& e) {
            fabric::fail(ErrorCategory::BadInput, "{} {}: {}", option, text, e.what());
        }
    }
    return *n;
}

// Connections grouped by cable end pair, with the planes at both ends (they differ on TG).
struct Cable {
    fabric::MeshNode from;
    MeshDir from_dir;
    fabric::MeshNode to;
    MeshDir to_dir;
    std::vector<uint32_t> planes;     // at `from`
    std::vector<uint32_t> to_planes;  // at `to`, pairwise
};

std::vector<Cable> cables(const MeshGraph& g) {
    std::map<std::tuple<MeshNode, MeshDir, MeshNode, MeshDir>, size_t> index;
    std::vector<Cable> out;
    for (const auto& l : g.links()) {
        const auto key = std::tuple{l.from.node, l.from.dir, l.to.node, l.to.dir};
        auto [it, inserted] = index.emplace(key, out.size());
        if (inserted) out.push_back(Cable{l.from.node, l.from.dir, l.to.node, l.to.dir, {}, {}});
        out[it->second].planes.push_back(l.from.plane);
        out[it->second].to_planes.push_back(l.to.plane);
    }
    return out;
}

std::string planes_str(const std::vector<uint32_t>& planes) {
    std::string s;
    for (uint32_t p : planes) s += (s.empty() ? "" : ",") + std::to_string(p);
    return s;
}

// "planes 0,1", or "planes 1 -> 0" when the cable joins different planes.
std::string cable_planes_str(const Cable& c) {
    if (c.planes == c.to_planes) return "planes " + planes_str(c.planes);
    return fmt::format("planes {} -> {}", planes_str(c.planes), planes_str(c.to_planes));
}

// "RING x LINE" style: which dimensions wrap (dim 0: rows, N/S; dim 1: columns, E/W).
std::string dim_types_str(const fabric::MeshSpec& m) {
    return fmt::format("{} x {}", m.ring_ns ? "RING" : "LINE", m.ring_ew ? "RING" : "LINE");
}

std::string_view form_name(fabric::DescriptorForm f) {
    return f == fabric::DescriptorForm::TextProto ? "textproto" : "yaml";
}

std::string planes_range_str(uint32_t ports) {
    return ports == 0 ? "no routing planes" : fmt::format("routing planes 0..{}", ports - 1);
}

class MeshRoutes final : public CliCommand {
  public:
    MeshRoutes(CLI::App& app, bool& as_json) : as_json_(as_json) {
        cmd_ = mesh_group(app).add_subcommand(
            "routes",
            "Validate a mesh graph descriptor (MGD 2.0 textproto or tt-metal YAML) and print its "
            "L0/L1 routing tables and a source route");
        cmd_->add_option("--mesh-graph", path_, "Mesh graph descriptor (.textproto or .yaml)")
            ->required();
        cmd_->add_option("--mesh", only_mesh_, "Print the L0 table of this mesh only");
        auto* from = cmd_->add_option("--from", from_, "Source route from MESH:DEVICE");
        auto* to = cmd_->add_option("--to", to_, "Source route to MESH:DEVICE");
        from->needs(to);
        to->needs(from);
        cmd_->add_option("--plane", plane_, "Routing plane of the source route")
            ->capture_default_str();
        cmd_->add_option("--cluster", cluster_,
                         "Cluster descriptor: route on its chips and links (the topology mapping)");
        cmd_->add_option("--pin", pins_, "With --cluster: place a device, MESH:DEVICE=CHIP")
            ->needs(cmd_->get_option("--cluster"));
        cmd_->add_flag("--json", as_json_, "Print the result as JSON");
    }

    bool parsed() const override { return cmd_->parsed(); }

    int run() const override {
        const MeshGraph loaded = MeshGraph::load_file(path_);
        std::optional<fabric::TopologyMap> map;
        if (!cluster_.empty()) {
            fabric::MapOptions o;
            for (const std::string& p : pins_) {
                const auto pin = fabric::parse_chip_pin(p);
                if (!pin)
                    fabric::fail(ErrorCategory::BadInput,
                                 "--pin '{}': expected MESH:DEVICE=CHIP, e.g. 0:0=5", p);
                o.pins.push_back(*pin);
            }
            map = fabric::map_topology(loaded, fabric::ClusterDescriptor::load_file(cluster_), o);
        }
        const MeshGraph& g = map ? map->graph() : loaded;
        const fabric::TopologyMap* mapped = map ? &*map : nullptr;
        const RoutingTables t = RoutingTables::build(g);
        if (only_mesh_) g.mesh(*only_mesh_);  // BadInput for an unknown mesh
        std::optional<fabric::SourceRoute> route;
        if (!from_.empty()) {
            route =
                t.source_route(parse_node(from_, "--from", g), parse_node(to_, "--to", g), plane_);
        }
        if (as_json_) {
            print_json(to_json(g, t, route, mapped));
        } else {
            print_text(g, t, route, mapped);
        }
        return 0;
    }

  private:
    std::vector<MeshId> l0_meshes(const MeshGraph& g) const {
        if (only_mesh_) return {*only_mesh_};
        std::vector<MeshId> out;
        for (MeshId m = 0; m < g.mesh_count(); ++m) out.push_back(m);
        return out;
    }

    json to_json(const MeshGraph& g, const RoutingTables& t,
                 const std::optional<fabric::SourceRoute>& route,
                 const fabric::TopologyMap* map) const {
        const auto& chip = g.chip_spec();
        json meshes = json::array();
        for (const auto& m : g.meshes()) {
            meshes.push_back(
                {{"id", m.id},
                 {"board", m.board},
                 {"device_topology", {m.rows, m.cols}},
                 {"dim_types", {m.ring_ns ? "RING" : "LINE", m.ring_ew ? "RING" : "LINE"}},
                 {"host_topology", {m.host_rows, m.host_cols}},
                 {"host_ranks", m.host_ranks},
                 {"channels", m.channels},
                 {"policy", fabric::policy_name(m.policy)}});
        }
        json links = json::array();
        for (const auto& c : cables(g)) {
            links.push_back({{"from", node_json(c.from)},
                             {"from_dir", dir_str(c.from_dir)},
                             {"to", node_json(c.to)},
                             {"to_dir", dir_str(c.to_dir)},
                             {"planes", c.planes},
                             {"to_planes", c.to_planes}});
        }
        json l0 = json::array();
        for (MeshId m : l0_meshes(g)) {
            json rows = json::array();
            const uint32_t n = g.mesh(m).device_count();
            for (uint32_t s = 0; s < n; ++s) {
                json row = json::array();
                for (uint32_t d = 0; d < n; ++d) row.push_back(t.l0_string(m, s, d));
                rows.push_back(row);
            }
            l0.push_back({{"mesh", m}, {"routes", rows}});
        }
        json l1 = json::array();
        for (MeshId m = 0; m < g.mesh_count(); ++m) {
            json exits = json::array(), dirs = json::array();
            for (uint32_t s = 0; s < g.mesh(m).device_count(); ++s) {
                json er = json::array(), dr = json::array();
                for (MeshId dst = 0; dst < g.mesh_count(); ++dst) {
                    const auto e = t.l1_exit(m, s, dst);
                    er.push_back(e ? json(e->exit) : json(nullptr));
                    dr.push_back(e ? json(dir_str(e->dir)) : json(nullptr));
                }
                exits.push_back(er);
                dirs.push_back(dr);
            }
            json next = json::array();
            for (MeshId dst = 0; dst < g.mesh_count(); ++dst) {
                const auto nx = t.next_mesh(m, dst);
                next.push_back(nx ? json(*nx) : json(nullptr));
            }
            l1.push_back(
                {{"mesh", m}, {"next_mesh", next}, {"exits", exits}, {"directions", dirs}});
        }
        json j{{"ok", true},
               {"source", g.source()},
               {"cluster", map ? json(map->cluster().source()) : json(nullptr)},
               {"form", form_name(g.form())},
               {"arch", fabric::arch_name(chip.arch)},
               {"ports_per_direction", chip.ports_per_direction},
               {"planes", chip.ports_per_direction},
               {"meshes", meshes},
               {"links", links},
               {"l0", l0},
               {"l1", l1}};
        if (route) {
            json hops = json::array();
            for (const auto& h : route->hops) {
                json hop{{"from", node_json(h.from)},      {"to", node_json(h.to)},
                         {"dir", dir_str(h.dir)},          {"eth_channel", h.eth_channel},
                         {"peer_channel", h.peer_channel}, {"inter_mesh", h.inter_mesh}};
                if (const fabric::PortLink* l = hop_link(map, g, h)) {
                    hop["chip"] = l->self_eth.chip;
                    hop["chan"] = l->self_eth.chan;
                    hop["peer_chip"] = l->peer_eth.chip;
                    hop["peer_chan"] = l->peer_eth.chan;
                }
                hops.push_back(hop);
            }
            j["route"] = {{"from", node_json(route->src)},
                          {"to", node_json(route->dst)},
                          {"plane", route->plane},
                          {"meshes", route->meshes},
                          {"hops", hops},
                          {"path", route->str()}};
        }
        return j;
    }

    void print_text(const MeshGraph& g, const RoutingTables& t,
                    const std::optional<fabric::SourceRoute>& route,
                    const fabric::TopologyMap* map) const {
        const auto& chip = g.chip_spec();
        fmt::print("mesh graph {} ({}): {}, {} mesh{}, {} Ethernet ports per direction ({})\n",
                   g.source(), form_name(g.form()), fabric::arch_name(chip.arch), g.mesh_count(),
                   g.mesh_count() == 1 ? "" : "es", chip.ports_per_direction,
                   planes_range_str(chip.ports_per_direction));
        for (const auto& m : g.meshes()) {
            fmt::print(
                "  mesh {}: {}x{} devices ({}), board {}, host topology {}x{}, {} channels {}\n",
                m.id, m.rows, m.cols, dim_types_str(m), fabric::escape_control(m.board),
                m.host_rows, m.host_cols, m.channels, fabric::policy_name(m.policy));
        }
        const auto cs = cables(g);
        fmt::print("\ninter-mesh connections ({}):\n", cs.empty() ? "none" : "from -> to");
        for (const auto& c : cs) {
            fmt::print("  {} {} -> {} {}  {}\n", c.from.str(), dir_str(c.from_dir), c.to.str(),
                       dir_str(c.to_dir), cable_planes_str(c));
        }
        for (MeshId m : l0_meshes(g)) {
            const uint32_t n = g.mesh(m).device_count();
            size_t w = 1;
            for (uint32_t s = 0; s < n; ++s) {
                for (uint32_t d = 0; d < n; ++d) w = std::max(w, t.l0_string(m, s, d).size());
            }
            w = std::max(w, std::to_string(n - 1).size()) + 2;
            fmt::print(
                "\nL0 routes of mesh {} (row: source device, column: destination; X first, "
                "then Y):\n",
                m);
            fmt::print("  {:>7}", "src\\dst");
            for (uint32_t d = 0; d < n; ++d) fmt::print("{:>{}}", d, w);
            fmt::print("\n");
            for (uint32_t s = 0; s < n; ++s) {
                fmt::print("  {:>7}", s);
                for (uint32_t d = 0; d < n; ++d) {
                    const std::string r = t.l0_string(m, s, d);
                    fmt::print("{:>{}}", r.empty() ? "-" : r, w);
                }
                fmt::print("\n");
            }
        }
        if (g.mesh_count() > 1) {
            fmt::print(
                "\nL1 exit nodes (row: source mesh and device, column: destination mesh; "
                "exit device and the direction towards it; x = unreachable):\n");
            fmt::print("  {:>4} {:>4}", "mesh", "node");
            for (MeshId d = 0; d < g.mesh_count(); ++d) fmt::print("{:>8}", fmt::format("M{}", d));
            fmt::print("\n");
            for (MeshId m = 0; m < g.mesh_count(); ++m) {
                for (uint32_t s = 0; s < g.mesh(m).device_count(); ++s) {
                    fmt::print("  {:>4} {:>4}", m, s);
                    for (MeshId d = 0; d < g.mesh_count(); ++d) {
                        const auto e = t.l1_exit(m, s, d);
                        const std::string cell =
                            d == m ? "-"
                            : e    ? fmt::format("{} {}", e->exit, dir_str(e->dir))
                                   : "x";
                        fmt::print("{:>8}", cell);
                    }
                    fmt::print("\n");
                }
            }
        }
        if (route) {
            std::string meshes;
            for (MeshId m : route->meshes)
                meshes += (meshes.empty() ? "" : " -> ") + std::to_string(m);
            fmt::print("\nroute {} -> {} on plane {} (meshes {}, {} hop{}):\n", route->src.str(),
                       route->dst.str(), route->plane, meshes, route->hops.size(),
                       route->hops.size() == 1 ? "" : "s");
            fmt::print("  {}\n", route->str());
            for (const auto& h : route->hops) {
                const fabric::PortLink* l = hop_link(map, g, h);
                fmt::print("  {} {} {}  {}{}\n", h.from.str(),
                           h.inter_mesh ? fmt::format("={}=>", dir_str(h.dir))
                                        : fmt::format("-{}->", dir_str(h.dir)),
                           h.to.str(),
                           l ? fmt::format("{} -> {}", l->self_eth.str(), l->peer_eth.str())
                             : fmt::format("eth {} -> {}", h.eth_channel, h.peer_channel),
                           h.inter_mesh ? fmt::format("  (exit of mesh {}, entry of mesh {})",
                                                      h.from.mesh, h.to.mesh)
                                        : "");
            }
        }
    }

    // With --cluster: the physical link a hop takes (its plane from the logical channel).
    static const fabric::PortLink* hop_link(const fabric::TopologyMap* map, const MeshGraph& g,
                                            const fabric::RouteHop& h) {
        if (!map) return nullptr;
        const auto port = g.chip_spec().channel_port(h.eth_channel);
        return port ? map->port({h.from, h.dir, port->second}) : nullptr;
    }

    bool& as_json_;
    CLI::App* cmd_ = nullptr;
    std::string cluster_;
    std::vector<std::string> pins_;
    std::string path_;
    std::optional<MeshId> only_mesh_;
    std::string from_;
    std::string to_;
    uint32_t plane_ = 0;
};

}  // namespace

CliCommandPtr add_mesh_routes_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshRoutes>(app, as_json);
}

}  // namespace fabricctl
