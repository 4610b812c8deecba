// Connection churn on a router's ch0: `iterations` times open, one fused write + atomic increment,
// close. With several workers on the same channel they take turns with a token (a turn number
// each worker writes into the next one's L1 over the NoC), so exactly one is connected at a time.
// The host checks the counter (workers * iterations) and the data. Every wait is bounded.
#include <stdint.h>

#include "common/kernel.h"
#include "fabric/worker_adapter.h"
#include "hal/noc.h"

namespace {

namespace pf = protocol::fabric;
using protocol::FabricConnStressArgs;
using protocol::FabricConnStressResults;
using protocol::FabricTrafficStep;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;

FabricConnStressResults r{};
// A stream send's header template (where the NoC would read it), for the closed-connection check.
alignas(16) pf::PacketHeader closed_template;

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) return k.exit_code();
    const FabricConnStressArgs a = k.args<FabricConnStressArgs>();
    if (a.workers == 0 || a.my_index >= a.workers || a.timeout_us == 0 || a.packet_bytes == 0 ||
        a.packet_bytes % 16 != 0 || a.packet_bytes > a.channel.payload_bytes ||
        a.conn_l1 % 16 != 0 || a.token_addr % 16 != 0) {
        return k.fail(r, TestFail::BadArgs, FabricTrafficStep::Args);
    }
    fwtest::fill_pattern(a.src_addr, a.packet_bytes, a.seed);
    Noc noc{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, FabricTrafficStep::Init, 0);
    fabric::FabricConnection conn(
        noc, a.channel,
        {protocol::fabric_conn_credit(a.conn_l1), protocol::fabric_conn_teardown(a.conn_l1),
         protocol::fabric_conn_staging(a.conn_l1)});
    const pf::NocTarget dst{a.dst_addr, static_cast<uint8_t>(a.dst_x),
                            static_cast<uint8_t>(a.dst_y), 0};
    const pf::NocTarget sem{a.sem_addr, dst.x, dst.y, 0};
    // The token goes out from a staging line 16 B after the token word (same offset mod 16).
    const uint32_t token_out = a.token_addr + 16;
    const uint32_t t0 = fwtest::wall32();
    for (uint32_t i = 0; i < a.iterations; ++i) {
        const uint32_t turn = i * a.workers + a.my_index;
        if (a.workers > 1) {
            const hal::Status s =
                hal::wait_until([&] { return fwtest::load32(a.token_addr) == turn; },
                                fwtest::deadline_us(a.timeout_us), k.term());
            if (s != hal::Status::Ok)
                return k.stuck(r, protocol::kFabricStuckToken, FabricTrafficStep::Start, s, i);
        }
        hal::Status s = conn.open(fwtest::deadline_us(a.timeout_us), k.term());
        if (s != hal::Status::Ok)
            return k.stuck(r, protocol::kFabricStuckOpen, FabricTrafficStep::Open, s, i);
        s = conn.fused_write_atomic_inc(a.route, dst, sem, 1, true, a.src_addr, a.packet_bytes,
                                        fwtest::deadline_us(a.timeout_us), k.term(), i);
        if (s != hal::Status::Ok)
            return k.stuck(r, protocol::kFabricStuckSend, FabricTrafficStep::Send, s, i);
        s = conn.close(fwtest::deadline_us(a.timeout_us), k.term());
        if (s != hal::Status::Ok)
            return k.stuck(r, protocol::kFabricStuckClose, FabricTrafficStep::Close, s, i);
        if (i == 0) {
            // Closed: no free slot, and both send paths refuse (BadArg) without pushing anything
            // (the host's counter and data checks see exactly one packet per iteration).
            FW_EXPECT(k, r, !conn.has_free_slot(), TestFail::Unexpected, FabricTrafficStep::Close,
                      i);
            FW_EXPECT_STATUS(
                k, r,
                conn.fused_write_atomic_inc(a.route, dst, sem, 1, true, a.src_addr, a.packet_bytes,
                                            fwtest::deadline_us(a.timeout_us), k.term(), i),
                hal::Status::BadArg, FabricTrafficStep::Close, i);
            const fabric::FabricConnection::Bound b{a.timeout_us, k.term()};
            fabric::FabricConnection::Template t{};
            const auto l1 = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&closed_template));
            FW_EXPECT_STATUS(k, r,
                             conn.prepare_unicast_write(t, l1, a.route, dst, a.packet_bytes, b),
                             hal::Status::Ok, FabricTrafficStep::Close, i);
            FW_EXPECT_STATUS(k, r, conn.send(t, a.src_addr, dst.addr, i, b), hal::Status::BadArg,
                             FabricTrafficStep::Close, i);
        }
        if (a.workers > 1) {
            fwtest::store32(token_out, turn + 1);
            s = noc.write(token_out, {a.next_x, a.next_y, a.token_addr}, 4);
            if (s == hal::Status::Ok)
                s = noc.write_barrier(fwtest::deadline_us(a.timeout_us), k.term());
            if (s != hal::Status::Ok)
                return k.stuck(r, protocol::kFabricStuckToken, FabricTrafficStep::Close, s, i);
        }
        r.iterations_done = i + 1;
        if ((i & 63) == 0) {
            k.publish_word(r, r.iterations_done);
            k.beat();
        }
    }
    r.cycles = fwtest::wall32() - t0;
    return k.pass(r);
}
