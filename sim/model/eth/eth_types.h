// Types shared by the Ethernet TX-queue model (txq.h) and the link model (link.h): what a test can
// read back (errors, completions) and the model-only constants (the silicon facts are in
// arch_map.h).
#pragma once

#include <cstdint>
#include <ostream>

#include "hal/arch_map.h"

namespace sim::eth {

// Payload bytes a TT-link MMIO (remote register) write packet carries: one 16-byte TT-link word
// holding the 32-bit register address and the 32-bit value (model choice: the reference gives the
// packet type, not its size; one word is the smallest unit TT-link moves).
inline constexpr uint32_t kRegWritePayloadBytes = hal::eth::kDataAlignment;

// Time inside the link model is counted in ticks: one core cycle is LinkConfig-derived
// `ticks_per_cycle` ticks, chosen so that one byte on the wire is a whole number of ticks. All
// timing is exact integer arithmetic (no floating point, no drift).
using Tick = uint64_t;

// Which way a frame travels on a Link: from side A's TX queues into side B's memory, or back.
enum class Dir : uint8_t { AtoB = 0, BtoA = 1 };
inline constexpr Dir kDirs[] = {Dir::AtoB, Dir::BtoA};
constexpr uint32_t dir_index(Dir d) {
    return static_cast<uint32_t>(d);
}
constexpr Dir reverse(Dir d) {
    return d == Dir::AtoB ? Dir::BtoA : Dir::AtoB;
}
const char* to_string(Dir d);

// A bad command or a failed delivery, recorded by TxQueues (the queue the firmware programmed).
enum class ErrorKind : uint8_t {
    MisalignedStart,   // TRANSFER_START_ADDR not 16-B aligned              (addr = start)
    MisalignedDest,    // DEST_ADDR not 16-B aligned (data) / 4-B (register) (addr = dest)
    MisalignedSize,    // TRANSFER_SIZE_BYTES not a multiple of 16           (size = size)
    ZeroSize,          // TRANSFER_SIZE_BYTES == 0
    SourceOutOfRange,  // [start, start+size) outside local L1, or the local endpoint refused
    RemoteRegWriteNotSupported,  // CMD 0x4 on a queue that cannot carry MMIO writes (TXQ1)
    CmdWhileBusy,                // CMD written while the queue was still busy: ignored
    UnsupportedCommand,          // CMD 0x1 (raw packet): not modelled; nothing sent
    BadCommand,                  // CMD value that is not one of the one-hot commands
    BadMaxPktSize,               // MAX_PKT_SIZE_BYTES below 16 when a data command was issued
    DestRefused,     // the peer endpoint refused a delivered frame (addr = where it landed)
    SourceModified,  // local L1 under a frame changed before the frame was (re)sent: silicon
                     // re-reads L1 for resends, so it would have sent different bytes
};
const char* to_string(ErrorKind k);

struct TxqError {
    // cycle() when the error became visible: the cycle of the CMD write for command errors; for
    // errors found while the link steps (DestRefused, SourceModified) the cycle after that step.
    uint64_t cycle = 0;
    uint32_t queue = 0;
    ErrorKind kind = ErrorKind::BadCommand;
    uint32_t addr = 0;  // the offending address (start, dest, delivery address; the CMD value for
                        // CmdWhileBusy / UnsupportedCommand / BadCommand; the register value for
                        // BadMaxPktSize)
    uint32_t size = 0;  // the transfer size in effect (0 where it does not apply)
    bool operator==(const TxqError&) const = default;
};
std::ostream& operator<<(std::ostream& os, const TxqError& e);

enum class CommandKind : uint8_t { Data, RemoteRegWrite };

// One accepted command's end-to-end completion: its last frame landed in the peer.
struct Completion {
    uint64_t cycle = 0;  // the cycle after whose step() the last byte is visible in the peer
    uint32_t queue = 0;
    uint64_t command_id = 0;  // TxQueues::last_command_id() at acceptance
    CommandKind kind = CommandKind::Data;
    uint32_t dest = 0;
    uint32_t size = 0;  // payload bytes (4 for a register write)
    bool operator==(const Completion&) const = default;
};

}  // namespace sim::eth
