// Argument and result layouts of the test and benchmark kernels (firmware/tests,
// firmware/benchmarks), shared by the kernels (rv32) and the host tests and benchmarks (x86-64).
//
// Every kernel reads its arguments from TestMailbox::args and writes its results to
// TestMailbox::results through one of the structs below, never through positional indices. Each
// struct is fixed-width, and static_asserts pin that it fits its mailbox array. Every results
// struct starts with a TestFailure, so the host can report any kernel's failure the same way.
//
// Conventions for all kernels:
//   - role (TestMailbox::role) selects the side of a two-core kernel (KernelRole);
//   - every wait escapes on TestMailbox::termination and on its deadline; a kernel that gives up
//     writes a Stuck* code naming the wait to TestMailbox::stuck_at, fails with TestFail::Stuck and
//     records the HAL status (Timeout or Terminated) in TestFailure::hal_status;
//   - the exit status is the TestFail code (0 = passed), below 64 so fabricctl passes it through.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch_map.h"
#include "protocol/fabric.h"
#include "protocol/test_mailbox.h"

namespace protocol {

// ---- placement
// ------------------------------------------------------------------------------------

// First L1 byte the test kernels use for buffers. Wormhole: ERISC_L1_UNRESERVED_BASE with the
// routing firmware reserve kept free (0x11000 + 28 KiB, fabric-protocol §5.2); Blackhole: the
// derived unreserved base 0x15740 rounded up to 4 KiB. Kernel buffers lie in
// [test_l1_base, test_mailbox_addr).
constexpr uint32_t test_l1_base(hal::Arch a) {
    return a == hal::Arch::Blackhole ? 0x16000 : 0x18000;
}

// ---- common -----------------------------------------------------------------------------------

enum class KernelRole : uint32_t {
    Master = 0,       // initiates (sender, ping side, ring start)
    Subordinate = 1,  // answers (receiver, pong side)
    Forwarder = 2,    // eth_ring only: the sending core of a chip
};

// Exit status of every kernel, and the low byte of TestStatus::Failed.
enum class TestFail : uint32_t {
    None = 0,
    BadMailbox = 1,       // magic missing: the host did not set the mailbox up
    BadArgs = 2,          // arguments the kernel cannot run with
    HalError = 3,         // a HAL call returned an unexpected status
    DataMismatch = 4,     // bytes differ from the expected pattern
    CounterMismatch = 5,  // a counter or register differs from the expected value
    Stuck = 6,            // a wait gave up (deadline or termination): see stuck_at
    Unexpected = 7,       // an observation the kernel's protocol rules out
};

// The first four result words of every kernel.
struct TestFailure {
    uint32_t code;        // TestFail
    uint32_t hal_status;  // hal::Status of the failing call (0 = ok)
    uint32_t step;        // kernel-specific step where it failed
    uint32_t detail;      // kernel-specific (expected/observed value, word index, iteration, ...)
};
static_assert(sizeof(TestFailure) == 16);

constexpr uint32_t test_status_failed(TestFail f) {
    return static_cast<uint32_t>(TestStatus::Failed) | (static_cast<uint32_t>(f) & 0xFF);
}

// The data pattern kernels write and check: word `index` of the buffer seeded with `seed`. Cheap
// on an RV32IM core (two multiplies) and different for every (seed, index) pair the tests use, so
// a stale, misplaced or torn word is caught.
constexpr uint32_t pattern_word(uint32_t seed, uint32_t index) {
    const uint32_t x = (seed + 1u) * 0x9E3779B1u + index * 0x85EBCA77u;
    return x ^ (x >> 15);
}

// Coordinates packed into one result word: x in bits 7:0, y in bits 15:8.
constexpr uint32_t pack_xy(uint32_t x, uint32_t y) {
    return (x & 0xFF) | ((y & 0xFF) << 8);
}

// 16 bytes appended to (or forming) an Ethernet packet to say it has arrived: the sender writes it
// last, TT-link lands a command's frames in order, so once `seq` matches, the payload before it is
// complete (seeds/002, "End-to-End Flow Control": the sync must be the suffix).
struct EthChannelSync {
    uint32_t seq;         // non-zero: packet number + 1
    uint32_t bytes_sent;  // payload bytes before this word (0 for a bare sync)
    uint32_t src_id;      // sender's tag (role / chip)
    uint32_t check;       // seq ^ bytes_sent ^ kSyncCheck: a torn or stale word never matches
};
static_assert(sizeof(EthChannelSync) == 16);
inline constexpr uint32_t kSyncCheck = 0x5EC0DA7A;

// ---- hal_noc: every NOC HAL call from firmware
// ----------------------------------------------------- One core drives both NIUs against a passive
// target core (any tile with L1 on the same chip).

struct HalNocArgs {
    uint32_t target_x, target_y;  // NOC0 coordinates of the target
    uint32_t grid_x, grid_y;      // chip grid (NOC1 coordinates are NOC0's mirrored)
    uint32_t transfer_bytes;      // unicast transfers, >= 4096; > the arch's burst so requests
                                  // split (the last request should be long: see flags)
    uint32_t target_a;            // target L1: region A (transfer_bytes), NOC0 non-posted write
    uint32_t target_b;            // target L1: region B (transfer_bytes), NOC1 posted write
    uint32_t target_words;        // target L1: 16 B for inline writes (host zeroes it)
    uint32_t target_counter;      // target L1: atomic counter (host writes kHalNocCounterInit)
    uint32_t local_src;           // local L1: source (transfer_bytes)
    uint32_t local_dst;           // local L1: read-back destination (transfer_bytes)
    uint32_t local_atomic_ret;    // local L1: 4 B, old values of non-posted atomics
};
static_assert(sizeof(HalNocArgs) <= sizeof(uint32_t) * kTestMaxArgs);

inline constexpr uint32_t kHalNocCounterInit = 0x120000F0;
inline constexpr uint32_t kHalNocSeedA = 0xA;
inline constexpr uint32_t kHalNocSeedB = 0xB;
inline constexpr uint32_t kHalNocInlineValue0 = 0xC0FFEE01;
inline constexpr uint32_t kHalNocInlineValue1 = 0x5EED5EED;
inline constexpr uint32_t kHalNocInlineByteValue = 0xA5A5A5A5;  // byte lane 1 only -> 0x0000A500

enum class HalNocStep : uint32_t {
    Init = 1,
    SelfCoords,
    ArgErrors,
    WriteNoc0,
    ReadNoc1,
    PostedWriteNoc1,
    ReadNoc0,
    Inline,
    Atomic,
    Trids,
    Barriers,
    Counters,
};

// NIU counter deltas over a kernel (hardware counters, end minus start).
struct NocCounterDeltas {
    uint32_t nonposted_wr_req_sent;
    uint32_t wr_ack_received;
    uint32_t rd_resp_received;
    uint32_t atomic_resp_received;
    uint32_t posted_atomic_sent;
    uint32_t posted_wr_req_sent;
};

struct HalNocResults {
    TestFailure failure;
    uint32_t self_noc0;  // pack_xy of NOC_NODE_ID on NOC0
    uint32_t self_noc1;  // ... on NOC1 (mirrored)
    NocCounterDeltas noc0, noc1;
    uint32_t atomic_old_first;   // returned by the first non-posted atomic (NOC0)
    uint32_t atomic_old_second;  // returned by the non-posted atomic after a posted one (NOC0)
    uint32_t atomic_old_wrap;    // returned by the wrapping atomic (NOC0)
    uint32_t trid_outstanding_at_issue;  // REQS_OUTSTANDING_ID(5) right after issuing on ID 5
    uint32_t flags;                      // HalNocFlag bits observed
    uint32_t arg_errors_checked;         // how many refused calls were checked
};
static_assert(sizeof(HalNocResults) <= sizeof(uint32_t) * kTestMaxResults);

// HalNocResults::flags: what the completion checks said at particular instants.
enum HalNocFlag : uint32_t {
    kFlagNotFlushedAtIssue = 1u << 0,       // nonposted_writes_flushed() false right after issue
    kFlagTridNotFlushedAtIssue = 1u << 1,   // trid_flushed(5) false right after issue
    kFlagSentWhenFlushed = 1u << 2,         // nonposted_writes_sent() once flushed() holds
    kFlagTridFlushedAfter = 1u << 3,        // trid_flushed(5) true after trid_barrier
    kFlagPostedSent = 1u << 4,              // posted_writes_sent() after posting
    kFlagTridWritesSent = 1u << 5,          // trid_writes_sent(7) after the posted write
    kFlagBlackholeInlineRefused = 1u << 6,  // BH: inline write to L1 refused with Unsupported
};

// ---- hal_eth: every Ethernet HAL call from firmware
// ------------------------------------------------ One core sends to its link peer, which stays
// passive (held in reset): the host checks the peer's L1 and stream registers after the run.

struct HalEthArgs {
    uint32_t local_src;  // local L1, 16-B aligned: size_a + size_b + busy_bytes (A, B, busy)
    uint32_t peer_a;     // peer L1: size_a bytes via TXQ0
    uint32_t size_a;
    uint32_t peer_b;  // peer L1: size_b bytes via TXQ1
    uint32_t size_b;
    uint32_t peer_busy;           // peer L1: busy_bytes (the queue-busy send, first on the wire)
    uint32_t busy_bytes;          // large enough to keep TXQ0 busy for several frames
    uint32_t peer_stream;         // stream on the peer incremented by remote register writes
    uint32_t peer_scratch_value;  // written to that stream's scratch register remotely
    uint32_t timeout_us;
};
static_assert(sizeof(HalEthArgs) <= sizeof(uint32_t) * kTestMaxArgs);

inline constexpr uint32_t kHalEthSeedA = 0xE0;
inline constexpr uint32_t kHalEthSeedB = 0xE1;
inline constexpr uint32_t kHalEthSeedBusy = 0xE2;
inline constexpr int32_t kHalEthRemoteDelta1 = 3;
inline constexpr int32_t kHalEthRemoteDelta2 = 4;

enum class HalEthStep : uint32_t {
    ArgErrors = 1,
    Busy,
    SendQ0,
    SendQ1,
    RemoteReg,
    RemoteRegQ1Refused,
    Counters,
};

struct HalEthResults {
    TestFailure failure;
    uint32_t q1_remote_try_status;   // hal::Status of try_write_remote_reg on TXQ1
    uint32_t q1_remote_wait_status;  // hal::Status of write_remote_reg on TXQ1
    uint32_t busy_try_send_status;   // try_send while TXQ0 was busy
    uint32_t busy_try_reg_status;    // try_write_remote_reg while TXQ0 was busy
    uint32_t busy_cycles;            // wall-clock cycles from the busy send to wait_idle Ok
    uint32_t q0_transfer_cnt;        // ETH_TXQ_TRANSFER_CNT of TXQ0 / TXQ1 at the end
    uint32_t q1_transfer_cnt;
    uint32_t arg_errors_checked;
};
static_assert(sizeof(HalEthResults) <= sizeof(uint32_t) * kTestMaxResults);

// ---- streams: stream registers, locally and remotely (NOC and Ethernet)
// --------------------------- Master: local read/add/reset; increments a same-chip neighbour's
// stream with a NOC inline write and reads it back over the NOC; increments the link peer's stream
// with an Ethernet remote register write, then waits for the peer (Subordinate) to answer with an
// increment of its own.

struct StreamsArgs {
    uint32_t local_stream;
    uint32_t neighbor_x, neighbor_y;  // NOC0 coordinates of the same-chip neighbour
    uint32_t neighbor_stream;
    uint32_t local_readback;  // local L1, 16 B: NOC read of the neighbour's counter
    uint32_t peer_stream;     // stream on the link peer (Master) / own stream (Subordinate)
    uint32_t answer_stream;   // stream on the Master the Subordinate increments
    uint32_t timeout_us;
};
static_assert(sizeof(StreamsArgs) <= sizeof(uint32_t) * kTestMaxArgs);

inline constexpr int32_t kStreamsNocDelta = 7;
inline constexpr int32_t kStreamsEthDelta = 9;
inline constexpr int32_t kStreamsAnswerDelta = 11;
inline constexpr uint32_t kStreamsScratchValue = 0x5C4A7C11;

enum class StreamsStep : uint32_t {
    Local = 1,
    LocalErrors,
    NocRemote,
    EthRemote,
    WaitAnswer,
    WaitEth,
    Answer,
};

struct StreamsResults {
    TestFailure failure;
    uint32_t local_after_add;    // counter after reset(0), +5, -2 (= 3)
    uint32_t local_after_wrap;   // reset(kWordsFreeMask) then +1 (= 0)
    uint32_t local_scratch;      // scratch read back
    uint32_t neighbor_readback;  // neighbour's counter read over the NOC after the inline write
    uint32_t observed;           // Master: own counter after the answer; Subordinate: after the
                                 // master's remote increment
};
static_assert(sizeof(StreamsResults) <= sizeof(uint32_t) * kTestMaxResults);

enum StreamsStuck : uint32_t {
    kStreamsStuckWaitEthIncrement = 0x301,  // Subordinate: waiting for the master's increment
    kStreamsStuckWaitAnswer = 0x302,        // Master: waiting for the subordinate's answer
};

// ---- clock_wait: wall clock, Deadline, wait_until timeout and termination
// ---------------------------

struct ClockWaitArgs {
    uint32_t timeout_cycles;  // the wait that must time out
    uint32_t long_wait_us;    // the wait the host ends with the termination word
};
static_assert(sizeof(ClockWaitArgs) <= sizeof(uint32_t) * kTestMaxArgs);

enum class ClockWaitPhase : uint32_t {
    Starting = 0,
    WaitingForTermination = 1,  // the host may write the termination word now
    Finished = 2,
};

enum class ClockWaitStep : uint32_t {
    Monotonic = 1,
    Mcycle,
    Timeout,
    AlreadyTrue,
    Deadline,
    Termination,
};

struct ClockWaitResults {
    TestFailure failure;
    uint32_t phase;                // ClockWaitPhase, updated while running
    uint32_t back_to_back_cycles;  // wall_clock() twice in a row: difference
    uint32_t wall_minus_mcycle;    // |wall delta - mcycle delta| over a busy loop
    uint32_t timeout_elapsed;      // cycles the timing-out wait took
    uint32_t timeout_status;       // hal::Status of it (Timeout)
    uint32_t already_true_status;  // predicate true, deadline passed: Ok
    uint32_t after_us_cycles;      // Deadline::after_us(arch, 3) - now
    uint32_t termination_status;   // hal::Status of the long wait (Terminated)
    uint32_t long_wait_start_lo;   // wall clock when the long wait started (low word)
    uint32_t long_wait_end_lo;     // ... and when it returned
};
static_assert(sizeof(ClockWaitResults) <= sizeof(uint32_t) * kTestMaxResults);

// ---- eth_ping_pong: two cores on one link, seeds/002 handshake and teardown
// ------------------------- L1 layout (same addresses on both cores) from `buf_base`:
//   +0x000 handshake in (16 B)      +0x010 handshake out (16 B)
//   +0x020 credit in  (16 B)        +0x030 credit out    (16 B)
//   +0x040 rx slot (payload_bytes + 16 B sync)
//   +0x040 + slot  tx slot (same size)

struct PingPongArgs {
    uint32_t iterations;
    uint32_t payload_bytes;  // multiple of 16 (0 = bare sync packets)
    uint32_t buf_base;       // 16-B aligned
    uint32_t timeout_us;     // every wait
};
static_assert(sizeof(PingPongArgs) <= sizeof(uint32_t) * kTestMaxArgs);

struct PingPongLayout {
    uint32_t hs_in, hs_out, credit_in, credit_out, rx, tx, slot_bytes, end;
};
constexpr PingPongLayout ping_pong_layout(uint32_t base, uint32_t payload_bytes) {
    const uint32_t slot = payload_bytes + sizeof(EthChannelSync);
    return PingPongLayout{base,        base + 0x10,        base + 0x20, base + 0x30,
                          base + 0x40, base + 0x40 + slot, slot,        base + 0x40 + 2 * slot};
}

inline constexpr uint32_t kHandshakeHello = 0x48454C4F;  // "HELO"
inline constexpr uint32_t kHandshakeAck = 0x41434B21;    // "ACK!"
inline constexpr uint32_t kCreditFin = 0x46494E21;       // "FIN!"

enum PingPongStuck : uint32_t {
    kPpStuckHandshakeAck = 0x101,    // Master: handshake sent, no answer from the peer
    kPpStuckHandshakeHello = 0x102,  // Subordinate: no handshake from the peer
    kPpStuckPong = 0x103,            // Master: waiting for the answer to a ping (detail: iteration)
    kPpStuckPing = 0x104,            // Subordinate: waiting for a ping (detail: iteration)
    kPpStuckFinalCredit = 0x105,     // Subordinate: end-of-kernel wait for the last credit
    kPpStuckTxq = 0x106,             // either: TX queue never became free
};

enum class PingPongStep : uint32_t { Handshake = 1, Ping, Pong, Verify, Teardown };

struct PingPongResults {
    TestFailure failure;
    uint32_t iterations_done;
    uint32_t mismatches;        // payload words that differed from the pattern
    uint32_t rtt_min, rtt_max;  // Master: ping sent -> pong seen, wall-clock cycles
    uint32_t rtt_sum_lo, rtt_sum_hi;
    uint32_t handshake_cycles;  // kernel start -> handshake complete
};
static_assert(sizeof(PingPongResults) <= sizeof(uint32_t) * kTestMaxResults);

// Payload pattern of ping (Master -> Subordinate) and pong (back) number `i`.
constexpr uint32_t ping_seed(uint32_t i) {
    return 0x1000 + 2 * i;
}
constexpr uint32_t pong_seed(uint32_t i) {
    return 0x1001 + 2 * i;
}

// ---- noc_traffic: one kind of NOC traffic, repeated, for contention/multicast/atomic tests
// -------

enum class NocTrafficOp : uint32_t {
    Write = 1,      // `requests` unicast writes of request_bytes to dest_addr + i * request_bytes
    Multicast = 2,  // `requests` multicast writes of request_bytes to the rectangle
    AtomicInc = 3,  // `requests` non-posted INCR_GET of `incr` on dest_addr, one at a time
    Read = 4,       // `requests` reads of request_bytes from dest_addr + i * request_bytes
};

struct NocTrafficArgs {
    uint32_t op;              // NocTrafficOp
    uint32_t noc;             // 0 or 1
    uint32_t posted;          // writes/multicast: 1 = posted
    uint32_t vc;              // static VC (unicast 0..3, multicast 4..5)
    uint32_t dest_x, dest_y;  // unicast target, in the coordinates of `noc`
    uint32_t rect_x_start, rect_y_start, rect_x_end, rect_y_end;  // multicast, `noc` coordinates
    uint32_t mcast_dests;                                         // tiles in the rectangle
    uint32_t dest_addr;
    uint32_t local_addr;  // local L1: source (writes) or destination (reads)
    uint32_t request_bytes;
    uint32_t requests;
    uint32_t seed;        // pattern of the source data (0: do not fill)
    uint32_t incr;        // atomics
    uint32_t atomic_ret;  // local L1 word for atomic old values
    uint32_t timeout_us;
};
static_assert(sizeof(NocTrafficArgs) <= sizeof(uint32_t) * kTestMaxArgs);

enum class NocTrafficStep : uint32_t { Args = 1, Init, Issue, Barrier, Verify };

struct NocTrafficResults {
    TestFailure failure;
    uint32_t cycles;  // first issue -> barrier complete
    uint32_t issued;  // requests issued
    uint32_t atomic_old_first, atomic_old_last;
    uint32_t atomic_not_increasing;  // returned old values that did not increase
    uint32_t hw_wr_ack;              // NIU counter deltas on `noc`
    uint32_t hw_nonposted_wr_sent;
    uint32_t hw_posted_wr_sent;
    uint32_t hw_atomic_resp;
    uint32_t hw_rd_resp;
    uint32_t read_mismatches;  // Read: words that differ from pattern(seed)
};
static_assert(sizeof(NocTrafficResults) <= sizeof(uint32_t) * kTestMaxResults);

// ---- eth_stream: a flow-controlled stream of packets over one link
// --------------------------------- Master sends `packets` packets of packet_bytes through
// `channels` slots of the Subordinate's L1 (a ring: packet i uses slot i % channels), alternating
// over `queues` TX queues. The last 16 B of every packet are an EthChannelSync. The Subordinate
// returns one credit per consumed slot by an Ethernet remote register write that increments the
// Master's credit stream (fabric style, reference §1.4); the Master sends only while it holds
// credits and, at the end, waits for every credit to come back (seeds/002 teardown). Layout from
// buf_base, same on both cores:
//   +0x00 handshake in, +0x10 handshake out, +0x40 slot 0, +0x40 + packet_bytes slot 1, ...

struct EthStreamArgs {
    uint32_t packet_bytes;  // multiple of 16, >= 16 (16: the packet is only the sync)
    uint32_t channels;      // 1..kEthStreamMaxChannels
    uint32_t packets;
    uint32_t queues;  // 1 or 2
    uint32_t buf_base;
    uint32_t credit_stream;  // the Master's stream the Subordinate increments
    uint32_t verify;         // 1: Master fills every packet with its pattern, Subordinate checks it
    uint32_t seed;
    uint32_t timeout_us;
    uint32_t handshake;  // 1: seeds/002 start-of-kernel handshake first
};
static_assert(sizeof(EthStreamArgs) <= sizeof(uint32_t) * kTestMaxArgs);

inline constexpr uint32_t kEthStreamMaxChannels = 32;
inline constexpr uint32_t kEthStreamSlotOffset = 0x40;

constexpr uint32_t eth_stream_slot(uint32_t base, uint32_t packet_bytes, uint32_t slot) {
    return base + kEthStreamSlotOffset + slot * packet_bytes;
}
constexpr uint32_t eth_stream_end(uint32_t base, uint32_t packet_bytes, uint32_t channels) {
    return eth_stream_slot(base, packet_bytes, channels);
}
// Pattern seed of packet `i`'s payload.
constexpr uint32_t eth_stream_seed(uint32_t seed, uint32_t i) {
    return seed * 0x10001u + i;
}

enum EthStreamStuck : uint32_t {
    kEsStuckHandshakeAck = 0x201,
    kEsStuckHandshakeHello = 0x202,
    kEsStuckCredit = 0x203,        // Master: no credit for the next packet (detail: packet)
    kEsStuckPacket = 0x204,        // Subordinate: packet not arriving (detail: packet)
    kEsStuckFinalCredits = 0x205,  // Master: end-of-kernel wait for the outstanding credits
    kEsStuckTxq = 0x206,
};

enum class EthStreamStep : uint32_t { Args = 1, Handshake, Send, Receive, Verify, Teardown };

struct EthStreamResults {
    TestFailure failure;
    uint32_t packets_done;
    uint32_t mismatches;  // Subordinate with verify: payload words that differed
    uint32_t cycles;  // Master: first send -> last credit back; Subordinate: first -> last packet
    uint32_t first_cycle_lo;  // wall clock (low word) at the start of the measured interval
    uint32_t credit_waits;    // Master: times it found no credit
    uint32_t sync_errors;     // Subordinate: sync words whose check/bytes did not match
    // Subordinate: the steady-state window, from the landing of packet steady_from to that of
    // packet steady_to (eth_stream_steady_window: the first and last eighth are left out, where
    // the pipeline fills and drains, and the window spans an even number of packets, so with two
    // queues whose packets land in pairs it holds whole pairs).
    uint32_t steady_from;
    uint32_t steady_to;
    uint32_t steady_cycles;
};
static_assert(sizeof(EthStreamResults) <= sizeof(uint32_t) * kTestMaxResults);

struct SteadyWindow {
    uint32_t from, to;  // packet indices; to > from unless packets < 3
};
constexpr SteadyWindow eth_stream_steady_window(uint32_t packets) {
    const uint32_t from = packets / 8;
    uint32_t to = packets - 1 - packets / 8;
    if (((to - from) & 1u) != 0 && to > from) {
        --to;
    }
    return SteadyWindow{from, to};
}

// ---- txq_order: ordering of TX queue commands ---------------------------------------------------

enum class TxqOrderCase : uint32_t {
    SeqSlot = 1,     // `count` 16-B packets with seq 1..count to one slot, per queue
    SameQueue = 2,   // big transfer then flag, both on TXQ0
    CrossQueue = 3,  // big transfer on TXQ0, flag on TXQ1
};

struct TxqOrderArgs {
    uint32_t which;      // TxqOrderCase
    uint32_t queues;     // SeqSlot: 1 or 2
    uint32_t count;      // SeqSlot: packets per queue
    uint32_t big_bytes;  // Same/CrossQueue
    uint32_t buf_base;   // layout below, same on both cores
    uint32_t timeout_us;
};
static_assert(sizeof(TxqOrderArgs) <= sizeof(uint32_t) * kTestMaxArgs);

// Layout from buf_base: +0x00 handshake in/out, +0x20 FIN in/out, +0x40 seq slot q0, +0x50 seq
// slot q1, +0x60 flag (16 B), +0x100 sources of the seq packets (count * 16 per queue), then the
// big area (256-B aligned). Both cores use the same addresses.
struct TxqOrderLayout {
    uint32_t hs_in, hs_out, fin_in, fin_out, slot[2], flag, seq_src[2], big;
};
constexpr TxqOrderLayout txq_order_layout(uint32_t base, uint32_t count) {
    return TxqOrderLayout{base,
                          base + 0x10,
                          base + 0x20,
                          base + 0x30,
                          {base + 0x40, base + 0x50},
                          base + 0x60,
                          {base + 0x100, base + 0x100 + count * 16},
                          (base + 0x100 + 2 * count * 16 + 0xFF) & ~0xFFu};
}
inline constexpr uint32_t kTxqOrderSeed = 0x0D0E;
inline constexpr uint32_t kTxqOrderFlag = 0xF1A9F1A9;

enum TxqOrderStuck : uint32_t {
    kToStuckHandshake = 0x401,
    kToStuckFin = 0x405,    // Master: end-of-kernel wait for the Subordinate's FIN
    kToStuckFinal = 0x402,  // Subordinate: last packet / flag never arrived
    kToStuckData = 0x403,   // Subordinate: big transfer never completed
    kToStuckTxq = 0x404,
};

struct TxqOrderResults {
    TestFailure failure;
    uint32_t distinct_seen[2];  // SeqSlot: distinct values observed per queue's slot
    uint32_t decreases[2];      // SeqSlot: observations lower than the previous one
    uint32_t final_seq[2];
    uint32_t last_word_present_at_flag;  // Same/CrossQueue: big transfer's last word was there
    uint32_t flag_cycles;                // handshake done -> flag seen (wall-clock cycles)
    uint32_t mismatches_final;           // after everything landed
};
static_assert(sizeof(TxqOrderResults) <= sizeof(uint32_t) * kTestMaxResults);

// ---- bad_input: what a bad request looks like from firmware and in the model
// ------------------------- Refused HAL calls (nothing reaches the model), then the same mistakes
// written straight to the registers (the model records them), then NOC requests to addresses
// outside the target's memory.

struct BadInputArgs {
    uint32_t local_buf;           // local L1, 64 B, 16-B aligned
    uint32_t peer_buf;            // link peer L1 (valid destination)
    uint32_t target_x, target_y;  // NOC0 coordinates of a same-chip core
    uint32_t bad_noc_addr;        // address outside that core's memory (16-B aligned)
    uint32_t peer_stream;         // stream used for the refused TXQ1 remote register write
};
static_assert(sizeof(BadInputArgs) <= sizeof(uint32_t) * kTestMaxArgs);

// What the raw register writes use (the host matches the model's error records against these).
inline constexpr uint32_t kBadInputMisalignOffset = 8;  // start = local_buf + 8
inline constexpr uint32_t kBadInputMisalignedSize = 24;

enum class BadInputStep : uint32_t { HalEth = 1, RawEth, Noc };

struct BadInputResults {
    TestFailure failure;
    uint32_t hal_misaligned_src;  // hal::Status of send with a misaligned source
    uint32_t hal_misaligned_dst;
    uint32_t hal_misaligned_size;
    uint32_t hal_q1_remote;           // try_write_remote_reg on TXQ1
    uint32_t transfer_cnt_after_hal;  // TXQ0 + TXQ1 TRANSFER_CNT after the refused calls (0)
    uint32_t noc_write_status;    // HAL status of the out-of-range write (Ok: the HAL cannot know)
    uint32_t noc_barrier_status;  // the write barrier (Ok: the model still acks)
    uint32_t noc_read_status;
    uint32_t noc_read_barrier_status;
};
static_assert(sizeof(BadInputResults) <= sizeof(uint32_t) * kTestMaxResults);

// ---- eth_latency (benchmark): ping-pong round trip without verification
// ------------------------------

struct EthLatencyArgs {
    uint32_t samples;       // measured round trips (one unmeasured warm-up first)
    uint32_t packet_bytes;  // multiple of 16, >= 16, sync included
    uint32_t buf_base;      // +0x00 handshake in/out, +0x20 FIN in/out, +0x40 rx slot,
                            // +0x40 + packet_bytes tx slot
    uint32_t timeout_us;
};
static_assert(sizeof(EthLatencyArgs) <= sizeof(uint32_t) * kTestMaxArgs);

struct EthLatencyResults {
    TestFailure failure;
    uint32_t samples_done;
    uint32_t rtt_min, rtt_max;
    uint32_t rtt_sum_lo, rtt_sum_hi;
    uint32_t send_issue_cycles;  // Master: cycles to program one send (mean over samples)
};
static_assert(sizeof(EthLatencyResults) <= sizeof(uint32_t) * kTestMaxResults);

// ---- eth_ring (benchmark): a token around a ring of chips
// -------------------------------------------- Per chip two eth cores: the Receiver (link from the
// previous chip) and the Forwarder (link to the next chip). A hop: the Receiver sees the token land
// over Ethernet, writes it over the NOC into the Forwarder's tx slot, bumps the Forwarder's token
// stream with a NOC inline write, and returns the Ethernet credit to the previous chip's Forwarder
// (remote register write). The Forwarder waits for the token stream, sends the token (payload +
// sync) over its link to the next chip's Receiver, and waits for that credit before the next token.
// The Master is chip 0's Receiver: it injects the token into its own Forwarder, starts the clock,
// and stops it when the token comes back around. Each link starts with the seeds/002 handshake
// (Forwarder = handshake Master, the next chip's Receiver = Subordinate). Layout (both roles) from
// buf_base: +0x00 handshake in, +0x10 handshake out, +0x40 rx slot, +0x40 + packet_bytes tx slot.

struct EthRingArgs {
    uint32_t samples;       // measured laps (one unmeasured warm-up lap first)
    uint32_t packet_bytes;  // multiple of 16, >= 16, sync included
    uint32_t buf_base;
    uint32_t partner_x, partner_y;  // the other core on this chip, in `noc` coordinates
    uint32_t noc;                   // NOC used between Receiver and Forwarder
    uint32_t token_stream;          // Forwarder's stream: tokens handed over by the Receiver
    uint32_t credit_stream;         // Forwarder's stream: Ethernet credits from the next Receiver
    uint32_t timeout_us;
};
static_assert(sizeof(EthRingArgs) <= sizeof(uint32_t) * kTestMaxArgs);

constexpr uint32_t eth_bench_rx(uint32_t base) {
    return base + 0x40;
}
constexpr uint32_t eth_bench_tx(uint32_t base, uint32_t packet_bytes) {
    return base + 0x40 + packet_bytes;
}

enum EthLatencyStuck : uint32_t {
    kLatStuckHandshake = 0x601,
    kLatStuckPong = 0x602,  // Master (detail: sample)
    kLatStuckPing = 0x603,  // Subordinate (detail: sample)
    kLatStuckFin = 0x604,   // Subordinate: end-of-kernel wait for the last credit
    kLatStuckTxq = 0x605,
};

enum EthRingStuck : uint32_t {
    kRingStuckHandshake = 0x506,
    kRingStuckToken = 0x501,   // Forwarder: no token from the Receiver
    kRingStuckCredit = 0x502,  // Forwarder: no Ethernet credit
    kRingStuckPacket = 0x503,  // Receiver: no token over Ethernet (detail: lap)
    kRingStuckNoc = 0x504,     // Receiver: NOC barrier
    kRingStuckTxq = 0x505,
};

struct EthRingResults {
    TestFailure failure;
    uint32_t laps_done;
    uint32_t lap_min, lap_max;
    uint32_t lap_sum_lo, lap_sum_hi;
};
static_assert(sizeof(EthRingResults) <= sizeof(uint32_t) * kTestMaxResults);

// ---- fabric worker kernels (fabric_traffic, fabric_conn_stress) -------------------------------
// Worker kernels on Tensix cores that send through a fabric router's ch0 with the worker adapter
// (fabric/worker_adapter.h). Each owns, at conn_l1: the credit word (+0), the teardown word (+16)
// and the adapter's staging (+32, FabricConnection::kStagingBytes).

constexpr uint32_t fabric_conn_credit(uint32_t conn_l1) {
    return conn_l1;
}
constexpr uint32_t fabric_conn_teardown(uint32_t conn_l1) {
    return conn_l1 + 16;
}
constexpr uint32_t fabric_conn_staging(uint32_t conn_l1) {
    return conn_l1 + 32;
}
inline constexpr uint32_t kFabricConnL1Bytes = 32 + 64 + 6 * 16;

// One destination of fabric_traffic (host-written in the worker's L1 at dests_addr). Packet k of
// this destination (k = 0, 1, ... counting only its packets) uses position p = k % dest_slots:
//   UnicastWrite, FusedWriteAtomicInc  packet_bytes of pattern(seed + p) -> addr + p *
//   packet_bytes;
//                                      fused: then sem += 1
//   InlineWrite                        pattern_word(seed, p) -> addr + 4 * p
//   AtomicInc                          addr += 1 (sem unused)
//   ScatterWrite                       chunk j (scatter_chunks equal parts of packet_bytes) of
//                                      pattern(seed + p) -> addr + j * scatter_gap + p *
//                                      packet_bytes
//                                      + j * chunk bytes
// Packet k's header carries seq = seq_base + k (traffic_seq below: the flow and the packet's
// index in it), so a router that drops it names the packet in its event log. A send larger than
// a slot goes out as several packets with the same seq.
struct FabricDest {
    uint32_t route;  // pf::route_unicast / route_multicast (2D: pf::Route::hops)
    uint32_t x, y;   // destination core (NOC0), on every chip the route writes
    uint32_t addr;
    uint32_t seed;
    uint32_t sem_x, sem_y, sem_addr;
    uint32_t route_ext;                         // 2D: the rest of pf::Route (0 on a line or ring)
    uint32_t flags_word = fabric::kDefaultTtl;  // pf::Route::flags_word: ttl | branch_hops << 8
    uint32_t dst_node;
    uint32_t seq_base;  // the header seq of this destination's packet 0 (traffic_seq(flow, 0))
};
static_assert(sizeof(FabricDest) == 48);
inline constexpr uint32_t kFabricMaxDests = 16;

// The header seq word of traffic packets (PacketHeader::seq, echoed in a router's BadPacket
// event): the flow in the high bits, the packet's index in its flow in the low bits. The host
// numbers the flows of a run and refuses plans beyond these limits, so every dropped packet
// decodes to exactly one flow and packet.
inline constexpr uint32_t kTrafficSeqIndexBits = 16;
inline constexpr uint32_t kTrafficSeqMaxFlows = 1u << (32 - kTrafficSeqIndexBits);
inline constexpr uint32_t kTrafficSeqMaxPackets = 1u << kTrafficSeqIndexBits;  // per flow
constexpr uint32_t traffic_seq(uint32_t flow, uint32_t index) {
    return (flow << kTrafficSeqIndexBits) | (index & (kTrafficSeqMaxPackets - 1));
}
constexpr uint32_t traffic_seq_flow(uint32_t seq) {
    return seq >> kTrafficSeqIndexBits;
}
constexpr uint32_t traffic_seq_index(uint32_t seq) {
    return seq & (kTrafficSeqMaxPackets - 1);
}
static_assert(uint64_t{kTrafficSeqMaxFlows} * kTrafficSeqMaxPackets == uint64_t{1} << 32,
              "flow and index fill the seq word");
static_assert(traffic_seq(kTrafficSeqMaxFlows - 1, kTrafficSeqMaxPackets - 1) == 0xFFFFFFFFu);
static_assert(traffic_seq_flow(traffic_seq(0x1234, 0xBEEF)) == 0x1234 &&
              traffic_seq_index(traffic_seq(0x1234, 0xBEEF)) == 0xBEEF);
// seq_base + k of the kernel is traffic_seq(flow, k) for every packet a flow may carry.
static_assert(traffic_seq(7, 0) + (kTrafficSeqMaxPackets - 1) ==
              traffic_seq(7, kTrafficSeqMaxPackets - 1));

enum FabricTrafficFlags : uint32_t {
    kFabricFlush =
        1u << 0,  // atomics (and fused increments) after the channel's writes are flushed
    kFabricNoClose = 1u << 1,  // leave the connection open at the end (termination tests)
};

struct FabricTrafficArgs {
    fabric::WorkerChannel channel;
    uint32_t send_type;  // fabric::NocSendType
    uint32_t
        packet_bytes;  // bytes per send (payload types; > payload_bytes splits; multiple of 16)
    uint32_t packet_count;  // sends in all, round-robin over the destinations
    uint32_t num_dests;     // 1..kFabricMaxDests
    uint32_t dest_slots;    // positions per destination region (>= 1)
    uint32_t dests_addr;    // L1: FabricDest[num_dests]
    uint32_t src_addr;  // L1: num_dests * dest_slots * packet_bytes of source (the kernel fills it)
    uint32_t conn_l1;   // L1: kFabricConnL1Bytes, 16-B aligned
    uint32_t timeout_us;      // every wait (slot credit, teardown, ...)
    uint32_t flags;           // FabricTrafficFlags
    uint32_t scatter_chunks;  // 2..4 (ScatterWrite)
    uint32_t scatter_gap;     // ScatterWrite: distance between the chunks' regions
    uint32_t start_addr;  // 0, or an L1 word: wait (bounded) for it to be non-zero before sending
};
static_assert(sizeof(FabricTrafficArgs) <= sizeof(uint32_t) * kTestMaxArgs);

enum class FabricTrafficStep : uint32_t { Args = 1, Init, Open, Send, Close, Start };

enum FabricStuck : uint32_t {
    kFabricStuckOpen = 0x701,
    kFabricStuckSend = 0x702,  // detail: packet index
    kFabricStuckClose = 0x703,
    kFabricStuckStart = 0x704,
    kFabricStuckToken = 0x705,  // fabric_conn_stress: the token never came (detail: iteration)
};

struct FabricTrafficResults {
    TestFailure failure;
    uint32_t packets_sent;  // send calls completed
    uint32_t cycles;        // open .. last send returned
    uint32_t close_cycles;
    uint32_t last_status;  // hal::Status of the last adapter call
};
static_assert(sizeof(FabricTrafficResults) <= sizeof(uint32_t) * kTestMaxResults);

// fabric_conn_stress: `iterations` times: (wait for the token,) open, one fused write + atomic
// increment of packet_bytes of pattern(seed) to dest (counter at sem), close, (pass the token).
// With workers > 1 the token is a turn number in each worker's L1 at token_addr: worker i takes
// turns i, i + workers, ... and writes turn + 1 to the next worker's token word.
struct FabricConnStressArgs {
    fabric::WorkerChannel channel;
    uint32_t iterations;
    uint32_t workers;         // K >= 1
    uint32_t my_index;        // 0..K-1
    uint32_t next_x, next_y;  // the next worker (NOC0)
    uint32_t token_addr;      // L1 word (same address on every worker; host zeroes it)
    uint32_t route;
    uint32_t dst_x, dst_y, dst_addr;
    uint32_t sem_addr;  // on the same core as dst
    uint32_t seed;
    uint32_t packet_bytes;  // multiple of 16, <= payload_bytes
    uint32_t src_addr;
    uint32_t conn_l1;
    uint32_t timeout_us;
};
static_assert(sizeof(FabricConnStressArgs) <= sizeof(uint32_t) * kTestMaxArgs);

struct FabricConnStressResults {
    TestFailure failure;
    uint32_t iterations_done;
    uint32_t cycles;
};
static_assert(sizeof(FabricConnStressResults) <= sizeof(uint32_t) * kTestMaxResults);

// ---- mux_worker (the seeds/001 regression, tests/sim/mux_test.cpp) ----------------------------
// A client of a fabric mux channel: open, packet_count packets (full-size channel: packet k is a
// unicast write of packet_bytes of pattern(seed + p) to dst_addr + p * packet_bytes, p = k % 8,
// so the last packet at each position is what stays; header-only: atomic +1 on dst_addr), close
// within close_timeout_us, then the termination handshake: every worker adds 1
// to the master's done word (master_x/y, done_addr); the master waits for `workers` of them and
// writes Graceful into the mux's termination word (the mux core is channel.router_x/y).
enum MuxWorkerFlags : uint32_t {
    kMuxWorkerMaster = 1u << 0,      // this worker terminates the mux
    kMuxWorkerHeaderOnly = 1u << 1,  // atomic increments instead of writes
};

inline constexpr uint32_t kMuxWorkerPositions = 8;

struct MuxWorkerArgs {
    fabric::WorkerChannel channel;  // the mux channel
    uint32_t packet_count;
    uint32_t packet_bytes;  // full-size: multiple of 16, <= channel payload
    uint32_t route;         // pf::route_unicast(hops)
    uint32_t dst_x, dst_y, dst_addr;
    uint32_t seed;
    uint32_t src_addr;  // L1: kMuxWorkerPositions * packet_bytes of source (the kernel fills it)
    uint32_t conn_l1;   // L1: kFabricConnL1Bytes, 16-B aligned
    uint32_t send_timeout_us;   // open, each slot wait, the master's wait for the others
    uint32_t close_timeout_us;  // the teardown answer
    uint32_t master_x, master_y;
    uint32_t done_addr;  // the master's done word (host zeroes it)
    uint32_t workers;    // done increments the master waits for (itself included)
    uint32_t flags;      // MuxWorkerFlags
};
static_assert(sizeof(MuxWorkerArgs) <= sizeof(uint32_t) * kTestMaxArgs);

enum class MuxWorkerStep : uint32_t { Args = 1, Init, Open, Send, Close, Done, Terminate };

enum MuxWorkerStuck : uint32_t {
    kMuxStuckOpen = 0x801,
    kMuxStuckSend = 0x802,   // detail: packet index
    kMuxStuckClose = 0x803,  // the mux did not answer the close in close_timeout_us
    kMuxStuckDone = 0x804,   // master: the others' done increments did not all come
};

struct MuxWorkerResults {
    TestFailure failure;
    uint32_t packets_sent;
    uint32_t send_cycles;   // open .. last send returned
    uint32_t close_cycles;  // close request .. answer
    uint32_t last_status;
};
static_assert(sizeof(MuxWorkerResults) <= sizeof(uint32_t) * kTestMaxResults);

// ---- line_send: the line API on any fabric --------------------------------------------------
// One worker sends by hop count only (FabricConnection::line_unicast / line_multicast), through
// the router (or mux) `channel` names, so the same kernel runs on a 1D and a 2D fabric. Send i
// (sends[i], line_send_op): a unicast to the chip `start` hops away, or a multicast to `range`
// chips from `start` hops on; each chip it reaches gets bytes of pattern(seed + i) at
// dst_addr + i * bytes of core (dst_x, dst_y), then +1 on that core's counter word (an atomic
// increment along the same route, flushed behind the write). A send the line API refuses is
// recorded (its status) and skipped; the kernel goes on with the next.
inline constexpr uint32_t kLineSendMax = 6;
inline constexpr uint32_t kLineSendMulticast = 1u << 16;
constexpr uint32_t line_send_unicast(uint32_t hops) {
    return hops & 0xFF;
}
constexpr uint32_t line_send_multicast(uint32_t start, uint32_t range) {
    return (start & 0xFF) | (range & 0xFF) << 8 | kLineSendMulticast;
}
struct LineSendArgs {
    fabric::WorkerChannel channel;  // the endpoint this worker connects to
    uint32_t conn_l1;               // kFabricConnL1Bytes, 16-B aligned
    uint32_t src_addr;              // num_sends * bytes of source (the kernel fills it)
    uint32_t dst_addr;              // on every chip reached: send i at dst_addr + i * bytes
    uint32_t dst_x, dst_y;          // the destination core on every chip (NOC0)
    uint32_t counter_addr;          // there: +1 per send that reached the chip
    uint32_t bytes;                 // per send: a positive multiple of 16
    uint32_t seed;
    uint32_t timeout_us;  // open, each send, close
    uint32_t num_sends;   // 1..kLineSendMax
    uint32_t sends[kLineSendMax];
};
static_assert(sizeof(LineSendArgs) == sizeof(uint32_t) * kTestMaxArgs);

enum class LineSendStep : uint32_t { Args = 1, Init, Open, Send, Close };

enum LineSendStuck : uint32_t {
    kLineSendStuckOpen = 0xA01,
    kLineSendStuckSend = 0xA02,  // detail: the send's index
    kLineSendStuckClose = 0xA03,
};

struct LineSendResults {
    TestFailure failure;
    uint32_t line[3];   // the endpoint's LineInfo words, as the connection read them
    uint32_t sent;      // sends that went out
    uint32_t refused;   // sends the line API refused
    uint32_t statuses;  // send i's hal::Status (0 ok) in bits 4i..4i+3
};
static_assert(sizeof(LineSendResults) == 16 + 6 * 4);
static_assert(sizeof(fabric::LineInfo) == sizeof(LineSendResults::line));
static_assert(kLineSendMax * 4 <= 32);

}  // namespace protocol
