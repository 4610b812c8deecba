// The demo: firmware on a simulated Ethernet RISC-V core says who it is, does a little work that
// exercises the core (multiply/divide, memory, CSRs), checks it, and exits with its status.
#include <stdint.h>
#include <stdio.h>

#include "hal/arch.h"
#include "hal/csr.h"

namespace {

// Sum of the first n primes by trial division: small, deterministic, uses DIV/REM and branches.
uint32_t sum_of_primes(uint32_t n) {
    uint32_t found = 0, sum = 0;
    for (uint32_t candidate = 2; found < n; ++candidate) {
        bool prime = true;
        for (uint32_t d = 2; d * d <= candidate; ++d) {
            if (candidate % d == 0) {
                prime = false;
                break;
            }
        }
        if (prime) {
            sum += candidate;
            ++found;
        }
    }
    return sum;
}

}  // namespace

int main() {
    const hal::ArchMap& arch = hal::kArch;
    printf("hello from the %s Ethernet RISC-V core (firmware at 0x%05lx, %lu KiB L1)\n", arch.name,
           static_cast<unsigned long>(arch.app_fw_base),
           static_cast<unsigned long>(arch.eth_l1_size / 1024));

    const uint32_t c0 = hal::csr::mcycle(), i0 = hal::csr::minstret();
    const uint32_t sum = sum_of_primes(100);
    const uint32_t cycles = hal::csr::mcycle() - c0, instrs = hal::csr::minstret() - i0;

    // The sum of the first 100 primes is 24133.
    const bool ok = sum == 24133;
    printf("sum of the first 100 primes = %lu (%s), %lu instructions in %lu cycles\n",
           static_cast<unsigned long>(sum), ok ? "correct" : "WRONG",
           static_cast<unsigned long>(instrs), static_cast<unsigned long>(cycles));
    return ok ? 0 : 1;
}
