// The link's two sides stepped on their own (Link "Sides", what parallel simulation does): side A
// and side B each run a window of up to latency_cycles alone, in split mode, and what crossed is
// handed over at the window's end. The outcome must be the unsplit link's, exactly: statistics,
// completion records, every write into either memory in order, the TX queues' errors and counters.
#include <catch2/catch.hpp>
#include <tuple>

#include "eth_test_util.h"

using namespace eth_test;
namespace he = hal::eth;
using sim::eth::Completion;
using sim::eth::LinkStats;
using sim::eth::TxqError;

namespace {

auto counters(const LinkStats& s) {
    return std::make_tuple(s.frames_sent, s.frames_retransmitted, s.frames_dropped,
                           s.frames_discarded, s.frames_delivered, s.bytes_delivered,
                           s.reg_writes_delivered, s.commands_completed, s.wire_bytes,
                           s.busy_cycles, s.busy_ticks, s.naks, s.timeouts, s.go_backs);
}

struct Outcome {
    std::vector<Completion> done_ab, done_ba;
    std::vector<CoreMemory::WriteRec> log_a, log_b;
    std::vector<CoreMemory::RegWrite> regs_b;
    std::vector<TxqError> errors_a, errors_b;
    uint64_t cycle = 0;
    decltype(counters(LinkStats{})) ab, ba;
    std::vector<uint32_t> resends;  // RESEND_CNT of A's and B's queues
};

// How the two sides are stepped for `cycles` cycles.
enum class Stepping { Whole, SideAFirst, SideBFirst };

void advance(Pair& p, Stepping how, uint64_t cycles, uint64_t window) {
    if (how == Stepping::Whole) {
        p.link.run(cycles);
        return;
    }
    const uint8_t first = how == Stepping::SideAFirst ? Link::kSideA : Link::kSideB;
    const uint8_t second = first == Link::kSideA ? Link::kSideB : Link::kSideA;
    for (uint64_t done = 0; done < cycles;) {
        const uint64_t n = std::min(window, cycles - done);
        p.link.run(first, n);  // one side a whole window ahead of the other
        p.link.run(second, n);
        (void)p.link.exchange();
        done += n;
    }
}

// Both directions, both queues, data and register writes, random drops both ways, extra delay on
// one direction, a link down and up, and a send into a refused destination (a DestRefused error
// found by B for A's queues).
Outcome lossy_exchange(Stepping how, uint64_t window) {
    Pair p;
    p.link.set_split(how != Stepping::Whole);
    p.link.set_drop_rate(Dir::AtoB, 60'000, 11);
    p.link.set_drop_rate(Dir::BtoA, 60'000, 12);
    p.link.set_extra_delay(Dir::BtoA, 137);
    p.mem_a.fill(0, pattern(0x8000, 50));
    p.mem_b.fill(0, pattern(0x8000, 51));
    program_send(p.txq_a, 0, 0, 0x10000, 0x4000);
    program_send(p.txq_a, 1, 0x4000, 0x20000, 0x2010);
    program_send(p.txq_b, 0, 0, 0x10000, 0x3000);
    program_send(p.txq_b, 1, 0x4000, 0x20000, 0x1000);
    advance(p, how, 2'000, window);
    // The link goes down and up at the same cycle for both sides: between windows, both there.
    p.link.set_up(false);
    advance(p, how, 1'500, window);
    p.link.set_up(true);
    advance(p, how, 3'000, window);
    program_reg_write(p.txq_a, 0, 0xFFB40000, 7);
    // Lands past the end of B's L1: refused there, recorded in A's errors.
    program_send(p.txq_a, 1, 0, p.mem_b.size() - 16, 64);
    program_send(p.txq_b, 0, 0x100, 0x30000, 0x800);
    advance(p, how, 40'000, window);
    REQUIRE(p.link.idle());
    Outcome o{p.link.completions(Dir::AtoB),
              p.link.completions(Dir::BtoA),
              p.mem_a.log(),
              p.mem_b.log(),
              p.mem_b.reg_log(),
              p.txq_a.errors(),
              p.txq_b.errors(),
              p.link.cycle(),
              counters(p.link.stats(Dir::AtoB)),
              counters(p.link.stats(Dir::BtoA)),
              {}};
    for (TxQueues* t : {&p.txq_a, &p.txq_b}) {
        for (uint32_t q = 0; q < 2; ++q) o.resends.push_back(rd(*t, q, he::kTxqResendCnt));
    }
    return o;
}

}  // namespace

TEST_CASE("the sides stepped apart, a window at a time, give the whole link's outcome",
          "[link][sides]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    const Outcome whole = lossy_exchange(Stepping::Whole, 0);
    // The scenario does what it says: drops recovered, the refused send recorded for A.
    CHECK(std::get<2>(whole.ab) > 0);
    CHECK(std::get<2>(whole.ba) > 0);
    REQUIRE(whole.errors_a.size() == 1);
    CHECK(whole.errors_a[0].kind == sim::eth::ErrorKind::DestRefused);
    CHECK(whole.errors_b.empty());
    const Stepping how = GENERATE(Stepping::SideAFirst, Stepping::SideBFirst);
    const uint64_t window = GENERATE_COPY(uint64_t{1}, uint64_t{97}, uint64_t{cfg.latency_cycles});
    CAPTURE(static_cast<int>(how), window);
    const Outcome split = lossy_exchange(how, window);
    CHECK(split.ab == whole.ab);
    CHECK(split.ba == whole.ba);
    CHECK(split.done_ab == whole.done_ab);
    CHECK(split.done_ba == whole.done_ba);
    CHECK(split.log_a == whole.log_a);
    CHECK(split.log_b == whole.log_b);
    CHECK(split.regs_b == whole.regs_b);
    CHECK(split.errors_a == whole.errors_a);
    CHECK(split.errors_b == whole.errors_b);
    CHECK(split.resends == whole.resends);
    CHECK(split.cycle == whole.cycle);
}

TEST_CASE("stepping both sides needs them at the same cycle", "[link][sides]") {
    Pair p;
    p.link.set_split(true);
    p.link.run(Link::kSideA, 10);
    CHECK(p.link.cycle(Link::kSideA) == 10);
    CHECK(p.link.cycle(Link::kSideB) == 0);
    CHECK_THROWS_WITH(p.link.step(), "eth::Link: sides stepped together are at cycles 10 and 0");
    p.link.run(Link::kSideB, 10);
    p.link.step();
    CHECK(p.link.cycle() == 11);
}
