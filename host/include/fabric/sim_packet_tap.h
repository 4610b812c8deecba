// A PacketTrace (packet_trace.h) fed by a SimDevice's model: while a PacketTraceTap lives, every
// observation of the model's sim::PacketTap (sim/model/packet_tap.h) goes to the trace, in the
// device's chip ids. Built with the model only (fabric_host_sim).
#pragma once

#include <memory>

#include "fabric/packet_trace.h"
#include "fabric/sim_device.h"

namespace fabric {

class PacketTraceTap {
  public:
    // From now on until destruction (keep the trace alive as long).
    PacketTraceTap(SimDevice& device, PacketTrace& trace);
    ~PacketTraceTap();
    PacketTraceTap(const PacketTraceTap&) = delete;
    PacketTraceTap& operator=(const PacketTraceTap&) = delete;

  private:
    class Tap;
    SimDevice& device_;
    std::unique_ptr<Tap> tap_;
};

}  // namespace fabric
