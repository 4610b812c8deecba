// Stage 3 of the router pipeline: switch and link traversal, and the wires back.
//
// A granted flit leaves its input buffer through every output of its route at once: to the next
// router's input buffer (it arrives link_cycles later and may leave that router router_cycles
// after arriving) or, through the local output, to its node's NIU (it arrives link_cycles later).
// The buffer slot it left is returned to whoever feeds that input, credit_cycles later: the
// upstream router's output VC, or the NIU's injection port.
//
// Both wires (flits to NIUs, credits) have a fixed delay, so each is a queue whose due cycles never
// decrease.
#pragma once

#include <cstdint>
#include <deque>

#include "noc/grid.h"
#include "noc/input_unit.h"
#include "noc/output_unit.h"
#include "noc/packet.h"
#include "noc/path_reservation.h"

namespace sim::noc {

class NiuInjection;

// A flit reaching the NIU of physical node `node`.
struct Arrival {
    uint64_t due = 0;
    uint32_t noc = 0;
    uint32_t node = 0;
    uint32_t pkt = 0;
    uint32_t idx = 0;
};

// A freed buffer slot on its way back to the sender.
struct CreditReturn {
    uint64_t due = 0;
    uint32_t noc = 0;
    uint32_t target = 0;  // router index (port X / Y) or physical node (kPortLocal: its injector)
    uint8_t port = 0;     // the input port the slot belongs to
    uint8_t slot = 0;
};

class LinkTraversal {
  public:
    LinkTraversal(const Grid& grid, const NocParams& params, PacketPool& packets, InputUnit& inputs,
                  OutputUnit& outputs, PathReservation& reservations);

    // Sends the head flit of `input` of `router` through its outputs at cycle `now`.
    void traverse(uint32_t noc, uint32_t router, uint32_t input, uint64_t now);

    // Applies every credit due by `now`: to router output VCs, or to `nius`' injection ports.
    void return_credits(uint64_t now, NiuInjection& nius);
    // Takes the next flit reaching an NIU by `now`, in the order they left their routers.
    bool next_arrival(uint64_t now, Arrival& out) {
        if (arrivals_.empty() || arrivals_.front().due > now) {
            return false;
        }
        out = arrivals_.front();
        arrivals_.pop_front();
        return true;
    }

    bool idle() const { return arrivals_.empty() && credits_.empty(); }
    std::size_t arrivals_in_flight() const { return arrivals_.size(); }

  private:
    const Grid& grid_;
    const NocParams& params_;
    PacketPool& packets_;
    InputUnit& inputs_;
    OutputUnit& outputs_;
    PathReservation& reservations_;
    std::deque<Arrival> arrivals_;
    std::deque<CreditReturn> credits_;
};

}  // namespace sim::noc
