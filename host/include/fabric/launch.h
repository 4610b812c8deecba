// Launch one firmware image on one ERISC and run it to completion through any Device.
#pragma once

#include <cstdint>

#include "fabric/device.h"
#include "fabric/elf.h"

namespace fabric {

// Default cycle budget of `fabricctl sim run`: 50 M cycles = 50 ms of Wormhole time; bounded so a
// hung firmware cannot hang the host, large enough for the unit firmware in tests/sim.
inline constexpr uint64_t kDefaultMaxCycles = 50'000'000;
// How often the launch loop looks at the core: cheap on the simulator, fine-grained enough that
// the reported cycle count of a finished run is exact (the device stops early when it can).
inline constexpr uint64_t kDefaultPollCycles = 10'000;

struct LaunchOptions {
    uint64_t max_cycles = kDefaultMaxCycles;
    uint64_t poll_cycles = kDefaultPollCycles;
};

enum class LaunchOutcome { Exited, Trapped, Timeout };

std::string_view outcome_name(LaunchOutcome o);

struct LaunchResult {
    LaunchOutcome outcome = LaunchOutcome::Timeout;
    CoreStatus status;    // the core's final status (exit status, trap, PC)
    uint64_t cycles = 0;  // device cycles from the release of reset to the end of the run
};

// Write every segment of `image` to the core (zero-filled bss included).
void load_elf(Device& device, const CoreLocation& core, const ElfImage& image);

// The bare-metal ERISC0 launch: check placement (before touching the device), hold every RISC of
// the core in soft reset, load the segments, point ERISC0's reset PC at the entry, release ERISC0,
// then let the device run until the core exits or traps, or `max_cycles` pass.
// Throws Error(BadElf) for an image that does not fit, Error(Device) if the core never leaves
// reset.
LaunchResult launch(Device& device, const CoreLocation& core, const ElfImage& image,
                    const PlacementRules& placement, const LaunchOptions& options = {});

}  // namespace fabric
