// Helpers for the Chip / Cluster tests: small chip specs and hand-encoded RV32I programs (no cross
// toolchain needed) that poke registers, poll with a bounded loop and exit.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "chip.h"
#include "cluster.h"
#include "hal/arch_map.h"
#include "rv_encode.h"

namespace simtest {

// A 4x3 chip: eth cores (1,0) = channel 0 and (2,0) = channel 1, workers (1,1) (2,1) (1,2) (2,2),
// DRAM channel 0 at ports (0,0) and (0,1). Nothing at (3,*), (0,2).
inline sim::ChipSpec small_spec(hal::Arch arch = hal::Arch::WormholeB0,
                                const std::string& name = "chip") {
    const hal::ArchMap& a = hal::arch_map(arch);
    sim::ChipSpec s;
    s.arch = arch;
    s.grid_x = 4;
    s.grid_y = 3;
    s.name = name;
    s.cores.push_back({1, 0, sim::CoreKind::Eth, a.eth_l1_size});
    s.cores.push_back({2, 0, sim::CoreKind::Eth, a.eth_l1_size});
    for (uint32_t y = 1; y <= 2; ++y) {
        for (uint32_t x = 1; x <= 2; ++x)
            s.cores.push_back({x, y, sim::CoreKind::Worker, 1024 * 1024});
    }
    s.dram_channels = {{{0, 0}, {0, 1}}};
    s.dram_bank_size = 1ull << 30;
    return s;
}

inline std::vector<uint8_t> to_bytes(const std::vector<uint32_t>& words) {
    std::vector<uint8_t> b;
    for (uint32_t w : words) {
        for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(w >> (8 * i)));
    }
    return b;
}

// Exit codes the programs below use for their own failures.
inline constexpr uint32_t kPollTimeout = 0x7E;

// A program builder with register-level helpers. Uses t0-t6 only.
class Asm {
  public:
    explicit Asm(uint32_t base) : p_(base) {}

    Asm& store(uint32_t addr, uint32_t value) {
        p_.li(rv::t0, addr).li(rv::t1, value).emit(rv::sw(rv::t1, rv::t0, 0));
        return *this;
    }
    // Copy the word at `from` (register or L1) to L1 `to`.
    Asm& copy(uint32_t from, uint32_t to) {
        p_.li(rv::t0, from)
            .emit(rv::lw(rv::t1, rv::t0, 0))
            .li(rv::t2, to)
            .emit(rv::sw(rv::t1, rv::t2, 0));
        return *this;
    }
    // Poll the word at `addr` until (word & mask) == value, at most `bound` times, else exit
    // with kPollTimeout.
    Asm& wait_eq(uint32_t addr, uint32_t value, uint32_t mask = 0xFFFFFFFF,
                 uint32_t bound = 1'000'000) {
        const std::string loop = label("wait");
        const std::string done = label("done");
        p_.li(rv::t3, bound).li(rv::t4, value).li(rv::t5, mask).li(rv::t0, addr);
        p_.label(loop).emit(rv::lw(rv::t1, rv::t0, 0)).emit(rv::and_(rv::t1, rv::t1, rv::t5));
        p_.beq(rv::t1, rv::t4, done).emit(rv::addi(rv::t3, rv::t3, -1)).bne(rv::t3, rv::zero, loop);
        exit(kPollTimeout);
        p_.label(done);
        return *this;
    }
    Asm& exit(uint32_t code) { return store(hal::simctrl::kExit, code); }
    // Return to the caller (ra) with a0 = value (for apps the base firmware calls).
    Asm& ret(uint32_t value) {
        p_.li(rv::a0, value).emit(rv::ret());
        return *this;
    }
    Asm& spin() {
        p_.emit(rv::j(0));
        return *this;
    }
    rv::Program& program() { return p_; }
    std::vector<uint8_t> bytes() { return to_bytes(p_.words()); }
    uint32_t base() const { return p_.base(); }

  private:
    std::string label(const char* stem) { return std::string(stem) + std::to_string(n_++); }
    rv::Program p_;
    int n_ = 0;
};

// Load a program at its base on (x, y) and release the core there (bare-metal launch).
inline void load_and_release(sim::Chip& chip, uint32_t x, uint32_t y, Asm& a) {
    namespace hc = hal::common;
    chip.write32(x, y, hc::kSoftResetReg, hc::kSoftResetAllRiscs);
    const auto b = a.bytes();
    chip.write(x, y, a.base(), b);
    chip.write32(x, y, hc::kErisc0ResetPcReg, a.base());
    chip.write32(x, y, hc::kSoftResetReg, hc::kSoftResetAllRiscs & ~hc::kSoftResetErisc0);
}

}  // namespace simtest
