// Simulated cycles per second of sim::Chip / sim::Cluster with 1, 2 and 8 running tiles (hidden:
// run `sim_cluster_tests "[.figures]"`). Figures, not assertions beyond sanity: sim/README.md keeps
// the table.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>

#include "cluster_test_util.h"
#include "hal/encoding.h"

using simtest::Asm;

namespace {

// Workers on a 10x12 grid, enough for 8 cores.
sim::ChipSpec grid_spec() {
    sim::ChipSpec s;
    s.grid_x = 10;
    s.grid_y = 12;
    for (uint32_t y = 1; y <= 2; ++y) {
        for (uint32_t x = 1; x <= 4; ++x)
            s.cores.push_back({x, y, sim::CoreKind::Worker, 1024 * 1024});
    }
    s.cores.push_back({9, 0, sim::CoreKind::Eth, hal::kWormholeB0.eth_l1_size});
    return s;
}

// The sim_speed compute loop: add xor slli sub addi bne.
Asm compute_loop() {
    Asm p(hal::kWormholeB0.app_fw_base);
    auto& g = p.program();
    g.li(rv::t0, 1).li(rv::t1, 3);
    g.label("loop");
    g.emit(rv::add(rv::t2, rv::t0, rv::t1))
        .emit(rv::xor_(rv::t3, rv::t2, rv::t0))
        .emit(rv::slli(rv::t4, rv::t3, 1));
    g.emit(rv::sub(rv::t5, rv::t4, rv::t1)).emit(rv::addi(rv::t0, rv::t0, 1));
    g.bne(rv::t0, rv::zero, "loop");
    return p;
}

// Each core repeatedly writes 2 KiB to the next core over NOC0 (posted) and waits for the command
// buffer to be free again.
Asm noc_loop(uint32_t dx, uint32_t dy) {
    const hal::ArchMap& a = hal::kWormholeB0;
    namespace hn = hal::noc;
    const uint32_t b = hn::cmd_buf_base(a, 0, 0);
    const auto ret = hn::encode_addr(a, 0x80000, hn::unicast_coord(dx, dy));
    Asm p(a.app_fw_base);
    p.store(b + hn::kTargAddrLo, 0x40000)
        .store(b + hn::kRetAddrLo, ret.lo)
        .store(b + hn::kRetAddrMid, ret.mid)
        .store(b + hn::kCtrl, hn::kCtrlCmdWrite)
        .store(b + hn::kAtLenBe, 2048);
    p.program().label("again");
    p.store(b + a.noc.cmd_ctrl, hn::kCmdCtrlSend).wait_eq(b + a.noc.cmd_ctrl, 0);
    p.program().j("again");
    return p;
}

double measure(sim::Cluster& c, uint64_t cycles) {
    const auto t0 = std::chrono::steady_clock::now();
    c.step(cycles);
    const auto t1 = std::chrono::steady_clock::now();
    return static_cast<double>(cycles) / std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace

TEST_CASE("figures: simulated cycles per second for 1, 2 and 8 running tiles", "[.figures]") {
    const uint64_t kCycles = 2'000'000;
    for (const bool noc : {false, true}) {
        for (const uint32_t n : {1u, 2u, 8u}) {
            sim::Cluster c({grid_spec()});
            sim::Chip& chip = c.chip(0);
            for (uint32_t i = 0; i < n; ++i) {
                const auto& core = chip.spec().cores[i];
                const auto& next = chip.spec().cores[(i + 1) % 8];
                chip.tile(next.x, next.y);
                Asm p = noc ? noc_loop(next.x, next.y) : compute_loop();
                simtest::load_and_release(chip, core.x, core.y, p);
            }
            c.step(10'000);  // warm up
            const double rate = measure(c, kCycles);
            std::printf("%-8s %u running tile%s: %6.2f M cycles/s (%.2f M tile-cycles/s)\n",
                        noc ? "noc" : "compute", n, n == 1 ? " " : "s", rate / 1e6, rate * n / 1e6);
            for (const auto& r : c.report()) CHECK(r.state == sim::RunState::Running);
            CHECK(chip.network().errors().empty());
        }
    }
    // Reference: one bare sim::Tile stepped in a loop (what Chip adds on top of it).
    sim::TileConfig cfg;
    sim::Tile t(cfg);
    Asm p = compute_loop();
    const auto b = p.bytes();
    t.write(p.base(), b);
    t.write32(hal::common::kErisc0ResetPcReg, p.base());
    t.write32(hal::common::kSoftResetReg,
              hal::common::kSoftResetAllRiscs & ~hal::common::kSoftResetErisc0);
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < kCycles; ++i) t.step(1);
    const auto t1 = std::chrono::steady_clock::now();
    std::printf(
        "bare Tile::step(1) loop: %6.2f M cycles/s\n",
        static_cast<double>(kCycles) / std::chrono::duration<double>(t1 - t0).count() / 1e6);
}

TEST_CASE("figures: run_until_done overhead", "[.figures]") {
    for (const uint32_t n : {1u, 8u}) {
        sim::Cluster c({grid_spec()});
        sim::Chip& chip = c.chip(0);
        for (uint32_t i = 0; i < n; ++i) {
            const auto& core = chip.spec().cores[i];
            Asm p = compute_loop();
            simtest::load_and_release(chip, core.x, core.y, p);
        }
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = c.run_until_done(2'000'000);
        const auto t1 = std::chrono::steady_clock::now();
        CHECK_FALSE(r.done);
        std::printf("run_until_done, %u running tile%s: %6.2f M cycles/s\n", n, n == 1 ? " " : "s",
                    2e6 / std::chrono::duration<double>(t1 - t0).count() / 1e6);
    }
}
