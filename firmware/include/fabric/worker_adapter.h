// Worker side of the 1D fabric (protocol/fabric.h): a connection to a router's worker channel
// (ch0) and the send calls for every NoC send type. Header-only, for worker kernels.
//
//   hal::Noc<hal::kArch> noc{hal::NocId::Noc0};          // init()ed by the kernel
//   fabric::FabricConnection conn(noc, channel, {.credit = a, .teardown = b, .staging = c});
//   HAL_TRY(conn.open(deadline, term));
//   HAL_TRY(conn.unicast_write(pf::route_unicast(3), {dst_addr, x, y}, src_l1, bytes, deadline,
//   term)); HAL_TRY(conn.close(deadline, term));
//
// Many packets of one shape (a kernel's send loop): a stream, its header prepared once per
// destination in the caller's L1 (see "streams" below), ~3x cheaper a packet:
//   fabric::FabricConnection::Template t;
//   const fabric::FabricConnection::Bound b{timeout_us, term};
//   HAL_TRY(conn.prepare_unicast_write(t, header_l1, route, {dst_addr, x, y}, bytes, b));
//   {
//       fabric::FabricConnection::Sender s(conn);  // the loop's counters in registers
//       for (...) HAL_TRY(s.send(t, src_l1, dst_addr + i * bytes, seq, b));
//   }
//   HAL_TRY(conn.wait_sent(deadline, term));  // before changing the last sources
//
// Multicast: every send takes a route; pass pf::route_multicast(start, range) to deliver on
// `range` consecutive chips starting `start` hops away (each chip writes the same NocTarget).
//
// The line API, one kernel for every topology (seeds/000 §4): the route comes from the endpoint
// the connection opened, which publishes its line (protocol/fabric.h LineInfo), so the same
// kernel sends along a 1D line or ring and, on a 2D fabric, along the row or column of the mesh
// its router's link points into (round the wrap link where that dimension is a ring):
//   const hal::Result<pf::Route> r = conn.line_unicast(hops);  // or line_multicast(start, range)
//   if (!r.ok()) return r.status;  // BadArg: 0 hops; OutOfRange: past the line's end;
//                                  // Unsupported: no line here (or not open)
//   HAL_TRY(conn.unicast_write(r.value, {dst_addr, x, y}, src_l1, bytes, deadline, term));
//
// Pushing a packet (one ch0 slot): NoC-write the payload to slot + 64, the header to the slot,
// then an inline write of +1 to the router's pushed stream, all on the same NoC and VC so the
// increment lands after the data. A slot may be used while pushed - freed < num_slots; the router
// writes its free-running `freed` count into our credit word. Every call but a stream's send()
// returns once the NoC has read the caller's source buffer (it may be reused at once); a stream
// send() returns once the previous one's has been read. Nothing spins without a deadline: every
// wait takes one (streams: a timeout, made a deadline when a wait begins) and escapes on the
// termination word.
// A push is short on purpose: the credit word is read only when the last value seen says the
// channel is full, the staging header in L1 is rewritten only in the words that changed, and the
// slot position is a cursor (no division).
//
// Words in worker L1 the connection owns (FabricConnection::L1):
//   credit    4 B   the router's freed counter lands here
//   teardown  4 B   the router writes 1 here when it has accepted our close
//   staging  160 B  16-B aligned: the packet header (64 B) and the words written into the router's
//                   connection block (one 16-B line each, so each write is source/destination
//                   congruent mod 16, as NoC writes require; inline writes to L1 are not safe on
//                   Blackhole, so none are used for L1)
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch.h"
#include "hal/clock.h"
#include "hal/mmio.h"
#include "hal/noc.h"
#include "hal/status.h"
#include "hal/stream.h"
#include "hal/wait.h"
#include "protocol/fabric.h"

namespace fabric {

namespace pf = protocol::fabric;

class FabricConnection {
  public:
    using Noc = hal::Noc<hal::kArch>;
    using Streams = hal::Streams<hal::kArch>;

    struct L1 {
        uint32_t credit;
        uint32_t teardown;
        uint32_t staging;  // kStagingBytes, 16-B aligned
    };
    static constexpr uint32_t kStagingBytes = 64 + 6 * 16;
    // The NoC transaction ID of everything this connection writes (to know when its sources have
    // been read); streams also use kOddTrid and kHeaderTrid (below).
    static constexpr uint32_t kTrid = 1;
    // The Noc a connection runs on must be made with this config: command buffers 2 and 3 are
    // reserved for the pushes' request streams (slot data, pushed-stream +1), so a push writes
    // only addresses, size and data; every other request of the core shares buffer 0. The streams
    // own their buffers: one connection per Noc (open() of a second says BadArg).
    static constexpr uint32_t kSlotCmdBuf = 2;
    static constexpr uint32_t kPushedCmdBuf = 3;
    static constexpr hal::NocConfig kNocConfig{
        .cmd_bufs = {.write = 0, .read = 0, .write_reg = 0, .atomic = 0},
        .prepared_bufs = 1u << kSlotCmdBuf | 1u << kPushedCmdBuf};
    using SlotWrite =
        hal::NocStream<hal::NocStreamShape{.cmd_buf = kSlotCmdBuf, .owns_buffer = true}>;
    using PushedInc = hal::NocStream<hal::NocStreamShape{
        .cmd_buf = kPushedCmdBuf, .word = true, .owns_buffer = true}>;

    FabricConnection(Noc& noc, const pf::WorkerChannel& ch, const L1& l1)
        : noc_(noc), ch_(ch), l1_(l1) {}

    bool is_open() const { return open_; }
    // The endpoint's line, as open() read it (reach 0 until then).
    const pf::LineInfo& line_info() const { return line_; }
    uint32_t pushed() const { return pushed_; }
    uint32_t payload_bytes() const { return ch_.payload_bytes; }

    // Wait (bounded) until the endpoint (router or mux) says ReadyForTraffic: its status word,
    // read over the NoC into our staging. A client started together with its endpoint calls this
    // before open(), which must not race the endpoint's reset of its connection blocks.
    [[nodiscard]] hal::Status wait_endpoint_ready(hal::Deadline d, const uint32_t* term) {
        if (l1_.staging % 16 != 0) return hal::Status::BadArg;
        const hal::NocAddr status = router(pf::endpoint_status_addr(hal::kArch));
        return hal::wait_until(
            [&] {
                return noc_.read(status, l1_.staging, 16) == hal::Status::Ok &&
                       noc_.read_barrier(d, term) == hal::Status::Ok &&
                       ld(l1_.staging) == static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic);
            },
            d, term);
    }

    // Connect: read the router's record of the last connection (pushed / freed counts), tell it
    // where we are and where our credit and teardown words are, then set state Open. Busy if
    // another worker holds the channel.
    [[nodiscard]] hal::Status open(hal::Deadline d, const uint32_t* term) {
        if (open_ || ch_.num_slots == 0 || l1_.staging % 16 != 0) return hal::Status::BadArg;
        // The pushed stream's update register, checked once here rather than on every push.
        const auto id = Streams::make_id(ch_.pushed_stream);
        if (!id.ok()) return id.status;
        pushed_reg_ = Streams::update_reg_addr(id.value);
        const uint32_t info = ch_.connection;
        // state, pushed, freed: each 16-B line read into the matching staging line.
        HAL_TRY(noc_.read(router(info + off(kState)), line(kState), 16));
        HAL_TRY(noc_.read(router(info + off(kPushed)), line(kPushed), 16));
        HAL_TRY(noc_.read(router(info + off(kFreed)), line(kFreed), 16));
        HAL_TRY(noc_.read_barrier(d, term));
        if (ld(line(kState)) != static_cast<uint32_t>(pf::ConnectionState::Closed)) {
            return hal::Status::Busy;
        }
        read_line_info();
        pushed_ = ld(line(kPushed));
        limit_ = pushed_;  // full until open_: a stream send's slow path says BadArg
        const uint32_t freed = ld(line(kFreed));
        st(l1_.credit, freed);
        st(l1_.teardown, 0);
        slot_addr_ = ch_.slots_base + pushed_ % ch_.num_slots * ch_.slot_bytes;
        reset_staged_header();
        const hal::NocXY me = noc_.self();
        HAL_TRY(write_info(kWorkerXy, (me.y << 16) | me.x));
        HAL_TRY(write_info(kCreditAddr, l1_.credit));
        HAL_TRY(write_info(kTeardownAddr, l1_.teardown));
        HAL_TRY(write_info(kState, static_cast<uint32_t>(pf::ConnectionState::Open)));
        HAL_TRY(sources_read(d, term));
        // Every push writes the same router core with the same options: its command buffers are
        // programmed once here, so a push writes only addresses, sizes and data.
        // The slot ring is checked here once, so a push writes its header and +1 unchecked.
        const uint64_t ring_end =
            uint64_t{ch_.slots_base} + uint64_t{ch_.num_slots} * ch_.slot_bytes;
        if (ch_.slot_bytes % 16 != 0 || ch_.slot_bytes > hal::kArch.noc_max_burst_bytes ||
            ch_.slot_bytes < sizeof(pf::PacketHeader) + ch_.payload_bytes ||
            ring_end > hal::noc::kLocalAddrLimit) {
            return hal::Status::BadArg;
        }
        slots_end_ = static_cast<uint32_t>(ring_end);
        HAL_TRY(noc_.check_region(header_l1(), ch_.slots_base, sizeof(pf::PacketHeader)));
        HAL_TRY(noc_.prepare({.dst = {ch_.router_x, ch_.router_y, 0}}, to_slot_));
        HAL_TRY(noc_.prepare({.dst = router(pushed_reg_)}, to_pushed_));
        open_ = true;
        read_credit();
        return hal::Status::Ok;
    }

    // Disconnect: hand our pushed count to the next opener, ask to close, wait (bounded) for the
    // router's teardown word. The connection is closed on our side whatever the outcome.
    [[nodiscard]] hal::Status close(hal::Deadline d, const uint32_t* term) {
        if (!open_) return hal::Status::BadArg;
        open_ = false;
        limit_ = pushed_;  // full: a stream send takes its slow path, which checks open_
        HAL_TRY(write_info(kPushed, pushed_));
        HAL_TRY(write_info(kState, static_cast<uint32_t>(pf::ConnectionState::CloseRequested)));
        HAL_TRY(hal::wait_until([this] { return ld(l1_.teardown) == 1; }, d, term));
        HAL_TRY(noc_.write_barrier(d, term));
        st(l1_.teardown, 0);
        return hal::Status::Ok;
    }

    // Slots free now (the router's credit word read once).
    uint32_t free_slots() const { return ch_.num_slots - (pushed_ - ld(l1_.credit)); }

    // A free slot now? Reads the credit word only when the last value seen says the channel is
    // full. Never waits. (False while closed.)
    bool has_free_slot() {
        if (pushed_ != limit_) return true;
        if (!open_) return false;
        read_credit();
        return pushed_ != limit_;
    }

    // For a mux: forward a packet as it lies in our L1 (header at `slot_l1`, payload right
    // behind it, `bytes` in all) into the next channel slot, then +1 on the pushed stream.
    // Busy, having done nothing, when no slot is free: the caller decides whether to wait. The
    // source may be reused once writes_sent() (the NoC has read it).
    [[nodiscard, gnu::flatten]] hal::Status try_forward(uint32_t slot_l1, uint32_t bytes) {
        if (!open_ || bytes < sizeof(pf::PacketHeader) || bytes > ch_.slot_bytes)
            return hal::Status::BadArg;
        if (!has_free_slot()) return hal::Status::Busy;
        HAL_TRY(noc_.check_region(slot_l1, slot_addr_, bytes));
        HAL_TRY(noc_.send(to_slot_, slot_l1, slot_addr_, bytes, kTrid));
        HAL_TRY(noc_.send(to_pushed_, kIncOne, kTrid));
        advance_slot();
        return hal::Status::Ok;
    }
    // Every write of this connection has been read out of our L1 (none waits).
    bool writes_sent() const { return noc_.trid_writes_sent(kTrid); }

    [[nodiscard]] hal::Status wait_for_free_slot(hal::Deadline d, const uint32_t* term) const {
        return hal::wait_until([this] { return free_slots() != 0; }, d, term);
    }

    // ---- the line API: a route along the endpoint's line, for any send below ----
    // To the chip `hops` away along the line.
    [[nodiscard]] hal::Result<pf::Route> line_unicast(uint32_t hops) const {
        return line_result(pf::line_unicast(line_, hops));
    }
    // To `range` consecutive chips, the first `start` hops away (each writes the same target).
    [[nodiscard]] hal::Result<pf::Route> line_multicast(uint32_t start, uint32_t range) const {
        return line_result(pf::line_multicast(line_, start, range));
    }

    // ---- sends (route: 1D pf::route_unicast(hops) or pf::route_multicast(start, range); 2D a
    // pf::Route from pf::mesh_route_xy / mesh_route_multicast, or the host's MeshPlan::send) ----

    // `bytes` from local `src_l1` to `dst` (16-B aligned, like src_l1); more than payload_bytes
    // goes as several packets to consecutive destination addresses.
    [[nodiscard]] hal::Status unicast_write(const pf::Route& route, const pf::NocTarget& dst,
                                            uint32_t src_l1, uint32_t bytes, hal::Deadline d,
                                            const uint32_t* term, uint32_t seq = 0) {
        if (bytes == 0 || ch_.payload_bytes == 0 || dst.addr % 16 != 0 || src_l1 % 16 != 0) {
            return hal::Status::BadArg;
        }
        for (uint32_t off = 0; off < bytes; off += ch_.payload_bytes) {
            Header u = header(pf::NocSendType::UnicastWrite, route, chunk(bytes, off), seq);
            pf::PacketHeader& h = u.h;
            h.cmd.write.dst = dst;
            h.cmd.write.dst.addr += off;
            HAL_TRY(push(u, kCmdWords[0], src_l1 + off, d, term));
        }
        return hal::Status::Ok;
    }

    // One 32-bit word to `dst` (4-B aligned).
    [[nodiscard]] hal::Status inline_write(const pf::Route& route, const pf::NocTarget& dst,
                                           uint32_t value, hal::Deadline d, const uint32_t* term,
                                           uint32_t seq = 0) {
        if (dst.addr % 4 != 0) return hal::Status::BadArg;
        Header u = header(pf::NocSendType::InlineWrite, route, 0, seq);
        pf::PacketHeader& h = u.h;
        h.cmd.inline_write.dst = dst;
        h.cmd.inline_write.value = value;
        return push(u, kCmdWords[1], 0, d, term);
    }

    // `*dst += value` on the destination chip; flush: after this router channel's earlier writes.
    [[nodiscard]] hal::Status atomic_inc(const pf::Route& route, const pf::NocTarget& dst,
                                         uint32_t value, bool flush, hal::Deadline d,
                                         const uint32_t* term, uint32_t seq = 0) {
        if (dst.addr % 4 != 0) return hal::Status::BadArg;
        Header u = header(pf::NocSendType::AtomicInc, route, 0, seq);
        pf::PacketHeader& h = u.h;
        h.cmd.atomic.dst = dst;
        h.cmd.atomic.value = value;
        h.cmd.atomic.flush = flush ? 1 : 0;
        return push(u, kCmdWords[2], 0, d, term);
    }

    // The payload to `dst`, then `*sem += value` (once the payload is flushed, when `flush`).
    // Split like unicast_write; every packet increments the semaphore.
    [[nodiscard]] hal::Status fused_write_atomic_inc(const pf::Route& route,
                                                     const pf::NocTarget& dst,
                                                     const pf::NocTarget& sem, uint32_t value,
                                                     bool flush, uint32_t src_l1, uint32_t bytes,
                                                     hal::Deadline d, const uint32_t* term,
                                                     uint32_t seq = 0) {
        if (bytes == 0 || ch_.payload_bytes == 0 || dst.addr % 16 != 0 || src_l1 % 16 != 0 ||
            sem.addr % 4 != 0) {
            return hal::Status::BadArg;
        }
        for (uint32_t off = 0; off < bytes; off += ch_.payload_bytes) {
            Header u = header(pf::NocSendType::FusedWriteAtomicInc, route, chunk(bytes, off), seq);
            pf::PacketHeader& h = u.h;
            h.cmd.fused.dst = dst;
            h.cmd.fused.dst.addr += off;
            h.cmd.fused.sem = sem;
            h.cmd.fused.value = value;
            h.cmd.fused.flush = flush ? 1 : 0;
            HAL_TRY(push(u, kCmdWords[3], src_l1 + off, d, term));
        }
        return hal::Status::Ok;
    }

    // One packet: chunk i (chunk_bytes[i], multiples of 16; the last is the rest of `bytes`) of
    // the source to dsts[i]. 2..4 chunks, all in one payload.
    [[nodiscard]] hal::Status scatter_write(const pf::Route& route, const pf::NocTarget* dsts,
                                            const uint16_t* chunk_bytes, uint32_t chunks,
                                            uint32_t src_l1, uint32_t bytes, hal::Deadline d,
                                            const uint32_t* term, uint32_t seq = 0) {
        if (chunks < 2 || chunks > pf::kScatterMaxChunks || bytes > ch_.payload_bytes ||
            src_l1 % 16 != 0) {
            return hal::Status::BadArg;
        }
        Header u = header(pf::NocSendType::ScatterWrite, route, bytes, seq);
        pf::PacketHeader& h = u.h;
        uint32_t sum = 0;
        for (uint32_t i = 0; i < chunks; ++i) {
            if (dsts[i].addr % 16 != 0) return hal::Status::BadArg;
            h.cmd.scatter.dst[i] = dsts[i];
            if (i + 1 < chunks) {
                if (chunk_bytes[i] == 0 || chunk_bytes[i] % 16 != 0) return hal::Status::BadArg;
                h.cmd.scatter.chunk_bytes[i] = chunk_bytes[i];
                sum += chunk_bytes[i];
            }
        }
        if (sum >= bytes) return hal::Status::BadArg;
        h.cmd.scatter.chunk_count = static_cast<uint8_t>(chunks);
        return push(u, kCmdWords[4], src_l1, d, term);
    }

    // A prepared header pushed as is (tests: bad headers). payload_bytes of the header's bytes
    // come from src_l1.
    [[nodiscard]] hal::Status push_raw(const pf::PacketHeader& h, uint32_t src_l1, hal::Deadline d,
                                       const uint32_t* term) {
        if (h.payload_bytes > ch_.payload_bytes) return hal::Status::BadArg;  // past the slot
        Header u;
        u.h = h;
        raw_staged_ = true;  // every word may differ from a normal header: stage them all
        return push(u, kHdrWords, src_l1, d, term);
    }

    // ---- streams: many packets of one shape (a kernel's send loop) ----
    //
    // The sends above build, compare and stage a whole header per packet and return only once the
    // NoC has read the payload: ~440 worker cycles a packet, more than a router needs. A stream
    // does the header work once per destination: prepare_*() writes the header into a Template,
    // 64 B of L1 the caller owns (one per destination, so round-robin sends rewrite nothing when
    // they switch; a kernel's .bss is in L1). send() then only
    //   - checks the cached credit (the credit word is read only when it says full, the clock
    //     only when it really has to wait),
    //   - rewrites the template words that moved (destination address, seq; an inline write's
    //     value), after the NoC has read the template's previous header,
    //   - writes header, then payload into the slot and +1 on the pushed stream,
    //   - returns once the *previous* stream packet's payload has been read (lag one), so the
    //     NoC reads this one's payload while the kernel prepares the next packet.
    // A stream packet's source may be reused once the next send() has returned, or after
    // wait_sent(). Streams and the sends above may be mixed on one connection. No ScatterWrite
    // (its chunk targets all move per packet: use scatter_write()).
    //
    // Transaction IDs: headers kHeaderTrid; payload and +1 alternate kTrid / kOddTrid by push, so
    // send() can wait for the previous packet alone.
    static constexpr uint32_t kOddTrid = 3;
    static constexpr uint32_t kHeaderTrid = 4;

    struct Template {
        uint32_t l1 = 0;        // the header in L1, 16-B aligned (0: not prepared)
        uint32_t payload = 0;   // payload bytes per packet (0: inline write, atomic)
        uint32_t dst_addr = 0;  // what the L1 header holds now: word 0 (the first target's
        uint32_t value = 0;     // address), word 2 (an inline write's value) and seq
        uint32_t seq = 0;
    };
    // How long one stream call may wait (for a slot, for the NoC to read a header or payload),
    // and the word that ends a wait early. A deadline is computed only when a wait begins.
    struct Bound {
        uint32_t timeout_us;
        const uint32_t* term;
    };

    // Headers for a stream, arguments as in the sends above; `bytes` <= payload_bytes() (a
    // stream packet is never split). `l1`: 64 B, 16-B aligned, for this template only. Re-preparing
    // a template waits (bounded) until the NoC has read it.
    [[nodiscard]] hal::Status prepare_unicast_write(Template& t, uint32_t l1,
                                                    const pf::Route& route,
                                                    const pf::NocTarget& dst, uint32_t bytes,
                                                    const Bound& b) {
        if (bytes == 0) return hal::Status::BadArg;
        Header u = header(pf::NocSendType::UnicastWrite, route, bytes, 0);
        u.h.cmd.write.dst = dst;
        return prepare(t, l1, u, b);
    }
    [[nodiscard]] hal::Status prepare_inline_write(Template& t, uint32_t l1, const pf::Route& route,
                                                   const pf::NocTarget& dst, uint32_t value,
                                                   const Bound& b) {
        Header u = header(pf::NocSendType::InlineWrite, route, 0, 0);
        u.h.cmd.inline_write.dst = dst;
        u.h.cmd.inline_write.value = value;
        return prepare(t, l1, u, b);
    }
    [[nodiscard]] hal::Status prepare_atomic_inc(Template& t, uint32_t l1, const pf::Route& route,
                                                 const pf::NocTarget& dst, uint32_t value,
                                                 bool flush, const Bound& b) {
        Header u = header(pf::NocSendType::AtomicInc, route, 0, 0);
        u.h.cmd.atomic.dst = dst;
        u.h.cmd.atomic.value = value;
        u.h.cmd.atomic.flush = flush ? 1 : 0;
        return prepare(t, l1, u, b);
    }
    [[nodiscard]] hal::Status prepare_fused_write_atomic_inc(
        Template& t, uint32_t l1, const pf::Route& route, const pf::NocTarget& dst,
        const pf::NocTarget& sem, uint32_t value, bool flush, uint32_t bytes, const Bound& b) {
        if (bytes == 0 || sem.addr % 4 != 0) return hal::Status::BadArg;
        Header u = header(pf::NocSendType::FusedWriteAtomicInc, route, bytes, 0);
        u.h.cmd.fused.dst = dst;
        u.h.cmd.fused.sem = sem;
        u.h.cmd.fused.value = value;
        u.h.cmd.fused.flush = flush ? 1 : 0;
        return prepare(t, l1, u, b);
    }

    // One packet of `t` to `dst_addr` (its first target's address; aligned as the send type
    // needs) carrying `seq`, with t.payload bytes from `src_l1` (16-B aligned; 0 without a
    // payload). send_inline(): an inline write's value too. (A Sender for one call.)
    [[nodiscard, gnu::always_inline]] hal::Status send(Template& t, uint32_t src_l1,
                                                       uint32_t dst_addr, uint32_t seq,
                                                       const Bound& b) {
        Sender s(*this);
        return s.send(t, src_l1, dst_addr, seq, b);
    }
    [[nodiscard, gnu::always_inline]] hal::Status send_inline(Template& t, uint32_t dst_addr,
                                                              uint32_t value, uint32_t seq,
                                                              const Bound& b) {
        Sender s(*this);
        return s.send_inline(t, dst_addr, value, seq, b);
    }

    // A send loop's stream sends with the connection's counters in registers: a local object
    // (its fields never in memory: ~25 cycles a packet less than conn.send() in a loop) whose
    // send()/send_inline() are those above; it gives the counters back (and counts its NoC
    // requests) when it ends. While it lives, the connection is used through it only (no other
    // send, no close()), and nothing else on this Noc checks the request counts (write_barrier
    // etc.: a Noc::Batch).
    //   { FabricConnection::Sender s(conn); for (...) HAL_TRY(s.send(t, src, dst, seq, b)); }
    //   HAL_TRY(conn.wait_sent(deadline, term));
    class Sender {
      public:
        [[gnu::always_inline]] explicit Sender(FabricConnection& c)
            : c_(c),
              noc_(c.noc_),
              batch_(c.noc_),
              status_(c.noc_.status_base()),
              last_buf_(c.noc_.last_cmd_buf_base()),
              to_slot_(c.to_slot_),
              to_pushed_(c.to_pushed_),
              pushed_(c.pushed_),
              limit_(c.limit_),
              slot_(c.slot_addr_),
              slots_base_(c.ch_.slots_base),
              slots_end_(c.slots_end_),
              slot_bytes_(c.ch_.slot_bytes) {}
        // Inline, as everything here: a call taking `this` would put the Sender in memory.
        [[gnu::always_inline]] ~Sender() {
            c_.pushed_ = pushed_;
            c_.limit_ = limit_;
            c_.slot_addr_ = slot_;
        }
        Sender(const Sender&) = delete;
        Sender& operator=(const Sender&) = delete;

        [[nodiscard, gnu::always_inline]] hal::Status send(Template& t, uint32_t src_l1,
                                                           uint32_t dst_addr, uint32_t seq,
                                                           const Bound& b) {
            // The source fits L1 (t.payload <= payload_bytes < L1 size: the subtraction cannot
            // wrap).
            if ((src_l1 & 15) != 0 || src_l1 > hal::kArch.eth_l1_size - t.payload)
                return hal::Status::BadArg;
            return send_packet<false>(t, src_l1, dst_addr, 0, seq, b);
        }
        [[nodiscard, gnu::always_inline]] hal::Status send_inline(Template& t, uint32_t dst_addr,
                                                                  uint32_t value, uint32_t seq,
                                                                  const Bound& b) {
            if (t.payload != 0) return hal::Status::BadArg;
            return send_packet<true>(t, 0, dst_addr, value, seq, b);
        }

      private:
        // A stream packet (see Template). Everything here is inline in the caller's loop; the
        // waits (rare) are calls that do not take `this`, so the Sender stays in registers.
        template <bool kValue>
        [[gnu::always_inline]] hal::Status send_packet(Template& t, uint32_t src_l1,
                                                       uint32_t dst_addr, uint32_t value,
                                                       uint32_t seq, const Bound& b) {
            const uint32_t hdr = t.l1, payload = t.payload;
            if (hdr == 0 || (dst_addr & (payload != 0 ? 15 : 3)) != 0) return hal::Status::BadArg;
            const uint32_t pushed = pushed_;
            if (pushed == limit_) [[unlikely]] {  // closed too (limit_ == pushed_): BadArg there
                const hal::Result<uint32_t> l = wait_limit(c_, pushed, b);
                if (!l.ok()) return l.status;
                limit_ = l.value;
            }
            const uint32_t slot = slot_;
            const uint32_t next_slot = slot_after(slot, slot_bytes_, slots_base_, slots_end_);
            // Only the words that moved, once the NoC has read this template's last header (long
            // since: each header is written before its payload).
            if (dst_addr != t.dst_addr || seq != t.seq || (kValue && value != t.value)) {
                if (!Noc::trid_writes_sent_after(status_, last_buf_, kHeaderTrid)) {
                    HAL_TRY(c_.wait_trid_sent(kHeaderTrid, b));
                }
                if (dst_addr != t.dst_addr) {
                    t.dst_addr = dst_addr;
                    st(hdr, dst_addr);
                }
                if (kValue && value != t.value) {
                    t.value = value;
                    st(hdr + 8, value);
                }
                if (seq != t.seq) {
                    t.seq = seq;
                    st(hdr + 4 * kSeqWord, seq);
                }
            }
            const uint32_t trid = kTrid + (pushed & 1) * (kOddTrid - kTrid);  // no branch
            // Header first: the payload's write waits (command buffer) only for these 64 B, and
            // the +1 goes on the other buffer at once; all three on one VC, so they land in this
            // order. Non-posted, counted when the Sender ends.
            HAL_TRY(batch_.send(to_slot_, hdr, slot, sizeof(pf::PacketHeader), kHeaderTrid));
            if (payload != 0) [[likely]] {
                HAL_TRY(
                    batch_.send(to_slot_, src_l1, slot + sizeof(pf::PacketHeader), payload, trid));
            }
            HAL_TRY(batch_.send(to_pushed_, kIncOne, trid));
            pushed_ = pushed + 1;
            slot_ = next_slot;
            last_buf_ = to_pushed_.base;
            // Lag one: the previous packet (the other ID) has been read, so its source is free.
            const uint32_t prev = trid ^ (kTrid ^ kOddTrid);
            if (Noc::trid_writes_sent_after(status_, to_pushed_.base, prev)) return hal::Status::Ok;
            return c_.wait_trid_sent(prev, b);
        }

        FabricConnection& c_;
        Noc& noc_;
        Noc::Batch batch_;  // destroyed after the body of ~Sender: counts every request
        // The Noc's status block, and the command buffer written last (ours after a packet):
        // per-ID checks without loads from the Noc.
        const uint32_t status_;
        uint32_t last_buf_;
        const SlotWrite to_slot_;
        const PushedInc to_pushed_;
        uint32_t pushed_, limit_, slot_;
        const uint32_t slots_base_, slots_end_, slot_bytes_;
    };

    // Wait (bounded) until every write of this connection, streams included, has been read out
    // of our L1: every source and template may then be changed.
    [[nodiscard]] hal::Status wait_sent(hal::Deadline d, const uint32_t* term) const {
        return hal::wait_until([this] { return all_sent(); }, d, term);
    }

  private:
    // The connection block's fields, each a 16-B line (staging line i + 4 mirrors field i).
    enum Field : uint32_t { kState = 0, kWorkerXy, kCreditAddr, kTeardownAddr, kPushed, kFreed };
    static_assert(offsetof(pf::WorkerConnectionInfo, state) == 0 &&
                  offsetof(pf::WorkerConnectionInfo, worker_xy) == 16 &&
                  offsetof(pf::WorkerConnectionInfo, credit_addr) == 32 &&
                  offsetof(pf::WorkerConnectionInfo, teardown_addr) == 48 &&
                  offsetof(pf::WorkerConnectionInfo, pushed) == 64 &&
                  offsetof(pf::WorkerConnectionInfo, freed) == 80);
    static constexpr uint32_t off(Field f) { return 16 * f; }
    uint32_t line(Field f) const { return l1_.staging + 64 + 16 * f; }
    uint32_t header_l1() const { return l1_.staging; }

    static uint32_t ld(uint32_t a) {
        return hal::mmio::load_shared(hal::mmio::l1_ptr<const uint32_t>(a));
    }
    static void st(uint32_t a, uint32_t v) {
        hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(a), v);
    }

    // The endpoint's line, from the state's line in staging (open() read the whole 16 B).
    void read_line_info() {
        pf::LineInfoWords u{};
        const uint32_t at = line(kState) + offsetof(pf::WorkerConnectionInfo, line);
        for (uint32_t i = 0; i < sizeof(u.w) / 4; ++i) u.w[i] = ld(at + 4 * i);
        line_ = u.info;
    }
    static hal::Result<pf::Route> line_result(const pf::LineRoute& r) {
        switch (r.check) {
            case pf::LineCheck::Ok:
                return hal::make_result(r.route);
            case pf::LineCheck::NoHops:
                return hal::make_error<pf::Route>(hal::Status::BadArg);
            case pf::LineCheck::BeyondReach:
                return hal::make_error<pf::Route>(hal::Status::OutOfRange);
            case pf::LineCheck::NoLine:
                return hal::make_error<pf::Route>(hal::Status::Unsupported);
            default:
                return hal::make_error<pf::Route>(hal::Status::BadArg);
        }
    }

    hal::NocAddr router(uint32_t addr) const {
        return hal::NocAddr{ch_.router_x, ch_.router_y, addr};
    }

    uint32_t chunk(uint32_t bytes, uint32_t off) const {
        const uint32_t left = bytes - off;
        return left < ch_.payload_bytes ? left : ch_.payload_bytes;
    }

    // A header and its words. Built and copied word by word through the union (GCC defines
    // reading the other member): a struct memset/memcpy would be a call to picolibc's byte loop,
    // ~6 instructions per byte, several times per packet.
    union Header {
        pf::PacketHeader h;
        uint32_t w[sizeof(pf::PacketHeader) / 4];
    };

    // Words of a header: the NocCommand (10), then payload_bytes|send_type|src_channel, route,
    // magic|ttl|branch_hops, seq, route_ext, dst node. A normal header differs from the
    // last one staged only in its command words and words 10..15 (each stored only if changed).
    static constexpr uint32_t kHdrWords = sizeof(pf::PacketHeader) / 4;
    static constexpr uint32_t kMetaWord = offsetof(pf::PacketHeader, payload_bytes) / 4;
    static constexpr uint32_t kRouteWord = offsetof(pf::PacketHeader, route) / 4;
    static constexpr uint32_t kSeqWord = offsetof(pf::PacketHeader, seq) / 4;
    static constexpr uint32_t kMagicWord =
        offsetof(pf::PacketHeader, magic) / 4;  // + ttl, branch_hops
    static constexpr uint32_t kRouteExtWord = offsetof(pf::PacketHeader, route_ext) / 4;
    static constexpr uint32_t kDstNodeWord = offsetof(pf::PacketHeader, dst_mesh) / 4;
    static_assert(kMetaWord == 10 && kRouteWord == 11 && kMagicWord == 12 && kSeqWord == 13 &&
                  kRouteExtWord == 14 && kDstNodeWord == 15 && kHdrWords == 16);
    // NocCommand words each send type uses (by NocSendType): the rest of the command stays zero.
    static constexpr uint32_t kCmdWords[5] = {
        sizeof(pf::UnicastWriteCmd) / 4, sizeof(pf::InlineWriteCmd) / 4,
        sizeof(pf::AtomicIncCmd) / 4, sizeof(pf::FusedWriteAtomicIncCmd) / 4,
        sizeof(pf::ScatterWriteCmd) / 4};
    static_assert(sizeof(kCmdWords) / 4 == static_cast<uint32_t>(pf::NocSendType::kCount));

    static Header header(pf::NocSendType type, const pf::Route& route, uint32_t bytes,
                         uint32_t seq) {
        Header u;
        // Only this type's command words are staged: zero those (padding, unused chunks).
        const uint32_t n = kCmdWords[static_cast<uint32_t>(type)];
        for (uint32_t i = 0; i < n; ++i) u.w[i] = 0;
        u.w[kMetaWord] = 0;  // src_channel
        u.h.payload_bytes = static_cast<uint16_t>(bytes);
        u.h.send_type = static_cast<uint8_t>(type);
        u.w[kRouteWord] = route.hops;
        u.w[kMagicWord] = pf::kHeaderMagic | route.flags_word << 8;
        u.h.seq = seq;
        u.w[kRouteExtWord] = route.ext;
        u.w[kDstNodeWord] = route.dst_node;
        return u;
    }

    // The staging header in L1 and its copy here (local data RAM): a push stores only the words
    // that changed, as L1 stores are slow (one per 5 cycles) and most words repeat.
    void stage(uint32_t i, uint32_t v) {
        if (staged_[i] == v) return;
        staged_[i] = v;
        st(header_l1() + 4 * i, v);
    }
    void reset_staged_header() {
        Header u;
        for (uint32_t i = 0; i < kHdrWords; ++i) u.w[i] = 0;
        u.h.magic = pf::kHeaderMagic;
        for (uint32_t i = 0; i < kHdrWords; ++i) {
            staged_[i] = u.w[i];
            st(header_l1() + 4 * i, u.w[i]);
        }
        staged_cmd_words_ = 0;
        raw_staged_ = false;
    }
    void stage_header(const Header& u, uint32_t cmd_words) {
        if (cmd_words == kHdrWords) {  // push_raw: every word as given
            for (uint32_t i = 0; i < kHdrWords; ++i) stage(i, u.w[i]);
            staged_cmd_words_ = kMetaWord;
            return;
        }
        if (raw_staged_) {  // back from a raw header: fixed words and the whole command again
            reset_staged_header();
        }
        // This command's words, and zeros over what a longer earlier command left.
        const uint32_t n = cmd_words > staged_cmd_words_ ? cmd_words : staged_cmd_words_;
        for (uint32_t i = 0; i < n; ++i) stage(i, u.w[i]);
        staged_cmd_words_ = cmd_words;
        stage(kMetaWord, u.w[kMetaWord]);
        stage(kRouteWord, u.w[kRouteWord]);
        stage(kMagicWord, u.w[kMagicWord]);
        stage(kSeqWord, u.w[kSeqWord]);
        stage(kRouteExtWord, u.w[kRouteExtWord]);
        stage(kDstNodeWord, u.w[kDstNodeWord]);
    }

    // One word of the connection block, from its staging line (a NoC write, not inline: L1).
    hal::Status write_info(Field f, uint32_t value) {
        st(line(f), value);
        return noc_.write(line(f), router(ch_.connection + off(f)), 4, {.trid = kTrid});
    }

    // Every write of this connection has left (sources read): staging and payload reusable.
    hal::Status sources_read(hal::Deadline d, const uint32_t* term) const {
        if (noc_.trid_writes_sent(kTrid)) return hal::Status::Ok;
        return hal::wait_until([this] { return noc_.trid_writes_sent(kTrid); }, d, term);
    }

    // The fast path reads no L1 word and no clock while the last credit seen says a slot is free:
    // the credit word is re-read only when the cached one says the channel is full.
    // flatten: the NoC calls inline here, so their checks of constant options fold away and no
    // call saves and restores registers (a push is a few dozen instructions).
    [[gnu::flatten]] hal::Status push(const Header& u, uint32_t cmd_words, uint32_t src_l1,
                                      hal::Deadline d, const uint32_t* term) {
        if (!open_) return hal::Status::BadArg;
        if (pushed_ == limit_) {
            read_credit();
            if (pushed_ == limit_) {
                HAL_TRY(wait_for_free_slot(d, term));
                read_credit();
            }
        }
        const uint32_t slot = slot_addr_;
        if (u.h.payload_bytes != 0) {
            const uint32_t payload_slot = slot + sizeof(pf::PacketHeader);
            HAL_TRY(noc_.check_region(src_l1, payload_slot, u.h.payload_bytes));
            HAL_TRY(noc_.send(to_slot_, src_l1, payload_slot, u.h.payload_bytes, kTrid));
        }
        stage_header(u, cmd_words);  // the previous push returned once staging had been read
        // Header and +1: the ring and the staging line were checked by open().
        HAL_TRY(noc_.send(to_slot_, header_l1(), slot, sizeof(pf::PacketHeader), kTrid));
        HAL_TRY(noc_.send(to_pushed_, kIncOne, kTrid));
        advance_slot();
        return sources_read(d, term);
    }
    bool all_sent() const {
        return noc_.trid_writes_sent(kTrid) && noc_.trid_writes_sent(kOddTrid) &&
               noc_.trid_writes_sent(kHeaderTrid);
    }

    // A stream template: the whole header written once (the slot ring and payload size are
    // checked here, so send() issues its stream writes unchecked).
    hal::Status prepare(Template& t, uint32_t l1, const Header& u, const Bound& b) {
        const uint32_t payload = u.h.payload_bytes;
        const uint32_t align = payload != 0 ? 15 : 3;
        if (l1 == 0 || l1 % 16 != 0 || payload > ch_.payload_bytes || (u.w[0] & align) != 0) {
            return hal::Status::BadArg;
        }
        HAL_TRY(noc_.check_region(l1, ch_.slots_base, sizeof(pf::PacketHeader)));
        if (!noc_.trid_writes_sent(kHeaderTrid)) HAL_TRY(wait_trid_sent(kHeaderTrid, b));
        for (uint32_t i = 0; i < kHdrWords; ++i) st(l1 + 4 * i, u.w[i]);
        t = Template{.l1 = l1,
                     .payload = payload,
                     .dst_addr = u.w[0],
                     .value = u.w[2],
                     .seq = u.w[kSeqWord]};
        return hal::Status::Ok;
    }

    // The slow path of a stream send (a call that does not take the Sender, so it stays in
    // registers): the limit once a slot is free (bounded), BadArg when closed.
    [[gnu::noinline]] static hal::Result<uint32_t> wait_limit(const FabricConnection& c,
                                                              uint32_t pushed, const Bound& b) {
        if (!c.open_) return hal::make_error<uint32_t>(hal::Status::BadArg);
        uint32_t limit = c.limit_after(pushed);
        if (limit == pushed) {
            const hal::Status s =
                hal::wait_until([&] { return (limit = c.limit_after(pushed)) != pushed; },
                                hal::Deadline::after_us(hal::kArch, b.timeout_us), b.term);
            if (s != hal::Status::Ok) return hal::make_error<uint32_t>(s);
        }
        return hal::make_result(limit);
    }
    // limit_ from the router's credit word (its freed count): freed + num_slots. A freed count
    // ahead of pushed_ (only a broken router writes one) counts as full, like a full channel.
    void read_credit() { limit_ = limit_after(pushed_); }
    uint32_t limit_after(uint32_t pushed) const {
        const uint32_t in_use = pushed - ld(l1_.credit);
        return in_use < ch_.num_slots ? pushed + (ch_.num_slots - in_use) : pushed;
    }
    [[gnu::noinline]] hal::Status wait_trid_sent(uint32_t trid, const Bound& b) const {
        return hal::wait_until([this, trid] { return noc_.trid_writes_sent(trid); },
                               hal::Deadline::after_us(hal::kArch, b.timeout_us), b.term);
    }

    void advance_slot() {
        ++pushed_;
        slot_addr_ = slot_after(slot_addr_);
    }
    // The slot after `slot` in the router's ring (a cursor: no division).
    uint32_t slot_after(uint32_t slot) const {
        return slot_after(slot, ch_.slot_bytes, ch_.slots_base, slots_end_);
    }
    static uint32_t slot_after(uint32_t slot, uint32_t bytes, uint32_t base, uint32_t end) {
        slot += bytes;
        return slot == end ? base : slot;
    }
    static constexpr uint32_t kIncOne = Streams::encode_delta(1).value;
    static_assert(Streams::encode_delta(1).ok());

    Noc& noc_;
    pf::WorkerChannel ch_;
    L1 l1_;
    uint32_t pushed_ = 0;
    // The pushed count at which the channel is full: the router's freed count as last read from
    // the credit word + num_slots (one compare a push); pushed_ while closed.
    uint32_t limit_ = 0;
    uint32_t slot_addr_ = 0;   // the next push's slot in router L1 (a cursor: no division)
    uint32_t slots_end_ = 0;   // the end of the slot ring (set by open)
    uint32_t pushed_reg_ = 0;  // the router's pushed-stream update register
    SlotWrite to_slot_{};      // writes into the router's slots (set by open)
    PushedInc to_pushed_{};    // +1 on its pushed stream (set by open)
    uint32_t staged_[sizeof(pf::PacketHeader) / 4] = {};  // what the L1 staging header holds
    uint32_t staged_cmd_words_ = 0;                       // command words possibly non-zero there
    bool raw_staged_ = false;  // a push_raw header is staged (magic/reserved may differ)
    pf::LineInfo line_{};      // the endpoint's line (open() reads it)
    bool open_ = false;
};

}  // namespace fabric
