#include "noc/packet.h"

#include <algorithm>

namespace sim::noc {

const char* to_string(PktType type) {
    switch (type) {
        case PktType::Write:
            return "write";
        case PktType::InlineWrite:
            return "inline-write";
        case PktType::Read:
            return "read";
        case PktType::Atomic:
            return "atomic";
        case PktType::WriteAck:
            return "write-ack";
        case PktType::ReadResp:
            return "read-response";
        case PktType::AtomicResp:
            return "atomic-response";
        default:
            return "unknown";
    }
}

uint32_t PacketPool::allocate() {
    if (free_.empty()) {
        packets_.emplace_back();
        return static_cast<uint32_t>(packets_.size() - 1);
    }
    const uint32_t id = free_.back();
    free_.pop_back();
    assign(id, Packet{});
    return id;
}

void PacketPool::assign(uint32_t id, Packet&& p) {
    // Packets come and go at the NOC's rate: keep each id's data buffer to avoid a heap
    // allocation per packet.
    Packet& slot = packets_[id];
    std::vector<uint8_t> keep = std::move(slot.data);
    slot = std::move(p);
    slot.data = std::move(keep);
    slot.data.clear();
}

void PacketPool::release_copy(uint32_t id) {
    if (--packets_[id].live == 0) {
        free_.push_back(id);
    }
}

uint32_t data_flits_for(uint32_t word_bytes, uint64_t addr, uint32_t len) {
    if (len == 0) {
        return 0;
    }
    const uint64_t offset = addr % word_bytes;
    return static_cast<uint32_t>((offset + len + word_bytes - 1) / word_bytes);
}

std::pair<uint32_t, uint32_t> flit_range(uint32_t word_bytes, const Packet& p, uint32_t k) {
    // Flits are aligned where the data lands, so the first one carries only up to that boundary.
    const uint32_t offset = static_cast<uint32_t>(p.dst_addr % word_bytes);
    const uint32_t lo = k == 1 ? 0 : (k - 1) * word_bytes - offset;
    const uint32_t hi = std::min<uint32_t>(p.len, k * word_bytes - offset);
    return {lo, hi};
}

}  // namespace sim::noc
