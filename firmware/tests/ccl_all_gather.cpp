// One rank of a ring all-gather (protocol/ccl.h, protocol::AllGatherArgs): its input into its own
// output slot, then ranks - 1 steps each sending one chunk one hop along its router's line (the
// line API: the same ELF on a 1D ring and on a 2D ring row or column), forwarding the chunk that
// arrived last. Every wait is bounded and escapes on the mailbox's termination word; a stuck rank
// names the wait and how many chunks had arrived.
#include <stdint.h>

#include "common/kernel.h"
#include "fabric/worker_adapter.h"
#include "hal/noc.h"
#include "protocol/ccl.h"

namespace {

using protocol::AllGatherArgs;
using protocol::AllGatherResults;
using protocol::AllGatherStep;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;
namespace pf = protocol::fabric;

AllGatherResults r{};

// The local copy of the input: a NoC write to this core on an ID the adapter leaves alone.
constexpr uint32_t kCopyTrid = 6;

bool args_ok(const AllGatherArgs& a) {
    return a.ranks >= 2 && a.ranks <= protocol::kCclMaxRanks && a.rank < a.ranks &&
           a.chunk_bytes != 0 && a.chunk_bytes % 16 == 0 && a.input_addr % 16 == 0 &&
           a.output_addr % 16 == 0 && a.conn_l1 % 16 == 0 && a.counter_addr % 4 == 0 &&
           a.timeout_us != 0;
}

uint32_t slot(const AllGatherArgs& a, uint32_t chunk) {
    return a.output_addr + chunk * a.chunk_bytes;
}

hal::Status copy_input(Noc& noc, const AllGatherArgs& a, const uint32_t* term) {
    const hal::NocXY me = noc.self();
    HAL_TRY(
        noc.write(a.input_addr, {me.x, me.y, slot(a, a.rank)}, a.chunk_bytes, {.trid = kCopyTrid}));
    return noc.trid_barrier(kCopyTrid, fwtest::deadline_us(a.timeout_us), term);
}

// Wait (bounded) until `chunks` chunks have arrived.
hal::Status wait_arrived(const AllGatherArgs& a, uint32_t chunks, const uint32_t* term) {
    return hal::wait_until([&] { return fwtest::load32(a.counter_addr) >= chunks; },
                           fwtest::deadline_us(a.timeout_us), term);
}

// Chunk `chunk` from our output slot into the same slot of the next rank, then +1 there.
hal::Status send_chunk(fabric::FabricConnection& conn, const AllGatherArgs& a,
                       const pf::Route& next, uint32_t chunk, const uint32_t* term) {
    const hal::Deadline d = fwtest::deadline_us(a.timeout_us);
    const auto x = static_cast<uint8_t>(a.next_x), y = static_cast<uint8_t>(a.next_y);
    HAL_TRY(conn.unicast_write(next, {slot(a, chunk), x, y, 0}, slot(a, chunk), a.chunk_bytes, d,
                               term, chunk));
    return conn.atomic_inc(next, {a.counter_addr, x, y, 0}, 1, true, d, term, chunk);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) return k.exit_code();
    const AllGatherArgs a = k.args<AllGatherArgs>();
    if (!args_ok(a)) return k.fail(r, TestFail::BadArgs, AllGatherStep::Args);
    Noc noc{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, AllGatherStep::Init, 0);
    hal::Status s = copy_input(noc, a, k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kAllGatherStuckCopy, AllGatherStep::Copy, s);
    }
    fabric::FabricConnection conn(
        noc, a.channel,
        {protocol::fabric_conn_credit(a.conn_l1), protocol::fabric_conn_teardown(a.conn_l1),
         protocol::fabric_conn_staging(a.conn_l1)});
    s = conn.open(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kAllGatherStuckOpen, AllGatherStep::Open, s);
    }
    const hal::Result<pf::Route> next = conn.line_unicast(1);
    if (!next.ok()) return k.fail(r, TestFail::HalError, AllGatherStep::Route, next.status);
    const uint32_t t0 = fwtest::wall32();
    for (uint32_t step = 0; step + 1 < a.ranks; ++step) {
        if (step != 0) {
            s = wait_arrived(a, step, k.term());
            if (s != hal::Status::Ok) {
                r.received = fwtest::load32(a.counter_addr);
                return k.stuck(r, protocol::kAllGatherStuckWait, AllGatherStep::Wait, s,
                               r.received);
            }
        }
        const uint32_t chunk = (a.rank + a.ranks - step) % a.ranks;
        s = send_chunk(conn, a, next.value, chunk, k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kAllGatherStuckSend, AllGatherStep::Send, s, step);
        }
        ++r.sent;
        k.beat();
    }
    s = wait_arrived(a, a.ranks - 1, k.term());
    r.received = fwtest::load32(a.counter_addr);
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kAllGatherStuckWait, AllGatherStep::Wait, s, r.received);
    }
    r.cycles = fwtest::wall32() - t0;
    s = conn.close(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kAllGatherStuckClose, AllGatherStep::Close, s);
    }
    return k.pass(r);
}
