// The geometry of one chip's NOCs: the grid of nodes, each NOC's coordinate space and the rings
// its routers form.
//
// Nodes are numbered physically (NOC0 coordinates): node = y * x_size + x. Routers are numbered in
// their own NOC's coordinates: router = y * x_size + x there. NOC1's space is NOC0's mirrored in
// both axes, so on either NOC a router's X output leads to router (x + 1, y) and its Y output to
// (x, y + 1), wrapping around each ring.
#pragma once

#include <cstdint>

#include "noc/constants.h"
#include "noc/network.h"

namespace sim::noc {

class Grid {
  public:
    Grid(uint32_t x_size, uint32_t y_size) : x_size_(x_size), y_size_(y_size) {}

    uint32_t x_size() const { return x_size_; }
    uint32_t y_size() const { return y_size_; }
    uint32_t nodes() const { return x_size_ * y_size_; }
    bool contains(Coord c) const { return c.x < x_size_ && c.y < y_size_; }

    // NOC coordinates <-> physical; the mirroring is an involution, so one function does both.
    Coord to_physical(uint32_t noc, Coord c) const {
        return noc == 0 ? c : Coord{x_size_ - 1 - c.x, y_size_ - 1 - c.y};
    }
    Coord to_noc(uint32_t noc, Coord physical) const { return to_physical(noc, physical); }

    // Physical node index <-> physical coordinate.
    uint32_t node(Coord physical) const { return physical.y * x_size_ + physical.x; }
    Coord coord(uint32_t node) const { return {node % x_size_, node / x_size_}; }
    // The physical node at NOC coordinate c, and the router of a physical node on `noc`.
    uint32_t node_of_noc(uint32_t noc, Coord c) const { return node(to_physical(noc, c)); }
    uint32_t router_of_node(uint32_t noc, uint32_t node) const {
        return router(to_noc(noc, coord(node)));
    }

    // Router index <-> NOC coordinate.
    uint32_t router(Coord noc_coord) const { return noc_coord.y * x_size_ + noc_coord.x; }
    Coord router_coord(uint32_t router) const { return coord(router); }

    // The router an output port of router `at` leads to (X or Y), and its mirror: the router
    // upstream of an input port.
    Coord downstream(Coord at, uint32_t port) const {
        return port == kPortX ? Coord{(at.x + 1) % x_size_, at.y}
                              : Coord{at.x, (at.y + 1) % y_size_};
    }
    Coord upstream(Coord at, uint32_t port) const {
        return port == kPortX ? Coord{(at.x + x_size_ - 1) % x_size_, at.y}
                              : Coord{at.x, (at.y + y_size_ - 1) % y_size_};
    }
    // True when the output port of router `at` is its ring's wrap link (the dateline).
    bool is_wrap_link(Coord at, uint32_t port) const {
        return port == kPortX ? at.x == x_size_ - 1 : at.y == y_size_ - 1;
    }
    // Links a unicast packet crosses from src to dst (NOC coordinates): always forward on each
    // ring.
    uint32_t hops(Coord src, Coord dst) const {
        return (dst.x + x_size_ - src.x) % x_size_ + (dst.y + y_size_ - src.y) % y_size_;
    }

  private:
    uint32_t x_size_;
    uint32_t y_size_;
};

}  // namespace sim::noc
