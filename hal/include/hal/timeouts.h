// Every timeout constant in the project, each with the reason for its value. Firmware and host
// code add theirs here rather than writing a number at the call site. Values are in microseconds
// of wall-clock time (Deadline::after_us converts with the arch's clock).
#pragma once

#include <stdint.h>

namespace hal::timeouts {

// NoC command buffer ready (NOC_CMD_CTRL reads 0 again). The NIU frees a command buffer as soon as
// the request gets a virtual channel for its first hop, which takes tens of cycles when the NoC
// is idle and a few microseconds behind a congested router (one 16 KiB burst occupies a link for
// ~512 cycles on WH). 200 us is more than 20x the worst congestion seen in the reference
// benchmarks, yet short enough that a wedged NIU (e.g. a VC_LINKED transaction never closed) or a
// destination that stopped accepting (the write ahead never leaves the buffer) is reported by the
// waiting core itself, with where it waited, well inside the host's 1 ms stall window.
inline constexpr uint32_t kNocCmdBufReadyUs = 200;

// NoC write/read/atomic barrier (every ack or response back). A round trip across a 12x17 mesh
// is ~1-10 us even under load; responses can also queue behind a destination whose L1 is
// saturated by other writers. 10 ms gives three orders of magnitude of margin; a barrier that
// misses it means a lost ack or a destination that stopped draining, which the caller must
// report rather than wait out.
inline constexpr uint32_t kNocBarrierUs = 10'000;

// Ethernet TX queue accepting the next command. The queue is busy only until the hardware has
// latched the previous command's metadata (~tens of cycles), but TT-link back-pressure during
// resend bursts (the peer not acking because it is itself stalled) can hold it far longer. 100 ms
// rides out such bursts; after it the caller should publish a status and re-check the
// termination word rather than spin (the link may be retraining, which takes much longer).
inline constexpr uint32_t kEthTxqReadyUs = 100'000;

// Fabric router: how often the handshake master repeats its message while the peer has not
// answered. The peer may still be loading (its handshake_in is cleared at start, which can erase
// an early message), so the message is resent rather than sent once. One 64-B Ethernet packet
// takes well under 1 us; resending every 5 us keeps the link almost idle yet answers a late peer
// within a few microseconds of it starting.
inline constexpr uint32_t kFabricHandshakeResendUs = 5;

// Fabric router, graceful termination: how long a router must have seen nothing to send, nothing
// received and nothing in flight before it tells its peer it has drained. A packet crosses a chip
// (receiver -> NoC -> next router's sender channel) in about 1 us; 20 us of quiet means no packet
// is on its way through this router unless a router upstream is itself backed up (in which case
// this router's channels would not be empty for long).
inline constexpr uint32_t kFabricDrainQuietUs = 20;

}  // namespace hal::timeouts
