// Every exception halts the core with the exact mcause, PC and mtval: ecall, ebreak, illegal
// instructions (including CSR writes and unknown CSRs), misaligned loads/stores/jump targets,
// load/store access faults and instruction fetch faults. Older instructions complete, younger ones
// leave no trace.
#include "isa_harness.h"

using namespace rv;

namespace {

constexpr uint32_t kFetchMisaligned = 0, kFetchFault = 1, kIllegal = 2, kBreakpoint = 3,
                   kLoadMisaligned = 4, kLoadFault = 5, kStoreMisaligned = 6, kStoreFault = 7,
                   kEcall = 11;

// Program shape: set up x10 = kDataBase, x11 = 1, x12 = `addr`; store x11 to kDataBase (older
// than the trap); then `insn` (at the returned pc); then a store to kDataBase + 4 and an exit
// (younger: must not happen).
struct TrapProgram {
    std::vector<uint32_t> words;
    uint32_t trap_pc;
};

TrapProgram around(uint32_t insn, uint32_t addr = 0) {
    rv::Program p(isa::kCodeBase);
    p.li(x10, isa::kDataBase).li(x11, 1).li(x12, addr);
    p.emit(sw(x11, x10, 0));
    const uint32_t at = p.pc();
    p.emit(insn);
    p.emit(sw(x11, x10, 4));
    p.li(x30, hal::simctrl::kExit).emit(sw(x0, x30, 0));
    return {p.words(), at};
}

void expect_trap(uint32_t insn, uint32_t addr, uint32_t cause, uint32_t tval,
                 bool tval_is_pc = false) {
    const TrapProgram tp = around(insn, addr);
    sim::Tile tile(sim::TileConfig{});
    isa::run_program(tile, tp.words);
    isa::require_trap(tile, cause, tp.trap_pc, tval_is_pc ? tp.trap_pc : tval);
    CHECK(tile.read32(isa::kDataBase) == 1);      // the older store happened
    CHECK(tile.read32(isa::kDataBase + 4) == 0);  // the younger one did not
    CHECK(tile.step(100) == 0);                   // halted for good
}

}  // namespace

TEST_CASE("ecall and ebreak", "[isa][trap]") {
    SECTION("ecall") {
        expect_trap(ecall(), 0, kEcall, 0);
    }
    SECTION("ebreak: mtval is its pc") {
        expect_trap(ebreak(), 0, kBreakpoint, 0, true);
    }
}

TEST_CASE("illegal instructions", "[isa][trap]") {
    const std::pair<uint32_t, const char*> cases[] = {
        {0x00000000, "all zeros"},
        {0xFFFFFFFF, "all ones"},
        {0x00000001, "compressed c.nop (no C extension)"},
        {0x30200073, "mret"},
        {0x10500073, "wfi"},
        {0x00200073, "uret-like SYSTEM funct3=0"},
        {0x0000400B, "custom-0 opcode"},
        {0x40000033 | (1u << 25), "OP with funct7 0x21"},
        {0x40001033, "sll with funct7 0x20"},
        {0x02101093 | 0, "slli with shamt[5] set (RV64 encoding)"},
        {0x40001013, "slli with funct7 0x20"},
        {0x20005013, "srli/srai with funct7 0x10"},
        {0x00001067, "jalr funct3=1"},
        {0x00003003, "ld (load funct3=3)"},
        {0x00006003, "lwu (load funct3=6)"},
        {0x00003023, "sd (store funct3=3)"},
        {0x00002063, "branch funct3=2"},
        {0x0000200F, "fence funct3=2"},
        {0x00004073, "SYSTEM funct3=4"},
        {0x0000007F, "reserved 0x7f opcode"},
        {csrrw(x0, csr::mcycle, x1), "csrrw mcycle (write to a counter)"},
        {csrrs(x5, csr::mcycle, x1), "csrrs mcycle, x1 (set bits)"},
        {csrrc(x5, csr::minstret, x1), "csrrc minstret, x1"},
        {csrrwi(x5, csr::cycle, 0), "csrrwi cycle, 0 (writes even with 0)"},
        {csrrsi(x5, csr::time, 1), "csrrsi time, 1"},
        {csrrw(x5, csr::mhartid, x0), "csrrw mhartid"},
        {csrr(x5, 0x300), "read of unknown CSR mstatus"},
        {csrr(x5, 0x7C0), "read of unknown custom CSR"},
    };
    for (const auto& [insn, what] : cases) {
        INFO(what << " " << isa::Check::hexs(insn));
        expect_trap(insn, 0, kIllegal, insn);
    }
}

TEST_CASE("misaligned loads and stores", "[isa][trap]") {
    const uint32_t d = isa::kDataBase;
    SECTION("lh odd") {
        expect_trap(lh(x5, x12, 0), d + 1, kLoadMisaligned, d + 1);
    }
    SECTION("lhu +3") {
        expect_trap(lhu(x5, x12, 0), d + 3, kLoadMisaligned, d + 3);
    }
    SECTION("lw +2") {
        expect_trap(lw(x5, x12, 0), d + 2, kLoadMisaligned, d + 2);
    }
    SECTION("lw +1 via offset") {
        expect_trap(lw(x5, x12, 1), d, kLoadMisaligned, d + 1);
    }
    SECTION("sh odd") {
        expect_trap(sh(x11, x12, 0), d + 1, kStoreMisaligned, d + 1);
    }
    SECTION("sw +2") {
        expect_trap(sw(x11, x12, 0), d + 2, kStoreMisaligned, d + 2);
    }
    SECTION("sw +3 via negative offset") {
        expect_trap(sw(x11, x12, -1), d + 4, kStoreMisaligned, d + 3);
    }
    SECTION("misaligned beats access fault") {
        expect_trap(lw(x5, x12, 0), 0x80000002, kLoadMisaligned, 0x80000002);
    }
}

TEST_CASE("misaligned jump and branch targets trap on the jump", "[isa][trap]") {
    SECTION("jal +6") {
        const TrapProgram tp = around(jal(x1, 6));
        sim::Tile tile(sim::TileConfig{});
        isa::run_program(tile, tp.words);
        isa::require_trap(tile, kFetchMisaligned, tp.trap_pc, tp.trap_pc + 6);
    }
    SECTION("jalr to +2") {
        const TrapProgram tp = around(jalr(x1, x12, 2), 0x100);
        sim::Tile tile(sim::TileConfig{});
        isa::run_program(tile, tp.words);
        isa::require_trap(tile, kFetchMisaligned, tp.trap_pc, 0x102);
    }
    SECTION("jalr to +3: bit 0 cleared, bit 1 still misaligned") {
        const TrapProgram tp = around(jalr(x1, x12, 3), 0x100);
        sim::Tile tile(sim::TileConfig{});
        isa::run_program(tile, tp.words);
        isa::require_trap(tile, kFetchMisaligned, tp.trap_pc, 0x102);
    }
    SECTION("taken beq +10") {
        const TrapProgram tp = around(beq(x0, x0, 10));
        sim::Tile tile(sim::TileConfig{});
        isa::run_program(tile, tp.words);
        isa::require_trap(tile, kFetchMisaligned, tp.trap_pc, tp.trap_pc + 10);
    }
    SECTION("not-taken branch to a misaligned target does not trap") {
        const TrapProgram tp = around(bne(x0, x0, 10));
        sim::Tile tile(sim::TileConfig{});
        isa::run_program(tile, tp.words);
        INFO(isa::describe(tile));
        REQUIRE(tile.state() == sim::RunState::Exited);
        CHECK(tile.read32(isa::kDataBase + 4) == 1);
    }
}

TEST_CASE("load and store access faults", "[isa][trap]") {
    const uint32_t l1_end = sim::TileConfig{}.l1_size;
    const uint32_t ldm_end = hal::common::kLocalDataRamBase + sim::TileConfig{}.ldm_size;
    SECTION("lw unmapped 0x80000000") {
        expect_trap(lw(x5, x12, 0), 0x80000000, kLoadFault, 0x80000000);
    }
    SECTION("sw unmapped 0x80000000") {
        expect_trap(sw(x11, x12, 0), 0x80000000, kStoreFault, 0x80000000);
    }
    SECTION("lw just past L1") {
        expect_trap(lw(x5, x12, 0), l1_end, kLoadFault, l1_end);
    }
    SECTION("sb just past L1") {
        expect_trap(sb(x11, x12, 1), l1_end, kStoreFault, l1_end + 1);
    }
    SECTION("lw just past the sim-control block") {
        expect_trap(lw(x5, x12, 0), hal::simctrl::kBase + hal::simctrl::kSize, kLoadFault,
                    hal::simctrl::kBase + hal::simctrl::kSize);
    }
    SECTION("lw undefined sim-control offset") {
        expect_trap(lw(x5, x12, 8), hal::simctrl::kBase, kLoadFault, hal::simctrl::kBase + 8);
    }
    SECTION("IRAM is not load/store memory") {
        expect_trap(lw(x5, x12, 0), hal::common::kIramBase, kLoadFault, hal::common::kIramBase);
    }
    // Core-local addresses the tile does not decode go to the external MMIO port; with no handler
    // installed nothing answers, so they fault (after the round trip).
    SECTION("lw NOC register, no MMIO handler") {
        expect_trap(lw(x5, x12, 0), hal::common::kNocRegsBase, kLoadFault,
                    hal::common::kNocRegsBase);
    }
    SECTION("sh ETH TX queue register, no MMIO handler") {
        expect_trap(sh(x11, x12, 2), hal::common::kEthTxqBase, kStoreFault,
                    hal::common::kEthTxqBase + 2);
    }
    SECTION("lw just past the local data RAM") {
        expect_trap(lw(x5, x12, 0), ldm_end, kLoadFault, ldm_end);
    }
}

TEST_CASE("instruction fetch faults", "[isa][trap]") {
    SECTION("jump to unmapped memory: trap at the target") {
        const TrapProgram tp = around(jalr(x0, x12, 0), 0x80000000);
        sim::Tile tile(sim::TileConfig{});
        isa::run_program(tile, tp.words);
        isa::require_trap(tile, kFetchFault, 0x80000000, 0x80000000);
    }
    SECTION("jump into the local data RAM (not executable)") {
        const TrapProgram tp = around(jalr(x0, x12, 0), hal::common::kLocalDataRamBase);
        sim::Tile tile(sim::TileConfig{});
        isa::run_program(tile, tp.words);
        isa::require_trap(tile, kFetchFault, hal::common::kLocalDataRamBase,
                          hal::common::kLocalDataRamBase);
    }
    SECTION("running off the end of L1") {
        sim::TileConfig cfg;
        cfg.l1_size = 64 * 1024;
        sim::Tile tile(cfg);
        const uint32_t start = cfg.l1_size - 8;
        isa::load_words(tile, start, {nop(), nop()});
        tile.write32(hal::common::kErisc0ResetPcReg, start);
        isa::release_and_run(tile);
        isa::require_trap(tile, kFetchFault, cfg.l1_size, cfg.l1_size);
        CHECK(tile.instret() == 2);
    }
    SECTION("misaligned reset PC") {
        sim::Tile tile(sim::TileConfig{});
        isa::load_words(tile, 0, {nop(), nop()});
        tile.write32(hal::common::kErisc0ResetPcReg, 2);
        isa::release_and_run(tile);
        isa::require_trap(tile, kFetchMisaligned, 2, 2);
        CHECK(tile.instret() == 0);
    }
}

TEST_CASE("trap_cause_name", "[isa][trap]") {
    CHECK(std::string(sim::trap_cause_name(kIllegal)) == "illegal instruction");
    CHECK(std::string(sim::trap_cause_name(kEcall)) == "environment call from M-mode");
    CHECK(std::string(sim::trap_cause_name(99)) == "unknown cause");
}
