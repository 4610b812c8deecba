// The handshake's judgement (firmware/router/handshake.h): each LinkParams field, the peer's
// receive area, the subordinate's answer, and what counts as a whole message.
#include "handshake.h"

#include <catch2/catch.hpp>

#include "router_fixtures.h"

namespace {

using namespace fw_test;
using fabric::router::Agreement;
using F = pf::HandshakeField;

// The peer of a line_config() router, as it would describe itself.
pf::RouterConfig peer_config() {
    pf::RouterConfig c = line_config();
    c.chip_id = 1;
    c.eth_channel = 0;
    c.peer_chip_id = 0;
    c.peer_eth_channel = 8;
    c.is_master = 0;
    return c;
}

}  // namespace

TEST_CASE("handshake: every LinkParams field must agree, identity both ways",
          "[router][handshake]") {
    using fabric::router::compare_params;
    using fabric::router::link_params;
    const pf::RouterConfig me = line_config();
    const pf::LinkParams mine = link_params(me);
    const pf::LinkParams good = link_params(peer_config());
    CHECK(compare_params(mine, good, me.peer_eth_channel).agree);
    struct Case {
        void (*change)(pf::LinkParams&);
        F field;
    };
    const Case cases[] = {
        {[](pf::LinkParams& p) { p.version += 1; }, F::Version},
        {[](pf::LinkParams& p) { p.topology = 1; }, F::Topology},
        {[](pf::LinkParams& p) { p.payload_bytes = 2048; }, F::PayloadBytes},
        {[](pf::LinkParams& p) { p.receiver_slots[0] = 8; }, F::ReceiverSlots0},
        {[](pf::LinkParams& p) { p.receiver_slots[1] = 8; }, F::ReceiverSlots1},
        {[](pf::LinkParams& p) { p.chip_id = 5; }, F::ChipId},
        {[](pf::LinkParams& p) { p.eth_channel = 1; }, F::EthChannel},
        {[](pf::LinkParams& p) { p.expect_chip = 3; }, F::ExpectChip},
    };
    for (const Case& c : cases) {
        pf::LinkParams peer = good;
        c.change(peer);
        const Agreement a = compare_params(mine, peer, me.peer_eth_channel);
        INFO(static_cast<uint32_t>(c.field));
        CHECK_FALSE(a.agree);
        CHECK(a.field == c.field);
    }
}

TEST_CASE("handshake: the peer's receive area and the subordinate's answer",
          "[router][handshake]") {
    using fabric::router::handshake_msg;
    using fabric::router::judge_peer;
    using fabric::router::judge_reply;
    const pf::RouterConfig me = line_config();
    const pf::RouterLayout l = pf::router_layout(hal::kArch, me);
    const pf::RouterConfig peer = peer_config();
    pf::HandshakeMsg in = handshake_msg(peer, pf::router_layout(hal::kArch, peer));
    CHECK(in.is_reply == 1);
    CHECK(judge_peer(me, l, in).agree);
    in.rx_base += 8;  // misaligned
    CHECK(judge_peer(me, l, in).field == F::RxArea);
    in.rx_base = hal::kArch.eth_l1_size - 16;  // the slots would run past the end of L1
    CHECK(judge_peer(me, l, in).field == F::RxArea);
    in.rx_base = l.receiver_base[0];
    // The master also takes the subordinate's word: it may object to us.
    in.agree = 0;
    in.mismatch = static_cast<uint32_t>(F::PayloadBytes);
    CHECK(judge_peer(me, l, in).agree);  // our own view
    const Agreement reply = judge_reply(me, l, in);
    CHECK_FALSE(reply.agree);
    CHECK(reply.field == F::PayloadBytes);
    in.agree = 1;
    CHECK(judge_reply(me, l, in).agree);
    in.params.payload_bytes = 2048;  // our own objection comes first
    CHECK(judge_reply(me, l, in).field == F::PayloadBytes);
}

TEST_CASE("handshake: only a whole message of the expected kind is read", "[router][handshake]") {
    using fabric::router::handshake_msg;
    using fabric::router::read_peer_msg;
    FakeCore core;
    const uint32_t at = 0x11200;
    const pf::RouterConfig master = line_config();
    const pf::HandshakeMsg m = handshake_msg(master, pf::router_layout(hal::kArch, master));
    CHECK(m.is_reply == 0);
    pf::HandshakeMsg out{};
    CHECK_FALSE(read_peer_msg(out, at, 0));  // nothing there yet
    core.put(at, m);
    CHECK(read_peer_msg(out, at, 0));
    CHECK(out.params.chip_id == master.chip_id);
    CHECK(out.rx_base == pf::router_layout(hal::kArch, master).receiver_base[0]);
    CHECK_FALSE(read_peer_msg(out, at, 1));  // a master's message is not a reply
    pf::HandshakeMsg torn = m;
    torn.params.payload_bytes = 1;  // the check word no longer matches
    core.put(at, torn);
    CHECK_FALSE(read_peer_msg(out, at, 0));
    pf::HandshakeMsg no_area = m;
    no_area.rx_base = 0;
    no_area.check = fabric::router::msg_check(no_area);
    core.put(at, no_area);
    CHECK_FALSE(read_peer_msg(out, at, 0));
}
