// Collectives as worker kernels (seeds/000 §1, §4): what the ccl_ring kernel
// (firmware/tests/ccl_ring.cpp) and the host plan (host/include/fabric/ccl_plan.h) share.
//
// A ring of `ranks` chips, one worker per chip, each connected to the router that leads to the
// next rank (1D: its chip's East router on a ring; 2D: a router along a row or column that is a
// ring); everything is sent with the line API, one hop along that line, so the kernel runs
// unchanged on 1D and 2D fabrics. Chunks are chunk_bytes each; chunk c of a rank's output is at
// output_addr + c * chunk_bytes, the same address on every rank. A chunk travels as pieces (the
// last one shorter): a piece is written into the same place of the next rank's output slot and +1
// is added to its counter once the bytes are there (the increment flushed behind the writes, in
// order along the one route; a piece of one packet is one fused write + increment), so the
// counter counts pieces. A reducing phase's pieces are piece_bytes (the host gives the payload of
// one packet): a rank adds and forwards each piece as soon as it has arrived, so the additions
// overlap the transfers. A gathering phase sends whole chunks (a piece is a chunk: one increment
// a chunk; forwarding by the packet measured slower, docs/PERFORMANCE.md). Every output slot is
// written at most once by the previous rank, so no credit is needed. Below, "s chunks have
// arrived" means s x pieces-a-chunk on the counter, waited for piece by piece.
//
// AllGather (input: one chunk): every rank's output ends with chunk r = rank r's input.
//   step 0       copy the own input into output slot `rank`; send that chunk
//   step s >= 1  wait (bounded) until s chunks have arrived, then forward the one that arrived
//                last, chunk (rank - s) mod ranks
//   end          wait until ranks - 1 chunks have arrived
// ReduceScatter (input: `ranks` chunks of int32 elements): rank r's output slot r ends with the
// element-wise sum (mod 2^32) of every rank's input chunk r, added up by the worker cores.
//   step 0       send the own input chunk (rank - 1) mod ranks
//   step s >= 1  wait until s chunks have arrived; chunk c = (rank - s - 1) mod ranks arrived in
//                output slot c: add the own input chunk c into it, send it on
//   end          wait until ranks - 1 chunks have arrived; add the own input chunk `rank` into
//                output slot `rank`: the result
//   (so output slot c of rank r, c != r, ends with the sum of input chunk c over the ranks from
//   c + 1 round to r, and slot c of rank c + 1 is never written)
// AllReduce (input: `ranks` chunks): the reduce-scatter into the output's first half, then an
//   all-gather of each rank's result over the second half (its own counter, the next 16-B line):
//   every rank's second half ends with the sum over all ranks of every input chunk. Two halves,
//   so that no slot is written twice (a slow rank may still be sending a partial sum).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "protocol/fabric.h"
#include "protocol/test_kernels.h"

namespace protocol {

inline constexpr uint32_t kCclMaxRanks = 16;  // what a line route reaches (kMaxLineHops)
static_assert(kCclMaxRanks == fabric::kMaxLineHops);

enum class CclOp : uint32_t { AllGather = 0, ReduceScatter = 1, AllReduce = 2 };

// Bytes of a rank's input: one chunk (all-gather) or one per rank (the reducing ops).
constexpr uint32_t ccl_input_bytes(CclOp op, uint32_t ranks, uint32_t chunk_bytes) {
    return op == CclOp::AllGather ? chunk_bytes : ranks * chunk_bytes;
}
// Bytes of a rank's output: a slot per rank, twice for an all-reduce (its two phases).
constexpr uint32_t ccl_output_bytes(CclOp op, uint32_t ranks, uint32_t chunk_bytes) {
    return (op == CclOp::AllReduce ? 2 : 1) * ranks * chunk_bytes;
}
// The all-reduce's all-gather phase: its output half and its counter.
constexpr uint32_t ccl_gather_output(uint32_t output_addr, uint32_t ranks, uint32_t chunk_bytes) {
    return output_addr + ranks * chunk_bytes;
}
constexpr uint32_t ccl_gather_counter(uint32_t counter_addr) {
    return counter_addr + 16;
}

struct CclRingArgs {
    fabric::WorkerChannel channel;  // the router towards the next rank
    uint32_t conn_l1;               // kFabricConnL1Bytes, 16-B aligned
    uint32_t op;                    // CclOp
    uint32_t rank, ranks;           // 0..ranks-1; 2..kCclMaxRanks
    uint32_t chunk_bytes;           // a positive multiple of 16
    uint32_t input_addr;            // ccl_input_bytes (host-written)
    uint32_t output_addr;           // ccl_output_bytes; the same on every rank (host zeroes)
    uint32_t counter_addr;          // pieces arrived (the previous rank's increments; host zeroes
                                    // it, and the all-reduce's second one 16 B above)
    uint32_t next_x, next_y;        // the next rank's worker core (NOC0)
    uint32_t timeout_us;            // open, each wait, close
    uint32_t piece_bytes;           // a reducing phase's pieces: a positive multiple of 16
};
static_assert(sizeof(CclRingArgs) == 32 + 12 * 4);
static_assert(sizeof(CclRingArgs) <= sizeof(uint32_t) * kTestMaxArgs);

enum class CclRingStep : uint32_t { Args = 1, Init, Copy, Open, Route, Send, Wait, Close };

enum CclRingStuck : uint32_t {
    kCclStuckCopy = 0xB01,
    kCclStuckOpen = 0xB02,
    kCclStuckSend = 0xB03,  // detail: the step
    kCclStuckWait = 0xB04,  // detail: the pieces that had arrived
    kCclStuckClose = 0xB05,
};

struct CclRingResults {
    TestFailure failure;
    uint32_t sent;      // chunks sent (ranks - 1 a phase when done)
    uint32_t received;  // chunks arrived: the counters at the end over the pieces a chunk (ranks -
                        // 1 a phase when done)
    uint32_t cycles;    // the first send .. the last chunk arrived (and, reducing, added)
};
static_assert(sizeof(CclRingResults) == 16 + 3 * 4);
static_assert(sizeof(CclRingResults) <= sizeof(uint32_t) * kTestMaxResults);

}  // namespace protocol
