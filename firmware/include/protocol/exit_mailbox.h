// The exit and console mailbox: how firmware built with the runtime (firmware/runtime) tells the
// host that it has finished, with which exit code, and what it printed. It lives in the core's L1,
// so the host reads it through any Device: TLB windows on silicon, the simulated tt-kmd driver,
// the sim server, the model itself (host: fabric/exit_mailbox.h). The model's sim-control block
// (hal::simctrl) stays as its faster path; the runtime writes both.
//
// Shared by firmware (rv32) and host (x86-64): fixed-width fields, layout pinned by static_asserts.
//
//   offset  field        written by
//   0x00    magic        runtime: kExitMailboxMagic once the mailbox is set up (crt0, before any
//                        constructor or main). The host writes 0 before it starts a core, so 0
//                        means "not set up (yet)"; any other value means the mailbox is not ours
//                        (firmware without the runtime, or an image that overwrote it).
//   0x04    state        runtime: ExitState
//   0x08    exit_code    runtime: valid once state is Exited (main's return value, exit()'s value)
//   0x0C    written      runtime: console bytes written since start (mod 2^32). It only grows,
//                        so the host can tell which bytes it missed.
//   0x10    reserved     zero
//   0x20    console      the console ring: byte i of the console is console[i % kConsoleRingBytes]
//
// The firmware never waits for the host: a full ring is overwritten, and the host counts the bytes
// it lost (written - kConsoleRingBytes beyond what it had read). Order of the runtime's stores,
// which the host relies on: a console byte, then `written`; exit_code, then state = Exited.
//
// A trap is not reported here: the cores this firmware runs on have no trap vector (traps halt
// the core, sim/README.md), so the runtime never learns of one; the state stays Running. The
// model's run state (Device::core_status) says Trapped with the cause.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch_map.h"
#include "protocol/test_mailbox.h"

namespace protocol {

inline constexpr uint32_t kExitMailboxMagic = 0xE417B0C5;
inline constexpr uint32_t kConsoleRingBytes = 512;

enum class ExitState : uint32_t {
    Running = 0x52554E21,  // "RUN!": set up by crt0, main has not returned
    Exited = 0xE4173D00,   // exit_code is final
};

struct ExitMailbox {
    uint32_t magic;
    uint32_t state;  // ExitState
    uint32_t exit_code;
    uint32_t written;
    uint32_t reserved[4];
    uint8_t console[kConsoleRingBytes];
};
static_assert(offsetof(ExitMailbox, state) == 4);
static_assert(offsetof(ExitMailbox, exit_code) == 8);
static_assert(offsetof(ExitMailbox, written) == 12);
static_assert(offsetof(ExitMailbox, console) == 32);
static_assert(sizeof(ExitMailbox) == 32 + kConsoleRingBytes);
static_assert(sizeof(ExitMailbox) % 16 == 0, "16-B aligned so it can be moved over the NOC");
static_assert((kConsoleRingBytes & (kConsoleRingBytes - 1)) == 0,
              "a power of two: a wrapping `written` keeps its ring position");

// The header, the part the host reads before and after the ring.
inline constexpr uint32_t kExitMailboxHeaderBytes = offsetof(ExitMailbox, console);

// L1 address: the top of what firmware may use (hal::ArchMap::eth_l1_usable_top), right above the
// test mailbox: WH 0x3FDC0-0x3FFE0, BH 0x6FDE0-0x70000. Worker (Tensix) cores use the same
// address: their kernels are placed as on an eth core, and their buffers stay below the test
// mailbox or start at the first 4 KiB boundary above eth_l1_usable_top (mesh_sink_base).
constexpr uint32_t exit_mailbox_addr(const hal::ArchMap& a) {
    return a.eth_l1_usable_top - static_cast<uint32_t>(sizeof(ExitMailbox));
}
constexpr uint32_t exit_mailbox_addr(hal::Arch a) {
    return exit_mailbox_addr(hal::arch_map(a));
}

// Clear of every other L1 user: above the test mailbox (and so above the router and mux blocks,
// which end at it, and the kernels' buffers below it), below the syseng area and the WH host
// barrier, off the link status word and the launch flag.
constexpr bool exit_mailbox_placed(const hal::ArchMap& a, uint32_t test_mailbox) {
    const uint32_t base = exit_mailbox_addr(a);
    const uint32_t end = base + static_cast<uint32_t>(sizeof(ExitMailbox));
    const auto clear_of = [&](uint32_t word) { return word + 4 <= base || word >= end; };
    return base % 16 == 0 && base >= test_mailbox + sizeof(TestMailbox) &&
           end <= a.eth_l1_usable_top && clear_of(a.link_status.addr) &&
           clear_of(a.launch_app_flag) && base >= a.app_fw_base + a.app_fw_size &&
           base >= a.router_fw.end();
}
static_assert(exit_mailbox_placed(hal::kWormholeB0, kTestMailboxWormholeB0));
static_assert(exit_mailbox_placed(hal::kBlackhole, kTestMailboxBlackhole));
static_assert(exit_mailbox_addr(hal::kWormholeB0) == 0x3FDC0);
static_assert(exit_mailbox_addr(hal::kBlackhole) == 0x6FDE0);

}  // namespace protocol
