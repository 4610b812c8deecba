// hal::Noc on the fake register file: the exact register writes of every request type on both
// arches, readiness waits, counter bookkeeping and every argument error.
#include "hal/noc.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "arch_facts.h"
#include "hal/testing/fake_mmio.h"

using facts::RegWrite;
using facts::operator+=;
using hal::Status;
using hal::testing::FakeRegisterFile;
using hal::testing::ScopedFakeMmio;

namespace {

constexpr uint32_t kSelfX = 3;
constexpr uint32_t kSelfY = 4;
constexpr uint32_t kSelfCoord = kSelfX | (kSelfY << 6);
constexpr uint32_t kAtomicRet = 0x1F000;

// A fake core: NODE_ID answers (3, 4) on both NoCs, every CMD_CTRL reads "ready", the wall
// clock advances 10 cycles per read.
template <typename F>
struct Core {
    FakeRegisterFile fake;
    ScopedFakeMmio use{fake};

    Core() {
        for (uint32_t noc = 0; noc < 2; ++noc) {
            fake.set(facts::cmd_buf<F>(noc, 0) + F::node_id, kSelfCoord | (17u << 12));
            for (uint32_t buf = 0; buf < 4; ++buf) {
                fake.self_clearing(facts::cmd_buf<F>(noc, buf) + F::cmd_ctrl);
            }
        }
        fake.use_wall_clock(1000, 10);
    }

    hal::Noc<F::map> noc(hal::NocId id,
                         hal::NocConfig cfg = {.atomic_return_l1_addr = kAtomicRet}) {
        hal::Noc<F::map> n(id, cfg);
        REQUIRE(n.init() == Status::Ok);
        fake.clear_log();
        return n;
    }
};

}  // namespace

TEMPLATE_TEST_CASE("noc init learns coordinates and seeds counters from the NIU", "[noc]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    const uint32_t status1 = 0xFFB30200;   // NOC1 counters
    core.fake.set(status1 + 4 * 0x2, 7);   // RD_RESP_RECEIVED
    core.fake.set(status1 + 4 * 0xA, 11);  // NONPOSTED_WR_REQ_SENT
    core.fake.set(status1 + 4 * 0x1, 13);  // WR_ACK_RECEIVED
    core.fake.set(status1 + 4 * 0xB, 17);  // POSTED_WR_REQ_SENT
    core.fake.set(status1 + 4 * 0x0, 19);  // ATOMIC_RESP_RECEIVED
    core.fake.set(status1 + 4 * 0x7, 23);  // POSTED_ATOMIC_SENT

    hal::Noc<F::map> noc(hal::NocId::Noc1);
    CHECK_FALSE(noc.initialized());
    REQUIRE(noc.init() == Status::Ok);
    CHECK(noc.initialized());
    CHECK(noc.self().x == kSelfX);
    CHECK(noc.self().y == kSelfY);
    CHECK(noc.counters().rd_req_issued == 7);
    CHECK(noc.counters().nonposted_wr_req_issued == 11);
    CHECK(noc.counters().wr_ack_expected == 13);
    CHECK(noc.counters().posted_wr_req_issued == 17);
    CHECK(noc.counters().atomic_resp_expected == 19);
    CHECK(noc.counters().posted_atomic_issued == 23);
    // Everything starts flushed.
    CHECK(noc.nonposted_writes_sent());
    CHECK(noc.nonposted_writes_flushed());
    CHECK(noc.posted_writes_sent());
    CHECK(noc.reads_flushed());
    CHECK(noc.atomics_flushed());
    CHECK(noc.posted_atomics_sent());

    // BH clears the high half of AT_LEN_BE on every command buffer; WH has no such register.
    std::vector<RegWrite> expected;
    if (F::has_at_len_be_1) {
        for (uint32_t buf = 0; buf < 4; ++buf) {
            expected.push_back({facts::cmd_buf<F>(1, buf) + 0x24, 0});
        }
    }
    CHECK(core.fake.writes() == expected);
}

TEMPLATE_TEST_CASE("noc unicast write programs TARG=source RET=destination", "[noc]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0);
    const uint32_t b = facts::cmd_buf<F>(0, 0);  // write command buffer

    SECTION("non-posted, default VC, transaction ID 5") {
        REQUIRE(noc.write(0x11000, {.x = 9, .y = 10, .addr = 0x9'2000'1000ull}, 4096,
                          {.trid = 5}) == Status::Ok);
        std::vector<RegWrite> expected;
        expected += F::addr(b + 0x00, 0x11000, kSelfCoord);
        expected += F::addr(b + 0x0C, 0x9'2000'1000ull, 9 | (10 << 6));
        expected += {{b + 0x18, 5u << 10},  // PACKET_TAG
                     {b + 0x1C, 0x2092},    // WR | RESP_MARKED | VC_STATIC | VC 1
                     {b + 0x20, 4096},      // length
                     {b + F::cmd_ctrl, 1}};
        CHECK(core.fake.writes() == expected);
        CHECK(noc.counters().nonposted_wr_req_issued == 1);
        CHECK(noc.counters().wr_ack_expected == 1);
        CHECK(noc.counters().posted_wr_req_issued == 0);
    }
    SECTION("posted, VC 3") {
        REQUIRE(noc.write(0x11000, {.x = 1, .y = 2, .addr = 0x2000}, 64,
                          {.posted = true, .vc = 3}) == Status::Ok);
        const auto w = core.fake.writes();
        REQUIRE(w.size() >= 4);
        CHECK(w[w.size() - 3] == RegWrite{b + 0x1C, 0x2 | 0x80 | (3u << 13)});
        CHECK(noc.counters().posted_wr_req_issued == 1);
        CHECK(noc.counters().nonposted_wr_req_issued == 0);
        CHECK(noc.counters().wr_ack_expected == 0);
    }
    SECTION("the command buffer is checked before any write") {
        const auto& acc = core.fake.accesses();
        REQUIRE(noc.write(0x11000, {.x = 1, .y = 2, .addr = 0x2000}, 64) == Status::Ok);
        REQUIRE_FALSE(acc.empty());
        CHECK(acc.front().kind == hal::testing::Access::Kind::Read);
        CHECK(acc.front().addr == b + F::cmd_ctrl);
    }
}

TEMPLATE_TEST_CASE("noc writes larger than a burst are split, each counted", "[noc]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0);
    const uint32_t b = facts::cmd_buf<F>(0, 0);
    const uint32_t size = 2 * F::max_burst + 32;
    REQUIRE(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x40100}, size) == Status::Ok);
    CHECK(core.fake.writes_to(b + 0x20) == std::vector<uint32_t>{F::max_burst, F::max_burst, 32});
    CHECK(core.fake.writes_to(b + 0x00) ==
          std::vector<uint32_t>{0x100, 0x100 + F::max_burst, 0x100 + 2 * F::max_burst});
    CHECK(core.fake.writes_to(b + 0x0C) ==
          std::vector<uint32_t>{0x40100, 0x40100 + F::max_burst, 0x40100 + 2 * F::max_burst});
    CHECK(core.fake.writes_to(b + F::cmd_ctrl).size() == 3);
    CHECK(noc.counters().nonposted_wr_req_issued == 3);
    CHECK(noc.counters().wr_ack_expected == 3);
}

TEMPLATE_TEST_CASE("noc read programs TARG=remote RET=local on the read buffer", "[noc]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc1);
    const uint32_t b = facts::cmd_buf<F>(1, 1);  // read command buffer on NOC1
    REQUIRE(noc.read({.x = 20, .y = 30, .addr = 0x1'0000'0040ull}, 0x8040, 256, {.trid = 2}) ==
            Status::Ok);
    std::vector<RegWrite> expected;
    expected += F::addr(b + 0x00, 0x1'0000'0040ull, 20 | (30 << 6));
    expected += F::addr(b + 0x0C, 0x8040, kSelfCoord);
    expected += {{b + 0x18, 2u << 10}, {b + 0x1C, 0x2080}, {b + 0x20, 256}, {b + F::cmd_ctrl, 1}};
    CHECK(core.fake.writes() == expected);
    CHECK(noc.counters().rd_req_issued == 1);
}

TEMPLATE_TEST_CASE("noc inline write carries the value in AT_DATA", "[noc]", facts::Wormhole,
                   facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0);
    const uint32_t b = facts::cmd_buf<F>(0, 2);  // register-write command buffer

    SECTION("to a stream register (MMIO): accepted on both arches") {
        const uint32_t reg = 0xFFB40000 + 5 * 0x1000 + F::stream_update * 4;
        REQUIRE(noc.write_inline({.x = 2, .y = 3, .addr = reg}, 0xFFFFFFC0, {.posted = true}) ==
                Status::Ok);
        std::vector<RegWrite> expected;
        expected += F::addr(b + 0x00, reg, 2 | (3 << 6));
        expected += {{b + 0x18, 0},
                     {b + 0x1C, 0x2 | 0x8 | 0x80 | (1u << 13)},  // WR | WR_INLINE | posted
                     {b + 0x20, 0xFu << (reg & 0xF)},            // byte enable within 16 B
                     {b + F::at_data, 0xFFFFFFC0},
                     {b + F::cmd_ctrl, 1}};
        CHECK(core.fake.writes() == expected);
        CHECK(noc.counters().posted_wr_req_issued == 1);
    }
    SECTION("to L1: refused on Blackhole (BH-86), issued on Wormhole") {
        const Status s = noc.write_inline({.x = 2, .y = 3, .addr = 0x20004}, 42);
        if (F::inline_l1_refused) {
            CHECK(s == Status::Unsupported);
            CHECK(core.fake.writes().empty());
        } else {
            REQUIRE(s == Status::Ok);
            std::vector<RegWrite> expected;
            expected += F::addr(b + 0x00, 0x20004, 2 | (3 << 6));
            expected += {{b + 0x18, 0},
                         {b + 0x1C, 0x209A},  // WR | WR_INLINE | RESP_MARKED | VC_STATIC | VC 1
                         {b + 0x20, 0xF0},    // bytes 4..7 of the aligned 16
                         {b + F::at_data, 42},
                         {b + F::cmd_ctrl, 1}};
            CHECK(core.fake.writes() == expected);
            CHECK(noc.counters().nonposted_wr_req_issued == 1);
            CHECK(noc.counters().wr_ack_expected == 1);
        }
    }
}

TEMPLATE_TEST_CASE("noc atomic increment", "[noc]", facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0);
    const uint32_t b = facts::cmd_buf<F>(0, 3);  // atomic command buffer

    SECTION("non-posted returns the old value to the configured L1 word") {
        REQUIRE(noc.atomic_inc({.x = 5, .y = 6, .addr = 0x30014}, 3) == Status::Ok);
        std::vector<RegWrite> expected;
        expected += F::addr(b + 0x00, 0x30014, 5 | (6 << 6));
        expected += F::addr(b + 0x0C, kAtomicRet, kSelfCoord);
        expected += {{b + 0x18, 0},
                     {b + 0x1C, 0x2091},  // AT | RESP_MARKED | VC_STATIC | VC 1
                     // INCR_GET << 12 | wrap 31 << 2 | word 1 of the 16 B (0x14 >> 2 & 3)
                     {b + 0x20, (1u << 12) | (31u << 2) | 1u},
                     {b + F::at_data, 3},
                     {b + F::cmd_ctrl, 1}};
        CHECK(core.fake.writes() == expected);
        CHECK(noc.counters().atomic_resp_expected == 1);
    }
    SECTION("posted does not program RET") {
        REQUIRE(noc.atomic_inc({.x = 5, .y = 6, .addr = 0x30008}, 1,
                               {.posted = true, .trid = 4, .wrap = 15}) == Status::Ok);
        std::vector<RegWrite> expected;
        expected += F::addr(b + 0x00, 0x30008, 5 | (6 << 6));
        expected += {{b + 0x18, 4u << 10},
                     {b + 0x1C, 0x2081},
                     {b + 0x20, (1u << 12) | (15u << 2) | 2u},
                     {b + F::at_data, 1},
                     {b + F::cmd_ctrl, 1}};
        CHECK(core.fake.writes() == expected);
        CHECK(noc.counters().posted_atomic_issued == 1);
        CHECK(noc.counters().atomic_resp_expected == 0);
    }
    SECTION("errors") {
        CHECK(noc.atomic_inc({.x = 5, .y = 6, .addr = 0x30002}, 1) == Status::Misaligned);
        CHECK(noc.atomic_inc({.x = 5, .y = 6, .addr = 0xFFB40000}, 1) == Status::Unsupported);
        CHECK(noc.atomic_inc({.x = 5, .y = 6, .addr = 0x30000}, 1, {.wrap = 32}) == Status::BadArg);
        CHECK(noc.atomic_inc({.x = 64, .y = 6, .addr = 0x30000}, 1) == Status::OutOfRange);
        hal::Noc<F::map> no_ret(hal::NocId::Noc0);  // no atomic return word configured
        REQUIRE(no_ret.init() == Status::Ok);
        core.fake.clear_log();
        CHECK(no_ret.atomic_inc({.x = 5, .y = 6, .addr = 0x30000}, 1) == Status::BadArg);
        CHECK(no_ret.atomic_inc({.x = 5, .y = 6, .addr = 0x30000}, 1, {.posted = true}) ==
              Status::Ok);
        CHECK(core.fake.writes_to(b + F::cmd_ctrl).size() == 1);
    }
}

TEMPLATE_TEST_CASE("noc multicast write to a rectangle", "[noc]", facts::Wormhole,
                   facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0);
    const uint32_t b = facts::cmd_buf<F>(0, 0);
    const hal::NocRect rect{.x_start = 1, .y_start = 2, .x_end = 4, .y_end = 5};
    const uint32_t rect_field = 4 | (5 << 6) | (1 << 12) | (2 << 18);

    SECTION("non-posted: one ack per destination") {
        REQUIRE(noc.multicast_write(0x12000, rect, 0x12000, 2048, 16) == Status::Ok);
        std::vector<RegWrite> expected;
        expected += F::addr(b + 0x00, 0x12000, kSelfCoord);
        expected += F::addr(b + 0x0C, 0x12000, rect_field);
        // WR | RESP_MARKED | BRCST_PACKET | VC_STATIC | PATH_RESERVE | VC 4
        expected += {{b + 0x18, 0}, {b + 0x1C, 0x81B2}, {b + 0x20, 2048}, {b + F::cmd_ctrl, 1}};
        CHECK(core.fake.writes() == expected);
        CHECK(noc.counters().nonposted_wr_req_issued == 1);
        CHECK(noc.counters().wr_ack_expected == 16);
    }
    SECTION("posted, include self, Y major, VC 5, no path reserve") {
        REQUIRE(noc.multicast_write(0x12000, rect, 0x12000, 64, 16,
                                    {.posted = true,
                                     .vc = 5,
                                     .include_self = true,
                                     .y_major = true,
                                     .path_reserve = false,
                                     .trid = 7}) == Status::Ok);
        CHECK(core.fake.writes_to(b + 0x1C) ==
              std::vector<uint32_t>{0x2 | 0x20 | 0x80 | (5u << 13) | (1u << 16) | (1u << 17)});
        CHECK(core.fake.writes_to(b + 0x18) == std::vector<uint32_t>{7u << 10});
        CHECK(noc.counters().posted_wr_req_issued == 1);
        CHECK(noc.counters().wr_ack_expected == 0);
    }
    SECTION("errors, nothing written") {
        CHECK(noc.multicast_write(0x12000, rect, 0x12000, 64, 0) == Status::BadArg);
        CHECK(noc.multicast_write(0x12000, rect, 0x12000, 64, 4, {.vc = 1}) == Status::BadArg);
        CHECK(noc.multicast_write(0x12000, rect, 0x12000, 64, 4, {.vc = 6}) == Status::BadArg);
        CHECK(noc.multicast_write(0x12000, rect, 0x12000, 64, 4, {.trid = 2}) == Status::BadArg);
        CHECK(noc.multicast_write(0x12000, {1, 2, 64, 5}, 0x12000, 64, 4) == Status::OutOfRange);
        CHECK(noc.multicast_write(0x12000, rect, 0x12008, 64, 4) == Status::Misaligned);
        CHECK(core.fake.writes().empty());
    }
}

TEMPLATE_TEST_CASE("noc rejects bad arguments before touching a register", "[noc][errors]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;

    SECTION("not initialized") {
        hal::Noc<F::map> noc(hal::NocId::Noc0);
        CHECK(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x100}, 16) == Status::NotInitialized);
        CHECK(noc.read({.x = 1, .y = 1, .addr = 0x100}, 0x100, 16) == Status::NotInitialized);
        CHECK(noc.write_inline({.x = 1, .y = 1, .addr = 0xFFB40000}, 1) == Status::NotInitialized);
        CHECK(noc.atomic_inc({.x = 1, .y = 1, .addr = 0x100}, 1, {.posted = true}) ==
              Status::NotInitialized);
        CHECK(core.fake.accesses().empty());
    }
    SECTION("bad configuration") {
        hal::Noc<F::map> bad_buf(hal::NocId::Noc0, {.cmd_bufs = {.write = 4}});
        CHECK(bad_buf.init() == Status::BadArg);
        hal::Noc<F::map> bad_ret(hal::NocId::Noc0, {.atomic_return_l1_addr = 0x1002});
        CHECK(bad_ret.init() == Status::Misaligned);
        hal::Noc<F::map> far_ret(hal::NocId::Noc0, {.atomic_return_l1_addr = F::map.eth_l1_size});
        CHECK(far_ret.init() == Status::OutOfRange);
        CHECK(core.fake.writes().empty());
    }
    SECTION("transfers") {
        auto noc = core.noc(hal::NocId::Noc0);
        const uint32_t l1 = F::map.eth_l1_size;
        CHECK(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x100}, 0) == Status::BadArg);
        CHECK(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x100}, 16, {.vc = 4}) == Status::BadArg);
        CHECK(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x100}, 16, {.trid = 16}) ==
              Status::BadArg);
        CHECK(noc.write(0x100, {.x = 64, .y = 1, .addr = 0x100}, 16) == Status::OutOfRange);
        CHECK(noc.write(0x100, {.x = 1, .y = 64, .addr = 0x100}, 16) == Status::OutOfRange);
        CHECK(noc.write(0x100, {.x = 1, .y = 1, .addr = 1ull << 36}, 16) == Status::OutOfRange);
        CHECK(noc.write(0x100, {.x = 1, .y = 1, .addr = (1ull << 36) - 16}, 32) ==
              Status::OutOfRange);
        CHECK(noc.write(l1 - 16, {.x = 1, .y = 1, .addr = 0x100}, 32) == Status::OutOfRange);
        CHECK(noc.write(0x104, {.x = 1, .y = 1, .addr = 0x100}, 16) == Status::Misaligned);
        CHECK(noc.read({.x = 1, .y = 1, .addr = 0x100}, l1, 16) == Status::OutOfRange);
        CHECK(noc.read({.x = 1, .y = 1, .addr = 0x108}, 0x100, 16) == Status::Misaligned);
        CHECK(noc.read({.x = 1, .y = 1, .addr = 0x100}, 0x100, 16, {.vc = 7}) == Status::BadArg);
        CHECK(noc.write_inline({.x = 1, .y = 1, .addr = 0xFFB40002}, 1) == Status::Misaligned);
        CHECK(noc.write_inline({.x = 1, .y = 1, .addr = 0xFFB40000}, 1, {.byte_enable = 0}) ==
              Status::BadArg);
        CHECK(noc.write_inline({.x = 1, .y = 1, .addr = 0xFFB40000}, 1, {.byte_enable = 0x10}) ==
              Status::BadArg);
        CHECK(noc.clear_trid_counters(0x10000) == Status::BadArg);
        CHECK(core.fake.writes().empty());
        // Congruent mod 16 but not aligned is fine.
        CHECK(noc.write(0x104, {.x = 1, .y = 1, .addr = 0x204}, 12) == Status::Ok);
    }
}

TEMPLATE_TEST_CASE("noc waits (bounded) for a busy command buffer", "[noc][wait]", facts::Wormhole,
                   facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0);
    const uint32_t cmd_ctrl = facts::cmd_buf<F>(0, 0) + F::cmd_ctrl;

    SECTION("busy for a while, then ready: the request goes out") {
        core.fake.script_reads(cmd_ctrl, {1, 1, 1, 0});
        REQUIRE(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x100}, 16) == Status::Ok);
        CHECK(core.fake.reads_of(cmd_ctrl) == 4);
        CHECK(core.fake.writes_to(cmd_ctrl) == std::vector<uint32_t>{1});
        CHECK(noc.counters().nonposted_wr_req_issued == 1);
    }
    SECTION("never ready: Timeout, nothing programmed, nothing counted") {
        core.fake.on_read(cmd_ctrl, [] { return 1u; });
        const uint64_t start = core.fake.clock();
        CHECK(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x100}, 16) == Status::Timeout);
        CHECK(core.fake.writes().empty());
        CHECK(noc.counters().nonposted_wr_req_issued == 0);
        // It gave up after the documented timeout, not before.
        const uint64_t waited = core.fake.clock() - start;
        CHECK(waited >= hal::us_to_cycles(F::map, hal::timeouts::kNocCmdBufReadyUs));
        CHECK(waited <= hal::us_to_cycles(F::map, hal::timeouts::kNocCmdBufReadyUs) + 100);
    }
}

TEMPLATE_TEST_CASE("noc completion checks compare software counts with NIU counters", "[noc]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0);
    const uint32_t status0 = 0xFFB20200;
    REQUIRE(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x100}, 16) == Status::Ok);
    REQUIRE(noc.multicast_write(0x100, {1, 1, 2, 2}, 0x100, 16, 4) == Status::Ok);
    REQUIRE(noc.read({.x = 1, .y = 1, .addr = 0x100}, 0x200, 16) == Status::Ok);

    CHECK_FALSE(noc.nonposted_writes_sent());
    CHECK_FALSE(noc.nonposted_writes_flushed());
    CHECK_FALSE(noc.reads_flushed());
    core.fake.set(status0 + 4 * 0xA, 2);  // both write requests left
    CHECK(noc.nonposted_writes_sent());
    core.fake.set(status0 + 4 * 0x1, 4);  // 4 of 5 acks
    CHECK_FALSE(noc.nonposted_writes_flushed());
    core.fake.set(status0 + 4 * 0x1, 5);
    CHECK(noc.nonposted_writes_flushed());
    core.fake.set(status0 + 4 * 0x2, 1);
    CHECK(noc.reads_flushed());

    // Per-ID counters: read back CMD_CTRL of the last buffer used, then the counter.
    core.fake.set(status0 + 4 * (0x10 + 6), 2);
    core.fake.set(status0 + 4 * (0x20 + 6), 1);
    core.fake.clear_log();
    CHECK_FALSE(noc.trid_flushed(6));
    const auto& acc = core.fake.accesses();
    REQUIRE(acc.size() == 2);
    CHECK(acc[0].addr == facts::cmd_buf<F>(0, 1) + F::cmd_ctrl);  // the read buffer, used last
    CHECK(acc[1].addr == status0 + 4 * 0x16);
    CHECK_FALSE(noc.trid_writes_sent(6));
    core.fake.set(status0 + 4 * (0x20 + 6), 0);
    CHECK(noc.trid_writes_sent(6));
    core.fake.set(status0 + 4 * (0x10 + 6), 0);
    CHECK(noc.trid_flushed(6));
    CHECK_FALSE(noc.trid_flushed(16));
    CHECK_FALSE(noc.trid_writes_sent(16));

    // trid_writes_sent_after: the same reads, with the status base and the buffer read back given.
    using N = hal::Noc<F::map>;
    CHECK(noc.status_base() == status0);
    CHECK(noc.last_cmd_buf_base() == facts::cmd_buf<F>(0, 1));
    core.fake.set(status0 + 4 * (0x20 + 6), 3);
    core.fake.clear_log();
    CHECK_FALSE(N::trid_writes_sent_after(noc.status_base(), facts::cmd_buf<F>(0, 3), 6));
    REQUIRE(acc.size() == 2);
    CHECK(acc[0].addr == facts::cmd_buf<F>(0, 3) + F::cmd_ctrl);
    CHECK(acc[1].addr == status0 + 4 * 0x26);
    core.fake.set(status0 + 4 * (0x20 + 6), 0);
    CHECK(N::trid_writes_sent_after(noc.status_base(), facts::cmd_buf<F>(0, 3), 6));
    core.fake.clear_log();
    CHECK_FALSE(
        N::trid_writes_sent_after(noc.status_base(), facts::cmd_buf<F>(0, 3), 16));  // invalid ID
    CHECK(acc.empty());

    core.fake.clear_log();
    REQUIRE(noc.clear_trid_counters(0x8041) == Status::Ok);
    CHECK(core.fake.writes() == std::vector<RegWrite>{{0xFFB20000 + F::clear_trid, 0x8041}});
}

TEMPLATE_TEST_CASE("noc barriers are bounded and honour the termination word", "[noc][wait]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0);
    REQUIRE(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x100}, 16) == Status::Ok);
    const auto deadline = [&] { return hal::Deadline::after_cycles(500); };

    SECTION("ack never arrives: Timeout") {
        CHECK(noc.write_barrier(deadline()) == Status::Timeout);
        CHECK(noc.full_barrier(deadline()) == Status::Timeout);
    }
    SECTION("host asks to terminate: Terminated") {
        uint32_t term = 2;
        CHECK(noc.write_barrier(deadline(), &term) == Status::Terminated);
    }
    SECTION("ack arrives: Ok") {
        core.fake.set(0xFFB20200 + 4 * 0xA, 1);
        core.fake.set(0xFFB20200 + 4 * 0x1, 1);
        uint32_t term = hal::kKeepRunning;
        CHECK(noc.write_barrier(deadline(), &term) == Status::Ok);
        CHECK(noc.read_barrier(deadline()) == Status::Ok);
        CHECK(noc.atomic_barrier(deadline()) == Status::Ok);
        CHECK(noc.trid_barrier(0, deadline()) == Status::Ok);
        CHECK(noc.full_barrier(deadline()) == Status::Ok);
    }
    SECTION("bad transaction ID") {
        CHECK(noc.trid_barrier(16, deadline()) == Status::BadArg);
    }
}

TEMPLATE_TEST_CASE("noc custom command-buffer assignment", "[noc]", facts::Wormhole,
                   facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc1,
                        {.cmd_bufs = {.write = 2, .read = 3, .write_reg = 0, .atomic = 1}});
    REQUIRE(noc.write(0x100, {.x = 1, .y = 1, .addr = 0x100}, 16) == Status::Ok);
    REQUIRE(noc.read({.x = 1, .y = 1, .addr = 0x100}, 0x100, 16) == Status::Ok);
    REQUIRE(noc.write_inline({.x = 1, .y = 1, .addr = 0xFFB40000}, 1) == Status::Ok);
    CHECK(core.fake.writes_to(facts::cmd_buf<F>(1, 2) + F::cmd_ctrl).size() == 1);
    CHECK(core.fake.writes_to(facts::cmd_buf<F>(1, 3) + F::cmd_ctrl).size() == 1);
    CHECK(core.fake.writes_to(facts::cmd_buf<F>(1, 0) + F::cmd_ctrl).size() == 1);
    CHECK(core.fake.writes_to(facts::cmd_buf<F>(1, 1) + F::cmd_ctrl).empty());
}

namespace {

// The streams of the tests below (buffers 2 and 3 reserved for them).
using DataStream = hal::NocStream<hal::NocStreamShape{.cmd_buf = 2}>;
using AnyCoreStream = hal::NocStream<hal::NocStreamShape{.cmd_buf = 2, .any_core = true}>;
using PostedStream = hal::NocStream<hal::NocStreamShape{.cmd_buf = 2, .posted = true}>;
using OwningStream = hal::NocStream<hal::NocStreamShape{.cmd_buf = 2, .owns_buffer = true}>;
using WordStream = hal::NocStream<hal::NocStreamShape{.cmd_buf = 3, .word = true}>;
using FixedWordStream =
    hal::NocStream<hal::NocStreamShape{.cmd_buf = 3, .word = true, .fixed_word = true}>;
constexpr hal::NocConfig kStreamConfig{
    .cmd_bufs = {.write = 0, .read = 1, .write_reg = 1, .atomic = 1},
    .atomic_return_l1_addr = kAtomicRet,
    .prepared_bufs = 0b1100};
constexpr uint32_t kStreamReg = 0xFFB40000 + 0x30;  // a stream register: MMIO, fine on both arches

}  // namespace

TEMPLATE_TEST_CASE("noc stream of writes: constants once, then only what varies", "[noc][stream]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0, kStreamConfig);
    const uint32_t b = facts::cmd_buf<F>(0, 2);
    const auto tail = [](std::vector<RegWrite> v) {
        return std::vector<RegWrite>(v.begin() + 1, v.end());
    };
    // The constant registers of a stream to (9, 10): RET mid/hi, TARG mid/hi, ctrl.
    std::vector<RegWrite> constants;
    constants += tail(F::addr(b + 0x0C, 0, 9 | (10 << 6)));
    constants += tail(F::addr(b + 0x00, 0, kSelfCoord));
    constants += {{b + 0x1C, 0x2092}};
    const auto varying = [&](uint32_t src, uint32_t dst, uint32_t trid, uint32_t len) {
        return std::vector<RegWrite>{{b + 0x00, src},
                                     {b + 0x0C, dst},
                                     {b + 0x18, trid << 10},
                                     {b + 0x20, len},
                                     {b + F::cmd_ctrl, 1}};
    };

    DataStream p;
    REQUIRE(noc.prepare({.dst = {9, 10, 0}}, p) == Status::Ok);
    CHECK(core.fake.writes() == constants);
    core.fake.clear_log();

    SECTION("each request: source, destination, transaction ID, length, CMD_CTRL, counted") {
        REQUIRE(noc.send(p, 0x11000u, 0x2000u, 64u, 5u) == Status::Ok);
        REQUIRE(noc.send(p, 0x11040u, 0x2040u, 4096u, 7u) == Status::Ok);
        std::vector<RegWrite> expected = varying(0x11000, 0x2000, 5, 64);
        expected += varying(0x11040, 0x2040, 7, 4096);
        CHECK(core.fake.writes() == expected);
        CHECK(noc.counters().nonposted_wr_req_issued == 2);
        CHECK(noc.counters().wr_ack_expected == 2);
        CHECK(noc.counters().posted_wr_req_issued == 0);
    }
    SECTION("the same registers as write() of one burst, split into once and per request") {
        REQUIRE(noc.send(p, 0x11000u, 0x2000u, 64u, 5u) == Status::Ok);
        std::vector<RegWrite> ours = constants;
        ours += core.fake.writes();
        std::vector<RegWrite> w;
        {
            Core<F> ref;  // its fake register file serves MMIO while it lives
            auto n = ref.noc(hal::NocId::Noc0);
            REQUIRE(n.write(0x11000, {.x = 9, .y = 10, .addr = 0x2000}, 64, {.trid = 5}) ==
                    Status::Ok);
            w = ref.fake.writes();
        }
        for (RegWrite& x : w) x.addr += b - facts::cmd_buf<F>(0, 0);
        const auto sorted = [](std::vector<RegWrite> v) {  // last value of each register
            std::vector<RegWrite> last;
            for (const RegWrite& x : v) {
                std::erase_if(last, [&](const RegWrite& y) { return y.addr == x.addr; });
                last.push_back(x);
            }
            std::sort(last.begin(), last.end(),
                      [](const RegWrite& l, const RegWrite& r) { return l.addr < r.addr; });
            return last;
        };
        CHECK(sorted(ours) == sorted(w));
    }
    SECTION("ordinary requests leave a stream's buffer alone") {
        REQUIRE(noc.write(0x12000, {.x = 1, .y = 2, .addr = 0x3000}, 16) == Status::Ok);
        for (const RegWrite& w : core.fake.writes()) CHECK((w.addr < b || w.addr >= b + 0x40));
        core.fake.clear_log();
        REQUIRE(noc.send(p, 0x11000u, 0x2000u, 64u, 5u) == Status::Ok);
        CHECK(core.fake.writes() == varying(0x11000, 0x2000, 5, 64));
        CHECK(noc.counters().nonposted_wr_req_issued == 2);
    }
    SECTION("another stream on the same buffer in between: the constants are programmed again") {
        DataStream q;
        REQUIRE(noc.prepare({.dst = {1, 2, 0}}, q) == Status::Ok);
        REQUIRE(noc.send(q, 0x12000u, 0x3000u, 16u, 1u) == Status::Ok);
        core.fake.clear_log();
        REQUIRE(noc.send(p, 0x11000u, 0x2000u, 64u, 5u) == Status::Ok);
        std::vector<RegWrite> expected = constants;
        expected += varying(0x11000, 0x2000, 5, 64);
        CHECK(core.fake.writes() == expected);
        CHECK(noc.counters().nonposted_wr_req_issued == 2);
    }
    SECTION("any destination core: its coordinate register written per request as well") {
        AnyCoreStream q;
        REQUIRE(noc.prepare({}, q) == Status::Ok);
        core.fake.clear_log();
        REQUIRE(noc.send(q, 0x11000u, hal::NocXY{9, 10}, 0x2000u, 64u, 7u) == Status::Ok);
        REQUIRE(noc.send(q, 0x11040u, hal::NocXY{1, 2}, 0x2040u, 16u, 3u) == Status::Ok);
        // RET lo and the coordinate register (mid on WH, hi on BH) as an ordinary write has them.
        const auto ret = [&](uint32_t addr, uint32_t coord) {
            const std::vector<RegWrite> a = F::addr(b + 0x0C, addr, coord);
            return std::vector<RegWrite>{a.front(), a.back()};
        };
        std::vector<RegWrite> expected{{b + 0x00, 0x11000}};
        expected += ret(0x2000, 9 | (10 << 6));
        expected +=
            {{b + 0x18, 7u << 10}, {b + 0x20, 64}, {b + F::cmd_ctrl, 1}, {b + 0x00, 0x11040}};
        expected += ret(0x2040, 1 | (2 << 6));
        expected += {{b + 0x18, 3u << 10}, {b + 0x20, 16}, {b + F::cmd_ctrl, 1}};
        CHECK(core.fake.writes() == expected);
        CHECK(noc.counters().nonposted_wr_req_issued == 2);
        CHECK(noc.counters().wr_ack_expected == 2);
    }
    SECTION("a batch: the same registers, counted once when it ends") {
        AnyCoreStream a;
        WordStream i;
        REQUIRE(noc.prepare({}, a) == Status::Ok);  // shares p's buffer
        REQUIRE(noc.prepare({.dst = {9, 10, kStreamReg}}, i) == Status::Ok);
        const hal::NocCounters before = noc.counters();
        core.fake.clear_log();
        REQUIRE(noc.send(p, 0x11000u, 0x2000u, 64u, 7u) == Status::Ok);
        REQUIRE(noc.send(p, 0x11040u, 0x2040u, 128u, 3u) == Status::Ok);
        REQUIRE(noc.send(a, 0x11080u, hal::NocXY{1, 2}, 0x2080u, 16u, 2u) == Status::Ok);
        REQUIRE(noc.send(i, 5u, 4u) == Status::Ok);
        const std::vector<RegWrite> single = core.fake.writes();
        core.fake.clear_log();
        {
            typename hal::Noc<F::map>::Batch batch(noc);
            REQUIRE(batch.send(p, 0x11000u, 0x2000u, 64u, 7u) == Status::Ok);
            REQUIRE(batch.send(p, 0x11040u, 0x2040u, 128u, 3u) == Status::Ok);
            REQUIRE(batch.send(a, 0x11080u, hal::NocXY{1, 2}, 0x2080u, 16u, 2u) == Status::Ok);
            REQUIRE(batch.send(i, 5u, 4u) == Status::Ok);
            CHECK(noc.counters().nonposted_wr_req_issued ==
                  before.nonposted_wr_req_issued + 4);  // not yet
        }
        CHECK(core.fake.writes() == single);
        CHECK(noc.counters().nonposted_wr_req_issued == before.nonposted_wr_req_issued + 8);
        CHECK(noc.counters().wr_ack_expected == before.wr_ack_expected + 8);
        CHECK(noc.counters().posted_wr_req_issued == before.posted_wr_req_issued);
    }
    SECTION("a batch counts posted and non-posted streams apart") {
        PostedStream q;
        REQUIRE(noc.prepare({.dst = {9, 10, 0}}, q) == Status::Ok);
        {
            typename hal::Noc<F::map>::Batch batch(noc);
            REQUIRE(batch.send(q, 0x11000u, 0x2000u, 64u, 1u) == Status::Ok);
            REQUIRE(batch.send(p, 0x11000u, 0x2000u, 64u, 1u) == Status::Ok);
            REQUIRE(batch.send(q, 0x11000u, 0x2000u, 64u, 1u) == Status::Ok);
        }
        CHECK(noc.counters().posted_wr_req_issued == 2);
        CHECK(noc.counters().nonposted_wr_req_issued == 1);
        CHECK(noc.counters().wr_ack_expected == 1);
    }
    SECTION("posted: ctrl without an ack, counted as posted") {
        PostedStream q;
        REQUIRE(noc.prepare({.dst = {9, 10, 0}}, q) == Status::Ok);
        CHECK(q.ctrl == (0x2092u & ~hal::noc::kCtrlRespMarked));
        REQUIRE(noc.send(q, 0x11000u, 0x2000u, 64u, 1u) == Status::Ok);
        CHECK(noc.counters().posted_wr_req_issued == 1);
        CHECK(noc.counters().nonposted_wr_req_issued == 0);
    }
}

TEMPLATE_TEST_CASE("noc stream that owns its buffer: no other stream there", "[noc][stream]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0, kStreamConfig);
    const uint32_t b = facts::cmd_buf<F>(0, 2);
    OwningStream own;
    REQUIRE(noc.prepare({.dst = {9, 10, 0}}, own) == Status::Ok);
    DataStream other;
    CHECK(noc.prepare({.dst = {1, 2, 0}}, other) == Status::BadArg);  // refused, nothing written
    OwningStream second;
    CHECK(noc.prepare({.dst = {1, 2, 0}}, second) == Status::BadArg);
    core.fake.clear_log();
    REQUIRE(noc.send(own, 0x11000u, 0x2000u, 64u, 5u) == Status::Ok);
    CHECK(core.fake.writes() == std::vector<RegWrite>{{b + 0x00, 0x11000},
                                                      {b + 0x0C, 0x2000},
                                                      {b + 0x18, 5u << 10},
                                                      {b + 0x20, 64},
                                                      {b + F::cmd_ctrl, 1}});
    // The same stream prepared again (a connection opened again): fine, new constants.
    REQUIRE(noc.prepare({.dst = {1, 2, 0}}, own) == Status::Ok);
    CHECK(own.token != 0);
    // An owning stream on a buffer another stream has used is refused too.
    Core<F> core2;
    auto noc2 = core2.noc(hal::NocId::Noc0, kStreamConfig);
    DataStream first;
    REQUIRE(noc2.prepare({.dst = {1, 2, 0}}, first) == Status::Ok);
    OwningStream late;
    CHECK(noc2.prepare({.dst = {9, 10, 0}}, late) == Status::BadArg);
}

TEMPLATE_TEST_CASE(
    "noc atomic on a stream's buffer: the same registers as atomic_inc there, then the stream "
    "programs its constants again",
    "[noc][stream]", facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0, kStreamConfig);
    const uint32_t b = facts::cmd_buf<F>(0, 2);
    DataStream p;
    REQUIRE(noc.prepare({.dst = {9, 10, 0}, .vc = 0}, p) == Status::Ok);
    const std::vector<RegWrite> constants = core.fake.writes();
    core.fake.clear_log();
    REQUIRE(noc.atomic_inc_on(p, {.x = 5, .y = 6, .addr = 0x30014}, 3, {.vc = 0, .trid = 4}) ==
            Status::Ok);
    std::vector<RegWrite> expected;
    expected += F::addr(b + 0x00, 0x30014, 5 | (6 << 6));
    expected += F::addr(b + 0x0C, kAtomicRet, kSelfCoord);
    expected += {{b + 0x18, 4u << 10},
                 {b + 0x1C, 0x0091},  // AT | RESP_MARKED | VC_STATIC | VC 0
                 {b + 0x20, (1u << 12) | (31u << 2) | 1u},
                 {b + F::at_data, 3},
                 {b + F::cmd_ctrl, 1}};
    CHECK(core.fake.writes() == expected);
    CHECK(noc.counters().atomic_resp_expected == 1);
    core.fake.clear_log();
    REQUIRE(noc.send(p, 0x11000u, 0x2000u, 64u, 5u) == Status::Ok);
    std::vector<RegWrite> again = constants;
    again += {{b + 0x00, 0x11000},
              {b + 0x0C, 0x2000},
              {b + 0x18, 5u << 10},
              {b + 0x20, 64},
              {b + F::cmd_ctrl, 1}};
    CHECK(core.fake.writes() == again);
    core.fake.clear_log();
    REQUIRE(noc.send(p, 0x11040u, 0x2040u, 64u, 6u) == Status::Ok);
    CHECK(core.fake.writes().size() == 5);  // constants stay from here on
}

TEMPLATE_TEST_CASE(
    "noc stream with a bounded wait: a busy buffer is waited for its own bound, set at run time, "
    "then Timeout with nothing written",
    "[noc][stream][wait]", facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    using Bounded =
        hal::NocStream<hal::NocStreamShape{.cmd_buf = 2, .any_core = true, .bounded_wait = true}>;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0, kStreamConfig);
    const uint32_t cmd_ctrl = facts::cmd_buf<F>(0, 2) + F::cmd_ctrl;
    Bounded s;
    REQUIRE(noc.prepare({.ready_wait_us = 2}, s) == Status::Ok);
    CHECK(s.ready_wait_us() == 2);
    core.fake.clear_log();
    SECTION("busy a few polls: it goes") {
        core.fake.script_reads(cmd_ctrl, {1, 1, 0});
        CHECK(noc.ready(s) == false);
        REQUIRE(noc.send(s, 0x11000u, hal::NocXY{1, 1}, 0x2000u, 64u, 5u) == Status::Ok);
        CHECK(noc.counters().nonposted_wr_req_issued == 1);
    }
    SECTION("never free: Timeout after its 2 us, or at once with 0") {
        core.fake.on_read(cmd_ctrl, [] { return 1u; });
        for (const uint32_t us : {2u, 0u}) {
            s.set_ready_wait_us(us);
            const uint64_t start = core.fake.clock();
            CHECK(noc.send(s, 0x11000u, hal::NocXY{1, 1}, 0x2000u, 64u, 5u) == Status::Timeout);
            const uint64_t waited = core.fake.clock() - start;
            CHECK(waited >= hal::us_to_cycles(F::map, us));
            CHECK(waited <= hal::us_to_cycles(F::map, us) + 100);
            CHECK(noc.wait_ready(s, hal::Deadline::after_us(F::map, us)) == Status::Timeout);
        }
        CHECK(core.fake.writes().empty());
        CHECK(noc.counters().nonposted_wr_req_issued == 0);
    }
}

TEMPLATE_TEST_CASE("noc stream of words: address, ctrl, byte enables once, data and ID each",
                   "[noc][stream]", facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0, kStreamConfig);
    const uint32_t r = facts::cmd_buf<F>(0, 3);
    WordStream q;
    REQUIRE(noc.prepare({.dst = {9, 10, kStreamReg}}, q) == Status::Ok);
    REQUIRE(noc.send(q, 7u, 1u) == Status::Ok);
    REQUIRE(noc.send(q, 8u, 2u) == Status::Ok);
    // The registers write_inline() writes: address, tag, ctrl, byte enables, data, CMD_CTRL.
    std::vector<RegWrite> w;
    {
        Core<F> ref;
        auto n = ref.noc(hal::NocId::Noc0);
        REQUIRE(n.write_inline({.x = 9, .y = 10, .addr = kStreamReg}, 7, {.trid = 1}) ==
                Status::Ok);
        w = ref.fake.writes();
        for (RegWrite& x : w) x.addr += r - facts::cmd_buf<F>(0, 2);
    }
    const size_t addr_regs = F::addr(r, 0, 0).size();
    REQUIRE(w.size() == addr_regs + 5);
    std::vector<RegWrite> expected(w.begin(), w.begin() + addr_regs);  // address
    expected.push_back(w[addr_regs + 1]);                              // ctrl
    expected.push_back(w[addr_regs + 2]);                              // byte enables
    expected += {{r + F::at_data, 7}, {r + 0x18, 1u << 10}, {r + F::cmd_ctrl, 1}};
    expected += {{r + F::at_data, 8}, {r + 0x18, 2u << 10}, {r + F::cmd_ctrl, 1}};
    CHECK(core.fake.writes() == expected);
    CHECK(w[addr_regs] == RegWrite{r + 0x18, 1u << 10});  // write_inline's tag, for reference
    CHECK(noc.counters().nonposted_wr_req_issued == 2);
}

TEMPLATE_TEST_CASE("noc fixed word: value and tag once too, then only CMD_CTRL", "[noc][stream]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0, kStreamConfig);
    const uint32_t r = facts::cmd_buf<F>(0, 3);
    FixedWordStream f;
    REQUIRE(noc.prepare({.dst = {9, 10, kStreamReg}, .value = 0x40, .trid = 15}, f) == Status::Ok);
    const std::vector<RegWrite> once = core.fake.writes();
    CHECK(std::find(once.begin(), once.end(), RegWrite{r + 0x18, 15u << 10}) != once.end());
    CHECK(once.back() == RegWrite{r + F::at_data, 0x40});
    core.fake.clear_log();
    const hal::NocCounters before = noc.counters();
    {
        typename hal::Noc<F::map>::Batch batch(noc);
        REQUIRE(batch.send(f) == Status::Ok);
        REQUIRE(batch.send(f) == Status::Ok);
    }
    CHECK(core.fake.writes() == std::vector<RegWrite>{{r + F::cmd_ctrl, 1}, {r + F::cmd_ctrl, 1}});
    CHECK(noc.counters().nonposted_wr_req_issued == before.nonposted_wr_req_issued + 2);
    CHECK(noc.counters().wr_ack_expected == before.wr_ack_expected + 2);
    // Another word stream on buffer 3 wrote its own data word: f programs everything again.
    WordStream other;
    REQUIRE(noc.prepare({.dst = {1, 2, kStreamReg}}, other) == Status::Ok);
    REQUIRE(noc.send(other, 7u, 2u) == Status::Ok);
    core.fake.clear_log();
    REQUIRE(noc.send(f) == Status::Ok);
    std::vector<RegWrite> again = once;
    again += {{r + F::cmd_ctrl, 1}};
    CHECK(core.fake.writes() == again);
}

TEMPLATE_TEST_CASE("noc stream argument errors: refused before touching a register",
                   "[noc][stream][errors]", facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    auto noc = core.noc(hal::NocId::Noc0, kStreamConfig);
    DataStream d;
    CHECK(noc.prepare({.dst = {9, 10, 0}, .vc = 4}, d) == Status::BadArg);  // a multicast VC
    CHECK(noc.prepare({.dst = {64, 10, 0}}, d) == Status::OutOfRange);
    hal::NocStream<hal::NocStreamShape{.cmd_buf = 0}> unreserved;
    CHECK(noc.prepare({.dst = {9, 10, 0}}, unreserved) == Status::BadArg);
    FixedWordStream f;
    CHECK(noc.prepare({.dst = {9, 10, kStreamReg}, .trid = 16}, f) == Status::BadArg);
    WordStream w;
    CHECK(noc.prepare({.dst = {9, 10, kStreamReg + 2}}, w) == Status::Misaligned);
    CHECK(noc.prepare({.dst = {9, 10, kStreamReg}, .byte_enable = 0}, w) == Status::BadArg);
    const Status to_l1 = noc.prepare({.dst = {9, 10, 0x1000}}, w);
    CHECK(to_l1 == (F::map.noc.inline_to_l1_unsafe ? Status::Unsupported : Status::Ok));
    if (to_l1 == Status::Ok) core.fake.clear_log();
    CHECK(core.fake.writes().empty());
    CHECK(d.token == 0);
    CHECK(noc.counters().nonposted_wr_req_issued == 0);
    // check_region: what a stream's caller checks once.
    CHECK(noc.check_region(0x11000, 0x2000, 64) == Status::Ok);
    CHECK(noc.check_region(0x11000, 0x2004, 64) == Status::Misaligned);
    CHECK(noc.check_region(0x11000, 0x2000, 0) == Status::BadArg);
    CHECK(noc.check_region(F::map.eth_l1_size - 16, 0x2000, 32) == Status::OutOfRange);
}

TEMPLATE_TEST_CASE("noc init refuses a stream buffer that ordinary requests use", "[noc]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    Core<F> core;
    hal::Noc<F::map> a(hal::NocId::Noc0, {.prepared_bufs = 0b0100});  // write_reg is buffer 2
    CHECK(a.init() == Status::BadArg);
    hal::Noc<F::map> b(hal::NocId::Noc0, {.prepared_bufs = 0b10000});  // no buffer 4
    CHECK(b.init() == Status::BadArg);
    hal::NocStream<hal::NocStreamShape{.cmd_buf = 1}> p;
    hal::Noc<F::map> c(hal::NocId::Noc0,
                       {.cmd_bufs = {.write = 0, .read = 0, .write_reg = 0, .atomic = 0},
                        .prepared_bufs = 0b1110});
    CHECK(c.prepare({.dst = {1, 1, 0}}, p) == Status::NotInitialized);
    REQUIRE(c.init() == Status::Ok);
    CHECK(c.prepare({.dst = {1, 1, 0}}, p) == Status::Ok);
}
