// One rank of a ring collective (protocol/ccl.h, protocol::CclRingArgs): an all-gather or a
// reduce-scatter of int32 elements, ranks - 1 steps each sending one chunk one hop along its
// router's line (the line API: the same ELF on a 1D ring and on a 2D ring row or column). The
// reduce-scatter's additions are done here, by the worker core. Every wait is bounded and escapes
// on the mailbox's termination word; a stuck rank names the wait and how many chunks had arrived.
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
    return (a.op == static_cast<uint32_t>(CclOp::AllGather) ||
            a.op == static_cast<uint32_t>(CclOp::ReduceScatter)) &&
           a.ranks >= 2 && a.ranks <= protocol::kCclMaxRanks && a.rank < a.ranks &&
           a.chunk_bytes != 0 && a.chunk_bytes % 16 == 0 && a.input_addr % 16 == 0 &&
           a.output_addr % 16 == 0 && a.conn_l1 % 16 == 0 && a.counter_addr % 4 == 0 &&
           a.timeout_us != 0;
}

uint32_t out_slot(const CclRingArgs& a, uint32_t chunk) {
    return a.output_addr + chunk * a.chunk_bytes;
}
uint32_t in_chunk(const CclRingArgs& a, uint32_t chunk) {
    return a.input_addr + chunk * a.chunk_bytes;
}

hal::Status copy_input(Noc& noc, const CclRingArgs& a, const uint32_t* term) {
    const hal::NocXY me = noc.self();
    HAL_TRY(noc.write(a.input_addr, {me.x, me.y, out_slot(a, a.rank)}, a.chunk_bytes,
                      {.trid = kCopyTrid}));
    return noc.trid_barrier(kCopyTrid, fwtest::deadline_us(a.timeout_us), term);
}

// The element-wise sum (mod 2^32) of our input chunk `chunk` into output slot `chunk`.
void add_input(const CclRingArgs& a, uint32_t chunk) {
    uint32_t* acc = hal::mmio::l1_ptr<uint32_t>(out_slot(a, chunk));
    const uint32_t* in = hal::mmio::l1_ptr<const uint32_t>(in_chunk(a, chunk));
    hal::mmio::compiler_barrier();  // the fabric wrote the slot: no value from before the wait
    for (uint32_t i = 0; i < a.chunk_bytes / 4; ++i) acc[i] += in[i];
    hal::mmio::compiler_barrier();  // every sum stored before the NoC reads the slot
}

// Wait (bounded) until `chunks` chunks have arrived.
hal::Status wait_arrived(const CclRingArgs& a, uint32_t chunks, const uint32_t* term) {
    return hal::wait_until([&] { return fwtest::load32(a.counter_addr) >= chunks; },
                           fwtest::deadline_us(a.timeout_us), term);
}

// `bytes` from local `src` into output slot `chunk` of the next rank, then +1 there.
hal::Status send_chunk(fabric::FabricConnection& conn, const CclRingArgs& a, const pf::Route& next,
                       uint32_t chunk, uint32_t src, const uint32_t* term) {
    const hal::Deadline d = fwtest::deadline_us(a.timeout_us);
    const auto x = static_cast<uint8_t>(a.next_x), y = static_cast<uint8_t>(a.next_y);
    HAL_TRY(conn.unicast_write(next, {out_slot(a, chunk), x, y, 0}, src, a.chunk_bytes, d, term,
                               chunk));
    return conn.atomic_inc(next, {a.counter_addr, x, y, 0}, 1, true, d, term, chunk);
}

// The chunk step `step` sends, and where from (after adding our part, reducing).
uint32_t step_chunk(const CclRingArgs& a, uint32_t step) {
    const uint32_t back = a.op == static_cast<uint32_t>(CclOp::ReduceScatter) ? step + 1 : step;
    return (a.rank + a.ranks - back) % a.ranks;
}
uint32_t step_source(const CclRingArgs& a, uint32_t step, uint32_t chunk) {
    const bool reducing = a.op == static_cast<uint32_t>(CclOp::ReduceScatter);
    if (reducing && step == 0) return in_chunk(a, chunk);
    if (reducing) add_input(a, chunk);
    return out_slot(a, chunk);
}

int stuck_waiting(fwtest::Kernel& k, const CclRingArgs& a, hal::Status s) {
    r.received = fwtest::load32(a.counter_addr);
    return k.stuck(r, protocol::kCclStuckWait, CclRingStep::Wait, s, r.received);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) return k.exit_code();
    const CclRingArgs a = k.args<CclRingArgs>();
    if (!args_ok(a)) return k.fail(r, TestFail::BadArgs, CclRingStep::Args);
    const bool reducing = a.op == static_cast<uint32_t>(CclOp::ReduceScatter);
    Noc noc{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, CclRingStep::Init, 0);
    hal::Status s = reducing ? hal::Status::Ok : copy_input(noc, a, k.term());
    if (s != hal::Status::Ok) return k.stuck(r, protocol::kCclStuckCopy, CclRingStep::Copy, s);
    fabric::FabricConnection conn(
        noc, a.channel,
        {protocol::fabric_conn_credit(a.conn_l1), protocol::fabric_conn_teardown(a.conn_l1),
         protocol::fabric_conn_staging(a.conn_l1)});
    s = conn.open(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) return k.stuck(r, protocol::kCclStuckOpen, CclRingStep::Open, s);
    const hal::Result<pf::Route> next = conn.line_unicast(1);
    if (!next.ok()) return k.fail(r, TestFail::HalError, CclRingStep::Route, next.status);
    const uint32_t t0 = fwtest::wall32();
    for (uint32_t step = 0; step + 1 < a.ranks; ++step) {
        if (step != 0) {
            s = wait_arrived(a, step, k.term());
            if (s != hal::Status::Ok) return stuck_waiting(k, a, s);
        }
        const uint32_t chunk = step_chunk(a, step);
        s = send_chunk(conn, a, next.value, chunk, step_source(a, step, chunk), k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kCclStuckSend, CclRingStep::Send, s, step);
        }
        ++r.sent;
        k.beat();
    }
    s = wait_arrived(a, a.ranks - 1, k.term());
    if (s != hal::Status::Ok) return stuck_waiting(k, a, s);
    r.received = fwtest::load32(a.counter_addr);
    if (reducing) add_input(a, a.rank);
    r.cycles = fwtest::wall32() - t0;
    s = conn.close(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) return k.stuck(r, protocol::kCclStuckClose, CclRingStep::Close, s);
    return k.pass(r);
}
