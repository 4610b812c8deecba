// Stage 1 of the router pipeline: input buffering and route computation.
//
// Every router has an input buffer per VC slot (VC number * 2 + dateline bit) on each of its
// three input ports (from the upstream X router, the upstream Y router, the local NIU), each
// `buffer_flits` deep. A flit written into a buffer at cycle t carries its ready cycle (the
// earliest it may leave, set by the writer); the buffer keeps its head's ready cycle and the route
// of the packet at its head, computed by the RoutingUnit as soon as a header becomes the head.
// The switch allocator reads that state; switch traversal pops the head.
//
// The unit also keeps, per NOC, the list of routers holding flits (in the order they became
// busy): only those take part in a cycle.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "noc/constants.h"
#include "noc/grid.h"
#include "noc/packet.h"
#include "noc/routing_unit.h"

namespace sim::noc {

// One input buffer (VC) and the route of the packet at its head.
struct InputVc {
    uint64_t head_ready = 0;  // ready cycle of the head flit (kept here: no FIFO access to test it)
    uint16_t head = 0;
    uint16_t count = 0;
    bool head_is_header = false;          // the head flit is its packet's header
    uint8_t mask = 0;                     // output ports of the head's packet; 0 = drop the copy
    std::array<uint8_t, 2> out_slot{};    // downstream buffer for the X and Y outputs
    std::array<uint8_t, 2> out_branch{};  // multicast progress of the copy sent there
};

// The input side of one router.
struct RouterInputs {
    Coord at;           // NOC coordinates
    uint32_t node = 0;  // physical node index
    std::array<InputVc, kInputs> vcs{};
    std::array<uint32_t, kNumPorts> occupied{};  // per input port: bit per non-empty slot
    uint32_t flits = 0;
    bool active = false;
};

class InputUnit {
  public:
    InputUnit(const Grid& grid, uint32_t buffer_flits, const PacketPool& packets,
              const RoutingUnit& routing);

    // Buffer write: `f` enters buffer `slot` of input `port` of `router` on `noc`. The caller
    // (the upstream traversal or the NIU's injection) has checked that a credit allowed it.
    void write(uint32_t noc, uint32_t router, uint32_t port, uint32_t slot, const Flit& f);
    // The head flit of an input (port * kSlots + slot); the input must not be empty.
    const Flit& head(uint32_t noc, uint32_t router, uint32_t input) const {
        return fifo_base(noc, router, input)[routers_[noc][router].vcs[input].head];
    }
    // Removes the head flit of an input (after traversal has sent it on). When the next flit is a
    // header, its route is computed at once and replaces the head's route.
    void pop(uint32_t noc, uint32_t router, uint32_t input);

    const RouterInputs& router(uint32_t noc, uint32_t router) const {
        return routers_[noc][router];
    }
    uint32_t routers_per_noc() const { return static_cast<uint32_t>(routers_[0].size()); }

    // Routers of `noc` holding flits. Writes during a cycle append (a router that becomes busy is
    // visited from the next cycle on when the caller iterates over the size taken before).
    const std::vector<uint32_t>& active(uint32_t noc) const { return active_[noc]; }
    // Drops routers that hold no flit any more from the active list.
    void retire_empty(uint32_t noc);
    bool empty() const;

  private:
    Flit* fifo_base(uint32_t noc, uint32_t router, uint32_t input) {
        return &fifo_[noc][(static_cast<std::size_t>(router) * kInputs + input) * buffer_flits_];
    }
    const Flit* fifo_base(uint32_t noc, uint32_t router, uint32_t input) const {
        return &fifo_[noc][(static_cast<std::size_t>(router) * kInputs + input) * buffer_flits_];
    }
    // Route computation for the header now at the head of `input`.
    void compute_route(RouterInputs& rt, uint32_t input, const Flit& header);

    const PacketPool& packets_;
    const RoutingUnit& routing_;
    uint32_t buffer_flits_;
    std::array<std::vector<RouterInputs>, hal::noc::kNumNocs> routers_;
    std::array<std::vector<Flit>, hal::noc::kNumNocs> fifo_;
    std::array<std::vector<uint32_t>, hal::noc::kNumNocs> active_;
};

}  // namespace sim::noc
