// One kind of NOC traffic, repeated: unicast writes, multicast writes, atomic increments or reads,
// on either NOC, posted or not. The host runs it on several cores at once to build the contention,
// multicast-rectangle, many-tile atomic and bad-address tests, and checks the destination memory.
//
//   Write      `requests` writes of request_bytes from local_addr to dest_addr + i*request_bytes
//   Multicast  `requests` multicast writes of request_bytes to the rectangle, same addressing
//   AtomicInc  `requests` non-posted INCR_GET of `incr` on dest_addr, each waited for; the old
//              values this core gets back must increase strictly (others only add)
//   Read       `requests` reads of request_bytes from dest_addr + i*request_bytes into
//              local_addr + i*request_bytes, checked against pattern(seed)
#include <stdint.h>

#include "common/kernel.h"
#include "hal/noc.h"
#include "hal/timeouts.h"

namespace {

using protocol::NocTrafficArgs;
using protocol::NocTrafficOp;
using protocol::NocTrafficResults;
using protocol::NocTrafficStep;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;
namespace st = hal::noc::status;

NocTrafficResults r{};

int run(fwtest::Kernel& k, const NocTrafficArgs& a) {
    const auto op = static_cast<NocTrafficOp>(a.op);
    Noc noc{
        a.noc == 1 ? hal::NocId::Noc1 : hal::NocId::Noc0,
        {.atomic_return_l1_addr = op == NocTrafficOp::AtomicInc ? a.atomic_ret : hal::kNoL1Addr}};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, NocTrafficStep::Init, 0);
    if ((op == NocTrafficOp::Write || op == NocTrafficOp::Multicast) && a.seed != 0) {
        fwtest::fill_pattern(a.local_addr, a.request_bytes, a.seed);
    }
    const uint32_t c_ack = noc.hw_counter(st::kMstWrAckReceived);
    const uint32_t c_np = noc.hw_counter(st::kMstNonpostedWrReqSent);
    const uint32_t c_p = noc.hw_counter(st::kMstPostedWrReqSent);
    const uint32_t c_at = noc.hw_counter(st::kMstAtomicRespReceived);
    const uint32_t c_rd = noc.hw_counter(st::kMstRdRespReceived);
    const hal::NocRect rect{a.rect_x_start, a.rect_y_start, a.rect_x_end, a.rect_y_end};
    auto barrier_deadline = [&] { return fwtest::deadline_us(a.timeout_us); };

    const uint32_t t0 = fwtest::wall32();
    uint32_t prev_old = 0;
    for (uint32_t i = 0; i < a.requests; ++i) {
        const uint32_t off = i * a.request_bytes;
        hal::Status s = hal::Status::BadArg;
        switch (op) {
            case NocTrafficOp::Write:
                s = noc.write(a.local_addr, {a.dest_x, a.dest_y, a.dest_addr + off},
                              a.request_bytes, {.posted = a.posted != 0, .vc = a.vc});
                break;
            case NocTrafficOp::Multicast:
                s = noc.multicast_write(a.local_addr, rect, a.dest_addr + off, a.request_bytes,
                                        a.mcast_dests, {.posted = a.posted != 0, .vc = a.vc});
                break;
            case NocTrafficOp::AtomicInc:
                s = noc.atomic_inc({a.dest_x, a.dest_y, a.dest_addr}, a.incr, {.vc = a.vc});
                if (s == hal::Status::Ok) {
                    s = noc.atomic_barrier(barrier_deadline(), k.term());
                    if (s != hal::Status::Ok) {
                        return k.fail(r, TestFail::HalError, NocTrafficStep::Barrier, s, i);
                    }
                    const uint32_t old = fwtest::load32(a.atomic_ret);
                    if (i == 0) {
                        r.atomic_old_first = old;
                    } else if (old <= prev_old) {
                        ++r.atomic_not_increasing;
                    }
                    r.atomic_old_last = old;
                    prev_old = old;
                }
                break;
            case NocTrafficOp::Read:
                s = noc.read({a.dest_x, a.dest_y, a.dest_addr + off}, a.local_addr + off,
                             a.request_bytes, {.vc = a.vc});
                break;
            default:
                return k.fail(r, TestFail::BadArgs, NocTrafficStep::Args, hal::Status::Ok, a.op);
        }
        if (s != hal::Status::Ok) {
            return k.fail(r, TestFail::HalError, NocTrafficStep::Issue, s, i);
        }
        r.issued = i + 1;
    }
    const hal::Status s = noc.full_barrier(barrier_deadline(), k.term());
    r.cycles = fwtest::wall32() - t0;
    if (s != hal::Status::Ok) {
        return k.fail(r, TestFail::HalError, NocTrafficStep::Barrier, s);
    }
    r.hw_wr_ack = noc.hw_counter(st::kMstWrAckReceived) - c_ack;
    r.hw_nonposted_wr_sent = noc.hw_counter(st::kMstNonpostedWrReqSent) - c_np;
    r.hw_posted_wr_sent = noc.hw_counter(st::kMstPostedWrReqSent) - c_p;
    r.hw_atomic_resp = noc.hw_counter(st::kMstAtomicRespReceived) - c_at;
    r.hw_rd_resp = noc.hw_counter(st::kMstRdRespReceived) - c_rd;
    if (op == NocTrafficOp::Read && a.seed != 0) {
        uint32_t first = 0;
        r.read_mismatches =
            fwtest::count_mismatches(a.local_addr, a.request_bytes * a.requests, a.seed, &first);
        FW_EXPECT(k, r, r.read_mismatches == 0, TestFail::DataMismatch, NocTrafficStep::Verify,
                  first);
    }
    FW_EXPECT(k, r, r.atomic_not_increasing == 0, TestFail::Unexpected, NocTrafficStep::Verify,
              r.atomic_not_increasing);
    return k.pass(r);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const NocTrafficArgs a = k.args<NocTrafficArgs>();
    if (a.noc > 1 || a.requests == 0 || a.timeout_us == 0 ||
        (a.op != static_cast<uint32_t>(NocTrafficOp::AtomicInc) && a.request_bytes == 0)) {
        return k.fail(r, TestFail::BadArgs, NocTrafficStep::Args);
    }
    return run(k, a);
}
