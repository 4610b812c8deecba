// The tile around the core: soft reset hold/release and re-assert, reset-PC boot, wall clock,
// sim-control console and exit, the external MMIO port, NOC-side register access, timing knobs
// (exact cycle counts), determinism and tracing.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "isa_harness.h"

using namespace rv;
using isa::Check;

namespace {

constexpr uint32_t kSoftReset = hal::common::kSoftResetReg;
constexpr uint32_t kHeld = hal::common::kSoftResetAllRiscs;

// A program that counts x5 up forever and stores it to kDataBase.
std::vector<uint32_t> counter_program(uint32_t base) {
    rv::Program p(base);
    p.li(x10, isa::kDataBase).li(x5, 0);
    p.label("loop").emit(addi(x5, x5, 1)).emit(sw(x5, x10, 0));
    p.j("loop");
    return p.words();
}

}  // namespace

TEST_CASE("soft reset: held at power-on, released, re-asserted", "[isa][tile]") {
    sim::Tile tile(sim::TileConfig{});
    CHECK(tile.read32(kSoftReset) == kHeld);
    CHECK(tile.state() == sim::RunState::Reset);
    isa::load_words(tile, 0, counter_program(0));

    // Held: the clock runs all the cycles, nothing executes.
    CHECK(tile.step(1000) == 1000);
    CHECK(tile.state() == sim::RunState::Reset);
    CHECK(tile.instret() == 0);
    CHECK(tile.read32(isa::kDataBase) == 0);

    // Releasing only another RISC's bit keeps ERISC0 held.
    tile.write32(kSoftReset, kHeld & ~hal::common::kSoftResetErisc1);
    tile.step(100);
    CHECK(tile.state() == sim::RunState::Reset);
    CHECK(tile.instret() == 0);

    // Release ERISC0.
    tile.write32(kSoftReset, isa::release_value());
    CHECK(tile.state() == sim::RunState::Running);
    CHECK(tile.step(1000) == 1000);
    const uint32_t count = tile.read32(isa::kDataBase);
    CHECK(count > 100);
    CHECK(tile.instret() > 300);

    // Re-assert: the core stops at once and its counters clear.
    tile.write32(kSoftReset, kHeld);
    CHECK(tile.state() == sim::RunState::Reset);
    CHECK(tile.instret() == 0);
    const uint32_t frozen = tile.read32(isa::kDataBase);
    tile.step(1000);
    CHECK(tile.read32(isa::kDataBase) == frozen);

    // Release again: it starts from the reset PC, so the count restarts from 1.
    tile.write32(isa::kDataBase, 0);
    tile.write32(kSoftReset, isa::release_value());
    tile.step(12);
    const uint32_t restarted = tile.read32(isa::kDataBase);
    CHECK(restarted >= 1);
    CHECK(restarted < 5);
}

TEST_CASE("the core can put itself back into soft reset", "[isa][tile]") {
    sim::Tile tile(sim::TileConfig{});
    rv::Program p(0);
    p.li(x10, isa::kDataBase).li(x11, 0x1234).emit(sw(x11, x10, 0));
    p.li(x12, kSoftReset).li(x13, kHeld).emit(sw(x13, x12, 0));
    p.emit(sw(x0, x10, 0));  // must not run
    isa::run_program(tile, p.words(), 1000);
    CHECK(tile.state() == sim::RunState::Reset);
    CHECK(tile.read32(isa::kDataBase) == 0x1234);
    CHECK(tile.read32(kSoftReset) == kHeld);
}

TEST_CASE("reset PC: the core boots where the register says", "[isa][tile]") {
    sim::Tile tile(sim::TileConfig{});
    constexpr uint32_t kBoot = 0x9040;  // the WH app firmware base, for instance
    CHECK(tile.read32(hal::common::kErisc0ResetPcReg) == 0);
    CHECK(tile.read32(hal::common::kErisc1ResetPcReg) == 0);
    // Something at 0 that would exit with code 99 if the core started there.
    rv::Program bad(0);
    bad.li(x30, hal::simctrl::kExit).li(x1, 99).emit(sw(x1, x30, 0));
    isa::load_words(tile, 0, bad.words());
    rv::Program good(kBoot);
    good.li(x30, hal::simctrl::kExit).li(x1, 7).emit(sw(x1, x30, 0));
    isa::load_words(tile, kBoot, good.words());
    tile.write32(hal::common::kErisc0ResetPcReg, kBoot);
    tile.write32(hal::common::kErisc1ResetPcReg, 0x1111);
    CHECK(tile.read32(hal::common::kErisc0ResetPcReg) == kBoot);
    CHECK(tile.read32(hal::common::kErisc1ResetPcReg) == 0x1111);
    CHECK(tile.pc() == kBoot);
    isa::release_and_run(tile);
    INFO(isa::describe(tile));
    REQUIRE(tile.state() == sim::RunState::Exited);
    CHECK(tile.exit_code() == 7);
}

TEST_CASE("the core reads and writes its own control registers", "[isa][tile]") {
    Check c;
    c.p.li(x10, hal::common::kErisc1ResetPcReg)
        .li(x1, 0xABCD0)
        .emit(sw(x1, x10, 0))
        .emit(lw(x3, x10, 0));
    c.expect(x3, 0xABCD0, "ERISC1 reset PC written by the core");
    c.p.li(x11, hal::common::kSoftResetReg).emit(lw(x3, x11, 0));
    c.expect(x3, isa::release_value(), "soft reset as the core sees it");
    c.p.li(x1, 0x55).emit(sb(x1, x10, 1)).emit(lw(x3, x10, 0));
    c.expect(x3, 0xA55D0, "byte write into a register");
    sim::Tile& t = c.run();
    CHECK(t.read32(hal::common::kErisc1ResetPcReg) == 0xA55D0);
}

TEST_CASE("wall clock: free-running from power-on, hi latched by a lo read", "[isa][tile]") {
    sim::Tile tile(sim::TileConfig{});
    const uint32_t w0 = tile.read32(hal::common::kWallClockLo);
    tile.step(5000);
    const uint32_t w1 = tile.read32(hal::common::kWallClockLo);
    CHECK(w1 - w0 == 5001);  // 5000 steps plus the cycle of the first read
    CHECK(tile.cycles() == 5002);
    CHECK(tile.read32(hal::common::kWallClockHi) == 0);
    CHECK(tile.read32(hal::common::kWallClockHiAt) == 0);

    // From the core: two reads of WALL_CLOCK_0 around a delay loop.
    Check c;
    c.p.li(x10, hal::common::kWallClockLo).emit(lw(x5, x10, 0));
    c.p.li(x6, 100).label("d").emit(addi(x6, x6, -1));
    c.p.bne(x6, x0, "d");
    c.p.emit(lw(x7, x10, 0)).emit(sub(x8, x7, x5)).emit(sltiu(x9, x8, 201));
    c.expect(x9, 0, "wall clock advanced by more than 200 cycles over the loop");
    c.p.emit(lw(x3, x10, 8));
    c.expect(x3, 0, "WALL_CLOCK_1 at the last _0 read");
    c.p.emit(lw(x3, x10, 4));
    c.expect(x3, 0, "WALL_CLOCK_1");
    c.run();
}

TEST_CASE("console and exit through the sim-control block", "[isa][tile]") {
    sim::Tile tile(sim::TileConfig{});
    rv::Program p(0);
    p.li(x10, hal::simctrl::kConsoleChar);
    for (char ch : std::string("hello, fabric\n"))
        p.li(x1, static_cast<uint8_t>(ch)).emit(sb(x1, x10, 0));
    p.li(x1, 0x41).emit(sw(x1, x10, 0));  // word store: low byte
    p.li(x30, hal::simctrl::kExit).li(x1, 0xDEAD).emit(sw(x1, x30, 0));
    p.emit(sb(x1, x10, 0));  // after exit: never printed
    isa::run_program(tile, p.words());
    INFO(isa::describe(tile));
    REQUIRE(tile.state() == sim::RunState::Exited);
    CHECK(tile.exit_code() == 0xDEAD);
    CHECK(tile.console() == "hello, fabric\nA");
    CHECK(tile.step(10) == 0);

    // with a sink installed the characters go there instead
    sim::Tile t2(sim::TileConfig{});
    std::string sunk;
    t2.on_console([&](char ch) { sunk.push_back(ch); });
    isa::run_program(t2, p.words());
    CHECK(sunk == "hello, fabric\nA");
    CHECK(t2.console().empty());
}

TEST_CASE("exit code: the word as the store leaves it", "[isa][tile]") {
    const std::tuple<uint32_t, uint32_t, const char*> cases[] = {
        {sb(x1, x30, 0), 0x000000F5, "sb"},
        {sh(x1, x30, 0), 0x0000A5F5, "sh"},
        {sw(x1, x30, 0), 0x8765A5F5, "sw"},
        {sb(x1, x30, 1), 0x0000F500, "sb +1"},
    };
    for (const auto& [store, want, what] : cases) {
        INFO(what);
        rv::Program p(0);
        p.li(x30, hal::simctrl::kExit).li(x1, 0x8765A5F5).emit(store);
        sim::Tile tile(sim::TileConfig{});
        isa::run_program(tile, p.words());
        REQUIRE(tile.state() == sim::RunState::Exited);
        CHECK(tile.exit_code() == want);
    }
}

TEST_CASE("external MMIO port: handler answers reads and writes, errors fault", "[isa][tile]") {
    constexpr uint32_t kReg = hal::common::kNocRegsBase + 0x40;
    std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> writes;
    std::vector<std::pair<uint32_t, uint32_t>> reads;
    sim::MmioHandler h;
    h.read = [&](uint32_t addr, uint32_t be) -> std::optional<uint32_t> {
        reads.emplace_back(addr, be);
        if (addr == kReg) return 0x80FF7F01u;
        return std::nullopt;
    };
    h.write = [&](uint32_t addr, uint32_t data, uint32_t be) {
        writes.emplace_back(addr, data, be);
        return addr == kReg;
    };

    Check c;
    c.p.li(x10, kReg);
    c.p.emit(lw(x3, x10, 0));
    c.expect(x3, 0x80FF7F01, "lw");
    c.p.emit(lb(x3, x10, 3));
    c.expect(x3, 0xFFFFFF80, "lb +3 sign-extended from its lane");
    c.p.emit(lhu(x3, x10, 2));
    c.expect(x3, 0x80FF, "lhu +2");
    c.p.emit(lw(x3, x10, 0)).emit(addi(x3, x3, 1));
    c.expect(x3, 0x80FF7F02, "loaded value forwarded");
    c.p.li(x1, 0x12345678).emit(sw(x1, x10, 0)).emit(sb(x1, x10, 1)).emit(sh(x1, x10, 2));
    SECTION("answered") {
        // run with the handler through a tile we build ourselves (Check::run builds its own)
        c.p.li(x30, hal::simctrl::kExit).emit(sw(x0, x30, 0));
        sim::Tile tile(sim::TileConfig{});
        tile.set_mmio_handler(h);
        isa::run_program(tile, c.p.words());
        INFO(isa::describe(tile));
        REQUIRE(tile.state() == sim::RunState::Exited);
        REQUIRE(reads.size() == 4);
        CHECK(reads[0] == std::pair<uint32_t, uint32_t>{kReg, 0xF});
        CHECK(reads[1] == std::pair<uint32_t, uint32_t>{kReg, 0x8});
        CHECK(reads[2] == std::pair<uint32_t, uint32_t>{kReg, 0xC});
        REQUIRE(writes.size() == 3);
        CHECK(writes[0] == std::tuple<uint32_t, uint32_t, uint32_t>{kReg, 0x12345678, 0xF});
        CHECK(writes[1] == std::tuple<uint32_t, uint32_t, uint32_t>{kReg, 0x78787878, 0x2});
        CHECK(writes[2] == std::tuple<uint32_t, uint32_t, uint32_t>{kReg, 0x56785678, 0xC});
        const uint32_t want[4] = {0x80FF7F01, 0xFFFFFF80, 0x80FF, 0x80FF7F02};
        for (int i = 0; i < 4; ++i) CHECK(tile.read32(isa::kResultBase + 4 * i) == want[i]);
    }
    SECTION("a write the handler refuses is a store access fault") {
        const uint32_t at = c.p.pc();
        c.p.li(x11, kReg + 0x100).emit(sw(x1, x11, 0));
        sim::Tile tile(sim::TileConfig{});
        tile.set_mmio_handler(h);
        isa::run_program(tile, c.p.words());
        isa::require_trap(tile, 7, at + 8, kReg + 0x100);
    }
    SECTION("a read the handler refuses is a load access fault") {
        const uint32_t at = c.p.pc();
        c.p.li(x11, kReg + 0x104).emit(lb(x5, x11, 3));
        sim::Tile tile(sim::TileConfig{});
        tile.set_mmio_handler(h);
        isa::run_program(tile, c.p.words());
        isa::require_trap(tile, 5, at + 8, kReg + 0x107);
    }
}

TEST_CASE("NOC-side access: L1 byte-exact, registers by word, errors name the address",
          "[isa][tile]") {
    sim::Tile tile(sim::TileConfig{});
    const uint8_t bytes[5] = {1, 2, 3, 4, 5};
    tile.write(0x101, bytes);
    uint8_t back[7] = {};
    tile.read(0x100, back);
    const uint8_t want[7] = {0, 1, 2, 3, 4, 5, 0};
    for (int i = 0; i < 7; ++i) CHECK(back[i] == want[i]);
    CHECK(tile.cycles() == 0);  // L1 copies take no simulated time

    const uint32_t l1 = tile.config().l1_size;
    CHECK_THROWS_AS(tile.write32(l1, 1), std::out_of_range);
    CHECK_THROWS_AS(tile.read32(l1 - 2), std::out_of_range);  // straddles the end of L1
    CHECK_THROWS_AS(tile.read32(0x80000000), std::out_of_range);
    CHECK_THROWS_AS(tile.read32(hal::common::kLocalDataRamBase), std::out_of_range);
    CHECK_THROWS_AS(tile.read32(kSoftReset + 2), std::out_of_range);
    try {
        tile.read32(0x80000000);
    } catch (const std::out_of_range& e) {
        CHECK(std::string(e.what()).find("0x80000000") != std::string::npos);
    }
    // register access through the byte-span interface: whole aligned words only
    const uint32_t pc0 = 0x100;
    tile.write(hal::common::kErisc0ResetPcReg,
               std::span(reinterpret_cast<const uint8_t*>(&pc0), 4));
    CHECK(tile.read32(hal::common::kErisc0ResetPcReg) == 0x100);
    const uint8_t two[2] = {1, 2};
    CHECK_THROWS_AS(tile.write(hal::common::kErisc0ResetPcReg, two), std::out_of_range);
    CHECK_THROWS_AS(tile.write32(hal::common::kErisc0ResetPcReg + 4, 1),
                    std::out_of_range);  // not a register
    // the wall clock ignores writes
    const uint32_t w = tile.read32(hal::common::kWallClockLo);
    tile.write32(hal::common::kWallClockLo, 0);
    CHECK(tile.read32(hal::common::kWallClockLo) == w + 2);
}

TEST_CASE("config validation", "[isa][tile]") {
    sim::TileConfig bad;
    bad.l1_size = 1001;
    CHECK_THROWS_AS(sim::Tile(bad), std::invalid_argument);
    bad = {};
    bad.ldm_size = 16 * 1024;
    CHECK_THROWS_AS(sim::Tile(bad), std::invalid_argument);
    bad = {};
    bad.timing.l1_load_latency = 0;
    CHECK_THROWS_AS(sim::Tile(bad), std::invalid_argument);
    bad = {};
    bad.timing.div_latency = 1000;
    CHECK_THROWS_AS(sim::Tile(bad), std::invalid_argument);
}

// ---- timing knobs, measured by the program itself with mcycle
// ---------------------------------------
namespace {

// mcycle delta around `body`: csrr; body; csrr. A delta of 1 + sum(costs of body).
uint32_t measure(const std::vector<uint32_t>& body, const sim::TileConfig& cfg,
                 const sim::MmioHandler* h = nullptr) {
    rv::Program p(0);
    p.li(x10, isa::kDataBase)
        .li(x11, hal::common::kLocalDataRamBase)
        .li(x12, hal::common::kNocRegsBase);
    p.li(x1, 1000).li(x2, 7);
    p.emit(csrr(x20, csr::mcycle));
    p.emit(body);
    p.emit(csrr(x21, csr::mcycle)).emit(sub(x22, x21, x20));
    p.li(x31, isa::kResultBase).emit(sw(x22, x31, 0));
    p.li(x30, hal::simctrl::kExit).emit(sw(x0, x30, 0));
    sim::Tile tile(cfg);
    if (h) tile.set_mmio_handler(*h);
    isa::run_program(tile, p.words());
    INFO(isa::describe(tile));
    REQUIRE(tile.state() == sim::RunState::Exited);
    return tile.read32(isa::kResultBase);
}

sim::TileConfig timing(uint32_t l1_load, uint32_t l1_store, uint32_t ldm, uint32_t div_lat,
                       uint32_t branch) {
    sim::TileConfig cfg;
    cfg.timing = {.l1_load_latency = l1_load,
                  .l1_store_interval = l1_store,
                  .ldm_load_latency = ldm,
                  .div_latency = div_lat,
                  .branch_penalty = branch};
    return cfg;
}

}  // namespace

TEST_CASE("timing: defaults follow the Wormhole ERISC", "[isa][tile][timing]") {
    const sim::TileConfig d;
    CHECK(measure({}, d) == 1);
    CHECK(measure({add(x3, x1, x2)}, d) == 2);
    CHECK(measure({mul(x3, x1, x2)}, d) == 2);       // MUL: 1 cycle
    CHECK(measure({div(x3, x1, x2)}, d) == 1 + 16);  // DIV: 16
    CHECK(measure({remu(x3, x1, x2)}, d) == 1 + 16);
    CHECK(measure({lw(x3, x10, 0)}, d) == 1 + 7);                       // L1 load: 7
    CHECK(measure({lw(x3, x10, 0), addi(x4, x3, 1)}, d) == 1 + 7 + 1);  // no extra load-use bubble
    CHECK(measure({lw(x3, x11, 0)}, d) == 1 + 2);                       // local data RAM load: 2
    CHECK(measure({sw(x1, x10, 0)}, d) == 2);                           // stores are posted
    CHECK(measure({sw(x1, x10, 0), sw(x1, x10, 4)}, d) == 1 + 1 + 5);   // one L1 store per 5 cycles
    CHECK(measure({sw(x1, x10, 0), sw(x1, x11, 4)}, d) == 3);  // ldm stores are not limited
    CHECK(measure({jal(x0, 4)}, d) == 1 + 1 + 1);              // taken: 1 bubble
    CHECK(measure({beq(x0, x1, 8), nop()}, d) == 3);           // not taken: none
    CHECK(measure({lw(x3, x10, 0), lw(x4, x10, 4)}, d) == 1 + 7 + 7);
}

TEST_CASE("timing: knobs change exactly what they name", "[isa][tile][timing]") {
    CHECK(measure({lw(x3, x10, 0)}, timing(3, 5, 2, 16, 1)) == 1 + 3);
    CHECK(measure({lw(x3, x10, 0)}, timing(1, 5, 2, 16, 1)) == 1 + 1);
    CHECK(measure({lw(x3, x11, 0)}, timing(7, 5, 4, 16, 1)) == 1 + 4);
    CHECK(measure({sw(x1, x10, 0), sw(x1, x10, 4)}, timing(7, 1, 2, 16, 1)) == 3);
    CHECK(measure({sw(x1, x10, 0), sw(x1, x10, 4)}, timing(7, 9, 2, 16, 1)) == 2 + 9);
    CHECK(measure({sw(x1, x10, 0), nop(), nop(), nop(), nop(), sw(x1, x10, 4)},
                  timing(7, 5, 2, 16, 1)) == 7);
    CHECK(measure({div(x3, x1, x2)}, timing(7, 5, 2, 1, 1)) == 2);
    CHECK(measure({div(x3, x1, x2)}, timing(7, 5, 2, 33, 1)) == 1 + 33);
    CHECK(measure({jal(x0, 4)}, timing(7, 5, 2, 16, 0)) == 2);
    CHECK(measure({jal(x0, 4)}, timing(7, 5, 2, 16, 3)) == 2 + 3);
    CHECK(measure({bne(x0, x1, 4)}, timing(7, 5, 2, 16, 4)) == 2 + 4);
    // external MMIO: answered in the cycle after issue
    sim::MmioHandler h;
    h.read = [](uint32_t, uint32_t) -> std::optional<uint32_t> { return 5u; };
    h.write = [](uint32_t, uint32_t, uint32_t) { return true; };
    CHECK(measure({lw(x3, x12, 0)}, sim::TileConfig{}, &h) == 2);
    CHECK(measure({sw(x3, x12, 0), sw(x3, x12, 0)}, sim::TileConfig{}, &h) == 3);
}

TEST_CASE("determinism: the same program takes the same cycles every run", "[isa][tile]") {
    rv::Program p(0);
    p.li(x10, isa::kDataBase).li(x11, hal::common::kLocalDataRamBase).li(x5, 200).li(x6, 0);
    p.label("loop");
    p.emit(lw(x7, x10, 0)).emit(add(x6, x6, x7)).emit(sw(x6, x10, 0)).emit(div(x8, x6, x5));
    p.emit(sw(x8, x11, 0)).emit(lw(x9, x11, 0)).emit(mulh(x9, x9, x6));
    p.emit(andi(x12, x5, 3));
    p.beq(x12, x0, "skip").emit(addi(x6, x6, 3));
    p.label("skip").emit(addi(x5, x5, -1));
    p.bne(x5, x0, "loop");
    p.li(x30, hal::simctrl::kExit).emit(sw(x6, x30, 0));
    const auto words = p.words();

    auto once = [&] {
        sim::Tile tile(sim::TileConfig{});
        isa::load_words(tile, isa::kDataBase, {1});
        isa::run_program(tile, words);
        REQUIRE(tile.state() == sim::RunState::Exited);
        return std::tuple{tile.cycles(), tile.instret(), tile.exit_code(),
                          tile.read32(hal::common::kWallClockLo)};
    };
    const auto a = once();
    const auto b = once();
    CHECK(a == b);
    CHECK(std::get<0>(a) > 1000);
}

TEST_CASE("FST tracing", "[isa][tile]") {
    if (!sim::Tile::tracing_available()) {
        sim::Tile tile(sim::TileConfig{});
        CHECK_THROWS_AS(tile.trace_to("x.fst"), std::runtime_error);
        return;
    }
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("isa_trace_" + std::to_string(::getpid()) + ".fst"))
                                 .string();
    {
        sim::Tile tile(sim::TileConfig{});
        tile.trace_to(path);
        isa::run_program(tile, {addi(x3, x0, 5), jal(x0, 0)}, 200);
        CHECK(tile.state() == sim::RunState::Running);
        CHECK(tile.cycles() == 201);
    }
    std::error_code ec;
    CHECK(std::filesystem::file_size(path, ec) > 100);
    std::filesystem::remove(path, ec);
}
