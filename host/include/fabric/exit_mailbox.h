// The host's side of the exit/console mailbox (firmware/include/protocol/exit_mailbox.h): how a
// firmware's exit code and console are read through any Device, so the model, the sim server and
// PCIe silicon report the same thing. The launch code (launch.h) clears it before it starts a core
// and reads it when the core finishes; PcieDevice::core_status reads it where it has no faster
// way (silicon, or a simulated driver without the model's sim-control block).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fabric/coord.h"
#include "fabric/device.h"

namespace fabric {

enum class ExitMailboxState {
    NotSetUp,  // magic 0: the host cleared it and the runtime has not set it up (yet), or the
               // firmware does not use the runtime
    Foreign,   // a magic or state that is not the protocol's: not our mailbox
    Running,
    Exited,
};

std::string_view exit_mailbox_state_name(ExitMailboxState s);

// The mailbox's header as read: never throws for what it holds.
struct ExitMailboxHeader {
    ExitMailboxState state = ExitMailboxState::NotSetUp;
    uint32_t magic = 0;
    uint32_t raw_state = 0;
    uint32_t exit_code = 0;  // valid when Exited
    uint32_t written = 0;    // console bytes written since the firmware started (mod 2^32)
};

// What read_exit_mailbox found: the header and the console bytes from a position on.
struct ExitMailboxReport {
    ExitMailboxHeader header;
    std::string console;        // bytes [since + console_lost, next) of the console, oldest first
    uint32_t console_lost = 0;  // bytes after `since` overwritten before they could be read
    uint32_t next = 0;          // the position to read from next time (pass it as `since`)
};

// The mailbox's L1 address on `core` (its chip's arch).
uint32_t exit_mailbox_address(Device& device, const CoreLocation& core);

// Zero the header, so that a previous run's report is not taken for the next one's. The launch
// code does this before it releases a core.
void clear_exit_mailbox(Device& device, const CoreLocation& core);

// One read of the header. Throws only what the Device throws.
ExitMailboxHeader read_exit_mailbox_header(Device& device, const CoreLocation& core);

// The header, the console from position `since` on, then the byte count again: a byte the firmware
// may have overwritten while the ring was read is counted lost, never returned. Throws
// Error(Device) naming the core, address and value when the mailbox is Foreign, and when the
// firmware has written fewer bytes than `since` (it restarted since the last read).
ExitMailboxReport read_exit_mailbox(Device& device, const CoreLocation& core, uint32_t since = 0);

// The core's run state as the mailbox tells it: Running, or Exited with its code; nullopt when the
// mailbox is not set up or not ours.
std::optional<CoreStatus> exit_mailbox_core_status(const ExitMailboxHeader& header);

}  // namespace fabric
