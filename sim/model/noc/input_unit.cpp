#include "noc/input_unit.h"

#include <algorithm>

namespace sim::noc {

InputUnit::InputUnit(const Grid& grid, uint32_t buffer_flits, const PacketPool& packets,
                     const RoutingUnit& routing)
    : packets_(packets), routing_(routing), buffer_flits_(buffer_flits) {
    for (uint32_t noc = 0; noc < hal::noc::kNumNocs; ++noc) {
        routers_[noc].resize(grid.nodes());
        fifo_[noc].resize(static_cast<std::size_t>(grid.nodes()) * kInputs * buffer_flits);
        for (uint32_t r = 0; r < grid.nodes(); ++r) {
            RouterInputs& rt = routers_[noc][r];
            rt.at = grid.router_coord(r);
            rt.node = grid.node_of_noc(noc, rt.at);
        }
    }
}

void InputUnit::write(uint32_t noc, uint32_t router, uint32_t port, uint32_t slot, const Flit& f) {
    RouterInputs& rt = routers_[noc][router];
    const uint32_t input = port * kSlots + slot;
    InputVc& v = rt.vcs[input];
    fifo_base(noc, router, input)[(v.head + v.count) % buffer_flits_] = f;
    if (v.count == 0) {
        v.head_ready = f.ready;
        v.head_is_header = f.idx == 0;
        if (v.head_is_header) {
            compute_route(rt, input, f);
        }
    }
    ++v.count;
    rt.occupied[port] |= 1u << slot;
    ++rt.flits;
    if (!rt.active) {
        rt.active = true;
        active_[noc].push_back(router);
    }
}

void InputUnit::pop(uint32_t noc, uint32_t router, uint32_t input) {
    RouterInputs& rt = routers_[noc][router];
    InputVc& v = rt.vcs[input];
    const Flit* base = fifo_base(noc, router, input);
    v.head = static_cast<uint16_t>((v.head + 1) % buffer_flits_);
    --v.count;
    --rt.flits;
    if (v.count == 0) {
        rt.occupied[input / kSlots] &= ~(1u << (input % kSlots));
        return;
    }
    const Flit& next = base[v.head];
    v.head_ready = next.ready;
    v.head_is_header = next.idx == 0;
    if (v.head_is_header) {
        compute_route(rt, input, next);
    }
}

void InputUnit::compute_route(RouterInputs& rt, uint32_t input, const Flit& header) {
    InputVc& v = rt.vcs[input];
    const Packet& p = packets_[header.pkt];
    const Route route = routing_.route(p, rt.at, rt.node, header.branch);
    v.mask = route.mask;
    for (uint32_t port = kPortX; port <= kPortY; ++port) {
        if ((route.mask & (1u << port)) != 0) {
            const uint32_t vc = RoutingUnit::vc_for(p, route.branch[port]);
            v.out_slot[port] = routing_.out_slot(rt.at, input / kSlots, input % kSlots, port, vc);
            v.out_branch[port] = route.branch[port];
        }
    }
}

void InputUnit::retire_empty(uint32_t noc) {
    std::erase_if(active_[noc], [this, noc](uint32_t r) {
        RouterInputs& rt = routers_[noc][r];
        if (rt.flits == 0) {
            rt.active = false;
            return true;
        }
        return false;
    });
}

bool InputUnit::empty() const {
    return std::all_of(active_.begin(), active_.end(),
                       [](const std::vector<uint32_t>& a) { return a.empty(); });
}

}  // namespace sim::noc
