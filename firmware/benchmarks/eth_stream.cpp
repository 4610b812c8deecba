// A flow-controlled stream of packets over one Ethernet link (protocol::EthStreamArgs): the
// bandwidth benchmark's kernel, and with `verify` set the kernel of the link-fault test.
//
// Master: holds `channels` credits in a stream register (reset to `channels` before the
// handshake); for packet i it takes a credit (waiting if there is none), writes the packet's
// EthChannelSync as the last 16 B of slot i % channels (and, with verify, the payload pattern
// before it), and sends the whole slot to the same address on the peer, on TXQ i % queues. At the
// end it waits for every credit to come back (seeds/002 end-of-kernel credit wait).
// Subordinate: waits for packet i's sync in its slot, checks the payload (verify), and returns the
// credit with a remote register write that increments the Master's stream (the fabric's credit
// scheme, reference §1.4).
#include <stdint.h>

#include "common/eth_link.h"
#include "common/kernel.h"

namespace {

using fwtest::Eth;
using fwtest::Streams;
using hal::EthTxq;
using protocol::EthStreamArgs;
using protocol::EthStreamResults;
using protocol::EthStreamStep;
using protocol::TestFail;

EthStreamResults r{};

int handshake_or_stuck(fwtest::Kernel& k, bool master, const EthStreamArgs& a) {
    fwtest::HandshakeWait w = fwtest::HandshakeWait::None;
    const hal::Status s =
        fwtest::handshake(master, a.buf_base, a.buf_base + 0x10, a.timeout_us, k.term(), &w);
    if (s == hal::Status::Ok) {
        return -1;
    }
    const uint32_t where = w == fwtest::HandshakeWait::Txq ? protocol::kEsStuckTxq
                           : master                        ? protocol::kEsStuckHandshakeAck
                                                           : protocol::kEsStuckHandshakeHello;
    return k.stuck(r, where, EthStreamStep::Handshake, s);
}

int master(fwtest::Kernel& k, const EthStreamArgs& a, hal::StreamId credits) {
    const uint32_t payload = a.packet_bytes - 16;
    FW_EXPECT_STATUS(k, r, Streams::reset(credits, a.channels), hal::Status::Ok,
                     EthStreamStep::Args, 1);
    if (a.handshake != 0) {
        const int rc = handshake_or_stuck(k, true, a);
        if (rc >= 0) {
            return rc;
        }
    }
    const uint32_t t0 = fwtest::wall32();
    r.first_cycle_lo = t0;
    for (uint32_t i = 0; i < a.packets; ++i) {
        const uint32_t slot = protocol::eth_stream_slot(a.buf_base, a.packet_bytes, i % a.channels);
        if (Streams::read(credits) == 0) {
            ++r.credit_waits;
            const hal::Status s = hal::wait_until([credits] { return Streams::read(credits) != 0; },
                                                  fwtest::deadline_us(a.timeout_us), k.term());
            if (s != hal::Status::Ok) {
                return k.stuck(r, protocol::kEsStuckCredit, EthStreamStep::Send, s, i);
            }
        }
        FW_EXPECT_STATUS(k, r, Streams::add(credits, -1), hal::Status::Ok, EthStreamStep::Send, i);
        if (a.verify != 0) {
            fwtest::fill_pattern(slot, payload, protocol::eth_stream_seed(a.seed, i));
        }
        fwtest::write_sync(slot + payload, i + 1, payload, 0);
        const EthTxq q = (a.queues == 2 && (i & 1) != 0) ? EthTxq::Q1 : EthTxq::Q0;
        const hal::Status s = fwtest::send(q, slot, slot, a.packet_bytes, a.timeout_us, k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kEsStuckTxq, EthStreamStep::Send, s, i);
        }
        r.packets_done = i + 1;
        k.publish_word(r, r.packets_done);  // progress the host can read while we run (one store)
        if ((i & 63) == 0) {
            k.beat();
        }
    }
    const hal::Status s = hal::wait_until([&] { return Streams::read(credits) == a.channels; },
                                          fwtest::deadline_us(a.timeout_us), k.term());
    r.cycles = fwtest::wall32() - t0;
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kEsStuckFinalCredits, EthStreamStep::Teardown, s,
                       Streams::read(credits));
    }
    return k.pass(r);
}

int subordinate(fwtest::Kernel& k, const EthStreamArgs& a, hal::StreamId credits) {
    const uint32_t payload = a.packet_bytes - 16;
    const auto one = Streams::encode_delta(1);
    const uint32_t credit_reg = Streams::update_reg_addr(credits);
    if (a.handshake != 0) {
        // Nothing from the Master lands in the slots before the handshake answer: clear stale
        // syncs first. (Without the handshake the host must have cleared them.)
        for (uint32_t c = 0; c < a.channels; ++c) {
            fwtest::zero_words(protocol::eth_stream_slot(a.buf_base, a.packet_bytes, c) + payload,
                               16);
        }
        const int rc = handshake_or_stuck(k, false, a);
        if (rc >= 0) {
            return rc;
        }
    }
    uint32_t t_first = 0, t_from = 0, t_to = 0;
    const protocol::SteadyWindow window = protocol::eth_stream_steady_window(a.packets);
    r.steady_from = window.from;
    r.steady_to = window.to;
    for (uint32_t i = 0; i < a.packets; ++i) {
        const uint32_t slot = protocol::eth_stream_slot(a.buf_base, a.packet_bytes, i % a.channels);
        const hal::Status s =
            fwtest::wait_sync(slot + payload, i + 1, fwtest::deadline_us(a.timeout_us), k.term());
        if (s != hal::Status::Ok) {
            return k.stuck(r, protocol::kEsStuckPacket, EthStreamStep::Receive, s, i);
        }
        if (i == 0) {
            t_first = fwtest::wall32();
            r.first_cycle_lo = t_first;
        }
        if (i == window.from) {
            t_from = fwtest::wall32();
        }
        if (i == window.to) {
            t_to = fwtest::wall32();
        }
        if (fwtest::load32(slot + payload + 4) != payload) {
            ++r.sync_errors;
        }
        if (a.verify != 0) {
            r.mismatches +=
                fwtest::count_mismatches(slot, payload, protocol::eth_stream_seed(a.seed, i));
        }
        const hal::Status c =
            fwtest::write_remote_reg(EthTxq::Q0, credit_reg, one.value, a.timeout_us, k.term());
        if (c != hal::Status::Ok) {
            return k.stuck(r, protocol::kEsStuckTxq, EthStreamStep::Receive, c, i);
        }
        r.packets_done = i + 1;
        k.publish_word(r, r.packets_done);  // progress the host can read while we run (one store)
        if ((i & 63) == 0) {
            k.beat();
        }
    }
    r.cycles = fwtest::wall32() - t_first;
    r.steady_cycles = t_to - t_from;
    const hal::Status s = Eth::wait_idle(EthTxq::Q0, fwtest::deadline_us(a.timeout_us), k.term());
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kEsStuckTxq, EthStreamStep::Teardown, s);
    }
    if (r.mismatches != 0 || r.sync_errors != 0) {
        return k.fail(r, TestFail::DataMismatch, EthStreamStep::Verify, hal::Status::Ok,
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
    const EthStreamArgs a = k.args<EthStreamArgs>();
    const auto credits = Streams::make_id(a.credit_stream);
    if (!credits.ok() || a.packet_bytes < 16 || a.packet_bytes % 16 != 0 || a.channels == 0 ||
        a.channels > protocol::kEthStreamMaxChannels || a.packets == 0 ||
        (a.queues != 1 && a.queues != 2) || a.buf_base % 16 != 0 || a.timeout_us == 0 ||
        a.buf_base < protocol::test_l1_base(hal::kArch.arch) ||
        protocol::eth_stream_end(a.buf_base, a.packet_bytes, a.channels) > fwtest::kMailboxAddr) {
        return k.fail(r, TestFail::BadArgs, EthStreamStep::Args);
    }
    switch (k.role()) {
        case protocol::KernelRole::Master:
            return master(k, a, credits.value);
        case protocol::KernelRole::Subordinate:
            return subordinate(k, a, credits.value);
        default:
            return k.fail(r, TestFail::BadArgs, EthStreamStep::Args, hal::Status::Ok,
                          static_cast<uint32_t>(k.role()));
    }
}
