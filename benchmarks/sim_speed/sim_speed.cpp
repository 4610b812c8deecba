// sim_speed: how fast one sim::Tile simulates, and the CPI the model gives two kinds of loop.
//
//   sim_speed [cycles]            (default 50,000,000 simulated cycles per workload)
//   sim_speed --elf firmware.elf  run one firmware image to its exit (e.g. compute_bound.elf)
//
// Workloads (hand-encoded RV32IM, loaded at L1 address 0, released from soft reset):
//   compute  6-instruction ALU loop (add, xor, slli, sub, addi, bne), no memory access
//   load     6-instruction loop with two L1 loads (lw, lw, add, add, addi, bne)
//   ldm      the load loop reading the local data RAM instead of L1
//   store    6-instruction loop with two L1 stores
// For each: simulated cycles, wall and process-CPU time with the simulated cycles per second of
// each (CPU time is the steadier figure on a shared machine), instructions retired, CPI.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "fabric/elf.h"
#include "fabric/error.h"
#include "rv_encode.h"
#include "tile.h"

namespace {

using namespace rv;

std::vector<uint32_t> workload(const std::string& kind) {
    Program p(0);
    p.li(t0, 0x7FFFFFFF);  // iterations: more than any run needs
    p.li(t1, 0);
    p.li(a0, kind == "ldm" ? hal::common::kLocalDataRamBase : 0x1000u);
    p.label("loop");
    if (kind == "compute") {
        p.emit(add(t1, t1, t0)).emit(xor_(t2, t1, t0)).emit(slli(t3, t2, 3)).emit(sub(t1, t1, t3));
    } else if (kind == "load" || kind == "ldm") {
        p.emit(lw(t2, a0, 0)).emit(lw(t3, a0, 4)).emit(add(t1, t1, t2)).emit(add(t1, t1, t3));
    } else {  // store
        p.emit(sw(t0, a0, 0)).emit(sw(t1, a0, 4)).emit(add(t1, t1, t0)).emit(add(t1, t1, t0));
    }
    p.emit(addi(t0, t0, -1));
    p.bne(t0, x0, "loop");
    return p.words();
}

void print_speed(const char* what, uint64_t ran, double secs, double cpu, const sim::Tile& tile) {
    const uint64_t insns = tile.instret();
    std::printf(
        "%-8s %11llu cycles  wall %7.3f s %6.2f Mcyc/s  cpu %7.3f s %6.2f Mcyc/s  instret %11llu  "
        "CPI %.3f\n",
        what, static_cast<unsigned long long>(ran), secs, static_cast<double>(ran) / secs / 1e6,
        cpu, static_cast<double>(ran) / cpu / 1e6, static_cast<unsigned long long>(insns),
        insns ? static_cast<double>(tile.cycles()) / static_cast<double>(insns) : 0.0);
}

void run(const std::string& kind, uint64_t cycles) {
    sim::Tile tile(sim::TileConfig{});
    const auto words = workload(kind);
    for (size_t i = 0; i < words.size(); ++i) tile.write32(static_cast<uint32_t>(4 * i), words[i]);
    tile.write32(hal::common::kSoftResetReg,
                 hal::common::kSoftResetAllRiscs & ~hal::common::kSoftResetErisc0);

    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    const uint64_t ran = tile.step(cycles);
    const std::clock_t c1 = std::clock();
    const auto t1 = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(t1 - t0).count();
    const double cpu = static_cast<double>(c1 - c0) / CLOCKS_PER_SEC;
    print_speed(kind.c_str(), ran, secs, cpu, tile);
    if (tile.state() != sim::RunState::Running) {
        std::fprintf(stderr, "sim_speed: %s workload stopped early (state %d)\n", kind.c_str(),
                     static_cast<int>(tile.state()));
        std::exit(1);
    }
}

// A firmware image on a Wormhole ERISC tile: load its segments, start at its entry, run to exit.
int run_elf(const std::string& path) {
    const auto image = fabric::ElfImage::load_file(path);
    sim::Tile tile(sim::TileConfig{});
    for (const auto& seg : image.segments()) tile.write(seg.address, seg.bytes);
    tile.write32(hal::common::kErisc0ResetPcReg, image.entry());
    std::string console;
    tile.on_console([&](char c) { console += c; });
    tile.write32(hal::common::kSoftResetReg,
                 hal::common::kSoftResetAllRiscs & ~hal::common::kSoftResetErisc0);

    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    const uint64_t ran = tile.step(uint64_t{1} << 34);
    const std::clock_t c1 = std::clock();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = static_cast<double>(c1 - c0) / CLOCKS_PER_SEC;
    std::printf("%s", console.c_str());
    print_speed("firmware", ran, secs, cpu, tile);
    if (tile.state() != sim::RunState::Exited || tile.exit_code() != 0) {
        std::fprintf(stderr, "sim_speed: %s did not exit cleanly\n", path.c_str());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--elf") {
        try {
            return run_elf(argv[2]);
        } catch (const fabric::Error& e) {
            std::fprintf(stderr, "sim_speed: %s\n", e.what());
            return 1;
        }
    }
    uint64_t cycles = 50'000'000;
    if (argc > 1) {
        char* end = nullptr;
        cycles = std::strtoull(argv[1], &end, 0);
        if (argc > 2 || *end != '\0' || cycles == 0) {
            std::fprintf(stderr, "usage: sim_speed [cycles] | sim_speed --elf firmware.elf\n");
            return 2;
        }
    }
    std::printf("sim::Tile speed, %llu cycles per workload, tracing %s\n",
                static_cast<unsigned long long>(cycles),
                sim::Tile::tracing_available() ? "compiled in (off)" : "not compiled in");
    for (const char* k : {"compute", "load", "ldm", "store"}) run(k, cycles);
    return 0;
}
