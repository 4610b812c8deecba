// TX-queue register block: decoding, reset values, busy semantics per arch, capture of the source
// bytes, counters, and commands the model does not carry out.
#include <catch2/catch.hpp>

#include "eth_test_util.h"

using namespace eth_test;
namespace he = hal::eth;
using sim::eth::ErrorKind;
using sim::eth::TxqError;

TEST_CASE("TXQ blocks decode at the silicon addresses per arch", "[txq]") {
    CoreMemory mem(hal::kBlackhole.eth_l1_size);
    TxQueues wh(hal::kWormholeB0, mem);
    TxQueues bh(hal::kBlackhole, mem);
    CHECK(wh.num_queues() == 2);
    CHECK(bh.num_queues() == 3);
    for (uint32_t q = 0; q < 3; ++q) {
        const uint32_t base = hal::common::kEthTxqBase + q * hal::common::kEthTxqStride;
        CHECK(wh.decodes(base) == (q < 2));
        CHECK(bh.decodes(base));
        CHECK(wh.decodes(base + hal::common::kEthTxqStride - 4) == (q < 2));
    }
    CHECK_FALSE(wh.decodes(hal::common::kEthTxqBase - 4));
    // Nothing answers outside the blocks or at unaligned addresses.
    CHECK_FALSE(
        wh.mmio_read(hal::eth::txq_reg(2, he::kTxqCmd)).has_value());  // WH RXQ0 lives there
    CHECK_FALSE(wh.mmio_write(hal::eth::txq_reg(2, he::kTxqCmd), he::kCmdDataPacket));
    CHECK_FALSE(wh.mmio_read(hal::eth::txq_reg(0, he::kTxqDestAddr) + 2).has_value());
    CHECK_FALSE(wh.mmio_write(0x1000, 0));
    CHECK(wh.errors().empty());
}

TEST_CASE("TXQ registers reset and read back", "[txq]") {
    CoreMemory mem(hal::kWormholeB0.eth_l1_size);
    TxQueues t(hal::kWormholeB0, mem);
    for (uint32_t q = 0; q < t.num_queues(); ++q) {
        CHECK(rd(t, q, he::kTxqMaxPktSizeBytes) == 1500);
        CHECK(rd(t, q, he::kTxqBurstLen) == 8);
        CHECK(rd(t, q, he::kTxqCmd) == 0);
        CHECK(rd(t, q, he::kTxqStatus) == 0);
        for (uint32_t off :
             {he::kTxqCtrl, he::kTxqTransferStartAddr, he::kTxqTransferSizeBytes, he::kTxqDestAddr,
              he::kTxqRemoteRegData, he::kTxqDataPacketAcceptAhead, he::kTxqDestMacHi, 0x400u}) {
            wr(t, q, off, 0x1230 + off + q);
            CHECK(rd(t, q, off) == 0x1230 + off + q);
        }
    }
    CHECK(t.errors().empty());
}

TEST_CASE("busy (WH CMD / BH STATUS bit 16) clears when the last frame is taken", "[txq]") {
    const hal::ArchMap& arch = GENERATE(std::cref(hal::kWormholeB0), std::cref(hal::kBlackhole));
    CAPTURE(arch.name);
    const LinkConfig cfg = LinkConfig::for_arch(arch);
    Pair p(arch, cfg);
    const Timing tm{cfg};
    const uint32_t size = 4000;  // frames of 1488, 1488, 1024
    p.mem_a.fill(0x1000, pattern(size, 1));
    p.link.run(3);
    const uint64_t c0 = p.link.cycle();
    program_send(p.txq_a, 0, 0x1000, 0x2000, size);

    auto busy_reg = [&] {
        const uint32_t cmd = rd(p.txq_a, 0, he::kTxqCmd);
        const uint32_t status = rd(p.txq_a, 0, he::kTxqStatus);
        if (arch.arch == hal::Arch::WormholeB0) {
            CHECK((status & he::kTxqStatusCmdOngoing) == 0);
            return cmd != 0;
        }
        CHECK(cmd == 0);  // ETH_TXQ_CMD always reads 0 on BH
        return (status & he::kTxqStatusCmdOngoing) != 0;
    };
    CHECK(busy_reg());
    CHECK(p.txq_a.busy(0));
    // The last frame starts when the first two have been serialized.
    const uint64_t last_start =
        c0 * tm.cycle_units() + tm.wire_units(2 * (kFrame + cfg.frame_overhead_bytes));
    const uint64_t clear_cycle = tm.visible_cycle(last_start);
    p.link.run(clear_cycle - 1 - c0);
    CHECK(busy_reg());
    p.link.step();
    CHECK_FALSE(busy_reg());
    CHECK_FALSE(p.txq_a.busy(0));
    // Queue 1 was never busy.
    CHECK(rd(p.txq_a, 1, he::kTxqCmd) == 0);
    CHECK((rd(p.txq_a, 1, he::kTxqStatus) & he::kTxqStatusCmdOngoing) == 0);
    run_until_idle(p.link);
    CHECK(p.mem_b.bytes(0x2000, size) == pattern(size, 1));
    CHECK(p.txq_a.errors().empty());
}

TEST_CASE("the source is captured at CMD and changing it while busy is reported", "[txq]") {
    Pair p;
    const uint32_t size = 2 * kFrame;
    p.mem_a.fill(0x4000, pattern(size, 7));
    program_send(p.txq_a, 0, 0x4000, 0x8000, size);
    // The firmware scribbles over the buffer before the queue has read it out (a bug).
    p.mem_a.fill(0x4000, std::vector<uint8_t>(size, 0xEE));
    run_until_idle(p.link);
    CHECK(p.mem_b.bytes(0x8000, size) == pattern(size, 7));  // the bytes at CMD time
    // Both frames found L1 different from what was captured: silicon would have sent the new bytes.
    REQUIRE(p.txq_a.errors().size() == 2);
    CHECK(p.txq_a.errors()[0] == TxqError{1, 0, ErrorKind::SourceModified, 0x4000, kFrame});
    CHECK(p.txq_a.errors()[1].kind == ErrorKind::SourceModified);
    CHECK(p.txq_a.errors()[1].addr == 0x4000 + kFrame);
}

TEST_CASE("the source may be reused once the queue is no longer busy", "[txq]") {
    Pair p;
    const uint32_t size = 4096;
    p.mem_a.fill(0x4000, pattern(size, 8));
    program_send(p.txq_a, 0, 0x4000, 0x8000, size);
    run_until(p.link, [&] { return !p.txq_a.busy(0); });
    p.mem_a.fill(0x4000, std::vector<uint8_t>(size, 0x55));  // frames still on the wire
    run_until_idle(p.link);
    CHECK(p.mem_b.bytes(0x8000, size) == pattern(size, 8));
    CHECK(p.txq_a.errors().empty());
}

TEST_CASE("counter registers count commands frames words and resends", "[txq]") {
    Pair p;
    p.mem_a.fill(0, pattern(8192, 3));
    program_send(p.txq_a, 1, 0, 0x10000, 4000);  // 3 frames (1488, 1488, 1024), 250 words
    run_until(p.link, [&] { return !p.txq_a.busy(1); });
    program_send(p.txq_a, 1, 0x1000, 0x20000, 16);  // 1 frame, 1 word
    run_until_idle(p.link);
    CHECK(rd(p.txq_a, 1, he::kTxqTransferCnt) == 2);
    CHECK(rd(p.txq_a, 1, he::kTxqPktStartCnt) == 4);
    CHECK(rd(p.txq_a, 1, he::kTxqPktEndCnt) == 4);
    CHECK(rd(p.txq_a, 1, he::kTxqWordCnt) == 251);
    CHECK(rd(p.txq_a, 1, he::kTxqResendCnt) == 0);
    CHECK(rd(p.txq_a, 0, he::kTxqTransferCnt) == 0);
    // Firmware can clear a counter; it counts on from the written value.
    wr(p.txq_a, 1, he::kTxqTransferCnt, 0);
    CHECK(rd(p.txq_a, 1, he::kTxqTransferCnt) == 0);
    program_send(p.txq_a, 1, 0, 0x30000, 32);
    run_until_idle(p.link);
    CHECK(rd(p.txq_a, 1, he::kTxqTransferCnt) == 1);
    CHECK(p.txq_a.counters(1).commands_accepted == 3);
    CHECK(p.txq_a.last_command_id() == 3);
}

TEST_CASE("MAX_PKT_SIZE_BYTES sets the frame size", "[txq]") {
    Pair p;
    p.mem_a.fill(0, pattern(4096, 4));
    wr(p.txq_a, 0, he::kTxqMaxPktSizeBytes, 1024);
    program_send(p.txq_a, 0, 0, 0x8000, 4096);
    run_until_idle(p.link);
    CHECK(p.link.stats(Dir::AtoB).frames_sent == 4);
    const std::vector<CoreMemory::WriteRec> expect{
        {0x8000, 1024}, {0x8400, 1024}, {0x8800, 1024}, {0x8C00, 1024}};
    CHECK(p.mem_b.log() == expect);
    CHECK(p.mem_b.bytes(0x8000, 4096) == pattern(4096, 4));
}

TEST_CASE("CMD while busy / raw packet / unknown command are errors and flush is a no-op",
          "[txq]") {
    Pair p;
    p.mem_a.fill(0, pattern(4096, 5));
    p.link.run(10);
    program_send(p.txq_a, 0, 0, 0x8000, 4096);
    wr(p.txq_a, 0, he::kTxqCmd, he::kCmdDataPacket);  // still busy: ignored
    wr(p.txq_a, 1, he::kTxqCmd, he::kCmdRawPacket);
    wr(p.txq_a, 1, he::kTxqCmd, 0x3);
    wr(p.txq_a, 1, he::kTxqCmd, he::kCmdMacQueueFlush);
    const std::vector<TxqError> expect{
        {10, 0, ErrorKind::CmdWhileBusy, he::kCmdDataPacket, 0},
        {10, 1, ErrorKind::UnsupportedCommand, he::kCmdRawPacket, 0},
        {10, 1, ErrorKind::BadCommand, 0x3, 0},
    };
    CHECK(p.txq_a.errors() == expect);
    run_until_idle(p.link);
    CHECK(p.link.stats(Dir::AtoB).commands_completed == 1);
    CHECK(p.mem_b.bytes(0x8000, 4096) == pattern(4096, 5));
    CHECK_FALSE(p.txq_a.busy(1));
}

TEST_CASE("without a link a command stays busy", "[txq]") {
    CoreMemory mem(hal::kWormholeB0.eth_l1_size);
    TxQueues t(hal::kWormholeB0, mem);
    program_send(t, 0, 0, 0x100, 64);
    CHECK(t.busy(0));
    CHECK(rd(t, 0, he::kTxqCmd) != 0);
    CHECK_FALSE(t.attached());
}

TEST_CASE("a link rejects bad configurations", "[link]") {
    CoreMemory ma(hal::kWormholeB0.eth_l1_size), mb(hal::kWormholeB0.eth_l1_size);
    TxQueues a(hal::kWormholeB0, ma), b(hal::kWormholeB0, mb), c(hal::kWormholeB0, mb);
    LinkConfig cfg;
    cfg.window_frames = 256;
    CHECK_THROWS_AS(Link(cfg, {a, mb}, {b, ma}), std::invalid_argument);
    cfg = LinkConfig{};
    cfg.link_mbps = 0;
    CHECK_THROWS_AS(Link(cfg, {a, mb}, {b, ma}), std::invalid_argument);
    CHECK_THROWS_AS(Link(LinkConfig{}, {a, mb}, {a, ma}), std::invalid_argument);
    Link ok(LinkConfig{}, {a, mb}, {b, ma});
    CHECK(a.attached());
    CHECK_THROWS_AS(Link(LinkConfig{}, {a, mb}, {c, ma}), std::invalid_argument);
}
