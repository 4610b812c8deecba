// Bus errors: each bad request is recorded exactly once with what and where, never a silent
// success and never a host crash. Launch-time errors send nothing and move no counter;
// target-side errors skip the access but still complete the request (ack / response), so the
// issuing firmware does not hang on top of the recorded error.
#include <catch2/catch.hpp>

#include "noc_test_util.h"

using namespace noc_test;
namespace st = hal::noc::status;
using sim::noc::NocError;
using sim::noc::NocErrorKind;

namespace {

const NocError& only_error(const Network& net) {
    REQUIRE(net.errors().size() == 1);
    return net.errors().front();
}

}  // namespace

TEST_CASE("error: nothing attached at the destination coordinate", "[sim_noc][errors]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& s = chip.add_core(1, 1);
    std::vector<NocError> hooked;
    chip.net.on_error([&](const NocError& e) { hooked.push_back(e); });
    write(chip, s, 0x1000, {7, 7}, 0x2000, 256, {.trid = 4});
    chip.drain();
    const NocError& e = only_error(chip.net);
    CHECK(e.kind == NocErrorKind::NoEndpoint);
    CHECK(e.noc == 0);
    CHECK(e.src == Coord{1, 1});
    CHECK(e.dst == Coord{7, 7});
    CHECK(e.addr == 0x2000);
    CHECK(e.cycle > 0);
    CHECK(hooked.size() == 1);
    // The request still completes, so a barrier does not hang on top of the error.
    CHECK(counter(s, 0, st::kMstWrAckReceived) == 1);
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(4)) == 0);
    CHECK(sim::noc::to_string(e).find("no-endpoint") != std::string::npos);

    // A read from there: recorded, response returns, nothing written locally.
    chip.net.clear_errors();
    std::memset(s.bytes() + 0x4000, 0x5A, 64);
    read(chip, s, {7, 7}, 0x0, 0x4000, 64);
    chip.drain();
    CHECK(only_error(chip.net).kind == NocErrorKind::NoEndpoint);
    CHECK(counter(s, 0, st::kMstRdRespReceived) == 1);
    CHECK(s.bytes()[0x4000] == 0x5A);

    // NOC1 reports physical coordinates too.
    chip.net.clear_errors();
    inline_write(chip, s, chip.net.to_noc(1, {6, 2}), 0x100, 1, 0xF, {.noc = 1});
    chip.drain();
    CHECK(only_error(chip.net).dst == Coord{6, 2});
    CHECK(only_error(chip.net).noc == 1);
}

TEST_CASE("error: the target refuses an address outside its memory", "[sim_noc][errors]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& s = chip.add_core(1, 1);
    Core& d = chip.add_core(2, 1);
    fill(s, 0x1000, 256, 1);
    // 256 bytes ending 128 bytes past the end of the 256 KiB L1: the first 4 flits land, the
    // fifth is refused (one error, at its address), the rest skipped.
    const uint32_t dst = a.eth_l1_size - 128;
    write(chip, s, 0x1000, d.at, dst, 256);
    chip.drain();
    const NocError& e = only_error(chip.net);
    CHECK(e.kind == NocErrorKind::AddressRefused);
    CHECK(e.addr == a.eth_l1_size);
    CHECK(e.dst == Coord{2, 1});
    CHECK(same(s, 0x1000, d, dst, 128));
    CHECK(counter(s, 0, st::kMstWrAckReceived) == 1);

    chip.net.clear_errors();
    read(chip, s, d.at, a.eth_l1_size, 0x8000, 64);
    chip.drain();
    CHECK(only_error(chip.net).kind == NocErrorKind::AddressRefused);
    CHECK(only_error(chip.net).addr == a.eth_l1_size);
    CHECK(counter(s, 0, st::kMstRdRespReceived) == 1);
    CHECK(all_zero(s, 0x8000, 64));

    // Stream registers beyond the tile's 32 streams.
    chip.net.clear_errors();
    inline_write(chip, s, d.at, hal::stream::reg_addr(40, 0), 1, 0xF);
    chip.drain();
    CHECK(only_error(chip.net).kind == NocErrorKind::AddressRefused);
}

TEST_CASE("error: a burst longer than the maximum is refused at the NIU, not split",
          "[sim_noc][errors]") {
    for (const hal::ArchMap* ap : {&hal::kWormholeB0, &hal::kBlackhole}) {
        const hal::ArchMap& a = *ap;
        INFO(a.name);
        Chip chip(10, 12, a);
        Core& s = chip.add_core(1, 1);
        Core& d = chip.add_core(2, 1);
        write(chip, s, 0x1000, d.at, 0x1000, a.noc_max_burst_bytes + 16, {.trid = 2});
        CHECK(s.niu->mmio_read(hal::noc::cmd_buf_base(a, 0, 0) + a.noc.cmd_ctrl) ==
              hal::noc::kCmdCtrlReady);
        chip.drain();
        const NocError& e = only_error(chip.net);
        CHECK(e.kind == NocErrorKind::BurstTooLong);
        CHECK(e.dst == Coord{2, 1});
        CHECK(e.addr == 0x1000);
        // Nothing was sent or counted.
        CHECK(counter(s, 0, st::kMstCmdAccepted) == 0);
        CHECK(counter(s, 0, st::mst_reqs_outstanding_id(2)) == 0);
        CHECK(counter(s, 0, st::kMstNonpostedWrReqSent) == 0);
        CHECK(d.l1.log().empty());
        // Exactly the maximum is fine.
        chip.net.clear_errors();
        write(chip, s, 0x1000, d.at, 0x1000, a.noc_max_burst_bytes);
        chip.drain();
        CHECK(chip.net.errors().empty());
        // Reads too; and zero length is its own error.
        read(chip, s, d.at, 0, 0x8000, a.noc_max_burst_bytes + 1, {.buf = 1});
        read(chip, s, d.at, 0, 0x8000, 0, {.buf = 2});
        chip.drain();
        REQUIRE(chip.net.errors().size() == 2);
        CHECK(chip.net.errors()[0].kind == NocErrorKind::BurstTooLong);
        CHECK(chip.net.errors()[1].kind == NocErrorKind::BadLength);
    }
}

TEST_CASE("error: misaligned transfers (ISA alignment table)", "[sim_noc][errors]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& s = chip.add_core(1, 1);
    Core& d = chip.add_core(2, 1);
    sim::SparseMemory dram(1 << 20);
    chip.net.attach(0, 0, &dram, sim::noc::EndpointKind::Other);

    // L1 -> L1: source and destination must be congruent mod 16.
    write(chip, s, 0x1000, d.at, 0x2008, 64);
    chip.drain();
    CHECK(only_error(chip.net).kind == NocErrorKind::Misaligned);
    CHECK(only_error(chip.net).addr == 0x2008);
    CHECK(all_zero(d, 0x2000, 128));  // nothing written
    CHECK(counter(s, 0, st::kMstWrAckReceived) == 1);

    // Congruent but not aligned is fine for L1.
    chip.net.clear_errors();
    write(chip, s, 0x1004, d.at, 0x2004, 40);
    chip.drain();
    CHECK(chip.net.errors().empty());

    // DRAM -> L1 needs congruence mod 32.
    read(chip, s, {0, 0}, 0x10, 0x3000, 64);
    chip.drain();
    CHECK(only_error(chip.net).kind == NocErrorKind::Misaligned);
    chip.net.clear_errors();
    read(chip, s, {0, 0}, 0x30, 0x3010, 64);
    chip.drain();
    CHECK(chip.net.errors().empty());

    // L1 -> MMIO (a stream register): 4-byte aligned, length 4.
    write(chip, s, 0x1000, d.at, hal::stream::reg_addr(0, a.stream.remote_src), 8);
    chip.drain();
    CHECK(only_error(chip.net).kind == NocErrorKind::Misaligned);
}

TEST_CASE("error: coordinates outside the grid, busy command buffers, unsupported requests",
          "[sim_noc][errors]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& s = chip.add_core(1, 1);
    Core& d = chip.add_core(2, 1);
    sim::SparseMemory dram(1 << 20);
    chip.net.attach(0, 0, &dram, sim::noc::EndpointKind::Other);

    write(chip, s, 0x1000, {12, 3}, 0x1000, 64);
    CHECK(only_error(chip.net).kind == NocErrorKind::CoordOutsideGrid);
    CHECK(only_error(chip.net).dst == Coord{12, 3});
    CHECK(counter(s, 0, st::kMstCmdAccepted) == 0);

    chip.net.clear_errors();
    mcast_write(chip, s, 0x1000, {.x_start = 1, .y_start = 1, .x_end = 3, .y_end = 40}, 0x1000, 64);
    CHECK(only_error(chip.net).kind == NocErrorKind::CoordOutsideGrid);

    chip.net.clear_errors();
    write(chip, s, 0x1000, d.at, 0x1000, 4096, {.buf = 1});
    write(chip, s, 0x1000, d.at, 0x5000, 64, {.buf = 1});  // still busy
    CHECK(only_error(chip.net).kind == NocErrorKind::CmdBufBusy);
    chip.drain();
    CHECK(counter(s, 0, st::kMstNonpostedWrReqSent) == 1);
    CHECK(all_zero(d, 0x5000, 64));

    chip.net.clear_errors();
    inline_write(chip, s, {0, 0}, 0x100, 7, 0xF);  // inline writes cannot go to DRAM
    chip.drain();
    CHECK(only_error(chip.net).kind == NocErrorKind::Unsupported);

    chip.net.clear_errors();
    atomic_inc(chip, s, d.at, hal::stream::reg_addr(0, a.stream.remote_src), 1,
               0x100);  // atomics: L1 only
    chip.drain();
    CHECK(only_error(chip.net).kind == NocErrorKind::Unsupported);
    CHECK(counter(s, 0, st::kMstAtomicRespReceived) == 1);

    chip.net.clear_errors();
    Regs r;
    r.targ = hal::noc::encode_addr(a, 0, hal::noc::unicast_coord(2, 1));
    r.ret = hal::noc::encode_addr(a, 0x100, hal::noc::mcast_coord({1, 1, 2, 2}));
    r.ctrl = hal::noc::kCtrlCmdRead | hal::noc::kCtrlBrcstPacket;
    r.at_len_be = 64;
    program(a, *s.niu, r);
    CHECK(only_error(chip.net).kind == NocErrorKind::Unsupported);

    chip.net.clear_errors();
    r = Regs{};
    r.targ = hal::noc::encode_addr(a, 0x100, hal::noc::unicast_coord(2, 1));
    r.ctrl = hal::noc::kCtrlCmdAtomic | hal::noc::kCtrlRespMarked;
    r.ret = hal::noc::encode_addr(a, 0x200, hal::noc::unicast_coord(1, 1));
    r.at_len_be = 5u << hal::noc::kAtInsShift;  // an opcode the model does not implement
    program(a, *s.niu, r);
    chip.drain();
    CHECK(only_error(chip.net).kind == NocErrorKind::Unsupported);
}

TEST_CASE("error: the issuing core's memory refuses the write data", "[sim_noc][errors]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& s = chip.add_core(1, 1);
    Core& d = chip.add_core(2, 1);
    write(chip, s, a.eth_l1_size - 32, d.at, 0x1000, 96);
    chip.drain();
    const NocError& e = only_error(chip.net);
    CHECK(e.kind == NocErrorKind::SourceRefused);
    CHECK(e.src == Coord{1, 1});
    CHECK(e.addr == a.eth_l1_size);
    // Flits after the refused read carry nothing; here the failure is seen before the first
    // data flit lands, so nothing lands at all.
    CHECK(all_zero(d, 0x1000, 96));
    CHECK(counter(s, 0, st::kMstWrAckReceived) == 1);
}
