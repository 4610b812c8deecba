// Stage 2 of the router pipeline: switch allocation.
//
// Each cycle, for one router: every input buffer whose head flit is ready is examined once. It
// requests the outputs of its route (computed by the input unit) when every X / Y output it needs
// has a credit and is free of other packets (wormhole: a header may claim an output VC only when
// no packet holds it; body flits follow their header). Then each output port in turn grants the
// requester nearest after its round-robin pointer, subject to one flit per input port and per
// output port; a multicast flit needs all its outputs at once. Granting never invalidates another
// requester's checks: an output carries one flit a cycle. A head copy with no output at all (a
// multicast copy with nowhere to go) is granted its input port alone, to be drained.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "noc/constants.h"
#include "noc/input_unit.h"
#include "noc/output_unit.h"

namespace sim::noc {

// The inputs whose head flit crosses the switch this cycle, in the order they go: copies to
// drain first, then one grant per output port in port order. At most one per input port.
struct Grants {
    std::array<uint8_t, kNumPorts> inputs{};
    uint32_t count = 0;
    void add(uint32_t input) { inputs[count++] = static_cast<uint8_t>(input); }
};

class SwitchAllocator {
  public:
    explicit SwitchAllocator(uint32_t routers_per_noc);

    Grants allocate(uint32_t noc, uint32_t router, const InputUnit& inputs,
                    const OutputUnit& outputs, uint64_t now);

    // Router `router` of `noc` grants nothing to its Local output while held: what is sent to
    // its node backs up in the network (a destination that does not accept).
    void hold_local(uint32_t noc, uint32_t router, bool hold) { held_[noc][router] = hold; }
    bool local_held(uint32_t noc, uint32_t router) const { return held_[noc][router] != 0; }

    // The round-robin pointer of an output port: the input favoured next.
    uint32_t pointer(uint32_t noc, uint32_t router, uint32_t port) const {
        return pointers_[noc][router][port];
    }

  private:
    std::array<std::vector<std::array<uint32_t, kNumPorts>>, hal::noc::kNumNocs> pointers_;
    std::array<std::vector<uint8_t>, hal::noc::kNumNocs> held_;
};

}  // namespace sim::noc
