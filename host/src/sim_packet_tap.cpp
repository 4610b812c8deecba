#include "fabric/sim_packet_tap.h"

#include "sim/model/cluster.h"
#include "sim/model/packet_tap.h"

namespace fabric {

// The model's observations in host terms: chip ids of the device, CoreCoords.
class PacketTraceTap::Tap final : public sim::PacketTap {
  public:
    Tap(const SimDevice& device, PacketTrace& trace)
        : chips_(device.modeled_chips()), trace_(trace) {}

    void noc_landed(uint32_t chip, const sim::noc::Landed& r) override {
        TraceNocLanding l;
        l.kind = r.kind == sim::noc::LandedKind::Write         ? TraceNocLanding::Kind::Write
                 : r.kind == sim::noc::LandedKind::InlineWrite ? TraceNocLanding::Kind::InlineWrite
                                                               : TraceNocLanding::Kind::Atomic;
        l.src = {r.src.x, r.src.y};
        l.src_addr = r.src_addr;
        l.dst = {r.dst.x, r.dst.y};
        l.dst_addr = r.dst_addr;
        l.len = r.len;
        l.data = r.data;
        l.value = r.value;
        l.cycle = r.cycle;
        trace_.noc_landed(chips_[chip], l);
    }

    void eth_landed(uint32_t chip, uint32_t channel, const sim::eth::LandedCommand& c) override {
        TraceEthLanding l;
        l.is_data = c.kind == sim::eth::CommandKind::Data;
        l.src = c.src;
        l.dest = c.dest;
        l.size = c.size;
        l.data = c.data;
        l.reg_value = c.reg_value;
        l.accepted_cycle = c.accepted_cycle;
        l.landed_cycle = c.landed_cycle;
        trace_.eth_landed(chips_[chip], channel, l);
    }

    void stream_store(uint32_t chip, sim::noc::Coord core, uint32_t addr, uint32_t value,
                      uint64_t cycle) override {
        trace_.stream_store(chips_[chip], {core.x, core.y}, addr, value, cycle);
    }

  private:
    std::vector<ChipId> chips_;  // model index -> chip id
    PacketTrace& trace_;
};

PacketTraceTap::PacketTraceTap(SimDevice& device, PacketTrace& trace)
    : device_(device), tap_(std::make_unique<Tap>(device, trace)) {
    device_.cluster().set_packet_tap(tap_.get());
}

PacketTraceTap::~PacketTraceTap() {
    device_.cluster().set_packet_tap(nullptr);
}

}  // namespace fabric
