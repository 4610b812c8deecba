// The router's control decisions (protocol/fabric.h RouterControl: pause, drain, resume), pure
// functions of what the router read at a poll, so the host unit tests run them: which control
// word counts, how stalls are timed and acted on under it, when a drain cuts the link, whether
// the main loop serves its channels, and where a cut link's oldest unfinished packet is.
#pragma once

#include <stdint.h>

#include "protocol/fabric.h"

namespace fabric::router {

namespace pf = protocol::fabric;

// The control word as the router acts on it: a value that is not a RouterControl is Run.
constexpr uint32_t control_word(uint32_t raw) {
    return raw > static_cast<uint32_t>(pf::RouterControl::Rejoin) ? 0 : raw;
}

// Stall timeouts under control word `ctl`: as configured (Run); none while paused (a paused
// fabric is not stalled); while draining every packet that waits kRouterDrainHoldUs (or the
// configured time, if shorter) for a port is dropped, as Drained.
struct StallRule {
    uint32_t us = 0;  // 0: stalls are not looked for
    bool drop = false;
    pf::BadPacket why = pf::BadPacket::Timeout;
};
constexpr StallRule stall_rule(const pf::RouterConfig& c, uint32_t ctl) {
    StallRule s{c.stall_timeout_us, c.stall_action == static_cast<uint32_t>(pf::StallAction::Drop),
                pf::BadPacket::Timeout};
    if (ctl == static_cast<uint32_t>(pf::RouterControl::Pause)) s.us = 0;
    if (ctl == static_cast<uint32_t>(pf::RouterControl::Drain)) {
        if (s.us == 0 || s.us > pf::kRouterDrainHoldUs) s.us = pf::kRouterDrainHoldUs;
        s.drop = true;
        s.why = pf::BadPacket::Drained;
    }
    return s;
}

// A drain cuts a link that is dead (`link_dead`: down or its peer silent, link_watch.h; or its
// packets pinned here by a destination that does not accept them), once; a reroute cuts it
// whatever it looks like here (the host saw it fail at one end or the other).
constexpr bool cuts_link(uint32_t ctl, bool cut, bool link_dead) {
    if (cut) return false;
    return ctl == static_cast<uint32_t>(pf::RouterControl::Reroute) ||
           (ctl == static_cast<uint32_t>(pf::RouterControl::Drain) && link_dead);
}

// A rerouted router whose forwards into the fallback have all landed starts its link's state
// again (RouterControl::Rejoin) once its own marker is on the link and the peer's has landed (all
// the peer sent before the cut with it), and every packet it took from the peer is completed.
constexpr bool rejoin_ready(bool marked, uint32_t peer_markers, uint32_t taken_not_done) {
    return marked && peer_markers != 0 && taken_not_done == 0;
}

// The main loop takes and sends nothing while paused or once the link is cut.
constexpr bool loop_idle(uint32_t ctl, bool cut) {
    return ctl == static_cast<uint32_t>(pf::RouterControl::Pause) || cut;
}

// The state the router reports for control word `ctl` (its State event's code).
constexpr pf::RouterStatus control_event(uint32_t ctl) {
    return ctl == static_cast<uint32_t>(pf::RouterControl::Pause)   ? pf::RouterStatus::Paused
           : ctl == static_cast<uint32_t>(pf::RouterControl::Drain) ? pf::RouterStatus::Drained
           : ctl == static_cast<uint32_t>(pf::RouterControl::Reroute)
               ? pf::RouterStatus::RerouteHeld
           : ctl == static_cast<uint32_t>(pf::RouterControl::Rejoin)
               ? pf::RouterStatus::Rejoined
               : pf::RouterStatus::ReadyForTraffic;
}

// A sender channel's slot `back` slots before the one at `next`, in its ring [base, end) of
// `slot_bytes` slots (a cut link's oldest unfinished packet: `sent - completed` before `next`).
constexpr uint32_t slot_before(uint32_t base, uint32_t end, uint32_t next, uint32_t back,
                               uint32_t slot_bytes) {
    const uint32_t off = next - base;
    const uint32_t bytes = back * slot_bytes;
    return base + (off >= bytes ? off - bytes : off + (end - base) - bytes);
}

// How many of a sender channel's unacked packets (completed .. sent - 1, free-running) the peer
// took, by its count `resume`: those were applied there and complete; the rest go again. Valid
// iff completed <= resume <= sent (wrapping counters compared as distances).
struct Resume {
    bool ok = false;
    uint32_t complete = 0;  // packets to complete now
    uint32_t resend = 0;    // packets to send again, from position `resume` on
};
constexpr Resume resume_channel(uint32_t completed, uint32_t sent, uint32_t resume) {
    const uint32_t unacked = sent - completed;
    const uint32_t took = resume - completed;
    if (took > unacked) return {};
    return {true, took, unacked - took};
}

}  // namespace fabric::router
