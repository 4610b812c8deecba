// The Ethernet TX-queue register blocks of one ERISC core (Wormhole: 2 queues, Blackhole: 3), at
// the silicon offsets of hal/arch_map.h: TXQ q answers at hal::common::kEthTxqBase + q *
// kEthTxqStride.
//
// The firmware programs a queue exactly as on silicon (hal/eth.h):
//   data send:        TRANSFER_START_ADDR, TRANSFER_SIZE_BYTES, DEST_ADDR, then CMD = 0x2
//   remote reg write: DEST_ADDR, REMOTE_REG_DATA, then CMD = 0x4          (TXQ0 only)
// and polls "busy" (WH: CMD reads non-zero; BH: STATUS bit 16) before the next command.
//
// Command life cycle (README.md has the timing):
//   accepted   at the CMD write: arguments are checked (errors go to errors() and nothing is sent);
//              the source bytes are captured from local L1 through the core's Endpoint; the
//              queue turns busy and the command is split into frames of at most MAX_PKT_SIZE_BYTES.
//   read out   when the transmitter takes the command's last frame (start of its serialization):
//              the queue stops being busy and may take the next command. The source buffer may be
//              reused from then on as far as the model is concerned; silicon re-reads L1 for
//              resends, so the model reports SourceModified if a frame it has to (re)send no longer
//              matches L1.
//   completed  when the last frame lands in the peer (Link::completions()).
//
// Without a Link attached nothing is transmitted: a command stays busy.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "endpoint.h"
#include "eth_types.h"
#include "hal/arch_map.h"

namespace sim::eth {

class Link;

struct TxQueuesConfig {
    // Bytes of local L1 at address 0 that TRANSFER_START_ADDR may name (0: the arch's eth_l1_size).
    uint32_t l1_size = 0;
    // Compare L1 with the captured bytes whenever a frame is (re)sent; report SourceModified.
    bool check_source_reuse = true;
    std::string name = "eth";
};

// Per-queue counters of the model (also visible as the TRANSFER_CNT / PKT_*_CNT / WORD_CNT /
// RESEND_CNT registers).
struct TxqCounters {
    uint64_t commands_accepted = 0;
    uint64_t commands_read_out = 0;  // TRANSFER_CNT: commands whose last frame has been taken
    uint64_t frames_started = 0;     // PKT_START_CNT: frames put on the wire, resends included
    uint64_t words_sent = 0;     // WORD_CNT: 16-B payload words put on the wire, resends included
    uint64_t frames_resent = 0;  // RESEND_CNT
};

class TxQueues {
  public:
    TxQueues(const hal::ArchMap& arch, Endpoint& local_l1, TxQueuesConfig cfg = {});
    ~TxQueues();
    TxQueues(const TxQueues&) = delete;
    TxQueues& operator=(const TxQueues&) = delete;

    // True when core_addr lies in one of this arch's TXQ register blocks.
    bool decodes(uint32_t core_addr) const;

    // The core's 32-bit register accesses (the tile's external MMIO port). Any 4-byte-aligned
    // offset inside an existing queue's block answers (registers the model does not interpret
    // read back what was written); anything else returns false / nullopt: nothing answers.
    bool mmio_write(uint32_t core_addr, uint32_t value);
    std::optional<uint32_t> mmio_read(uint32_t core_addr);

    // The queue has a command it has not finished reading out (what the firmware polls).
    bool busy(uint32_t queue) const;

    const std::vector<TxqError>& errors() const { return errors_; }
    void clear_errors() { errors_.clear(); }

    const TxqCounters& counters(uint32_t queue) const;
    // Id of the most recently accepted command (ids count up from 1 across all queues; 0 = none).
    uint64_t last_command_id() const { return next_command_id_ - 1; }

    const hal::ArchMap& arch() const { return arch_; }
    uint32_t num_queues() const { return arch_.eth_tx_queues; }
    uint32_t l1_size() const { return l1_size_; }
    const std::string& name() const { return cfg_.name; }
    // The model's current cycle: the attached link's cycle (0 without a link).
    uint64_t cycle() const { return now_; }
    bool attached() const { return link_ != nullptr; }

  private:
    friend class Link;

    struct Frame {
        uint64_t seq = 0;
        uint64_t command_id = 0;
        CommandKind kind = CommandKind::Data;
        uint32_t src = 0;           // local L1 address of the payload (data frames)
        uint32_t dest = 0;          // peer address where the payload lands
        uint32_t offset = 0;        // into the command's captured bytes
        uint32_t len = 0;           // payload bytes (data) / 4 (register value)
        uint32_t wire_payload = 0;  // payload bytes on the wire
        bool first_of_command = false;
        bool last_of_command = false;
        uint32_t cmd_size = 0;  // whole command's payload (for the completion record)
        uint32_t reg_value = 0;
        std::shared_ptr<const std::vector<uint8_t>> data;  // captured at acceptance
        Tick ready = 0;                                    // earliest start (acceptance time)
        uint32_t tx_count = 0;                             // transmissions so far
    };

    // Go-Back-N sender state of one queue (its peer RXQ keeps the receiver half, in Link).
    struct Queue {
        std::vector<uint32_t> regs;  // one word per 4-byte offset of the block
        bool busy = false;
        uint64_t busy_last_seq = 0;  // seq of the busy command's last frame
        std::deque<Frame> frames;    // unacknowledged + not yet sent; front().seq == base_seq
        uint64_t base_seq = 0;       // oldest unacknowledged
        uint64_t next_seq = 0;       // seq the next new frame gets
        std::size_t next = 0;        // index in frames of the next frame to transmit
        uint64_t high_seq = 0;       // frames below this have been sent at least once
        uint64_t epoch = 0;          // bumped at every go-back; stale NAKs are ignored
        Tick resume_at = 0;          // frames after a go-back may start from here
        bool timer_armed = false;
        Tick timer_start = 0;
        TxqCounters counters;
    };

    void accept_data(uint32_t q);
    void accept_reg_write(uint32_t q);
    void error(uint32_t q, ErrorKind kind, uint32_t addr, uint32_t size);
    void error_at(uint64_t cycle, uint32_t q, ErrorKind kind, uint32_t addr, uint32_t size);
    // An error found by the link's receiving side, kept in cycle order: in split mode (Link) it
    // comes at the end of a window, after errors of later cycles this side recorded meanwhile.
    void insert_error(const TxqError& e);
    uint32_t reg(uint32_t q, uint32_t offset) const;
    void set_reg(uint32_t q, uint32_t offset, uint32_t value);
    Tick accept_time() const;

    const hal::ArchMap& arch_;
    Endpoint& l1_;
    TxQueuesConfig cfg_;
    uint32_t l1_size_;
    std::vector<Queue> queues_;
    std::vector<TxqError> errors_;
    uint64_t next_command_id_ = 1;
    uint64_t now_ = 0;
    Link* link_ = nullptr;
    Tick ticks_per_cycle_ = 1;  // set by the link
};

}  // namespace sim::eth
