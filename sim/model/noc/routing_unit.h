// Route computation: the one routing function of the NOC model, used by the input unit when a
// header reaches the head of its buffer and by path reservation to walk a multicast tree.
//
// Unicast: dimension order, X until the column matches, then Y, then eject; always forward
// around each ring. Multicast: unicast to the rectangle's start corner without delivering, then a
// trunk along the major axis (X unless BRCST_Y_MAJOR) from start to end, and at every trunk node a
// branch along the minor axis to the end; every node of the rectangle delivers one copy (the
// source only with BRCST_SRC_INCLUDE).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "noc/grid.h"
#include "noc/packet.h"

namespace sim::noc {

// Where a packet goes from one router: its output ports (bit per Port) and, for X and Y, the
// multicast progress of the copy sent there. An empty mask drops the copy.
struct Route {
    uint8_t mask = 0;
    std::array<uint8_t, 2> branch{};
};

class RoutingUnit {
  public:
    explicit RoutingUnit(const Grid& grid) : grid_(grid) {}

    // The route of `p` from router `at` (NOC coordinates; `node` its physical node) for a copy
    // with multicast progress `branch`.
    Route route(const Packet& p, Coord at, uint32_t node, uint8_t branch) const;

    // The VC number a copy of `p` travels on after leaving with progress `branch`: the packet's
    // own, except a multicast's leg to its start corner (kToStartVc).
    static uint32_t vc_for(const Packet& p, uint8_t branch) {
        return p.mcast && branch == kBranchToStart ? kToStartVc : p.vc;
    }

    // The downstream buffer (VC number * 2 + dateline bit) for a flit in input slot `in_slot` of
    // port `in_port` leaving router `at` through `out_port` on VC number `out_vc`. Dateline: the
    // bit is set once the flit crosses the ring's wrap link and kept only while it stays in the
    // same ring on the same VC; entering a ring (injection, an X-to-Y turn, a multicast switching
    // from its leg to its tree) starts with 0.
    uint8_t out_slot(Coord at, uint32_t in_port, uint32_t in_slot, uint32_t out_port,
                     uint32_t out_vc) const;

    // The router-to-router links of the whole route of `p` on `noc` from its source (multicast:
    // leg and tree), as router * 2 + port. Bounded: stops far above any real tree's size.
    void links_of(uint32_t noc, const Packet& p, std::vector<uint32_t>& out) const;

  private:
    const Grid& grid_;
};

}  // namespace sim::noc
