// Bad input: each case is recorded exactly (cycle, queue, kind, address, size) and sends nothing.
#include <catch2/catch.hpp>

#include "eth_test_util.h"

using namespace eth_test;
namespace he = hal::eth;
using sim::eth::ErrorKind;
using sim::eth::TxqError;

TEST_CASE("bad commands are recorded exactly and send nothing", "[txq][errors]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    p.mem_a.fill(0, pattern(0x4000, 50));
    const uint32_t l1 = hal::kWormholeB0.eth_l1_size;
    p.link.run(5);
    program_send(p.txq_a, 0, 0x1008, 0x2000, 64);  // misaligned start
    program_send(p.txq_a, 0, 0x1000, 0x2004, 64);  // misaligned destination
    program_send(p.txq_a, 0, 0x1000, 0x2000, 40);  // size not a multiple of 16
    p.link.step();
    program_send(p.txq_a, 1, 0x1000, 0x2000, 0);    // zero size
    program_reg_write(p.txq_a, 1, 0xFFB40000, 1);   // remote register write on TXQ1
    program_reg_write(p.txq_a, 0, 0xFFB40002, 1);   // misaligned register address
    program_send(p.txq_a, 0, l1 - 16, 0x2000, 32);  // source runs past the end of L1
    program_send(p.txq_a, 1, 0x1004, 0x2000, 20);   // two things wrong at once
    wr(p.txq_a, 0, he::kTxqMaxPktSizeBytes, 8);
    program_send(p.txq_a, 0, 0x1000, 0x2000, 64);  // frame size below one word
    wr(p.txq_a, 0, he::kTxqMaxPktSizeBytes, 1500);

    const std::vector<TxqError> expect{
        {5, 0, ErrorKind::MisalignedStart, 0x1008, 64},
        {5, 0, ErrorKind::MisalignedDest, 0x2004, 64},
        {5, 0, ErrorKind::MisalignedSize, 0x1000, 40},
        {6, 1, ErrorKind::ZeroSize, 0x1000, 0},
        {6, 1, ErrorKind::RemoteRegWriteNotSupported, 0xFFB40000, 0},
        {6, 0, ErrorKind::MisalignedDest, 0xFFB40002, 0},
        {6, 0, ErrorKind::SourceOutOfRange, l1 - 16, 32},
        {6, 1, ErrorKind::MisalignedStart, 0x1004, 20},
        {6, 1, ErrorKind::MisalignedSize, 0x1004, 20},
        {6, 0, ErrorKind::BadMaxPktSize, 8, 64},
    };
    CHECK(p.txq_a.errors() == expect);
    CHECK_FALSE(p.txq_a.busy(0));
    CHECK_FALSE(p.txq_a.busy(1));
    CHECK(p.txq_a.last_command_id() == 0);
    p.link.run(2000);
    CHECK(p.link.idle());
    CHECK(p.link.stats(Dir::AtoB).frames_sent == 0);
    CHECK(p.mem_b.log().empty());
    CHECK(p.mem_b.reg_log().empty());

    // The queues still work afterwards.
    program_send(p.txq_a, 0, 0x1000, 0x2000, 64);
    run_until_idle(p.link);
    CHECK(p.mem_b.bytes(0x2000, 64) == p.mem_a.bytes(0x1000, 64));
    CHECK(p.txq_a.errors().size() == expect.size());
}

TEST_CASE("a source the local endpoint refuses is out of range", "[txq][errors]") {
    CoreMemory small(0x1000);  // the endpoint only has 4 KiB
    CoreMemory peer(0x1000);
    TxQueues t(hal::kWormholeB0, small, {.l1_size = hal::kWormholeB0.eth_l1_size});
    program_send(t, 0, 0x800, 0x0, 0x1000);
    const std::vector<TxqError> expect{{0, 0, ErrorKind::SourceOutOfRange, 0x800, 0x1000}};
    CHECK(t.errors() == expect);
    CHECK_FALSE(t.busy(0));
}

TEST_CASE("a destination the peer refuses is recorded when the frame lands", "[txq][errors]") {
    const LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0);
    Pair p(hal::kWormholeB0, cfg);
    const Timing tm{cfg};
    const uint32_t l1 = hal::kWormholeB0.eth_l1_size;
    program_send(p.txq_a, 0, 0x1000, l1 - 16, 32);  // runs past the end of the peer's L1
    run_until_idle(p.link);
    const uint64_t land =
        tm.visible_cycle(tm.wire_units(32 + cfg.frame_overhead_bytes) + tm.latency_units());
    program_reg_write(p.txq_a, 0, 0x00F00000, 9);  // neither L1 nor a register on the peer
    const uint64_t c1 = p.link.cycle();
    run_until_idle(p.link);
    const uint64_t land2 =
        tm.visible_cycle(c1 * tm.cycle_units() +
                         tm.wire_units(sim::eth::kRegWritePayloadBytes + cfg.frame_overhead_bytes) +
                         tm.latency_units());
    const std::vector<TxqError> expect{
        {land, 0, ErrorKind::DestRefused, l1 - 16, 32},
        {land2, 0, ErrorKind::DestRefused, 0x00F00000, 4},
    };
    CHECK(p.txq_a.errors() == expect);
    CHECK(p.mem_b.log().empty());
    // The link delivered the frames (layer 2 did its job); the peer refused them.
    CHECK(p.link.stats(Dir::AtoB).commands_completed == 2);
    CHECK(p.link.stats(Dir::AtoB).frames_retransmitted == 0);
}

TEST_CASE("remote register writes only on the queues the arch allows", "[txq][errors]") {
    const hal::ArchMap& arch = GENERATE(std::cref(hal::kWormholeB0), std::cref(hal::kBlackhole));
    CAPTURE(arch.name);
    Pair p(arch, LinkConfig::for_arch(arch));
    std::vector<TxqError> expect;
    for (uint32_t q = 0; q < arch.eth_tx_queues; ++q) {
        program_reg_write(p.txq_a, q, 0xFFB40000 + 4 * q, q + 1);
        if (((arch.eth.remote_reg_write_queues >> q) & 1u) == 0) {
            expect.push_back({0, q, ErrorKind::RemoteRegWriteNotSupported, 0xFFB40000 + 4 * q, 0});
        }
    }
    run_until_idle(p.link);
    CHECK(p.txq_a.errors() == expect);
    CHECK(p.mem_b.reg_log() == std::vector<CoreMemory::RegWrite>{{0xFFB40000, 1}});
}
