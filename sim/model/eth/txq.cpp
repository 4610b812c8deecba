#include "txq.h"

#include <algorithm>
#include <utility>

#include "hal/encoding.h"

namespace sim::eth {

namespace {

namespace he = hal::eth;

constexpr uint32_t kRegWords = hal::common::kEthTxqStride / 4;

// The value a busy queue shows in the arch's busy register: the lowest bit of the busy mask
// (WH: CMD reads 1, as the ISA doc describes; BH: STATUS bit 16).
constexpr uint32_t busy_value(const hal::ArchMap& a) {
    return a.eth.txq_busy_mask & (~a.eth.txq_busy_mask + 1);
}

bool is_counter_reg(uint32_t offset) {
    return offset == he::kTxqTransferCnt || offset == he::kTxqPktStartCnt ||
           offset == he::kTxqPktEndCnt || offset == he::kTxqWordCnt || offset == he::kTxqResendCnt;
}

// The counter registers show the model's counters minus a bias kept in the register storage:
// a write of v sets the bias so the register reads v and counts on from there.
uint64_t counter_value(const TxqCounters& c, uint32_t offset) {
    if (offset == he::kTxqTransferCnt) return c.commands_read_out;
    if (offset == he::kTxqPktStartCnt) return c.frames_started;
    if (offset == he::kTxqPktEndCnt) return c.frames_started;  // counted when the frame starts
    if (offset == he::kTxqWordCnt) return c.words_sent;
    return c.frames_resent;  // kTxqResendCnt
}

}  // namespace

const char* to_string(Dir d) {
    return d == Dir::AtoB ? "A->B" : "B->A";
}

const char* to_string(ErrorKind k) {
    switch (k) {
        case ErrorKind::MisalignedStart:
            return "misaligned-start";
        case ErrorKind::MisalignedDest:
            return "misaligned-dest";
        case ErrorKind::MisalignedSize:
            return "misaligned-size";
        case ErrorKind::ZeroSize:
            return "zero-size";
        case ErrorKind::SourceOutOfRange:
            return "source-out-of-range";
        case ErrorKind::RemoteRegWriteNotSupported:
            return "remote-reg-write-not-supported";
        case ErrorKind::CmdWhileBusy:
            return "cmd-while-busy";
        case ErrorKind::UnsupportedCommand:
            return "unsupported-command";
        case ErrorKind::BadCommand:
            return "bad-command";
        case ErrorKind::BadMaxPktSize:
            return "bad-max-pkt-size";
        case ErrorKind::DestRefused:
            return "dest-refused";
        case ErrorKind::SourceModified:
            return "source-modified";
        default:
            return "unknown-error";
    }
}

std::ostream& operator<<(std::ostream& os, const TxqError& e) {
    const auto flags = os.flags();
    os << "{cycle " << std::dec << e.cycle << " txq" << e.queue << ' ' << to_string(e.kind)
       << " addr 0x" << std::hex << e.addr << " size 0x" << e.size << '}';
    os.flags(flags);
    return os;
}

TxQueues::TxQueues(const hal::ArchMap& arch, Endpoint& local_l1, TxQueuesConfig cfg)
    : arch_(arch),
      l1_(local_l1),
      cfg_(std::move(cfg)),
      l1_size_(cfg_.l1_size != 0 ? cfg_.l1_size : arch.eth_l1_size) {
    queues_.resize(arch_.eth_tx_queues);
    for (Queue& q : queues_) {
        q.regs.assign(kRegWords, 0);
    }
    for (uint32_t q = 0; q < num_queues(); ++q) {
        set_reg(q, he::kTxqMaxPktSizeBytes, hal::eth::kTxqMaxPktSizeReset);
        set_reg(q, he::kTxqBurstLen, hal::eth::kTxqBurstLenReset);
    }
}

TxQueues::~TxQueues() = default;

bool TxQueues::decodes(uint32_t core_addr) const {
    if (core_addr < hal::common::kEthTxqBase) {
        return false;
    }
    const uint32_t q = (core_addr - hal::common::kEthTxqBase) / hal::common::kEthTxqStride;
    return q < num_queues();
}

uint32_t TxQueues::reg(uint32_t q, uint32_t offset) const {
    return queues_[q].regs[offset / 4];
}
void TxQueues::set_reg(uint32_t q, uint32_t offset, uint32_t value) {
    queues_[q].regs[offset / 4] = value;
}

const TxqCounters& TxQueues::counters(uint32_t queue) const {
    return queues_.at(queue).counters;
}

bool TxQueues::busy(uint32_t queue) const {
    return queues_.at(queue).busy;
}

Tick TxQueues::accept_time() const {
    return now_ * ticks_per_cycle_;
}

void TxQueues::error(uint32_t q, ErrorKind kind, uint32_t addr, uint32_t size) {
    error_at(now_, q, kind, addr, size);
}

void TxQueues::error_at(uint64_t cycle, uint32_t q, ErrorKind kind, uint32_t addr, uint32_t size) {
    errors_.push_back(TxqError{cycle, q, kind, addr, size});
}

void TxQueues::insert_error(const TxqError& e) {
    const auto later = std::upper_bound(errors_.begin(), errors_.end(), e.cycle,
                                        [](uint64_t c, const TxqError& x) { return c < x.cycle; });
    errors_.insert(later, e);
}

std::optional<uint32_t> TxQueues::mmio_read(uint32_t core_addr) {
    if (!decodes(core_addr) || core_addr % 4 != 0) {
        return std::nullopt;
    }
    const uint32_t q = (core_addr - hal::common::kEthTxqBase) / hal::common::kEthTxqStride;
    const uint32_t offset = (core_addr - hal::common::kEthTxqBase) % hal::common::kEthTxqStride;
    const Queue& qu = queues_[q];
    if (offset == he::kTxqCmd) {
        // The command register reads the busy indication on arches that poll it (WH), 0 elsewhere.
        return arch_.eth.txq_busy_reg == he::kTxqCmd && qu.busy ? busy_value(arch_) : 0u;
    }
    if (offset == arch_.eth.txq_busy_reg) {
        return (reg(q, offset) & ~arch_.eth.txq_busy_mask) | (qu.busy ? busy_value(arch_) : 0u);
    }
    if (is_counter_reg(offset)) {
        return static_cast<uint32_t>(counter_value(qu.counters, offset)) - reg(q, offset);
    }
    return reg(q, offset);
}

bool TxQueues::mmio_write(uint32_t core_addr, uint32_t value) {
    if (!decodes(core_addr) || core_addr % 4 != 0) {
        return false;
    }
    const uint32_t q = (core_addr - hal::common::kEthTxqBase) / hal::common::kEthTxqStride;
    const uint32_t offset = (core_addr - hal::common::kEthTxqBase) % hal::common::kEthTxqStride;
    if (is_counter_reg(offset)) {
        // bias = counter - value, so reads return value + later increments.
        set_reg(q, offset,
                static_cast<uint32_t>(counter_value(queues_[q].counters, offset)) - value);
        return true;
    }
    if (offset != he::kTxqCmd) {
        set_reg(q, offset, value);
        return true;
    }
    // ETH_TXQ_CMD.
    if (queues_[q].busy) {
        error(q, ErrorKind::CmdWhileBusy, value, 0);
        return true;
    }
    switch (value) {
        case he::kCmdDataPacket:
            accept_data(q);
            break;
        case he::kCmdRemoteRegWrite:
            accept_reg_write(q);
            break;
        case he::kCmdMacQueueFlush:
            break;  // the model keeps no MAC-level queue to flush
        case he::kCmdRawPacket:
            error(q, ErrorKind::UnsupportedCommand, value, 0);
            break;
        default:
            error(q, ErrorKind::BadCommand, value, 0);
            break;
    }
    return true;
}

void TxQueues::accept_data(uint32_t q) {
    const uint32_t start = reg(q, he::kTxqTransferStartAddr);
    const uint32_t size = reg(q, he::kTxqTransferSizeBytes);
    const uint32_t dest = reg(q, he::kTxqDestAddr);
    const uint32_t max_pkt = reg(q, he::kTxqMaxPktSizeBytes);
    const std::size_t errors_before = errors_.size();
    if (start % he::kDataAlignment != 0) {
        error(q, ErrorKind::MisalignedStart, start, size);
    }
    if (dest % he::kDataAlignment != 0) {
        error(q, ErrorKind::MisalignedDest, dest, size);
    }
    if (size == 0) {
        error(q, ErrorKind::ZeroSize, start, size);
    } else if (size % he::kDataAlignment != 0) {
        error(q, ErrorKind::MisalignedSize, start, size);
    }
    if (size != 0 && static_cast<uint64_t>(start) + size > l1_size_) {
        error(q, ErrorKind::SourceOutOfRange, start, size);
    }
    if (max_pkt < he::kDataAlignment) {
        error(q, ErrorKind::BadMaxPktSize, max_pkt, size);
    }
    if (errors_.size() != errors_before) {
        return;
    }
    auto data = std::make_shared<std::vector<uint8_t>>(size);
    if (!l1_.read(start, *data)) {
        error(q, ErrorKind::SourceOutOfRange, start, size);
        return;
    }
    Queue& qu = queues_[q];
    const uint64_t id = next_command_id_++;
    const Tick ready = accept_time();
    // TT-link L1 write packets carry whole 16-B words (addresses and sizes are in words), so a
    // frame's payload is MAX_PKT_SIZE_BYTES rounded down to a word multiple (1500 -> 1488).
    const uint32_t frame_bytes = max_pkt / he::kDataAlignment * he::kDataAlignment;
    for (uint32_t off = 0; off < size; off += frame_bytes) {
        Frame f;
        f.seq = qu.next_seq++;
        f.command_id = id;
        f.kind = CommandKind::Data;
        f.src = start + off;
        f.dest = dest + off;
        f.offset = off;
        f.len = std::min(frame_bytes, size - off);
        f.wire_payload = f.len;
        f.first_of_command = off == 0;
        f.last_of_command = off + f.len == size;
        f.cmd_size = size;
        f.data = data;
        f.ready = ready;
        qu.frames.push_back(std::move(f));
    }
    qu.busy = true;
    qu.busy_last_seq = qu.next_seq - 1;
    ++qu.counters.commands_accepted;
}

void TxQueues::accept_reg_write(uint32_t q) {
    const uint32_t dest = reg(q, he::kTxqDestAddr);
    const uint32_t value = reg(q, he::kTxqRemoteRegData);
    const std::size_t errors_before = errors_.size();
    if (((arch_.eth.remote_reg_write_queues >> q) & 1u) == 0) {
        error(q, ErrorKind::RemoteRegWriteNotSupported, dest, 0);
    }
    if (dest % he::kRemoteRegAlignment != 0) {
        error(q, ErrorKind::MisalignedDest, dest, 0);
    }
    if (errors_.size() != errors_before) {
        return;
    }
    Queue& qu = queues_[q];
    Frame f;
    f.seq = qu.next_seq++;
    f.command_id = next_command_id_++;
    f.kind = CommandKind::RemoteRegWrite;
    f.dest = dest;
    f.len = 4;
    f.wire_payload = kRegWritePayloadBytes;
    f.first_of_command = true;
    f.last_of_command = true;
    f.cmd_size = 4;
    f.reg_value = value;
    f.ready = accept_time();
    qu.frames.push_back(std::move(f));
    qu.busy = true;
    qu.busy_last_seq = qu.next_seq - 1;
    ++qu.counters.commands_accepted;
}

}  // namespace sim::eth
