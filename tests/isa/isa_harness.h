// Shared helpers for the RV32IM self-tests: load a hand-encoded program into a sim::Tile, release
// the core from soft reset, run it to its end and compare what it stored with what it must have
// stored.
//
// A self-checking program (isa::Check) keeps a pointer to its result area in one register
// (x31 unless told otherwise) and stores every value to be checked there with expect(); its last
// instructions write 0 to the sim-control exit register. After the run each stored word is
// compared with the expected value, and every mismatch is reported with its description.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "rv_encode.h"
#include "tile.h"

namespace isa {

inline constexpr uint32_t kCodeBase = 0x0;
inline constexpr uint32_t kResultBase = 0x10000;  // in L1, far above any test program
inline constexpr uint32_t kDataBase = 0x20000;    // scratch data for load/store tests
inline constexpr uint64_t kMaxCycles = 1'000'000;

// "prefix" + number. (Spelled out because GCC 12 raises a false -Wrestrict on
// "literal" + std::to_string(n); GCC bug 105329.)
inline std::string label(const char* prefix, long long n) {
    std::string s(prefix);
    s += std::to_string(n);
    return s;
}

inline uint32_t release_value() {
    return hal::common::kSoftResetAllRiscs & ~hal::common::kSoftResetErisc0;
}

// Copy `words` to L1 at `addr` through the NOC-side path.
inline void load_words(sim::Tile& tile, uint32_t addr, const std::vector<uint32_t>& words) {
    for (size_t i = 0; i < words.size(); ++i)
        tile.write32(addr + static_cast<uint32_t>(4 * i), words[i]);
}

// Take the core out of soft reset and run until it stops (or max_cycles).
inline uint64_t release_and_run(sim::Tile& tile, uint64_t max_cycles = kMaxCycles) {
    tile.write32(hal::common::kSoftResetReg, release_value());
    return tile.step(max_cycles);
}

inline std::string describe(const sim::Tile& tile) {
    std::string s;
    switch (tile.state()) {
        case sim::RunState::Reset:
            s = "in reset";
            break;
        case sim::RunState::Running:
            s = "still running";
            break;
        case sim::RunState::Exited:
            s = label("exited with ", tile.exit_code());
            break;
        case sim::RunState::Trapped: {
            const sim::TrapInfo t = tile.trap();
            char buf[160];
            std::snprintf(buf, sizeof buf, "trapped: cause %u (%s) pc 0x%08x tval 0x%08x", t.cause,
                          sim::trap_cause_name(t.cause), t.pc, t.tval);
            s = buf;
            break;
        }
        default:
            s = "unknown state";
            break;
    }
    return s + " after " + std::to_string(tile.cycles()) + " cycles, pc 0x" + [&] {
        char b[16];
        std::snprintf(b, sizeof b, "%08x", tile.pc());
        return std::string(b);
    }();
}

// Run `words` (at kCodeBase) to its end on a fresh tile; the tile is returned for inspection.
inline void run_program(sim::Tile& tile, const std::vector<uint32_t>& words,
                        uint64_t max_cycles = kMaxCycles) {
    load_words(tile, kCodeBase, words);
    release_and_run(tile, max_cycles);
}

// Expect the program to have stopped with exactly this trap.
inline void require_trap(const sim::Tile& tile, uint32_t cause, uint32_t pc, uint32_t tval) {
    INFO(describe(tile));
    REQUIRE(tile.state() == sim::RunState::Trapped);
    const sim::TrapInfo t = tile.trap();
    CHECK(t.cause == cause);
    CHECK(t.pc == pc);
    CHECK(t.tval == tval);
}

class Check {
  public:
    using RRR = uint32_t (*)(unsigned, unsigned, unsigned);
    using RRI = uint32_t (*)(unsigned, unsigned, int32_t);

    // With set_base false the program must load kResultBase into base_reg before its first
    // expect().
    explicit Check(unsigned base_reg = rv::x31, bool set_base = true) : base_reg_(base_reg) {
        if (set_base) p.li(base_reg_, kResultBase);
    }

    rv::Program p{kCodeBase};

    // Store register r to the next result slot; after the run it must hold `value`.
    Check& expect(unsigned r, uint32_t value, std::string what) {
        if (offset_ > 2044) {  // keep the store offset within 12 bits
            p.emit(rv::addi(base_reg_, base_reg_, offset_));
            offset_ = 0;
        }
        p.emit(rv::sw(r, base_reg_, offset_));
        offset_ += 4;
        expected_.push_back(Slot{value, std::move(what)});
        return *this;
    }

    // rd = op(a, b) with a in x1, b in x2, result in x3.
    Check& rr(RRR op, uint32_t a, uint32_t b, uint32_t want, const std::string& what) {
        p.li(rv::x1, a).li(rv::x2, b).emit(op(rv::x3, rv::x1, rv::x2));
        return expect(rv::x3, want, what + "(" + hexs(a) + ", " + hexs(b) + ")");
    }
    // rd = op(a, imm) with a in x1, result in x3.
    Check& ri(RRI op, uint32_t a, int32_t imm, uint32_t want, const std::string& what) {
        p.li(rv::x1, a).emit(op(rv::x3, rv::x1, imm));
        return expect(rv::x3, want, what + "(" + hexs(a) + ", " + std::to_string(imm) + ")");
    }

    // Append the exit sequence, run on a tile with `cfg`, and check every slot.
    sim::Tile& run(const sim::TileConfig& cfg = {}) {
        p.li(rv::x30, hal::simctrl::kExit).emit(rv::sw(rv::x0, rv::x30, 0));
        tile_ = std::make_unique<sim::Tile>(cfg);
        run_program(*tile_, p.words());
        INFO(describe(*tile_));
        REQUIRE(tile_->state() == sim::RunState::Exited);
        REQUIRE(tile_->exit_code() == 0);
        std::vector<uint32_t> got(expected_.size());
        tile_->read(kResultBase, std::span(reinterpret_cast<uint8_t*>(got.data()), 4 * got.size()));
        for (size_t i = 0; i < expected_.size(); ++i) {
            INFO("slot " << i << ": " << expected_[i].what << " = " << hexs(got[i]) << ", expected "
                         << hexs(expected_[i].value));
            CHECK(got[i] == expected_[i].value);
        }
        return *tile_;
    }

    size_t checks() const { return expected_.size(); }

    static std::string hexs(uint32_t v) {
        char b[16];
        std::snprintf(b, sizeof b, "0x%08x", v);
        return b;
    }

  private:
    struct Slot {
        uint32_t value;
        std::string what;
    };
    unsigned base_reg_;
    int32_t offset_ = 0;
    std::vector<Slot> expected_;
    std::unique_ptr<sim::Tile> tile_;
};

}  // namespace isa
