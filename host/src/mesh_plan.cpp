#include "fabric/mesh_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>

#include "fabric/error.h"
#include "router_plan_common.h"

namespace fabric {

namespace pf = protocol::fabric;
using namespace plan_detail;

namespace {

constexpr std::string_view kWho = "mesh plan";

uint32_t dir_index(MeshDir d) {
    return static_cast<uint32_t>(d);
}

std::string number_list(const std::vector<uint32_t>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{}", i ? "," : "", v[i]);
    return s;
}

// The direction of the port through which `exit` leaves for `next_mesh` on `plane` (the first in
// N, E, S, W order, as RoutingTables::source_route picks it); nullopt if it has none there.
std::optional<MeshDir> exit_port(const RoutingTables& t, MeshNode exit, MeshId next_mesh,
                                 uint32_t plane) {
    for (MeshDir d : kMeshDirs) {
        const InterMeshLink* l = t.link_from(exit, d, plane);
        if (l && l->to.node.mesh == next_mesh) return d;
    }
    return std::nullopt;
}

void check_plane_up(const std::vector<uint32_t>& planes, uint32_t plane) {
    if (std::find(planes.begin(), planes.end(), plane) == planes.end()) {
        fail(ErrorCategory::BadInput, "mesh plan: routing plane {} is not brought up (planes {})",
             plane, number_list(planes));
    }
}

// The fabric's router topology: Torus when its (only) mesh wraps in a dimension.
pf::Topology topology_of(const MeshGraph& g) {
    for (const MeshSpec& m : g.meshes()) {
        if (m.is_torus()) return pf::Topology::Torus;
    }
    return pf::Topology::Mesh;
}

// A torus's VC1 is its datelines': traffic entering from another mesh would need a third.
void check_torus_alone(const MeshGraph& graph) {
    if (topology_of(graph) == pf::Topology::Torus && graph.mesh_count() > 1) {
        fail(ErrorCategory::BadInput,
             "mesh plan: {} has {} meshes and a torus; a torus is one mesh (its second virtual "
             "channel is the datelines', none is left for traffic between meshes)",
             graph.source(), graph.mesh_count());
    }
}

void check_options(const TopologyMap& map, const SocDescriptor& soc, const MeshFabricOptions& o) {
    const MeshGraph& graph = map.graph();
    if (o.topology != pf::Topology::Mesh && o.topology != pf::Topology::Torus) {
        fail(ErrorCategory::BadInput, "mesh plan: unknown topology {} (mesh = 2, torus = 3)",
             static_cast<uint32_t>(o.topology));
    }
    for (const MeshSpec& m : graph.meshes()) {
        if (o.topology == pf::Topology::Torus && !(m.ring_ns && m.ring_ew)) {
            fail(ErrorCategory::BadInput,
                 "mesh plan: torus asked for, but mesh {} of the mapped graph {} does not wrap in "
                 "both "
                 "dimensions (map MeshGraph::as_torus())",
                 m.id, graph.source());
        }
    }
    const hal::Arch arch = graph.chip_spec().arch;
    if (soc.arch() != arch) {
        fail(ErrorCategory::BadInput, "mesh plan: mesh graph {} is {} but SoC descriptor {} is {}",
             graph.source(), arch_name(arch), soc.source(), arch_name(soc.arch()));
    }
    if (o.planes.empty()) fail(ErrorCategory::BadInput, "mesh plan: no routing plane selected");
    std::set<uint32_t> seen;
    for (uint32_t p : o.planes) {
        if (p >= std::max<uint32_t>(map.planes(), 1)) {
            fail(ErrorCategory::BadInput,
                 "mesh plan: routing plane {} does not exist ({} on {} has planes 0..{})", p,
                 graph.source(), map.cluster().source(), std::max<uint32_t>(map.planes(), 1) - 1);
        }
        if (!seen.insert(p).second) {
            fail(ErrorCategory::BadInput, "mesh plan: routing plane {} is listed twice ({})", p,
                 number_list(o.planes));
        }
    }
    check_tuning(kWho, tuning_of(o), soc);
    if (graph.mesh_count() > pf::kMeshExitEntries) {
        fail(ErrorCategory::BadInput,
             "mesh plan: {} has {} meshes; a router's exit table holds at most {}", graph.source(),
             graph.mesh_count(), pf::kMeshExitEntries);
    }
    check_torus_alone(graph);
}

// The ports of the selected planes (a link whose either end is on one: a cross-plane cable between
// meshes brings up both ends). Two devices must not be neighbours in two directions: a chip pair
// would need its links split between two ports.
std::vector<PortLink> selected_ports(const TopologyMap& map, const MeshFabricOptions& o) {
    const std::set<uint32_t> planes(o.planes.begin(), o.planes.end());
    std::map<std::pair<MeshNode, MeshNode>, MeshDir> pair_dir;
    std::vector<PortLink> out;
    for (const auto& [self, l] : map.ports()) {
        if (!planes.count(self.plane) && !planes.count(l.peer.plane)) continue;
        const auto [it, inserted] = pair_dir.try_emplace({self.node, l.peer.node}, self.dir);
        if (!inserted && it->second != self.dir) {
            fail(ErrorCategory::BadInput,
                 "mesh plan: {} (chip {}) and {} (chip {}) would be neighbours in two directions "
                 "({} and {}: {} and {})",
                 self.node.str(), l.self_eth.chip, l.peer.node.str(), l.peer_eth.chip,
                 dir_letter(it->second), dir_letter(self.dir),
                 MeshPort{self.node, it->second, self.plane}.str(), self.str());
        }
        out.push_back(l);
    }
    return out;
}

// ch0, the VC0 channel fed by each other router of the chip on the plane, rx0; a torus also the
// VC1 channel fed by the opposite router (straight on past the dateline), a mesh of several the
// VC1 channel fed by each other router (traffic that entered the mesh), and rx1. Slot count 1
// marks a used channel.
pf::RouterConfig used_channels(const MeshFabricOptions& o, const MeshGraph& graph,
                               const MeshSpec& m, const PortLink& l,
                               const std::map<MeshPort, size_t>& router_at, bool has_fallback) {
    const pf::Topology topology = topology_of(graph);
    const bool torus = topology == pf::Topology::Torus;
    const bool multi_mesh = graph.mesh_count() > 1;
    const MeshPort& self = l.self;
    const auto has_router = [&](MeshDir d) {
        return router_at.count(MeshPort{self.node, d, self.plane}) != 0;
    };
    pf::RouterConfig c = base_router_config(topology, tuning_of(o));
    c.chip_id = l.self_eth.chip;
    c.eth_channel = l.self_eth.chan;
    c.peer_chip_id = l.peer_eth.chip;
    c.peer_eth_channel = l.peer_eth.chan;
    c.is_master = l.self_eth.chip < l.peer_eth.chip ? 1 : 0;
    c.sender_slots[pf::kWorkerChannel] = 1;
    for (MeshDir f : kMeshDirs) {
        if (f == self.dir || !has_router(f)) continue;
        c.sender_slots[pf::kMeshVc0Channel0 + dir_index(f)] = 1;
        if (multi_mesh || (torus && f == opposite(self.dir)))
            c.sender_slots[pf::kMeshVc1Channel0 + dir_index(f)] = 1;
    }
    // The fallback's packets, while it is rerouted over this router's link; where routers carry
    // VC1 (a torus past the dateline, a mesh of several from other meshes) also those, which
    // must stay on VC1.
    if (has_fallback) {
        c.sender_slots[pf::kMeshVc0Channel0 + dir_index(self.dir)] = kFallbackChannel;
        if (torus || multi_mesh)
            c.sender_slots[pf::kMeshVc1Channel0 + dir_index(self.dir)] = kFallbackChannel;
    }
    c.receiver_slots[0] = 1;
    c.receiver_slots[1] = torus || multi_mesh ? 1 : 0;
    if (torus) {
        const uint32_t row = m.row_of(self.node.device), col = m.col_of(self.node.device);
        // The wrap links are the datelines of their rings (only in a dimension that wraps).
        switch (self.dir) {
            case MeshDir::E:
                c.dateline = col + 1 == m.cols;
                break;
            case MeshDir::W:
                c.dateline = col == 0;
                break;
            case MeshDir::S:
                c.dateline = row + 1 == m.rows;
                break;
            case MeshDir::N:
                c.dateline = row == 0;
                break;
            default:
                break;
        }
        c.dateline = c.dateline && m.wraps(self.dir) ? 1 : 0;
        c.ring_size = self.dir == MeshDir::E || self.dir == MeshDir::W ? m.cols : m.rows;
    }
    return c;
}

// The mesh side of a port's router, without the neighbour words and exit_dirs (they need every
// router of the chip placed): node, direction, plane, mesh shape, and the exit table.
MeshRouterPlacement mesh_side(const MeshGraph& graph, const RoutingTables& tables,
                              const PortLink& l) {
    const MeshSpec& m = graph.mesh(l.self.node.mesh);
    MeshRouterPlacement mp;
    mp.node = l.self.node;
    mp.dir = l.self.dir;
    mp.plane = l.self.plane;
    mp.inter_mesh = l.inter_mesh;
    pf::MeshRouterConfig& mc = mp.config;
    mc.magic = pf::kMeshConfigMagic;
    mc.dir = dir_index(mp.dir);
    mc.mesh_id = mp.node.mesh;
    mc.device_id = mp.node.device;
    mc.mesh_rows = m.rows;
    mc.mesh_cols = m.cols;
    mc.inter_mesh = mp.inter_mesh ? 1 : 0;
    mc.exit_count = graph.mesh_count();
    for (MeshId dst = 0; dst < graph.mesh_count(); ++dst) {
        const auto e = tables.l1_exit(mp.node.mesh, mp.node.device, dst);
        const auto port =
            e ? exit_port(tables, {mp.node.mesh, e->exit}, e->next_mesh, mp.plane) : std::nullopt;
        mp.exit_table.push_back(port ? pf::kMeshExitValid | dir_index(*port) << 8 | e->exit : 0);
    }
    return mp;
}

// Each router's fallback (MeshRouterConfig::neighbor[dir], RouterControl::Reroute): the router
// of the paired plane (the planes as listed, in pairs: first and second, third and fourth, ...) on
// the same node and direction, whose link joins the same two chips (where routers carry VC1, its
// VC1 channel of that direction takes the VC1 packets). None between meshes.
std::vector<std::optional<size_t>> fallbacks(const MeshFabricOptions& o,
                                             const std::vector<const PortLink*>& order,
                                             const std::map<MeshPort, size_t>& router_at) {
    std::vector<std::optional<size_t>> out(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
        const PortLink& l = *order[i];
        const size_t rank =
            std::find(o.planes.begin(), o.planes.end(), l.self.plane) - o.planes.begin();
        if (l.inter_mesh || (rank ^ 1) >= o.planes.size()) continue;
        const auto it = router_at.find(MeshPort{l.self.node, l.self.dir, o.planes[rank ^ 1]});
        if (it == router_at.end()) continue;
        const PortLink& twin = *order[it->second];
        if (!twin.inter_mesh && twin.peer_eth.chip == l.peer_eth.chip) out[i] = it->second;
    }
    return out;
}

}  // namespace

MeshPlan plan_mesh(const TopologyMap& map, const SocDescriptor& soc, const MeshFabricOptions& o) {
    check_options(map, soc, o);
    const MeshGraph& graph = map.graph();
    MeshPlan plan{FabricPlan{}, RoutingTables::build(graph), o.planes,
                  std::make_shared<const TopologyMap>(map)};
    const std::vector<PortLink> links = selected_ports(map, o);

    // Routers in (mesh, device, plane as listed, direction) order.
    std::vector<const PortLink*> order;
    for (const PortLink& l : links) order.push_back(&l);
    const auto plane_rank = [&](uint32_t p) {
        return std::find(o.planes.begin(), o.planes.end(), p) - o.planes.begin();
    };
    std::sort(order.begin(), order.end(), [&](const PortLink* a, const PortLink* b) {
        return std::tuple{a->self.node, plane_rank(a->self.plane), a->self.dir} <
               std::tuple{b->self.node, plane_rank(b->self.plane), b->self.dir};
    });
    std::map<MeshPort, size_t> router_at;
    for (size_t i = 0; i < order.size(); ++i) router_at[order[i]->self] = i;
    const std::vector<std::optional<size_t>> fallback = fallbacks(o, order, router_at);

    FabricPlan& fp = plan.fabric;
    fp.arch = soc.arch();
    fp.topology = topology_of(graph);
    for (const MeshSpec& m : graph.meshes()) {
        for (MeshDeviceId d = 0; d < m.device_count(); ++d)
            fp.chips.push_back(map.chip_of({m.id, d}));
    }
    for (size_t i = 0; i < order.size(); ++i) {
        const PortLink* l = order[i];
        RouterPlacement p{};
        p.chip = l->self_eth.chip;
        p.eth_channel = l->self_eth.chan;
        p.core = CoreLocation{p.chip, soc.eth_core(p.eth_channel)};
        (void)soc.eth_core(l->peer_eth.chan);  // BadInput if the SoC descriptor lacks the channel
        p.dir = FabricDir::East;
        p.index_in_line = p.chip;
        p.config = used_channels(o, graph, graph.mesh(l->self.node.mesh), *l, router_at,
                                 fallback[i].has_value());
        p.mesh = mesh_side(graph, plan.tables, *l);
        fp.routers.push_back(std::move(p));
    }
    if (fp.routers.empty()) return plan;  // single-chip meshes: no link, no router

    // Slots, then what each router knows of the others of its chip and plane, then the layout.
    std::vector<pf::RouterConfig> used;
    for (const RouterPlacement& p : fp.routers) used.push_back(p.config);
    const SlotChoice slots =
        choose_slots(kWho, topology_name(fp.topology), tuning_of(o), soc, used, SlotSteps::Every);
    const hal::ArchMap& am = hal::arch_map(soc.arch());
    for (size_t i = 0; i < fp.routers.size(); ++i) {
        RouterPlacement& p = fp.routers[i];
        MeshRouterPlacement& mp = *p.mesh;
        p.config = with_slots(p.config, slots);
        if (fallback[i]) {
            const CoreCoord& f = fp.routers[*fallback[i]].core.core;
            mp.config.neighbor[dir_index(mp.dir)] = pf::kMeshNeighborPresent | f.y << 8 | f.x;
        }
        for (MeshDir d : kMeshDirs) {
            const auto it = router_at.find(MeshPort{mp.node, d, mp.plane});
            if (it == router_at.end()) continue;
            const RouterPlacement& q = fp.routers[it->second];
            if (d != mp.dir) {
                mp.config.neighbor[dir_index(d)] =
                    pf::kMeshNeighborPresent | q.core.core.y << 8 | q.core.core.x;
            }
            if (q.mesh->inter_mesh) mp.config.exit_dirs |= pf::dir_bit(dir_index(d));
        }
        p.layout = pf::router_layout(am, p.config);
        if (!layout_fits(soc, p.layout)) {  // checked by choose_slots; a bug if it fails here
            fail(ErrorCategory::Internal, "mesh plan: router {} layout ends at {} past L1",
                 p.core.str(), hex32(p.layout.end));
        }
    }
    for (RouterPlacement& p : fp.routers) {
        p.config.line_reach = static_cast<uint32_t>(plan.line_chips(p).size());
    }
    return plan;
}

MeshPlan plan_mesh(const MeshGraph& graph, const ClusterDescriptor& cluster,
                   const SocDescriptor& soc, const MeshFabricOptions& options,
                   const MapOptions& map_options) {
    const MeshGraph& g = options.topology == pf::Topology::Torus ? graph.as_torus() : graph;
    check_torus_alone(g);
    return plan_mesh(map_topology(g, cluster, map_options), soc, options);
}

ChipId MeshPlan::chip_of(MeshNode n) const {
    return map->chip_of(n);
}

MeshNode MeshPlan::node_of(ChipId c) const {
    if (const auto n = map->node_of(c)) return *n;
    fail(ErrorCategory::BadInput, "mesh plan: chip {} plays no device of {}", c,
         tables.graph().source());
}

std::vector<ChipId> MeshPlan::line_chips(const RouterPlacement& r) const {
    if (!r.mesh) {
        fail(ErrorCategory::BadInput, "mesh plan: line_chips of router {}: not a mesh router",
             r.core.str());
    }
    const MeshRouterPlacement& mp = *r.mesh;
    std::vector<ChipId> out;
    if (mp.inter_mesh) return out;
    const MeshSpec& m = tables.graph().mesh(mp.node.mesh);
    const bool x = mp.dir == MeshDir::E || mp.dir == MeshDir::W;
    const bool forward = mp.dir == MeshDir::E || mp.dir == MeshDir::S;
    const uint32_t size = x ? m.cols : m.rows;
    const uint32_t row = m.row_of(mp.node.device), col = m.col_of(mp.node.device);
    const uint32_t from = x ? col : row;
    // Positions along the row (x) or column, one step at a time, until the edge of a dimension
    // that does not wrap or back at r's chip.
    for (uint32_t k = 1; k < size && out.size() < pf::kMaxLineHops; ++k) {
        if (!m.wraps(mp.dir) && (forward ? from + k >= size : k > from)) break;
        const uint32_t at = forward ? (from + k) % size : (from + size - k) % size;
        out.push_back(chip_of({mp.node.mesh, x ? row * m.cols + at : at * m.cols + col}));
    }
    return out;
}

const RouterPlacement& MeshPlan::router(MeshNode node, MeshDir dir, uint32_t plane) const {
    tables.graph().check_node(node);
    check_plane_up(planes, plane);
    for (const RouterPlacement& r : fabric.routers) {
        if (r.mesh && r.mesh->node == node && r.mesh->dir == dir && r.mesh->plane == plane)
            return r;
    }
    fail(ErrorCategory::BadInput,
         "mesh plan: {} has no {} router on plane {} (no neighbour or connection that way)",
         node.str(), dir_letter(dir), plane);
}

// The directions a packet at `node` for `dst` leaves each chip in, as far as the routers of
// node's mesh take it: to dst (X then Y; on a torus each dimension the shorter way round), or to
// the exit node and out of its inter-mesh port (`leaves`). The entry router of the next mesh does
// the same from its own device (firmware: mesh_entry_route).
std::vector<MeshDir> MeshPlan::segment(MeshNode node, MeshNode dst, uint32_t plane,
                                       bool& leaves) const {
    const MeshGraph& g = tables.graph();
    std::vector<MeshDir> path;
    leaves = node.mesh != dst.mesh;
    if (!leaves && g.mesh(node.mesh).is_torus()) {
        const MeshSpec& m = g.mesh(node.mesh);
        uint32_t dirs[pf::kMaxHops2D] = {};
        const uint32_t n = pf::mesh_path_torus_xy(m.row_of(node.device), m.col_of(node.device),
                                                  m.row_of(dst.device), m.col_of(dst.device),
                                                  m.rows, m.cols, dirs, m.ring_ns, m.ring_ew);
        for (uint32_t i = 0; i < n; ++i) path.push_back(static_cast<MeshDir>(dirs[i]));
    } else if (!leaves) {
        path = tables.l0_route(node.mesh, node.device, dst.device);
    } else {
        const auto e = tables.l1_exit(node.mesh, node.device, dst.mesh);
        if (!e) {
            fail(ErrorCategory::BadInput, "mesh plan: no route from mesh {} to mesh {} in {}",
                 node.mesh, dst.mesh, g.source());
        }
        const auto port = exit_port(tables, {node.mesh, e->exit}, e->next_mesh, plane);
        if (!port) {
            fail(ErrorCategory::BadInput,
                 "mesh plan: exit node M{}D{} has no connection to mesh {} on routing plane {} "
                 "({})",
                 node.mesh, e->exit, e->next_mesh, plane, g.source());
        }
        path = tables.l0_route(node.mesh, node.device, e->exit);
        path.push_back(*port);
    }
    if (path.size() > pf::kMaxHops2D) {
        fail(ErrorCategory::BadInput,
             "mesh plan: the route from {} to {} is {} hops{}; a 2D route holds at most {}",
             node.str(), dst.str(), path.size(), leaves ? " to the exit of its mesh" : "",
             pf::kMaxHops2D);
    }
    return path;
}

MeshSend MeshPlan::send(MeshNode src, MeshNode dst, uint32_t plane) const {
    const MeshGraph& g = tables.graph();
    g.check_node(src);
    g.check_node(dst);
    check_plane_up(planes, plane);
    if (src == dst) fail(ErrorCategory::BadInput, "mesh plan: send from {} to itself", src.str());
    bool leaves = false;
    const std::vector<MeshDir> path = segment(src, dst, plane, leaves);
    MeshSend out;
    out.router = &router(src, path.front(), plane);
    out.hops = static_cast<uint32_t>(path.size());
    uint32_t dirs[pf::kMaxHops2D] = {};
    std::transform(path.begin(), path.end(), dirs, dir_index);
    out.route = pf::mesh_route_path(dirs, out.hops, /*write_last=*/!leaves).with_ttl(fabric.ttl());
    out.route.dst_node = pf::mesh_node_word(dst.mesh, dst.device);
    return out;
}

std::vector<MeshHop> MeshPlan::links(MeshNode src, MeshNode dst, uint32_t plane) const {
    tables.graph().check_node(src);
    tables.graph().check_node(dst);
    check_plane_up(planes, plane);
    std::vector<MeshHop> out;
    MeshNode node = src;
    uint32_t vc = 0;  // of the sender channel the packet takes next (a worker's ch0: VC0)
    const RouterPlacement* last = nullptr;
    bool entered = false;  // it has left its source mesh (a torus is one mesh, so never there)
    while (!(node == dst)) {
        bool leaves = false;
        for (const MeshDir d : segment(node, dst, plane, leaves)) {
            const RouterPlacement& r = router(node, d, plane);
            // VC1 from the first entry router on; else a turn (or the start) is VC0, and straight
            // on stays on the VC it came in on (a torus: VC1 past a dateline).
            if (entered) {
                vc = 1;
            } else if (last == nullptr || last->mesh->dir != d) {
                vc = 0;
            }
            out.push_back({&r, vc});
            // What it lands in at the next chip: rx1 after a dateline link or on VC1.
            vc = (vc == 1 || r.config.dateline != 0) ? 1 : 0;
            last = &r;
            node = node_of(r.config.peer_chip_id);
        }
        last = nullptr;
        entered = true;
        if (out.size() > 4 * fabric.routers.size()) {
            fail(ErrorCategory::BadInput, "mesh plan: the route from {} to {} does not end",
                 src.str(), dst.str());
        }
    }
    return out;
}

std::optional<std::string> MeshPlan::wait_cycle(
    std::span<const std::pair<MeshNode, MeshNode>> flows, uint32_t plane) const {
    // Nodes: (router, VC) sender buffers; an edge where some flow holds one while it waits for the
    // next. Every buffer of a link is one node: coarser than the firmware's channels, so a cycle
    // here may be harmless, but none here means none there.
    const auto index = [&](const MeshHop& h) {
        return static_cast<size_t>(h.router - fabric.routers.data()) * 2 + h.vc;
    };
    const size_t n = fabric.routers.size() * 2;
    std::vector<std::vector<size_t>> next(n);
    for (const auto& [src, dst] : flows) {
        if (src == dst) continue;
        const auto hops = links(src, dst, plane);
        for (size_t i = 0; i + 1 < hops.size(); ++i)
            next[index(hops[i])].push_back(index(hops[i + 1]));
    }
    for (auto& v : next) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    // Depth-first search with an explicit stack; a grey node met again closes a cycle.
    enum : uint8_t { White, Grey, Black };
    std::vector<uint8_t> colour(n, White);
    std::vector<size_t> parent(n, n);
    for (size_t root = 0; root < n; ++root) {
        if (colour[root] != White) continue;
        std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
        colour[root] = Grey;
        while (!stack.empty()) {
            auto& [u, k] = stack.back();
            if (k == next[u].size()) {
                colour[u] = Black;
                stack.pop_back();
                continue;
            }
            const size_t v = next[u][k++];
            if (colour[v] == White) {
                colour[v] = Grey;
                parent[v] = u;
                stack.push_back({v, 0});
            } else if (colour[v] == Grey) {
                std::vector<size_t> cycle{v};
                for (size_t w = u; w != v; w = parent[w]) cycle.push_back(w);
                std::reverse(cycle.begin() + 1, cycle.end());
                std::string text;
                for (const size_t w : cycle) {
                    const RouterPlacement& r = fabric.routers[w / 2];
                    text += fmt::format("{} {}{} -> ", r.mesh->node.str(), dir_letter(r.mesh->dir),
                                        w % 2 == 1 ? " (VC1)" : "");
                }
                const RouterPlacement& first = fabric.routers[v / 2];
                return text +
                       fmt::format("{} {}", first.mesh->node.str(), dir_letter(first.mesh->dir));
            }
        }
    }
    return std::nullopt;
}

pf::WorkerChannel MeshPlan::worker_channel(const RouterPlacement& r) const {
    return pf::worker_channel(hal::arch_map(fabric.arch), r.config, r.core.core.x, r.core.core.y);
}

}  // namespace fabric
