// Link timing: a send lands byte-exact after exactly the modelled time; frames land as they
// arrive; remote register writes; achieved bandwidth against the theoretical curve.
#include <catch2/catch.hpp>
#include <cstdio>

#include "eth_test_util.h"

using namespace eth_test;
namespace he = hal::eth;
using sim::eth::CommandKind;
using sim::eth::Completion;

namespace {

struct Params {
    const hal::ArchMap* arch;
    uint32_t link_mbps;
    uint32_t latency;
    uint32_t overhead;
};

}  // namespace

TEST_CASE("a send lands byte-exact after exactly the modelled time", "[link][timing]") {
    const Params prm = GENERATE(Params{&hal::kWormholeB0, 100'000, 500, 50},  // the defaults
                                Params{&hal::kWormholeB0, 40'000, 37, 64},    // other parameters
                                Params{&hal::kBlackhole, 100'000, 500, 50});  // 1.35 GHz clock
    const uint32_t size = GENERATE(16u, 1024u, kFrame, kFrame + 16, 16384u);
    CAPTURE(prm.arch->name, prm.link_mbps, prm.latency, prm.overhead, size);
    LinkConfig cfg = LinkConfig::for_arch(*prm.arch);
    cfg.link_mbps = prm.link_mbps;
    cfg.latency_cycles = prm.latency;
    cfg.frame_overhead_bytes = prm.overhead;
    Pair p(*prm.arch, cfg);
    const Timing tm{cfg};

    const auto data = pattern(size, size);
    p.mem_a.fill(0x10000, data);
    p.link.run(17);
    const uint64_t c0 = p.link.cycle();
    program_send(p.txq_a, 0, 0x10000, 0x20000, size);

    // Back-to-back frames from c0, the last byte lands one latency after it left.
    const uint64_t land_units =
        c0 * tm.cycle_units() + tm.wire_units(tm.wire_bytes(size)) + tm.latency_units();
    const uint64_t land = tm.visible_cycle(land_units);
    p.link.run(land - 1 - c0);
    CHECK(p.mem_b.bytes(0x20000, size) != data);
    CHECK(p.link.completions(Dir::AtoB).empty());
    p.link.step();
    CHECK(p.mem_b.bytes(0x20000, size) == data);
    REQUIRE(p.link.completions(Dir::AtoB).size() == 1);
    CHECK(p.link.completions(Dir::AtoB)[0] ==
          Completion{land, 0, 1, CommandKind::Data, 0x20000, size});
    // Nothing else was touched; the reverse direction carried nothing.
    CHECK(p.mem_b.log().size() == tm.frames(size));
    CHECK(p.link.stats(Dir::BtoA).frames_sent == 0);
    CHECK(p.link.stats(Dir::AtoB).bytes_delivered == size);
    CHECK(p.link.stats(Dir::AtoB).wire_bytes == tm.wire_bytes(size));
    run_until_idle(p.link);
    CHECK(p.txq_a.errors().empty());
}

TEST_CASE("frames land in the peer as they arrive", "[link][timing]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    const uint32_t size = 16384;  // 11 x 1488 + 16
    const auto data = pattern(size, 99);
    p.mem_a.fill(0, data);
    program_send(p.txq_a, 0, 0, 0x20000, size);
    for (uint32_t k = 1; k <= tm.frames(size); ++k) {
        const uint32_t landed = std::min(size, k * kFrame);
        const uint64_t land =
            tm.visible_cycle(tm.wire_units(tm.wire_bytes(landed)) + tm.latency_units());
        run_until(p.link, [&] { return p.link.cycle() == land - 1; });
        CHECK(p.mem_b.log().size() == k - 1);
        p.link.step();
        REQUIRE(p.mem_b.log().size() == k);
        CHECK(p.mem_b.log().back() ==
              CoreMemory::WriteRec{0x20000 + (k - 1) * kFrame, landed - (k - 1) * kFrame});
        CHECK(p.mem_b.bytes(0x20000, landed) ==
              std::vector<uint8_t>(data.begin(), data.begin() + landed));
    }
}

TEST_CASE("a remote register write lands in the peer's register", "[link][timing]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    // A stream register on the peer (the words-free update register of stream 3).
    const uint32_t reg = hal::common::kStreamRegsBase + 3 * hal::common::kStreamRegSpace +
                         hal::kWormholeB0.stream.remote_dest_buf_space_available_update * 4;
    p.link.run(5);
    program_reg_write(p.txq_a, 0, reg, 0xCAFE0040);
    CHECK(p.txq_a.busy(0));
    // One TT-link word of payload plus the frame overhead.
    const uint64_t land =
        tm.visible_cycle(5 * tm.cycle_units() +
                         tm.wire_units(sim::eth::kRegWritePayloadBytes + cfg.frame_overhead_bytes) +
                         tm.latency_units());
    p.link.run(land - 1 - 5);
    CHECK(p.mem_b.reg_log().empty());
    p.link.step();
    const std::vector<CoreMemory::RegWrite> expect{{reg, 0xCAFE0040}};
    CHECK(p.mem_b.reg_log() == expect);
    CHECK(p.mem_b.log().empty());  // L1 untouched
    REQUIRE(p.link.completions(Dir::AtoB).size() == 1);
    CHECK(p.link.completions(Dir::AtoB)[0] ==
          Completion{land, 0, 1, CommandKind::RemoteRegWrite, reg, 4});
    CHECK(p.link.stats(Dir::AtoB).reg_writes_delivered == 1);
    CHECK(p.link.stats(Dir::AtoB).bytes_delivered == 0);

    // B answers A the same way.
    program_reg_write(p.txq_b, 0, reg + 4, 7);
    run_until_idle(p.link);
    CHECK(p.mem_a.reg(reg + 4) == 7);
}

namespace {

struct CurvePoint {
    uint32_t packet;
    double achieved;     // payload bytes per cycle
    double theoretical;  // payload / (payload + frames * overhead) * rate
    uint64_t cycles;
};

// Send `count` packets of `packet` bytes back to back on TXQ0, issuing each as soon as the queue
// is no longer busy (what a tight firmware loop does), and measure payload per cycle from the
// first CMD to the last landing, less the one-way latency.
CurvePoint measure(uint32_t packet, uint32_t count) {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    const uint32_t src = 0x1000;
    p.mem_a.fill(src, pattern(packet, packet));
    const uint64_t c0 = p.link.cycle();
    for (uint32_t i = 0; i < count; ++i) {
        run_until(p.link, [&] { return !p.txq_a.busy(0); });
        program_send(p.txq_a, 0, src, 0x20000, packet);
    }
    run_until_idle(p.link);
    const auto& st = p.link.stats(Dir::AtoB);
    REQUIRE(st.commands_completed == count);
    REQUIRE(st.bytes_delivered == uint64_t{packet} * count);
    REQUIRE(st.frames_retransmitted == 0);
    // The wire never went idle: the last packet lands exactly when back-to-back serialization of
    // everything plus one latency says it does.
    const uint64_t wire = tm.wire_bytes(packet) * count;
    const uint64_t land =
        tm.visible_cycle(c0 * tm.cycle_units() + tm.wire_units(wire) + tm.latency_units());
    REQUIRE(p.link.completions(Dir::AtoB).back().cycle == land);
    REQUIRE(st.busy_ticks * tm.cycle_units() == tm.wire_units(wire) * p.link.ticks_per_cycle());

    const uint64_t cycles = land - c0 - cfg.latency_cycles;
    const double rate = static_cast<double>(cfg.link_mbps) / (8.0 * cfg.clock_mhz);
    const double frames = static_cast<double>(tm.frames(packet));
    return CurvePoint{packet, static_cast<double>(st.bytes_delivered) / static_cast<double>(cycles),
                      packet / (packet + frames * cfg.frame_overhead_bytes) * rate, cycles};
}

uint32_t count_for(uint32_t packet) {
    return std::max<uint32_t>(64, (512 * 1024) / packet);
}

}  // namespace

TEST_CASE("achieved bandwidth follows the theoretical curve", "[link][bandwidth]") {
    const uint32_t packet =
        GENERATE(16u, 32u, 64u, 128u, 256u, 512u, 1024u, kFrame, 2048u, 4096u, 8192u, 16384u);
    const CurvePoint pt = measure(packet, count_for(packet));
    CAPTURE(packet, pt.achieved, pt.theoretical, pt.cycles);
    CHECK(pt.achieved == Approx(pt.theoretical).epsilon(0.002));
}

// Not a test: prints the curve (run with the tag to see it).
TEST_CASE("print the bandwidth curve", "[.figures]") {
    std::printf("%8s %12s %12s %10s\n", "packet", "achieved", "theoretical", "util");
    for (uint32_t packet :
         {16u, 32u, 64u, 128u, 256u, 512u, 1024u, kFrame, 2048u, 4096u, 8192u, 16384u}) {
        const CurvePoint pt = measure(packet, count_for(packet));
        std::printf("%8u %12.4f %12.4f %9.2f%%\n", packet, pt.achieved, pt.theoretical,
                    100.0 * pt.achieved / 12.5);
    }
}

// Not a test: one-way latency by size, and a ping-pong round trip (B answers the moment A's
// packet lands, as a polling ERISC with zero reaction time would).
TEST_CASE("print the latency figures", "[.figures]") {
    std::printf("%8s %18s %14s\n", "size", "one-way (cycles)", "ping-pong RTT");
    for (uint32_t size : {16u, 1024u, 4096u, 16384u}) {
        Pair p;
        p.mem_a.fill(0, pattern(size, 1));
        p.mem_b.fill(0, pattern(size, 2));
        program_send(p.txq_a, 0, 0, 0x20000, size);
        run_until(p.link, [&] { return !p.link.completions(Dir::AtoB).empty(); });
        const uint64_t one_way = p.link.cycle();
        program_send(p.txq_b, 0, 0, 0x20000, size);
        run_until(p.link, [&] { return !p.link.completions(Dir::BtoA).empty(); });
        std::printf("%8u %18llu %14llu\n", size, static_cast<unsigned long long>(one_way),
                    static_cast<unsigned long long>(p.link.cycle()));
    }
}

TEST_CASE("two queues share the wire: aggregate bandwidth is the wire's", "[link][bandwidth]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    const uint32_t packet = 4096;
    const uint32_t count = 32;
    p.mem_a.fill(0, pattern(2 * packet, 2));
    uint32_t issued[2] = {0, 0};
    while (issued[0] < count || issued[1] < count) {
        for (uint32_t q = 0; q < 2; ++q) {
            if (issued[q] < count && !p.txq_a.busy(q)) {
                program_send(p.txq_a, q, q * packet, 0x10000 + q * packet, packet);
                ++issued[q];
            }
        }
        p.link.step();
    }
    run_until_idle(p.link);
    const uint64_t wire = 2 * count * tm.wire_bytes(packet);
    const uint64_t land = tm.visible_cycle(tm.wire_units(wire) + tm.latency_units());
    CHECK(p.link.completions(Dir::AtoB).back().cycle == land);
    CHECK(p.link.stats(Dir::AtoB).bytes_delivered == 2ull * count * packet);
    CHECK(p.mem_b.bytes(0x10000, 2 * packet) == pattern(2 * packet, 2));
}

TEST_CASE("both directions run at full rate at once", "[link][bandwidth]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    p.mem_a.fill(0, pattern(16384, 10));
    p.mem_b.fill(0, pattern(16384, 11));
    program_send(p.txq_a, 0, 0, 0x20000, 16384);
    program_send(p.txq_b, 0, 0, 0x20000, 16384);
    run_until_idle(p.link);
    const uint64_t land =
        tm.visible_cycle(tm.wire_units(tm.wire_bytes(16384)) + tm.latency_units());
    CHECK(p.link.completions(Dir::AtoB).at(0).cycle == land);
    CHECK(p.link.completions(Dir::BtoA).at(0).cycle == land);
    CHECK(p.mem_b.bytes(0x20000, 16384) == pattern(16384, 10));
    CHECK(p.mem_a.bytes(0x20000, 16384) == pattern(16384, 11));
}
