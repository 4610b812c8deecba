// Single-link round trip (seeds/002 "Single Ethernet Link Round-Trip Latency"): the Master sends a
// packet (EthChannelSync as its last 16 B) into the Subordinate's rx slot and times, on its wall
// clock, until the Subordinate's answer lands in its own rx slot. One unmeasured warm-up round
// trip first. No payload checks: the loop is as lean as a kernel can be with bounded waits (one L1
// load and one wall-clock read per poll). Teardown as in eth_ping_pong: the Master returns the
// Subordinate's last credit with a FIN, which the Subordinate waits for.
#include <stdint.h>

#include "common/eth_link.h"
#include "common/kernel.h"

namespace {

using fwtest::Eth;
using hal::EthTxq;
using protocol::EthLatencyArgs;
using protocol::EthLatencyResults;
using protocol::TestFail;

enum class Step : uint32_t { Args = 1, Handshake, Ping, Pong, Teardown };

EthLatencyResults r{};

int run(fwtest::Kernel& k, const EthLatencyArgs& a, bool master) {
    const uint32_t rx = protocol::eth_bench_rx(a.buf_base);
    const uint32_t tx = protocol::eth_bench_tx(a.buf_base, a.packet_bytes);
    const uint32_t sync = a.packet_bytes - 16;
    const uint32_t hs_in = a.buf_base, hs_out = a.buf_base + 0x10;
    const uint32_t fin_in = a.buf_base + 0x20, fin_out = a.buf_base + 0x30;
    fwtest::zero_words(rx + sync, 16);
    fwtest::zero_words(fin_in, 16);
    fwtest::HandshakeWait w = fwtest::HandshakeWait::None;
    hal::Status s = fwtest::handshake(master, hs_in, hs_out, a.timeout_us, k.term(), &w);
    if (s != hal::Status::Ok) {
        return k.stuck(
            r,
            w == fwtest::HandshakeWait::Txq ? protocol::kLatStuckTxq : protocol::kLatStuckHandshake,
            Step::Handshake, s);
    }
    r.rtt_min = 0xFFFFFFFF;
    uint64_t sum = 0, issue_sum = 0;
    for (uint32_t i = 0; i <= a.samples; ++i) {  // i == 0: warm-up
        const uint32_t seq = i + 1;
        if (master) {
            fwtest::write_sync(tx + sync, seq, sync, 0);
            const uint32_t t0 = fwtest::wall32();
            s = fwtest::send(EthTxq::Q0, tx, rx, a.packet_bytes, a.timeout_us, k.term());
            const uint32_t t1 = fwtest::wall32();
            if (s != hal::Status::Ok) {
                return k.stuck(r, protocol::kLatStuckTxq, Step::Ping, s, i);
            }
            s = fwtest::wait_word_eq(rx + sync, seq, fwtest::deadline_us(a.timeout_us), k.term());
            const uint32_t rtt = fwtest::wall32() - t0;
            if (s != hal::Status::Ok) {
                return k.stuck(r, protocol::kLatStuckPong, Step::Pong, s, i);
            }
            if (i != 0) {
                r.rtt_min = rtt < r.rtt_min ? rtt : r.rtt_min;
                r.rtt_max = rtt > r.rtt_max ? rtt : r.rtt_max;
                sum += rtt;
                issue_sum += t1 - t0;
                r.samples_done = i;
            }
        } else {
            s = fwtest::wait_word_eq(rx + sync, seq, fwtest::deadline_us(a.timeout_us), k.term());
            if (s != hal::Status::Ok) {
                return k.stuck(r, protocol::kLatStuckPing, Step::Ping, s, i);
            }
            fwtest::write_sync(tx + sync, seq, sync, 1);
            s = fwtest::send(EthTxq::Q0, tx, rx, a.packet_bytes, a.timeout_us, k.term());
            if (s != hal::Status::Ok) {
                return k.stuck(r, protocol::kLatStuckTxq, Step::Pong, s, i);
            }
            r.samples_done = i;
        }
    }
    r.rtt_sum_lo = static_cast<uint32_t>(sum);
    r.rtt_sum_hi = static_cast<uint32_t>(sum >> 32);
    r.send_issue_cycles = a.samples != 0 ? static_cast<uint32_t>(issue_sum / a.samples) : 0;
    if (master) {
        fwtest::store_words(fin_out, protocol::EthChannelSync{protocol::kCreditFin, 0, 0, 0});
        s = fwtest::send(EthTxq::Q0, fin_out, fin_in, 16, a.timeout_us, k.term());
        if (s == hal::Status::Ok) {
            s = Eth::wait_idle(EthTxq::Q0, fwtest::deadline_us(a.timeout_us), k.term());
        }
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kLatStuckTxq, Step::Teardown, s);
        }
    } else {
        s = fwtest::wait_word_eq(fin_in, protocol::kCreditFin, fwtest::deadline_us(a.timeout_us),
                                 k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kLatStuckFin, Step::Teardown, s);
        }
        fwtest::zero_words(fin_in, 16);
    }
    return k.pass(r);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const EthLatencyArgs a = k.args<EthLatencyArgs>();
    if (a.packet_bytes < 16 || a.packet_bytes % 16 != 0 || a.buf_base % 16 != 0 ||
        a.timeout_us == 0 || a.buf_base < protocol::test_l1_base(hal::kArch.arch) ||
        protocol::eth_bench_tx(a.buf_base, a.packet_bytes) + a.packet_bytes >
            fwtest::kMailboxAddr) {
        return k.fail(r, TestFail::BadArgs, Step::Args);
    }
    switch (k.role()) {
        case protocol::KernelRole::Master:
            return run(k, a, true);
        case protocol::KernelRole::Subordinate:
            return run(k, a, false);
        default:
            return k.fail(r, TestFail::BadArgs, Step::Args, hal::Status::Ok,
                          static_cast<uint32_t>(k.role()));
    }
}
