// Collectives as worker kernels (seeds/000 §1, §4): what the ccl_all_gather kernel
// (firmware/tests/ccl_all_gather.cpp) and the host plan (host/include/fabric/ccl_plan.h) share.
//
// Ring all-gather over `ranks` chips, one worker per chip, each connected to the router that
// leads to the next rank (1D: its chip's East router on a ring; 2D: a router along a row or column
// that is a ring); everything is sent with the line API, one hop along that line, so the kernel
// runs unchanged on 1D and 2D fabrics. Every rank's output holds chunk r (rank r's input) at
// output_addr + r * chunk_bytes, the same address on every rank.
//
//   step 0       copy the own input into its output slot; send that chunk to the next rank
//   step s >= 1  wait (bounded) until s chunks have arrived (the counter), then forward the one
//                that arrived last, chunk (rank - s) mod ranks, from its output slot
//   end          wait until ranks - 1 chunks have arrived
// A send is the chunk's write into the same slot of the next rank's output, then +1 on its
// counter (an atomic increment along the same route, flushed behind the write: the count says
// the bytes are there). Every slot is written once, so no credit is needed: a rank forwards a
// chunk only after it has landed, and nothing overwrites it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "protocol/fabric.h"
#include "protocol/test_kernels.h"

namespace protocol {

inline constexpr uint32_t kCclMaxRanks = 16;  // what a line route reaches (kMaxLineHops)
static_assert(kCclMaxRanks == fabric::kMaxLineHops);

struct AllGatherArgs {
    fabric::WorkerChannel channel;  // the router towards the next rank
    uint32_t conn_l1;               // kFabricConnL1Bytes, 16-B aligned
    uint32_t rank, ranks;           // 0..ranks-1; 2..kCclMaxRanks
    uint32_t chunk_bytes;           // each rank's input: a positive multiple of 16
    uint32_t input_addr;            // chunk_bytes (host-written)
    uint32_t output_addr;           // ranks * chunk_bytes; the same on every rank
    uint32_t counter_addr;          // chunks arrived (the previous rank's increments; host zeroes)
    uint32_t next_x, next_y;        // the next rank's worker core (NOC0)
    uint32_t timeout_us;            // open, each wait, close
};
static_assert(sizeof(AllGatherArgs) == 32 + 10 * 4);
static_assert(sizeof(AllGatherArgs) <= sizeof(uint32_t) * kTestMaxArgs);

enum class AllGatherStep : uint32_t { Args = 1, Init, Copy, Open, Route, Send, Wait, Close };

enum AllGatherStuck : uint32_t {
    kAllGatherStuckCopy = 0xB01,
    kAllGatherStuckOpen = 0xB02,
    kAllGatherStuckSend = 0xB03,  // detail: the step
    kAllGatherStuckWait = 0xB04,  // detail: the chunks that had arrived
    kAllGatherStuckClose = 0xB05,
};

struct AllGatherResults {
    TestFailure failure;
    uint32_t sent;      // chunks sent (ranks - 1 when done)
    uint32_t received;  // the counter at the end (ranks - 1 when done)
    uint32_t cycles;    // the first send .. the last chunk arrived
};
static_assert(sizeof(AllGatherResults) == 16 + 3 * 4);
static_assert(sizeof(AllGatherResults) <= sizeof(uint32_t) * kTestMaxResults);

}  // namespace protocol
