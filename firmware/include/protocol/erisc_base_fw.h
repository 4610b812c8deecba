// The L1 words of a Wormhole active Ethernet core that belong to its base firmware: what the host,
// the model (sim::Cluster) and our base firmware (firmware/base/) agree on. Shared by firmware
// (rv32) and host (x86-64): fixed-width constants only, pinned against hal/arch_map.h.
//
// Facts (reference host-and-pcie.md §2.4, fabric-protocol.md §5.1-5.2): on a WH active eth core
// the base firmware owns L1 [0x0, 0x9000) (init code 0x0, platform words 0x1000, code 0x2000, data
// 0x8C00), keeps a heartbeat at 0x1C (upper half 0xABCD), publishes link status at 0x1ED4 (6 = up),
// reads link-training results at 0x1104 / 0x1440, launches the application at FIRMWARE_BASE 0x9040
// when LAUNCH_ERISC_APP_FLAG 0x9004 is set, and offers the cooperative context switch through the
// jump table at 0x9020 (__erisc_jump_table). The app clears the launch flag when it is done.
//
// Model additions (not silicon words), marked "ours" below: the base firmware status block at
// 0x8FE0, inside the base firmware's own data region.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch_map.h"

namespace protocol::base_fw {

// ---- the base firmware's region and the application's entry
// --------------------------------------
inline constexpr uint32_t kImageBase = 0x0;    // reset PC: the base firmware starts here
inline constexpr uint32_t kImageEnd = 0x9000;  // L1_EPOCH_Q_BASE: nothing of the image at or above
inline constexpr uint32_t kCodeBase = 0x2000;  // ERISC_CODE (27 KiB)
inline constexpr uint32_t kDataBase = 0x8C00;  // ERISC_DATA (1 KiB, status block at its top)
inline constexpr uint32_t kPlatformBase =
    0x1000;  // ERISC_PLATFORM: status words (not in the image)
inline constexpr uint32_t kPlatformEnd = 0x2000;
inline constexpr uint32_t kEpochQBase = 0x9000;     // L1_EPOCH_Q_BASE
inline constexpr uint32_t kLaunchAppFlag = 0x9004;  // LAUNCH_ERISC_APP_FLAG: host writes 1
inline constexpr uint32_t kJumpTable = 0x9020;      // __erisc_jump_table (32 B)
inline constexpr uint32_t kJumpTableBytes = 32;
// Word 0 of the jump table: the context-switch function (void (*)(void)). The app calls it to
// yield to the base firmware, which does its periodic work (heartbeat, link status) and returns.
inline constexpr uint32_t kContextSwitchPtr = kJumpTable;
inline constexpr uint32_t kAppBase = 0x9040;  // FIRMWARE_BASE: the app is called here

// Local data RAM: the base firmware's stack is its reserved bottom part.
inline constexpr uint32_t kStackBottom = hal::common::kLocalDataRamBase;
inline constexpr uint32_t kStackTop =
    hal::common::kLocalDataRamBase + hal::kWormholeB0.local_data_ram_reserved;

// ---- status words the base firmware publishes
// ----------------------------------------------------
inline constexpr uint32_t kHeartbeat = 0x1C;
inline constexpr uint32_t kHeartbeatSignature = 0xABCD0000;  // upper half; lower half counts
inline constexpr uint32_t kHeartbeatSignatureMask = 0xFFFF0000;
inline constexpr uint32_t kLinkStatus = hal::kWormholeB0.link_status.addr;  // 0x1ED4
inline constexpr uint32_t kLinkStatusUp = hal::kWormholeB0.link_status.up;
// Ours: what our base firmware publishes when the link is not up. Silicon uses several codes; 0
// means training has not finished (train status 0), kLinkStatusDown that it failed or the port is
// not connected.
inline constexpr uint32_t kLinkStatusTraining = 0;
inline constexpr uint32_t kLinkStatusDown = hal::kWormholeB0.link_status.down;

// ---- link-training results (written by link training; in the model by sim::Cluster)
// --------------
inline constexpr uint32_t kBootParams = 0x1000;       // boot parameters copied from SPI
inline constexpr uint32_t kPortDisableMask = 0x1008;  // bit N: channel N disabled
inline constexpr uint32_t kNodeInfo = 0x1100;
inline constexpr uint32_t kTrainStatus = 0x1104;
inline constexpr uint32_t kTrainStatusTraining = 0;
inline constexpr uint32_t kTrainStatusOk = 1;
inline constexpr uint32_t kTrainStatusFail = 2;
inline constexpr uint32_t kEthConnInfo = 0x1200;
inline constexpr uint32_t kLinkError = 0x1440;  // >= 11: not connected
inline constexpr uint32_t kLinkErrorNone = 0;
inline constexpr uint32_t kLinkErrorNotConnectedMin = 11;
inline constexpr uint32_t kLinkErrorPortNotPopulated = 13;
inline constexpr uint32_t kResultsBuf = 0x1EC0;           // RESULTS_BUF, 32-bit words:
inline constexpr uint32_t kResultsLocalAsicIdWord = 64;   //   local board/asic id (model: chip id)
inline constexpr uint32_t kResultsRemoteAsicIdWord = 72;  //   remote asic id (model: peer chip id)
inline constexpr uint32_t kResultsRemoteEthIdWord = 76;   //   remote eth id (peer channel)
inline constexpr uint32_t kRetrainCount = 0x1EDC;
inline constexpr uint32_t kLocalEthId = 0x1FD0;

constexpr uint32_t results_word(uint32_t index) {
    return kResultsBuf + 4 * index;
}

// ---- ours: the base firmware status block
// --------------------------------------------------------
inline constexpr uint32_t kStatusBlock = 0x8FE0;  // top 32 B of ERISC_DATA, below kImageEnd
inline constexpr uint32_t kStatusMagic = 0xBA5EF1A0;
enum class State : uint32_t {
    Booting = 0,     // before the base firmware has run (L1 is zero)
    Idle = 1,        // supervising: heartbeat, link status, waiting for the launch flag
    AppRunning = 2,  // the application at kAppBase has been called and has not returned
};
struct StatusBlock {
    uint32_t magic;         // kStatusMagic once the base firmware has initialised
    uint32_t state;         // State
    uint32_t app_launches;  // applications started since boot
    uint32_t app_returns;   // applications that returned to the base firmware
    uint32_t app_result;    // what the last application returned (a0)
    uint32_t yields;        // context switches the applications made through the jump table
    uint32_t idle_slices;   // supervisory loop passes (one per heartbeat period while idle)
    uint32_t reserved;
};
static_assert(sizeof(StatusBlock) == 32);
static_assert(offsetof(StatusBlock, state) == 4 && offsetof(StatusBlock, app_result) == 16 &&
              offsetof(StatusBlock, idle_slices) == 24);
static_assert(kStatusBlock + sizeof(StatusBlock) == kImageEnd);

// How often the idle loop beats: one heartbeat per kHeartbeatPeriodCycles of wall clock while it
// waits for the launch flag, so a host or test sees it move within microseconds, and the wait for
// the flag is one bounded wait per period (the flag is seen within one poll, ~20 cycles).
inline constexpr uint32_t kHeartbeatPeriodCycles = 1000;  // 1 us at the WH 1 GHz clock

// ---- pinned against the arch map ----------------------------------------------------------------
static_assert(kLaunchAppFlag == hal::kWormholeB0.launch_app_flag);
static_assert(kAppBase == hal::kWormholeB0.app_fw_base);
static_assert(kImageEnd <= kLaunchAppFlag && kJumpTable + kJumpTableBytes <= kAppBase);
static_assert(kPlatformEnd <= kCodeBase && kCodeBase < kDataBase && kDataBase < kStatusBlock);
static_assert(kHeartbeat < kPlatformBase && kLinkStatus < kPlatformEnd &&
              kLocalEthId < kPlatformEnd);
static_assert(results_word(kResultsRemoteEthIdWord) < kPlatformEnd);
static_assert(kStackTop <= hal::common::kLocalDataRamBase + hal::kWormholeB0.local_data_ram_size);

}  // namespace protocol::base_fw
