// Ring ping latency (seeds/002 "Ring Ping Latency" and its walkthrough): a token goes around a
// ring of chips; every hop is Ethernet core -> Ethernet core, and inside each chip the token is
// handed from the core that received it (Receiver) to the core whose link leads to the next chip
// (Forwarder) over the NOC. Roles:
//   Master       chip 0's Receiver: injects the token into its Forwarder, times the lap
//   Subordinate  every other chip's Receiver: waits for the token over Ethernet, writes it over the
//                NOC into the Forwarder's tx slot, bumps the Forwarder's token stream (NOC inline
//                write), then returns the Ethernet credit to the previous chip's Forwarder (remote
//                register write) once the NOC write has read its source
//   Forwarder    waits for a token and an Ethernet credit, sends the token to the next chip's
//                Receiver; at the end waits for its last credit (seeds/002 teardown)
// The token and credit streams start at 0 (power-on) and every kernel leaves them at 0.
#include <stdint.h>

#include "common/eth_link.h"
#include "common/kernel.h"
#include "hal/noc.h"
#include "hal/timeouts.h"

namespace {

using fwtest::Eth;
using fwtest::Streams;
using hal::EthTxq;
using protocol::EthRingArgs;
using protocol::EthRingResults;
using protocol::KernelRole;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;

enum class Step : uint32_t { Args = 1, Handshake, Token, Credit, Send, Receive, Forward, Teardown };

EthRingResults r{};

int forwarder(fwtest::Kernel& k, const EthRingArgs& a, hal::StreamId token, hal::StreamId credit) {
    const uint32_t rx = protocol::eth_bench_rx(a.buf_base);
    const uint32_t tx = protocol::eth_bench_tx(a.buf_base, a.packet_bytes);
    FW_EXPECT(k, r, Streams::read(token) == 0 && Streams::read(credit) == 0, TestFail::BadArgs,
              Step::Args, Streams::read(token) | (Streams::read(credit) << 16));
    FW_EXPECT_STATUS(k, r, Streams::add(credit, 1), hal::Status::Ok, Step::Args,
                     1);  // one rx slot downstream
    fwtest::HandshakeWait w = fwtest::HandshakeWait::None;
    hal::Status s =
        fwtest::handshake(true, a.buf_base, a.buf_base + 0x10, a.timeout_us, k.term(), &w);
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kRingStuckHandshake, Step::Handshake, s);
    }
    for (uint32_t lap = 0; lap <= a.samples; ++lap) {
        s = hal::wait_until([token] { return Streams::read(token) != 0; },
                            fwtest::deadline_us(a.timeout_us), k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kRingStuckToken, Step::Token, s, lap);
        }
        FW_EXPECT_STATUS(k, r, Streams::add(token, -1), hal::Status::Ok, Step::Token, lap);
        s = hal::wait_until([credit] { return Streams::read(credit) != 0; },
                            fwtest::deadline_us(a.timeout_us), k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kRingStuckCredit, Step::Credit, s, lap);
        }
        FW_EXPECT_STATUS(k, r, Streams::add(credit, -1), hal::Status::Ok, Step::Credit, lap);
        s = fwtest::send(EthTxq::Q0, tx, rx, a.packet_bytes, a.timeout_us, k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kRingStuckTxq, Step::Send, s, lap);
        }
        r.laps_done = lap + 1;
    }
    // End-of-kernel credit wait, then leave the stream at 0 for the next kernel.
    s = hal::wait_until([credit] { return Streams::read(credit) == 1; },
                        fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kRingStuckCredit, Step::Teardown, s);
    }
    FW_EXPECT_STATUS(k, r, Streams::add(credit, -1), hal::Status::Ok, Step::Teardown, 0);
    return k.pass(r);
}

int receiver(fwtest::Kernel& k, const EthRingArgs& a, hal::StreamId token, hal::StreamId credit,
             bool master) {
    const uint32_t rx = protocol::eth_bench_rx(a.buf_base);
    const uint32_t tx = protocol::eth_bench_tx(a.buf_base, a.packet_bytes);
    const uint32_t sync = a.packet_bytes - 16;
    Noc noc{a.noc == 1 ? hal::NocId::Noc1 : hal::NocId::Noc0};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, Step::Args, 2);
    const auto one = Streams::encode_delta(1);
    const hal::NocAddr partner_tx{a.partner_x, a.partner_y, tx};
    const hal::NocAddr partner_token{a.partner_x, a.partner_y, Streams::update_reg_addr(token)};
    const uint32_t credit_reg = Streams::update_reg_addr(credit);
    auto noc_deadline = [] {
        return hal::Deadline::after_us(hal::kArch, hal::timeouts::kNocBarrierUs);
    };

    fwtest::zero_words(rx + sync, 16);
    fwtest::HandshakeWait w = fwtest::HandshakeWait::None;
    hal::Status s =
        fwtest::handshake(false, a.buf_base, a.buf_base + 0x10, a.timeout_us, k.term(), &w);
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kRingStuckHandshake, Step::Handshake, s);
    }
    r.lap_min = 0xFFFFFFFF;
    uint64_t sum = 0;
    for (uint32_t lap = 0; lap <= a.samples; ++lap) {  // lap 0: warm-up, not measured
        const uint32_t seq = lap + 1;
        uint32_t t0 = 0;
        if (master) {
            // Inject: the token (from our own tx area) into the Forwarder's tx slot, then its
            // stream.
            fwtest::write_sync(tx + sync, seq, sync, 0);
            t0 = fwtest::wall32();
            // Same NIU, VC and destination: the inline write cannot overtake the data (seeds/002
            // sends the semaphore increment right behind the write too).
            s = noc.write(tx, partner_tx, a.packet_bytes);
            if (s == hal::Status::Ok) {
                s = noc.write_inline(partner_token, one.value);
            }
            if (s != hal::Status::Ok) {
                return k.fail(r, TestFail::HalError, Step::Forward, s, lap);
            }
        }
        s = fwtest::wait_word_eq(rx + sync, seq, fwtest::deadline_us(a.timeout_us), k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kRingStuckPacket, Step::Receive, s, lap);
        }
        if (master) {
            const uint32_t t = fwtest::wall32() - t0;
            if (lap != 0) {
                r.lap_min = t < r.lap_min ? t : r.lap_min;
                r.lap_max = t > r.lap_max ? t : r.lap_max;
                sum += t;
            }
        } else {
            s = noc.write(rx, partner_tx, a.packet_bytes);
            if (s == hal::Status::Ok) {
                s = noc.write_inline(partner_token, one.value);
            }
            if (s != hal::Status::Ok) {
                return k.fail(r, TestFail::HalError, Step::Forward, s, lap);
            }
        }
        // The rx slot (our NOC write's source) is free once the write has been acknowledged; then
        // the previous chip's Forwarder gets its credit back.
        s = noc.write_barrier(noc_deadline(), k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kRingStuckNoc, Step::Forward, s, lap);
        }
        s = fwtest::write_remote_reg(EthTxq::Q0, credit_reg, one.value, a.timeout_us, k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kRingStuckTxq, Step::Forward, s, lap);
        }
        r.laps_done = lap + 1;
    }
    r.lap_sum_lo = static_cast<uint32_t>(sum);
    r.lap_sum_hi = static_cast<uint32_t>(sum >> 32);
    s = Eth::wait_idle(EthTxq::Q0, fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kRingStuckTxq, Step::Teardown, s);
    }
    return k.pass(r);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const EthRingArgs a = k.args<EthRingArgs>();
    const auto token = Streams::make_id(a.token_stream);
    const auto credit = Streams::make_id(a.credit_stream);
    if (!token.ok() || !credit.ok() || a.token_stream == a.credit_stream || a.packet_bytes < 16 ||
        a.packet_bytes % 16 != 0 || a.buf_base % 16 != 0 || a.timeout_us == 0 || a.noc > 1 ||
        a.buf_base < protocol::test_l1_base(hal::kArch.arch) ||
        protocol::eth_bench_tx(a.buf_base, a.packet_bytes) + a.packet_bytes >
            fwtest::kMailboxAddr) {
        return k.fail(r, TestFail::BadArgs, Step::Args);
    }
    switch (k.role()) {
        case KernelRole::Master:
            return receiver(k, a, token.value, credit.value, true);
        case KernelRole::Subordinate:
            return receiver(k, a, token.value, credit.value, false);
        case KernelRole::Forwarder:
            return forwarder(k, a, token.value, credit.value);
        default:
            return k.fail(r, TestFail::BadArgs, Step::Args, hal::Status::Ok,
                          static_cast<uint32_t>(k.role()));
    }
}
