// What a packet trace sees of a running cluster (sim::Cluster::set_packet_tap): the model's own
// transfers, not what the host expects of them. Three kinds of observation, each with the chip it
// happens on:
//   noc_landed    a NOC write (its last flit written), inline write or atomic served at its target
//   eth_landed    an Ethernet command's last frame landed in the receiving eth core (`channel`)
//   stream_store  a core's own store to its stream registers (e.g. a router taking n packets: -n
//                 on its receiver channel's stream)
// The tap decides what matters (host: fabric::PacketTraceRecorder, which classifies addresses with
// each router's RouterLayout). Parallel simulation: a tap is called from the thread stepping the
// chip named in the call, so chips' calls may come concurrently; one chip's come in order.
// Nothing is called while no tap is set: the model's cost is then one pointer test per landing and
// per core stream store.
#pragma once

#include <cstdint>

#include "eth/link.h"
#include "noc/network.h"

namespace sim {

class PacketTap {
  public:
    virtual ~PacketTap() = default;
    virtual void noc_landed(uint32_t chip, const noc::Landed& request) = 0;
    virtual void eth_landed(uint32_t chip, uint32_t channel, const eth::LandedCommand& command) = 0;
    virtual void stream_store(uint32_t chip, noc::Coord core, uint32_t addr, uint32_t value,
                              uint64_t cycle) = 0;
};

}  // namespace sim
