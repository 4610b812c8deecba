#include "noc/stream_regs.h"

#include <cstring>

#include "hal/encoding.h"

namespace sim {

namespace {
constexpr uint32_t kRegsPerStream = hal::common::kStreamRegSpace / 4;
}  // namespace

StreamRegs::StreamRegs(const hal::ArchMap& arch, uint32_t num_streams)
    : arch_(arch),
      num_streams_(num_streams),
      words_free_(num_streams, 0),
      added_(num_streams, 0),
      subtracted_(num_streams, 0) {}

bool StreamRegs::decode(uint64_t addr, uint32_t& stream, uint32_t& index) const {
    if (!contains(addr) || addr % 4 != 0) {
        return false;
    }
    const uint32_t off = static_cast<uint32_t>(addr - base());
    stream = off / hal::common::kStreamRegSpace;
    index = (off % hal::common::kStreamRegSpace) / 4;
    return true;
}

bool StreamRegs::mmio_write(uint32_t addr, uint32_t value) {
    uint32_t s = 0;
    uint32_t r = 0;
    if (!decode(addr, s, r)) {
        return false;
    }
    const hal::StreamRegIndex& idx = arch_.stream;
    if (r == idx.remote_dest_buf_space_available_update) {
        const uint32_t delta = hal::stream::words_free_delta_of(value);
        words_free_[s] = (words_free_[s] + delta) & hal::stream::kWordsFreeMask;
        ++update_writes_;
        // The delta is a 17-bit two's-complement number.
        if ((delta & (1u << (hal::stream::kWordsFreeBits - 1))) == 0) {
            added_[s] += delta;
        } else {
            subtracted_[s] += (hal::stream::kWordsFreeMask + 1) - delta;
        }
        return true;
    }
    if (r == idx.remote_dest_buf_space_available) {
        return false;  // read-only counter
    }
    if (r == idx.remote_dest_buf_size) {
        words_free_[s] = value & hal::stream::kWordsFreeMask;
    }
    plain_[s * kRegsPerStream + r] = value;
    return true;
}

std::optional<uint32_t> StreamRegs::mmio_read(uint32_t addr) const {
    uint32_t s = 0;
    uint32_t r = 0;
    if (!decode(addr, s, r)) {
        return std::nullopt;
    }
    const hal::StreamRegIndex& idx = arch_.stream;
    if (r == idx.remote_dest_buf_space_available) {
        return words_free_[s];
    }
    if (r == idx.remote_dest_buf_space_available_update) {
        return 0u;
    }
    auto it = plain_.find(s * kRegsPerStream + r);
    return it == plain_.end() ? 0u : it->second;
}

bool StreamRegs::write(uint64_t addr, std::span<const uint8_t> bytes) {
    if (bytes.size() % 4 != 0 || addr % 4 != 0 || bytes.empty()) {
        return false;
    }
    // Check the whole range first so a refused access changes nothing.
    for (std::size_t off = 0; off < bytes.size(); off += 4) {
        uint32_t s = 0;
        uint32_t r = 0;
        if (!decode(addr + off, s, r) || r == arch_.stream.remote_dest_buf_space_available) {
            return false;
        }
    }
    for (std::size_t off = 0; off < bytes.size(); off += 4) {
        uint32_t v = 0;
        std::memcpy(&v, bytes.data() + off, 4);
        (void)mmio_write(static_cast<uint32_t>(addr + off), v);
    }
    return true;
}

bool StreamRegs::read(uint64_t addr, std::span<uint8_t> bytes) {
    if (bytes.size() % 4 != 0 || addr % 4 != 0 || bytes.empty()) {
        return false;
    }
    for (std::size_t off = 0; off < bytes.size(); off += 4) {
        if (!contains(addr + off)) {
            return false;
        }
    }
    for (std::size_t off = 0; off < bytes.size(); off += 4) {
        const uint32_t v = mmio_read(static_cast<uint32_t>(addr + off)).value_or(0);
        std::memcpy(bytes.data() + off, &v, 4);
    }
    return true;
}

}  // namespace sim
