// The mailbox through which the host hands a test or benchmark kernel its arguments and reads back
// what it measured. Shared by firmware (rv32) and host (x86-64): fixed-width fields only, layout
// pinned by static_asserts. It sits in L1 at TestMailbox address for the core's arch
// (kTestMailboxAddr below), inside the application region's reach but outside any firmware image.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch_map.h"

namespace protocol {

inline constexpr uint32_t kTestMailboxMagic = 0x7E57B0C5;
inline constexpr uint32_t kTestMaxArgs = 24;
inline constexpr uint32_t kTestMaxResults = 24;

// Status words the kernel publishes (results are valid once status is Done or Failed).
enum class TestStatus : uint32_t {
    NotStarted = 0,
    Running = 0x52554E21,  // "RUN!"
    Done = 0xD0E5D0E5,
    Failed = 0xFA11ED00,  // low byte: the kernel's failure code
};

struct TestMailbox {
    uint32_t magic;  // host writes kTestMailboxMagic before release
    uint32_t role;   // kernel-specific (e.g. 0 = master, 1 = subordinate)
    uint32_t
        termination;  // host writes non-zero to ask the kernel to stop (every wait escapes on it)
    uint32_t status;  // TestStatus, written by the kernel
    uint32_t heartbeat;  // incremented by long-running kernels
    uint32_t stuck_at;   // where a kernel gave up (kernel-specific code), 0 if not stuck
    uint32_t num_args;
    uint32_t num_results;
    uint32_t args[kTestMaxArgs];        // host → kernel
    uint32_t results[kTestMaxResults];  // kernel → host
};

static_assert(sizeof(TestMailbox) == 32 + 4 * (kTestMaxArgs + kTestMaxResults));
static_assert(offsetof(TestMailbox, termination) == 8);
static_assert(offsetof(TestMailbox, args) == 32);
static_assert(sizeof(TestMailbox) % 16 == 0, "16-B aligned so it can be moved over Ethernet/NOC");

// L1 addresses: just below the first byte firmware may not use (hal::ArchMap::eth_l1_usable_top),
// on both arches, leaving the rest of L1 above the firmware image for the kernels' buffers. The
// exit/console mailbox (protocol/exit_mailbox.h) sits above it, right below that top.
inline constexpr uint32_t kTestMailboxWormholeB0 = 0x3FFE0 - 0x400;
inline constexpr uint32_t kTestMailboxBlackhole = 0x70000 - 0x400;

// The mailbox address of a core of arch `a`.
constexpr uint32_t test_mailbox_addr(hal::Arch a) {
    return a == hal::Arch::Blackhole ? kTestMailboxBlackhole : kTestMailboxWormholeB0;
}

}  // namespace protocol
