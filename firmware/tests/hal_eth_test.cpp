// Every Ethernet HAL call from firmware, to a link peer that stays passive: the argument checks
// (nothing reaches the queue), a send that keeps TXQ0 busy (try_send / try_write_remote_reg say
// Busy, is_busy holds, wait_idle returns once the command is read out), sends on TXQ0 and TXQ1,
// remote register writes on TXQ0 (a stream counter and a scratch register on the peer), and the
// remote register write on TXQ1 that the HAL refuses with Unsupported. The host checks the peer's
// L1 and registers and the link statistics after the run.
#include <stdint.h>

#include "common/eth_link.h"
#include "common/kernel.h"

namespace {

using fwtest::Eth;
using fwtest::Streams;
using hal::EthTxq;
using protocol::HalEthArgs;
using protocol::HalEthResults;
using protocol::HalEthStep;
using protocol::TestFail;

constexpr const hal::ArchMap& A = hal::kArch;
constexpr EthTxq kNoSuchQueue = static_cast<EthTxq>(3);

uint32_t transfer_cnt(uint32_t q) {
    return hal::mmio::read32(hal::eth::txq_reg(q, hal::eth::kTxqTransferCnt));
}

HalEthResults r{};

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const HalEthArgs a = k.args<HalEthArgs>();
    const auto sid = Streams::make_id(a.peer_stream);
    if (!sid.ok() || a.size_a == 0 || a.size_b == 0 || a.busy_bytes == 0) {
        return k.fail(r, TestFail::BadArgs, HalEthStep::ArgErrors);
    }
    const uint32_t src_a = a.local_src;
    const uint32_t src_b = src_a + a.size_a;
    const uint32_t src_busy = src_b + a.size_b;
    const uint32_t update_reg = Streams::update_reg_addr(sid.value);
    const uint32_t scratch_reg = Streams::reg_addr(sid.value, A.stream.remote_src);
    const uint32_t cnt0 = transfer_cnt(0), cnt1 = transfer_cnt(1);
    auto dl = [&] { return fwtest::deadline_us(a.timeout_us); };

    // ---- argument checks: refused before any register is written ----
    {
        struct Case {
            hal::Status got, want;
        };
        const Case cases[] = {
            {Eth::try_send(EthTxq::Q0, src_a + 8, a.peer_a, 16), hal::Status::Misaligned},
            {Eth::try_send(EthTxq::Q0, src_a, a.peer_a + 4, 16), hal::Status::Misaligned},
            {Eth::try_send(EthTxq::Q0, src_a, a.peer_a, 24), hal::Status::Misaligned},
            {Eth::try_send(EthTxq::Q0, src_a, a.peer_a, 0), hal::Status::BadArg},
            {Eth::try_send(EthTxq::Q0, A.eth_l1_size - 16, a.peer_a, 32), hal::Status::OutOfRange},
            {Eth::try_send(EthTxq::Q0, src_a, A.eth_l1_size - 16, 32), hal::Status::OutOfRange},
            {Eth::send(kNoSuchQueue, src_a, a.peer_a, 16, dl(), k.term()), hal::Status::BadArg},
            {Eth::try_write_remote_reg(EthTxq::Q0, update_reg + 2, 1), hal::Status::Misaligned},
            {Eth::try_write_remote_reg(kNoSuchQueue, update_reg, 1), hal::Status::BadArg},
            {Eth::wait_idle(kNoSuchQueue, dl(), k.term()), hal::Status::BadArg},
            {Eth::set_accept_ahead(kNoSuchQueue), hal::Status::BadArg},
        };
        uint32_t i = 0;
        for (const Case& c : cases) {
            FW_EXPECT_STATUS(k, r, c.got, c.want, HalEthStep::ArgErrors, i);
            ++i;
        }
        FW_EXPECT(k, r, Eth::is_busy(kNoSuchQueue), TestFail::Unexpected, HalEthStep::ArgErrors, i);
        FW_EXPECT(k, r, transfer_cnt(0) == cnt0 && transfer_cnt(1) == cnt1,
                  TestFail::CounterMismatch, HalEthStep::ArgErrors, transfer_cnt(0));
        r.arg_errors_checked = i + 1;
    }
    FW_EXPECT_STATUS(k, r, Eth::set_accept_ahead(EthTxq::Q0), hal::Status::Ok,
                     HalEthStep::ArgErrors, 100);
    FW_EXPECT_STATUS(k, r, Eth::set_accept_ahead(EthTxq::Q1), hal::Status::Ok,
                     HalEthStep::ArgErrors, 101);

    // ---- a long send keeps TXQ0 busy ----
    fwtest::fill_pattern(src_busy, a.busy_bytes, protocol::kHalEthSeedBusy);
    fwtest::fill_pattern(src_a, a.size_a, protocol::kHalEthSeedA);
    FW_EXPECT_STATUS(k, r, Eth::wait_idle(EthTxq::Q0, dl(), k.term()), hal::Status::Ok,
                     HalEthStep::Busy, 0);
    const uint32_t t0 = fwtest::wall32();
    FW_EXPECT_STATUS(k, r, Eth::try_send(EthTxq::Q0, src_busy, a.peer_busy, a.busy_bytes),
                     hal::Status::Ok, HalEthStep::Busy, 1);
    r.busy_try_send_status =
        static_cast<uint32_t>(Eth::try_send(EthTxq::Q0, src_a, a.peer_a, a.size_a));
    r.busy_try_reg_status =
        static_cast<uint32_t>(Eth::try_write_remote_reg(EthTxq::Q0, update_reg, 0));
    FW_EXPECT(k, r, Eth::is_busy(EthTxq::Q0), TestFail::Unexpected, HalEthStep::Busy, 2);
    FW_EXPECT_STATUS(k, r, Eth::wait_idle(EthTxq::Q0, dl(), k.term()), hal::Status::Ok,
                     HalEthStep::Busy, 3);
    r.busy_cycles = fwtest::wall32() - t0;
    FW_EXPECT(k, r,
              r.busy_try_send_status == static_cast<uint32_t>(hal::Status::Busy) &&
                  r.busy_try_reg_status == static_cast<uint32_t>(hal::Status::Busy),
              TestFail::Unexpected, HalEthStep::Busy, r.busy_try_send_status);

    // ---- data on TXQ0 and TXQ1 (separate source buffers: a source may only be reused once the
    // peer confirms it has the data, and this peer is passive) ----
    FW_EXPECT_STATUS(k, r, Eth::send(EthTxq::Q0, src_a, a.peer_a, a.size_a, dl(), k.term()),
                     hal::Status::Ok, HalEthStep::SendQ0, 0);
    fwtest::fill_pattern(src_b, a.size_b, protocol::kHalEthSeedB);
    FW_EXPECT_STATUS(k, r, Eth::send(EthTxq::Q1, src_b, a.peer_b, a.size_b, dl(), k.term()),
                     hal::Status::Ok, HalEthStep::SendQ1, 0);

    // ---- remote register writes on TXQ0: two increments and a scratch write ----
    const auto d1 = Streams::encode_delta(protocol::kHalEthRemoteDelta1);
    const auto d2 = Streams::encode_delta(protocol::kHalEthRemoteDelta2);
    FW_EXPECT(k, r, d1.ok() && d2.ok(), TestFail::BadArgs, HalEthStep::RemoteReg, 0);
    FW_EXPECT_STATUS(k, r, Eth::write_remote_reg(EthTxq::Q0, update_reg, d1.value, dl(), k.term()),
                     hal::Status::Ok, HalEthStep::RemoteReg, 1);
    FW_EXPECT_STATUS(k, r, Eth::write_remote_reg(EthTxq::Q0, update_reg, d2.value, dl(), k.term()),
                     hal::Status::Ok, HalEthStep::RemoteReg, 2);
    FW_EXPECT_STATUS(
        k, r, Eth::write_remote_reg(EthTxq::Q0, scratch_reg, a.peer_scratch_value, dl(), k.term()),
        hal::Status::Ok, HalEthStep::RemoteReg, 3);

    // ---- TXQ1 cannot carry remote register writes ----
    r.q1_remote_try_status =
        static_cast<uint32_t>(Eth::try_write_remote_reg(EthTxq::Q1, update_reg, d1.value));
    r.q1_remote_wait_status = static_cast<uint32_t>(
        Eth::write_remote_reg(EthTxq::Q1, update_reg, d1.value, dl(), k.term()));
    FW_EXPECT(k, r,
              r.q1_remote_try_status == static_cast<uint32_t>(hal::Status::Unsupported) &&
                  r.q1_remote_wait_status == static_cast<uint32_t>(hal::Status::Unsupported),
              TestFail::Unexpected, HalEthStep::RemoteRegQ1Refused, r.q1_remote_try_status);

    // ---- every command read out; the queues counted exactly what was sent ----
    FW_EXPECT_STATUS(k, r, Eth::wait_idle(EthTxq::Q0, dl(), k.term()), hal::Status::Ok,
                     HalEthStep::Counters, 0);
    FW_EXPECT_STATUS(k, r, Eth::wait_idle(EthTxq::Q1, dl(), k.term()), hal::Status::Ok,
                     HalEthStep::Counters, 1);
    r.q0_transfer_cnt = transfer_cnt(0) - cnt0;
    r.q1_transfer_cnt = transfer_cnt(1) - cnt1;
    FW_EXPECT(k, r, r.q0_transfer_cnt == 5 && r.q1_transfer_cnt == 1, TestFail::CounterMismatch,
              HalEthStep::Counters, r.q0_transfer_cnt);
    return k.pass(r);
}
