// The line API on any fabric (protocol::LineSendArgs): a worker that knows nothing of the fabric's
// shape sends by hop count along the line of the endpoint it connects to. Each send is a write of
// its own pattern, then +1 on the destination's counter, both on the route
// FabricConnection::line_unicast / line_multicast gives; the same ELF runs on a 1D line or ring
// and on a 2D mesh or torus. A send the line API refuses (0 hops, past the line's end) is
// recorded with its status and skipped: bad input returns, it never hangs or goes out.
#include <stdint.h>

#include "common/kernel.h"
#include "fabric/worker_adapter.h"
#include "hal/noc.h"

namespace {

using protocol::LineSendArgs;
using protocol::LineSendResults;
using protocol::LineSendStep;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;

LineSendResults r{};

bool args_ok(const LineSendArgs& a) {
    return a.num_sends != 0 && a.num_sends <= protocol::kLineSendMax && a.bytes != 0 &&
           a.bytes % 16 == 0 && a.src_addr % 16 == 0 && a.dst_addr % 16 == 0 &&
           a.conn_l1 % 16 == 0 && a.counter_addr % 4 == 0 && a.timeout_us != 0;
}

// The route of send `op`, by hop count along the connection's line.
hal::Result<protocol::fabric::Route> line_route(const fabric::FabricConnection& conn, uint32_t op) {
    const uint32_t start = op & 0xFF;
    if ((op & protocol::kLineSendMulticast) == 0) return conn.line_unicast(start);
    return conn.line_multicast(start, (op >> 8) & 0xFF);
}

// Send i: its pattern to its place on every chip of the route, then +1 on their counters.
hal::Status send(fabric::FabricConnection& conn, const LineSendArgs& a, uint32_t i,
                 const protocol::fabric::Route& route, const uint32_t* term) {
    const hal::Deadline d = fwtest::deadline_us(a.timeout_us);
    const auto x = static_cast<uint8_t>(a.dst_x), y = static_cast<uint8_t>(a.dst_y);
    const protocol::fabric::NocTarget dst{a.dst_addr + i * a.bytes, x, y, 0};
    const protocol::fabric::NocTarget counter{a.counter_addr, x, y, 0};
    HAL_TRY(conn.unicast_write(route, dst, a.src_addr + i * a.bytes, a.bytes, d, term, i));
    return conn.atomic_inc(route, counter, 1, true, d, term, i);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) return k.exit_code();
    const LineSendArgs a = k.args<LineSendArgs>();
    if (!args_ok(a)) return k.fail(r, TestFail::BadArgs, LineSendStep::Args);
    for (uint32_t i = 0; i < a.num_sends; ++i) {
        fwtest::fill_pattern(a.src_addr + i * a.bytes, a.bytes, a.seed + i);
    }
    Noc noc{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, LineSendStep::Init, 0);
    fabric::FabricConnection conn(
        noc, a.channel,
        {protocol::fabric_conn_credit(a.conn_l1), protocol::fabric_conn_teardown(a.conn_l1),
         protocol::fabric_conn_staging(a.conn_l1)});
    hal::Status s = conn.open(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kLineSendStuckOpen, LineSendStep::Open, s);
    }
    const protocol::fabric::LineInfoWords line{conn.line_info()};
    for (uint32_t w = 0; w < sizeof(r.line) / 4; ++w) r.line[w] = line.w[w];
    for (uint32_t i = 0; i < a.num_sends; ++i) {
        const auto route = line_route(conn, a.sends[i]);
        r.statuses |= static_cast<uint32_t>(route.status) << (4 * i);
        if (!route.ok()) {
            ++r.refused;
            continue;
        }
        s = send(conn, a, i, route.value, k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kLineSendStuckSend, LineSendStep::Send, s, i);
        }
        ++r.sent;
        k.beat();
    }
    s = conn.close(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kLineSendStuckClose, LineSendStep::Close, s);
    }
    return k.pass(r);
}
