// One rank of a ring collective (protocol/ccl.h, protocol::CclRingArgs): an all-gather, a
// reduce-scatter or an all-reduce (the two, one after the other) of int32 elements; each phase is
// ranks - 1 steps each sending one chunk one hop along the router's line (the line API: the same
// ELF on a 1D ring and on a 2D ring row or column), through the router's worker channel or a
// mux's. The additions are done here, by the worker core. Every wait is bounded and escapes on the
// mailbox's termination word; a stuck rank names the wait and how many chunks had arrived.
#include <stdint.h>

#include "common/kernel.h"
#include "fabric/worker_adapter.h"
#include "hal/noc.h"
#include "protocol/ccl.h"

namespace {

using protocol::CclOp;
using protocol::CclRingArgs;
using protocol::CclRingResults;
using protocol::CclRingStep;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;
namespace pf = protocol::fabric;

CclRingResults r{};

// The all-gather's local copy of its input: a NoC write to this core on an ID the adapter leaves
// alone.
constexpr uint32_t kCopyTrid = 6;

bool args_ok(const CclRingArgs& a) {
    return a.op <= static_cast<uint32_t>(CclOp::AllReduce) && a.ranks >= 2 &&
           a.ranks <= protocol::kCclMaxRanks && a.rank < a.ranks && a.chunk_bytes != 0 &&
           a.chunk_bytes % 16 == 0 && a.input_addr % 16 == 0 && a.output_addr % 16 == 0 &&
           a.conn_l1 % 16 == 0 && a.counter_addr % 16 == 0 && a.timeout_us != 0 &&
           a.piece_bytes != 0 && a.piece_bytes % 16 == 0;
}

// One pass round the ring: where its chunks land and arrive counted, and whether each step adds
// our input chunk before it sends (reducing) or forwards what arrived (gathering).
struct Phase {
    bool reducing;
    uint32_t output;
    uint32_t counter;
    uint32_t piece;  // bytes a counted piece: reducing piece_bytes, gathering a whole chunk
};

uint32_t slot(const CclRingArgs& a, const Phase& p, uint32_t chunk) {
    return p.output + chunk * a.chunk_bytes;
}
uint32_t in_chunk(const CclRingArgs& a, uint32_t chunk) {
    return a.input_addr + chunk * a.chunk_bytes;
}

// `from` (this core's L1) to `to` on this core: a NoC write on an ID the adapter leaves alone.
hal::Status copy_local(Noc& noc, const CclRingArgs& a, uint32_t from, uint32_t to,
                       const uint32_t* term) {
    const hal::NocXY me = noc.self();
    HAL_TRY(noc.write(from, {me.x, me.y, to}, a.chunk_bytes, {.trid = kCopyTrid}));
    return noc.trid_barrier(kCopyTrid, fwtest::deadline_us(a.timeout_us), term);
}

// A chunk travels as the phase's pieces (the last one shorter), every piece counted on arrival:
// a rank adds and forwards each piece as soon as it is there.
struct Piece {
    uint32_t offset, bytes;
};
uint32_t pieces(const CclRingArgs& a, const Phase& p) {
    return (a.chunk_bytes + p.piece - 1) / p.piece;
}
Piece piece_of(const CclRingArgs& a, const Phase& p, uint32_t k) {
    const uint32_t offset = k * p.piece;
    const uint32_t left = a.chunk_bytes - offset;
    return {offset, left < p.piece ? left : p.piece};
}

// The element-wise sum (mod 2^32) of our input chunk `chunk`'s piece into its slot.
void add_input(const CclRingArgs& a, const Phase& p, uint32_t chunk, const Piece& pc) {
    uint32_t* acc = hal::mmio::l1_ptr<uint32_t>(slot(a, p, chunk) + pc.offset);
    const uint32_t* in = hal::mmio::l1_ptr<const uint32_t>(in_chunk(a, chunk) + pc.offset);
    hal::mmio::compiler_barrier();  // the fabric wrote the slot: no value from before the wait
    // Four elements a pass: a quarter of the loop branches and index updates per element.
    for (uint32_t i = 0; i < pc.bytes / 4; i += 4) {
        const uint32_t a0 = acc[i], a1 = acc[i + 1], a2 = acc[i + 2], a3 = acc[i + 3];
        const uint32_t b0 = in[i], b1 = in[i + 1], b2 = in[i + 2], b3 = in[i + 3];
        acc[i] = a0 + b0;
        acc[i + 1] = a1 + b1;
        acc[i + 2] = a2 + b2;
        acc[i + 3] = a3 + b3;
    }
    hal::mmio::compiler_barrier();  // every sum stored before the NoC reads the slot
}

// Wait (bounded) until `count` pieces of this phase have arrived.
hal::Status wait_arrived(const CclRingArgs& a, const Phase& p, uint32_t count,
                         const uint32_t* term) {
    return hal::wait_until([&] { return fwtest::load32(p.counter) >= count; },
                           fwtest::deadline_us(a.timeout_us), term);
}

// A piece from local `src` into slot `chunk` of the next rank, and +1 on its counter once the
// bytes are there: one fused packet for a piece that fits one, else its writes and then the
// increment (flushed behind them).
hal::Status send_piece(fabric::FabricConnection& conn, const CclRingArgs& a, const Phase& p,
                       const pf::Route& next, uint32_t chunk, uint32_t src, const Piece& pc,
                       const uint32_t* term) {
    const auto x = static_cast<uint8_t>(a.next_x), y = static_cast<uint8_t>(a.next_y);
    const pf::NocTarget dst{slot(a, p, chunk) + pc.offset, x, y, 0}, counter{p.counter, x, y, 0};
    const hal::Deadline d = fwtest::deadline_us(a.timeout_us);
    if (pc.bytes <= conn.payload_bytes()) {
        return conn.fused_write_atomic_inc(next, dst, counter, 1, true, src + pc.offset, pc.bytes,
                                           d, term, chunk);
    }
    HAL_TRY(conn.unicast_write(next, dst, src + pc.offset, pc.bytes, d, term, chunk));
    return conn.atomic_inc(next, counter, 1, true, d, term, chunk);
}

// The chunk of step `step` (the last, ranks - 1, is the one kept: reducing, our own result).
uint32_t step_chunk(const CclRingArgs& a, const Phase& p, uint32_t step) {
    return (a.rank + a.ranks - (p.reducing ? step + 1 : step)) % a.ranks;
}
// Where step `step` sends from: our input chunk as it is at the start of a reduction, else the
// slot (the chunk that arrived, reducing with our input added).
uint32_t step_source(const CclRingArgs& a, const Phase& p, uint32_t step, uint32_t chunk) {
    return p.reducing && step == 0 ? in_chunk(a, chunk) : slot(a, p, chunk);
}

int stuck_waiting(fwtest::Kernel& k, const Phase& p, hal::Status s) {
    r.received = fwtest::load32(p.counter);
    return k.stuck(r, protocol::kCclStuckWait, CclRingStep::Wait, s, r.received);
}

// Step `step` piece by piece: wait for the piece to arrive (every step but the first), add our
// input (reducing), send it on (every step but the last). -1 to go on, else the exit code.
int run_step(fwtest::Kernel& k, fabric::FabricConnection& conn, const CclRingArgs& a,
             const Phase& p, const pf::Route& next, uint32_t step) {
    const uint32_t n = pieces(a, p);
    const uint32_t chunk = step_chunk(a, p, step);
    const bool sends = step + 1 < a.ranks;
    for (uint32_t i = 0; i < n; ++i) {
        const Piece pc = piece_of(a, p, i);
        if (step != 0) {
            const hal::Status s = wait_arrived(a, p, (step - 1) * n + i + 1, k.term());
            if (s != hal::Status::Ok) return stuck_waiting(k, p, s);
            if (p.reducing) add_input(a, p, chunk, pc);
        }
        if (!sends) continue;
        const hal::Status s =
            send_piece(conn, a, p, next, chunk, step_source(a, p, step, chunk), pc, k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kCclStuckSend, CclRingStep::Send, s, step);
        }
    }
    if (sends) ++r.sent;
    k.beat();
    return -1;
}

// The ranks - 1 sending steps of a phase and the last chunk's arrival. -1 to go on, else the
// exit code.
int run_phase(fwtest::Kernel& k, fabric::FabricConnection& conn, const CclRingArgs& a,
              const Phase& p, const pf::Route& next) {
    for (uint32_t step = 0; step < a.ranks; ++step) {
        const int code = run_step(k, conn, a, p, next, step);
        if (code >= 0) return code;
    }
    r.received += fwtest::load32(p.counter) / pieces(a, p);
    return -1;
}

// The op's phases: a gather starts with our own chunk in our slot (the input, or the reduced
// result of the phase before).
int run_op(fwtest::Kernel& k, Noc& noc, fabric::FabricConnection& conn, const CclRingArgs& a,
           const pf::Route& next) {
    const CclOp op = static_cast<CclOp>(a.op);
    const Phase reduce{true, a.output_addr, a.counter_addr, a.piece_bytes};
    const Phase gather =
        op == CclOp::AllReduce
            ? Phase{false, protocol::ccl_gather_output(a.output_addr, a.ranks, a.chunk_bytes),
                    protocol::ccl_gather_counter(a.counter_addr), a.chunk_bytes}
            : Phase{false, a.output_addr, a.counter_addr, a.chunk_bytes};
    if (op != CclOp::AllGather) {
        const int code = run_phase(k, conn, a, reduce, next);
        if (code >= 0 || op == CclOp::ReduceScatter) return code;
    }
    const uint32_t own = op == CclOp::AllGather ? a.input_addr : slot(a, reduce, a.rank);
    const hal::Status s = copy_local(noc, a, own, slot(a, gather, a.rank), k.term());
    if (s != hal::Status::Ok) return k.stuck(r, protocol::kCclStuckCopy, CclRingStep::Copy, s);
    return run_phase(k, conn, a, gather, next);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) return k.exit_code();
    const CclRingArgs a = k.args<CclRingArgs>();
    if (!args_ok(a)) return k.fail(r, TestFail::BadArgs, CclRingStep::Args);
    Noc noc{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, CclRingStep::Init, 0);
    fabric::FabricConnection conn(
        noc, a.channel,
        {protocol::fabric_conn_credit(a.conn_l1), protocol::fabric_conn_teardown(a.conn_l1),
         protocol::fabric_conn_staging(a.conn_l1)});
    // A mux started with the ranks resets its connection blocks first: wait for it to be ready.
    hal::Status s = conn.wait_endpoint_ready(fwtest::deadline_us(a.timeout_us), k.term());
    if (s == hal::Status::Ok) s = conn.open(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) return k.stuck(r, protocol::kCclStuckOpen, CclRingStep::Open, s);
    const hal::Result<pf::Route> next = conn.line_unicast(1);
    if (!next.ok()) return k.fail(r, TestFail::HalError, CclRingStep::Route, next.status);
    const uint32_t t0 = fwtest::wall32();
    const int code = run_op(k, noc, conn, a, next.value);
    if (code >= 0) return code;
    r.cycles = fwtest::wall32() - t0;
    s = conn.close(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) return k.stuck(r, protocol::kCclStuckClose, CclRingStep::Close, s);
    return k.pass(r);
}
