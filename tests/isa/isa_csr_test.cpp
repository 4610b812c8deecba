// Zicsr subset: the read-only counters and mhartid. Writes to them and unknown CSRs are illegal
// instructions (checked in isa_trap_test.cpp).
#include "isa_harness.h"

using namespace rv;
using isa::Check;

TEST_CASE("mhartid", "[isa][csr]") {
    for (uint32_t hart : {0u, 1u, 5u}) {
        Check c;
        c.p.emit(csrr(x3, csr::mhartid));
        c.expect(x3, hart, "mhartid");
        sim::TileConfig cfg;
        cfg.hartid = hart;
        c.run(cfg);
    }
}

TEST_CASE("minstret counts retired instructions exactly", "[isa][csr]") {
    // Nothing before: the first two instructions are nops, the third reads minstret.
    Check c(x31, false);
    rv::Program& p = c.p;
    p.emit(nop()).emit(nop()).emit(csrr(x5, csr::minstret)).emit(csrr(x6, csr::instret));
    p.emit(csrr(x7, csr::minstreth)).emit(csrr(x8, csr::instreth));
    p.li(x31, isa::kResultBase);
    c.expect(x5, 2, "minstret after two instructions");
    c.expect(x6, 3, "instret one instruction later");
    c.expect(x7, 0, "minstreth");
    c.expect(x8, 0, "instreth");
    // a load in flight when minstret is read is counted once it completes
    p.li(x10, isa::kDataBase)
        .emit(csrr(x11, csr::minstret))
        .emit(lw(x12, x10, 0))
        .emit(csrr(x13, csr::minstret));
    p.emit(sub(x13, x13, x11));
    c.expect(x13, 2, "minstret across a load");
    sim::Tile& t = c.run();
    // Tile::instret agrees with the program: everything up to and including the exit store
    CHECK(t.instret() == p.size());
}

TEST_CASE("mcycle and cycle advance one per clock", "[isa][csr]") {
    Check c;
    c.p.emit(csrr(x5, csr::mcycle)).emit(csrr(x6, csr::mcycle)).emit(sub(x7, x6, x5));
    c.expect(x7, 1, "back-to-back mcycle reads differ by 1");
    c.p.emit(csrr(x5, csr::mcycle)).emit(csrr(x6, csr::cycle)).emit(sub(x7, x6, x5));
    c.expect(x7, 1, "cycle aliases mcycle");
    c.p.emit(csrr(x5, csr::mcycle))
        .emit(nop())
        .emit(nop())
        .emit(nop())
        .emit(csrr(x6, csr::mcycle))
        .emit(sub(x7, x6, x5));
    c.expect(x7, 4, "three nops");
    c.p.emit(csrr(x5, csr::mcycleh)).emit(csrr(x6, csr::cycleh));
    c.expect(x5, 0, "mcycleh");
    c.expect(x6, 0, "cycleh");
    c.p.emit(csrr(x5, csr::minstret)).emit(csrr(x6, csr::minstret)).emit(sub(x7, x6, x5));
    c.expect(x7, 1, "back-to-back minstret reads differ by 1");
    // csrrs / csrrc / csrrsi / csrrci with a zero source do not write: legal on read-only CSRs
    c.p.emit(csrrs(x5, csr::mcycle, x0)).emit(csrrc(x6, csr::mcycle, x0)).emit(sub(x7, x6, x5));
    c.expect(x7, 1, "csrrs/csrrc with x0");
    c.p.emit(csrrsi(x5, csr::cycle, 0)).emit(csrrci(x6, csr::cycle, 0)).emit(sub(x7, x6, x5));
    c.expect(x7, 1, "csrrsi/csrrci with 0");
    c.run();
}

TEST_CASE("time is the tile wall clock", "[isa][csr]") {
    Check c;
    c.p.emit(csrr(x5, csr::time)).emit(csrr(x6, csr::time)).emit(sub(x7, x6, x5));
    c.expect(x7, 1, "time advances one per clock");
    c.p.emit(csrr(x8, csr::timeh));
    c.expect(x8, 0, "timeh");
    // the wall clock register and the time CSR read the same counter
    c.p.li(x10, hal::common::kWallClockLo);
    c.p.emit(csrr(x5, csr::time)).emit(lw(x6, x10, 0)).emit(sub(x7, x6, x5));
    c.expect(x7, 1, "WALL_CLOCK_0 read one cycle after time");
    // the wall clock started at power-on, before the core left reset
    c.p.emit(csrr(x5, csr::mcycle)).emit(csrr(x6, csr::time)).emit(sltu(x7, x5, x6));
    c.expect(x7, 1, "mcycle < time");
    c.run();
}
