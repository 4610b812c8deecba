// Bad requests, as firmware sees them and as the model records them:
//   1. through the HAL: a misaligned Ethernet source, destination and size, and a remote register
//      write on TXQ1, are refused with a status and reach no register (TRANSFER_CNT unchanged);
//   2. the same mistakes written straight to the TX queue registers (what buggy firmware without
//      the HAL would do): the model drops each command and records an error (MisalignedStart,
//      MisalignedSize, RemoteRegWriteNotSupported) that the host test matches exactly;
//   3. a NOC write and a read to an address outside the target core's memory: the HAL cannot know
//      the target's size and accepts them; the model records a bus error (AddressRefused) and
//      still completes the requests, so the barriers return and nothing hangs.
#include <stdint.h>

#include "common/eth_link.h"
#include "common/kernel.h"
#include "hal/noc.h"
#include "hal/timeouts.h"

namespace {

using fwtest::Eth;
using fwtest::Streams;
using hal::EthTxq;
using protocol::BadInputArgs;
using protocol::BadInputResults;
using protocol::BadInputStep;
using protocol::TestFail;

BadInputResults r{};

uint32_t transfer_cnt(uint32_t q) {
    return hal::mmio::read32(hal::eth::txq_reg(q, hal::eth::kTxqTransferCnt));
}

void raw_send(uint32_t q, uint32_t src, uint32_t dst, uint32_t size) {
    hal::mmio::write32(hal::eth::txq_reg(q, hal::eth::kTxqTransferStartAddr), src);
    hal::mmio::write32(hal::eth::txq_reg(q, hal::eth::kTxqTransferSizeBytes), size);
    hal::mmio::write32(hal::eth::txq_reg(q, hal::eth::kTxqDestAddr), dst);
    hal::mmio::write32(hal::eth::txq_reg(q, hal::eth::kTxqCmd), hal::eth::kCmdDataPacket);
}

void raw_remote_reg(uint32_t q, uint32_t reg, uint32_t value) {
    hal::mmio::write32(hal::eth::txq_reg(q, hal::eth::kTxqDestAddr), reg);
    hal::mmio::write32(hal::eth::txq_reg(q, hal::eth::kTxqRemoteRegData), value);
    hal::mmio::write32(hal::eth::txq_reg(q, hal::eth::kTxqCmd), hal::eth::kCmdRemoteRegWrite);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const BadInputArgs a = k.args<BadInputArgs>();
    const auto sid = Streams::make_id(a.peer_stream);
    if (!sid.ok() || a.local_buf % 16 != 0 || a.peer_buf % 16 != 0) {
        return k.fail(r, TestFail::BadArgs, BadInputStep::HalEth);
    }
    const uint32_t update_reg = Streams::update_reg_addr(sid.value);
    fwtest::fill_pattern(a.local_buf, 64, 0xBAD);

    // ---- 1. refused by the HAL ----
    const uint32_t cnt = transfer_cnt(0) + transfer_cnt(1);
    r.hal_misaligned_src = static_cast<uint32_t>(
        Eth::try_send(EthTxq::Q0, a.local_buf + protocol::kBadInputMisalignOffset, a.peer_buf, 16));
    r.hal_misaligned_dst =
        static_cast<uint32_t>(Eth::try_send(EthTxq::Q0, a.local_buf, a.peer_buf + 8, 16));
    r.hal_misaligned_size = static_cast<uint32_t>(
        Eth::try_send(EthTxq::Q0, a.local_buf, a.peer_buf, protocol::kBadInputMisalignedSize));
    r.hal_q1_remote = static_cast<uint32_t>(Eth::try_write_remote_reg(EthTxq::Q1, update_reg, 1));
    r.transfer_cnt_after_hal = transfer_cnt(0) + transfer_cnt(1) - cnt;
    const uint32_t mis = static_cast<uint32_t>(hal::Status::Misaligned);
    FW_EXPECT(k, r,
              r.hal_misaligned_src == mis && r.hal_misaligned_dst == mis &&
                  r.hal_misaligned_size == mis &&
                  r.hal_q1_remote == static_cast<uint32_t>(hal::Status::Unsupported),
              TestFail::Unexpected, BadInputStep::HalEth, 0);
    FW_EXPECT(k, r, r.transfer_cnt_after_hal == 0, TestFail::CounterMismatch, BadInputStep::HalEth,
              r.transfer_cnt_after_hal);

    // ---- 2. the same mistakes, straight to the registers ----
    raw_send(0, a.local_buf + protocol::kBadInputMisalignOffset, a.peer_buf, 16);
    raw_send(0, a.local_buf, a.peer_buf, protocol::kBadInputMisalignedSize);
    raw_remote_reg(1, update_reg, 1);
    // The model drops them: the queues stay free and count nothing.
    FW_EXPECT(k, r, !Eth::is_busy(EthTxq::Q0) && !Eth::is_busy(EthTxq::Q1), TestFail::Unexpected,
              BadInputStep::RawEth, 0);
    FW_EXPECT(k, r, transfer_cnt(0) + transfer_cnt(1) == cnt, TestFail::CounterMismatch,
              BadInputStep::RawEth, transfer_cnt(0) + transfer_cnt(1) - cnt);

    // ---- 3. NOC requests outside the target's memory ----
    hal::Noc<hal::kArch> noc{hal::NocId::Noc0};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, BadInputStep::Noc, 0);
    const hal::NocAddr bad{a.target_x, a.target_y, a.bad_noc_addr};
    auto dl = [] { return hal::Deadline::after_us(hal::kArch, hal::timeouts::kNocBarrierUs); };
    r.noc_write_status = static_cast<uint32_t>(noc.write(a.local_buf, bad, 64));
    r.noc_barrier_status = static_cast<uint32_t>(noc.write_barrier(dl(), k.term()));
    r.noc_read_status = static_cast<uint32_t>(noc.read(bad, a.local_buf, 64));
    r.noc_read_barrier_status = static_cast<uint32_t>(noc.read_barrier(dl(), k.term()));
    const uint32_t ok = static_cast<uint32_t>(hal::Status::Ok);
    FW_EXPECT(k, r,
              r.noc_write_status == ok && r.noc_barrier_status == ok && r.noc_read_status == ok &&
                  r.noc_read_barrier_status == ok,
              TestFail::Unexpected, BadInputStep::Noc, 1);
    return k.pass(r);
}
