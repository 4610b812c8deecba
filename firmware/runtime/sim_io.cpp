// Console and exit for firmware: the sim-control block (hal/arch_map.h, simctrl::). The model turns
// these writes into console output and the run's exit status; see sim/README.md.
#include <stdio.h>

#include "hal/arch_map.h"
#include "hal/mmio.h"

namespace {

int console_putc(char c, FILE*) {
    hal::mmio::write32(hal::simctrl::kConsoleChar, static_cast<uint8_t>(c));
    return static_cast<uint8_t>(c);
}

FILE console_stream = FDEV_SETUP_STREAM(console_putc, nullptr, nullptr, _FDEV_SETUP_WRITE);

}  // namespace

// picolibc declares these with C++ linkage in C++; global variables are not mangled either way.
FILE* const stdout = &console_stream;
FILE* const stderr = &console_stream;

extern "C" {

// The run's exit status. If nothing answers at the sim-control block the store faults or is
// dropped, and ebreak then ends the core's run instead of leaving it spinning.
[[noreturn]] void _exit(int status) {
    hal::mmio::write32(hal::simctrl::kExit, static_cast<uint32_t>(status));
    __asm__ volatile("ebreak");
    __builtin_unreachable();
}

}  // extern "C"
