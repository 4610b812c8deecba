// The MMIO seam and the fake register file, the wall clock's read protocol, Deadline, and the
// bounded-wait helper's three outcomes.
#include <catch2/catch.hpp>

#include "hal/clock.h"
#include "hal/mmio.h"
#include "hal/testing/fake_mmio.h"
#include "hal/wait.h"

using hal::Status;
using hal::testing::Access;
using hal::testing::FakeRegisterFile;
using hal::testing::RegWrite;
using hal::testing::ScopedFakeMmio;

TEST_CASE("mmio goes through the installed fake", "[mmio]") {
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);

    hal::mmio::write32(0xFFB20000, 7);
    CHECK(hal::mmio::read32(0xFFB20000) == 7);
    CHECK(hal::mmio::read32(0xFFB20004) == 0);  // never written

    fake.script_reads(0xFFB20004, {1, 2});
    CHECK(hal::mmio::read32(0xFFB20004) == 1);
    CHECK(hal::mmio::read32(0xFFB20004) == 2);
    CHECK(hal::mmio::read32(0xFFB20004) == 0);

    uint32_t seen = 0;
    fake.on_write(0xFFB20008, [&](uint32_t v) { seen = v; });
    fake.self_clearing(0xFFB20008);
    hal::mmio::write32(0xFFB20008, 1);
    CHECK(seen == 1);
    CHECK(hal::mmio::read32(0xFFB20008) == 0);

    fake.on_read(0xFFB2000C, [] { return 0xABCDu; });
    CHECK(hal::mmio::read32(0xFFB2000C) == 0xABCD);

    CHECK(fake.writes() == std::vector<RegWrite>{{0xFFB20000, 7}, {0xFFB20008, 1}});
    CHECK(fake.accesses().front() == Access{Access::Kind::Write, 0xFFB20000, 7});
    CHECK(fake.reads_of(0xFFB20004) == 4);
}

TEST_CASE("mmio l1_ptr maps L1 addresses into the fake's memory", "[mmio]") {
    FakeRegisterFile fake(64 * 1024);
    ScopedFakeMmio use(fake);
    uint32_t* word = hal::mmio::l1_ptr<uint32_t>(0x100);
    *word = 0x12345678;
    CHECK(fake.l1_word(0x100) == 0x12345678);
    CHECK(hal::mmio::l1_addr(word) == 0x100);
    fake.set_l1_word(0x200, 5);
    CHECK(hal::mmio::load_shared(hal::mmio::l1_ptr<uint32_t>(0x200)) == 5);
    hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(0x204), 6);
    CHECK(fake.l1_word(0x204) == 6);
    hal::mmio::store_shared(hal::mmio::l1_ptr<uint8_t>(0x206),
                            uint8_t{0xAB});  // one byte of a word
    CHECK(fake.l1_word(0x204) == 0x00AB0006);
    CHECK(fake.accesses().empty());  // L1 is memory, not registers
}

TEST_CASE("scoped fakes nest and restore", "[mmio]") {
    FakeRegisterFile outer;
    ScopedFakeMmio use_outer(outer);
    {
        FakeRegisterFile inner;
        ScopedFakeMmio use_inner(inner);
        hal::mmio::write32(0x10, 1);
        CHECK(inner.writes().size() == 1);
    }
    hal::mmio::write32(0x10, 2);
    CHECK(outer.writes() == std::vector<RegWrite>{{0x10, 2}});
}

TEST_CASE("wall clock: read low (latches), then the latched high word", "[clock]") {
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    fake.use_wall_clock(0x1'FFFF'FFF0ull, 0x20);
    CHECK(hal::wall_clock() == 0x1'FFFF'FFF0ull);
    CHECK(hal::wall_clock() == 0x2'0000'0010ull);  // carry crosses the word boundary cleanly
    CHECK(fake.accesses() == std::vector<Access>{{Access::Kind::Read, 0xFFB121F0, 0xFFFFFFF0},
                                                 {Access::Kind::Read, 0xFFB121F8, 1},
                                                 {Access::Kind::Read, 0xFFB121F0, 0x10},
                                                 {Access::Kind::Read, 0xFFB121F8, 2}});
}

TEST_CASE("wall clock low word: one read", "[clock]") {
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    fake.use_wall_clock(0x1'FFFF'FFF0ull, 0x20);
    CHECK(hal::wall_clock_lo() == 0xFFFFFFF0u);
    CHECK(hal::wall_clock_lo() == 0x10u);  // wraps: callers compare differences
    CHECK(fake.accesses() == std::vector<Access>{{Access::Kind::Read, 0xFFB121F0, 0xFFFFFFF0},
                                                 {Access::Kind::Read, 0xFFB121F0, 0x10}});
}

TEST_CASE("deadline arithmetic", "[clock]") {
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    fake.use_wall_clock(5000, 1);
    CHECK(hal::us_to_cycles(hal::kWormholeB0, 3) == 3000);
    CHECK(hal::us_to_cycles(hal::kBlackhole, 3) == 4050);
    const auto d = hal::Deadline::after_us(hal::kBlackhole, 2);
    CHECK(d.cycle() == 5000 + 2700);
    CHECK_FALSE(d.passed_at(7699));
    CHECK(d.passed_at(7700));
    constexpr auto fixed = hal::Deadline::at_cycle(100);
    static_assert(fixed.cycle() == 100);
    CHECK(fixed.expired());
}

TEST_CASE("wait_until: Ok, Timeout, Terminated", "[wait]") {
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    fake.use_wall_clock(0, 10);

    SECTION("condition becomes true") {
        int polls = 0;
        CHECK(hal::wait_until([&] { return ++polls == 4; }, hal::Deadline::after_cycles(1000)) ==
              Status::Ok);
        CHECK(polls == 4);
    }
    SECTION("condition already true wins over an expired deadline") {
        CHECK(hal::wait_until([] { return true; }, hal::Deadline::at_cycle(0)) == Status::Ok);
    }
    SECTION("deadline passes: Timeout after the deadline, not before") {
        int polls = 0;
        const auto d = hal::Deadline::after_cycles(1000);  // clock read at 0: deadline at 1000
        CHECK(hal::wait_until(
                  [&] {
                      ++polls;
                      return false;
                  },
                  d) == Status::Timeout);
        CHECK(fake.clock() == 1010);  // the last clock read returned exactly 1000
        CHECK(polls == 100);
    }
    SECTION("termination word set: Terminated") {
        uint32_t term = hal::kKeepRunning;
        int polls = 0;
        CHECK(hal::wait_until(
                  [&] {
                      if (++polls == 3) {
                          term = 2;  // host writes "terminate"
                      }
                      return false;
                  },
                  hal::Deadline::after_cycles(1'000'000), &term) == Status::Terminated);
        CHECK(polls == 3);
    }
    SECTION("a condition that holds wins over a termination request") {
        uint32_t term = 1;
        CHECK(hal::wait_until([] { return true; }, hal::Deadline::after_cycles(10), &term) ==
              Status::Ok);
    }
    SECTION("termination word in (fake) L1, as firmware has it") {
        uint32_t* term = hal::mmio::l1_ptr<uint32_t>(0x3F000);
        *term = 0;
        int polls = 0;
        CHECK(hal::wait_until(
                  [&] {
                      if (++polls == 2) {
                          fake.set_l1_word(0x3F000, 1);
                      }
                      return false;
                  },
                  hal::Deadline::after_cycles(1000), term) == Status::Terminated);
    }
}
