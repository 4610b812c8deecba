#include "fabric/topology_map.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <set>
#include <tuple>

#include "fabric/error.h"
#include "fabric/soc_descriptor.h"

namespace fabric {

namespace {

// Search steps per shape tried when deriving a mesh: a shape the cluster cannot hold is given up
// quickly, so trying every size from the largest stays well under a second.
constexpr uint64_t kShapeStepBudget = 200'000;
// Short neighbour pairs a failure message names before it only counts the rest.
constexpr size_t kShortPairsNamed = 4;

// Links between two chips as (channel on the first, channel on the second), ascending on the first.
using Links = std::vector<std::pair<uint32_t, uint32_t>>;

// The cluster's Ethernet graph; memory is proportional to chips + links.
class PhysicalGraph {
  public:
    explicit PhysicalGraph(const ClusterDescriptor& cluster) : adj_(cluster.chip_count()) {
        for (const EthConnection& c : cluster.connections()) {
            adj_[c.a.chip][c.b.chip].emplace_back(c.a.chan, c.b.chan);
            adj_[c.b.chip][c.a.chip].emplace_back(c.b.chan, c.a.chan);
        }
        for (auto& neighbours : adj_) {
            for (auto& [chip, links] : neighbours) std::sort(links.begin(), links.end());
        }
    }
    uint32_t chips() const { return static_cast<uint32_t>(adj_.size()); }
    const std::map<ChipId, Links>& neighbours(ChipId c) const { return adj_[c]; }
    const Links& links(ChipId a, ChipId b) const {
        static const Links kNone;
        const auto it = adj_[a].find(b);
        return it == adj_[a].end() ? kNone : it->second;
    }
    uint32_t link_count(ChipId a, ChipId b) const {
        return static_cast<uint32_t>(links(a, b).size());
    }

  private:
    std::vector<std::map<ChipId, Links>> adj_;
};

enum class EdgeKind : uint8_t { Grid, Wrap, Cable, Connection };

// A logical neighbour pair (a < b by node index) and what it needs of the chips it lands on.
struct LogicalEdge {
    uint32_t a = 0;
    uint32_t b = 0;
    EdgeKind kind = EdgeKind::Grid;
    uint32_t channels = 0;  // links asked for
    ChannelPolicy policy = ChannelPolicy::Strict;
    MeshDir dir_a = MeshDir::E;                         // Grid / Wrap: b seen from a
    std::vector<std::pair<MeshPort, MeshPort>> cables;  // Cable: the YAML Graph's ports at a, b
    size_t connection = 0;                              // Connection: index in mesh_connections

    uint32_t need() const { return policy == ChannelPolicy::Strict ? channels : 1; }
};

std::string edge_name(const LogicalEdge& e, const std::vector<MeshNode>& nodes) {
    const std::string a = nodes[e.a].str(), b = nodes[e.b].str();
    switch (e.kind) {
        case EdgeKind::Grid:
            return fmt::format("{} -{}- {}", a, dir_letter(e.dir_a), b);
        case EdgeKind::Wrap:
            return fmt::format("{} -{}- {} (torus wrap)", a, dir_letter(e.dir_a), b);
        default:
            return fmt::format("{} == {} (between meshes)", a, b);
    }
}

// Every device of the graph as a node index (first[mesh] + device) and the logical edges.
struct LogicalGraph {
    std::vector<MeshNode> nodes;
    std::vector<uint32_t> first;  // first[mesh]; first.back() = node count
    std::vector<LogicalEdge> edges;
    std::vector<std::vector<std::pair<uint32_t, size_t>>> adj;  // node -> (other node, edge)
    std::vector<size_t> mesh_level;  // mesh_connections placed by the mapping, not by devices

    uint32_t index(MeshNode n) const { return first[n.mesh] + n.device; }
    void add(LogicalEdge e) {
        if (e.a > e.b) std::swap(e.a, e.b);
        adj[e.a].emplace_back(e.b, edges.size());
        adj[e.b].emplace_back(e.a, edges.size());
        edges.push_back(std::move(e));
    }
};

void check_mesh(const MeshGraph& g, const MeshSpec& m) {
    if (m.device_count() > 1 && m.channels == 0) {
        fail(ErrorCategory::BadInput,
             "topology map: mesh {} of {} has {} devices but 0 channels per neighbour pair", m.id,
             g.source(), m.device_count());
    }
    for (const auto& [ring, size, dim] : {std::tuple{m.ring_ns, m.rows, "rows (N/S)"},
                                          std::tuple{m.ring_ew, m.cols, "columns (E/W)"}}) {
        if (ring && size == 2) {
            fail(ErrorCategory::BadInput,
                 "topology map: mesh {} of {} is a ring of 2 {}: its wrap would join the same two "
                 "chips in two directions; rings of 2 are not supported",
                 m.id, g.source(), dim);
        }
    }
}

void add_mesh_edges(LogicalGraph& lg, const MeshSpec& m) {
    const auto edge = [&](MeshDeviceId a, MeshDeviceId b, EdgeKind kind, MeshDir dir_a) {
        LogicalEdge e;
        e.a = lg.index({m.id, a});
        e.b = lg.index({m.id, b});
        e.kind = kind;
        e.channels = m.channels;
        e.policy = m.policy;
        e.dir_a = dir_a;
        lg.add(std::move(e));
    };
    for (MeshDeviceId d = 0; d < m.device_count(); ++d) {
        if (const auto east = m.neighbor(d, MeshDir::E)) edge(d, *east, EdgeKind::Grid, MeshDir::E);
        if (const auto south = m.neighbor(d, MeshDir::S))
            edge(d, *south, EdgeKind::Grid, MeshDir::S);
    }
    if (m.ring_ew && m.cols >= 3) {
        for (uint32_t r = 0; r < m.rows; ++r) {
            edge(r * m.cols, r * m.cols + m.cols - 1, EdgeKind::Wrap, MeshDir::W);
        }
    }
    if (m.ring_ns && m.rows >= 3) {
        for (uint32_t c = 0; c < m.cols; ++c) {
            edge(c, (m.rows - 1) * m.cols + c, EdgeKind::Wrap, MeshDir::N);
        }
    }
}

// The YAML Graph's cables, one edge per pair of devices (both directions of a cable are one); the
// k-th cable by its port on the first device takes the k-th link.
void add_cable_edges(LogicalGraph& lg, const MeshGraph& g) {
    std::map<std::pair<uint32_t, uint32_t>, std::set<std::pair<MeshPort, MeshPort>>> by_pair;
    for (const InterMeshLink& l : g.links()) {
        const uint32_t from = lg.index(l.from.node), to = lg.index(l.to.node);
        if (from < to) {
            by_pair[{from, to}].emplace(l.from, l.to);
        } else {
            by_pair[{to, from}].emplace(l.to, l.from);
        }
    }
    for (auto& [pair, cables] : by_pair) {
        LogicalEdge e;
        e.a = pair.first;
        e.b = pair.second;
        e.kind = EdgeKind::Cable;
        e.channels = static_cast<uint32_t>(cables.size());
        e.policy = ChannelPolicy::Relaxed;  // as the YAML form's meshes: fewer links, fewer planes
        e.cables.assign(cables.begin(), cables.end());
        lg.add(std::move(e));
    }
}

LogicalGraph logical_graph(const MeshGraph& g) {
    LogicalGraph lg;
    lg.first.push_back(0);
    for (const MeshSpec& m : g.meshes()) {
        check_mesh(g, m);
        lg.first.push_back(lg.first.back() + m.device_count());
        for (MeshDeviceId d = 0; d < m.device_count(); ++d) lg.nodes.push_back({m.id, d});
    }
    lg.adj.resize(lg.nodes.size());
    for (const MeshSpec& m : g.meshes()) add_mesh_edges(lg, m);
    add_cable_edges(lg, g);
    const auto& conns = g.mesh_connections();
    for (size_t i = 0; i < conns.size(); ++i) {
        const MeshConnection& c = conns[i];
        if (!c.device_a || !c.device_b) {
            lg.mesh_level.push_back(i);
            continue;
        }
        LogicalEdge e;
        e.a = lg.index({c.a, *c.device_a});
        e.b = lg.index({c.b, *c.device_b});
        e.kind = EdgeKind::Connection;
        e.channels = c.channels;
        e.policy = c.policy;
        e.connection = i;
        lg.add(std::move(e));
    }
    return lg;
}

// The order devices are placed in: meshes breadth-first over their connections from mesh 0, and
// inside a mesh breadth-first from its first device (one joined to an earlier mesh, else device
// 0), so each device but a mesh's first has a placed neighbour: its parent.
struct PlacementOrder {
    std::vector<uint32_t> nodes;
    std::vector<std::optional<uint32_t>> parent;  // by node
    std::vector<size_t> parent_edge;              // by node, where it has a parent
    std::vector<size_t> mesh_done;                // by mesh: position of its last node + 1
};

std::vector<MeshId> mesh_order(const MeshGraph& g, const LogicalGraph& lg) {
    std::vector<std::set<MeshId>> joined(g.mesh_count());
    for (const LogicalEdge& e : lg.edges) {
        const MeshId a = lg.nodes[e.a].mesh, b = lg.nodes[e.b].mesh;
        if (a != b) joined[a].insert(b), joined[b].insert(a);
    }
    for (const MeshConnection& c : g.mesh_connections())
        joined[c.a].insert(c.b), joined[c.b].insert(c.a);
    std::vector<MeshId> order;
    std::vector<bool> seen(g.mesh_count(), false);
    for (MeshId root = 0; root < g.mesh_count(); ++root) {
        if (seen[root]) continue;
        seen[root] = true;
        for (size_t i = order.size(), end = (order.push_back(root), order.size()); i < end;
             end = order.size(), ++i) {
            for (MeshId next : joined[order[i]]) {
                if (!seen[next]) seen[next] = true, order.push_back(next);
            }
        }
    }
    return order;
}

PlacementOrder placement_order(const MeshGraph& g, const LogicalGraph& lg) {
    PlacementOrder po;
    po.parent.resize(lg.nodes.size());
    po.parent_edge.resize(lg.nodes.size());
    po.mesh_done.resize(g.mesh_count());
    std::vector<bool> seen(lg.nodes.size(), false);
    for (MeshId m : mesh_order(g, lg)) {
        uint32_t start = lg.first[m];
        for (uint32_t v = lg.first[m]; v < lg.first[m + 1] && start == lg.first[m]; ++v) {
            for (const auto& [u, e] : lg.adj[v]) {
                if (seen[u] && lg.nodes[u].mesh != m) {
                    start = v;
                    po.parent[v] = u;
                    po.parent_edge[v] = e;
                    break;
                }
            }
        }
        seen[start] = true;
        const size_t begin = po.nodes.size();
        po.nodes.push_back(start);
        for (size_t i = begin; i < po.nodes.size(); ++i) {
            const uint32_t v = po.nodes[i];
            std::vector<std::pair<uint32_t, size_t>> next;  // along the grid (wraps only constrain)
            for (const auto& [u, e] : lg.adj[v]) {
                if (!seen[u] && lg.edges[e].kind == EdgeKind::Grid) next.emplace_back(u, e);
            }
            std::sort(next.begin(), next.end());
            for (const auto& [u, e] : next) {
                if (seen[u]) continue;
                seen[u] = true;
                po.parent[u] = v;
                po.parent_edge[u] = e;
                po.nodes.push_back(u);
            }
        }
        po.mesh_done[m] = po.nodes.size();
    }
    return po;
}

// How a search may bend the rules to explain why a strict one failed.
struct Tolerance {
    uint32_t short_pairs = 0;   // neighbour pairs that may have fewer links than needed
    bool unlinked = false;      // ... down to none at all
    bool soft_wraps = false;    // torus wraps constrain nothing (their links are checked after)
    bool soft_between = false;  // nor do the links between meshes
};
// The searches that explain a failure, in order: one short pair (a link down), one missing pair
// (a cable), then the whole torus cabling, then the cabling between meshes.
constexpr Tolerance kExplanations[] = {{1, false, false, false},
                                       {1, true, false, false},
                                       {0, false, true, false},
                                       {0, false, false, true}};

struct ShortEdge {
    size_t edge = 0;
    ChipId a = 0;
    ChipId b = 0;
};

// Directions of a device not taken by its own mesh (grid, wraps) or by YAML cables.
std::vector<MeshDir> free_dirs(const MeshGraph& g, const LogicalGraph& lg, uint32_t v) {
    const MeshNode n = lg.nodes[v];
    const MeshSpec& m = g.mesh(n.mesh);
    std::vector<MeshDir> out;
    for (MeshDir d : kMeshDirs) {
        const bool wrap = m.wraps(d) && (d == MeshDir::N || d == MeshDir::S ? m.rows : m.cols) >= 3;
        if (m.neighbor(n.device, d) || wrap) continue;
        bool cabled = false;
        for (const InterMeshLink& l : g.links())
            cabled = cabled || (l.from.node == n && l.from.dir == d);
        if (!cabled) out.push_back(d);
    }
    return out;
}

// The links an MGD connection gets on a placement: chip pairs between the two meshes (or the
// named devices) in device order, each pair on a free direction at both ends, links in channel
// order until `channels` are taken. Shared by the search (is there enough?) and the result.
struct ChosenLink {
    uint32_t a = 0;  // node in mesh a
    uint32_t b = 0;
    MeshDir dir_a = MeshDir::N;
    MeshDir dir_b = MeshDir::N;
    uint32_t plane = 0;  // k-th link of the pair
    std::pair<uint32_t, uint32_t> chans;
};

class ConnectionChooser {
  public:
    ConnectionChooser(const MeshGraph& g, const LogicalGraph& lg, const PhysicalGraph& pg)
        : g_(g), lg_(lg), pg_(pg), free_(lg.nodes.size()) {
        for (uint32_t v = 0; v < lg.nodes.size(); ++v) free_[v] = free_dirs(g, lg, v);
    }

    std::vector<ChosenLink> choose(const MeshConnection& c, const std::vector<int64_t>& chip_at) {
        std::vector<ChosenLink> out;
        for (uint32_t a : devices(c.a, c.device_a)) {
            for (uint32_t b : devices(c.b, c.device_b)) {
                if (out.size() >= c.channels) return out;
                take_pair(a, b, c.channels, chip_at, out);
            }
        }
        return out;
    }

  private:
    std::vector<uint32_t> devices(MeshId m, std::optional<MeshDeviceId> only) const {
        if (only) return {lg_.index({m, *only})};
        std::vector<uint32_t> v(lg_.first[m + 1] - lg_.first[m]);
        std::iota(v.begin(), v.end(), lg_.first[m]);
        return v;
    }

    void take_pair(uint32_t a, uint32_t b, uint32_t channels, const std::vector<int64_t>& chip_at,
                   std::vector<ChosenLink>& out) {
        const Links& links =
            pg_.links(static_cast<ChipId>(chip_at[a]), static_cast<ChipId>(chip_at[b]));
        if (links.empty() || free_[a].empty() || free_[b].empty()) return;
        const MeshDir da = free_[a].front(), db = free_[b].front();
        free_[a].erase(free_[a].begin());
        free_[b].erase(free_[b].begin());
        for (uint32_t k = 0; k < links.size() && out.size() < channels; ++k) {
            out.push_back({a, b, da, db, k, links[k]});
        }
    }

    const MeshGraph& g_;
    const LogicalGraph& lg_;
    const PhysicalGraph& pg_;
    std::vector<std::vector<MeshDir>> free_;
};

// Where the search stood when it found no chip for a device: for the message of a failure.
struct DeadEnd {
    size_t depth = 0;
    uint32_t node = 0;
    std::optional<uint32_t> parent;
    std::optional<ChipId> parent_chip;
};

}  // namespace

// The depth-first embedding (see the header).
class TopologyMapper {
  public:
    TopologyMapper(const MeshGraph& g, const ClusterDescriptor& cluster, const MapOptions& o)
        : g_(g),
          cluster_(cluster),
          o_(o),
          pg_(cluster),
          lg_(logical_graph(g)),
          order_(placement_order(g, lg_)),
          pinned_(lg_.nodes.size()) {
        for (const ChipPin& p : o.pins) pin(p);
    }

    // One search; true when every device is placed.
    bool search(Tolerance t) {
        tol_ = t;
        steps_ = 0;
        out_of_steps_ = false;
        shorts_.clear();
        dead_end_ = {};
        chip_at_.assign(lg_.nodes.size(), -1);
        used_.assign(pg_.chips(), false);
        return place(0);
    }

    TopologyMap result() const;
    CablingReport report() const;
    // Why the last search failed: the short pairs of the closest placement an explaining search
    // finds, or where the search got stuck.
    std::string failure() const;

  private:
    void pin(const ChipPin& p) {
        g_.check_node(p.node);
        if (p.chip >= cluster_.chip_count()) {
            fail(ErrorCategory::BadInput, "topology map: pin {}={}: cluster {} has chips 0..{}",
                 p.node.str(), p.chip, cluster_.source(), cluster_.chip_count() - 1);
        }
        for (uint32_t v = 0; v < lg_.nodes.size(); ++v) {
            if (pinned_[v] == p.chip && lg_.nodes[v] != p.node) {
                fail(ErrorCategory::BadInput, "topology map: chip {} is pinned to both {} and {}",
                     p.chip, lg_.nodes[v].str(), p.node.str());
            }
        }
        auto& slot = pinned_[lg_.index(p.node)];
        if (slot && *slot != p.chip) {
            fail(ErrorCategory::BadInput, "topology map: {} is pinned to both chip {} and chip {}",
                 p.node.str(), *slot, p.chip);
        }
        slot = p.chip;
    }

    ChipId chip(uint32_t v) const { return static_cast<ChipId>(chip_at_[v]); }

    // Preference of chip c for node v: coordinates that match the device's position, the chip id
    // that equals the device's index, the closest degree, the lowest id.
    std::tuple<int, int, uint32_t, ChipId> preference(uint32_t v, ChipId c) const {
        const MeshNode n = lg_.nodes[v];
        const MeshSpec& m = g_.mesh(n.mesh);
        int coord = 2;
        if (const auto ec = cluster_.eth_coord(c)) {
            const uint32_t row = m.row_of(n.device), col = m.col_of(n.device);
            if (ec->x == col && ec->y == row)
                coord = 0;
            else if (ec->x == row && ec->y == col)
                coord = 1;
        }
        const int identity = c == lg_.index(n) ? 0 : 1;
        const uint32_t deg = static_cast<uint32_t>(pg_.neighbours(c).size());
        const uint32_t want = static_cast<uint32_t>(lg_.adj[v].size());
        return {coord, identity, deg > want ? deg - want : want - deg, c};
    }

    std::vector<ChipId> candidates(uint32_t v) const {
        if (pinned_[v]) {
            return used_[*pinned_[v]] ? std::vector<ChipId>{} : std::vector<ChipId>{*pinned_[v]};
        }
        std::vector<ChipId> near, far;
        auto parent = order_.parent[v];
        if (parent && soft(lg_.edges[order_.parent_edge[v]])) parent.reset();
        if (parent && chip_at_[*parent] >= 0) {
            for (const auto& [c, links] : pg_.neighbours(chip(*parent))) {
                if (!used_[c]) near.push_back(c);
            }
        }
        const bool anywhere = !parent || chip_at_[*parent] < 0 ||
                              (tol_.unlinked && shorts_.size() < tol_.short_pairs);
        if (anywhere) {
            for (ChipId c = 0; c < pg_.chips(); ++c) {
                if (!used_[c] && std::find(near.begin(), near.end(), c) == near.end())
                    far.push_back(c);
            }
        }
        const auto by_pref = [&](ChipId a, ChipId b) {
            return preference(v, a) < preference(v, b);
        };
        std::sort(near.begin(), near.end(), by_pref);
        std::sort(far.begin(), far.end(), by_pref);
        near.insert(near.end(), far.begin(), far.end());
        return near;
    }

    // Whether c can play v next to the placed devices; the short pairs it would add.
    std::optional<std::vector<ShortEdge>> fits(uint32_t v, ChipId c) const {
        if (!tol_.unlinked && pg_.neighbours(c).size() < hard_neighbours(v)) return std::nullopt;
        std::vector<ShortEdge> added;
        for (const auto& [u, e] : lg_.adj[v]) {
            if (chip_at_[u] < 0 || soft(lg_.edges[e])) continue;
            const uint32_t have = pg_.link_count(c, chip(u));
            if (have >= lg_.edges[e].need()) continue;
            if (have == 0 && !tol_.unlinked) return std::nullopt;
            const bool v_is_a = lg_.edges[e].a == v;
            added.push_back({e, v_is_a ? c : chip(u), v_is_a ? chip(u) : c});
            if (shorts_.size() + added.size() > tol_.short_pairs) return std::nullopt;
        }
        return added;
    }

    bool soft(const LogicalEdge& e) const {
        return (tol_.soft_wraps && e.kind == EdgeKind::Wrap) ||
               (tol_.soft_between && (e.kind == EdgeKind::Cable || e.kind == EdgeKind::Connection));
    }
    // The logical neighbours v must find among the chip's physical ones.
    size_t hard_neighbours(uint32_t v) const {
        std::set<uint32_t> s;
        for (const auto& [u, e] : lg_.adj[v]) {
            if (!soft(lg_.edges[e])) s.insert(u);
        }
        return s.size();
    }

    // Every mesh-level connection between mesh m (just completed) and a completed mesh has its
    // links.
    bool connections_fit(MeshId m) {
        if (tol_.soft_between) return true;
        for (size_t i : lg_.mesh_level) {
            const MeshConnection& c = g_.mesh_connections()[i];
            const MeshId other = c.a == m ? c.b : c.b == m ? c.a : m;
            if (other == m || !complete(other)) continue;
            const uint32_t need = c.policy == ChannelPolicy::Strict ? c.channels : 1;
            if (ConnectionChooser(g_, lg_, pg_).choose(c, chip_at_).size() < need) return false;
        }
        return true;
    }
    bool complete(MeshId m) const {
        for (uint32_t v = lg_.first[m]; v < lg_.first[m + 1]; ++v) {
            if (chip_at_[v] < 0) return false;
        }
        return true;
    }

    bool place(size_t depth) {
        if (depth == order_.nodes.size()) return true;
        const uint32_t v = order_.nodes[depth];
        const MeshId m = lg_.nodes[v].mesh;
        for (ChipId c : candidates(v)) {
            if (++steps_ > o_.step_budget) {
                out_of_steps_ = true;
                return false;
            }
            const auto added = fits(v, c);
            if (!added) continue;
            chip_at_[v] = c;
            used_[c] = true;
            shorts_.insert(shorts_.end(), added->begin(), added->end());
            const bool ok =
                (depth + 1 != order_.mesh_done[m] || connections_fit(m)) && place(depth + 1);
            if (ok) return true;
            shorts_.resize(shorts_.size() - added->size());
            used_[c] = false;
            chip_at_[v] = -1;
            if (out_of_steps_) return false;
        }
        if (depth >= dead_end_.depth) {
            const auto parent = order_.parent[v];
            dead_end_ = {depth, v, parent,
                         parent && chip_at_[*parent] >= 0 ? std::optional<ChipId>(chip(*parent))
                                                          : std::nullopt};
        }
        return false;
    }

    std::string links_text(ChipId a, ChipId b) const;
    std::vector<ShortEdge> short_edges() const;
    void add_ports(TopologyMap& map) const;
    std::vector<InterMeshLink> connection_links(TopologyMap& map) const;

    const MeshGraph& g_;
    const ClusterDescriptor& cluster_;
    MapOptions o_;
    PhysicalGraph pg_;
    LogicalGraph lg_;
    PlacementOrder order_;
    std::vector<std::optional<ChipId>> pinned_;

    Tolerance tol_;
    uint64_t steps_ = 0;
    bool out_of_steps_ = false;
    std::vector<int64_t> chip_at_;  // chip of each node, -1: not placed
    std::vector<bool> used_;
    std::vector<ShortEdge> shorts_;
    DeadEnd dead_end_;
};

std::string TopologyMapper::links_text(ChipId a, ChipId b) const {
    const Links& links = pg_.links(a, b);
    if (links.empty()) return fmt::format("chip {} and chip {} are not connected", a, b);
    std::string list;
    for (const auto& [ca, cb] : links) {
        list += fmt::format("{}{} <-> {}", list.empty() ? "" : ", ", EthPortRef{a, ca}.str(),
                            EthPortRef{b, cb}.str());
    }
    return fmt::format("chip {} and chip {} have {}: {}", a, b, links.size(), list);
}

// The neighbour pairs of the current placement with fewer links than they need.
std::vector<ShortEdge> TopologyMapper::short_edges() const {
    std::vector<ShortEdge> out;
    for (size_t i = 0; i < lg_.edges.size(); ++i) {
        const LogicalEdge& e = lg_.edges[i];
        if (chip_at_[e.a] >= 0 && chip_at_[e.b] >= 0 &&
            pg_.link_count(chip(e.a), chip(e.b)) < e.need()) {
            out.push_back({i, chip(e.a), chip(e.b)});
        }
    }
    return out;
}

std::string TopologyMapper::failure() const {
    const std::string where =
        fmt::format("topology map: {} ({} devices) cannot be placed on {} ({} chips)", g_.source(),
                    lg_.nodes.size(), cluster_.source(), cluster_.chip_count());
    TopologyMapper explain(g_, cluster_, o_);
    for (const Tolerance& t : kExplanations) {
        if (!explain.search(t)) continue;
        const std::vector<ShortEdge> shorts = explain.short_edges();
        std::string what;
        for (size_t i = 0; i < shorts.size() && i < kShortPairsNamed; ++i) {
            const LogicalEdge& e = lg_.edges[shorts[i].edge];
            what += fmt::format("{}{} needs {} link{} ({}, channels {}), but {}",
                                what.empty() ? "" : "; ", edge_name(e, lg_.nodes), e.need(),
                                e.need() == 1 ? "" : "s", policy_name(e.policy), e.channels,
                                links_text(shorts[i].a, shorts[i].b));
        }
        if (shorts.size() > kShortPairsNamed) {
            what += fmt::format("; and {} more pair(s)", shorts.size() - kShortPairsNamed);
        }
        if (!shorts.empty()) return fmt::format("{}: {}", where, what);
    }
    const char* limit = out_of_steps_ ? " (search limit reached)" : "";
    const DeadEnd& d = dead_end_;
    const std::string node = lg_.nodes[d.node].str();
    if (d.parent_chip) {
        const std::string pin =
            pinned_[d.node] ? fmt::format(" (it is pinned to chip {})", *pinned_[d.node]) : "";
        return fmt::format(
            "{}: with {} device(s) placed, no free chip next to chip {} ({}) can be {}{}{}", where,
            d.depth, *d.parent_chip, lg_.nodes[*d.parent].str(), node, pin, limit);
    }
    size_t most = 0;
    for (ChipId c = 0; c < pg_.chips(); ++c) most = std::max(most, pg_.neighbours(c).size());
    return fmt::format(
        "{}: no chip can be {}: it needs {} linked neighbour(s); the most any chip has is {}{}",
        where, node, hard_neighbours(d.node), most, limit);
}

void TopologyMapper::add_ports(TopologyMap& map) const {
    const auto add = [&](const MeshPort& pa, const MeshPort& pb, ChipId ca, ChipId cb,
                         std::pair<uint32_t, uint32_t> chans, bool inter, const std::string& how) {
        map.ports_[pa] = PortLink{pa, pb, {ca, chans.first}, {cb, chans.second}, inter, how};
        map.ports_[pb] = PortLink{pb, pa, {cb, chans.second}, {ca, chans.first}, inter, how};
    };
    for (const LogicalEdge& e : lg_.edges) {
        const MeshNode na = lg_.nodes[e.a], nb = lg_.nodes[e.b];
        const ChipId ca = chip(e.a), cb = chip(e.b);
        const Links& links = pg_.links(ca, cb);
        if (e.kind == EdgeKind::Grid || e.kind == EdgeKind::Wrap) {
            const uint32_t n = std::min<uint32_t>(e.channels, static_cast<uint32_t>(links.size()));
            for (uint32_t k = 0; k < n; ++k) {
                add({na, e.dir_a, k}, {nb, opposite(e.dir_a), k}, ca, cb, links[k], false,
                    e.kind == EdgeKind::Grid ? "mesh neighbour" : "torus wrap");
            }
        } else if (e.kind == EdgeKind::Cable) {
            for (size_t k = 0; k < e.cables.size() && k < links.size(); ++k) {
                add(e.cables[k].first, e.cables[k].second, ca, cb, links[k], true,
                    fmt::format("inter-mesh connection, {} line {}", g_.source(), g_.graph_line()));
            }
        }
    }
}

// The MGD connections' links, chosen on the final placement (both directions unless directional);
// MeshGraph::resolved adds them to the descriptor's own.
std::vector<InterMeshLink> TopologyMapper::connection_links(TopologyMap& map) const {
    std::vector<InterMeshLink> out;
    ConnectionChooser chooser(g_, lg_, pg_);
    const auto& conns = g_.mesh_connections();
    for (const MeshConnection& c : conns) {
        const std::vector<ChosenLink> chosen = chooser.choose(c, chip_at_);
        const uint32_t need = c.policy == ChannelPolicy::Strict ? c.channels : 1;
        if (chosen.size() < need) {
            fail(ErrorCategory::BadInput,
                 "topology map: the connection of mesh {} and mesh {} ({} line {}) needs {} links "
                 "({}); "
                 "the devices with a free direction have {}",
                 c.a, c.b, g_.source(), c.line, need, policy_name(c.policy), chosen.size());
        }
        const std::string how =
            fmt::format("inter-mesh connection, {} line {}", g_.source(), c.line);
        for (const ChosenLink& l : chosen) {
            const MeshPort pa{lg_.nodes[l.a], l.dir_a, l.plane},
                pb{lg_.nodes[l.b], l.dir_b, l.plane};
            const ChipId ca = chip(l.a), cb = chip(l.b);
            map.ports_[pa] = PortLink{pa, pb, {ca, l.chans.first}, {cb, l.chans.second}, true, how};
            map.ports_[pb] = PortLink{pb, pa, {cb, l.chans.second}, {ca, l.chans.first}, true, how};
            out.push_back({pa, pb, c.line});
            if (!c.directional) out.push_back({pb, pa, c.line});
        }
    }
    return out;
}

TopologyMap TopologyMapper::result() const {
    TopologyMap map(g_, cluster_);
    map.chips_.resize(g_.mesh_count());
    for (uint32_t v = 0; v < lg_.nodes.size(); ++v) {
        map.chips_[lg_.nodes[v].mesh].push_back(chip(v));
        map.nodes_[chip(v)] = lg_.nodes[v];
    }
    add_ports(map);
    if (!g_.mesh_connections().empty()) map.graph_ = g_.resolved(connection_links(map));
    std::optional<uint32_t> planes;
    for (const LogicalEdge& e : lg_.edges) {
        if (e.kind != EdgeKind::Grid && e.kind != EdgeKind::Wrap) continue;
        const uint32_t n = std::min(e.channels, pg_.link_count(chip(e.a), chip(e.b)));
        planes = std::min(planes.value_or(n), n);
    }
    map.planes_ = planes.value_or(0);
    return map;
}

CablingReport TopologyMapper::report() const {
    CablingReport r;
    std::set<std::pair<uint32_t, uint32_t>> joined;
    std::set<std::pair<MeshId, MeshId>> joined_meshes;
    for (const MeshConnection& c : g_.mesh_connections()) {
        joined_meshes.insert({c.a, c.b});
        joined_meshes.insert({c.b, c.a});
    }
    for (uint32_t v = 0; v < lg_.nodes.size(); ++v) {
        if (chip_at_[v] >= 0) r.placement[lg_.nodes[v]] = chip(v);
    }
    for (const LogicalEdge& e : lg_.edges) {
        joined.insert({e.a, e.b});
        if (chip_at_[e.a] < 0 || chip_at_[e.b] < 0) continue;
        const Links& links = pg_.links(chip(e.a), chip(e.b));
        if (links.size() >= e.channels) continue;
        ShortPair sp{edge_name(e, lg_.nodes), chip(e.a), chip(e.b), e.channels, e.policy, {}};
        for (const auto& [ca, cb] : links) sp.links.push_back({{chip(e.a), ca}, {chip(e.b), cb}});
        r.short_pairs.push_back(std::move(sp));
    }
    std::map<ChipId, uint32_t> node_at;
    for (uint32_t v = 0; v < lg_.nodes.size(); ++v) {
        if (chip_at_[v] >= 0) node_at[chip(v)] = v;
    }
    for (const EthConnection& c : cluster_.connections()) {
        const auto a = node_at.find(c.a.chip), b = node_at.find(c.b.chip);
        if (a == node_at.end() || b == node_at.end()) continue;
        const auto [va, vb] = std::minmax(a->second, b->second);
        const MeshNode na = lg_.nodes[a->second], nb = lg_.nodes[b->second];
        if (joined.count({va, vb}) || joined_meshes.count({na.mesh, nb.mesh})) continue;
        r.stray_links.push_back({c.a, c.b, na, nb});
    }
    return r;
}

ChipId TopologyMap::chip_of(MeshNode n) const {
    graph_.check_node(n);
    return chips_[n.mesh][n.device];
}

std::optional<MeshNode> TopologyMap::node_of(ChipId c) const {
    const auto it = nodes_.find(c);
    return it == nodes_.end() ? std::nullopt : std::optional<MeshNode>(it->second);
}

const PortLink* TopologyMap::port(const MeshPort& p) const {
    const auto it = ports_.find(p);
    return it == ports_.end() ? nullptr : &it->second;
}

std::vector<ChipId> TopologyMap::unused_chips() const {
    std::vector<ChipId> out;
    for (ChipId c = 0; c < cluster_.chip_count(); ++c) {
        if (!nodes_.count(c)) out.push_back(c);
    }
    return out;
}

std::optional<ChipPin> parse_chip_pin(std::string_view text) {
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const auto node = parse_mesh_node(text.substr(0, eq));
    const std::string_view chip = text.substr(eq + 1);
    ChipId c = 0;
    const auto [end, ec] = std::from_chars(chip.data(), chip.data() + chip.size(), c);
    if (!node || chip.empty() || ec != std::errc{} || end != chip.data() + chip.size())
        return std::nullopt;
    return ChipPin{*node, c};
}

namespace {

void check_fits(const MeshGraph& g, const ClusterDescriptor& cluster) {
    if (g.chip_spec().arch != cluster.arch()) {
        fail(ErrorCategory::BadInput, "topology map: mesh graph {} is {} but cluster {} is {}",
             g.source(), arch_name(g.chip_spec().arch), cluster.source(),
             arch_name(cluster.arch()));
    }
    if (g.device_count() > cluster.chip_count()) {
        fail(ErrorCategory::BadInput,
             "topology map: {} has {} devices but cluster {} has only {} chip(s)", g.source(),
             g.device_count(), cluster.source(), cluster.chip_count());
    }
}

// The descriptor's pinnings (a device on a tray and ASIC location) as chips, added to the user's.
MapOptions with_asic_pins(const MeshGraph& g, const ClusterDescriptor& cluster, MapOptions o) {
    for (const AsicPin& pin : g.pins()) {
        std::optional<ChipId> found;
        bool unknown = false;
        for (ChipId c = 0; c < cluster.chip_count(); ++c) {
            const auto pos = cluster.asic_position(c);
            unknown = unknown || !pos;
            if (pos == AsicPosition{pin.tray_id, pin.asic_location}) found = c;
        }
        if (!found) {
            fail(ErrorCategory::BadInput,
                 "topology map: {} line {}: {} is pinned to tray {} ASIC {}, which no chip of {} "
                 "is{}",
                 g.source(), pin.line, pin.node.str(), pin.tray_id, pin.asic_location,
                 cluster.source(),
                 unknown ? " (the descriptor gives no PCI bus of some Galaxy chips, so their trays "
                           "are unknown)"
                         : "");
        }
        o.pins.push_back({pin.node, *found});
    }
    return o;
}

}  // namespace

TopologyMap map_topology(const MeshGraph& graph, const ClusterDescriptor& cluster,
                         const MapOptions& options) {
    check_fits(graph, cluster);
    TopologyMapper mapper(graph, cluster, with_asic_pins(graph, cluster, options));
    if (mapper.search({})) return mapper.result();
    fail(ErrorCategory::BadInput, "{}", mapper.failure());
}

CablingReport check_cabling(const MeshGraph& graph, const ClusterDescriptor& cluster,
                            const MapOptions& options, uint32_t max_short) {
    check_fits(graph, cluster);
    TopologyMapper mapper(graph, cluster, with_asic_pins(graph, cluster, options));
    if (mapper.search({})) {
        CablingReport r = mapper.report();
        r.hostable = true;
        return r;
    }
    CablingReport r;
    r.refusal = mapper.failure();
    for (const Tolerance& t : kExplanations) {
        if (!mapper.search(t)) continue;
        CablingReport closest = mapper.report();
        closest.refusal = r.refusal;
        return closest;
    }
    for (uint32_t n = 2; n <= max_short; ++n) {
        for (const bool unlinked : {false, true}) {
            if (!mapper.search({n, unlinked, false, false})) continue;
            CablingReport closest = mapper.report();
            closest.refusal = r.refusal;
            return closest;
        }
    }
    return r;
}

namespace {

// The size of the largest set of chips joined by links: no mesh can be larger.
uint32_t largest_component(const PhysicalGraph& pg) {
    std::vector<bool> seen(pg.chips(), false);
    uint32_t best = 0;
    for (ChipId root = 0; root < pg.chips(); ++root) {
        if (seen[root]) continue;
        std::vector<ChipId> todo{root};
        seen[root] = true;
        uint32_t size = 0;
        while (!todo.empty()) {
            const ChipId c = todo.back();
            todo.pop_back();
            ++size;
            for (const auto& [n, links] : pg.neighbours(c)) {
                if (!seen[n]) seen[n] = true, todo.push_back(n);
            }
        }
        best = std::max(best, size);
    }
    return best;
}

// Mesh shapes of at most `chips` devices: most devices first, then the squarest; rows <= cols.
std::vector<std::pair<uint32_t, uint32_t>> mesh_shapes(uint32_t chips) {
    std::vector<std::pair<uint32_t, uint32_t>> shapes;
    for (uint32_t n = chips; n >= 1; --n) {
        std::vector<std::pair<uint32_t, uint32_t>> same;
        for (uint32_t rows = 1; rows * rows <= n; ++rows) {
            if (n % rows == 0) same.emplace_back(rows, n / rows);
        }
        shapes.insert(shapes.end(), same.rbegin(), same.rend());
    }
    return shapes;
}

}  // namespace

MeshGraph derive_mesh_graph(const ClusterDescriptor& cluster, const MapOptions& options) {
    const std::string source = "(the largest mesh)";
    const hal::Arch arch = cluster.arch();
    MapOptions o = options;
    o.step_budget = std::min<uint64_t>(options.step_budget, kShapeStepBudget);
    // Relaxed with every channel the arch has: a placement needs one link per pair, and its
    // planes are then what its thinnest pair offers.
    for (const auto& [rows, cols] : mesh_shapes(largest_component(PhysicalGraph(cluster)))) {
        const MeshGraph any = MeshGraph::single_mesh(arch, rows, cols, arch_eth_channels(arch),
                                                     ChannelPolicy::Relaxed, source);
        TopologyMapper mapper(any, cluster, o);
        if (!mapper.search({})) continue;
        const uint32_t planes = rows * cols > 1 ? mapper.result().planes() : 0;
        return MeshGraph::single_mesh(arch, rows, cols, planes, ChannelPolicy::Relaxed, source);
    }
    fail(ErrorCategory::BadInput, "topology map: cluster {} has no chips", cluster.source());
}

}  // namespace fabric
