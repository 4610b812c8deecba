#include "fabric/routing_tables.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <set>

#include "fabric/error.h"

namespace fabric {

namespace {

constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();

// X first (E/W along the row), then Y (N/S along the column).
std::vector<MeshDir> dimension_order_route(const MeshSpec& m, MeshDeviceId src, MeshDeviceId dst) {
    std::vector<MeshDir> out;
    const uint32_t sr = m.row_of(src), sc = m.col_of(src);
    const uint32_t dr = m.row_of(dst), dc = m.col_of(dst);
    for (uint32_t c = sc; c < dc; ++c) out.push_back(MeshDir::E);
    for (uint32_t c = dc; c < sc; ++c) out.push_back(MeshDir::W);
    for (uint32_t r = sr; r < dr; ++r) out.push_back(MeshDir::S);
    for (uint32_t r = dr; r < sr; ++r) out.push_back(MeshDir::N);
    return out;
}

std::string dirs_string(const std::vector<MeshDir>& dirs) {
    std::string s;
    for (MeshDir d : dirs) s += dir_letter(d);
    return s;
}

}  // namespace

std::string SourceRoute::str() const {
    std::string s = src.str();
    for (const RouteHop& h : hops) {
        const char d = dir_letter(h.dir);
        s += h.inter_mesh ? fmt::format(" ={}=> {}", d, h.to.str())
                          : fmt::format(" -{}-> {}", d, h.to.str());
    }
    return s;
}

RoutingTables RoutingTables::build(const MeshGraph& graph) {
    if (!graph.links_resolved()) {
        const MeshConnection& c = graph.mesh_connections().front();
        fail(ErrorCategory::BadInput,
             "{}:{}: routing tables between meshes need a cluster descriptor (--cluster): the "
             "links of the "
             "connection of mesh {} and mesh {} ({} channels) are chosen by the topology mapping "
             "(fabricctl mesh map --cluster FILE --mesh-graph {})",
             graph.source(), c.line, c.a, c.b, c.channels, graph.source());
    }
    RoutingTables t;
    t.graph_ = std::make_shared<const MeshGraph>(graph);
    const MeshGraph& g = *t.graph_;
    const uint32_t meshes = g.mesh_count();

    // Mesh-level directed graph and the exit devices of each ordered mesh pair.
    std::vector<std::set<MeshId>> adj(meshes);
    std::map<std::pair<MeshId, MeshId>, std::set<MeshDeviceId>> exits;
    for (const InterMeshLink& l : g.links()) {
        adj[l.from.node.mesh].insert(l.to.node.mesh);
        exits[{l.from.node.mesh, l.to.node.mesh}].insert(l.from.node.device);
    }

    // dist[a][b]: mesh hops from a to b (BFS from every mesh).
    std::vector<std::vector<uint32_t>> dist(meshes, std::vector<uint32_t>(meshes, kUnreached));
    for (MeshId a = 0; a < meshes; ++a) {
        std::deque<MeshId> q{a};
        dist[a][a] = 0;
        while (!q.empty()) {
            const MeshId cur = q.front();
            q.pop_front();
            for (MeshId nb : adj[cur]) {
                if (dist[a][nb] == kUnreached) {
                    dist[a][nb] = dist[a][cur] + 1;
                    q.push_back(nb);
                }
            }
        }
    }
    // Next mesh: the lowest-id neighbour on a shortest path (adj is ordered by id).
    t.next_.assign(meshes, std::vector<std::optional<MeshId>>(meshes));
    for (MeshId a = 0; a < meshes; ++a) {
        for (MeshId b = 0; b < meshes; ++b) {
            if (a == b || dist[a][b] == kUnreached) continue;
            for (MeshId nb : adj[a]) {
                if (dist[nb][b] != kUnreached && dist[nb][b] + 1 == dist[a][b]) {
                    t.next_[a][b] = nb;
                    break;
                }
            }
        }
    }

    // Link dependencies along every mesh path; reject a cycle.
    using Link = std::pair<MeshId, MeshId>;
    std::map<Link, std::set<Link>> deps;
    for (MeshId a = 0; a < meshes; ++a) {
        for (MeshId b = 0; b < meshes; ++b) {
            const std::vector<MeshId> path = t.mesh_path(a, b);
            for (size_t i = 2; i < path.size(); ++i) {
                deps[{path[i - 2], path[i - 1]}].insert({path[i - 1], path[i]});
            }
        }
    }
    std::map<Link, int> state;  // 0 new, 1 on the DFS stack, 2 done
    std::vector<Link> stack;
    std::vector<Link> cycle;
    const auto dfs = [&](auto&& self, const Link& l) -> bool {
        state[l] = 1;
        stack.push_back(l);
        for (const Link& nx : deps[l]) {
            if (state[nx] == 1) {
                cycle.assign(std::find(stack.begin(), stack.end(), nx), stack.end());
                cycle.push_back(nx);
                return true;
            }
            if (state[nx] == 0 && self(self, nx)) return true;
        }
        stack.pop_back();
        state[l] = 2;
        return false;
    };
    for (const auto& [l, _] : exits) {
        if (state[l] == 0 && dfs(dfs, l)) {
            std::string links;
            for (const Link& c : cycle) {
                links +=
                    fmt::format("{}M{}->M{}", links.empty() ? "" : ", then ", c.first, c.second);
            }
            const std::string where =
                g.graph_line() ? fmt::format("{}:{}", g.source(), g.graph_line()) : g.source();
            fail(ErrorCategory::BadDescriptor,
                 "{}: field 'Graph': the inter-mesh routes form a cycle ({}): traffic waiting on "
                 "each of these links holds the previous one and could deadlock; remove one "
                 "direction of a connection to break it",
                 where, links);
        }
    }

    // L1: exit node per (mesh, device, next mesh); a destination mesh maps to its next mesh.
    t.exit_.resize(meshes);
    for (MeshId m = 0; m < meshes; ++m) {
        const MeshSpec& spec = g.mesh(m);
        t.exit_[m].resize(spec.device_count());
        for (MeshDeviceId s = 0; s < spec.device_count(); ++s) {
            for (const MeshId next : adj[m]) {
                std::optional<MeshDeviceId> best;
                size_t best_hops = 0;
                for (MeshDeviceId e : exits.at({m, next})) {  // ascending: ties keep the lowest
                    const size_t hops = dimension_order_route(spec, s, e).size();
                    if (!best || hops < best_hops) {
                        best = e;
                        best_hops = hops;
                    }
                }
                ExitEntry entry;
                entry.exit = *best;
                entry.next_mesh = next;
                if (*best != s) {
                    entry.dir = dimension_order_route(spec, s, *best).front();
                } else {
                    // The exit itself: the direction of its first connection to the next mesh.
                    std::optional<MeshDir> out;
                    for (const InterMeshLink& l : g.links()) {
                        if (l.from.node == MeshNode{m, s} && l.to.node.mesh == next &&
                            (!out || l.from.dir < *out)) {
                            out = l.from.dir;
                        }
                    }
                    entry.dir = *out;
                }
                t.exit_[m][s].push_back(entry);
            }
        }
    }
    return t;
}

std::vector<MeshDir> RoutingTables::l0_route(MeshId mesh, MeshDeviceId src,
                                             MeshDeviceId dst) const {
    graph_->check_node({mesh, src});
    graph_->check_node({mesh, dst});
    return dimension_order_route(graph_->mesh(mesh), src, dst);
}

std::string RoutingTables::l0_string(MeshId mesh, MeshDeviceId src, MeshDeviceId dst) const {
    return dirs_string(l0_route(mesh, src, dst));
}

std::optional<ExitEntry> RoutingTables::l1_exit(MeshId mesh, MeshDeviceId src,
                                                MeshId dst_mesh) const {
    graph_->check_node({mesh, src});
    graph_->mesh(dst_mesh);
    const auto next = next_[mesh][dst_mesh];
    if (!next) return std::nullopt;
    for (const ExitEntry& e : exit_[mesh][src]) {
        if (e.next_mesh == *next) return e;
    }
    fail(ErrorCategory::Internal, "no exit from M{}D{} towards mesh {}", mesh, src, *next);
}

std::optional<MeshId> RoutingTables::next_mesh(MeshId from, MeshId to) const {
    graph_->mesh(from);
    graph_->mesh(to);
    return next_[from][to];
}

std::vector<MeshId> RoutingTables::mesh_path(MeshId from, MeshId to) const {
    graph_->mesh(from);
    graph_->mesh(to);
    std::vector<MeshId> path{from};
    while (path.back() != to) {
        const auto nx = next_[path.back()][to];
        if (!nx) return {};
        path.push_back(*nx);
    }
    return path;
}

const InterMeshLink* RoutingTables::link_from(MeshNode node, MeshDir dir, uint32_t plane) const {
    for (const InterMeshLink& l : graph_->links()) {
        if (l.from.node == node && l.from.dir == dir && l.from.plane == plane) return &l;
    }
    return nullptr;
}

std::optional<uint32_t> RoutingTables::eth_channel(MeshNode node, MeshDir dir,
                                                   uint32_t plane) const {
    graph_->check_node(node);
    const auto ch = graph_->chip_spec().eth_channel(dir, plane);
    if (!ch) return std::nullopt;
    if (graph_->mesh(node.mesh).neighbor(node.device, dir) || link_from(node, dir, plane)) {
        return ch;
    }
    return std::nullopt;
}

// The direction a packet for `dst` leaves `node` in: the L0 route inside the destination mesh,
// else towards (or out of) the L1 exit node.
std::optional<MeshDir> RoutingTables::first_hop(MeshNode node, MeshNode dst) const {
    if (node.mesh == dst.mesh) {
        const auto r = l0_route(node.mesh, node.device, dst.device);
        return r.empty() ? std::nullopt : std::optional<MeshDir>(r.front());
    }
    const auto e = l1_exit(node.mesh, node.device, dst.mesh);
    if (!e) return std::nullopt;
    return e->dir;
}

std::optional<uint32_t> RoutingTables::forward_channel(MeshNode node, uint32_t channel,
                                                       MeshNode dst) const {
    graph_->check_node(node);
    graph_->check_node(dst);
    const auto port = graph_->chip_spec().channel_port(channel);
    if (!port) {
        fail(ErrorCategory::BadInput, "channel {} of {} is not an N/E/S/W fabric port", channel,
             node.str());
    }
    const auto dir = first_hop(node, dst);
    if (!dir) return std::nullopt;
    return eth_channel(node, *dir, port->second);
}

SourceRoute RoutingTables::source_route(MeshNode src, MeshNode dst, uint32_t start_plane) const {
    graph_->check_node(src);
    graph_->check_node(dst);
    const ChipSpec& chip = graph_->chip_spec();
    if (start_plane >= chip.ports_per_direction) {
        if (chip.ports_per_direction == 0) {
            fail(ErrorCategory::BadInput,
                 "routing plane {} does not exist ({} has no Ethernet ports per direction)",
                 start_plane, graph_->source());
        }
        fail(ErrorCategory::BadInput, "routing plane {} does not exist ({} has planes 0..{})",
             start_plane, graph_->source(), chip.ports_per_direction - 1);
    }
    uint32_t plane = start_plane;
    SourceRoute r;
    r.src = src;
    r.dst = dst;
    r.plane = start_plane;
    r.meshes = mesh_path(src.mesh, dst.mesh);
    if (r.meshes.empty()) {
        fail(ErrorCategory::BadInput, "no route from mesh {} to mesh {} in {}", src.mesh, dst.mesh,
             graph_->source());
    }
    const auto intra = [&](MeshNode& cur, MeshDeviceId to) {
        const MeshSpec& spec = graph_->mesh(cur.mesh);
        for (MeshDir d : dimension_order_route(spec, cur.device, to)) {
            RouteHop h;
            h.from = cur;
            h.dir = d;
            h.to = MeshNode{cur.mesh, *spec.neighbor(cur.device, d)};
            h.eth_channel = *chip.eth_channel(d, plane);
            h.peer_channel = *chip.eth_channel(opposite(d), plane);
            r.hops.push_back(h);
            cur = h.to;
        }
    };
    MeshNode cur = src;
    while (cur.mesh != dst.mesh) {
        const ExitEntry e = *l1_exit(cur.mesh, cur.device, dst.mesh);
        intra(cur, e.exit);
        const InterMeshLink* link = nullptr;
        for (MeshDir d : kMeshDirs) {
            const InterMeshLink* l = link_from(cur, d, plane);
            if (l && l->to.node.mesh == e.next_mesh) {
                link = l;
                break;
            }
        }
        if (!link) {
            fail(ErrorCategory::BadInput,
                 "exit node {} has no connection to mesh {} on routing plane {} ({})", cur.str(),
                 e.next_mesh, plane, graph_->source());
        }
        RouteHop h;
        h.from = cur;
        h.to = link->to.node;
        h.dir = link->from.dir;
        h.eth_channel = *chip.eth_channel(link->from.dir, plane);
        h.peer_channel = *chip.eth_channel(link->to.dir, link->to.plane);
        h.inter_mesh = true;
        r.hops.push_back(h);
        cur = h.to;
        plane = link->to.plane;  // a cable may join two planes (TG): go on on the arrival plane
    }
    intra(cur, dst.device);
    return r;
}

}  // namespace fabric
