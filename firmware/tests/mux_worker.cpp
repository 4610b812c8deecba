// A client of a fabric mux channel in the seeds/001 scenario (protocol::MuxWorkerArgs): send,
// disconnect, then tell the termination master, which gracefully terminates the mux. Every wait
// is bounded; a close the mux does not answer within close_timeout_us is reported as Stuck at
// kMuxStuckClose (the hang the regression looks for), never waited out.
#include <stdint.h>

#include "common/kernel.h"
#include "fabric/worker_adapter.h"
#include "hal/noc.h"
#include "protocol/fabric_mux.h"

namespace {

namespace pf = protocol::fabric;
using protocol::MuxWorkerArgs;
using protocol::MuxWorkerResults;
using protocol::MuxWorkerStep;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;

MuxWorkerResults r{};

// The mux's termination word (its layout's fixed part does not depend on the config).
constexpr uint32_t kMuxTermination = pf::mux_layout(hal::kArch, pf::MuxConfig{}).termination;

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) return k.exit_code();
    const MuxWorkerArgs a = k.args<MuxWorkerArgs>();
    const bool header_only = (a.flags & protocol::kMuxWorkerHeaderOnly) != 0;
    if (a.send_timeout_us == 0 || a.close_timeout_us == 0 || a.conn_l1 % 16 != 0 ||
        a.workers == 0 || a.dst_addr % 16 != 0 ||
        (!header_only && (a.packet_bytes == 0 || a.packet_bytes % 16 != 0))) {
        return k.fail(r, TestFail::BadArgs, MuxWorkerStep::Args);
    }
    if (!header_only) {
        for (uint32_t p = 0; p < protocol::kMuxWorkerPositions; ++p) {
            fwtest::fill_pattern(a.src_addr + p * a.packet_bytes, a.packet_bytes, a.seed + p);
        }
    }
    Noc noc{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, MuxWorkerStep::Init, 0);
    fabric::FabricConnection conn(
        noc, a.channel,
        {protocol::fabric_conn_credit(a.conn_l1), protocol::fabric_conn_teardown(a.conn_l1),
         protocol::fabric_conn_staging(a.conn_l1)});
    hal::Status s = conn.wait_endpoint_ready(fwtest::deadline_us(a.send_timeout_us), k.term());
    if (s != hal::Status::Ok) return k.stuck(r, protocol::kMuxStuckOpen, MuxWorkerStep::Open, s, 1);
    const uint32_t t0 = fwtest::wall32();
    s = conn.open(fwtest::deadline_us(a.send_timeout_us), k.term());
    r.last_status = static_cast<uint32_t>(s);
    if (s != hal::Status::Ok) return k.stuck(r, protocol::kMuxStuckOpen, MuxWorkerStep::Open, s);
    uint32_t p = 0;  // i % kMuxWorkerPositions
    for (uint32_t i = 0; i < a.packet_count; ++i) {
        const hal::Deadline d = fwtest::deadline_us(a.send_timeout_us);
        if (header_only) {
            const pf::NocTarget t{a.dst_addr, static_cast<uint8_t>(a.dst_x),
                                  static_cast<uint8_t>(a.dst_y), 0};
            s = conn.atomic_inc(a.route, t, 1, false, d, k.term(), i);
        } else {
            const pf::NocTarget t{a.dst_addr + p * a.packet_bytes, static_cast<uint8_t>(a.dst_x),
                                  static_cast<uint8_t>(a.dst_y), 0};
            s = conn.unicast_write(a.route, t, a.src_addr + p * a.packet_bytes, a.packet_bytes, d,
                                   k.term(), i);
            if (++p == protocol::kMuxWorkerPositions) p = 0;
        }
        r.last_status = static_cast<uint32_t>(s);
        if (s != hal::Status::Ok)
            return k.stuck(r, protocol::kMuxStuckSend, MuxWorkerStep::Send, s, i);
        r.packets_sent = i + 1;
    }
    r.send_cycles = fwtest::wall32() - t0;
    const uint32_t t1 = fwtest::wall32();
    s = conn.close(fwtest::deadline_us(a.close_timeout_us), k.term());
    r.close_cycles = fwtest::wall32() - t1;
    r.last_status = static_cast<uint32_t>(s);
    if (s != hal::Status::Ok) return k.stuck(r, protocol::kMuxStuckClose, MuxWorkerStep::Close, s);

    // Done: +1 on the master's done word (the master counts itself the same way).
    FW_EXPECT_STATUS(k, r,
                     noc.atomic_inc({a.master_x, a.master_y, a.done_addr}, 1, {.posted = true}),
                     hal::Status::Ok, MuxWorkerStep::Done, 0);
    if ((a.flags & protocol::kMuxWorkerMaster) != 0) {
        s = hal::wait_until([&] { return fwtest::load32(a.done_addr) >= a.workers; },
                            fwtest::deadline_us(a.send_timeout_us), k.term());
        r.last_status = static_cast<uint32_t>(s);
        if (s != hal::Status::Ok)
            return k.stuck(r, protocol::kMuxStuckDone, MuxWorkerStep::Done, s);
        // The mux's termination word is 0 (KeepRunning) until now: +1 makes it Graceful.
        static_assert(static_cast<uint32_t>(pf::Termination::Graceful) == 1);
        FW_EXPECT_STATUS(k, r,
                         noc.atomic_inc({a.channel.router_x, a.channel.router_y, kMuxTermination},
                                        1, {.posted = true}),
                         hal::Status::Ok, MuxWorkerStep::Terminate, 0);
    }
    FW_EXPECT_STATUS(k, r, noc.atomic_barrier(fwtest::deadline_us(a.send_timeout_us), k.term()),
                     hal::Status::Ok, MuxWorkerStep::Done, 1);
    return k.pass(r);
}
