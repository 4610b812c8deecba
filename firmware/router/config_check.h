// The checks a router makes of its configuration before it touches anything else: the first one
// that fails is the router's ConfigInvalid detail.
#pragma once

#include <stdint.h>

#include "hal/arch.h"
#include "hal/encoding.h"
#include "protocol/fabric.h"

namespace fabric::router {

namespace pf = protocol::fabric;

// `c` as read from L1, `l` the layout computed from it, `m` the MeshRouterConfig beside it (read
// by the 2D image only; the 1D image passes it unread). Topology: the image's policy (topology.h).
template <class Topology>
pf::ConfigCheck check_config(const pf::RouterConfig& c, const pf::RouterLayout& l,
                             const pf::MeshRouterConfig& m) {
    using C = pf::ConfigCheck;
    if (c.magic != pf::kRouterConfigMagic) return C::Magic;
    if (c.version != pf::kProtocolVersion) return C::Version;
    // Each image runs its own topologies: a line/ring config on the 2D image (or the reverse) is
    // refused, not half-run.
    if (!Topology::runs(c.topology)) return C::Topology;
    if (c.payload_bytes == 0 || c.payload_bytes % 16 != 0 ||
        c.payload_bytes > pf::max_payload_bytes(hal::kArch)) {
        return C::PayloadBytes;
    }
    for (uint32_t ch = 0; ch < pf::kMaxSenderChannels; ++ch) {
        if (c.sender_slots[ch] > pf::kMaxRouterSlots ||
            (ch >= Topology::kSenders && c.sender_slots[ch] != 0)) {
            return C::SenderSlots;
        }
    }
    if (c.receiver_slots[0] == 0 || c.receiver_slots[0] > pf::kMaxRouterSlots ||
        c.receiver_slots[1] > pf::kMaxRouterSlots) {
        return C::ReceiverSlots;
    }
    // Traffic into rx1 (a dateline link, or a VC1 channel) needs an rx1.
    bool into_rx1 = c.dateline != 0;
    for (uint32_t ch = 0; ch < Topology::kSenders; ++ch) {
        into_rx1 = into_rx1 || (Topology::is_vc1(ch) && c.sender_slots[ch] != 0);
    }
    if (into_rx1 && c.receiver_slots[1] == 0) return C::Dateline;
    if (c.dateline > 1) return C::Dateline;
    if (c.has_downstream > 1 || (c.has_downstream != 0 && (!hal::noc::coord_ok(c.downstream_x) ||
                                                           !hal::noc::coord_ok(c.downstream_y)))) {
        return C::Downstream;
    }
    if (c.handshake_timeout_us == 0 || c.ready_timeout_us == 0 || c.drain_timeout_us == 0 ||
        c.progress_timeout_us == 0 || c.stall_action > 1) {
        return C::Timeouts;
    }
    if (!l.fits) return C::Layout;
    if (c.is_master > 1) return C::IsMaster;
    return Topology::check_config(c, m);
}

}  // namespace fabric::router
