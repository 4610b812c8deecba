// A compute-bound kernel for the simulator-speed benchmark: integer hashing and multiply-accumulate
// on registers, almost no memory traffic, so the core runs near its best CPI. Prints its cycle and
// instruction counts and a checksum (so the work cannot be optimised away).
#include <stdint.h>
#include <stdio.h>

#include "hal/csr.h"

namespace {

constexpr uint32_t kIterations = 2'000'000;

uint32_t mix(uint32_t iterations) {
    uint32_t x = 0x12345678u, acc = 0;
    for (uint32_t i = 0; i < iterations; ++i) {
        x ^= x << 13;  // xorshift32
        x ^= x >> 17;
        x ^= x << 5;
        acc = acc * 31u + (x & 0xFFFFu);
    }
    return acc ^ x;
}

}  // namespace

int main() {
    const uint32_t c0 = hal::csr::mcycle(), i0 = hal::csr::minstret();
    const uint32_t checksum = mix(kIterations);
    const uint32_t cycles = hal::csr::mcycle() - c0, instrs = hal::csr::minstret() - i0;
    printf("compute_bound: checksum 0x%08lx, %lu instructions, %lu cycles\n",
           static_cast<unsigned long>(checksum), static_cast<unsigned long>(instrs),
           static_cast<unsigned long>(cycles));
    return 0;
}
