// Ordering: commands complete in order within a queue; queues interleave frame by frame and may
// complete out of order relative to each other.
#include <catch2/catch.hpp>

#include "eth_test_util.h"

using namespace eth_test;
using sim::eth::CommandKind;
using sim::eth::Completion;

TEST_CASE("commands complete in issue order within a queue", "[link][order]") {
    Pair p;
    p.mem_a.fill(0, pattern(0x10000, 21));
    // Sizes chosen so a later, shorter command would overtake an earlier long one if it could.
    const uint32_t sizes[] = {16384, 16, 4096, 32, 1504, 16};
    uint32_t dst = 0x10000;
    std::vector<uint32_t> dsts;
    for (uint32_t size : sizes) {
        run_until(p.link, [&] { return !p.txq_a.busy(0); });
        program_send(p.txq_a, 0, 0, dst, size);
        dsts.push_back(dst);
        dst += 0x8000;
    }
    run_until_idle(p.link);
    const auto& done = p.link.completions(Dir::AtoB);
    REQUIRE(done.size() == std::size(sizes));
    for (std::size_t i = 0; i < done.size(); ++i) {
        CHECK(done[i].queue == 0);
        CHECK(done[i].command_id == i + 1);
        CHECK(done[i].dest == dsts[i]);
        CHECK(done[i].size == sizes[i]);
        if (i > 0) {
            CHECK(done[i].cycle > done[i - 1].cycle);
        }
        CHECK(p.mem_b.bytes(dsts[i], sizes[i]) == p.mem_a.bytes(0, sizes[i]));
    }
    // Frames landed strictly in order.
    uint32_t k = 0;
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
        for (uint32_t off = 0; off < sizes[i]; off += kFrame, ++k) {
            REQUIRE(k < p.mem_b.log().size());
            CHECK(p.mem_b.log()[k].addr == dsts[i] + off);
        }
    }
    CHECK(k == p.mem_b.log().size());
}

TEST_CASE("a short command on TXQ1 overtakes a long one on TXQ0", "[link][order]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    p.mem_a.fill(0, pattern(16384, 22));
    p.link.run(3);
    program_send(p.txq_a, 0, 0, 0x10000, 16384);  // 12 frames
    program_send(p.txq_a, 1, 0, 0x30000, 16);     // 1 frame, same cycle
    run_until_idle(p.link);
    // Round robin starts at TXQ0: its first frame, then TXQ1's only frame, then the rest of TXQ0.
    const uint64_t c0 = 3 * tm.cycle_units();
    const uint64_t q1_land = tm.visible_cycle(
        c0 + tm.wire_units(kFrame + 16 + 2 * cfg.frame_overhead_bytes) + tm.latency_units());
    const uint64_t q0_land =
        tm.visible_cycle(c0 + tm.wire_units(tm.wire_bytes(16384) + 16 + cfg.frame_overhead_bytes) +
                         tm.latency_units());
    const std::vector<Completion> expect{
        {q1_land, 1, 2, CommandKind::Data, 0x30000, 16},
        {q0_land, 0, 1, CommandKind::Data, 0x10000, 16384},
    };
    CHECK(p.link.completions(Dir::AtoB) == expect);
    CHECK(p.mem_b.log().at(0) == CoreMemory::WriteRec{0x10000, kFrame});
    CHECK(p.mem_b.log().at(1) == CoreMemory::WriteRec{0x30000, 16});
    CHECK(p.mem_b.log().at(2) == CoreMemory::WriteRec{0x10000 + kFrame, kFrame});
}

TEST_CASE("two busy queues interleave frame by frame", "[link][order]") {
    const hal::ArchMap& arch = GENERATE(std::cref(hal::kWormholeB0), std::cref(hal::kBlackhole));
    CAPTURE(arch.name);
    Pair p(arch, LinkConfig::for_arch(arch));
    p.mem_a.fill(0, pattern(0x6000, 23));
    const uint32_t nq = arch.eth_tx_queues;
    for (uint32_t q = 0; q < nq; ++q) {
        program_send(p.txq_a, q, q * 0x2000, 0x20000 + q * 0x2000, 3 * kFrame);  // 3 frames each
    }
    run_until_idle(p.link);
    const auto& log = p.mem_b.log();
    REQUIRE(log.size() == 3 * nq);
    for (uint32_t k = 0; k < log.size(); ++k) {
        const uint32_t q = k % nq;
        const uint32_t frame = k / nq;
        CHECK(log[k] == CoreMemory::WriteRec{0x20000 + q * 0x2000 + frame * kFrame, kFrame});
    }
    for (uint32_t q = 0; q < nq; ++q) {
        CHECK(p.mem_b.bytes(0x20000 + q * 0x2000, 3 * kFrame) ==
              p.mem_a.bytes(q * 0x2000, 3 * kFrame));
    }
    // Each queue's command completes when its own last frame lands: in queue order here.
    const auto& done = p.link.completions(Dir::AtoB);
    REQUIRE(done.size() == nq);
    for (uint32_t q = 0; q < nq; ++q) {
        CHECK(done[q].queue == q);
    }
}

TEST_CASE("completions can be drained or not recorded", "[link]") {
    for (bool record : {true, false}) {
        LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
        cfg.record_completions = record;
        Pair p(hal::kWormholeB0, cfg);
        program_send(p.txq_a, 0, 0, 0x10000, 64);
        program_send(p.txq_a, 1, 0, 0x20000, 64);
        run_until_idle(p.link);
        CHECK(p.link.stats(Dir::AtoB).commands_completed == 2);
        const auto taken = p.link.take_completions(Dir::AtoB);
        CHECK(taken.size() == (record ? 2u : 0u));
        CHECK(p.link.completions(Dir::AtoB).empty());
    }
}
