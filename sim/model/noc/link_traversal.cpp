#include "noc/link_traversal.h"

#include "noc/niu_injection.h"

namespace sim::noc {

LinkTraversal::LinkTraversal(const Grid& grid, const NocParams& params, PacketPool& packets,
                             InputUnit& inputs, OutputUnit& outputs, PathReservation& reservations)
    : grid_(grid),
      params_(params),
      packets_(packets),
      inputs_(inputs),
      outputs_(outputs),
      reservations_(reservations) {}

void LinkTraversal::traverse(uint32_t noc, uint32_t router, uint32_t input, uint64_t now) {
    const RouterInputs& rt = inputs_.router(noc, router);
    const InputVc route = rt.vcs[input];  // a copy: popping the flit may route the next header
    const Flit f = inputs_.head(noc, router, input);
    Packet& p = packets_[f.pkt];
    const bool head = f.idx == 0;
    const bool tail = p.is_tail(f.idx);
    const uint32_t fanout = ports_in(route.mask);
    if (head && fanout > 1) {
        p.live += fanout - 1;
    }
    for (uint32_t port = 0; port < kNumPorts; ++port) {
        if ((route.mask & (1u << port)) == 0) {
            continue;
        }
        LinkStats& stats = outputs_.stats(noc, router, port);
        ++stats.flits;
        if (head) {
            ++stats.packets;
        }
        if (port == kPortLocal) {
            arrivals_.push_back({now + params_.link_cycles, noc, rt.node, f.pkt, f.idx});
            continue;
        }
        const uint8_t slot = route.out_slot[port];
        outputs_.send(noc, router, port, slot, input, tail);
        if (tail && p.reserved) {
            reservations_.release(noc, router, port);
        }
        const uint64_t ready = now + params_.link_cycles + params_.router_cycles;
        inputs_.write(noc, grid_.router(grid_.downstream(rt.at, port)), port, slot,
                      Flit{f.pkt, f.idx, ready, route.out_branch[port]});
    }
    if (fanout == 0 && tail) {
        packets_.release_copy(f.pkt);
    }
    const uint32_t in_port = input / kSlots;
    const uint32_t in_slot = input % kSlots;
    const uint32_t sender =
        in_port == kPortLocal ? rt.node : grid_.router(grid_.upstream(rt.at, in_port));
    inputs_.pop(noc, router, input);
    credits_.push_back({now + params_.credit_cycles, noc, sender, static_cast<uint8_t>(in_port),
                        static_cast<uint8_t>(in_slot)});
}

void LinkTraversal::return_credits(uint64_t now, NiuInjection& nius) {
    while (!credits_.empty() && credits_.front().due <= now) {
        const CreditReturn c = credits_.front();
        credits_.pop_front();
        if (c.port == kPortLocal) {
            nius.return_credit(c.target, c.noc, c.slot);
        } else {
            outputs_.return_credit(c.noc, c.target, c.port, c.slot);
        }
    }
}

}  // namespace sim::noc
