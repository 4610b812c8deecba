// The PCIe tile's inbound TLBs of one chip, as the host sees them through BAR0 (reference
// host-and-pcie.md §1.6, §2.1): a bank of TLB configuration registers and the windows they steer.
// A host access at offset o of window i becomes a NOC access to the core the window's register
// names, at the register's base address + o, through the chip's host access path (sim::Chip::read/
// write: L1 byte-exact, registers as whole words).
//
//   Wormhole B0   186 windows: 156 x 1 MiB at BAR0 0, 10 x 2 MiB at 0x9C00000, 20 x 16 MiB at
//                 0xB000000. Config registers at BAR0 0x1FC00000, 8 bytes (2 words) per window:
//                 addr >> log2(size) in the low 36 - log2(size) bits, then x_end, y_end, x_start,
//                 y_start (6 bits each), noc (1), mcast (1), ordering (2), linked (1), static_vc
//                 (1).
//   Blackhole     202 x 2 MiB windows at BAR0 0 and 8 x 4 GiB windows (BAR4); config registers at
//                 BAR0 0x1FC00000, 12 bytes (3 words) per window: addr >> 21 in 43 bits (4 GiB:
//                 addr >> 32 in 32 bits), then x_end, y_end, x_start, y_start (6 each), noc (2),
//                 mcast, ordering (2), linked, use_static_vc, stream_header, static_vc (3).
//
// Model choices (sim/README.md): NOC1 coordinates are mirrored to NOC0 (x0 = grid_x-1-x1); a
// multicast window writes every modelled core in the rectangle (no wrap) and refuses reads;
// ordering, linked and VC bits are decoded but do not change timing (window accesses take no
// simulated time beyond what sim::Chip charges for register words). An access that reaches no
// core, or an address nothing answers at, throws std::out_of_range (silicon: a hang or all-ones).
//
// Model-only read-only words (like hal::simctrl, not silicon): through a window, the words at
// kSimStatusBase.. of a core report its run state, so a host driving the model through windows
// sees a firmware's exit the way SimDevice does.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hal/arch_map.h"

namespace sim {

class Chip;

// Run state words readable through a window at a core (model only).
inline constexpr uint32_t kSimStatusBase = hal::simctrl::kBase + 0x100;
inline constexpr uint32_t kSimStatusRunState = kSimStatusBase + 0x0;  // sim::RunState value
inline constexpr uint32_t kSimStatusExitCode = kSimStatusBase + 0x4;
inline constexpr uint32_t kSimStatusPc = kSimStatusBase + 0x8;
inline constexpr uint32_t kSimStatusTrapCause = kSimStatusBase + 0xC;
inline constexpr uint32_t kSimStatusTrapPc = kSimStatusBase + 0x10;
inline constexpr uint32_t kSimStatusTrapTval = kSimStatusBase + 0x14;
inline constexpr uint32_t kSimStatusEnd = kSimStatusBase + 0x18;

class PcieTlb {
  public:
    static constexpr uint64_t kConfigBase = 0x1FC00000;  // BAR0 offset of the config registers

    struct Window {
        uint64_t size = 0;
        uint32_t bar = 0;         // 0 or 4
        uint64_t bar_offset = 0;  // where the window starts in its BAR
    };

    // One window's register, decoded.
    struct Config {
        uint64_t addr = 0;  // NOC-local base address of the window
        uint32_t x_end = 0, y_end = 0, x_start = 0, y_start = 0;
        uint32_t noc = 0;
        bool mcast = false;
        uint32_t ordering = 0;
        bool linked = false;
        uint32_t static_vc = 0;
    };

    explicit PcieTlb(Chip& chip);

    hal::Arch arch() const { return arch_; }
    uint32_t window_count() const { return static_cast<uint32_t>(windows_.size()); }
    // Throws std::out_of_range for an index beyond window_count().
    const Window& window(uint32_t index) const;
    uint32_t config_stride() const { return stride_; }  // bytes per window's register

    // BAR0 register space: 32-bit words at kConfigBase + index * stride + 4 * k. nullopt / false
    // for an offset that is not a config register word.
    std::optional<uint32_t> bar0_read32(uint64_t bar0_offset) const;
    bool bar0_write32(uint64_t bar0_offset, uint32_t value);
    bool decodes(uint64_t bar0_offset) const;

    Config config(uint32_t index) const;

    // Host access through window `index` at `offset` (< the window size). Throws std::out_of_range
    // naming the window, target and address when nothing answers; nothing is written then.
    void write(uint32_t index, uint64_t offset, std::span<const uint8_t> bytes);
    void read(uint32_t index, uint64_t offset, std::span<uint8_t> bytes);

    uint64_t accesses() const { return accesses_; }

  private:
    struct Target {
        uint32_t x, y;
        uint32_t addr;
    };
    std::vector<Target> targets(uint32_t index, uint64_t offset, std::size_t len, bool write) const;
    std::string what(uint32_t index) const;
    bool sim_status_read(const Target& t, std::span<uint8_t> bytes) const;

    Chip& chip_;
    hal::Arch arch_;
    std::vector<Window> windows_;
    uint32_t stride_ = 0;
    std::vector<uint32_t> regs_;  // window_count * stride / 4 words
    uint64_t accesses_ = 0;
};

}  // namespace sim
