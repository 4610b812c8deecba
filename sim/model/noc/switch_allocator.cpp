#include "noc/switch_allocator.h"

#include <bit>

namespace sim::noc {

namespace {

// Inputs requesting the switch this cycle and the output ports each needs.
struct Requests {
    std::array<uint8_t, kInputs> input{};
    std::array<uint8_t, kInputs> mask{};
    uint32_t count = 0;
};

bool outputs_free(const InputVc& v, uint32_t input, const RouterOutputs& out) {
    for (uint32_t port = kPortX; port <= kPortY; ++port) {
        if ((v.mask & (1u << port)) != 0 &&
            !out.can_send(port, v.out_slot[port], input, v.head_is_header)) {
            return false;
        }
    }
    return true;
}

}  // namespace

SwitchAllocator::SwitchAllocator(uint32_t routers_per_noc) {
    for (auto& p : pointers_) {
        p.resize(routers_per_noc);
    }
    for (auto& h : held_) {
        h.resize(routers_per_noc);
    }
}

Grants SwitchAllocator::allocate(uint32_t noc, uint32_t router, const InputUnit& inputs,
                                 const OutputUnit& outputs, uint64_t now) {
    const RouterInputs& rt = inputs.router(noc, router);
    const RouterOutputs& out = outputs.router(noc, router);
    Grants grants;
    Requests req;
    uint32_t in_used = 0;  // input ports already granted (bit per port)
    const uint32_t held = local_held(noc, router) ? 1u << kPortLocal : 0u;
    for (uint32_t port = 0; port < kNumPorts; ++port) {
        uint32_t slots = rt.occupied[port];
        while (slots != 0) {
            const uint32_t slot = static_cast<uint32_t>(std::countr_zero(slots));
            slots &= slots - 1;
            const uint32_t input = port * kSlots + slot;
            const InputVc& v = rt.vcs[input];
            if (v.head_ready > now) {
                continue;
            }
            if (v.mask == 0) {  // nowhere to go: drained, using only its input port
                if ((in_used & (1u << port)) == 0) {
                    in_used |= 1u << port;
                    grants.add(input);
                }
                continue;
            }
            if ((v.mask & held) == 0 && outputs_free(v, input, out)) {
                req.input[req.count] = static_cast<uint8_t>(input);
                req.mask[req.count] = v.mask;
                ++req.count;
            }
        }
    }
    std::array<uint32_t, kNumPorts>& pointer = pointers_[noc][router];
    uint32_t out_used = 0;  // output ports already granted
    for (uint32_t out = 0; out < kNumPorts && req.count != 0; ++out) {
        if ((out_used & (1u << out)) != 0) {
            continue;
        }
        uint32_t best = kNone;
        uint32_t best_mask = 0;
        uint32_t best_distance = kInputs;
        for (uint32_t i = 0; i < req.count; ++i) {
            const uint32_t input = req.input[i];
            if ((req.mask[i] & (1u << out)) == 0 || (req.mask[i] & out_used) != 0 ||
                (in_used & (1u << (input / kSlots))) != 0) {
                continue;
            }
            const uint32_t distance = (input + kInputs - pointer[out]) % kInputs;
            if (distance < best_distance) {
                best = input;
                best_mask = req.mask[i];
                best_distance = distance;
            }
        }
        if (best == kNone) {
            continue;
        }
        in_used |= 1u << (best / kSlots);
        out_used |= best_mask;
        for (uint32_t port = 0; port < kNumPorts; ++port) {
            if ((best_mask & (1u << port)) != 0) {
                pointer[port] = (best + 1) % kInputs;
            }
        }
        grants.add(best);
    }
    return grants;
}

}  // namespace sim::noc
