// Ethernet helpers shared by the kernels that talk to their link peer: the start-of-kernel
// handshake of seeds/002, packets that end in an EthChannelSync, and waits on L1 words written by
// the peer. Every wait is bounded (deadline + termination word) and returns the HAL status.
#pragma once

#include <stdint.h>

#include "common/kernel.h"
#include "hal/arch.h"
#include "hal/clock.h"
#include "hal/eth.h"
#include "hal/stream.h"
#include "hal/wait.h"
#include "protocol/test_kernels.h"

namespace fwtest {

using Eth = hal::Eth<hal::kArch>;
using Streams = hal::Streams<hal::kArch>;

// Send on queue q: at once if the queue is free (no clock read, no deadline), else through the
// bounded wait of Eth::send. Same statuses as Eth::send.
inline hal::Status send(hal::EthTxq q, uint32_t src, uint32_t dst, uint32_t size,
                        uint32_t timeout_us, const uint32_t* term) {
    const hal::Status s = Eth::try_send(q, src, dst, size);
    if (s != hal::Status::Busy) {
        return s;
    }
    return Eth::send(q, src, dst, size, deadline_us(timeout_us), term);
}

// Remote register write on queue q, the same way.
inline hal::Status write_remote_reg(hal::EthTxq q, uint32_t reg, uint32_t value,
                                    uint32_t timeout_us, const uint32_t* term) {
    const hal::Status s = Eth::try_write_remote_reg(q, reg, value);
    if (s != hal::Status::Busy) {
        return s;
    }
    return Eth::write_remote_reg(q, reg, value, deadline_us(timeout_us), term);
}

// Wait until the L1 word at `addr` equals `expected`.
inline hal::Status wait_word_eq(uint32_t addr, uint32_t expected, hal::Deadline d,
                                const uint32_t* term) {
    return hal::wait_until([addr, expected] { return load32(addr) == expected; }, d, term);
}

// Wait until the L1 word at `addr` is not `value`.
inline hal::Status wait_word_ne(uint32_t addr, uint32_t value, hal::Deadline d,
                                const uint32_t* term) {
    return hal::wait_until([addr, value] { return load32(addr) != value; }, d, term);
}

// Write an EthChannelSync for packet `seq` (already + 1) at `addr`.
inline void write_sync(uint32_t addr, uint32_t seq, uint32_t bytes_sent, uint32_t src_id) {
    const protocol::EthChannelSync s{seq, bytes_sent, src_id,
                                     seq ^ bytes_sent ^ protocol::kSyncCheck};
    store_words(addr, s);
}

// The sync at `addr` is complete and says packet `seq`.
inline bool sync_is(uint32_t addr, uint32_t seq) {
    protocol::EthChannelSync s;
    load_words(s, addr);
    return s.seq == seq && s.check == (s.seq ^ s.bytes_sent ^ protocol::kSyncCheck);
}

// Wait for the sync at `addr` to say `seq`. Polls the seq word alone (one L1 load per pass) and
// checks the whole sync once it matches.
inline hal::Status wait_sync(uint32_t addr, uint32_t seq, hal::Deadline d, const uint32_t* term) {
    return hal::wait_until([addr, seq] { return load32(addr) == seq && sync_is(addr, seq); }, d,
                           term);
}

// Start-of-kernel handshake (seeds/002, "Ethernet Kernel Setup"): before anything else crosses the
// link, the Master sends a 16-B hello into a scratch slot the peer does not use for anything else
// and waits for the answer; the Subordinate waits for the hello and answers. Each side clears its
// own slot once it has consumed it, so nothing stale is left for the next kernel.
//   hs_in  : 16 B the peer writes into     hs_out : 16 B this core sends from
// Returns Ok, or the status of the wait or send that failed; *stuck_wait says which wait
// (ack for the Master, hello for the Subordinate, TX queue for a send).
enum class HandshakeWait : uint8_t { None, Ack, Hello, Txq };

inline hal::Status handshake(bool master, uint32_t hs_in, uint32_t hs_out, uint32_t timeout_us,
                             const uint32_t* term, HandshakeWait* stuck_wait) {
    *stuck_wait = HandshakeWait::None;
    if (master) {
        store_words(hs_out,
                    protocol::EthChannelSync{protocol::kHandshakeHello, 0, 0,
                                             protocol::kHandshakeHello ^ protocol::kSyncCheck});
        hal::Status s =
            Eth::send(hal::EthTxq::Q0, hs_out, hs_in, 16, deadline_us(timeout_us), term);
        if (s != hal::Status::Ok) {
            *stuck_wait = HandshakeWait::Txq;
            return s;
        }
        s = wait_word_eq(hs_in, protocol::kHandshakeAck, deadline_us(timeout_us), term);
        if (s != hal::Status::Ok) {
            *stuck_wait = HandshakeWait::Ack;
            return s;
        }
        zero_words(hs_in, 16);
        return hal::Status::Ok;
    }
    hal::Status s = wait_word_eq(hs_in, protocol::kHandshakeHello, deadline_us(timeout_us), term);
    if (s != hal::Status::Ok) {
        *stuck_wait = HandshakeWait::Hello;
        return s;
    }
    zero_words(hs_in, 16);
    store_words(hs_out, protocol::EthChannelSync{protocol::kHandshakeAck, 0, 1,
                                                 protocol::kHandshakeAck ^ protocol::kSyncCheck});
    s = Eth::send(hal::EthTxq::Q0, hs_out, hs_in, 16, deadline_us(timeout_us), term);
    if (s != hal::Status::Ok) {
        *stuck_wait = HandshakeWait::Txq;
    }
    return s;
}

}  // namespace fwtest
