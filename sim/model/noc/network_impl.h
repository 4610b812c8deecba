// Network::Impl: the owner of the NOC model's parts, in pipeline order. Not part of the model's
// interface (network.h): network.cpp and niu.cpp use it, and the stage tests
// (tests/sim_noc/test_*_stages.cpp) assemble the stages through it as the network does.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "noc/error_log.h"
#include "noc/grid.h"
#include "noc/input_unit.h"
#include "noc/link_traversal.h"
#include "noc/network.h"
#include "noc/niu_ejection.h"
#include "noc/niu_injection.h"
#include "noc/node_table.h"
#include "noc/output_unit.h"
#include "noc/packet.h"
#include "noc/path_reservation.h"
#include "noc/routing_unit.h"
#include "noc/switch_allocator.h"

namespace sim::noc {

struct Network::Impl {
    Impl(uint32_t x_size, uint32_t y_size, const hal::ArchMap& a, NocParams p);

    // One NOC clock (see network.cpp for the order and why it is the order).
    void step();
    void step_routers(uint32_t noc);
    bool idle() const { return injection.idle() && inputs.empty() && links.idle(); }

    const hal::ArchMap& arch;
    const NocParams params;
    const Grid grid;
    uint64_t now = 0;
    uint64_t stats_start = 0;

    ErrorLog errors;
    PacketPool packets;
    NodeTable nodes;
    std::vector<std::unique_ptr<Niu>> nius;  // per physical node; null where no core
    RoutingUnit routing;
    PathReservation reservations;
    InputUnit inputs;           // 1: input buffering and route computation
    OutputUnit outputs;         //    (the output VCs' credits and owners, link statistics)
    SwitchAllocator allocator;  // 2: switch allocation
    LinkTraversal links;        // 3: switch and link traversal, credits back
    NiuInjection injection;     // 4: the NIUs, sending
    NiuEjection ejection;       //    and receiving
};

}  // namespace sim::noc
