// Fault hooks: link down/up, extra delay, dropped frames recovered by Go-Back-N (NAK and
// retransmit-timeout paths), the Go-Back-N window, random drops, determinism.
#include <catch2/catch.hpp>
#include <map>
#include <tuple>

#include "eth_test_util.h"

using namespace eth_test;
namespace he = hal::eth;
using sim::eth::Completion;
using sim::eth::LinkStats;

namespace {

bool same(const LinkStats& a, const LinkStats& b) {
    return std::tie(a.frames_sent, a.frames_retransmitted, a.frames_dropped, a.frames_discarded,
                    a.frames_delivered, a.bytes_delivered, a.reg_writes_delivered,
                    a.commands_completed, a.wire_bytes, a.busy_cycles, a.busy_ticks, a.naks,
                    a.timeouts, a.go_backs) ==
           std::tie(b.frames_sent, b.frames_retransmitted, b.frames_dropped, b.frames_discarded,
                    b.frames_delivered, b.bytes_delivered, b.reg_writes_delivered,
                    b.commands_completed, b.wire_bytes, b.busy_cycles, b.busy_ticks, b.naks,
                    b.timeouts, b.go_backs);
}

}  // namespace

TEST_CASE("link down mid-transfer then up: every byte lands and nothing is resent",
          "[link][fault]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    const uint32_t size = 16384;
    const auto data = pattern(size, 31);
    p.mem_a.fill(0, data);
    program_send(p.txq_a, 0, 0, 0x20000, size);
    const uint64_t f = tm.wire_units(kFrame + cfg.frame_overhead_bytes);  // one full frame
    // Down while the second frame is on the wire (it still lands); the third cannot start.
    const uint64_t down_at = 200;
    REQUIRE(down_at * tm.cycle_units() > f);
    REQUIRE(down_at * tm.cycle_units() < 2 * f);
    p.link.run(down_at);
    p.link.set_up(false);
    const uint64_t up_at = down_at + 3000;  // longer than the retransmit timeout
    p.link.run(up_at - down_at);
    CHECK(p.mem_b.log().size() == 2);
    CHECK(p.mem_b.bytes(0x20000, 2 * kFrame) ==
          std::vector<uint8_t>(data.begin(), data.begin() + 2 * kFrame));
    CHECK(p.txq_a.busy(0));
    CHECK(p.link.stats(Dir::AtoB).frames_sent == 2);
    p.link.set_up(true);
    run_until_idle(p.link);
    // The remaining frames go back to back from the cycle the link came up.
    const uint64_t land = tm.visible_cycle(
        up_at * tm.cycle_units() +
        tm.wire_units(tm.wire_bytes(size) - 2 * (kFrame + cfg.frame_overhead_bytes)) +
        tm.latency_units());
    REQUIRE(p.link.completions(Dir::AtoB).size() == 1);
    CHECK(p.link.completions(Dir::AtoB)[0].cycle == land);
    CHECK(p.mem_b.bytes(0x20000, size) == data);
    const auto& st = p.link.stats(Dir::AtoB);
    CHECK(st.frames_sent == tm.frames(size));
    CHECK(st.frames_retransmitted == 0);
    CHECK(st.timeouts == 0);
    CHECK(st.bytes_delivered == size);
    CHECK(p.txq_a.errors().empty());
}

TEST_CASE("extra delay adds to the latency and frames never overtake each other", "[link][fault]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    p.mem_a.fill(0, pattern(4096, 32));
    p.link.set_extra_delay(Dir::AtoB, 300);
    program_send(p.txq_a, 0, 0, 0x10000, 1024);
    run_until_idle(p.link);
    const uint64_t land = tm.visible_cycle(tm.wire_units(1024 + cfg.frame_overhead_bytes) +
                                           tm.latency_units() + 300 * tm.cycle_units());
    CHECK(p.link.completions(Dir::AtoB).at(0).cycle == land);

    // A frame sent after the delay drops back to normal does not pass one still in flight.
    p.link.set_extra_delay(Dir::AtoB, 1000);
    program_send(p.txq_a, 0, 0, 0x20000, kFrame);
    p.link.step();
    p.link.set_extra_delay(Dir::AtoB, 0);
    program_send(p.txq_a, 1, 0, 0x30000, 16);
    run_until_idle(p.link);
    const auto& done = p.link.completions(Dir::AtoB);
    REQUIRE(done.size() == 3);
    CHECK(done[1].dest == 0x20000);
    CHECK(done[2].dest == 0x30000);
    CHECK(done[2].cycle == done[1].cycle);
    CHECK(p.mem_b.log().back() == CoreMemory::WriteRec{0x30000, 16});
}

TEST_CASE("a dropped frame is recovered by Go-Back-N after a NAK", "[link][fault][gbn]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    const uint32_t frames = 8;
    const uint32_t size = frames * kFrame;
    const auto data = pattern(size, 33);
    p.mem_a.fill(0, data);
    p.link.drop_frame(Dir::AtoB, 2);
    program_send(p.txq_a, 0, 0, 0x10000, size);
    run_until_idle(p.link);

    // All 8 frames are on the wire before the NAK can come back (8F < 4F + 2L): the receiver
    // discards frames 3..7, NAKs once when frame 3 arrives (4F + L); the NAK reaches the sender at
    // 4F + 2L and frames 2..7 go again, back to back.
    const uint64_t f = tm.wire_units(kFrame + cfg.frame_overhead_bytes);
    const uint64_t l = tm.latency_units();
    REQUIRE(frames * f < 4 * f + 2 * l);
    const uint64_t land = tm.visible_cycle(4 * f + 2 * l + 6 * f + l);
    REQUIRE(p.link.completions(Dir::AtoB).size() == 1);
    CHECK(p.link.completions(Dir::AtoB)[0].cycle == land);
    CHECK(p.mem_b.bytes(0x10000, size) == data);

    const auto& st = p.link.stats(Dir::AtoB);
    CHECK(st.frames_sent == 14);
    CHECK(st.frames_retransmitted == 6);
    CHECK(st.frames_dropped == 1);
    CHECK(st.frames_discarded == 5);
    CHECK(st.frames_delivered == 8);
    CHECK(st.bytes_delivered == size);
    CHECK(st.naks == 1);
    CHECK(st.timeouts == 0);
    CHECK(st.go_backs == 1);
    CHECK(rd(p.txq_a, 0, he::kTxqResendCnt) == 6);
    CHECK(rd(p.txq_a, 0, he::kTxqPktStartCnt) == 14);
    CHECK(rd(p.txq_a, 0, he::kTxqTransferCnt) == 1);
    // Each frame was written exactly once, in order.
    REQUIRE(p.mem_b.log().size() == frames);
    for (uint32_t k = 0; k < frames; ++k) {
        CHECK(p.mem_b.log()[k] == CoreMemory::WriteRec{0x10000 + k * kFrame, kFrame});
    }
    CHECK(p.link.rx_expected_seq(Dir::AtoB, 0) == frames);
    CHECK(p.txq_a.errors().empty());
}

TEST_CASE("a dropped last frame is recovered by the retransmit timeout", "[link][fault][gbn]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    const uint32_t size = 3 * kFrame;
    const auto data = pattern(size, 34);
    p.mem_a.fill(0, data);
    p.link.drop_frame(Dir::AtoB, 2);
    program_send(p.txq_a, 0, 0, 0x10000, size);
    run_until_idle(p.link);
    // No later frame reveals the gap. The sender's timer restarts on the last acknowledgement
    // progress (frame 1's ACK at 2F + 2L) and fires T later; frame 2 goes again.
    const uint64_t f = tm.wire_units(kFrame + cfg.frame_overhead_bytes);
    const uint64_t l = tm.latency_units();
    const uint64_t t = uint64_t{cfg.retransmit_timeout_cycles} * tm.cycle_units();
    const uint64_t land = tm.visible_cycle(2 * f + 2 * l + t + f + l);
    CHECK(p.link.completions(Dir::AtoB).at(0).cycle == land);
    CHECK(p.mem_b.bytes(0x10000, size) == data);
    const auto& st = p.link.stats(Dir::AtoB);
    CHECK(st.frames_sent == 4);
    CHECK(st.frames_retransmitted == 1);
    CHECK(st.frames_dropped == 1);
    CHECK(st.frames_discarded == 0);
    CHECK(st.naks == 0);
    CHECK(st.timeouts == 1);
    CHECK(p.mem_b.log().size() == 3);
}

TEST_CASE("a dropped resend: the NAK is not repeated and the timeout recovers",
          "[link][fault][gbn]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    const uint32_t size = 8 * kFrame;
    const auto data = pattern(size, 35);
    p.mem_a.fill(0, data);
    p.link.drop_frame(Dir::AtoB, 2);  // frame 2
    p.link.drop_frame(Dir::AtoB, 8);  // its first resend (transmission 8)
    program_send(p.txq_a, 0, 0, 0x10000, size);
    run_until_idle(p.link);
    // First go-back at the NAK (4F + 2L), which also restarts the timer; nothing is acknowledged
    // after it, so the timer fires T later and frames 2..7 go a third time.
    const uint64_t f = tm.wire_units(kFrame + cfg.frame_overhead_bytes);
    const uint64_t l = tm.latency_units();
    const uint64_t t = uint64_t{cfg.retransmit_timeout_cycles} * tm.cycle_units();
    const uint64_t land = tm.visible_cycle(4 * f + 2 * l + t + 6 * f + l);
    CHECK(p.link.completions(Dir::AtoB).at(0).cycle == land);
    CHECK(p.mem_b.bytes(0x10000, size) == data);
    const auto& st = p.link.stats(Dir::AtoB);
    CHECK(st.frames_sent == 20);
    CHECK(st.frames_retransmitted == 12);
    CHECK(st.frames_dropped == 2);
    CHECK(st.frames_discarded == 10);
    CHECK(st.naks == 1);
    CHECK(st.timeouts == 1);
    CHECK(st.go_backs == 2);
    CHECK(p.mem_b.log().size() == 8);
}

TEST_CASE("a dropped remote register write is resent", "[link][fault][gbn]") {
    Pair p;
    p.link.drop_frame(Dir::AtoB, 0);
    program_reg_write(p.txq_a, 0, 0xFFB40010, 0x1234);
    run_until_idle(p.link);
    const std::vector<CoreMemory::RegWrite> expect{{0xFFB40010, 0x1234}};
    CHECK(p.mem_b.reg_log() == expect);
    CHECK(p.link.stats(Dir::AtoB).timeouts == 1);
    CHECK(p.link.stats(Dir::AtoB).frames_retransmitted == 1);
}

TEST_CASE("a dropped last frame is resent on a link whose up windows are shorter than the timeout",
          "[link][fault][gbn]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    const uint64_t window = cfg.retransmit_timeout_cycles / 2;  // up, down, up, down, ...
    p.link.drop_frame(Dir::AtoB, 0);
    program_reg_write(p.txq_a, 0, 0xFFB54088, 0x40);
    for (uint64_t c = 0; c < 10 * window; c += window) {
        p.link.run(window);
        p.link.set_up(!p.link.up());
    }
    p.link.set_up(true);
    run_until_idle(p.link);
    // The timer counts up time only: half the timeout in the first up window, the other half in
    // the second, which ends at 3 windows, just as it would fire; it fires as the third opens.
    const uint64_t resend = 4 * window * tm.cycle_units();
    const uint64_t land = tm.visible_cycle(
        resend + tm.wire_units(sim::eth::kRegWritePayloadBytes + cfg.frame_overhead_bytes) +
        tm.latency_units());
    const std::vector<CoreMemory::RegWrite> expect{{0xFFB54088, 0x40}};
    CHECK(p.mem_b.reg_log() == expect);
    CHECK(p.link.completions(Dir::AtoB).at(0).cycle == land);
    CHECK(p.link.stats(Dir::AtoB).timeouts == 1);
    CHECK(p.link.stats(Dir::AtoB).frames_retransmitted == 1);
}

TEST_CASE("the Go-Back-N window bounds unacknowledged frames", "[link][gbn]") {
    LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    cfg.window_frames = 4;
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    p.mem_a.fill(0, pattern(16, 36));
    for (uint32_t i = 0; i < 5; ++i) {
        run_until(p.link, [&] { return !p.txq_a.busy(0); });
        program_send(p.txq_a, 0, 0, 0x1000 + 16 * i, 16);
    }
    run_until_idle(p.link);
    // The fifth frame waits for the first ACK (F + 2L) and lands F + L after that.
    const uint64_t f = tm.wire_units(16 + cfg.frame_overhead_bytes);
    const uint64_t l = tm.latency_units();
    const auto& done = p.link.completions(Dir::AtoB);
    REQUIRE(done.size() == 5);
    CHECK(done[4].cycle == tm.visible_cycle(f + 2 * l + f + l));
    CHECK(done[3].cycle < done[0].cycle + 4 * 6);  // the first four go back to back
    CHECK(p.link.stats(Dir::AtoB).frames_retransmitted == 0);
}

namespace {

struct Outcome {
    LinkStats ab, ba;
    std::vector<Completion> done_ab, done_ba;
    std::vector<CoreMemory::WriteRec> log_a, log_b;
    std::vector<CoreMemory::RegWrite> regs_b;
    std::vector<sim::eth::TxqError> errors;
    uint64_t resend_regs = 0;
    bool settled_flapping = true;  // with a flap period: idle before the link stopped flapping
};

// Both directions, both queues, data and register writes, with frames dropped at `ppm` per million
// and, with a flap period, the link going down and up every flap_period cycles until it is idle.
Outcome lossy_run(uint64_t seed, uint32_t ppm, uint64_t flap_period = 0) {
    Pair p;
    p.link.set_drop_rate(Dir::AtoB, ppm, seed);
    p.link.set_drop_rate(Dir::BtoA, ppm, seed ^ 0x5555);
    // Sources: TXQ q sends from [q * 0x4000, +0x4000); command n of TXQ q lands in its own 16 KiB
    // region at kDst + (q * 6 + n) * 0x4000 of the peer, clear of the peer's own sources.
    constexpr uint32_t kDst = 0x8000;
    p.mem_a.fill(0, pattern(0x8000, 40));
    p.mem_b.fill(0, pattern(0x8000, 41));
    const uint32_t sizes[] = {16384, 48, 4096, 1504, 16, 9008};
    std::vector<uint32_t> plan_q0(std::begin(sizes), std::end(sizes));
    std::size_t next[2][2] = {{0, 0}, {0, 0}};  // [side][queue]
    uint32_t regs_sent = 0;
    while (true) {
        bool pending = false;
        for (uint32_t side = 0; side < 2; ++side) {
            TxQueues& t = side == 0 ? p.txq_a : p.txq_b;
            for (uint32_t q = 0; q < 2; ++q) {
                std::size_t& n = next[side][q];
                if (n < plan_q0.size()) {
                    pending = true;
                    if (!t.busy(q)) {
                        const uint32_t size = plan_q0[(n + q) % plan_q0.size()];
                        program_send(t, q, q * 0x4000,
                                     kDst + static_cast<uint32_t>(q * 6 + n) * 0x4000, size);
                        ++n;
                    }
                }
            }
            if (side == 0 && regs_sent < 20 && !p.txq_a.busy(0) && next[0][0] >= plan_q0.size()) {
                program_reg_write(p.txq_a, 0, 0xFFB40000 + 4 * regs_sent, regs_sent + 1);
                ++regs_sent;
                pending = true;
            }
        }
        if (!pending && regs_sent == 20) {
            break;
        }
        if (flap_period != 0 && p.link.cycle() % flap_period == 0) p.link.set_up(!p.link.up());
        p.link.step();
    }
    // A flapping link keeps flapping until everything has landed and been acknowledged.
    bool settled_flapping = flap_period == 0;
    for (uint64_t n = 0; !settled_flapping && n < 1'000'000; ++n) {
        if (p.link.cycle() % flap_period == 0) p.link.set_up(!p.link.up());
        p.link.step();
        settled_flapping = p.link.idle();
    }
    p.link.set_up(true);
    run_until_idle(p.link);
    // Every byte landed where it should, exactly once per frame, in order within each command.
    for (uint32_t side = 0; side < 2; ++side) {
        CoreMemory& src = side == 0 ? p.mem_a : p.mem_b;
        CoreMemory& dst = side == 0 ? p.mem_b : p.mem_a;
        for (uint32_t q = 0; q < 2; ++q) {
            for (std::size_t n = 0; n < plan_q0.size(); ++n) {
                const uint32_t size = plan_q0[(n + q) % plan_q0.size()];
                REQUIRE(dst.bytes(kDst + (q * 6 + static_cast<uint32_t>(n)) * 0x4000, size) ==
                        src.bytes(q * 0x4000, size));
            }
        }
        std::map<uint64_t, uint64_t>
            next_addr;  // per destination region: where the next frame lands
        for (const auto& w : dst.log()) {
            const uint64_t region = w.addr & ~uint64_t{0x3FFF};
            auto [it, fresh] = next_addr.try_emplace(region, region);
            REQUIRE(w.addr == it->second);
            it->second += w.size;
        }
    }
    REQUIRE(p.mem_b.reg_log().size() == 20);
    for (uint32_t i = 0; i < 20; ++i) {
        REQUIRE(p.mem_b.reg_log()[i] == CoreMemory::RegWrite{0xFFB40000 + 4 * i, i + 1});
    }
    Outcome o{p.link.stats(Dir::AtoB),
              p.link.stats(Dir::BtoA),
              p.link.completions(Dir::AtoB),
              p.link.completions(Dir::BtoA),
              p.mem_a.log(),
              p.mem_b.log(),
              p.mem_b.reg_log(),
              p.txq_a.errors(),
              0,
              settled_flapping};
    for (uint32_t q = 0; q < 2; ++q) {
        o.resend_regs += rd(p.txq_a, q, he::kTxqResendCnt);
    }
    return o;
}

}  // namespace

TEST_CASE("random drops: nothing lost or duplicated and counters consistent",
          "[link][fault][gbn]") {
    const uint64_t seed = GENERATE(1u, 2u, 3u);
    const Outcome o = lossy_run(seed, 100'000);  // 10 % of frames
    for (const LinkStats* st : {&o.ab, &o.ba}) {
        CHECK(st->frames_dropped > 0);
        // Every transmission is a first send (delivered exactly once) or a resend ...
        CHECK(st->frames_sent == st->frames_delivered + st->frames_retransmitted);
        // ... and ends dropped, discarded or delivered.
        CHECK(st->frames_sent == st->frames_delivered + st->frames_dropped + st->frames_discarded);
        CHECK(st->commands_completed == 12 + (st == &o.ab ? 20u : 0u));
    }
    CHECK(o.resend_regs == o.ab.frames_retransmitted);
    CHECK(o.errors.empty());
}

TEST_CASE("random drops on a flapping link: nothing lost or duplicated", "[link][fault][gbn]") {
    const uint64_t seed = GENERATE(1u, 2u, 3u, 4u, 5u, 6u);
    const uint64_t period = GENERATE(691u, 1152u, 1625u);
    const Outcome o = lossy_run(seed, 44'673, period);  // the campaign's failing rate and periods
    CHECK(o.settled_flapping);
    CHECK(o.ab.frames_dropped + o.ba.frames_dropped > 0);
    CHECK(o.errors.empty());
}

TEST_CASE("the model is deterministic", "[link][determinism]") {
    const Outcome a = lossy_run(7, 100'000);
    const Outcome b = lossy_run(7, 100'000);
    CHECK(same(a.ab, b.ab));
    CHECK(same(a.ba, b.ba));
    CHECK(a.done_ab == b.done_ab);
    CHECK(a.done_ba == b.done_ba);
    CHECK(a.log_a == b.log_a);
    CHECK(a.log_b == b.log_b);
    CHECK(a.regs_b == b.regs_b);
    // A different seed drops different frames (and still delivers everything).
    const Outcome c = lossy_run(8, 100'000);
    CHECK_FALSE((same(a.ab, c.ab) && a.done_ab == c.done_ab));
}

TEST_CASE("run(n) skips idle cycles with the same outcome as n step()s", "[link][determinism]") {
    auto scenario = [](bool use_run) {
        Pair p;
        p.mem_a.fill(0, pattern(0x8000, 70));
        p.link.drop_frame(Dir::AtoB, 3);
        p.link.drop_frame(Dir::AtoB, 12);  // the last frame of the second command: timeout path
        program_send(p.txq_a, 0, 0, 0x10000, 0x4000);
        program_send(p.txq_a, 1, 0x4000, 0x20000, 0x2000);
        program_reg_write(p.txq_b, 0, 0xFFB40000, 5);
        auto advance = [&](uint64_t n) {
            if (use_run) {
                p.link.run(n);
            } else {
                for (uint64_t i = 0; i < n; ++i) {
                    p.link.step();
                }
            }
        };
        advance(700);
        p.link.set_up(false);
        advance(2500);
        p.link.set_up(true);
        advance(6000);
        REQUIRE(p.link.idle());
        return std::make_tuple(p.link.stats(Dir::AtoB), p.link.completions(Dir::AtoB),
                               p.link.completions(Dir::BtoA), p.mem_b.log(), p.link.cycle());
    };
    const auto a = scenario(false);
    const auto b = scenario(true);
    CHECK(same(std::get<0>(a), std::get<0>(b)));
    CHECK(std::get<0>(a).frames_retransmitted > 0);
    CHECK(std::get<1>(a) == std::get<1>(b));
    CHECK(std::get<2>(a) == std::get<2>(b));
    CHECK(std::get<3>(a) == std::get<3>(b));
    CHECK(std::get<4>(a) == std::get<4>(b));
}
