// Reads of the core's Zicsr counters (mcycle, minstret, mhartid and the user aliases).
// Built as .insn: GCC 12's rv32im multilib has no Zicsr in -march, and the core implements these
// CSRs (sim/README.md). Firmware only: on the host there are no such CSRs.
#pragma once

#include <stdint.h>

namespace hal::csr {

inline constexpr uint32_t kMcycle = 0xB00;
inline constexpr uint32_t kMinstret = 0xB02;
inline constexpr uint32_t kMcycleH = 0xB80;
inline constexpr uint32_t kMinstretH = 0xB82;
inline constexpr uint32_t kMhartid = 0xF14;

// csrrs rd, csr, x0 (a pure read). .insn takes the CSR number as a signed 12-bit immediate.
template <uint32_t Csr>
inline uint32_t read() {
    static_assert(Csr < 0x1000, "CSR numbers are 12 bits");
    constexpr int32_t kImm = Csr >= 0x800 ? static_cast<int32_t>(Csr) - 0x1000 : Csr;
    uint32_t value;
    __asm__ volatile(".insn i 0x73, 2, %0, x0, %1" : "=r"(value) : "i"(kImm));
    return value;
}

inline uint32_t mcycle() {
    return read<kMcycle>();
}
inline uint32_t minstret() {
    return read<kMinstret>();
}
inline uint32_t mhartid() {
    return read<kMhartid>();
}

}  // namespace hal::csr
