// Console and exit for firmware. Both go two ways:
//   - the exit/console mailbox in L1 (protocol/exit_mailbox.h), which the host reads through any
//     Device, silicon included: set up by crt0 before main, the console ring and its byte count,
//     the exit code and state;
//   - the model's sim-control block (hal/arch_map.h, simctrl::), the model's fast path: it turns
//     the writes into console output and the run's exit status (sim/README.md).
#include <stdio.h>

#include "hal/arch.h"
#include "hal/arch_map.h"
#include "hal/mmio.h"
#include "protocol/exit_mailbox.h"

namespace {

namespace mmio = hal::mmio;
using protocol::ExitMailbox;

ExitMailbox* mailbox() {
    return mmio::l1_ptr<ExitMailbox>(protocol::exit_mailbox_addr(hal::kArch));
}

int console_putc(char c, FILE*) {
    ExitMailbox* m = mailbox();
    const uint32_t n = mmio::load_shared(&m->written);
    // The byte first, then the count that publishes it: the host never reads a byte not yet there.
    mmio::store_shared(&m->console[n % protocol::kConsoleRingBytes], static_cast<uint8_t>(c));
    mmio::store_shared(&m->written, n + 1);
    mmio::write32(hal::simctrl::kConsoleChar, static_cast<uint8_t>(c));
    return static_cast<uint8_t>(c);
}

FILE console_stream = FDEV_SETUP_STREAM(console_putc, nullptr, nullptr, _FDEV_SETUP_WRITE);

}  // namespace

// picolibc declares these with C++ linkage in C++; global variables are not mangled either way.
FILE* const stdout = &console_stream;
FILE* const stderr = &console_stream;

extern "C" {

// Called by crt0 before the constructors: an empty console, Running, and the magic last, so a
// host that sees the magic sees the rest set up.
void fabric_exit_mailbox_open() {
    ExitMailbox* m = mailbox();
    mmio::store_shared(&m->written, 0);
    mmio::store_shared(&m->exit_code, 0);
    mmio::store_shared(&m->state, static_cast<uint32_t>(protocol::ExitState::Running));
    mmio::store_shared(&m->magic, protocol::kExitMailboxMagic);
}

// The run's exit status: the mailbox first (the code, then the state that makes it final), then
// the sim-control block. On silicon nothing answers there: the store faults or is dropped, and
// ebreak then ends the core's run instead of leaving it spinning.
[[noreturn]] void _exit(int status) {
    ExitMailbox* m = mailbox();
    mmio::store_shared(&m->exit_code, static_cast<uint32_t>(status));
    mmio::store_shared(&m->state, static_cast<uint32_t>(protocol::ExitState::Exited));
    mmio::write32(hal::simctrl::kExit, static_cast<uint32_t>(status));
    __asm__ volatile("ebreak");
    __builtin_unreachable();
}

}  // extern "C"
