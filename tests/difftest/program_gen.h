// Seeded random RV32IM programs for differential testing (our core against qemu-system-riscv32).
//
// A program is a position-independent BODY (the same instruction words on every platform) plus an
// initial data region. Platforms wrap the body with a tiny prologue that puts the absolute address
// of the body in one reserved register (code base) and the address of the middle of the data
// region in another (data base), and an epilogue that makes the signature visible (see
// platform.h). Everything the body leaves in the signature is platform independent:
//   - every auipc/jal/jalr link value is immediately rebased by subtracting the code base;
//   - an address formed in a scratch register is rebased by subtracting the data base before the
//     block ends, and is never stored to memory;
//   - the two base registers are excluded from the signature.
// Control flow terminates by construction: branches and jumps go forward to a block boundary, and
// the only backward branches close counted loops whose counter register nothing else writes.
// Generated programs never trap (every access is naturally aligned and inside the data region,
// every jump target is 4-byte aligned) and read no counters.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace difftest {

// The data region every program loads and stores in, and the register dump just below it.
inline constexpr uint32_t kDataBytes = 1024;
inline constexpr int32_t kDataBaseOffset = 512;   // data-base register = region start + 512
inline constexpr uint32_t kSigRegBytes = 32 * 4;  // x0..x31, immediately below the data region
// Offset of the register dump from the data-base register.
inline constexpr int32_t kSigRegOffset = -kDataBaseOffset - static_cast<int32_t>(kSigRegBytes);
// Trace area, immediately above the data region: most blocks end by storing their result register
// into their own slot, so a wrong value is seen even when a later block overwrites the register,
// and the first divergent slot names the first block that computed something different.
inline constexpr uint32_t kTraceSlots = 384;
inline constexpr uint32_t kTraceBytes = 4 * kTraceSlots;
inline constexpr int32_t kTraceOffset = static_cast<int32_t>(kDataBytes) - kDataBaseOffset;
static_assert(kTraceOffset + kTraceBytes - 4 <= 2047,
              "trace slots must be reachable with a 12-bit offset");
// The signature, as bytes: register dump, data region, trace area (contiguous in memory).
inline constexpr uint32_t kSignatureBytes = kSigRegBytes + kDataBytes + kTraceBytes;

// Deterministic generator (splitmix64): the same seed gives the same program on every host and
// standard library, which std::uniform_int_distribution does not promise.
class Rng {
  public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next();
    uint32_t u32() { return static_cast<uint32_t>(next() >> 32); }
    uint32_t below(uint32_t n);             // uniform in [0, n)
    int32_t range(int32_t lo, int32_t hi);  // uniform in [lo, hi]
    bool chance(uint32_t percent) { return below(100) < percent; }

  private:
    uint64_t state_;
};

struct GenOptions {
    uint32_t units = 140;  // top-level units (a block, or a whole loop)
    // Keep only the first `keep_units` units (the rest of the random stream is still drawn so the
    // kept prefix is word-for-word the same as in the full program). Used to find the first unit
    // after which two platforms disagree.
    uint32_t keep_units = UINT32_MAX;
};

// One generated block: a straight-line group of words that is entered only at its first word.
struct Block {
    uint32_t first_word = 0;  // index into Program::body
    uint32_t words = 0;
    uint32_t unit = 0;        // top-level unit this block belongs to
    std::string kind;         // "alu", "load", "branch", ... (for reports)
    int32_t trace_slot = -1;  // slot its result register is stored to, or -1
    uint32_t trace_reg = 0;
};

struct Program {
    uint64_t seed = 0;
    std::vector<uint32_t> body;      // position independent; ends with the register dump
    std::vector<uint8_t> data_init;  // kDataBytes, initial data region contents
    uint32_t code_reg = 0;           // holds the absolute address of body[0]
    uint32_t data_reg = 0;           // holds the absolute address of data region + 512
    uint32_t loop_reg = 0;           // loop counter: written only by loop heads/tails
    uint32_t units = 0;              // top-level units actually emitted
    std::vector<Block> blocks;
    std::map<std::string, uint32_t> histogram;  // static count per mnemonic (plus "loop")
    // What the generator meant each body word to be ("sw.trace" is an sw, "junk" is never
    // executed); the self-test checks the encoder against objdump with it.
    std::vector<const char*> mnemonics;

    bool reserved(uint32_t reg) const { return reg == code_reg || reg == data_reg; }
};

Program generate(uint64_t seed, const GenOptions& opt = {});

// Printable register name ("x5").
std::string reg_name(uint32_t r);

}  // namespace difftest
