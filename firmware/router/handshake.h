// What the two routers of a link exchange at start-up and how each judges the other's message
// (the sequence itself, master repeating / subordinate answering, is Router::handshake).
//
// Each side sends a HandshakeMsg with its LinkParams and the base of its receive area. The two
// must agree on every LinkParams field (identity both ways: the peer is who we expect and it
// expects us), and the peer's receive area must be a place our Ethernet sends may go unchecked.
// The first disagreement, as a HandshakeField, is what both ends report.
#pragma once

#include <stdint.h>

#include "fabric/l1_words.h"
#include "hal/arch.h"
#include "hal/eth.h"
#include "hal/status.h"
#include "protocol/fabric.h"

namespace fabric::router {

namespace pf = protocol::fabric;

// TXQ0: the only queue that carries remote register writes (credits), so data goes there too and
// each credit lands after the data it announces.
inline constexpr hal::EthTxq kTxq = hal::EthTxq::Q0;

// What this end says about itself and expects of the other.
inline pf::LinkParams link_params(const pf::RouterConfig& c) {
    pf::LinkParams p{};
    p.version = c.version;
    p.topology = c.topology;
    p.payload_bytes = c.payload_bytes;
    p.receiver_slots[0] = c.receiver_slots[0];
    p.receiver_slots[1] = c.receiver_slots[1];
    p.chip_id = c.chip_id;
    p.eth_channel = c.eth_channel;
    p.expect_chip = c.peer_chip_id;
    return p;
}

// The outcome of judging the peer: agreement, or the first thing it disagrees on.
struct Agreement {
    bool agree = true;
    pf::HandshakeField field = pf::HandshakeField::Version;
    static constexpr Agreement differs(pf::HandshakeField f) { return {false, f}; }
};

// The first LinkParams field in which the peer disagrees with us (`peer_channel`: the channel we
// expect it on).
inline Agreement compare_params(const pf::LinkParams& mine, const pf::LinkParams& peer,
                                uint32_t peer_channel) {
    using F = pf::HandshakeField;
    if (peer.version != mine.version) return Agreement::differs(F::Version);
    if (peer.topology != mine.topology) return Agreement::differs(F::Topology);
    if (peer.payload_bytes != mine.payload_bytes) return Agreement::differs(F::PayloadBytes);
    if (peer.receiver_slots[0] != mine.receiver_slots[0])
        return Agreement::differs(F::ReceiverSlots0);
    if (peer.receiver_slots[1] != mine.receiver_slots[1])
        return Agreement::differs(F::ReceiverSlots1);
    if (peer.chip_id != mine.expect_chip) return Agreement::differs(F::ChipId);
    if (peer.eth_channel != peer_channel) return Agreement::differs(F::EthChannel);
    if (peer.expect_chip != mine.chip_id) return Agreement::differs(F::ExpectChip);
    return {};
}

// The peer's receiver slots (from rx_base, counts as ours: LinkParams makes them the peer's too)
// are 16-B aligned and inside L1, so every send into one of them passes Eth::check_send.
inline bool rx_area_ok(const pf::RouterConfig& c, const pf::RouterLayout& l, uint32_t rx_base) {
    const uint32_t bytes = (c.receiver_slots[0] + c.receiver_slots[1]) * l.slot_bytes;
    return hal::Eth<hal::kArch>::check_send(kTxq, l.handshake_out, rx_base, bytes) ==
           hal::Status::Ok;
}

// Our judgement of the peer's message: its params, then its receive area.
inline Agreement judge_peer(const pf::RouterConfig& c, const pf::RouterLayout& l,
                            const pf::HandshakeMsg& in) {
    const Agreement a = compare_params(link_params(c), in.params, c.peer_eth_channel);
    if (a.agree && !rx_area_ok(c, l, in.rx_base))
        return Agreement::differs(pf::HandshakeField::RxArea);
    return a;
}

// The master's judgement of the subordinate's reply: its own, then the subordinate's of us.
inline Agreement judge_reply(const pf::RouterConfig& c, const pf::RouterLayout& l,
                             const pf::HandshakeMsg& in) {
    const Agreement a = judge_peer(c, l, in);
    if (a.agree && in.agree != 1)
        return Agreement::differs(static_cast<pf::HandshakeField>(in.mismatch));
    return a;
}

// A torn write is not a message: the check word covers the words that differ between messages.
inline uint32_t msg_check(const pf::HandshakeMsg& m) {
    return m.magic ^ m.params.chip_id ^ m.params.payload_bytes;
}

// Our message: from the master (is_reply 0) or the subordinate's answer (agreement filled in).
inline pf::HandshakeMsg handshake_msg(const pf::RouterConfig& c, const pf::RouterLayout& l) {
    pf::HandshakeMsg m{};
    m.magic = pf::kHandshakeMagic;
    m.is_reply = c.is_master != 0 ? 0 : 1;
    m.rx_base = l.receiver_base[0];
    m.params = link_params(c);
    m.check = msg_check(m);
    return m;
}

// A whole message from the peer at `addr` (magic, kind and check word agree) into `m`.
inline bool read_peer_msg(pf::HandshakeMsg& m, uint32_t addr, uint32_t is_reply) {
    if (ld(addr) != pf::kHandshakeMagic) {
        return false;
    }
    load_struct(m, addr);
    return m.is_reply == is_reply && m.check == msg_check(m) && m.rx_base != 0;
}

}  // namespace fabric::router
