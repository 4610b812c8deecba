// The core's 64-bit free-running wall clock and the Deadline type every bounded wait takes.
//
// The clock counts core clock cycles (ArchMap::aiclk_mhz per microsecond). Reading WALL_CLOCK_0
// (low word) latches the matching high word into WALL_CLOCK_1_AT, so lo-then-hi_at is a torn-free
// 64-bit read without a retry loop. At 1.35 GHz the 64-bit count wraps after ~430 years, so
// deadlines are compared without wrap handling.
#pragma once

#include <stdint.h>

#include "hal/arch_map.h"
#include "hal/mmio.h"

namespace hal {

// Current wall clock in core cycles.
[[nodiscard, gnu::always_inline]] inline uint64_t wall_clock() {
    const uint32_t lo = mmio::read32(common::kWallClockLo);    // latches the high word
    const uint32_t hi = mmio::read32(common::kWallClockHiAt);  // the high word as of that read
    return (static_cast<uint64_t>(hi) << 32) | lo;
}

// Its low 32 bits (one register read; wraps every few seconds): for intervals of well under that,
// compared as a signed difference.
[[nodiscard, gnu::always_inline]] inline uint32_t wall_clock_lo() {
    return mmio::read32(common::kWallClockLo);
}

// Microseconds to core cycles for an arch.
constexpr uint64_t us_to_cycles(const ArchMap& arch, uint32_t us) {
    return static_cast<uint64_t>(us) * arch.aiclk_mhz;
}

// A point on the wall clock after which a wait gives up. There is deliberately no "never":
// every wait in the firmware is bounded.
class Deadline {
  public:
    // The deadline at an absolute wall-clock cycle.
    static constexpr Deadline at_cycle(uint64_t cycle) { return Deadline(cycle); }
    // `cycles` from now.
    [[nodiscard, gnu::always_inline]] static Deadline after_cycles(uint64_t cycles) {
        return Deadline(wall_clock() + cycles);
    }
    // `us` microseconds from now on `arch`'s clock.
    [[nodiscard, gnu::always_inline]] static Deadline after_us(const ArchMap& arch, uint32_t us) {
        return after_cycles(us_to_cycles(arch, us));
    }

    constexpr uint64_t cycle() const { return at_; }
    constexpr bool passed_at(uint64_t now) const { return now >= at_; }
    // Reads the clock.
    [[nodiscard, gnu::always_inline]] bool expired() const { return passed_at(wall_clock()); }

  private:
    constexpr explicit Deadline(uint64_t at) : at_(at) {}
    uint64_t at_;
};

}  // namespace hal
