#include "noc/memory.h"

#include <algorithm>
#include <cstring>

namespace sim {

// ---- PlainMemory
// ----------------------------------------------------------------------------------

PlainMemory::PlainMemory(uint64_t size, uint64_t base) : base_(base), bytes_(size, 0) {}

bool PlainMemory::inside(uint64_t addr, uint64_t size) const {
    return addr >= base_ && size <= bytes_.size() && addr - base_ <= bytes_.size() - size;
}

bool PlainMemory::write(uint64_t addr, std::span<const uint8_t> bytes) {
    if (!inside(addr, bytes.size())) {
        return false;
    }
    if (!bytes.empty()) {
        std::memcpy(bytes_.data() + (addr - base_), bytes.data(), bytes.size());
    }
    return true;
}

bool PlainMemory::read(uint64_t addr, std::span<uint8_t> bytes) {
    if (!inside(addr, bytes.size())) {
        return false;
    }
    if (!bytes.empty()) {
        std::memcpy(bytes.data(), bytes_.data() + (addr - base_), bytes.size());
    }
    return true;
}

uint32_t PlainMemory::word(uint64_t addr) const {
    uint32_t v = 0;
    if (inside(addr, 4)) {
        std::memcpy(&v, bytes_.data() + (addr - base_), 4);
    }
    return v;
}

void PlainMemory::set_word(uint64_t addr, uint32_t value) {
    if (inside(addr, 4)) {
        std::memcpy(bytes_.data() + (addr - base_), &value, 4);
    }
}

// ---- SparseMemory
// ---------------------------------------------------------------------------------

SparseMemory::SparseMemory(uint64_t size, uint64_t base) : base_(base), size_(size) {}

bool SparseMemory::write(uint64_t addr, std::span<const uint8_t> bytes) {
    if (addr < base_ || bytes.size() > size_ || addr - base_ > size_ - bytes.size()) {
        return false;
    }
    uint64_t off = addr - base_;
    std::size_t done = 0;
    while (done < bytes.size()) {
        const uint64_t page = off / kPageBytes;
        const uint64_t in_page = off % kPageBytes;
        const std::size_t n =
            static_cast<std::size_t>(std::min<uint64_t>(kPageBytes - in_page, bytes.size() - done));
        auto& p = pages_[page];
        if (!p) {
            p = std::make_unique<uint8_t[]>(kPageBytes);  // value-initialised: zeros
        }
        std::memcpy(p.get() + in_page, bytes.data() + done, n);
        done += n;
        off += n;
    }
    return true;
}

bool SparseMemory::read(uint64_t addr, std::span<uint8_t> bytes) {
    if (addr < base_ || bytes.size() > size_ || addr - base_ > size_ - bytes.size()) {
        return false;
    }
    uint64_t off = addr - base_;
    std::size_t done = 0;
    while (done < bytes.size()) {
        const uint64_t page = off / kPageBytes;
        const uint64_t in_page = off % kPageBytes;
        const std::size_t n =
            static_cast<std::size_t>(std::min<uint64_t>(kPageBytes - in_page, bytes.size() - done));
        auto it = pages_.find(page);
        if (it == pages_.end()) {
            std::memset(bytes.data() + done, 0, n);
        } else {
            std::memcpy(bytes.data() + done, it->second.get() + in_page, n);
        }
        done += n;
        off += n;
    }
    return true;
}

// ---- AddressMap
// -----------------------------------------------------------------------------------

bool AddressMap::add(uint64_t base, uint64_t size, Endpoint* target) {
    if (target == nullptr || size == 0 || base + size < base) {
        return false;
    }
    for (const Range& r : ranges_) {
        if (base < r.base + r.size && r.base < base + size) {
            return false;
        }
    }
    ranges_.push_back({base, size, target});
    return true;
}

Endpoint* AddressMap::find(uint64_t addr, uint64_t size) const {
    for (const Range& r : ranges_) {
        if (addr >= r.base && size <= r.size && addr - r.base <= r.size - size) {
            return r.target;
        }
    }
    return nullptr;
}

bool AddressMap::write(uint64_t addr, std::span<const uint8_t> bytes) {
    Endpoint* e = find(addr, bytes.size());
    return e != nullptr && e->write(addr, bytes);
}

bool AddressMap::read(uint64_t addr, std::span<uint8_t> bytes) {
    Endpoint* e = find(addr, bytes.size());
    return e != nullptr && e->read(addr, bytes);
}

}  // namespace sim
