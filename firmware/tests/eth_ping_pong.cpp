// Ping-pong over one Ethernet link, with the start-of-kernel handshake and end-of-kernel credit
// wait of seeds/002. Role Master pings (payload + EthChannelSync suffix into the peer's rx slot)
// and waits for the pong; role Subordinate waits for each ping, checks it, and answers. The pong is
// the Master's credit for its rx/tx slots; at the end the Master returns the Subordinate's last
// credit with a FIN word, and the Subordinate waits for it before it exits, so no late write from
// this kernel can land in whatever runs next on either core.
//
// Every wait escapes on the termination word and its deadline; a kernel that gives up records
// where (stuck_at: PingPongStuck, detail: the iteration) and exits with TestFail::Stuck.
#include <stdint.h>

#include "common/eth_link.h"
#include "common/kernel.h"

namespace {

using fwtest::Eth;
using hal::EthTxq;
using protocol::PingPongArgs;
using protocol::PingPongResults;
using protocol::PingPongStep;
using protocol::TestFail;

PingPongResults r{};

int handshake_or_stuck(fwtest::Kernel& k, bool master, const protocol::PingPongLayout& l,
                       uint32_t timeout_us, bool* ok) {
    fwtest::HandshakeWait w = fwtest::HandshakeWait::None;
    const hal::Status s = fwtest::handshake(master, l.hs_in, l.hs_out, timeout_us, k.term(), &w);
    *ok = s == hal::Status::Ok;
    if (*ok) {
        return 0;
    }
    const uint32_t where = w == fwtest::HandshakeWait::Txq ? protocol::kPpStuckTxq
                           : master                        ? protocol::kPpStuckHandshakeAck
                                                           : protocol::kPpStuckHandshakeHello;
    return k.stuck(r, where, PingPongStep::Handshake, s);
}

int master(fwtest::Kernel& k, const PingPongArgs& a, const protocol::PingPongLayout& l) {
    const uint32_t start = fwtest::wall32();
    fwtest::zero_words(l.rx + a.payload_bytes, 16);
    bool ok = false;
    const int hs = handshake_or_stuck(k, true, l, a.timeout_us, &ok);
    if (!ok) {
        return hs;
    }
    r.handshake_cycles = fwtest::wall32() - start;
    r.rtt_min = 0xFFFFFFFF;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < a.iterations; ++i) {
        fwtest::fill_pattern(l.tx, a.payload_bytes, protocol::ping_seed(i));
        fwtest::write_sync(l.tx + a.payload_bytes, i + 1, a.payload_bytes, 0);
        const uint32_t t0 = fwtest::wall32();
        hal::Status s = fwtest::send(EthTxq::Q0, l.tx, l.rx, l.slot_bytes, a.timeout_us, k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kPpStuckTxq, PingPongStep::Ping, s, i);
        }
        s = fwtest::wait_sync(l.rx + a.payload_bytes, i + 1, fwtest::deadline_us(a.timeout_us),
                              k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kPpStuckPong, PingPongStep::Pong, s, i);
        }
        const uint32_t rtt = fwtest::wall32() - t0;
        r.rtt_min = rtt < r.rtt_min ? rtt : r.rtt_min;
        r.rtt_max = rtt > r.rtt_max ? rtt : r.rtt_max;
        sum += rtt;
        r.mismatches += fwtest::count_mismatches(l.rx, a.payload_bytes, protocol::pong_seed(i));
        r.iterations_done = i + 1;
        k.publish_word(r, r.iterations_done);  // progress the host can read while we run
        k.beat();
    }
    r.rtt_sum_lo = static_cast<uint32_t>(sum);
    r.rtt_sum_hi = static_cast<uint32_t>(sum >> 32);
    // Teardown: the Subordinate's last pong is acknowledged with FIN (its credit back).
    fwtest::store_words(
        l.credit_out,
        protocol::EthChannelSync{protocol::kCreditFin, a.iterations, 0,
                                 protocol::kCreditFin ^ a.iterations ^ protocol::kSyncCheck});
    hal::Status s = fwtest::send(EthTxq::Q0, l.credit_out, l.credit_in, 16, a.timeout_us, k.term());
    if (s == hal::Status::Ok) {
        s = Eth::wait_idle(EthTxq::Q0, fwtest::deadline_us(a.timeout_us), k.term());
    }
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kPpStuckTxq, PingPongStep::Teardown, s);
    }
    if (r.mismatches != 0) {
        return k.fail(r, TestFail::DataMismatch, PingPongStep::Verify, hal::Status::Ok,
                      r.mismatches);
    }
    return k.pass(r);
}

int subordinate(fwtest::Kernel& k, const PingPongArgs& a, const protocol::PingPongLayout& l) {
    const uint32_t start = fwtest::wall32();
    // Nothing from the Master lands here before the handshake answer: clear stale words first.
    fwtest::zero_words(l.rx + a.payload_bytes, 16);
    fwtest::zero_words(l.credit_in, 16);
    bool ok = false;
    const int hs = handshake_or_stuck(k, false, l, a.timeout_us, &ok);
    if (!ok) {
        return hs;
    }
    r.handshake_cycles = fwtest::wall32() - start;
    for (uint32_t i = 0; i < a.iterations; ++i) {
        hal::Status s = fwtest::wait_sync(l.rx + a.payload_bytes, i + 1,
                                          fwtest::deadline_us(a.timeout_us), k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kPpStuckPing, PingPongStep::Ping, s, i);
        }
        r.mismatches += fwtest::count_mismatches(l.rx, a.payload_bytes, protocol::ping_seed(i));
        fwtest::fill_pattern(l.tx, a.payload_bytes, protocol::pong_seed(i));
        fwtest::write_sync(l.tx + a.payload_bytes, i + 1, a.payload_bytes, 1);
        s = fwtest::send(EthTxq::Q0, l.tx, l.rx, l.slot_bytes, a.timeout_us, k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kPpStuckTxq, PingPongStep::Pong, s, i);
        }
        r.iterations_done = i + 1;
        k.publish_word(r, r.iterations_done);  // progress the host can read while we run
        k.beat();
    }
    // End-of-kernel credit wait: the last pong's credit must be back before this kernel ends.
    const hal::Status s = fwtest::wait_word_eq(l.credit_in, protocol::kCreditFin,
                                               fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kPpStuckFinalCredit, PingPongStep::Teardown, s);
    }
    fwtest::zero_words(l.credit_in, 16);
    if (r.mismatches != 0) {
        return k.fail(r, TestFail::DataMismatch, PingPongStep::Verify, hal::Status::Ok,
                      r.mismatches);
    }
    return k.pass(r);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const PingPongArgs a = k.args<PingPongArgs>();
    const protocol::PingPongLayout l = protocol::ping_pong_layout(a.buf_base, a.payload_bytes);
    if (a.payload_bytes % 16 != 0 || a.buf_base % 16 != 0 || a.timeout_us == 0 ||
        l.end > fwtest::kMailboxAddr || a.buf_base < protocol::test_l1_base(hal::kArch.arch)) {
        return k.fail(r, TestFail::BadArgs, PingPongStep::Handshake);
    }
    switch (k.role()) {
        case protocol::KernelRole::Master:
            return master(k, a, l);
        case protocol::KernelRole::Subordinate:
            return subordinate(k, a, l);
        default:
            return k.fail(r, TestFail::BadArgs, PingPongStep::Handshake, hal::Status::Ok,
                          static_cast<uint32_t>(k.role()));
    }
}
