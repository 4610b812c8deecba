// hal::Eth on the fake register file: exact TX queue programming on both arches, the per-arch
// busy check, bounded waits and every argument error.
#include "hal/eth.h"

#include <catch2/catch.hpp>

#include "arch_facts.h"
#include "hal/testing/fake_mmio.h"

using facts::RegWrite;
using hal::EthTxq;
using hal::Status;
using hal::testing::Access;
using hal::testing::FakeRegisterFile;
using hal::testing::ScopedFakeMmio;

namespace {

constexpr uint32_t txq(uint32_t q) {
    return 0xFFB90000 + q * 0x1000;
}
constexpr uint32_t kCmd = 0x04;
constexpr uint32_t kStatus = 0x08;
constexpr uint32_t kStartAddr = 0x14;
constexpr uint32_t kSize = 0x18;
constexpr uint32_t kDest = 0x1C;
constexpr uint32_t kRemoteData = 0x44;
constexpr uint32_t kAcceptAhead = 0x6C;

template <typename F>
struct Core {
    FakeRegisterFile fake;
    ScopedFakeMmio use{fake};
    Core() {
        // The queue latches each command at once: CMD reads back 0.
        for (uint32_t q = 0; q < 3; ++q) {
            fake.self_clearing(txq(q) + kCmd);
        }
        fake.use_wall_clock(0, 10);
    }
};

// Make queue q look busy the way the arch reports it.
template <typename F>
void make_busy(FakeRegisterFile& fake, uint32_t q) {
    if (F::map.arch == hal::Arch::WormholeB0) {
        fake.on_read(txq(q) + kCmd, [] { return 2u; });
    } else {
        fake.set(txq(q) + kStatus, 1u << 16);
    }
}

}  // namespace

TEMPLATE_TEST_CASE("eth data send programs start, size, destination, then CMD=2", "[eth]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    using Eth = hal::Eth<F::map>;
    for (uint32_t q = 0; q < 2; ++q) {
        core.fake.clear_log();
        REQUIRE(Eth::try_send(static_cast<EthTxq>(q), 0x20000, 0x30010, 4096) == Status::Ok);
        CHECK(core.fake.writes() == std::vector<RegWrite>{{txq(q) + kStartAddr, 0x20000},
                                                          {txq(q) + kSize, 4096},
                                                          {txq(q) + kDest, 0x30010},
                                                          {txq(q) + kCmd, 0x2}});
    }
}

TEMPLATE_TEST_CASE("eth queue count is per arch", "[eth][errors]", facts::Wormhole,
                   facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    using Eth = hal::Eth<F::map>;
    const Status s = Eth::try_send(EthTxq::Q2, 0x20000, 0x20000, 16);
    if (F::eth_queues == 3) {
        CHECK(s == Status::Ok);
        CHECK(core.fake.writes_to(txq(2) + kCmd) == std::vector<uint32_t>{2});
    } else {
        CHECK(s == Status::BadArg);
        CHECK(core.fake.accesses().empty());
        CHECK(Eth::is_busy(EthTxq::Q2));  // a queue that does not exist is never free
        CHECK(Eth::set_accept_ahead(EthTxq::Q2) == Status::BadArg);
    }
}

TEMPLATE_TEST_CASE("eth remote register write: DEST, DATA, CMD=4, TXQ0 only", "[eth]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    using Eth = hal::Eth<F::map>;
    const uint32_t reg = 0xFFB40000 + 3 * 0x1000 + F::stream_update * 4;

    REQUIRE(Eth::try_write_remote_reg(EthTxq::Q0, reg, 0x40) == Status::Ok);
    CHECK(core.fake.writes() == std::vector<RegWrite>{{txq(0) + kDest, reg},
                                                      {txq(0) + kRemoteData, 0x40},
                                                      {txq(0) + kCmd, 0x4}});
    core.fake.clear_log();
    // Queue 1 cannot carry remote register writes: an error, and not a single register access.
    CHECK(Eth::try_write_remote_reg(EthTxq::Q1, reg, 0x40) == Status::Unsupported);
    CHECK(Eth::write_remote_reg(EthTxq::Q1, reg, 0x40, hal::Deadline::after_cycles(100)) ==
          Status::Unsupported);
    core.fake.clear_log();
    CHECK(Eth::try_write_remote_reg(EthTxq::Q0, reg + 2, 0x40) == Status::Misaligned);
    CHECK(Eth::try_write_remote_reg(EthTxq::Q2, reg, 0x40) ==
          (F::eth_queues == 3 ? Status::Unsupported : Status::BadArg));
    CHECK(core.fake.accesses().empty());
}

TEMPLATE_TEST_CASE("eth send rejects misaligned or out-of-range transfers, sends nothing",
                   "[eth][errors]", facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    using Eth = hal::Eth<F::map>;
    const uint32_t l1 = F::map.eth_l1_size;
    const auto d = hal::Deadline::after_cycles(1000);
    core.fake.clear_log();
    CHECK(Eth::try_send(EthTxq::Q0, 0x20008, 0x20000, 64) == Status::Misaligned);
    CHECK(Eth::try_send(EthTxq::Q0, 0x20000, 0x20004, 64) == Status::Misaligned);
    CHECK(Eth::try_send(EthTxq::Q0, 0x20000, 0x20000, 65) == Status::Misaligned);
    CHECK(Eth::try_send(EthTxq::Q0, 0x20000, 0x20000, 0) == Status::BadArg);
    CHECK(Eth::try_send(EthTxq::Q0, l1 - 16, 0x20000, 32) == Status::OutOfRange);
    CHECK(Eth::try_send(EthTxq::Q0, 0x20000, l1, 16) == Status::OutOfRange);
    CHECK(Eth::try_send(EthTxq::Q0, 0xFFFFFFF0, 0x20000, 32) == Status::OutOfRange);  // no wrap
    CHECK(Eth::send(EthTxq::Q1, 0x20000, 0x20002, 16, d) == Status::Misaligned);
    CHECK(core.fake.accesses().empty());
    CHECK(Eth::check_send(EthTxq::Q0, l1 - 16, l1 - 16, 16) == Status::Ok);
}

TEMPLATE_TEST_CASE("eth busy check follows the arch", "[eth]", facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    using Eth = hal::Eth<F::map>;

    SECTION("idle queue: the reads the arch needs, in order") {
        CHECK_FALSE(Eth::is_busy(EthTxq::Q1));
        std::vector<Access> expected;
        if (F::map.arch == hal::Arch::WormholeB0) {
            expected = {{Access::Kind::Read, txq(1) + kCmd, 0}};  // WH: CMD != 0 means busy
        } else {
            // BH: read CMD back first (BH-55), then STATUS bit 16.
            expected = {{Access::Kind::Read, txq(1) + kCmd, 0},
                        {Access::Kind::Read, txq(1) + kStatus, 0}};
        }
        CHECK(core.fake.accesses() == expected);
    }
    SECTION("the other arch's busy signal is ignored") {
        if (F::map.arch == hal::Arch::WormholeB0) {
            core.fake.set(txq(0) + kStatus, 1u << 16);
        } else {
            core.fake.on_read(txq(0) + kCmd, [] { return 2u; });
            core.fake.set(txq(0) + kStatus, 0xFFFF);  // debug bits below 16
        }
        CHECK_FALSE(Eth::is_busy(EthTxq::Q0));
    }
    SECTION("busy queue: try_send says Busy and writes nothing") {
        make_busy<F>(core.fake, 0);
        CHECK(Eth::is_busy(EthTxq::Q0));
        CHECK(Eth::try_send(EthTxq::Q0, 0x20000, 0x20000, 16) == Status::Busy);
        CHECK(Eth::try_write_remote_reg(EthTxq::Q0, 0xFFB40000, 1) == Status::Busy);
        CHECK(core.fake.writes().empty());
    }
}

TEMPLATE_TEST_CASE("eth send waits (bounded) for the queue", "[eth][wait]", facts::Wormhole,
                   facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    using Eth = hal::Eth<F::map>;
    const uint32_t busy_reg =
        F::map.arch == hal::Arch::WormholeB0 ? txq(0) + kCmd : txq(0) + kStatus;
    const uint32_t busy_val = F::map.arch == hal::Arch::WormholeB0 ? 2u : (1u << 16);

    SECTION("busy three times, then free: sent") {
        core.fake.script_reads(busy_reg, {busy_val, busy_val, busy_val});
        REQUIRE(Eth::send(EthTxq::Q0, 0x20000, 0x20000, 16, hal::Deadline::after_cycles(1000)) ==
                Status::Ok);
        CHECK(core.fake.writes_to(txq(0) + kCmd) == std::vector<uint32_t>{2});
        REQUIRE(Eth::write_remote_reg(EthTxq::Q0, 0xFFB40000, 7,
                                      hal::Deadline::after_cycles(1000)) == Status::Ok);
        CHECK(core.fake.writes_to(txq(0) + kCmd) == std::vector<uint32_t>{2, 4});
    }
    SECTION("never free: Timeout, nothing sent") {
        make_busy<F>(core.fake, 0);
        CHECK(Eth::send(EthTxq::Q0, 0x20000, 0x20000, 16, hal::Deadline::after_cycles(1000)) ==
              Status::Timeout);
        CHECK(Eth::write_remote_reg(EthTxq::Q0, 0xFFB40000, 7, hal::Deadline::after_cycles(1000)) ==
              Status::Timeout);
        CHECK(core.fake.writes().empty());
    }
    SECTION("host terminates while waiting: Terminated, nothing sent") {
        make_busy<F>(core.fake, 0);
        uint32_t term = hal::kKeepRunning;
        int polls = 0;
        core.fake.on_read(busy_reg, [&] {
            if (++polls == 5) {
                term = 1;
            }
            return busy_val;
        });
        CHECK(Eth::send(EthTxq::Q0, 0x20000, 0x20000, 16, hal::Deadline::after_cycles(1'000'000),
                        &term) == Status::Terminated);
        CHECK(polls == 5);
        CHECK(core.fake.writes().empty());
    }
}

TEMPLATE_TEST_CASE("eth accept-ahead configuration", "[eth]", facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    using Eth = hal::Eth<F::map>;
    REQUIRE(Eth::set_accept_ahead(EthTxq::Q1) == Status::Ok);
    CHECK(core.fake.writes() == std::vector<RegWrite>{{txq(1) + kAcceptAhead, 32}});
}
