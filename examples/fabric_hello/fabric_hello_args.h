// What the fabric_hello example's host program (main.cpp) hands its worker kernel (kernel.cpp):
// one fixed-width struct in the kernel's test mailbox args (protocol/test_mailbox.h), compiled by
// both toolchains.
#pragma once

#include <stdint.h>

#include "protocol/fabric.h"
#include "protocol/test_mailbox.h"

namespace fabric_hello {

struct Args {
    protocol::fabric::WorkerChannel channel;  // the router (its ch0) the kernel connects to
    uint32_t conn_l1;       // the kernel's connection words (protocol::kFabricConnL1Bytes)
    uint32_t src_addr;      // where the kernel writes the message before it sends it
    uint32_t dst_addr;      // where the message lands on the chip `hops` along the router's line
    uint32_t dst_x, dst_y;  // the destination core there (NOC0)
    uint32_t counter_addr;  // there: +1 once the message has landed
    uint32_t hops;
    uint32_t bytes;  // a positive multiple of 16
    uint32_t seed;   // word i of the message is protocol::pattern_word(seed, i)
    uint32_t timeout_us;
};
static_assert(sizeof(Args) == 32 + 10 * 4);
static_assert(sizeof(Args) <= sizeof(uint32_t) * protocol::kTestMaxArgs);

// The kernel's exit codes (below 64, so fabricctl passes them through).
enum class Exit : int { Sent = 0, NoArgs = 1, BadArgs = 2, Failed = 3 };

}  // namespace fabric_hello
