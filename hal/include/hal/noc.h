// NoC requests through the NIU command buffers: unicast write and read, inline 32-bit write,
// atomic increment, multicast write; streams of requests of one shape (prepare() once, then
// send()); posted and non-posted; transaction IDs; barriers and "flushed" checks from the NIU
// counters. hal/README.md has the operations in a table.
//
// One Noc<A> object drives one NIU (NOC0 or NOC1) of the core it runs on. It keeps software
// counts of what it issued; completion checks compare them with the NIU's hardware counters.
// Every request goes through one private function, launch(), which is the only place that writes
// NOC_CMD_CTRL and the only place that bumps the software counts, so the two cannot drift apart
// (the lesson of tt-metal #28446, where a path that skipped the software count turned a barrier
// into an infinite spin). Do not issue requests on the same NIU behind this object's back (e.g.
// from base firmware on the same NoC): the counts would no longer describe the hardware.
//
// Usage (firmware):
//   constinit hal::Noc<hal::kArch> noc1{hal::NocId::Noc1, {.atomic_return_l1_addr = kScratch}};
//   HAL_TRY(noc1.init());
//   HAL_TRY(noc1.write(src, {.x = 1, .y = 2, .addr = dst}, 4096, {.trid = 3}));
//   ... later: if (noc1.trid_flushed(3)) { /* the destination has the data */ }
//   A stream (command buffer 2 reserved in NocConfig::prepared_bufs):
//   hal::NocStream<hal::NocStreamShape{.cmd_buf = 2}> to_peer;
//   HAL_TRY(noc1.prepare({.dst = {1, 2, 0}}, to_peer));
//   HAL_TRY(noc1.send(to_peer, src, dst, 256, /*trid=*/3));
//
// Requests larger than ArchMap::noc_max_burst_bytes are split into several requests, each counted
// separately; if a later one times out waiting for its command buffer, the earlier ones have been
// issued (and counted). Coordinates are in the coordinate space of the NoC used (NOC1's is
// mirrored).
#pragma once

#include <stdint.h>

#include "hal/arch_map.h"
#include "hal/clock.h"
#include "hal/encoding.h"
#include "hal/mmio.h"
#include "hal/status.h"
#include "hal/timeouts.h"
#include "hal/wait.h"

namespace hal {

enum class NocId : uint8_t { Noc0 = 0, Noc1 = 1 };

// Marks "no L1 address configured".
inline constexpr uint32_t kNoL1Addr = 0xFFFFFFFF;

// Which command buffer serves which kind of request. The defaults follow the reference router:
// large writes on 0, reads on 1, small (inline/register) writes on 2, atomics on 3.
struct NocCmdBufs {
    uint32_t write = 0;
    uint32_t read = 1;
    uint32_t write_reg = 2;
    uint32_t atomic = 3;
};

struct NocConfig {
    NocCmdBufs cmd_bufs{};
    // 4-byte-aligned local L1 word that receives the old value returned by non-posted atomics.
    // Non-posted atomics are refused (BadArg) while this is kNoL1Addr.
    uint32_t atomic_return_l1_addr = kNoL1Addr;
    // Bit i: command buffer i is reserved for streams (NocStream, prepare() and send()). No
    // ordinary request may use it (init() refuses a cmd_bufs entry in the mask), so only
    // streams ever program it and their constants stay put between requests.
    uint32_t prepared_bufs = 0;
};

struct NocWriteOpts {
    bool posted = false;                   // true: no ack, completion via posted_writes_sent()
    uint32_t vc = noc::kDefaultUnicastVc;  // 0..3
    uint32_t trid = 0;                     // transaction ID 0..15 (PACKET_TAG)
};

struct NocReadOpts {
    uint32_t vc = noc::kDefaultUnicastVc;
    uint32_t trid = 0;
};

struct NocInlineWriteOpts {
    bool posted = false;
    uint32_t vc = noc::kDefaultUnicastVc;
    uint32_t trid = 0;
    uint32_t byte_enable = 0xF;  // which of the 4 bytes to write (1..0xF)
};

struct NocAtomicOpts {
    bool posted = false;  // non-posted needs NocConfig::atomic_return_l1_addr
    uint32_t vc = noc::kDefaultUnicastVc;
    uint32_t trid = 0;
    uint32_t wrap = noc::kAtWrap32;  // counter wraps above bit `wrap` (31 = plain 32-bit add)
};

struct NocMcastWriteOpts {
    bool posted = false;
    uint32_t vc = noc::kDefaultMulticastVc;  // 4..5
    bool include_self = false;               // deliver to this core too if it is in the rectangle
    bool y_major = false;                    // NOC_CMD_BRCST_XY
    bool path_reserve = true;                // reserve the tree before sending (deadlock-safe)
    // Must stay 0 for non-posted multicast: one increment at issue but one decrement per ack
    // leaves the per-ID counter meaningless (see clear_trid_counters).
    uint32_t trid = 0;
};

// The default options, the requests' default arguments: a constant they fold, where `= {}` would
// make every call site build a temporary (at -Os, a memcpy from .rodata for the 16-byte ones).
inline constexpr NocWriteOpts kNocWriteDefaults{};
inline constexpr NocReadOpts kNocReadDefaults{};
inline constexpr NocInlineWriteOpts kNocInlineWriteDefaults{};
inline constexpr NocAtomicOpts kNocAtomicDefaults{};
inline constexpr NocMcastWriteOpts kNocMcastWriteDefaults{};

// Software counts, each named after the NIU counter it is compared with.
struct NocCounters {
    uint32_t rd_req_issued;            // vs NIU_MST_RD_RESP_RECEIVED
    uint32_t nonposted_wr_req_issued;  // vs NIU_MST_NONPOSTED_WR_REQ_SENT
    uint32_t wr_ack_expected;          // vs NIU_MST_WR_ACK_RECEIVED (multicast: one per dest)
    uint32_t posted_wr_req_issued;     // vs NIU_MST_POSTED_WR_REQ_SENT
    uint32_t atomic_resp_expected;     // vs NIU_MST_ATOMIC_RESP_RECEIVED
    uint32_t posted_atomic_issued;     // vs NIU_MST_POSTED_ATOMIC_SENT
};

// ---- streams ----
//
// A stream is many requests of one shape from one core: a router's forwards into a neighbour's
// slots, its deliveries, a worker's pushes. Noc::prepare() programs a command buffer (one of
// NocConfig::prepared_bufs) once with what every request shares (destination core, ctrl, VC) and
// Noc::send() then writes only what varies: addresses, size or data word, transaction ID, and
// NOC_CMD_CTRL. The shape is a compile-time parameter, so a request does only its own register
// writes and no tests of options.

// What a stream's requests have in common, fixed at compile time.
struct NocStreamShape {
    uint32_t cmd_buf = 0;      // its command buffer, one of NocConfig::prepared_bufs
    bool word = false;         // each request writes one 32-bit word (an inline write) to the
                               // stream's address; otherwise `size` bytes of local L1
    bool fixed_word = false;   // word: the value and transaction ID are fixed too (prepare's)
    bool any_core = false;     // data: each request names its destination core
    bool posted = false;       // no acks: completion via posted_writes_sent / trid_writes_sent
    bool owns_buffer = false;  // the only stream ever prepared on cmd_buf (prepare refuses
                               // another), so its constants stay programmed: no check per request
    // A request waits for its busy buffer at most NocStream::ready_wait_us() (its owner's to set at
    // run time; 0: not at all), then returns Timeout, rather than the HAL's whole bound
    // (timeouts::kNocCmdBufReadyUs): for a stream whose destinations may stop accepting, whose
    // caller then goes on with other work.
    bool bounded_wait = false;
};

// What prepare() programs besides the shape.
struct NocStreamTarget {
    NocAddr dst{};                         // data: the core (x, y); word: the word's address
    uint32_t vc = noc::kDefaultUnicastVc;  // 0..3
    uint32_t value = 0;                    // fixed_word: the word
    uint32_t trid = 0;                     // fixed_word: its transaction ID
    uint32_t byte_enable = 0xF;            // word: which of its 4 bytes to write (1..0xF)
    uint32_t ready_wait_us = 0;            // bounded_wait: NocStream::ready_wait_us() to start with
};

// A prepared stream: plain data, kept beside the Noc that prepared it. token 0: never prepared.
// (36 bytes: a router keeps a dozen in its small local data RAM.)
template <NocStreamShape S>
struct NocStream {
    static constexpr NocStreamShape kShape = S;
    uint32_t base = 0;      // the command buffer's base address
    uint32_t token = 0;     // which preparation: whose constants the buffer holds
    uint32_t ret_mid = 0;   // data: the destination core's coordinate registers;
    uint32_t ret_hi = 0;    // word: the word's (TARG)
    uint32_t tag = 0;       // PACKET_TAG (fixed_word; the others write it per request)
    uint32_t ctrl = 0;      // NOC_CTRL
    uint32_t be = 0;        // word: the byte enables of its address
    uint32_t dst_addr = 0;  // word: its address (TARG lo)
    uint32_t value = 0;     // fixed_word: the word; bounded_wait: ready_wait_us()

    // bounded_wait (a data stream, whose `value` is free): how long a request waits for its busy
    // buffer, microseconds.
    uint32_t ready_wait_us() const requires(S.bounded_wait) { return value; }
    void set_ready_wait_us(uint32_t us) requires(S.bounded_wait) { value = us; }
};
static_assert(sizeof(NocStream<NocStreamShape{}>) == 36);

template <const ArchMap& A>
class Noc {
  public:
    constexpr explicit Noc(NocId id, NocConfig cfg = {})
        : noc_(static_cast<uint32_t>(id)),
          cfg_(cfg),
          last_base_(noc::cmd_buf_base(A, static_cast<uint32_t>(id), 0)),
          status_base_(noc::status_addr(static_cast<uint32_t>(id), 0)) {}

    // Check the configuration, learn this core's coordinates from NOC_NODE_ID and seed the
    // software counts from the hardware counters. Call while nothing this core issued on this NIU
    // is in flight.
    [[nodiscard]] Status init() {
        initialized_ = false;
        const NocCmdBufs& b = cfg_.cmd_bufs;
        if (noc_ >= noc::kNumNocs || b.write >= noc::kNumCmdBufs || b.read >= noc::kNumCmdBufs ||
            b.write_reg >= noc::kNumCmdBufs || b.atomic >= noc::kNumCmdBufs) {
            return Status::BadArg;
        }
        const uint32_t used = 1u << b.write | 1u << b.read | 1u << b.write_reg | 1u << b.atomic;
        if ((cfg_.prepared_bufs >> noc::kNumCmdBufs) != 0 || (cfg_.prepared_bufs & used) != 0) {
            return Status::BadArg;
        }
        if (cfg_.atomic_return_l1_addr != kNoL1Addr) {
            if (cfg_.atomic_return_l1_addr % 4 != 0) {
                return Status::Misaligned;
            }
            if (!local_range_ok(cfg_.atomic_return_l1_addr, 4)) {
                return Status::OutOfRange;
            }
        }
        const uint32_t node = mmio::read32(noc::cmd_buf_base(A, noc_, 0) + A.noc.node_id);
        self_ = noc::decode_unicast_coord(node);
        if (A.noc.at_len_be_1 != kNoRegister) {
            // The high half of a 64-bit length/byte-enable: this driver never uses it, so make
            // sure no stale value from earlier firmware turns a length into a huge one.
            for (uint32_t buf = 0; buf < noc::kNumCmdBufs; ++buf) {
                const uint32_t base = noc::cmd_buf_base(A, noc_, buf);
                HAL_TRY(wait_cmd_buf_ready(base));
                mmio::write32(base + A.noc.at_len_be_1, 0);
            }
        }
        counters_.rd_req_issued = hw_counter(noc::status::kMstRdRespReceived);
        counters_.nonposted_wr_req_issued = hw_counter(noc::status::kMstNonpostedWrReqSent);
        counters_.wr_ack_expected = hw_counter(noc::status::kMstWrAckReceived);
        counters_.posted_wr_req_issued = hw_counter(noc::status::kMstPostedWrReqSent);
        counters_.atomic_resp_expected = hw_counter(noc::status::kMstAtomicRespReceived);
        counters_.posted_atomic_issued = hw_counter(noc::status::kMstPostedAtomicSent);
        // Computed once here rather than per request (each would be L1 loads and arithmetic).
        self_coord_ = noc::unicast_coord(self_.x, self_.y);
        base_.write = noc::cmd_buf_base(A, noc_, b.write);
        base_.read = noc::cmd_buf_base(A, noc_, b.read);
        base_.write_reg = noc::cmd_buf_base(A, noc_, b.write_reg);
        base_.atomic = noc::cmd_buf_base(A, noc_, b.atomic);
        initialized_ = true;
        return Status::Ok;
    }

    constexpr bool initialized() const { return initialized_; }
    constexpr NocId id() const { return static_cast<NocId>(noc_); }
    // This core's coordinates on this NoC (valid after init()).
    constexpr NocXY self() const { return self_; }
    constexpr const NocCounters& counters() const { return counters_; }

    // Write `size` bytes from local L1 `src_l1` to `dst`. Source and destination must be congruent
    // mod 16. Returns once every request is handed to the NIU (not when it has arrived).
    // (Structs are taken by const reference: by value, the ilp32 ABI makes every caller copy
    // them to the stack, which at -Os is a call to memcpy per argument.)
    [[nodiscard]] Status write(uint32_t src_l1, const NocAddr& dst_arg, uint32_t size,
                               const NocWriteOpts& o_arg = kNocWriteDefaults) {
        const NocAddr dst = dst_arg;
        const NocWriteOpts o = o_arg;
        HAL_TRY(check_common(o.vc, noc::kVcUnicastMax, o.trid));
        if (!noc::addr_ok(dst)) {
            return Status::OutOfRange;
        }
        HAL_TRY(check_transfer(src_l1, dst.addr, size));
        const uint32_t ctrl =
            noc::kCtrlCmdWrite | noc::static_vc(o.vc) | (o.posted ? 0u : noc::kCtrlRespMarked);
        const Kind kind = o.posted ? Kind::PostedWrite : Kind::NonpostedWrite;
        return for_each_chunk(
            size, [ =, this ](uint32_t off, uint32_t len) __attribute__((always_inline)) {
                Request r{};
                r.base = base_.write;
                r.targ = noc::encode_addr(A, src_l1 + off, self_coord());
                r.ret = noc::encode_addr(A, dst.addr + off, noc::unicast_coord(dst.x, dst.y));
                r.has_ret = true;
                r.tag = noc::packet_tag(o.trid);
                r.ctrl = ctrl;
                r.at_len_be = len;
                return issue(r, kind, 1);
            });
    }

    // Read `size` bytes from `src` into local L1 `dst_l1`.
    [[nodiscard]] Status read(const NocAddr& src_arg, uint32_t dst_l1, uint32_t size,
                              const NocReadOpts& o_arg = kNocReadDefaults) {
        const NocAddr src = src_arg;
        const NocReadOpts o = o_arg;
        HAL_TRY(check_common(o.vc, noc::kVcUnicastMax, o.trid));
        if (!noc::addr_ok(src)) {
            return Status::OutOfRange;
        }
        HAL_TRY(check_transfer(dst_l1, src.addr, size));
        const uint32_t ctrl = noc::kCtrlCmdRead | noc::static_vc(o.vc);
        return for_each_chunk(
            size, [ =, this ](uint32_t off, uint32_t len) __attribute__((always_inline)) {
                Request r{};
                r.base = base_.read;
                r.targ = noc::encode_addr(A, src.addr + off, noc::unicast_coord(src.x, src.y));
                r.ret = noc::encode_addr(A, dst_l1 + off, self_coord());
                r.has_ret = true;
                r.tag = noc::packet_tag(o.trid);
                r.ctrl = ctrl;
                r.at_len_be = len;
                return issue(r, Kind::Read, 1);
            });
    }

    // Write one 32-bit `value` to the 4-byte-aligned `dst` with no L1 source. On arches where
    // inline writes to L1 can hang (Blackhole, BH-86) an L1 destination is refused with
    // Unsupported; MMIO destinations (stream registers) are fine everywhere.
    [[nodiscard]] Status write_inline(const NocAddr& dst_arg, uint32_t value,
                                      const NocInlineWriteOpts& o_arg = kNocInlineWriteDefaults) {
        const NocAddr dst = dst_arg;
        const NocInlineWriteOpts o = o_arg;
        HAL_TRY(check_inline(dst, o));
        Request r{};
        r.base = base_.write_reg;
        r.targ = noc::encode_addr(A, dst.addr, noc::unicast_coord(dst.x, dst.y));
        r.tag = noc::packet_tag(o.trid);
        r.ctrl = noc::kCtrlCmdWrite | noc::kCtrlWrInline | noc::static_vc(o.vc) |
                 (o.posted ? 0u : noc::kCtrlRespMarked);
        r.at_len_be = noc::inline_byte_enable(dst.addr, o.byte_enable);
        r.at_data = value;
        r.has_at_data = true;
        return issue(r, o.posted ? Kind::PostedWrite : Kind::NonpostedWrite, 1);
    }

    // Atomically add `incr` to the 4-byte-aligned L1 word at `dst` (INCR_GET). Non-posted
    // atomics return the old value to NocConfig::atomic_return_l1_addr.
    [[nodiscard]] Status atomic_inc(const NocAddr& dst, uint32_t incr,
                                    const NocAtomicOpts& o = kNocAtomicDefaults) {
        return atomic_request(base_.atomic, dst, incr, o);
    }
    // atomic_inc() on stream `s`'s command buffer: the increments that follow a stream's writes
    // then wait for the same buffer (and, on the stream's VC, leave after them), and a request
    // that cannot leave holds that buffer only. The stream's next request programs its constants
    // again, so it must not own its buffer.
    template <NocStreamShape S>
    [[nodiscard]] Status atomic_inc_on(const NocStream<S>& s, const NocAddr& dst, uint32_t incr,
                                       const NocAtomicOpts& o = kNocAtomicDefaults) {
        static_assert(!S.owns_buffer, "an owned buffer keeps its stream's constants");
        programmed_[S.cmd_buf] = 0;
        return atomic_request(s.base, dst, incr, o);
    }

    // Write `size` bytes from local L1 `src_l1` to address `dst_addr` of every tile in `rect`.
    // `num_dests` is how many tiles will receive it (and ack it, when non-posted).
    [[nodiscard]] Status multicast_write(uint32_t src_l1, const NocRect& rect_arg,
                                         uint64_t dst_addr, uint32_t size, uint32_t num_dests,
                                         const NocMcastWriteOpts& o_arg = kNocMcastWriteDefaults) {
        const NocRect rect = rect_arg;
        const NocMcastWriteOpts o = o_arg;
        HAL_TRY(check_common(o.vc, noc::kVcMulticastMax, o.trid));
        if (o.vc < noc::kVcMulticastMin || num_dests == 0 || (!o.posted && o.trid != 0)) {
            return Status::BadArg;
        }
        if (!noc::rect_ok(rect) || dst_addr >= noc::kLocalAddrLimit) {
            return Status::OutOfRange;
        }
        HAL_TRY(check_transfer(src_l1, dst_addr, size));
        const uint32_t ctrl = noc::kCtrlCmdWrite | noc::static_vc(o.vc) | noc::kCtrlBrcstPacket |
                              (o.path_reserve ? noc::kCtrlPathReserve : 0u) |
                              (o.include_self ? noc::kCtrlBrcstSrcInclude : 0u) |
                              (o.y_major ? noc::kCtrlBrcstYMajor : 0u) |
                              (o.posted ? 0u : noc::kCtrlRespMarked);
        const Kind kind = o.posted ? Kind::PostedWrite : Kind::NonpostedWrite;
        return for_each_chunk(
            size, [ =, this ](uint32_t off, uint32_t len) __attribute__((always_inline)) {
                Request r{};
                r.base = base_.write;
                r.targ = noc::encode_addr(A, src_l1 + off, self_coord());
                r.ret = noc::encode_addr(A, dst_addr + off, noc::mcast_coord(rect));
                r.has_ret = true;
                r.tag = noc::packet_tag(o.trid);
                r.ctrl = ctrl;
                r.at_len_be = len;
                return issue(r, kind, num_dests);
            });
    }

    // ---- streams (NocStreamShape above) ----
    //
    // prepare(target, stream): check the shape and target, program the constants (bounded wait
    // for the buffer). Several streams may share a buffer: a token per buffer says whose constants
    // it holds, and a request of a stream that finds another's programs its own again (correct,
    // only slower). A stream with owns_buffer is refused (BadArg) on a buffer another stream has
    // used, and another stream is refused on its buffer; preparing the same stream again is fine.
    template <NocStreamShape S>
    [[nodiscard]] Status prepare(const NocStreamTarget& t, NocStream<S>& out) {
        static_assert(S.cmd_buf < noc::kNumCmdBufs, "no such command buffer");
        static_assert(S.word || !S.fixed_word, "fixed_word is a kind of word stream");
        static_assert(!S.word || !S.any_core, "a word stream writes one fixed address");
        static_assert(!S.word || !S.bounded_wait, "bounded_wait: a data stream");
        HAL_TRY(check_prepared_buf(S.cmd_buf));
        HAL_TRY(check_stream_target<S>(t));
        const uint32_t held = programmed_[S.cmd_buf];
        if (held != 0 && held != out.token && (S.owns_buffer || (owned_ >> S.cmd_buf & 1) != 0)) {
            return Status::BadArg;
        }
        out = make_stream<S>(t);
        if (S.owns_buffer) owned_ |= 1u << S.cmd_buf;
        HAL_TRY(wait_cmd_buf_ready(out.base));
        program_constants(out);
        return Status::Ok;
    }

    // send(stream, ...): one request, counted at once. Its arguments by shape:
    //   data:            send(s, src_l1, dst_addr, size, trid)
    //   data, any_core:  send(s, src_l1, {x, y}, dst_addr, size, trid)
    //   word:            send(s, value, trid)
    //   fixed word:      send(s)
    // A stream's requests are not checked one by one (they are the hot paths): the caller makes
    // sure that the stream was prepared (Ok), trid <= noc::kMaxTransactionId, the core is one
    // prepare() would accept, size <= ArchMap::noc_max_burst_bytes, and source and destination
    // pass check_region() (checked once for a region the caller owns, or per request for a source
    // it was given). Otherwise the NIU gets the registers as given. What stays: the bounded wait
    // for the command buffer, reprogramming a buffer another stream used, and the counts.
    template <NocStreamShape S, typename... Args>
    [[nodiscard, gnu::always_inline]] Status send(const NocStream<S>& s, Args... args) {
        return stream_request<true>(s, args...);
    }

    // The stream's command buffer takes a request now (send() would not wait). A caller that must
    // not wait out the bound for a destination that stops accepting looks first.
    template <NocStreamShape S>
    [[nodiscard, gnu::always_inline]] bool ready(const NocStream<S>& s) const {
        return cmd_buf_ready(s.base);
    }
    // Wait until it does, at most until `deadline`: Ok, or Timeout.
    template <NocStreamShape S>
    [[nodiscard]] Status wait_ready(const NocStream<S>& s, Deadline deadline) const {
        return wait_cmd_buf_until(s.base, deadline);
    }

    // What the requests would say of a transfer of `size` bytes between local L1 `local` and
    // `remote` (range, size, 16-B congruence): Ok, or why not. For a stream's caller.
    [[nodiscard]] Status check_region(uint32_t local, uint64_t remote, uint32_t size) const {
        return check_transfer(local, remote, size);
    }

    // Requests of streams issued back to back (a packet is several: header, payload, +1 on a
    // stream register), counted once when the Batch ends (its destructor, so an early return
    // counts exactly the requests launched) instead of a load-add-store of the counts after each.
    // While a Batch lives, no completion check or barrier of the counts (writes_sent/flushed,
    // write_barrier, ...) runs on its Noc (trid_writes_sent reads hardware only: fine).
    class Batch {
      public:
        [[gnu::always_inline]] explicit Batch(Noc& noc) : noc_(noc) {}
        [[gnu::always_inline]] ~Batch() {
            if (nonposted_ != 0)
                static_cast<void>(noc_.count(Kind::NonpostedWrite, nonposted_, nonposted_));
            if (posted_ != 0) static_cast<void>(noc_.count(Kind::PostedWrite, posted_, posted_));
        }
        Batch(const Batch&) = delete;
        Batch& operator=(const Batch&) = delete;

        // Noc::send() of the same stream and arguments, counted when the Batch ends.
        template <NocStreamShape S, typename... Args>
        [[nodiscard, gnu::always_inline]] Status send(const NocStream<S>& s, Args... args) {
            HAL_TRY(noc_.template stream_request<false>(s, args...));
            ++(S.posted ? posted_ : nonposted_);
            return Status::Ok;
        }

      private:
        Noc& noc_;
        uint32_t nonposted_ = 0;
        uint32_t posted_ = 0;
    };

  private:
    template <NocStreamShape S>
    [[gnu::always_inline]] Status check_stream_target(const NocStreamTarget& t) const {
        HAL_TRY(check_common(t.vc, noc::kVcUnicastMax, S.fixed_word ? t.trid : 0));
        if (!S.word) {
            return S.any_core || noc::addr_ok({t.dst.x, t.dst.y, 0}) ? Status::Ok
                                                                     : Status::OutOfRange;
        }
        return check_inline(t.dst, {.vc = t.vc, .byte_enable = t.byte_enable});
    }

    template <NocStreamShape S>
    [[gnu::always_inline]] NocStream<S> make_stream(const NocStreamTarget& t) {
        const uint32_t ack = S.posted ? 0u : noc::kCtrlRespMarked;
        if (!S.word) {
            const noc::AddrRegs ret = noc::encode_addr(
                A, 0, noc::unicast_coord(S.any_core ? 0 : t.dst.x, S.any_core ? 0 : t.dst.y));
            return NocStream<S>{.base = noc::cmd_buf_base(A, noc_, S.cmd_buf),
                                .token = ++next_token_,
                                .ret_mid = ret.mid,
                                .ret_hi = ret.hi,
                                .ctrl = noc::kCtrlCmdWrite | noc::static_vc(t.vc) | ack,
                                .value = t.ready_wait_us};
        }
        const noc::AddrRegs targ =
            noc::encode_addr(A, t.dst.addr, noc::unicast_coord(t.dst.x, t.dst.y));
        return NocStream<S>{
            .base = noc::cmd_buf_base(A, noc_, S.cmd_buf),
            .token = ++next_token_,
            .ret_mid = targ.mid,
            .ret_hi = targ.hi,
            .tag = noc::packet_tag(S.fixed_word ? t.trid : 0),
            .ctrl = noc::kCtrlCmdWrite | noc::kCtrlWrInline | noc::static_vc(t.vc) | ack,
            .be = noc::inline_byte_enable(t.dst.addr, t.byte_enable),
            .dst_addr = targ.lo,
            .value = S.fixed_word ? t.value : 0};
    }

    // The requests of each shape (send() above). The stream's fields are copied to locals first:
    // an MMIO store may alias any uint32_t, so read through `s` they would be loaded again after
    // every register write.
    template <bool kCount, NocStreamShape S>
    requires(!S.word && !S.any_core) [[gnu::always_inline]] Status
        stream_request(const NocStream<S>& s, uint32_t src_l1, uint32_t dst_addr, uint32_t size,
                       uint32_t trid) {
        return stream_write<kCount>(s, src_l1, 0, dst_addr, size, trid);
    }
    template <bool kCount, NocStreamShape S>
    requires(!S.word && S.any_core) [[gnu::always_inline]] Status
        stream_request(const NocStream<S>& s, uint32_t src_l1, NocXY core, uint32_t dst_addr,
                       uint32_t size, uint32_t trid) {
        const noc::AddrRegs enc = noc::encode_addr(A, 0, noc::unicast_coord(core.x, core.y));
        const uint32_t coord = A.noc.coord_reg == NocCoordReg::Hi ? enc.hi : enc.mid;
        return stream_write<kCount>(s, src_l1, coord, dst_addr, size, trid);
    }
    template <bool kCount, NocStreamShape S>
    requires(S.word && !S.fixed_word) [[gnu::always_inline]] Status
        stream_request(const NocStream<S>& s, uint32_t value, uint32_t trid) {
        const uint32_t base = s.base;
        HAL_TRY(claim_buf(s));
        mmio::write32(base + A.noc.at_data, value);
        mmio::write32(base + noc::kPacketTag, trid << noc::kTagTransactionIdShift);
        return launch_stream<kCount, S>(base);
    }
    template <bool kCount, NocStreamShape S>
    requires(S.fixed_word) [[gnu::always_inline]] Status stream_request(const NocStream<S>& s) {
        HAL_TRY(claim_buf(s));  // the registers keep their values: the same request once more
        return launch_stream<kCount, S>(s.base);
    }

    // A data request: source, destination address (below 4 GiB: the rest of it is 0, programmed
    // once), with any_core the destination's coordinate register (`coord`), the transaction ID,
    // the length.
    template <bool kCount, NocStreamShape S>
    [[gnu::always_inline]] Status stream_write(const NocStream<S>& s, uint32_t src_l1,
                                               uint32_t coord, uint32_t dst_addr, uint32_t size,
                                               uint32_t trid) {
        constexpr uint32_t kCoordReg =
            A.noc.coord_reg == NocCoordReg::Hi ? noc::kRetAddrHi : noc::kRetAddrMid;
        const uint32_t base = s.base;
        HAL_TRY(claim_buf(s));
        mmio::write32(base + noc::kTargAddrLo, src_l1);
        mmio::write32(base + noc::kRetAddrLo, dst_addr);
        if (S.any_core) mmio::write32(base + kCoordReg, coord);
        mmio::write32(base + noc::kPacketTag, trid << noc::kTagTransactionIdShift);
        mmio::write32(base + noc::kAtLenBe, size);
        return launch_stream<kCount, S>(base);
    }

    // Wait (bounded) for the stream's buffer and make sure it holds the stream's constants.
    template <NocStreamShape S>
    [[gnu::always_inline]] Status claim_buf(const NocStream<S>& s) {
        const uint32_t base = s.base, token = s.token;
        if constexpr (!S.bounded_wait) {
            HAL_TRY(wait_cmd_buf_ready(base));
        } else if (!cmd_buf_ready(base)) [[unlikely]] {
            HAL_TRY(wait_cmd_buf_until(base, Deadline::after_us(A, s.ready_wait_us())));
        }
        if (!S.owns_buffer && programmed_[S.cmd_buf] != token) [[unlikely]] {
            program_constants(s);
        }
        return Status::Ok;
    }
    template <bool kCount, NocStreamShape S>
    [[gnu::always_inline]] Status launch_stream(uint32_t base) {
        if (!kCount) {
            fire(base);  // counted by the Batch
            return Status::Ok;
        }
        return launch(base, S.posted ? Kind::PostedWrite : Kind::NonpostedWrite, 1);
    }

    // A stream's constant registers (the per-request ones are written by its requests).
    template <NocStreamShape S>
    [[gnu::always_inline]] void program_constants(const NocStream<S>& s) {
        const uint32_t base = s.base;
        const uint32_t coord_lo = base + (S.word ? noc::kTargAddrLo : noc::kRetAddrLo);
        if (S.word) mmio::write32(coord_lo, s.dst_addr);
        mmio::write32(coord_lo + (noc::kTargAddrMid - noc::kTargAddrLo), s.ret_mid);
        if (A.noc.coord_reg == NocCoordReg::Hi) {
            mmio::write32(coord_lo + (noc::kTargAddrHi - noc::kTargAddrLo), s.ret_hi);
        }
        if (!S.word) {
            // The source: this core, high address bits 0 (L1).
            const noc::AddrRegs targ = noc::encode_addr(A, 0, self_coord());
            mmio::write32(base + noc::kTargAddrMid, targ.mid);
            if (A.noc.coord_reg == NocCoordReg::Hi) mmio::write32(base + noc::kTargAddrHi, targ.hi);
        }
        if (S.fixed_word) mmio::write32(base + noc::kPacketTag, s.tag);
        mmio::write32(base + noc::kCtrl, s.ctrl);
        if (S.word) mmio::write32(base + noc::kAtLenBe, s.be);
        if (S.fixed_word) mmio::write32(base + A.noc.at_data, s.value);
        programmed_[S.cmd_buf] = s.token;
    }

  public:
    // ---- completion checks (each reads NIU counters; none waits) ----

    // Every non-posted write request has left the NIU.
    [[nodiscard]] bool nonposted_writes_sent() const {
        return hw_counter(noc::status::kMstNonpostedWrReqSent) == counters_.nonposted_wr_req_issued;
    }
    // Every non-posted write has been acknowledged by every destination.
    [[nodiscard]] bool nonposted_writes_flushed() const {
        return hw_counter(noc::status::kMstWrAckReceived) == counters_.wr_ack_expected;
    }
    // Every posted write request has left the NIU. (Its source data may still be being read: use
    // a transaction ID and trid_writes_sent() before reusing the source buffer.)
    [[nodiscard]] bool posted_writes_sent() const {
        return hw_counter(noc::status::kMstPostedWrReqSent) == counters_.posted_wr_req_issued;
    }
    // Every read's data has landed in local L1.
    [[nodiscard]] bool reads_flushed() const {
        return hw_counter(noc::status::kMstRdRespReceived) == counters_.rd_req_issued;
    }
    // Every non-posted atomic has been performed and its response received.
    [[nodiscard]] bool atomics_flushed() const {
        return hw_counter(noc::status::kMstAtomicRespReceived) == counters_.atomic_resp_expected;
    }
    // Every posted atomic has left the NIU.
    [[nodiscard]] bool posted_atomics_sent() const {
        return hw_counter(noc::status::kMstPostedAtomicSent) == counters_.posted_atomic_issued;
    }
    // The NIU has finished reading the source data of every write tagged `trid`: the source
    // buffer may be reused. (Invalid IDs report false.)
    [[nodiscard, gnu::always_inline]] bool trid_writes_sent(uint32_t trid) const {
        return trid <= noc::kMaxTransactionId &&
               trid_counter_zero(noc::status::mst_write_reqs_outgoing_id(trid));
    }
    // The same check for a hot loop that keeps in registers what trid_writes_sent() loads from
    // here: the status block's base (status_base()) and the base of the command buffer whose
    // NOC_CMD_CTRL was written last (last_cmd_buf_base() when the loop starts, then the buffer
    // of its own last request), read back first as trid_writes_sent() does.
    [[nodiscard, gnu::always_inline]] uint32_t status_base() const { return status_base_; }
    [[nodiscard, gnu::always_inline]] uint32_t last_cmd_buf_base() const { return last_base_; }
    [[nodiscard, gnu::always_inline]] static bool trid_writes_sent_after(uint32_t status_base,
                                                                         uint32_t last_cmd_buf,
                                                                         uint32_t trid) {
        if (trid > noc::kMaxTransactionId) return false;
        (void)mmio::read32(last_cmd_buf + A.noc.cmd_ctrl);
        return mmio::read32(status_base + 4 * noc::status::mst_write_reqs_outgoing_id(trid)) == 0;
    }
    // Every non-posted request tagged `trid` has its ack or response back.
    [[nodiscard, gnu::always_inline]] bool trid_flushed(uint32_t trid) const {
        return trid <= noc::kMaxTransactionId &&
               trid_counter_zero(noc::status::mst_reqs_outstanding_id(trid));
    }

    // ---- bounded barriers (wait_until on the checks above) ----

    [[nodiscard]] Status write_barrier(Deadline d,
                                       const uint32_t* termination_word = nullptr) const {
        return wait_until([this] { return nonposted_writes_flushed() && posted_writes_sent(); }, d,
                          termination_word);
    }
    [[nodiscard]] Status read_barrier(Deadline d,
                                      const uint32_t* termination_word = nullptr) const {
        return wait_until([this] { return reads_flushed(); }, d, termination_word);
    }
    [[nodiscard]] Status atomic_barrier(Deadline d,
                                        const uint32_t* termination_word = nullptr) const {
        return wait_until([this] { return atomics_flushed() && posted_atomics_sent(); }, d,
                          termination_word);
    }
    [[nodiscard]] Status trid_barrier(uint32_t trid, Deadline d,
                                      const uint32_t* termination_word = nullptr) const {
        if (trid > noc::kMaxTransactionId) {
            return Status::BadArg;
        }
        return wait_until([this, trid] { return trid_flushed(trid); }, d, termination_word);
    }
    [[nodiscard]] Status full_barrier(Deadline d,
                                      const uint32_t* termination_word = nullptr) const {
        return wait_until(
            [this] {
                return nonposted_writes_flushed() && posted_writes_sent() && reads_flushed() &&
                       atomics_flushed() && posted_atomics_sent();
            },
            d, termination_word);
    }

    // Zero the per-transaction-ID outstanding counters selected by `mask` (bit i = ID i). Needed
    // after non-posted multicast or when responses went to another NIU.
    [[nodiscard]] Status clear_trid_counters(uint32_t mask) const {
        if ((mask >> noc::kNumTransactionIds) != 0) {
            return Status::BadArg;
        }
        mmio::write32(noc::niu_base(noc_) + A.noc.clear_outstanding_req_cnt, mask);
        return Status::Ok;
    }

    // Raw NIU counter `index` (noc::status::k*).
    [[nodiscard]] uint32_t hw_counter(uint32_t index) const {
        return mmio::read32(status_base_ + 4 * index);  // == noc::status_addr(noc_, index)
    }

  private:
    enum class Kind : uint8_t { Read, NonpostedWrite, PostedWrite, NonpostedAtomic, PostedAtomic };

    // Everything one request writes, in the order it is written.
    struct Request {
        uint32_t base;  // command buffer base address
        noc::AddrRegs targ;
        noc::AddrRegs ret;
        bool has_ret;
        uint32_t tag;
        uint32_t ctrl;
        uint32_t at_len_be;
        uint32_t at_data;
        bool has_at_data;
    };

    [[gnu::always_inline]] uint32_t self_coord() const { return self_coord_; }

    [[gnu::always_inline]] bool local_range_ok(uint32_t addr, uint32_t size) const {
        return static_cast<uint64_t>(addr) + size <= A.eth_l1_size;
    }

    Status check_prepared_buf(uint32_t cmd_buf) const {
        if (!initialized_) {
            return Status::NotInitialized;
        }
        return cmd_buf < noc::kNumCmdBufs && (cfg_.prepared_bufs >> cmd_buf & 1) != 0
                   ? Status::Ok
                   : Status::BadArg;
    }

    [[gnu::always_inline]] Status check_common(uint32_t vc, uint32_t vc_max, uint32_t trid) const {
        if (!initialized_) {
            return Status::NotInitialized;
        }
        if (vc > vc_max || trid > noc::kMaxTransactionId) {
            return Status::BadArg;
        }
        return Status::Ok;
    }

    // An L1 <-> remote transfer of `size` bytes between local L1 `local` and remote `remote`.
    // The argument checks of an inline write (write_inline and word streams). Inline
    // writes to L1 can hang on arches that flag it (Blackhole, BH-86): refused there.
    [[gnu::always_inline]] Status check_inline(const NocAddr& dst,
                                               const NocInlineWriteOpts& o) const {
        HAL_TRY(check_common(o.vc, noc::kVcUnicastMax, o.trid));
        if (o.byte_enable == 0 || o.byte_enable > 0xF) {
            return Status::BadArg;
        }
        if (!noc::addr_ok(dst)) {
            return Status::OutOfRange;
        }
        if (dst.addr % 4 != 0) {
            return Status::Misaligned;
        }
        if (A.noc.inline_to_l1_unsafe && dst.addr < noc::kMmioStart) {
            return Status::Unsupported;
        }
        return Status::Ok;
    }

    [[gnu::always_inline]] Status check_transfer(uint32_t local, uint64_t remote,
                                                 uint32_t size) const {
        if (size == 0) {
            return Status::BadArg;
        }
        if (!local_range_ok(local, size) || remote + size > noc::kLocalAddrLimit) {
            return Status::OutOfRange;
        }
        if ((local ^ static_cast<uint32_t>(remote)) % noc::kL1Alignment != 0) {
            return Status::Misaligned;
        }
        return Status::Ok;
    }

    // A request that fits one burst (the common case) is issued inline; longer ones are split
    // out of line, so the fast path keeps few registers live.
    template <typename F>
    [[gnu::always_inline]] Status for_each_chunk(uint32_t size, F&& issue_chunk) {
        if (size <= A.noc_max_burst_bytes) [[likely]] {
            return issue_chunk(0, size);
        }
        return for_each_chunk_split(size, issue_chunk);
    }
    template <typename F>
    [[gnu::noinline]] Status for_each_chunk_split(uint32_t size, F issue_chunk) {
        for (uint32_t off = 0; off < size; off += A.noc_max_burst_bytes) {
            const uint32_t left = size - off;
            HAL_TRY(issue_chunk(off, left < A.noc_max_burst_bytes ? left : A.noc_max_burst_bytes));
        }
        return Status::Ok;
    }

    [[gnu::always_inline]] static bool cmd_buf_ready(uint32_t base) {
        return (mmio::read32(base + A.noc.cmd_ctrl) & noc::kCmdCtrlSend) == noc::kCmdCtrlReady;
    }

    // A command buffer may only be reprogrammed once NOC_CMD_CTRL reads ready again. The clock is
    // read only when the buffer is busy. Both are inlined: an out-of-line wait would make the
    // caller keep the request in callee-saved registers (saved and restored on every request) or
    // reload it after the wait, which slows back-to-back bursts.
    [[gnu::always_inline]] static Status wait_cmd_buf_ready(uint32_t base) {
        if (cmd_buf_ready(base)) [[likely]] {
            return Status::Ok;
        }
        return wait_cmd_buf_busy(base);
    }
    [[gnu::always_inline]] static Status wait_cmd_buf_busy(uint32_t base) {
        return wait_cmd_buf_until(base, Deadline::after_us(A, timeouts::kNocCmdBufReadyUs));
    }
    [[gnu::always_inline]] static Status wait_cmd_buf_until(uint32_t base, Deadline deadline) {
        return wait_until_inline([base] { return cmd_buf_ready(base); }, deadline);
    }

    [[gnu::always_inline]] void write_addr(uint32_t reg_lo, const noc::AddrRegs& a) const {
        mmio::write32(reg_lo, a.lo);
        mmio::write32(reg_lo + (noc::kTargAddrMid - noc::kTargAddrLo), a.mid);
        if (A.noc.coord_reg == NocCoordReg::Hi) {
            mmio::write32(reg_lo + (noc::kTargAddrHi - noc::kTargAddrLo), a.hi);
        }
    }

    // An atomic increment (atomic_inc) on the command buffer at `base`.
    [[gnu::always_inline]] Status atomic_request(uint32_t base, const NocAddr& dst_arg,
                                                 uint32_t incr, const NocAtomicOpts& o_arg) {
        const NocAddr dst = dst_arg;
        const NocAtomicOpts o = o_arg;
        HAL_TRY(check_common(o.vc, noc::kVcUnicastMax, o.trid));
        if (o.wrap > noc::kAtWrap32) {
            return Status::BadArg;
        }
        if (!o.posted && cfg_.atomic_return_l1_addr == kNoL1Addr) {
            return Status::BadArg;
        }
        if (!noc::addr_ok(dst)) {
            return Status::OutOfRange;
        }
        if (dst.addr % 4 != 0) {
            return Status::Misaligned;
        }
        if (dst.addr >= noc::kMmioStart) {
            return Status::Unsupported;  // atomics only operate on L1
        }
        Request r{};
        r.base = base;
        r.targ = noc::encode_addr(A, dst.addr, noc::unicast_coord(dst.x, dst.y));
        if (!o.posted) {
            r.ret = noc::encode_addr(A, cfg_.atomic_return_l1_addr, self_coord());
            r.has_ret = true;
        }
        r.tag = noc::packet_tag(o.trid);
        r.ctrl =
            noc::kCtrlCmdAtomic | noc::static_vc(o.vc) | (o.posted ? 0u : noc::kCtrlRespMarked);
        r.at_len_be = noc::atomic_incr_len_be(dst.addr, o.wrap);
        r.at_data = incr;
        r.has_at_data = true;
        return issue(r, o.posted ? Kind::PostedAtomic : Kind::NonpostedAtomic, 1);
    }

    // Program a whole request and launch it. Everything it calls is inlined (the bounded wait
    // too), so a request makes no call and the caller saves few registers.
    [[gnu::always_inline]] Status issue(const Request& r, Kind kind, uint32_t acks) {
        const uint32_t base = r.base;
        HAL_TRY(wait_cmd_buf_ready(base));
        write_addr(base + noc::kTargAddrLo, r.targ);
        if (r.has_ret) {
            write_addr(base + noc::kRetAddrLo, r.ret);
        }
        mmio::write32(base + noc::kPacketTag, r.tag);
        mmio::write32(base + noc::kCtrl, r.ctrl);
        mmio::write32(base + noc::kAtLenBe, r.at_len_be);
        if (r.has_at_data) {
            mmio::write32(base + A.noc.at_data, r.at_data);
        }
        return launch(base, kind, acks);
    }

    // Launch a request (fire: write NOC_CMD_CTRL) and count it, for full (issue) and prepared
    // requests alike, so counts and hardware cannot drift apart; only a Batch fires and counts
    // apart (its requests all at once, when it ends). The caller has waited for the buffer and
    // written its registers.
    [[gnu::always_inline]] Status launch(uint32_t base, Kind kind, uint32_t acks) {
        fire(base);
        return count(kind, 1, acks);
    }
    [[gnu::always_inline]] void fire(uint32_t base) {
        mmio::write32(base + A.noc.cmd_ctrl, noc::kCmdCtrlSend);
        last_base_ = base;
    }
    [[gnu::always_inline]] Status count(Kind kind, uint32_t n, uint32_t acks) {
        switch (kind) {
            case Kind::Read:
                counters_.rd_req_issued += n;
                break;
            case Kind::NonpostedWrite:
                counters_.nonposted_wr_req_issued += n;
                counters_.wr_ack_expected += acks;
                break;
            case Kind::PostedWrite:
                counters_.posted_wr_req_issued += n;
                break;
            case Kind::NonpostedAtomic:
                counters_.atomic_resp_expected += n;
                break;
            case Kind::PostedAtomic:
                counters_.posted_atomic_issued += n;
                break;
            default:
                return Status::BadArg;  // unreachable: every Kind is handled above
        }
        return Status::Ok;
    }

    // Per-ID counters are bumped when NOC_CMD_CTRL is written; reading NOC_CMD_CTRL back first
    // keeps the counter read from being ordered before that write (ISA doc, NIU counters).
    [[gnu::always_inline]] bool trid_counter_zero(uint32_t index) const {
        (void)mmio::read32(last_base_ + A.noc.cmd_ctrl);
        return hw_counter(index) == 0;
    }

    uint32_t noc_;
    NocConfig cfg_;
    bool initialized_ = false;
    uint32_t last_base_;    // base of the command buffer used last (initially buffer 0)
    uint32_t status_base_;  // noc::status_addr(noc_, 0), so a counter read is one add
    NocXY self_{0, 0};
    uint32_t self_coord_ = 0;  // unicast_coord(self_), set by init()
    struct {
        uint32_t write, read, write_reg, atomic;
    } base_{0, 0, 0, 0};  // command buffer base addresses, set by init()
    NocCounters counters_{0, 0, 0, 0, 0, 0};
    // Per command buffer: the token of the prepared request whose constants it holds (0: none).
    uint32_t programmed_[noc::kNumCmdBufs] = {};
    uint32_t owned_ = 0;  // bit i: buffer i belongs to a stream with owns_buffer
    uint32_t next_token_ = 0;
};

}  // namespace hal
