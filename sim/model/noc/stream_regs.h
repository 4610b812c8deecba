// The NOC overlay stream registers of one tile, used by the fabric as hardware credit counters.
//
// Stream s, register index r lives at common::kStreamRegsBase + s * kStreamRegSpace + r * 4
// (hal/encoding.h: stream::reg_addr). Register indices come from ArchMap::stream. Behaviour:
//   *_SPACE_AVAILABLE_UPDATE  (inc-on-write) writing v adds (v >> kWordsFreeIncShift) to the 17-bit
//                             words-free counter, mod 2^17 (so a two's-complement field subtracts).
//                             Reads return 0 (the register holds no state of its own).
//   *_SPACE_AVAILABLE         (read-only) the counter. Writes are refused (bus error).
//   *_DEST_BUF_SIZE           plain storage; a write also reloads the counter with value & 0x1FFFF.
//   everything else           plain storage, reads 0 until written.
// Reachable from the core (mmio_read / mmio_write, whole 32-bit words) and from the NOC (the
// sim::Endpoint interface: 4-byte-aligned whole words, so remote credit updates by NOC inline
// writes land exactly like local ones).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "endpoint.h"
#include "hal/arch_map.h"

namespace sim {

class StreamRegs : public Endpoint {
  public:
    // `num_streams`: ArchMap::eth_streams for an ERISC tile, stream::kNumStreamsTensix for a
    // worker.
    StreamRegs(const hal::ArchMap& arch, uint32_t num_streams);

    // The register window [base(), base() + window_bytes()).
    static constexpr uint32_t base() { return hal::common::kStreamRegsBase; }
    uint32_t window_bytes() const { return num_streams_ * hal::common::kStreamRegSpace; }
    bool contains(uint64_t addr) const { return addr >= base() && addr - base() < window_bytes(); }
    uint32_t num_streams() const { return num_streams_; }

    // Core-side access. false / nullopt: nothing answers (outside the window, misaligned, or a
    // write to the read-only counter).
    bool mmio_write(uint32_t addr, uint32_t value);
    std::optional<uint32_t> mmio_read(uint32_t addr) const;

    // NOC-side access (sim::Endpoint).
    bool write(uint64_t addr, std::span<const uint8_t> bytes) override;
    bool read(uint64_t addr, std::span<uint8_t> bytes) override;

    // Test/debug view of the counter of stream `s` (17 bits).
    uint32_t words_free(uint32_t s) const { return s < num_streams_ ? words_free_[s] : 0; }
    // Number of increments applied through *_UPDATE since construction (all streams).
    uint64_t update_writes() const { return update_writes_; }
    // What the *_UPDATE writes to stream `s` added and subtracted in all (debug view: event
    // counts, e.g. packets pushed and sent, for benchmarks that trace a path).
    uint64_t added(uint32_t s) const { return s < num_streams_ ? added_[s] : 0; }
    uint64_t subtracted(uint32_t s) const { return s < num_streams_ ? subtracted_[s] : 0; }

  private:
    bool decode(uint64_t addr, uint32_t& stream, uint32_t& index) const;

    const hal::ArchMap& arch_;
    uint32_t num_streams_;
    std::vector<uint32_t> words_free_;
    std::vector<uint64_t> added_, subtracted_;
    std::unordered_map<uint32_t, uint32_t> plain_;  // key: stream * 1024 + index
    uint64_t update_writes_ = 0;
};

}  // namespace sim
