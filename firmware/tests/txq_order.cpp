// Ordering of Ethernet TX queue commands, observed by the receiving firmware (role Subordinate):
//   SeqSlot     the Master sends `count` 16-B packets carrying 1..count to one slot per queue,
//               back to back (interleaved over the queues); the Subordinate samples the slots and
//               must never see a value go down (commands complete in order within a queue)
//   SameQueue   a big transfer then a flag, both on TXQ0: when the flag is visible the big
//               transfer must be complete (its last word is there)
//   CrossQueue  the big transfer on TXQ0, the flag on TXQ1: no ordering across queues; the result
//               records whether the flag overtook the data (the host asserts what the model does)
// The Subordinate answers with a FIN once it has checked everything; the Master waits for it
// (end-of-kernel credit wait), so its sources stay untouched until the peer has them.
#include <stdint.h>

#include "common/eth_link.h"
#include "common/kernel.h"

namespace {

using fwtest::Eth;
using hal::EthTxq;
using protocol::TestFail;
using protocol::TxqOrderArgs;
using protocol::TxqOrderCase;
using protocol::TxqOrderLayout;
using protocol::TxqOrderResults;

enum class Step : uint32_t { Args = 1, Handshake, Send, Observe, Verify, Fin };

TxqOrderResults r{};

int handshake_or_stuck(fwtest::Kernel& k, bool master, const TxqOrderLayout& l,
                       uint32_t timeout_us) {
    fwtest::HandshakeWait w = fwtest::HandshakeWait::None;
    const hal::Status s = fwtest::handshake(master, l.hs_in, l.hs_out, timeout_us, k.term(), &w);
    if (s == hal::Status::Ok) {
        return -1;
    }
    return k.stuck(
        r, w == fwtest::HandshakeWait::Txq ? protocol::kToStuckTxq : protocol::kToStuckHandshake,
        Step::Handshake, s);
}

int master(fwtest::Kernel& k, const TxqOrderArgs& a, const TxqOrderLayout& l) {
    const auto which = static_cast<TxqOrderCase>(a.which);
    // Sources first (nothing may change under a command once it is issued).
    if (which == TxqOrderCase::SeqSlot) {
        for (uint32_t q = 0; q < a.queues; ++q) {
            for (uint32_t j = 0; j < a.count; ++j) {
                fwtest::store_words(l.seq_src[q] + 16 * j,
                                    protocol::EthChannelSync{j + 1, q, 0, 0});
            }
        }
    } else {
        fwtest::fill_pattern(l.big, a.big_bytes, protocol::kTxqOrderSeed);
        fwtest::store_words(l.seq_src[0],
                            protocol::EthChannelSync{protocol::kTxqOrderFlag, 0, 0, 0});
    }
    fwtest::zero_words(l.fin_in, 16);
    const int rc = handshake_or_stuck(k, true, l, a.timeout_us);
    if (rc >= 0) {
        return rc;
    }
    auto send = [&](EthTxq q, uint32_t src, uint32_t dst, uint32_t size) {
        return fwtest::send(q, src, dst, size, a.timeout_us, k.term());
    };
    switch (which) {
        case TxqOrderCase::SeqSlot:
            for (uint32_t j = 0; j < a.count; ++j) {
                for (uint32_t q = 0; q < a.queues; ++q) {
                    const hal::Status s =
                        send(static_cast<EthTxq>(q), l.seq_src[q] + 16 * j, l.slot[q], 16);
                    if (s != hal::Status::Ok) {
                        return k.stuck(r, protocol::kToStuckTxq, Step::Send, s, j);
                    }
                }
            }
            break;
        case TxqOrderCase::SameQueue:
        case TxqOrderCase::CrossQueue: {
            hal::Status s = send(EthTxq::Q0, l.big, l.big, a.big_bytes);
            if (s == hal::Status::Ok) {
                s = send(which == TxqOrderCase::SameQueue ? EthTxq::Q0 : EthTxq::Q1, l.seq_src[0],
                         l.flag, 16);
            }
            if (s != hal::Status::Ok) {
                return k.stuck(r, protocol::kToStuckTxq, Step::Send, s);
            }
            break;
        }
        default:
            return k.fail(r, TestFail::BadArgs, Step::Args, hal::Status::Ok, a.which);
    }
    const hal::Status s = fwtest::wait_word_eq(l.fin_in, protocol::kCreditFin,
                                               fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kToStuckFin, Step::Fin, s);
    }
    fwtest::zero_words(l.fin_in, 16);
    return k.pass(r);
}

int subordinate(fwtest::Kernel& k, const TxqOrderArgs& a, const TxqOrderLayout& l) {
    const auto which = static_cast<TxqOrderCase>(a.which);
    fwtest::zero_words(l.slot[0], 16);
    fwtest::zero_words(l.slot[1], 16);
    fwtest::zero_words(l.flag, 16);
    if (which != TxqOrderCase::SeqSlot) {
        fwtest::zero_words(l.big, a.big_bytes);
    }
    const int rc = handshake_or_stuck(k, false, l, a.timeout_us);
    if (rc >= 0) {
        return rc;
    }
    const uint32_t t0 = fwtest::wall32();
    if (which == TxqOrderCase::SeqSlot) {
        uint32_t last[2] = {0, 0};
        auto sample = [&] {
            bool done = true;
            for (uint32_t q = 0; q < a.queues; ++q) {
                const uint32_t v = fwtest::load32(l.slot[q]);
                if (v != last[q]) {
                    if (v < last[q]) {
                        ++r.decreases[q];
                    }
                    ++r.distinct_seen[q];
                    last[q] = v;
                }
                done = done && v == a.count;
            }
            return done;
        };
        const hal::Status s = hal::wait_until(sample, fwtest::deadline_us(a.timeout_us), k.term());
        r.final_seq[0] = last[0];
        r.final_seq[1] = last[1];
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kToStuckFinal, Step::Observe, s, last[0]);
        }
    } else {
        hal::Status s = fwtest::wait_word_eq(l.flag, protocol::kTxqOrderFlag,
                                             fwtest::deadline_us(a.timeout_us), k.term());
        const uint32_t last_index = a.big_bytes / 4 - 1;
        const uint32_t last_word = fwtest::load32(l.big + 4 * last_index);
        r.flag_cycles = fwtest::wall32() - t0;
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kToStuckFinal, Step::Observe, s);
        }
        r.last_word_present_at_flag =
            last_word == protocol::pattern_word(protocol::kTxqOrderSeed, last_index) ? 1 : 0;
        s = fwtest::wait_word_eq(l.big + 4 * last_index,
                                 protocol::pattern_word(protocol::kTxqOrderSeed, last_index),
                                 fwtest::deadline_us(a.timeout_us), k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kToStuckData, Step::Observe, s);
        }
        r.mismatches_final = fwtest::count_mismatches(l.big, a.big_bytes, protocol::kTxqOrderSeed);
    }
    // Tell the Master everything is checked (its sources may be reused).
    fwtest::store_words(l.fin_out, protocol::EthChannelSync{protocol::kCreditFin, 0, 1, 0});
    hal::Status s = fwtest::send(EthTxq::Q0, l.fin_out, l.fin_in, 16, a.timeout_us, k.term());
    if (s == hal::Status::Ok) {
        s = Eth::wait_idle(EthTxq::Q0, fwtest::deadline_us(a.timeout_us), k.term());
    }
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kToStuckTxq, Step::Fin, s);
    }
    if (r.decreases[0] != 0 || r.decreases[1] != 0) {
        return k.fail(r, TestFail::Unexpected, Step::Verify, hal::Status::Ok,
                      r.decreases[0] | (r.decreases[1] << 16));
    }
    if (r.mismatches_final != 0) {
        return k.fail(r, TestFail::DataMismatch, Step::Verify, hal::Status::Ok, r.mismatches_final);
    }
    if (which == TxqOrderCase::SameQueue && r.last_word_present_at_flag == 0) {
        return k.fail(r, TestFail::Unexpected, Step::Verify, hal::Status::Ok, 1);
    }
    return k.pass(r);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const TxqOrderArgs a = k.args<TxqOrderArgs>();
    const TxqOrderLayout l = protocol::txq_order_layout(a.buf_base, a.count);
    const auto which = static_cast<TxqOrderCase>(a.which);
    const bool seq = which == TxqOrderCase::SeqSlot;
    const bool big = which == TxqOrderCase::SameQueue || which == TxqOrderCase::CrossQueue;
    if ((!seq && !big) || a.timeout_us == 0 || a.buf_base % 16 != 0 ||
        a.buf_base < protocol::test_l1_base(hal::kArch.arch) ||
        (seq && (a.count == 0 || a.queues == 0 || a.queues > 2)) ||
        (big && (a.big_bytes < 16 || a.big_bytes % 16 != 0)) ||
        l.big + (big ? a.big_bytes : 0) > fwtest::kMailboxAddr) {
        return k.fail(r, TestFail::BadArgs, Step::Args);
    }
    switch (k.role()) {
        case protocol::KernelRole::Master:
            return master(k, a, l);
        case protocol::KernelRole::Subordinate:
            return subordinate(k, a, l);
        default:
            return k.fail(r, TestFail::BadArgs, Step::Args, hal::Status::Ok,
                          static_cast<uint32_t>(k.role()));
    }
}
