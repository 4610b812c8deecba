// One end of a socket over the fabric (fabric/socket.h, protocol::SocketStreamArgs): the sender
// (role Master) streams total_bytes from its L1 in pages; the receiver (role Subordinate) copies
// every page out of its ring into an output region, so the host can check every byte, optionally
// slowly (consume_delay cycles a page: back-pressure on the sender). Either side may close after
// close_after_pages pages; the other sees the close in its next wait and ends cleanly. Every wait
// is bounded (timeout_us) and escapes on the mailbox's termination word: a stuck end names the
// wait in stuck_at and the socket status in its results.
#include <stdint.h>

#include "common/kernel.h"
#include "fabric/socket.h"
#include "fabric/worker_adapter.h"
#include "hal/noc.h"

namespace {

using protocol::SocketEnd;
using protocol::SocketStatus;
using protocol::SocketStreamArgs;
using protocol::SocketStreamResults;
using protocol::SocketStreamStep;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;
using Bound = fabric::FabricConnection::Bound;

SocketStreamResults r{};

// The receiver's copies out of the ring: a NoC write to this core, on an ID the adapter leaves
// alone, so waiting for it does not wait for the connection's pushes.
constexpr uint32_t kCopyTrid = 6;

bool args_ok(const SocketStreamArgs& a) {
    return a.total_bytes != 0 && a.total_bytes <= protocol::kSocketMaxBytes &&
           a.total_bytes % 16 == 0 && a.data_addr % 16 == 0 && a.socket.words_addr % 16 == 0 &&
           a.timeout_us != 0 && a.socket.page_bytes % 16 == 0 && a.socket.page_bytes != 0 &&
           a.socket.ring_pages != 0;
}

uint32_t min32(uint32_t a, uint32_t b) {
    return a < b ? a : b;
}

// A stream that ended early: the socket status names the wait (or the bad call), the HAL status
// says how the last adapter call or wait ended.
int stuck(fwtest::Kernel& k, SocketStatus s, hal::Status hal_status, uint32_t code,
          SocketStreamStep step, uint32_t detail) {
    r.socket_status = static_cast<uint32_t>(s);
    r.last_hal_status = static_cast<uint32_t>(hal_status);
    k.publish(r);
    return k.stuck(r, code, step, hal_status, detail);
}

// A stream that ended cleanly: how, and its cycles since `t0`.
int finish(uint32_t t0, bool closed_here, SocketStatus s) {
    r.cycles = fwtest::wall32() - t0;
    r.socket_status = static_cast<uint32_t>(s);
    r.end = static_cast<uint32_t>(closed_here                     ? SocketEnd::ClosedHere
                                  : s == SocketStatus::PeerClosed ? SocketEnd::ClosedByPeer
                                                                  : SocketEnd::Complete);
    return 0;
}

int run_sender(fwtest::Kernel& k, const SocketStreamArgs& a, fabric::FabricConnection& conn) {
    fabric::SocketSender tx(conn, a.socket, protocol::socket_stream_l1(a.socket.words_addr));
    const Bound b{a.timeout_us, k.term()};
    const uint32_t t0 = fwtest::wall32();
    SocketStatus s = SocketStatus::Ok;
    uint32_t source_at = 0;  // the next page's offset in the source (it wraps)
    while (tx.bytes_sent() < a.total_bytes) {
        if (a.close_after_pages != 0 && tx.pages_sent() == a.close_after_pages) break;
        const uint32_t bytes = min32(a.socket.page_bytes, a.total_bytes - tx.bytes_sent());
        s = tx.send_page(a.data_addr + source_at, bytes, b);
        source_at = source_at + bytes == a.source_bytes ? 0 : source_at + bytes;
        if (s == SocketStatus::PeerClosed) break;
        if (s != SocketStatus::Ok) {
            r.pages = tx.pages_sent();
            r.bytes_sent = tx.bytes_sent();
            r.bytes_acked = tx.bytes_acked();
            return stuck(k, s, tx.last_hal_status(), protocol::kSocketStuckStream,
                         SocketStreamStep::Stream, tx.pages_sent());
        }
        if ((tx.pages_sent() & 15) == 0) {
            r.pages = tx.pages_sent();
            k.publish_word(r, r.pages);
            k.beat();
        }
    }
    const bool closing = s != SocketStatus::PeerClosed && tx.bytes_sent() < a.total_bytes;
    s = closing ? tx.close(b) : tx.wait_acked(b);
    r.pages = tx.pages_sent();
    r.bytes_sent = tx.bytes_sent();
    r.bytes_acked = tx.bytes_acked();
    if (s != SocketStatus::Ok && s != SocketStatus::PeerClosed) {
        return stuck(k, s, tx.last_hal_status(),
                     closing ? protocol::kSocketStuckClose : protocol::kSocketStuckDrain,
                     closing ? SocketStreamStep::Close : SocketStreamStep::Drain, tx.pages_sent());
    }
    return finish(t0, closing, s);
}

// `cycles` of a slow consumer (bounded by its own length; the termination word ends it early).
hal::Status consume_delay(fwtest::Kernel& k, uint32_t cycles) {
    if (cycles == 0) return hal::Status::Ok;
    const uint64_t until = hal::wall_clock() + cycles;
    const hal::Status s = hal::wait_until([&] { return hal::wall_clock() >= until; },
                                          hal::Deadline::at_cycle(until), k.term());
    return s == hal::Status::Timeout ? hal::Status::Ok : s;
}

// The receiver's own steps (copy, delay) as a socket status.
SocketStatus local_status(hal::Status h) {
    if (h == hal::Status::Ok) return SocketStatus::Ok;
    return h == hal::Status::Terminated ? SocketStatus::Terminated : SocketStatus::FabricError;
}

// A page from the ring to its place in the output: a NoC write to this core.
hal::Status copy_out(Noc& noc, uint32_t from, uint32_t to, uint32_t bytes, const Bound& b) {
    const hal::NocXY me = noc.self();
    HAL_TRY(noc.write(from, {me.x, me.y, to}, bytes, {.trid = kCopyTrid}));
    return noc.trid_barrier(kCopyTrid, hal::Deadline::after_us(hal::kArch, b.timeout_us), b.term);
}

int run_receiver(fwtest::Kernel& k, const SocketStreamArgs& a, fabric::FabricConnection& conn,
                 Noc& noc) {
    fabric::SocketReceiver rx(conn, a.socket);
    const Bound b{a.timeout_us, k.term()};
    uint32_t t0 = 0;
    SocketStatus s = SocketStatus::Ok;
    const auto record = [&] {
        r.pages = rx.pages_consumed();
        r.bytes_received = rx.bytes_received();
        r.bytes_consumed = rx.bytes_consumed();
    };
    while (rx.bytes_consumed() < a.total_bytes) {
        if (a.close_after_pages != 0 && rx.pages_consumed() == a.close_after_pages) break;
        s = rx.wait_page(min32(a.socket.page_bytes, a.total_bytes - rx.bytes_consumed()), b);
        if (s == SocketStatus::PeerClosed) break;
        if (rx.pages_consumed() == 0) t0 = fwtest::wall32();  // the first page is here
        hal::Status h = hal::Status::Ok;
        if (s == SocketStatus::Ok) {
            h = copy_out(noc, rx.page_l1(), a.data_addr + rx.bytes_consumed(), rx.page_bytes(), b);
            if (h == hal::Status::Ok) h = consume_delay(k, a.consume_delay);
            s = local_status(h);
        }
        if (s == SocketStatus::Ok) s = rx.release_page(b);
        if (s != SocketStatus::Ok) {
            record();
            return stuck(k, s, h != hal::Status::Ok ? h : rx.last_hal_status(),
                         protocol::kSocketStuckStream, SocketStreamStep::Stream,
                         rx.pages_consumed());
        }
        if ((rx.pages_consumed() & 15) == 0) {
            r.pages = rx.pages_consumed();
            k.publish_word(r, r.pages);
            k.beat();
        }
    }
    const bool closing = s != SocketStatus::PeerClosed && rx.bytes_consumed() < a.total_bytes;
    if (closing) {
        s = rx.close(b);
    } else if (s != SocketStatus::PeerClosed) {
        s = rx.acknowledge(b);  // the last pages (a closed sender's were, before its wait ended)
    }
    record();
    if (s != SocketStatus::Ok && s != SocketStatus::PeerClosed) {
        return stuck(k, s, rx.last_hal_status(), protocol::kSocketStuckClose,
                     SocketStreamStep::Close, rx.pages_consumed());
    }
    return finish(t0, closing, s);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) return k.exit_code();
    const SocketStreamArgs a = k.args<SocketStreamArgs>();
    const bool sender = k.role() == protocol::KernelRole::Master;
    if (!args_ok(a) || (!sender && k.role() != protocol::KernelRole::Subordinate) ||
        (sender && (a.source_bytes == 0 || a.source_bytes % a.socket.page_bytes != 0))) {
        return k.fail(r, TestFail::BadArgs, SocketStreamStep::Args);
    }
    Noc noc{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, SocketStreamStep::Init, 0);
    const uint32_t conn_l1 = protocol::socket_conn_l1(a.socket.words_addr);
    fabric::FabricConnection conn(
        noc, a.channel,
        {protocol::fabric_conn_credit(conn_l1), protocol::fabric_conn_teardown(conn_l1),
         protocol::fabric_conn_staging(conn_l1)});
    hal::Status s = conn.open(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        r.last_hal_status = static_cast<uint32_t>(s);
        return k.stuck(r, protocol::kSocketStuckOpen, SocketStreamStep::Open, s);
    }
    const int stream = sender ? run_sender(k, a, conn) : run_receiver(k, a, conn, noc);
    if (stream != 0) return stream;
    s = conn.close(fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        r.last_hal_status = static_cast<uint32_t>(s);
        return k.stuck(r, protocol::kSocketStuckDisconnect, SocketStreamStep::Disconnect, s);
    }
    return k.pass(r);
}
