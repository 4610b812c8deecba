// The routing function on its own (noc/routing_unit.h): dimension-order unicast routes, multicast
// legs, trunks and branches, the dateline slot, and the multicast path reservation built on the
// same function (noc/path_reservation.h).
#include "noc/routing_unit.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "noc/path_reservation.h"

using namespace sim::noc;

namespace {

constexpr uint8_t bit(uint32_t port) {
    return static_cast<uint8_t>(1u << port);
}

Packet unicast_to(Coord dst) {
    Packet p;
    p.dst = dst;
    p.vc = 1;
    return p;
}

// A multicast write from physical node `src_node` to the rectangle [start, end] (NOC0).
Packet multicast(uint32_t src_node, Coord start, Coord end, bool y_major = false) {
    Packet p;
    p.mcast = true;
    p.vc = 4;
    p.src_node = src_node;
    p.dst = start;
    p.dst_end = end;
    p.y_major = y_major;
    return p;
}

std::vector<uint32_t> sorted(std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end());
    return v;
}

}  // namespace

TEST_CASE("routing unit: unicast goes X until the column matches, then Y, then ejects",
          "[sim_noc][stages][routing]") {
    const Grid grid(6, 4);
    const RoutingUnit routing(grid);
    const Packet p = unicast_to({4, 1});
    CHECK(routing.route(p, {1, 3}, 0, kBranchToStart).mask == bit(kPortX));
    CHECK(routing.route(p, {5, 3}, 0, kBranchToStart).mask == bit(kPortX));  // on through the wrap
    CHECK(routing.route(p, {4, 3}, 0, kBranchToStart).mask == bit(kPortY));
    CHECK(routing.route(p, {4, 1}, 0, kBranchToStart).mask == bit(kPortLocal));
    CHECK(RoutingUnit::vc_for(p, kBranchToStart) == 1);
}

TEST_CASE("routing unit: a multicast goes to its start corner, then trunk and branches",
          "[sim_noc][stages][routing]") {
    const Grid grid(4, 4);
    const RoutingUnit routing(grid);
    const Packet p = multicast(grid.node({0, 0}), {1, 1}, {2, 2});
    // The leg to the start corner delivers nothing and travels on the model's leg VC.
    const Route leg = routing.route(p, {0, 0}, grid.node({0, 0}), kBranchToStart);
    CHECK(leg.mask == bit(kPortX));
    CHECK(leg.branch[kPortX] == kBranchToStart);
    CHECK(RoutingUnit::vc_for(p, kBranchToStart) == kToStartVc);
    // The start corner delivers, continues the trunk along X and starts a branch along Y.
    const Route start = routing.route(p, {1, 1}, grid.node({1, 1}), kBranchToStart);
    CHECK(start.mask == (bit(kPortX) | bit(kPortY) | bit(kPortLocal)));
    CHECK(start.branch[kPortX] == kBranchTrunk);
    CHECK(start.branch[kPortY] == kBranchLeaf);
    CHECK(RoutingUnit::vc_for(p, kBranchTrunk) == 4);
    // The trunk's end only branches; a branch's end only delivers.
    CHECK(routing.route(p, {2, 1}, grid.node({2, 1}), kBranchTrunk).mask ==
          (bit(kPortY) | bit(kPortLocal)));
    CHECK(routing.route(p, {1, 2}, grid.node({1, 2}), kBranchLeaf).mask == bit(kPortLocal));

    SECTION("Y-major: the trunk runs along Y, branches along X") {
        const Packet q = multicast(grid.node({0, 0}), {1, 1}, {2, 2}, true);
        const Route r = routing.route(q, {1, 1}, grid.node({1, 1}), kBranchToStart);
        CHECK(r.branch[kPortY] == kBranchTrunk);
        CHECK(r.branch[kPortX] == kBranchLeaf);
    }
    SECTION("the source delivers to itself only with BRCST_SRC_INCLUDE") {
        Packet q = multicast(grid.node({1, 1}), {1, 1}, {1, 1});
        CHECK(routing.route(q, {1, 1}, grid.node({1, 1}), kBranchToStart).mask == 0);
        q.src_include = true;
        CHECK(routing.route(q, {1, 1}, grid.node({1, 1}), kBranchToStart).mask == bit(kPortLocal));
    }
}

TEST_CASE("routing unit: the dateline bit is set on the wrap link, kept only on the same ring",
          "[sim_noc][stages][routing]") {
    const Grid grid(4, 4);
    const RoutingUnit routing(grid);
    const uint32_t vc1 = 2;          // slot of VC 1 before the dateline
    const uint32_t vc1_crossed = 3;  // and after it
    // Injected at the last column, leaving through X: the wrap link sets the bit.
    CHECK(routing.out_slot({3, 0}, kPortLocal, vc1, kPortX, 1) == vc1_crossed);
    // Straight on along X on the same VC: kept.
    CHECK(routing.out_slot({0, 0}, kPortX, vc1_crossed, kPortX, 1) == vc1_crossed);
    // Turning to Y (a new ring) or changing VC: cleared.
    CHECK(routing.out_slot({0, 0}, kPortX, vc1_crossed, kPortY, 1) == vc1);
    CHECK(routing.out_slot({0, 0}, kPortX, vc1_crossed, kPortX, 7) == 14u);
    // Turning to Y at the last row: set again by Y's wrap link.
    CHECK(routing.out_slot({1, 3}, kPortX, vc1_crossed, kPortY, 1) == vc1_crossed);
}

TEST_CASE("routing unit: a multicast's links are its leg and its tree",
          "[sim_noc][stages][routing]") {
    const Grid grid(4, 4);
    const RoutingUnit routing(grid);
    const Packet p = multicast(grid.node({0, 0}), {1, 1}, {2, 2});
    std::vector<uint32_t> links;
    routing.links_of(0, p, links);
    const auto link = [&](Coord at, uint32_t port) { return grid.router(at) * 2 + port; };
    // Leg (0,0) -X-> (1,0) -Y-> (1,1); trunk (1,1) -X-> (2,1); branches down columns 1 and 2.
    CHECK(sorted(links) == sorted({link({0, 0}, kPortX), link({1, 0}, kPortY), link({1, 1}, kPortX),
                                   link({1, 1}, kPortY), link({2, 1}, kPortY)}));
}

TEST_CASE("path reservation: all links or none, each freed as the tail crosses it",
          "[sim_noc][stages][routing]") {
    const Grid grid(4, 4);
    const RoutingUnit routing(grid);
    PathReservation reservations(grid, routing);
    Packet first = multicast(grid.node({0, 0}), {1, 1}, {2, 2});
    // Leg (0,3) -X-> (1,3) -X-> (2,3) -Y-> (2,0) -Y-> (2,1), trunk (2,1) -X-> (3,1): no link of
    // the first tree, so both reserve.
    Packet second = multicast(grid.node({0, 3}), {2, 1}, {3, 1});
    CHECK(reservations.try_reserve(first, 10));
    CHECK(first.reserved);
    CHECK(reservations.try_reserve(second, 11));
    CHECK(reservations.holder(0, grid.router({2, 1}), kPortX) == 11u);
    CHECK(reservations.holder(0, grid.router({2, 1}), kPortY) == 10u);

    // (3,0) -X-> (0,0) -X-> (1,0): the second link is the first tree's, so the third is refused
    // as a whole and its free link stays free.
    Packet third = multicast(grid.node({3, 0}), {0, 0}, {1, 0});
    CHECK_FALSE(reservations.try_reserve(third, 12));
    CHECK_FALSE(third.reserved);
    CHECK(reservations.holder(0, grid.router({3, 0}), kPortX) == kNone);

    // The first tree's tail crosses (0,0) -X->: the third now gets both its links.
    reservations.release(0, grid.router({0, 0}), kPortX);
    CHECK(reservations.holder(0, grid.router({0, 0}), kPortX) == kNone);
    CHECK(reservations.try_reserve(third, 12));
    CHECK(reservations.holder(0, grid.router({3, 0}), kPortX) == 12u);
    CHECK(reservations.holder(0, grid.router({0, 0}), kPortX) == 12u);
    CHECK(reservations.holder(1, grid.router({0, 0}), kPortX) == kNone);  // NOC1 untouched
}
