// Wrapping a generated body for one platform, and the signature both platforms produce.
//
// Image layout (offsets from Layout::base):
//   +0            prologue: code-base reg = &body, data-base reg = &data + 512, [QEMU: mtvec]; jump
//   +body_off     the body (identical words on every platform), then the platform epilogue
//   +data_off-128 register dump (x0..x31, 128 bytes; zero-initialised)
//   +data_off     data region (kDataBytes, seeded contents)
//   then          trace area (kTraceBytes, zero-initialised)
// The signature is the register dump, the data region and the trace area, as bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "program_gen.h"

namespace difftest {

enum class Platform { Qemu, Tile };

struct Layout {
    uint32_t base;
    uint32_t body_off;
    uint32_t data_off;
    // Tile only, 0 = unused: where the program's register dump, data region and trace area live
    // while it runs (e.g. the core-local data RAM, which the host cannot reach). The prologue
    // copies them there from the image, the epilogue copies them back; both copy loops run on the
    // core being tested.
    uint32_t live_sig_addr = 0;
};

// qemu-system-riscv32 -M virt: RAM at 0x80000000; the reset ROM jumps there with -bios none.
inline constexpr Layout kQemuLayout{0x80000000u, 0x100, 0x8000};
// Same platform, everything moved: running both and comparing proves the body is position
// independent (the generator's self-test).
inline constexpr Layout kQemuAltLayout{0x80000000u, 0x2344, 0x14C00};
// Our tile: L1 at 0. Placed where Wormhole application firmware goes (FIRMWARE_BASE 0x9040).
inline constexpr Layout kTileLayout{0x9040u, 0x40, 0x10000};
// Our tile with the data in the local data RAM (0xFFB00000, 4 KiB on Wormhole).
inline constexpr Layout kTileLdmLayout{0x9040u, 0x80, 0x10000, 0xFFB00100u};

// Platform MMIO used by the epilogues.
inline constexpr uint32_t kQemuUart = 0x10000000;  // ns16550a THR; LSR at +5
inline constexpr uint32_t kQemuTestDev =
    0x00100000;                              // sifive_test: 0x5555 pass, code<<16|0x3333 fail
inline constexpr int kQemuTrapExitCode = 2;  // what the QEMU trap handler exits with

struct Image {
    uint32_t base = 0;
    std::vector<uint8_t> bytes;  // loaded at base
    uint32_t body_addr = 0;
    uint32_t sig_addr = 0;  // register dump; the data region follows it
};

Image build_image(const Program& prog, Platform platform, const Layout& layout);

struct Signature {
    std::array<uint32_t, 32> regs{};
    std::vector<uint8_t> data;   // kDataBytes
    std::vector<uint8_t> trace;  // kTraceBytes
};

// From kSignatureBytes raw bytes (little endian).
Signature parse_signature(const std::vector<uint8_t>& raw);
std::vector<uint8_t> serialize_signature(const Signature& s);

// One place where two signatures disagree.
struct Difference {
    enum Where : uint8_t { Trace, Reg, Data } where = Reg;
    uint32_t index =
        0;  // trace slot, register number, or byte offset of the word in the data region
    uint32_t a = 0, b = 0;  // values (reference first)
};

// Every difference, in this order: trace slots (program order, so the first one names the first
// block whose result differs), registers (x0..x31, skipping the program's base registers), data
// words in address order. Empty means identical.
std::vector<Difference> compare(const Program& prog, const Signature& ref, const Signature& dut);

std::string describe(const Program& prog, const Difference& d, const char* a_name,
                     const char* b_name);

}  // namespace difftest
