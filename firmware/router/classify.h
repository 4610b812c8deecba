// classify(): what this router does with a packet it takes, and whether it may, on the three
// header words a take loads. Its first stage decides inline, from the topology's tables, whether
// the packet is plain (Topology::plain(): a forward into one fed port whose route goes on, or a
// write here only) and passes every check (plain_passes()); the fast take path (router.cpp) makes
// just that stage. Anything else is classified out of line, and the general take path reads the
// whole verdict, including why a packet is dropped.
#pragma once

#include <stdint.h>

#include "header.h"
#include "protocol/fabric.h"
#include "topology.h"

namespace fabric::router {

namespace pf = protocol::fabric;

// What the receiving router knows beyond the header: its slot payload and the ports it feeds.
struct TakeLimits {
    uint32_t payload_bytes = 0;
    uint32_t present_ports = 0;  // bit p: port p has slots (a forward there can go)
};

// (No default initializers, as in Hop: classify() sets every field.)
struct Verdict {
    Hop hop;
    // A plain packet that passes every check (a write's command targets are the caller's to
    // check); neither port nor write: not plain, or it fails a check.
    PlainHop plain;
    // The first failing check but the command's, in the order reported: a 2D entry router's
    // DstNode, the header's own (check_head), a port without slots (NoDownstream), then the
    // route's (Topology::check_route). The command's checks (check_command) come between the
    // header's and the route's: drop_reason() puts them there.
    pf::BadPacket why;
};

// The route's reasons: reported after the command's.
constexpr bool is_route_reason(pf::BadPacket b) {
    return b == pf::BadPacket::Route || b == pf::BadPacket::RouteTooLong ||
           b == pf::BadPacket::Turn;
}

// A packet that is not plain.
template <class Topology>
Verdict classify_other(const Topology& topology, HeaderHead head, uint32_t slot, uint32_t rx,
                       TakeLimits limits) {
    using B = pf::BadPacket;
    Verdict v;
    v.hop = topology.hop(head, slot, rx);
    v.plain = {0, 0, 0};
    v.why = v.hop.dst_node;
    if (v.why == B::None) v.why = check_head(head, Topology::kSenders, limits.payload_bytes);
    if (v.why == B::None && (v.hop.ports & ~limits.present_ports) != 0) v.why = B::NoDownstream;
    if (v.why == B::None) v.why = topology.check_route(head, slot, v.hop);
    return v;
}

// Whether a plain hop's packet passes every check: the header's own, and the one route check a
// plain hop can fail (a plain hop passes the route's others, and its port is fed: the topology
// says so).
template <class Topology>
[[gnu::always_inline]] inline bool plain_passes(const Topology& topology, const HeaderHead& head,
                                                uint32_t slot, const TakeLimits& limits) {
    return check_head(head, Topology::kSenders, limits.payload_bytes) == pf::BadPacket::None &&
           topology.plain_route_ok(head, slot);
}

template <class Topology>
inline Verdict classify(const Topology& topology, const HeaderHead& head, uint32_t slot,
                        uint32_t rx, const TakeLimits& limits) {
    if (const PlainHop plain = topology.plain(head, rx);
        plain.any() && plain_passes(topology, head, slot, limits)) {
        // A plain hop passes the route's other checks and its port is fed: the topology says so.
        Verdict v;
        v.hop = Hop::of_plain(plain, head.route);
        v.plain = plain;
        v.why = pf::BadPacket::None;
        return v;
    }
    return classify_other(topology, head, slot, rx, limits);
}

// Why the packet `h` (its command words loaded if it is delivered here) is dropped, or None.
inline pf::BadPacket drop_reason(const Verdict& v, const pf::PacketHeader& h) {
    if (v.why != pf::BadPacket::None && !is_route_reason(v.why)) return v.why;
    if (v.hop.write) {
        const pf::BadPacket command = check_command(h);
        if (command != pf::BadPacket::None) return command;
    }
    return v.why;
}

}  // namespace fabric::router
