// The output side of every router: per X / Y output and downstream buffer (slot), the credits
// for that buffer and the packet holding it (wormhole: a header claims a free output VC, its tail
// releases it); per output port, the link statistics. The switch allocator reads it; switch
// traversal and returning credits change it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "noc/constants.h"
#include "noc/network.h"

namespace sim::noc {

struct OutputVc {
    int32_t credits = 0;
    uint32_t owner = kNone;  // input index of the packet currently holding this VC
};

// The output side of one router.
struct RouterOutputs {
    std::array<OutputVc, 2 * kSlots> vcs{};  // X outputs, then Y
    std::array<LinkStats, kNumPorts> stats{};

    const OutputVc& vc(uint32_t port, uint32_t slot) const { return vcs[port * kSlots + slot]; }
    // Whether a flit of `input` may leave through X/Y `port` into downstream buffer `slot`: a
    // credit for the buffer, and the output VC free (a header) or held by this input (body).
    bool can_send(uint32_t port, uint32_t slot, uint32_t input, bool header) const {
        const OutputVc& o = vc(port, slot);
        return o.credits > 0 && (header ? o.owner == kNone : o.owner == input);
    }
};

class OutputUnit {
  public:
    OutputUnit(uint32_t routers_per_noc, uint32_t buffer_flits) {
        for (auto& routers : routers_) {
            routers.resize(routers_per_noc);
            for (RouterOutputs& r : routers) {
                r.vcs.fill(OutputVc{static_cast<int32_t>(buffer_flits), kNone});
            }
        }
    }

    const RouterOutputs& router(uint32_t noc, uint32_t router) const {
        return routers_[noc][router];
    }
    const OutputVc& vc(uint32_t noc, uint32_t router, uint32_t port, uint32_t slot) const {
        return routers_[noc][router].vc(port, slot);
    }
    // A flit of `input` leaves: one credit used; the VC is held until the packet's tail.
    void send(uint32_t noc, uint32_t router, uint32_t port, uint32_t slot, uint32_t input,
              bool tail) {
        OutputVc& o = routers_[noc][router].vcs[port * kSlots + slot];
        --o.credits;
        o.owner = tail ? kNone : input;
    }
    void return_credit(uint32_t noc, uint32_t router, uint32_t port, uint32_t slot) {
        ++routers_[noc][router].vcs[port * kSlots + slot].credits;
    }

    LinkStats& stats(uint32_t noc, uint32_t router, uint32_t port) {
        return routers_[noc][router].stats[port];
    }
    const LinkStats& stats(uint32_t noc, uint32_t router, uint32_t port) const {
        return routers_[noc][router].stats[port];
    }
    void reset_stats() {
        for (auto& routers : routers_) {
            for (RouterOutputs& r : routers) {
                r.stats.fill(LinkStats{});
            }
        }
    }

  private:
    std::array<std::vector<RouterOutputs>, hal::noc::kNumNocs> routers_;
};

}  // namespace sim::noc
