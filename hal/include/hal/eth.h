// Ethernet TX queues: send a 16-byte-aligned L1 range to the peer core's L1 (TT-link data packet)
// and write a register on the peer (TT-link MMIO write packet).
//
// Every entry point checks its arguments before touching a register: a misaligned address or
// size, a range outside L1, a queue the arch does not have, or a remote register write on a queue
// that cannot carry one comes back as an error status and nothing is sent. The try_* calls never
// wait (Busy if the queue has not latched the previous command); the others wait for the queue
// through wait_until with the caller's deadline and termination word.
//
// TT-link resends from L1 until the peer acknowledges and gives no signal when it has finished
// reading the source: a source buffer may only be reused once the peer says it has the data.
#pragma once

#include <stdint.h>

#include "hal/arch_map.h"
#include "hal/clock.h"
#include "hal/encoding.h"
#include "hal/mmio.h"
#include "hal/status.h"
#include "hal/wait.h"

namespace hal {

enum class EthTxq : uint8_t { Q0 = 0, Q1 = 1, Q2 = 2 };

template <const ArchMap& A>
struct Eth {
    static constexpr uint32_t index(EthTxq q) { return static_cast<uint32_t>(q); }
    static constexpr bool queue_exists(EthTxq q) { return index(q) < A.eth_tx_queues; }
    static constexpr bool queue_writes_remote_regs(EthTxq q) {
        return queue_exists(q) && ((A.eth.remote_reg_write_queues >> index(q)) & 1u) != 0;
    }

    // True while the queue has not yet latched its previous command. A queue the arch does not
    // have reads as busy. On arches that need it (BH-55) ETH_TXQ_CMD is read back first so the
    // status read cannot overtake the preceding command write.
    [[nodiscard]] static bool is_busy(EthTxq q) {
        if (!queue_exists(q)) {
            return true;
        }
        if (A.eth.txq_busy_cmd_readback) {
            (void)mmio::read32(eth::txq_reg(index(q), eth::kTxqCmd));
        }
        return (mmio::read32(eth::txq_reg(index(q), A.eth.txq_busy_reg)) & A.eth.txq_busy_mask) !=
               0;
    }

    // The argument checks of send()/try_send(), without sending.
    [[nodiscard]] static constexpr Status check_send(EthTxq q, uint32_t src_l1, uint32_t dst_l1,
                                                     uint32_t size) {
        if (!queue_exists(q) || size == 0) {
            return Status::BadArg;
        }
        if (src_l1 % eth::kDataAlignment != 0 || dst_l1 % eth::kDataAlignment != 0 ||
            size % eth::kDataAlignment != 0) {
            return Status::Misaligned;
        }
        if (static_cast<uint64_t>(src_l1) + size > A.eth_l1_size ||
            static_cast<uint64_t>(dst_l1) + size > A.eth_l1_size) {
            return Status::OutOfRange;
        }
        return Status::Ok;
    }

    // The argument checks of write_remote_reg()/try_write_remote_reg().
    [[nodiscard]] static constexpr Status check_remote_reg(EthTxq q, uint32_t reg_addr) {
        if (!queue_exists(q)) {
            return Status::BadArg;
        }
        if (!queue_writes_remote_regs(q)) {
            return Status::Unsupported;
        }
        if (reg_addr % eth::kRemoteRegAlignment != 0) {
            return Status::Misaligned;
        }
        return Status::Ok;
    }

    // Send `size` bytes from local L1 `src_l1` to the peer's L1 `dst_l1` if the queue is free now.
    [[nodiscard]] static Status try_send(EthTxq q, uint32_t src_l1, uint32_t dst_l1,
                                         uint32_t size) {
        HAL_TRY(check_send(q, src_l1, dst_l1, size));
        if (is_busy(q)) {
            return Status::Busy;
        }
        program_send(q, src_l1, dst_l1, size);
        return Status::Ok;
    }

    // As try_send, waiting (bounded) for the queue to be free.
    [[nodiscard]] static Status send(EthTxq q, uint32_t src_l1, uint32_t dst_l1, uint32_t size,
                                     Deadline deadline,
                                     const uint32_t* termination_word = nullptr) {
        HAL_TRY(check_send(q, src_l1, dst_l1, size));
        HAL_TRY(wait_idle(q, deadline, termination_word));
        program_send(q, src_l1, dst_l1, size);
        return Status::Ok;
    }

    // Write `value` to the 4-byte-aligned register `reg_addr` on the peer core, if the queue is
    // free now. Only queues in ArchMap::eth.remote_reg_write_queues (TXQ0) can: others return
    // Unsupported.
    [[nodiscard]] static Status try_write_remote_reg(EthTxq q, uint32_t reg_addr, uint32_t value) {
        HAL_TRY(check_remote_reg(q, reg_addr));
        if (is_busy(q)) {
            return Status::Busy;
        }
        program_remote_reg(q, reg_addr, value);
        return Status::Ok;
    }

    // As try_write_remote_reg, waiting (bounded) for the queue to be free.
    [[nodiscard]] static Status write_remote_reg(EthTxq q, uint32_t reg_addr, uint32_t value,
                                                 Deadline deadline,
                                                 const uint32_t* termination_word = nullptr) {
        HAL_TRY(check_remote_reg(q, reg_addr));
        HAL_TRY(wait_idle(q, deadline, termination_word));
        program_remote_reg(q, reg_addr, value);
        return Status::Ok;
    }

    // try_send / try_write_remote_reg for a hot loop that has done their work ahead: the
    // arguments passed check_send / check_remote_reg (for every value the caller can pass, e.g. a
    // ring of slots checked once at start-up) and the caller has just seen is_busy(q) false with
    // nothing issued on q since. No checks, no second busy read: the command registers only.
    static void send_prechecked(EthTxq q, uint32_t src_l1, uint32_t dst_l1, uint32_t size) {
        program_send(q, src_l1, dst_l1, size);
    }
    static void write_remote_reg_prechecked(EthTxq q, uint32_t reg_addr, uint32_t value) {
        program_remote_reg(q, reg_addr, value);
    }

    // Wait (bounded) until the queue can take a command.
    [[nodiscard]] static Status wait_idle(EthTxq q, Deadline deadline,
                                          const uint32_t* termination_word = nullptr) {
        if (!queue_exists(q)) {
            return Status::BadArg;
        }
        return wait_until([q] { return !is_busy(q); }, deadline, termination_word);
    }

    // How many data packets the queue may send ahead of acknowledgements
    // (ETH_TXQ_DATA_PACKET_ACCEPT_AHEAD); the reference firmware sets 32 at kernel start.
    [[nodiscard]] static Status set_accept_ahead(EthTxq q,
                                                 uint32_t packets = eth::kDefaultAcceptAhead) {
        if (!queue_exists(q)) {
            return Status::BadArg;
        }
        mmio::write32(eth::txq_reg(index(q), eth::kTxqDataPacketAcceptAhead), packets);
        return Status::Ok;
    }

  private:
    static void program_send(EthTxq q, uint32_t src_l1, uint32_t dst_l1, uint32_t size) {
        const uint32_t i = index(q);
        mmio::write32(eth::txq_reg(i, eth::kTxqTransferStartAddr), src_l1);
        mmio::write32(eth::txq_reg(i, eth::kTxqTransferSizeBytes), size);
        mmio::write32(eth::txq_reg(i, eth::kTxqDestAddr), dst_l1);
        mmio::write32(eth::txq_reg(i, eth::kTxqCmd), eth::kCmdDataPacket);
    }

    static void program_remote_reg(EthTxq q, uint32_t reg_addr, uint32_t value) {
        const uint32_t i = index(q);
        mmio::write32(eth::txq_reg(i, eth::kTxqDestAddr), reg_addr);
        mmio::write32(eth::txq_reg(i, eth::kTxqRemoteRegData), value);
        mmio::write32(eth::txq_reg(i, eth::kTxqCmd), eth::kCmdRemoteRegWrite);
    }
};

}  // namespace hal
