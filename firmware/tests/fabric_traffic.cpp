// Worker traffic through the 1D fabric: open a connection to a router's ch0 (worker adapter),
// send packet_count packets of one NoC send type round-robin to up to kFabricMaxDests destinations,
// close. What lands where is fixed by protocol::FabricDest, so the host checks every byte and
// counter. Every wait is bounded (timeout_us) and escapes on the mailbox's termination word: a
// kernel whose router stops returns Stuck with the adapter's status, never hangs. Packets of one
// slot or less of every type but ScatterWrite go through the adapter's stream (one prepared header
// per destination, ~3x cheaper a packet than the general sends); the rest through the general
// sends.
#include <stdint.h>

#include "common/kernel.h"
#include "fabric/worker_adapter.h"
#include "hal/noc.h"

namespace {

namespace pf = protocol::fabric;
using protocol::FabricDest;
using protocol::FabricTrafficArgs;
using protocol::FabricTrafficResults;
using protocol::FabricTrafficStep;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;

FabricTrafficResults r{};

uint32_t src_of(const FabricTrafficArgs& a, uint32_t dest, uint32_t pos) {
    return a.src_addr + (dest * a.dest_slots + pos) * a.packet_bytes;
}

bool payload_type(pf::NocSendType t) {
    return t == pf::NocSendType::UnicastWrite || t == pf::NocSendType::FusedWriteAtomicInc ||
           t == pf::NocSendType::ScatterWrite;
}

// A packet carrying `seq` to destination `dest`, into its position p (< dest_slots).
hal::Status send_one(fabric::FabricConnection& conn, const FabricTrafficArgs& a,
                     const FabricDest& d, uint32_t dest, uint32_t p, uint32_t seq,
                     const uint32_t* term) {
    const hal::Deadline dl = fwtest::deadline_us(a.timeout_us);
    const bool flush = (a.flags & protocol::kFabricFlush) != 0;
    const pf::NocTarget dst{d.addr + p * a.packet_bytes, static_cast<uint8_t>(d.x),
                            static_cast<uint8_t>(d.y), 0};
    const pf::NocTarget sem{d.sem_addr, static_cast<uint8_t>(d.sem_x),
                            static_cast<uint8_t>(d.sem_y), 0};
    const pf::Route route{d.route, d.route_ext, d.flags_word, d.dst_node};
    switch (static_cast<pf::NocSendType>(a.send_type)) {
        case pf::NocSendType::UnicastWrite:
            return conn.unicast_write(route, dst, src_of(a, dest, p), a.packet_bytes, dl, term,
                                      seq);
        case pf::NocSendType::InlineWrite: {
            const pf::NocTarget t{d.addr + 4 * p, dst.x, dst.y, 0};
            return conn.inline_write(route, t, protocol::pattern_word(d.seed, p), dl, term, seq);
        }
        case pf::NocSendType::AtomicInc: {
            const pf::NocTarget t{d.addr, dst.x, dst.y, 0};
            return conn.atomic_inc(route, t, 1, flush, dl, term, seq);
        }
        case pf::NocSendType::FusedWriteAtomicInc:
            return conn.fused_write_atomic_inc(route, dst, sem, 1, flush, src_of(a, dest, p),
                                               a.packet_bytes, dl, term, seq);
        case pf::NocSendType::ScatterWrite: {
            pf::NocTarget dsts[pf::kScatterMaxChunks];
            uint16_t sizes[pf::kScatterMaxChunks - 1];
            const uint32_t cb = a.packet_bytes / a.scatter_chunks / 16 * 16;
            for (uint32_t j = 0; j < a.scatter_chunks; ++j) {
                dsts[j] = dst;
                dsts[j].addr += j * a.scatter_gap + j * cb;
                if (j + 1 < a.scatter_chunks) sizes[j] = static_cast<uint16_t>(cb);
            }
            return conn.scatter_write(route, dsts, sizes, a.scatter_chunks, src_of(a, dest, p),
                                      a.packet_bytes, dl, term, seq);
        }
        default:
            return hal::Status::BadArg;
    }
}

using Conn = fabric::FabricConnection;

FabricDest load_dest(const FabricTrafficArgs& a, uint32_t i) {
    FabricDest d;
    fwtest::load_words(d, a.dests_addr + i * sizeof(FabricDest));
    return d;
}

// The general sends, one call per packet (any type and size).
[[gnu::noinline]] hal::Status send_general(Conn& conn, const FabricTrafficArgs& a,
                                           fwtest::Kernel& k, uint32_t& at) {
    FabricDest dests[protocol::kFabricMaxDests];
    for (uint32_t i = 0; i < a.num_dests; ++i) dests[i] = load_dest(a, i);
    // Destination d = i % num_dests and its position (i / num_dests) % dest_slots, counted
    // without divisions (16 cycles each on this core, several times the cost of a push's checks).
    uint32_t pos[protocol::kFabricMaxDests] = {};
    uint32_t d = 0;
    uint32_t round = 0;  // each destination's packet index (FabricDest: seq = seq_base + index)
    for (uint32_t i = 0; i < a.packet_count; ++i) {
        at = i;
        HAL_TRY(send_one(conn, a, dests[d], d, pos[d], dests[d].seq_base + round, k.term()));
        if (++pos[d] == a.dest_slots) pos[d] = 0;
        if (++d == a.num_dests) {
            d = 0;
            ++round;
        }
        if ((i & 63) == 0) {
            r.packets_sent = i + 1;
            k.publish_word(r, r.packets_sent);
            k.beat();
        }
    }
    return hal::Status::Ok;
}

// The stream path: every type but ScatterWrite (its chunk targets all move), packets that fit
// one slot (the general sends split larger ones).
bool streamable(const FabricTrafficArgs& a, uint32_t payload_bytes) {
    const auto t = static_cast<pf::NocSendType>(a.send_type);
    return t != pf::NocSendType::ScatterWrite &&
           (!payload_type(t) || a.packet_bytes <= payload_bytes);
}

// The stream templates, 64 B each, in L1 where the NoC reads them. In .data, not .bss: crt0
// zeroes .bss a word at a time (1 KiB: ~1300 cycles of start-up), .data comes with the image.
[[gnu::section(".data")]] alignas(16) pf::PacketHeader templates[protocol::kFabricMaxDests];

// Per destination: its prepared header and where its position 0 is. Round-robin sends every
// destination the same position in a round, so the loop walks one position (with adds, no
// multiplication per packet) for all of them.
struct Cursor {
    Conn::Template t;
    uint32_t dst0, src0;  // position 0's destination address and source
    uint32_t seed;        // InlineWrite: the value at position p is pattern_word(seed, p)
    uint32_t seq_base;    // the seq of its packet 0 (its packet k carries seq_base + k)
};

hal::Status prepare(Conn& conn, const FabricTrafficArgs& a, uint32_t dest, Cursor& c,
                    const Conn::Bound& b) {
    const FabricDest d = load_dest(a, dest);
    const bool flush = (a.flags & protocol::kFabricFlush) != 0;
    const pf::NocTarget dst{d.addr, static_cast<uint8_t>(d.x), static_cast<uint8_t>(d.y), 0};
    const pf::NocTarget sem{d.sem_addr, static_cast<uint8_t>(d.sem_x),
                            static_cast<uint8_t>(d.sem_y), 0};
    const pf::Route route{d.route, d.route_ext, d.flags_word, d.dst_node};
    const auto l1 = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&templates[dest]));
    c.dst0 = d.addr;
    c.src0 = payload_type(static_cast<pf::NocSendType>(a.send_type)) ? src_of(a, dest, 0) : 0;
    c.seed = d.seed;
    c.seq_base = d.seq_base;
    switch (static_cast<pf::NocSendType>(a.send_type)) {
        case pf::NocSendType::UnicastWrite:
            return conn.prepare_unicast_write(c.t, l1, route, dst, a.packet_bytes, b);
        case pf::NocSendType::InlineWrite:
            return conn.prepare_inline_write(c.t, l1, route, dst, protocol::pattern_word(d.seed, 0),
                                             b);
        case pf::NocSendType::AtomicInc:
            return conn.prepare_atomic_inc(c.t, l1, route, dst, 1, flush, b);
        case pf::NocSendType::FusedWriteAtomicInc:
            return conn.prepare_fused_write_atomic_inc(c.t, l1, route, dst, sem, 1, flush,
                                                       a.packet_bytes, b);
        default:
            return hal::Status::BadArg;
    }
}

// The stream loop, one instantiation per kind of send (fewer values live in the loop).
template <bool kInline>
[[gnu::noinline]] hal::Status stream_loop(Conn& conn, const FabricTrafficArgs& a, fwtest::Kernel& k,
                                          Cursor* cur, const Conn::Bound& bound, uint32_t& at) {
    // What moves from one position to the next (FabricDest's table in test_kernels.h): source
    // and destination by the same step (an inline write's destination by 4, and no source).
    const uint32_t step = kInline                                                   ? 4
                          : payload_type(static_cast<pf::NocSendType>(a.send_type)) ? a.packet_bytes
                                                                                    : 0;
    const uint32_t wrap = a.dest_slots * step;  // the offset of position dest_slots: back to 0
    Cursor* c = cur;
    Cursor* const end = cur + a.num_dests;
    const uint32_t count = a.packet_count;  // a copy: `a` would be loaded again after each store
    uint32_t off = 0;                       // this round's position's offset
    uint32_t round = 0;                     // each destination's packet index in this round
    Conn::Sender snd(conn);                 // the connection's counters in registers for the loop
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t seq = c->seq_base + round;
        const hal::Status s =
            kInline ? snd.send_inline(c->t, c->dst0 + off, protocol::pattern_word(c->seed, off / 4),
                                      seq, bound)
                    : snd.send(c->t, c->src0 + off, c->dst0 + off, seq, bound);
        if (s != hal::Status::Ok) [[unlikely]] {
            at = i;
            return s;
        }
        if (++c == end) {  // the round is done: the next position
            c = cur;
            ++round;
            off += step;
            if (off == wrap) off = 0;
        }
        if ((i & 63) == 0) {
            r.packets_sent = i + 1;
            k.publish_word(r, r.packets_sent);
            k.beat();
        }
    }
    return hal::Status::Ok;
}

[[gnu::noinline]] hal::Status send_streamed(Conn& conn, const FabricTrafficArgs& a,
                                            fwtest::Kernel& k, uint32_t& at) {
    const Conn::Bound bound{a.timeout_us, k.term()};
    Cursor cur[protocol::kFabricMaxDests];
    at = 0;
    for (uint32_t i = 0; i < a.num_dests; ++i) HAL_TRY(prepare(conn, a, i, cur[i], bound));
    HAL_TRY(static_cast<pf::NocSendType>(a.send_type) == pf::NocSendType::InlineWrite
                ? stream_loop<true>(conn, a, k, cur, bound, at)
                : stream_loop<false>(conn, a, k, cur, bound, at));
    // Sends return before the NoC has read their payload: wait for the last ones (and the
    // templates), so the kernel may exit or reuse its L1.
    at = a.packet_count;
    return conn.wait_sent(fwtest::deadline_us(a.timeout_us), k.term());
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) return k.exit_code();
    const FabricTrafficArgs a = k.args<FabricTrafficArgs>();
    const auto type = static_cast<pf::NocSendType>(a.send_type);
    const bool payload =
        a.send_type < static_cast<uint32_t>(pf::NocSendType::kCount) && payload_type(type);
    if (a.num_dests == 0 || a.num_dests > protocol::kFabricMaxDests || a.dest_slots == 0 ||
        a.timeout_us == 0 || a.send_type >= static_cast<uint32_t>(pf::NocSendType::kCount) ||
        a.conn_l1 % 16 != 0 ||
        (payload && (a.packet_bytes == 0 || a.packet_bytes % 16 != 0 || a.src_addr % 16 != 0)) ||
        (type == pf::NocSendType::ScatterWrite &&
         (a.scatter_chunks < 2 || a.scatter_chunks > pf::kScatterMaxChunks ||
          a.packet_bytes / a.scatter_chunks < 16))) {
        return k.fail(r, TestFail::BadArgs, FabricTrafficStep::Args);
    }
    if (payload) {
        for (uint32_t d = 0; d < a.num_dests; ++d) {
            const uint32_t seed = load_dest(a, d).seed;
            for (uint32_t p = 0; p < a.dest_slots; ++p)
                fwtest::fill_pattern(src_of(a, d, p), a.packet_bytes, seed + p);
        }
    }
    Noc noc{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, FabricTrafficStep::Init, 0);
    fabric::FabricConnection conn(
        noc, a.channel,
        {protocol::fabric_conn_credit(a.conn_l1), protocol::fabric_conn_teardown(a.conn_l1),
         protocol::fabric_conn_staging(a.conn_l1)});
    if (a.start_addr != 0) {
        const hal::Status s = hal::wait_until([&] { return fwtest::load32(a.start_addr) != 0; },
                                              fwtest::deadline_us(a.timeout_us), k.term());
        if (s != hal::Status::Ok)
            return k.stuck(r, protocol::kFabricStuckStart, FabricTrafficStep::Start, s);
    }
    const uint32_t t0 = fwtest::wall32();
    hal::Status s = conn.open(fwtest::deadline_us(a.timeout_us), k.term());
    r.last_status = static_cast<uint32_t>(s);
    if (s != hal::Status::Ok)
        return k.stuck(r, protocol::kFabricStuckOpen, FabricTrafficStep::Open, s);
    uint32_t at = 0;  // the packet a failed send was for
    s = streamable(a, conn.payload_bytes()) ? send_streamed(conn, a, k, at)
                                            : send_general(conn, a, k, at);
    r.last_status = static_cast<uint32_t>(s);
    if (s != hal::Status::Ok) {
        r.packets_sent = at;
        k.publish(r);
        return k.stuck(r, protocol::kFabricStuckSend, FabricTrafficStep::Send, s, at);
    }
    r.packets_sent = a.packet_count;
    r.cycles = fwtest::wall32() - t0;
    if ((a.flags & protocol::kFabricNoClose) == 0) {
        const uint32_t t1 = fwtest::wall32();
        s = conn.close(fwtest::deadline_us(a.timeout_us), k.term());
        r.last_status = static_cast<uint32_t>(s);
        if (s != hal::Status::Ok)
            return k.stuck(r, protocol::kFabricStuckClose, FabricTrafficStep::Close, s);
        r.close_cycles = fwtest::wall32() - t1;
    }
    return k.pass(r);
}
