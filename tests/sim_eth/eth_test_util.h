// Test helpers for the Ethernet model: plain memories standing in for an ERISC core's L1 and
// registers, a two-core fixture, register programming as the firmware does it, and the exact
// timing formulas the tests derive their expectations from.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "endpoint.h"
#include "hal/arch_map.h"
#include "hal/encoding.h"
#include "link.h"
#include "txq.h"

namespace eth_test {

using sim::eth::Dir;
using sim::eth::Link;
using sim::eth::LinkConfig;
using sim::eth::TxQueues;

// L1 at [0, l1_size) plus a register window at and above hal::noc::kMmioStart (4-byte aligned
// words). Everything else refuses. Every accepted write is logged in order.
class CoreMemory : public sim::Endpoint {
  public:
    struct WriteRec {
        uint64_t addr;
        uint32_t size;
        bool operator==(const WriteRec&) const = default;
    };
    struct RegWrite {
        uint32_t addr;
        uint32_t value;
        bool operator==(const RegWrite&) const = default;
    };

    explicit CoreMemory(uint32_t l1_size) : l1_(l1_size, 0) {}

    bool write(uint64_t addr, std::span<const uint8_t> bytes) override {
        if (addr >= hal::noc::kMmioStart) {
            if (addr % 4 != 0 || bytes.size() != 4 || addr > 0xFFFFFFFCull) {
                return false;
            }
            uint32_t v;
            std::memcpy(&v, bytes.data(), 4);
            regs_[static_cast<uint32_t>(addr)] = v;
            reg_log_.push_back({static_cast<uint32_t>(addr), v});
            return true;
        }
        if (addr + bytes.size() > l1_.size()) {
            return false;
        }
        std::memcpy(l1_.data() + addr, bytes.data(), bytes.size());
        log_.push_back({addr, static_cast<uint32_t>(bytes.size())});
        return true;
    }
    bool read(uint64_t addr, std::span<uint8_t> bytes) override {
        if (addr + bytes.size() > l1_.size()) {
            return false;
        }
        std::memcpy(bytes.data(), l1_.data() + addr, bytes.size());
        return true;
    }

    uint8_t* data() { return l1_.data(); }
    uint32_t size() const { return static_cast<uint32_t>(l1_.size()); }
    std::vector<uint8_t> bytes(uint32_t addr, uint32_t n) const {
        return std::vector<uint8_t>(l1_.begin() + addr, l1_.begin() + addr + n);
    }
    void fill(uint32_t addr, const std::vector<uint8_t>& v) {
        std::memcpy(l1_.data() + addr, v.data(), v.size());
    }
    uint32_t reg(uint32_t addr) const {
        auto it = regs_.find(addr);
        return it == regs_.end() ? 0 : it->second;
    }
    const std::vector<WriteRec>& log() const { return log_; }
    const std::vector<RegWrite>& reg_log() const { return reg_log_; }

  private:
    std::vector<uint8_t> l1_;
    std::map<uint32_t, uint32_t> regs_;
    std::vector<WriteRec> log_;
    std::vector<RegWrite> reg_log_;
};

inline std::vector<uint8_t> pattern(uint32_t n, uint32_t seed) {
    std::mt19937 rng(seed);  // only the engine: its sequence is fixed by the standard
    std::vector<uint8_t> v(n);
    for (auto& b : v) {
        b = static_cast<uint8_t>(rng());
    }
    return v;
}

// Two cores (A and B) of one arch joined by one link.
struct Pair {
    explicit Pair(const hal::ArchMap& arch = hal::kWormholeB0,
                  LinkConfig cfg = LinkConfig::for_arch(hal::kWormholeB0))
        : mem_a(arch.eth_l1_size),
          mem_b(arch.eth_l1_size),
          txq_a(arch, mem_a, {.name = "A"}),
          txq_b(arch, mem_b, {.name = "B"}),
          link(cfg, {txq_a, mem_b}, {txq_b, mem_a}) {}

    CoreMemory mem_a;
    CoreMemory mem_b;
    TxQueues txq_a;
    TxQueues txq_b;
    Link link;
};

inline uint32_t txq_addr(uint32_t q, uint32_t offset) {
    return hal::eth::txq_reg(q, offset);
}

inline void wr(TxQueues& t, uint32_t q, uint32_t offset, uint32_t v) {
    if (!t.mmio_write(txq_addr(q, offset), v)) {
        throw std::runtime_error("TXQ register write refused");
    }
}
inline uint32_t rd(TxQueues& t, uint32_t q, uint32_t offset) {
    auto v = t.mmio_read(txq_addr(q, offset));
    if (!v) {
        throw std::runtime_error("TXQ register read refused");
    }
    return *v;
}

// Program a data send as hal::Eth::program_send does (no busy check).
inline void program_send(TxQueues& t, uint32_t q, uint32_t src, uint32_t dst, uint32_t size) {
    wr(t, q, hal::eth::kTxqTransferStartAddr, src);
    wr(t, q, hal::eth::kTxqTransferSizeBytes, size);
    wr(t, q, hal::eth::kTxqDestAddr, dst);
    wr(t, q, hal::eth::kTxqCmd, hal::eth::kCmdDataPacket);
}
inline void program_reg_write(TxQueues& t, uint32_t q, uint32_t reg, uint32_t value) {
    wr(t, q, hal::eth::kTxqDestAddr, reg);
    wr(t, q, hal::eth::kTxqRemoteRegData, value);
    wr(t, q, hal::eth::kTxqCmd, hal::eth::kCmdRemoteRegWrite);
}

// Step until pred() holds; fails the test (throws) after max_cycles.
inline void run_until(Link& link, const std::function<bool()>& pred,
                      uint64_t max_cycles = 10'000'000) {
    for (uint64_t i = 0; !pred(); ++i) {
        if (i == max_cycles) {
            throw std::runtime_error("run_until: condition not reached");
        }
        link.step();
    }
}
inline void run_until_idle(Link& link, uint64_t max_cycles = 10'000'000) {
    run_until(
        link, [&] { return link.idle(); }, max_cycles);
}

// ---- timing, derived from the parameters (independently of the model's reduced fractions) ----
// Exact time unit: 1 cycle = link_mbps units; one wire byte = 8 * clock_mhz units.
// Frame payload with the reset MAX_PKT_SIZE_BYTES (1500): whole 16-B words, so 1488.
inline constexpr uint32_t kFrame = 1500 / 16 * 16;

struct Timing {
    const LinkConfig& cfg;
    uint64_t cycle_units() const { return cfg.link_mbps; }
    uint64_t wire_units(uint64_t wire_bytes) const { return wire_bytes * 8ull * cfg.clock_mhz; }
    uint64_t latency_units() const { return uint64_t{cfg.latency_cycles} * cfg.link_mbps; }
    uint64_t frames(uint32_t size, uint32_t max_pkt = kFrame) const {
        return (size + max_pkt - 1) / max_pkt;
    }
    uint64_t wire_bytes(uint32_t size, uint32_t max_pkt = kFrame) const {
        return size + frames(size, max_pkt) * cfg.frame_overhead_bytes;
    }
    // An event at `units` is processed in step floor(units / cycle) and visible one cycle later.
    uint64_t visible_cycle(uint64_t units) const { return units / cycle_units() + 1; }
};

}  // namespace eth_test

// Byte buffers print as their size and a short prefix, not thousands of characters.
namespace Catch {
template <>
struct StringMaker<std::vector<uint8_t>> {
    static std::string convert(const std::vector<uint8_t>& v) {
        static const char* hex = "0123456789abcdef";
        std::string s = std::to_string(v.size()) + " bytes [";
        for (std::size_t i = 0; i < v.size() && i < 16; ++i) {
            s += hex[v[i] >> 4];
            s += hex[v[i] & 0xF];
            s += ' ';
        }
        return s + (v.size() > 16 ? "...]" : "]");
    }
};
}  // namespace Catch
