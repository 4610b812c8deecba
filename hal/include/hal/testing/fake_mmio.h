// A fake register file for host tests of code written against the HAL (the HAL's own unit tests,
// and router/mux/adapter logic). Host only: it uses the standard library.
//
//   hal::testing::FakeRegisterFile fake;     // registers read 0 until written or scripted
//   hal::testing::ScopedFakeMmio use(fake);  // route hal::mmio through it for this scope
//   fake.self_clearing(addr);                // writes to addr read back as 0 (e.g. CMD_CTRL)
//   fake.script_reads(addr, {1, 1, 0});      // next reads of addr return 1, 1, 0, then the value
//   fake.on_write(addr, [&](uint32_t v) { ... });  // side effect after a write is stored
//   fake.on_read(addr, [&]() { return ...; });     // computed register
//   fake.use_wall_clock(0, 100);             // wall clock advancing 100 cycles per read
//   ... run code ...
//   CHECK(fake.writes() == std::vector<hal::testing::RegWrite>{{addr, value}, ...});
//
// Memory: the fake owns a byte buffer that stands in for L1 (hal::mmio::l1_ptr maps into it).
// Register addresses and L1 are separate: read32/write32 never touch the L1 buffer, matching the
// firmware, which reaches L1 through pointers and registers through mmio.
#pragma once

#if !defined(FABRIC_HAL_FAKE_MMIO)
#error "hal/testing/fake_mmio.h needs FABRIC_HAL_FAKE_MMIO (link the hal_fake_mmio CMake target)"
#endif

#include <stdint.h>

#include <cstring>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <ostream>
#include <utility>
#include <vector>

#include "hal/arch_map.h"
#include "hal/mmio.h"

namespace hal::testing {

struct RegWrite {
    uint32_t addr;
    uint32_t value;
    bool operator==(const RegWrite&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const RegWrite& w) {
    const auto flags = os.flags();
    os << std::hex << "{0x" << w.addr << " <- 0x" << w.value << "}";
    os.flags(flags);
    return os;
}

// One register access, in program order.
struct Access {
    enum class Kind : uint8_t { Read, Write };
    Kind kind;
    uint32_t addr;
    uint32_t value;  // value read or written
    bool operator==(const Access&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const Access& a) {
    const auto flags = os.flags();
    os << std::hex << (a.kind == Access::Kind::Read ? "{R 0x" : "{W 0x") << a.addr << " = 0x"
       << a.value << "}";
    os.flags(flags);
    return os;
}

class FakeRegisterFile : public hal::mmio::Backend {
  public:
    using ReadHook = std::function<uint32_t()>;
    using WriteHook = std::function<void(uint32_t value)>;

    // `l1_bytes` of zeroed host memory stand in for L1 (default: the largest ERISC L1).
    explicit FakeRegisterFile(uint32_t l1_bytes = hal::kBlackhole.eth_l1_size) : l1_(l1_bytes, 0) {}
    FakeRegisterFile(const FakeRegisterFile&) = delete;
    FakeRegisterFile& operator=(const FakeRegisterFile&) = delete;
    virtual ~FakeRegisterFile() = default;

    // ---- mmio::Backend ----
    uint32_t read32(uint32_t addr) override {
        uint32_t v;
        auto scripted = scripted_.find(addr);
        if (scripted != scripted_.end() && !scripted->second.empty()) {
            v = scripted->second.front();
            scripted->second.pop_front();
        } else if (auto hook = read_hooks_.find(addr); hook != read_hooks_.end()) {
            v = hook->second();
        } else {
            v = get(addr);
        }
        log_.push_back({Access::Kind::Read, addr, v});
        return v;
    }

    void write32(uint32_t addr, uint32_t value) override {
        log_.push_back({Access::Kind::Write, addr, value});
        regs_[addr] = self_clearing_.count(addr) != 0 ? 0 : value;
        if (auto hook = write_hooks_.find(addr); hook != write_hooks_.end()) {
            // Copy: the hook may register further hooks.
            const WriteHook h = hook->second;
            h(value);
        }
    }

    uint8_t* l1_base() override { return l1_.data(); }
    uint32_t l1_size() const override { return static_cast<uint32_t>(l1_.size()); }

    // ---- register state (not logged) ----
    void set(uint32_t addr, uint32_t value) { regs_[addr] = value; }
    uint32_t get(uint32_t addr) const {
        auto it = regs_.find(addr);
        return it == regs_.end() ? 0 : it->second;
    }

    // The next reads of `addr` return `values` in order; after that, the normal value.
    void script_reads(uint32_t addr, std::initializer_list<uint32_t> values) {
        auto& q = scripted_[addr];
        q.insert(q.end(), values.begin(), values.end());
    }
    // Reads of `addr` return hook() (unless scripted).
    void on_read(uint32_t addr, ReadHook hook) { read_hooks_[addr] = std::move(hook); }
    // After a write to `addr` is stored (and logged), run hook(value).
    void on_write(uint32_t addr, WriteHook hook) { write_hooks_[addr] = std::move(hook); }
    // Writes to `addr` are logged but the register reads back 0 (e.g. "go" registers that
    // hardware clears once the command is accepted).
    void self_clearing(uint32_t addr) { self_clearing_[addr] = true; }

    // A 64-bit wall clock at hal::common::kWallClock*: starts at `start` and advances by
    // `step` cycles on every read of the low word, which latches the high word into the
    // _HI_AT register (the silicon's read protocol).
    void use_wall_clock(uint64_t start, uint64_t step) {
        clock_ = start;
        on_read(hal::common::kWallClockLo, [this, step] {
            const uint64_t now = clock_;
            clock_ += step;
            regs_[hal::common::kWallClockHiAt] = static_cast<uint32_t>(now >> 32);
            regs_[hal::common::kWallClockHi] = static_cast<uint32_t>(now >> 32);
            return static_cast<uint32_t>(now);
        });
    }
    uint64_t clock() const { return clock_; }

    // ---- L1 ----
    void write_l1(uint32_t addr, const void* src, uint32_t size) {
        check_l1(addr, size);
        std::memcpy(l1_.data() + addr, src, size);
    }
    void read_l1(uint32_t addr, void* dst, uint32_t size) const {
        check_l1(addr, size);
        std::memcpy(dst, l1_.data() + addr, size);
    }
    uint32_t l1_word(uint32_t addr) const {
        uint32_t v;
        read_l1(addr, &v, 4);
        return v;
    }
    void set_l1_word(uint32_t addr, uint32_t v) { write_l1(addr, &v, 4); }

    // ---- the access log ----
    const std::vector<Access>& accesses() const { return log_; }
    std::vector<RegWrite> writes() const {
        std::vector<RegWrite> out;
        for (const Access& a : log_) {
            if (a.kind == Access::Kind::Write) {
                out.push_back({a.addr, a.value});
            }
        }
        return out;
    }
    std::vector<uint32_t> writes_to(uint32_t addr) const {
        std::vector<uint32_t> out;
        for (const Access& a : log_) {
            if (a.kind == Access::Kind::Write && a.addr == addr) {
                out.push_back(a.value);
            }
        }
        return out;
    }
    std::size_t reads_of(uint32_t addr) const {
        std::size_t n = 0;
        for (const Access& a : log_) {
            n += a.kind == Access::Kind::Read && a.addr == addr ? 1 : 0;
        }
        return n;
    }
    void clear_log() { log_.clear(); }

  private:
    void check_l1(uint32_t addr, uint32_t size) const {
        if (static_cast<uint64_t>(addr) + size > l1_.size()) {
            __builtin_trap();
        }
    }

    std::vector<uint8_t> l1_;
    std::map<uint32_t, uint32_t> regs_;
    std::map<uint32_t, std::deque<uint32_t>> scripted_;
    std::map<uint32_t, ReadHook> read_hooks_;
    std::map<uint32_t, WriteHook> write_hooks_;
    std::map<uint32_t, bool> self_clearing_;
    std::vector<Access> log_;
    uint64_t clock_ = 0;
};

// Routes hal::mmio to `fake` for the lifetime of this object (restores the previous backend).
class ScopedFakeMmio {
  public:
    explicit ScopedFakeMmio(FakeRegisterFile& fake) : prev_(hal::mmio::g_backend) {
        hal::mmio::g_backend = &fake;
    }
    ~ScopedFakeMmio() { hal::mmio::g_backend = prev_; }
    ScopedFakeMmio(const ScopedFakeMmio&) = delete;
    ScopedFakeMmio& operator=(const ScopedFakeMmio&) = delete;

  private:
    hal::mmio::Backend* prev_;
};

}  // namespace hal::testing
