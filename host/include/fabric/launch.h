// Launch firmware images on ERISCs and run them to completion through any Device.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/exit_mailbox.h"

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
    LaunchMethod method = LaunchMethod::ResetPc;
    // LaunchFlag only: the application returned to the base firmware (which cleared the launch
    // flag); status.exit_status is what it returned. The core itself keeps running (base firmware).
    bool returned_to_base_firmware = false;
    // The firmware's exit/console mailbox when the wait ended (fabric/exit_mailbox.h): its console
    // (the last protocol::kConsoleRingBytes at most; console_lost counts the bytes before them).
    // NotSetUp for firmware without the runtime.
    ExitMailboxReport mailbox;
};

// One image for one core.
struct LaunchTarget {
    CoreLocation core;
    const ElfImage* image = nullptr;
    PlacementRules placement;
};

// Write every segment of `image` to the core (zero-filled bss included).
void load_elf(Device& device, const CoreLocation& core, const ElfImage& image);

// The bare-metal ERISC0 launch: check placement (before touching the device), hold every RISC of
// the core in soft reset, load the segments, point ERISC0's reset PC at the entry, release ERISC0,
// then let the device run until the core exits or traps, or `max_cycles` pass.
// Throws Error(BadElf) for an image that does not fit, Error(Device) if the core never leaves
// reset.
//
// On a core whose Device::launch_method is LaunchFlag (a WH eth core running base firmware) the
// core is never reset: the launch checks that the image's entry is the firmware base the base
// firmware calls and that no application is running (launch flag 0), loads the segments and sets
// the launch flag. The run ends when the core exits or traps (an application built with crt0 ends
// in _exit, which halts the core in the model) or when the base firmware has cleared the flag
// again (the application returned; its return value is the exit status).
LaunchResult launch(Device& device, const CoreLocation& core, const ElfImage& image,
                    const PlacementRules& placement, const LaunchOptions& options = {});

// Several cores at once: every placement is checked before the device is touched, then every
// image is loaded, then all cores are released (or flagged) together, and the device runs until
// each has exited or trapped or `max_cycles` pass. Results are in target order; a core's `cycles`
// is when the launcher saw it finish (exact for the last one; otherwise rounded up to the poll
// interval). Throws Error(BadInput) for a core named twice.
std::vector<LaunchResult> launch_many(Device& device, std::span<const LaunchTarget> targets,
                                      const LaunchOptions& options = {});

// The three steps of launch_many, for callers that start cores and leave them running (the fabric
// routers, fabric_runner.h) or wait for some cores only:
//   load_many:  check every placement and that no core is named twice (before the device is
//               touched), then load every image without starting it (ResetPc: every RISC held in
//               reset, reset PC set; LaunchFlag: flag still 0), each core's exit mailbox cleared
//               first. Returns each target's method.
//   start_many: release / flag every target, in order.
//   wait_many:  advance until each target has exited or trapped (or returned to the base
//               firmware), or `max_cycles` pass. Only `targets` are waited for: other cores that
//               keep running (routers) neither end the wait nor count as finished. A core's state
//               is Device::core_status (the model's run state, its fast path) and, where that
//               cannot tell (Unknown: silicon), its exit mailbox. When the wait ends every
//               target's mailbox is read into LaunchResult::mailbox; one that is not ours (a
//               firmware that wrote over it) is Error(Device) naming the core.
std::vector<LaunchMethod> load_many(Device& device, std::span<const LaunchTarget> targets);
void start_many(Device& device, std::span<const LaunchTarget> targets,
                std::span<const LaunchMethod> methods);
// `each_poll` (optional) runs after every advance; it may throw to abandon the wait (e.g. when
// a core the targets depend on has failed).
std::vector<LaunchResult> wait_many(Device& device, std::span<const LaunchTarget> targets,
                                    std::span<const LaunchMethod> methods,
                                    const LaunchOptions& options = {},
                                    const std::function<void()>& each_poll = {});

}  // namespace fabric
