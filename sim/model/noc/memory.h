// Plain memories and an address decoder, all sim::Endpoint: what the NOC model writes into when the
// target is not a Verilated tile (DRAM banks, test memories), and the glue that puts a tile's L1
// and its register blocks (stream registers) behind one NOC endpoint.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "endpoint.h"

namespace sim {

// `size` bytes of zero-initialised storage answering at [base, base + size). Accesses that do not
// lie entirely inside that range are refused (return false) and change nothing.
class PlainMemory : public Endpoint {
  public:
    explicit PlainMemory(uint64_t size, uint64_t base = 0);

    bool write(uint64_t addr, std::span<const uint8_t> bytes) override;
    bool read(uint64_t addr, std::span<uint8_t> bytes) override;

    uint64_t base() const { return base_; }
    uint64_t size() const { return bytes_.size(); }
    // Direct access for tests and for host-side loading: byte 0 is address base().
    uint8_t* data() { return bytes_.data(); }
    const uint8_t* data() const { return bytes_.data(); }
    uint32_t word(uint64_t addr) const;  // little-endian 32-bit word at addr (must be inside)
    void set_word(uint64_t addr, uint32_t value);

  private:
    bool inside(uint64_t addr, uint64_t size) const;
    uint64_t base_;
    std::vector<uint8_t> bytes_;
};

// Like PlainMemory, but storage is allocated in pages on first write, so a DRAM bank of the size
// the SoC descriptor gives (2 GiB on Wormhole) costs only what is touched. Unwritten bytes read 0.
class SparseMemory : public Endpoint {
  public:
    static constexpr uint64_t kPageBytes = 4096;

    explicit SparseMemory(uint64_t size, uint64_t base = 0);

    bool write(uint64_t addr, std::span<const uint8_t> bytes) override;
    bool read(uint64_t addr, std::span<uint8_t> bytes) override;

    uint64_t base() const { return base_; }
    uint64_t size() const { return size_; }
    std::size_t pages_allocated() const { return pages_.size(); }

  private:
    uint64_t base_;
    uint64_t size_;
    std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
};

// Decodes an address to one of several endpoints by range; the access is forwarded unchanged (the
// endpoint sees the same absolute address). An access must lie entirely inside one range, else it
// is refused. Ranges may not overlap (add() returns false and adds nothing if they would).
class AddressMap : public Endpoint {
  public:
    bool add(uint64_t base, uint64_t size, Endpoint* target);

    bool write(uint64_t addr, std::span<const uint8_t> bytes) override;
    bool read(uint64_t addr, std::span<uint8_t> bytes) override;

  private:
    struct Range {
        uint64_t base;
        uint64_t size;
        Endpoint* target;
    };
    Endpoint* find(uint64_t addr, uint64_t size) const;
    std::vector<Range> ranges_;
};

}  // namespace sim
