// Ethernet between chips, firmware on both ends (firmware/tests/eth_ping_pong, txq_order,
// bad_input; firmware/benchmarks/eth_stream with verification): the seeds/002 handshake and
// end-of-kernel credit wait, the termination escape with a stuck_at code, TX queue ordering, link
// faults that still deliver every byte, and bad requests as the HAL and the model report them.
#include <catch2/catch.hpp>

#include "fw_harness.h"
#include "hal/encoding.h"
#include "hal/status.h"

using protocol::KernelRole;
using protocol::TestFail;
using sim::eth::Dir;
using simfw::Core;
using simfw::Rig;

namespace {

uint32_t st(hal::Status s) {
    return static_cast<uint32_t>(s);
}

void require_no_txq_errors(Rig& rig, const std::vector<Core>& cores) {
    for (const Core& c : cores) {
        for (const auto& e : rig.chip(c.chip).txq(c.x, c.y)->errors())
            FAIL_CHECK(c.str() << ": " << e);
    }
}

protocol::PingPongArgs ping_pong_args(Rig& rig, uint32_t iterations, uint32_t payload,
                                      uint32_t timeout_us) {
    protocol::PingPongArgs a{};
    a.iterations = iterations;
    a.payload_bytes = payload;
    a.buf_base = rig.l1_base();
    a.timeout_us = timeout_us;
    return a;
}

// A kernel that gave up: exit code Stuck, status Failed|Stuck, stuck_at `where`, the HAL status
// of the wait, the step and detail.
void require_stuck(Rig& rig, Core c, uint32_t where, hal::Status why, uint32_t step,
                   uint32_t detail) {
    INFO(rig.describe(c));
    REQUIRE(rig.state(c) == sim::RunState::Exited);
    CHECK(rig.exit_code(c) == static_cast<uint32_t>(TestFail::Stuck));
    const protocol::TestMailbox m = rig.mailbox(c);
    CHECK(m.status == protocol::test_status_failed(TestFail::Stuck));
    CHECK(m.stuck_at == where);
    protocol::TestFailure f{};
    std::memcpy(&f, m.results, sizeof f);
    CHECK(f.code == static_cast<uint32_t>(TestFail::Stuck));
    CHECK(f.hal_status == st(why));
    CHECK(f.step == step);
    CHECK(f.detail == detail);
}

}  // namespace

TEST_CASE("eth ping-pong: handshake, repeated sends checked both ways, end-of-kernel credit wait",
          "[sim][eth][pingpong]") {
    const uint32_t payload = GENERATE(0u, 1024u, 4096u);  // bare sync; one frame; three frames
    INFO("payload " << payload);
    Rig rig(2);
    rig.connect(0, 2, 1, 5);  // any channel pairing works
    const Core m = rig.eth(0, 2), s = rig.eth(1, 5);
    const uint32_t n = 20;
    const auto args = ping_pong_args(rig, n, payload, 1000);
    rig.launch(m, "eth_ping_pong", KernelRole::Master, args);
    rig.cluster().step(3'000);  // the Subordinate starts later, as on a real cluster
    rig.launch(s, "eth_ping_pong", KernelRole::Subordinate, args);
    const auto report = rig.run(5'000'000);
    INFO(rig.describe(m));
    INFO(rig.describe(s));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, m);
    REQUIRE_KERNEL_PASSED(rig, s);
    REQUIRE(rig.drain_links());
    const auto rm = rig.results<protocol::PingPongResults>(m);
    const auto rs = rig.results<protocol::PingPongResults>(s);
    CHECK(rm.iterations_done == n);
    CHECK(rs.iterations_done == n);
    CHECK(rm.mismatches == 0);
    CHECK(rs.mismatches == 0);
    // A round trip is at least two link latencies plus two serializations of the packet.
    const uint32_t slot = payload + 16;
    const uint32_t frames = (slot + 1487) / 1488;
    const uint32_t wire = 2 * ((slot + frames * 50) * 8 / 100 + 500);
    CHECK(rm.rtt_min >= wire);
    // Plus firmware: the Subordinate checks the ping and fills the pong (~30 cycles per word on
    // this core: 7-cycle L1 loads, one store per 5 cycles), send programming, polling.
    CHECK(rm.rtt_max < wire + 40 * (payload / 4) + 1500);
    CHECK(rm.rtt_min <= rm.rtt_max);
    // Exactly the protocol's commands crossed the link: hello + n pings + FIN, ack + n pongs.
    const auto& ab = rig.link(m).stats(Dir::AtoB);
    const auto& ba = rig.link(m).stats(Dir::BtoA);
    CHECK(ab.commands_completed == n + 2);
    CHECK(ba.commands_completed == n + 1);
    CHECK(ab.bytes_delivered == 16 + n * slot + 16);
    CHECK(ba.bytes_delivered == 16 + n * slot);
    // Teardown left no handshake or credit word behind on either core.
    const auto lay = protocol::ping_pong_layout(args.buf_base, payload);
    for (const Core& c : {m, s}) {
        CHECK(rig.read_words(c, lay.hs_in, 4) == std::vector<uint32_t>(4, 0));
        CHECK(rig.read_words(c, lay.credit_in, 4) == std::vector<uint32_t>(4, 0));
    }
    require_no_txq_errors(rig, {m, s});
}

TEST_CASE(
    "eth ping-pong: peer never answers, the termination word ends the wait and stuck_at says where",
    "[sim][eth][pingpong][termination]") {
    Rig rig(2);
    rig.connect(0, 0, 1, 0);
    const Core m = rig.eth(0, 0);
    const Core s = rig.eth(1, 0);  // instantiated with the link, held in reset: never answers
    rig.launch(m, "eth_ping_pong", KernelRole::Master, ping_pong_args(rig, 5, 64, 1'000'000));
    auto report = rig.run(50'000);
    REQUIRE_FALSE(report.done);  // waiting for the handshake answer
    REQUIRE(report.stuck().size() == 1);
    CHECK(report.stuck()[0].chip == 0);
    CHECK(rig.state(m) == sim::RunState::Running);
    CHECK(rig.mailbox(m).status == static_cast<uint32_t>(protocol::TestStatus::Running));
    CHECK(rig.state(s) == sim::RunState::Reset);
    // The hello reached the peer's handshake slot even though nothing runs there.
    CHECK(rig.read32(s, rig.l1_base()) == protocol::kHandshakeHello);
    rig.terminate(m);
    report = rig.run(10'000);
    REQUIRE(report.done);
    CHECK(report.cycles < 1000);  // one poll to see the word, then publish results and exit
    require_stuck(rig, m, protocol::kPpStuckHandshakeAck, hal::Status::Terminated,
                  static_cast<uint32_t>(protocol::PingPongStep::Handshake), 0);
}

TEST_CASE("eth ping-pong: a wait with no termination gives up at its deadline",
          "[sim][eth][pingpong][termination]") {
    Rig rig(2);
    rig.connect(0, 0, 1, 0);
    const Core m = rig.eth(0, 0);
    rig.launch(m, "eth_ping_pong", KernelRole::Master, ping_pong_args(rig, 5, 64, 20));  // 20 us
    const auto report = rig.run(100'000);
    REQUIRE(report.done);
    CHECK(report.cycles >= 20'000);
    CHECK(report.cycles < 22'000);
    require_stuck(rig, m, protocol::kPpStuckHandshakeAck, hal::Status::Timeout,
                  static_cast<uint32_t>(protocol::PingPongStep::Handshake), 0);
}

TEST_CASE("eth ping-pong: peers that disagree get stuck where the protocol says, both escape",
          "[sim][eth][pingpong][termination]") {
    Rig rig(2);
    rig.connect(0, 0, 1, 0);
    const Core m = rig.eth(0, 0), s = rig.eth(1, 0);
    rig.launch(m, "eth_ping_pong", KernelRole::Master, ping_pong_args(rig, 5, 256, 1'000'000));
    rig.launch(s, "eth_ping_pong", KernelRole::Subordinate, ping_pong_args(rig, 3, 256, 1'000'000));
    auto report = rig.run(200'000);
    REQUIRE_FALSE(report.done);
    CHECK(report.stuck().size() == 2);
    // The Master's 4th ping is never answered; the Subordinate waits for the FIN that never comes.
    // Both publish their progress while they run.
    CHECK(rig.results<protocol::PingPongResults>(m).iterations_done == 3);
    CHECK(rig.results<protocol::PingPongResults>(s).iterations_done == 3);
    CHECK(rig.mailbox(m).heartbeat == 3);
    CHECK(rig.mailbox(s).heartbeat == 3);
    rig.terminate(m);
    rig.terminate(s);
    report = rig.run(10'000);
    REQUIRE(report.done);
    require_stuck(rig, m, protocol::kPpStuckPong, hal::Status::Terminated,
                  static_cast<uint32_t>(protocol::PingPongStep::Pong), 3);
    require_stuck(rig, s, protocol::kPpStuckFinalCredit, hal::Status::Terminated,
                  static_cast<uint32_t>(protocol::PingPongStep::Teardown), 0);
    CHECK(rig.results<protocol::PingPongResults>(m).iterations_done == 3);
    CHECK(rig.results<protocol::PingPongResults>(s).iterations_done == 3);
}

namespace {

protocol::TxqOrderArgs order_args(Rig& rig, protocol::TxqOrderCase which) {
    protocol::TxqOrderArgs a{};
    a.which = static_cast<uint32_t>(which);
    a.queues = 2;
    a.count = 64;
    a.big_bytes = 8192;
    a.buf_base = rig.l1_base();
    a.timeout_us = 1000;
    return a;
}

protocol::TxqOrderResults run_order(Rig& rig, const protocol::TxqOrderArgs& args) {
    rig.connect(0, 0, 1, 0);
    const Core m = rig.eth(0, 0), s = rig.eth(1, 0);
    rig.launch(s, "txq_order", KernelRole::Subordinate, args);
    rig.launch(m, "txq_order", KernelRole::Master, args);
    const auto report = rig.run(2'000'000);
    INFO(rig.describe(m));
    INFO(rig.describe(s));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, m);
    REQUIRE_KERNEL_PASSED(rig, s);
    require_no_txq_errors(rig, {m, s});
    return rig.results<protocol::TxqOrderResults>(s);
}

}  // namespace

TEST_CASE("eth txq order: within a queue commands land in order", "[sim][eth][order]") {
    Rig rig(2);
    const auto args = order_args(rig, protocol::TxqOrderCase::SeqSlot);
    const auto r = run_order(rig, args);
    for (uint32_t q = 0; q < 2; ++q) {
        INFO("queue " << q);
        CHECK(r.decreases[q] == 0);
        CHECK(r.final_seq[q] == args.count);
        CHECK(r.distinct_seen[q] >= 2);  // the receiver saw the slot change while it was sampling
        CHECK(r.distinct_seen[q] <= args.count);
    }
    // Both queues carried count commands, on one wire.
    const auto& ab = rig.link(rig.eth(0, 0)).stats(Dir::AtoB);
    CHECK(ab.commands_completed == 1 + 2 * args.count);
}

TEST_CASE("eth txq order: a flag behind data on the same queue sees all of it",
          "[sim][eth][order]") {
    Rig rig(2);
    const auto r = run_order(rig, order_args(rig, protocol::TxqOrderCase::SameQueue));
    CHECK(r.last_word_present_at_flag == 1);
    CHECK(r.mismatches_final == 0);
}

TEST_CASE("eth txq order: across queues there is no ordering (the flag overtakes the data)",
          "[sim][eth][order]") {
    Rig rig(2);
    const auto r = run_order(rig, order_args(rig, protocol::TxqOrderCase::CrossQueue));
    // The model shares the wire frame by frame between the queues: the 16-B flag on TXQ1 goes out
    // right behind the first frame of the 8 KiB transfer on TXQ0 and lands ~5 frames early.
    CHECK(r.last_word_present_at_flag == 0);
    CHECK(r.mismatches_final == 0);
}

namespace {

protocol::EthStreamArgs stream_args(Rig& rig, uint32_t packet, uint32_t channels,
                                    uint32_t packets) {
    protocol::EthStreamArgs a{};
    a.packet_bytes = packet;
    a.channels = channels;
    a.packets = packets;
    a.queues = 2;
    a.buf_base = rig.l1_base();
    a.credit_stream = 7;
    a.verify = 1;
    a.seed = 0x51;
    a.timeout_us = 1000;
    a.handshake = 1;
    return a;
}

}  // namespace

TEST_CASE("eth link fault: drops and a link down/up mid-transfer still deliver every byte",
          "[sim][eth][fault]") {
    Rig rig(2);
    rig.connect(0, 0, 1, 0);
    const Core m = rig.eth(0, 0), s = rig.eth(1, 0);
    const auto args = stream_args(rig, 1024, 4, 96);
    sim::eth::Link& link = rig.link(m);
    // Data frames (A->B) and credit frames (B->A) lost on the wire, by index.
    for (uint64_t n : {5u, 17u, 18u, 60u}) link.drop_frame(Dir::AtoB, n);
    for (uint64_t n : {3u, 40u}) link.drop_frame(Dir::BtoA, n);
    rig.launch(s, "eth_stream", KernelRole::Subordinate, args);
    rig.launch(m, "eth_stream", KernelRole::Master, args);
    // Mid-transfer: the link goes down for 4000 cycles.
    REQUIRE(rig.run_until(
        [&] { return rig.results<protocol::EthStreamResults>(m).packets_done >= 40; }, 1'000'000));
    link.set_up(false);
    rig.cluster().step(4'000);
    const uint32_t during = rig.results<protocol::EthStreamResults>(s).packets_done;
    link.set_up(true);
    const auto report = rig.run(5'000'000);
    INFO(rig.describe(m));
    INFO(rig.describe(s));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, m);
    REQUIRE_KERNEL_PASSED(rig, s);
    REQUIRE(rig.drain_links());
    const auto rm = rig.results<protocol::EthStreamResults>(m);
    const auto rs = rig.results<protocol::EthStreamResults>(s);
    CHECK(rm.packets_done == args.packets);
    CHECK(rs.packets_done == args.packets);
    CHECK(rs.mismatches == 0);
    CHECK(rs.sync_errors == 0);
    CHECK(during < args.packets);
    const auto& ab = link.stats(Dir::AtoB);
    const auto& ba = link.stats(Dir::BtoA);
    CHECK(ab.frames_dropped == 4);
    CHECK(ba.frames_dropped == 2);
    CHECK(ab.frames_retransmitted > 0);
    CHECK(ba.frames_retransmitted > 0);
    // Every byte exactly once: hello + every packet.
    CHECK(ab.bytes_delivered == 16 + uint64_t{args.packets} * args.packet_bytes);
    CHECK(ba.reg_writes_delivered == args.packets);
    CHECK(ab.frames_sent == ab.frames_delivered + ab.frames_retransmitted);
    // The last packets are still in the Subordinate's slots, exactly.
    for (uint32_t i = args.packets - args.channels; i < args.packets; ++i) {
        const uint32_t slot =
            protocol::eth_stream_slot(args.buf_base, args.packet_bytes, i % args.channels);
        CHECK(rig.pattern_mismatches(s, slot, args.packet_bytes - 16,
                                     protocol::eth_stream_seed(args.seed, i)) == 0);
    }
    // No source was reused before the peer had it (the model checks every resend against L1).
    require_no_txq_errors(rig, {m, s});
}

TEST_CASE("eth link fault: random frame loss both ways still delivers every byte",
          "[sim][eth][fault]") {
    Rig rig(2);
    rig.connect(0, 0, 1, 0);
    const Core m = rig.eth(0, 0), s = rig.eth(1, 0);
    const auto args = stream_args(rig, 2048, 3, 48);
    sim::eth::Link& link = rig.link(m);
    link.set_drop_rate(Dir::AtoB, 30'000, 11);  // 3 %
    link.set_drop_rate(Dir::BtoA, 30'000, 12);
    rig.launch(s, "eth_stream", KernelRole::Subordinate, args);
    rig.launch(m, "eth_stream", KernelRole::Master, args);
    const auto report = rig.run(5'000'000);
    INFO(rig.describe(m));
    INFO(rig.describe(s));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, m);
    REQUIRE_KERNEL_PASSED(rig, s);
    REQUIRE(rig.drain_links());
    const auto rs = rig.results<protocol::EthStreamResults>(s);
    CHECK(rs.packets_done == args.packets);
    CHECK(rs.mismatches == 0);
    const auto& ab = link.stats(Dir::AtoB);
    CHECK(ab.frames_dropped > 0);
    CHECK(link.stats(Dir::BtoA).frames_dropped > 0);
    CHECK(ab.bytes_delivered == 16 + uint64_t{args.packets} * args.packet_bytes);
    CHECK(link.stats(Dir::BtoA).reg_writes_delivered == args.packets);
    require_no_txq_errors(rig, {m, s});
}

TEST_CASE(
    "bad input: misaligned Ethernet requests, remote register write on TXQ1, NOC address outside "
    "the target's memory",
    "[sim][eth][noc][bad]") {
    Rig rig(2);
    rig.connect(0, 0, 1, 0);
    const Core e = rig.eth(0, 0), peer = rig.eth(1, 0), tgt = rig.eth(0, 1);
    rig.chip(0).tile(tgt.x, tgt.y);
    const hal::ArchMap& a = rig.arch();
    protocol::BadInputArgs args{};
    args.local_buf = rig.l1_base();
    args.peer_buf = rig.l1_base();
    args.target_x = tgt.x;
    args.target_y = tgt.y;
    args.bad_noc_addr = a.eth_l1_size;  // first byte past the target's 256 KiB L1
    args.peer_stream = 5;
    rig.launch(e, "bad_input", KernelRole::Master, args);
    const auto report = rig.run(1'000'000);
    INFO(rig.describe(e));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, e);
    REQUIRE(rig.drain_links());
    const auto r = rig.results<protocol::BadInputResults>(e);

    // 1. The HAL refused, nothing reached the queues.
    CHECK(r.hal_misaligned_src == st(hal::Status::Misaligned));
    CHECK(r.hal_misaligned_dst == st(hal::Status::Misaligned));
    CHECK(r.hal_misaligned_size == st(hal::Status::Misaligned));
    CHECK(r.hal_q1_remote == st(hal::Status::Unsupported));
    CHECK(r.transfer_cnt_after_hal == 0);

    // 2. The raw register writes: the model recorded exactly these, in order, and sent nothing.
    using sim::eth::ErrorKind;
    const auto& errs = rig.chip(0).txq(e.x, e.y)->errors();
    REQUIRE(errs.size() == 3);
    CHECK(errs[0].queue == 0);
    CHECK(errs[0].kind == ErrorKind::MisalignedStart);
    CHECK(errs[0].addr == args.local_buf + protocol::kBadInputMisalignOffset);
    CHECK(errs[0].size == 16);
    CHECK(errs[1].queue == 0);
    CHECK(errs[1].kind == ErrorKind::MisalignedSize);
    CHECK(errs[1].addr == args.local_buf);
    CHECK(errs[1].size == protocol::kBadInputMisalignedSize);
    CHECK(errs[2].queue == 1);
    CHECK(errs[2].kind == ErrorKind::RemoteRegWriteNotSupported);
    CHECK(errs[2].addr ==
          hal::stream::reg_addr(5, a.stream.remote_dest_buf_space_available_update));
    CHECK(rig.link(e).stats(Dir::AtoB).commands_completed == 0);
    CHECK(rig.chip(1).streams(peer.x, peer.y).words_free(5) == 0);
    CHECK(rig.chip(1).txq(peer.x, peer.y)->errors().empty());

    // 3. The NOC requests completed (barriers Ok) and the model recorded both bus errors.
    CHECK(r.noc_write_status == st(hal::Status::Ok));
    CHECK(r.noc_barrier_status == st(hal::Status::Ok));
    CHECK(r.noc_read_status == st(hal::Status::Ok));
    CHECK(r.noc_read_barrier_status == st(hal::Status::Ok));
    const auto& nerr = rig.chip(0).network().errors();
    REQUIRE(nerr.size() == 2);
    for (const auto& ne : nerr) {
        INFO(sim::noc::to_string(ne));
        CHECK(ne.kind == sim::noc::NocErrorKind::AddressRefused);
        CHECK(ne.noc == 0);
        CHECK(ne.addr == args.bad_noc_addr);
        CHECK(ne.dst == sim::noc::Coord{tgt.x, tgt.y});
    }
    CHECK(nerr[0].src == sim::noc::Coord{e.x, e.y});  // the write: its source is the issuer
}

// The benchmark kernels (benchmarks/eth_bench) stay correct: a short run of each, checked.
TEST_CASE("eth latency kernel: round trips complete, no faster than the wire",
          "[sim][eth][bench]") {
    Rig rig(2);
    rig.connect(0, 0, 1, 0);
    const Core m = rig.eth(0, 0), s = rig.eth(1, 0);
    protocol::EthLatencyArgs a{};
    a.samples = 8;
    a.packet_bytes = 1024;
    a.buf_base = rig.l1_base();
    a.timeout_us = 1000;
    rig.launch(s, "eth_latency", KernelRole::Subordinate, a);
    rig.launch(m, "eth_latency", KernelRole::Master, a);
    const auto report = rig.run(1'000'000);
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, m);
    REQUIRE_KERNEL_PASSED(rig, s);
    const auto r = rig.results<protocol::EthLatencyResults>(m);
    CHECK(r.samples_done == a.samples);
    const uint32_t wire = 2 * (500 + (1024 + 50) * 8 / 100);  // 2 x (latency + serialization)
    CHECK(r.rtt_min >= wire);
    CHECK(r.rtt_max <= wire + 400);  // send programming and polling on both ends
    require_no_txq_errors(rig, {m, s});
}

TEST_CASE("eth ring kernel: a token goes around four chips, every hop over Ethernet and the NOC",
          "[sim][eth][bench][ring]") {
    const uint32_t chips = 4, laps = 4;
    Rig rig(chips);
    for (uint32_t i = 0; i < chips; ++i) rig.connect(i, 0, (i + 1) % chips, 1);
    const uint32_t gx = rig.chip(0).spec().grid_x, gy = rig.chip(0).spec().grid_y;
    protocol::EthRingArgs a{};
    a.samples = laps;
    a.packet_bytes = 64;
    a.buf_base = rig.l1_base();
    a.noc = 1;
    a.token_stream = 8;
    a.credit_stream = 9;
    a.timeout_us = 1000;
    std::vector<Core> all;
    for (uint32_t i = 0; i < chips; ++i) {
        const Core fwd = rig.eth(i, 0), rcv = rig.eth(i, 1);
        protocol::EthRingArgs r = a;
        r.partner_x = gx - 1 - fwd.x;  // NOC1 coordinates of the Forwarder
        r.partner_y = gy - 1 - fwd.y;
        rig.launch(fwd, "eth_ring", KernelRole::Forwarder, a);
        rig.launch(rcv, "eth_ring", i == 0 ? KernelRole::Master : KernelRole::Subordinate, r);
        all.push_back(fwd);
        all.push_back(rcv);
    }
    const auto report = rig.run(2'000'000);
    REQUIRE(report.done);
    for (const Core& c : all) {
        REQUIRE_KERNEL_PASSED(rig, c);
        CHECK(rig.results<protocol::EthRingResults>(c).laps_done == laps + 1);  // + the warm-up lap
        // Every kernel left its streams at 0 for the next one.
        CHECK(rig.chip(c.chip).streams(c.x, c.y).words_free(a.token_stream) == 0);
        CHECK(rig.chip(c.chip).streams(c.x, c.y).words_free(a.credit_stream) == 0);
    }
    const auto r = rig.results<protocol::EthRingResults>(rig.eth(0, 1));
    // A lap is at least `chips` one-way link latencies.
    CHECK(r.lap_min >= chips * (500 + (64 + 50) * 8 / 100));
    CHECK(r.lap_min <= r.lap_max);
    require_no_txq_errors(rig, all);
}
