// RemoteAccess: reads and writes on a Wormhole chip that is not PCIe-attached, through the
// routing-firmware queues of a gateway eth core on a chip that is (protocol/erisc_remote_access.h;
// reference host-and-pcie.md §5). The gateway's base firmware carries each command over its link
// to the remote chip's base firmware, which does the NoC access there.
//
//   writes  32-B aligned runs go as blocks of up to 1 KiB through the gateway's request blocks,
//           everything else as aligned 32-bit words (the bytes around an unaligned edge are
//           read first and written back unchanged); up to four commands are queued at once and
//           write() returns when the gateway reports all of them done.
//   reads   the same pieces, one command at a time, each answered in the response queue.
//   errors  Error(Device) naming the gateway, the target and what the firmware reported
//           (unreachable, NoC or link failure); Error(Timeout) when the gateway does not take or
//           answer a command within kRemoteTimeoutCycles (no base firmware, a stuck link).
//
// The gateway core is accessed through `mmio` (a Device whose chip `gateway.chip` is directly
// reachable); `wait` lets time pass between polls (the model steps, silicon sleeps). Only one
// user may drive a gateway's queues at a time: PcieDevice holds the gateway's LOCK_CTL lock
// around each access.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "fabric/coord.h"

namespace fabric {

class Device;

inline constexpr uint64_t kRemotePollCycles = 200;
inline constexpr uint64_t kRemoteTimeoutCycles = 20'000'000;  // 20 ms at 1 GHz

class RemoteAccess {
  public:
    // `target_coord`: the remote chip's Ethernet coordinates (0x0000YYXX, as link training
    // reports them); `who` names the remote chip in messages ("chip 4").
    RemoteAccess(Device& mmio, CoreLocation gateway, uint32_t target_coord, std::string who,
                 std::function<void(uint64_t cycles)> wait,
                 uint64_t timeout_cycles = kRemoteTimeoutCycles);

    void write(CoreCoord core, uint64_t addr, std::span<const uint8_t> data);
    void read(CoreCoord core, uint64_t addr, std::span<uint8_t> data);

    const CoreLocation& gateway() const { return gateway_; }

  private:
    template <typename Done, typename TimedOut>
    void await(Done&& done, TimedOut&& timed_out);
    uint64_t sys_addr(CoreCoord core, uint64_t addr) const;
    uint32_t push(uint32_t flags, uint64_t sys, uint32_t data, std::span<const uint8_t> block);
    void wait_writes(uint32_t done_before, uint32_t errors_before, uint32_t count);
    uint32_t read_word(CoreCoord core, uint64_t addr);
    void read_piece(CoreCoord core, uint64_t addr, std::span<uint8_t> out);
    [[noreturn]] void fail_reported(std::string_view what, uint32_t flags, uint64_t sys) const;
    std::string where() const;

    Device& mmio_;
    CoreLocation gateway_;
    uint32_t target_coord_;
    std::string who_;
    std::function<void(uint64_t)> wait_;
    uint64_t timeout_;
};

}  // namespace fabric
