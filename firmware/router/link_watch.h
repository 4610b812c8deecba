// Link health as the router's main loop sees it at its polls: whether the peer is heard, and what
// the Ethernet link status word says. A pure state machine over what the poll read, so the host
// unit tests drive it with made-up clocks.
//
// Signs of the peer's life: its keep-alives (a +1 on our PeerAlive stream, sent every
// kRouterKeepAliveUs when it sent us nothing else), and everything else it sends us (packets
// landed, completions). Silent for kRouterPeerSilentUs: reported once; heard again: reported once,
// with how long it was silent. The watch starts with the main loop: the handshake was the peer's
// first sign, and it sends keep-alives from then on (also while it waits for the host's ready
// word, which reaches the routers of a large fabric one by one).
#pragma once

#include <stdint.h>

#include "protocol/fabric.h"

namespace fabric::router {

namespace pf = protocol::fabric;

enum class LinkChange : uint32_t { None, PeerSilent, PeerHeard, Down, Up };

class PeerWatch {
  public:
    PeerWatch(uint32_t silent_cycles, uint32_t now)
        : silent_cycles_(silent_cycles), heard_at_(now) {}

    // `heard`: the peer was heard since the last poll. Times are the wall clock's low word.
    LinkChange poll(uint32_t now, bool heard) {
        if (heard) {
            const uint32_t quiet = now - heard_at_;
            heard_at_ = now;
            if (!silent_) return LinkChange::None;
            silent_ = false;
            silent_for_ = quiet;
            return LinkChange::PeerHeard;
        }
        if (silent_ || now - heard_at_ < silent_cycles_) return LinkChange::None;
        silent_ = true;
        return LinkChange::PeerSilent;
    }
    bool silent() const { return silent_; }
    uint32_t quiet_cycles(uint32_t now) const { return now - heard_at_; }
    uint32_t silent_for() const { return silent_for_; }  // of the last PeerHeard

  private:
    uint32_t silent_cycles_;
    uint32_t heard_at_;
    uint32_t silent_for_ = 0;
    bool silent_ = false;
};

// The Ethernet link status word (hal: written by the base firmware, and by the model): up or not,
// reported on each change.
class LinkStatusWatch {
  public:
    explicit LinkStatusWatch(uint32_t up_value) : up_value_(up_value) {}
    LinkChange poll(uint32_t word) {
        const bool up = word == up_value_;
        if (up == up_) return LinkChange::None;
        up_ = up;
        return up ? LinkChange::Up : LinkChange::Down;
    }
    bool up() const { return up_; }

  private:
    uint32_t up_value_;
    bool up_ = true;  // the handshake went over it
};

}  // namespace fabric::router
