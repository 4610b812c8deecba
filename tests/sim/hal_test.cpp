// Every HAL call from firmware running in the model (firmware/tests/hal_*_test, streams_test,
// clock_wait_test): the kernels check what they can see themselves; these tests check the kernels
// passed and then everything the host can see exactly: memory byte for byte, NIU counter deltas,
// stream registers, TX queue counters, link statistics, and that the model recorded no error.
#include <catch2/catch.hpp>

#include "fw_harness.h"
#include "hal/encoding.h"
#include "hal/status.h"

using protocol::KernelRole;
using simfw::Core;
using simfw::Rig;

namespace {

uint32_t st(hal::Status s) {
    return static_cast<uint32_t>(s);
}

void require_no_model_errors(Rig& rig, uint32_t chips) {
    for (uint32_t c = 0; c < chips; ++c) {
        sim::Chip& chip = rig.chip(c);
        for (const auto& e : chip.network().errors())
            FAIL_CHECK("chip " << c << ": " << sim::noc::to_string(e));
        for (uint32_t n = 0; n < chip.eth_channels(); ++n) {
            const auto e = chip.eth_core(n);
            if (!chip.instantiated(e.x, e.y)) continue;
            for (const auto& err : chip.txq(e.x, e.y)->errors())
                FAIL_CHECK("chip " << c << " eth " << n << ": " << err);
        }
    }
}

}  // namespace

TEST_CASE("hal noc: every NOC call from firmware, exact data and NIU counters", "[sim][hal][noc]") {
    const hal::Arch arch = GENERATE(hal::Arch::WormholeB0, hal::Arch::Blackhole);
    Rig rig(1, arch);
    const hal::ArchMap& a = rig.arch();
    INFO(a.name);
    const Core drv = rig.eth(0, 0);
    const Core tgt = rig.eth(0, 1);
    const uint32_t base = rig.l1_base();
    // Two requests on WH (8 KiB bursts), one on BH (16 KiB). The last request is long enough
    // (>= 4 KiB) that it is still in flight when the kernel checks "flushed" right after issue.
    const uint32_t T = 8192 + 4096;
    protocol::HalNocArgs args{};
    args.target_x = tgt.x;
    args.target_y = tgt.y;
    args.grid_x = rig.chip(0).spec().grid_x;
    args.grid_y = rig.chip(0).spec().grid_y;
    args.transfer_bytes = T;
    args.target_a = base;
    args.target_b = base + 0x3000;
    args.target_words = base + 0x6000;
    args.target_counter = base + 0x6010;
    args.local_src = base;
    args.local_dst = base + 0x3000;
    args.local_atomic_ret = base + 0x6000;
    rig.write32(tgt, args.target_counter, protocol::kHalNocCounterInit);
    rig.launch(drv, "hal_noc_test", KernelRole::Master, args);

    const auto report = rig.run(2'000'000);
    INFO(rig.describe(drv));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, drv);
    const auto r = rig.results<protocol::HalNocResults>(drv);

    // Own coordinates: NOC1 mirrors both axes.
    CHECK(r.self_noc0 == protocol::pack_xy(drv.x, drv.y));
    CHECK(r.self_noc1 == protocol::pack_xy(args.grid_x - 1 - drv.x, args.grid_y - 1 - drv.y));
    CHECK(r.arg_errors_checked == 19);

    // Target memory. Region A: the NOC0 write, then the transaction-ID writes put 4 KiB of the
    // then-current source (pattern B) at its start.
    const auto words_a = rig.read_words(tgt, args.target_a, T / 4);
    uint32_t bad_a = 0;
    for (uint32_t i = 0; i < T / 4; ++i) {
        const uint32_t want =
            protocol::pattern_word(i < 1024 ? protocol::kHalNocSeedB : protocol::kHalNocSeedA, i);
        if (words_a[i] != want) ++bad_a;
    }
    CHECK(bad_a == 0);
    CHECK(rig.pattern_mismatches(tgt, args.target_b, T, protocol::kHalNocSeedB) == 0);
    const bool wh = arch == hal::Arch::WormholeB0;
    const std::vector<uint32_t> inline_words =
        wh ? std::vector<uint32_t>{protocol::kHalNocInlineValue0, protocol::kHalNocInlineValue1,
                                   0x0000A500u, 0}
           : std::vector<uint32_t>{0, 0, 0, 0};  // Blackhole: inline writes to L1 refused (BH-86)
    CHECK(rig.read_words(tgt, args.target_words, 4) == inline_words);
    // Counter: +5, +7 (posted), +1, +0x10 wrapping at bit 7 (0xFD -> 0x0D), +0x100 on NOC1.
    CHECK(rig.read32(tgt, args.target_counter) == 0x1200010Du);
    CHECK(r.atomic_old_first == protocol::kHalNocCounterInit);
    CHECK(r.atomic_old_second == protocol::kHalNocCounterInit + 12);
    CHECK(r.atomic_old_wrap == protocol::kHalNocCounterInit + 13);

    // NIU counters, exactly what was issued.
    const uint32_t chunks = wh ? 2 : 1;
    const uint32_t inl0 = wh ? 2 : 0, inl1 = wh ? 1 : 0;
    CHECK(r.noc0.nonposted_wr_req_sent == chunks + 3 + inl0);
    CHECK(r.noc0.wr_ack_received == chunks + 3 + inl0);
    CHECK(r.noc0.rd_resp_received == chunks);
    CHECK(r.noc0.atomic_resp_received == 3);
    CHECK(r.noc0.posted_atomic_sent == 1);
    CHECK(r.noc0.posted_wr_req_sent == 0);
    CHECK(r.noc1.nonposted_wr_req_sent == 0);
    CHECK(r.noc1.wr_ack_received == 0);
    CHECK(r.noc1.rd_resp_received == 2 * chunks + 1);
    CHECK(r.noc1.atomic_resp_received == 1);
    CHECK(r.noc1.posted_atomic_sent == 0);
    CHECK(r.noc1.posted_wr_req_sent == chunks + inl1);

    // What the completion checks said at the instants that matter. (Whether "sent" can be seen
    // before "flushed" depends on the poll loop: on this core one pass of wait_until takes about as
    // long as an ack takes to come back, so the tests do not rely on seeing it.)
    CHECK(r.trid_outstanding_at_issue == 1);
    const uint32_t want_flags =
        protocol::kFlagNotFlushedAtIssue | protocol::kFlagTridNotFlushedAtIssue |
        protocol::kFlagSentWhenFlushed | protocol::kFlagTridFlushedAfter |
        protocol::kFlagPostedSent | protocol::kFlagTridWritesSent |
        (wh ? 0u : static_cast<uint32_t>(protocol::kFlagBlackholeInlineRefused));
    CHECK(r.flags == want_flags);
    require_no_model_errors(rig, 1);
}

TEST_CASE("hal eth: sends on TXQ0/TXQ1, remote register writes, refused TXQ1 remote write, busy",
          "[sim][hal][eth]") {
    const hal::Arch arch = GENERATE(hal::Arch::WormholeB0, hal::Arch::Blackhole);
    Rig rig(2, arch);
    const hal::ArchMap& a = rig.arch();
    INFO(a.name);
    rig.connect(0, 0, 1, 3);
    const Core e = rig.eth(0, 0);
    const Core peer = rig.eth(1, 3);
    const uint32_t base = rig.l1_base();
    protocol::HalEthArgs args{};
    args.local_src = base;
    args.size_a = 4096;
    args.size_b = 2048;
    args.busy_bytes = 16384;
    args.peer_a = base;
    args.peer_b = base + 0x2000;
    args.peer_busy = base + 0x4000;
    args.peer_stream = 5;
    args.peer_scratch_value = 0x5CA7C4ED;
    args.timeout_us = 1000;
    rig.launch(e, "hal_eth_test", KernelRole::Master, args);
    const auto report = rig.run(2'000'000);
    INFO(rig.describe(e));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, e);
    REQUIRE(rig.drain_links());
    const auto r = rig.results<protocol::HalEthResults>(e);

    CHECK(r.arg_errors_checked == 12);
    CHECK(r.q1_remote_try_status == st(hal::Status::Unsupported));
    CHECK(r.q1_remote_wait_status == st(hal::Status::Unsupported));
    CHECK(r.busy_try_send_status == st(hal::Status::Busy));
    CHECK(r.busy_try_reg_status == st(hal::Status::Busy));
    // 16 KiB = 12 frames (11 x 1488 + 16); TXQ0 is busy until the last frame is taken, 11 frame
    // times after the first: 11 x (1488 + 50) B / 12.5 B per cycle at 100 Gb/s and 1 GHz (WH).
    // The kernel's clock reads bracket the send programming, two refused calls and the polling
    // loop: about 100 cycles more.
    const double frame_cycles = (1488.0 + 50.0) * 8.0 * a.aiclk_mhz / 100'000.0;
    CHECK(r.busy_cycles >= static_cast<uint32_t>(11 * frame_cycles));
    CHECK(r.busy_cycles <= static_cast<uint32_t>(11 * frame_cycles) + 150);
    CHECK(r.q0_transfer_cnt == 5);  // busy send, send A, 3 remote register writes
    CHECK(r.q1_transfer_cnt == 1);  // send B

    // The peer has every byte and both remote register effects.
    CHECK(rig.pattern_mismatches(peer, args.peer_a, args.size_a, protocol::kHalEthSeedA) == 0);
    CHECK(rig.pattern_mismatches(peer, args.peer_b, args.size_b, protocol::kHalEthSeedB) == 0);
    CHECK(rig.pattern_mismatches(peer, args.peer_busy, args.busy_bytes,
                                 protocol::kHalEthSeedBusy) == 0);
    CHECK(rig.chip(1).streams(peer.x, peer.y).words_free(5) ==
          protocol::kHalEthRemoteDelta1 + protocol::kHalEthRemoteDelta2);
    CHECK(rig.read32(peer, hal::stream::reg_addr(5, a.stream.remote_src)) ==
          args.peer_scratch_value);
    // Nothing else arrived.
    CHECK(rig.read_words(peer, args.peer_a + args.size_a, 4) == std::vector<uint32_t>(4, 0));
    const auto& ab = rig.link(e).stats(sim::eth::Dir::AtoB);
    CHECK(ab.bytes_delivered == args.size_a + args.size_b + args.busy_bytes);
    CHECK(ab.reg_writes_delivered == 3);
    CHECK(ab.commands_completed == 6);
    CHECK(ab.frames_retransmitted == 0);
    require_no_model_errors(rig, 2);
}

TEST_CASE("hal streams: local read/add/reset, remote increments over the NOC and over Ethernet",
          "[sim][hal][streams]") {
    const hal::Arch arch = GENERATE(hal::Arch::WormholeB0, hal::Arch::Blackhole);
    Rig rig(2, arch);
    INFO(rig.arch().name);
    rig.connect(0, 0, 1, 0);
    const Core m = rig.eth(0, 0);
    const Core s = rig.eth(1, 0);
    const Core n = rig.eth(0, 1);  // same-chip neighbour, passive
    protocol::StreamsArgs args{};
    args.local_stream = 2;
    args.neighbor_x = n.x;
    args.neighbor_y = n.y;
    args.neighbor_stream = 3;
    args.local_readback = rig.l1_base();
    args.peer_stream = 4;
    args.answer_stream = 6;
    args.timeout_us = 1000;
    rig.chip(0).tile(n.x, n.y);  // instantiate the neighbour so the NOC reaches it
    rig.launch(s, "streams_test", KernelRole::Subordinate, args);
    rig.launch(m, "streams_test", KernelRole::Master, args);
    const auto report = rig.run(2'000'000);
    INFO(rig.describe(m));
    INFO(rig.describe(s));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, m);
    REQUIRE_KERNEL_PASSED(rig, s);
    const auto rm = rig.results<protocol::StreamsResults>(m);
    const auto rs = rig.results<protocol::StreamsResults>(s);
    CHECK(rm.local_after_add == 3);
    CHECK(rm.local_after_wrap == 0);
    CHECK(rm.local_scratch == protocol::kStreamsScratchValue);
    CHECK(rm.neighbor_readback == static_cast<uint32_t>(protocol::kStreamsNocDelta));
    CHECK(rm.observed == static_cast<uint32_t>(protocol::kStreamsAnswerDelta));
    CHECK(rs.observed == static_cast<uint32_t>(protocol::kStreamsEthDelta));
    // The counters as the model holds them.
    CHECK(rig.chip(0).streams(m.x, m.y).words_free(2) == 2);  // loopback increment through the NIU
    CHECK(rig.chip(0).streams(m.x, m.y).words_free(6) ==
          static_cast<uint32_t>(protocol::kStreamsAnswerDelta));
    CHECK(rig.chip(0).streams(n.x, n.y).words_free(3) ==
          static_cast<uint32_t>(protocol::kStreamsNocDelta));
    CHECK(rig.chip(1).streams(s.x, s.y).words_free(4) ==
          static_cast<uint32_t>(protocol::kStreamsEthDelta));
    require_no_model_errors(rig, 2);
}

TEST_CASE("hal clock: wall clock, deadlines, timeout and the termination escape",
          "[sim][hal][clock]") {
    Rig rig(1);
    const Core c = rig.eth(0, 0);
    protocol::ClockWaitArgs args{};
    args.timeout_cycles = 5000;
    args.long_wait_us = 1'000'000;  // 1 s: far beyond this test's cycle budget
    rig.launch(c, "clock_wait_test", KernelRole::Master, args);
    auto phase = [&] { return rig.results<protocol::ClockWaitResults>(c).phase; };
    REQUIRE(rig.run_until(
        [&] {
            return phase() ==
                   static_cast<uint32_t>(protocol::ClockWaitPhase::WaitingForTermination);
        },
        200'000));
    // Still waiting a while later: the wait does not end on its own.
    rig.cluster().step(5'000);
    REQUIRE(rig.state(c) == sim::RunState::Running);
    REQUIRE(rig.mailbox(c).status == static_cast<uint32_t>(protocol::TestStatus::Running));
    // The tile was created at cycle 0, so its wall clock reads the cluster's cycle.
    const uint64_t asked = rig.cluster().cycle();
    rig.terminate(c);
    const auto report = rig.run(100'000);
    REQUIRE(report.done);
    INFO(rig.describe(c));
    REQUIRE_KERNEL_PASSED(rig, c);
    CHECK(report.cycles < 1000);  // the wait ended, then the kernel published and exited
    const auto r = rig.results<protocol::ClockWaitResults>(c);
    CHECK(r.phase == static_cast<uint32_t>(protocol::ClockWaitPhase::Finished));
    CHECK(r.back_to_back_cycles >= 1);
    CHECK(r.back_to_back_cycles <= 20);
    CHECK(r.wall_minus_mcycle <= 8);
    CHECK(r.timeout_status == st(hal::Status::Timeout));
    CHECK(r.timeout_elapsed >= args.timeout_cycles);
    CHECK(r.timeout_elapsed <= args.timeout_cycles + 60);  // one poll of the wait loop
    CHECK(r.already_true_status == st(hal::Status::Ok));
    CHECK(r.after_us_cycles >= 3000);  // 3 us at 1 GHz, plus the clock read in between
    CHECK(r.after_us_cycles <= 3020);
    CHECK(r.termination_status == st(hal::Status::Terminated));
    // The wait returned within one poll of the host's write (wall clock == cluster cycle).
    INFO("termination written at " << asked << ", wait returned at " << r.long_wait_end_lo);
    CHECK(r.long_wait_end_lo >= static_cast<uint32_t>(asked));
    CHECK(r.long_wait_end_lo <= static_cast<uint32_t>(asked) + 40);
    CHECK(r.long_wait_start_lo < static_cast<uint32_t>(asked) - 4'000);
}
