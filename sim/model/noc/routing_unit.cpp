#include "noc/routing_unit.h"

namespace sim::noc {

namespace {

struct RouteBuilder {
    Route route;
    void add(uint32_t port, uint8_t branch) {
        route.mask |= static_cast<uint8_t>(1u << port);
        if (port != kPortLocal) {
            route.branch[port] = branch;
        }
    }
    // Dimension order towards `dst`: X first, then Y, then eject.
    void unicast(Coord at, Coord dst) {
        if (at.x != dst.x) {
            add(kPortX, kBranchToStart);
        } else if (at.y != dst.y) {
            add(kPortY, kBranchToStart);
        } else {
            add(kPortLocal, kBranchToStart);
        }
    }
};

}  // namespace

Route RoutingUnit::route(const Packet& p, Coord at, uint32_t node, uint8_t branch) const {
    RouteBuilder b;
    if (!p.mcast) {
        b.unicast(at, p.dst);
        return b.route;
    }
    if (branch == kBranchToStart) {
        if (at.x != p.dst.x || at.y != p.dst.y) {
            b.unicast(at, p.dst);  // to the start corner first, delivering nothing on the way
            return b.route;
        }
        branch = kBranchTrunk;
    }
    if (!(node == p.src_node && !p.src_include)) {
        b.add(kPortLocal, branch);
    }
    const bool x_more = at.x != p.dst_end.x;
    const bool y_more = at.y != p.dst_end.y;
    if (!p.y_major) {  // trunk along x, a branch down every column
        if (y_more) {
            b.add(kPortY, kBranchLeaf);
        }
        if (branch == kBranchTrunk && x_more) {
            b.add(kPortX, kBranchTrunk);
        }
    } else {  // trunk along y, a branch along every row
        if (x_more) {
            b.add(kPortX, kBranchLeaf);
        }
        if (branch == kBranchTrunk && y_more) {
            b.add(kPortY, kBranchTrunk);
        }
    }
    return b.route;
}

uint8_t RoutingUnit::out_slot(Coord at, uint32_t in_port, uint32_t in_slot, uint32_t out_port,
                              uint32_t out_vc) const {
    const uint32_t in_vc = in_slot / 2;
    const uint32_t dateline = in_slot % 2;
    const uint32_t keep = (in_port == out_port && in_vc == out_vc) ? dateline : 0u;
    const uint32_t crossed = grid_.is_wrap_link(at, out_port) ? 1u : 0u;
    return static_cast<uint8_t>(out_vc * 2 + (keep | crossed));
}

void RoutingUnit::links_of(uint32_t noc, const Packet& p, std::vector<uint32_t>& out) const {
    struct At {
        Coord at;
        uint8_t branch;
    };
    out.clear();
    const Coord source = grid_.to_noc(noc, grid_.coord(p.src_node));
    std::vector<At> todo{{source, kBranchToStart}};
    const std::size_t limit = 4u * grid_.nodes() + 4u * (grid_.x_size() + grid_.y_size());
    while (!todo.empty() && out.size() < limit) {
        const At c = todo.back();
        todo.pop_back();
        const Route r = route(p, c.at, grid_.node_of_noc(noc, c.at), c.branch);
        for (uint32_t port = kPortX; port <= kPortY; ++port) {
            if ((r.mask & (1u << port)) != 0) {
                out.push_back(grid_.router(c.at) * 2 + port);
                todo.push_back({grid_.downstream(c.at, port), r.branch[port]});
            }
        }
    }
}

}  // namespace sim::noc
