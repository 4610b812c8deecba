// Remote access on Wormhole: how the host reaches a chip that is not PCIe-attached (the second
// chip of an n300, chips 4-7 of a T3K). The host writes commands into a queue in the L1 of an eth
// core of a PCIe-attached chip (the gateway); that core's base firmware carries them over its
// link to the base firmware of the eth core at the other end, which does the NoC access on its
// chip and sends the result back. Shared by the host (fabric::RemoteAccess), the base firmware
// (firmware/base/) and the model: fixed-width constants only.
//
// Facts (reference host-and-pcie.md §5, the WH "routing firmware" queue protocol of tt-umd and
// luwen): the routing struct at 0x11000 (ROUTING_FW_RESERVED_BASE, 28 KiB reserved up to
// 0x18000), the host request queue at 0x11080 and the response queue at 0x11200, each 192 B of
// counters, write pointer, read pointer and four 32-B commands; pointers run modulo 8 over four
// slots; data blocks of up to 1 KiB at 0x12000; a command's address packs the chip's Ethernet
// coordinates, the core's NOC0 coordinates and a 36-bit offset; its flags are the ones below.
//
// Ours (marked below): the meaning of the counters words, the response blocks at 0x13000, and
// the link boxes the two base firmwares exchange at 0x14000 (silicon's layout there is not
// public). Only one hop: a command for a chip that is neither the gateway's nor its link peer's
// is answered kFlagDestUnreachable.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch_map.h"

namespace protocol::remote_access {

// ---- the reserved region and the host queues (silicon) -----------------------------------------
inline constexpr uint32_t kReservedBase = 0x11000;  // ROUTING_FW_RESERVED_BASE
inline constexpr uint32_t kReservedEnd = 0x18000;   // + 28 KiB: ERISC_L1_UNRESERVED_BASE with it
inline constexpr uint32_t kRequestQueue = 0x11080;
inline constexpr uint32_t kResponseQueue = 0x11200;
inline constexpr uint32_t kQueueSlots = 4;
inline constexpr uint32_t kPtrMask = 2 * kQueueSlots - 1;  // pointers run modulo 8
inline constexpr uint32_t kRequestBlocks = 0x12000;        // ETH_ROUTING_DATA_BUFFER_ADDR
inline constexpr uint32_t kMaxBlockBytes = 1024;
inline constexpr uint32_t kBlockAlign = 32;  // a block's target address: 32-B aligned

// Command flags.
inline constexpr uint32_t kFlagWrReq = 0x1;
inline constexpr uint32_t kFlagWrAck = 0x2;
inline constexpr uint32_t kFlagRdReq = 0x4;
inline constexpr uint32_t kFlagRdData = 0x8;
inline constexpr uint32_t kFlagDataBlock = 0x40;
inline constexpr uint32_t kFlagNoc1 = 0x200;  // target coordinates are NOC1's
inline constexpr uint32_t kFlagOrdered = 0x1000;
inline constexpr uint32_t kFlagBlockUnavailable = 1u << 30;
inline constexpr uint32_t kFlagDestUnreachable = 1u << 31;

struct RoutingCmd {
    uint64_t sys_addr;  // sys_addr() below
    uint32_t data;      // inline: the word; block: its size in bytes
    uint32_t flags;
    uint16_t rack;  // (shelf << 8) | rack
    uint16_t src_resp_buf_index;
    uint32_t local_buf_index;
    uint8_t src_resp_q_id;
    uint8_t host_mem_txn_id;
    uint16_t padding;
    uint32_t src_addr_tag;
};
static_assert(sizeof(RoutingCmd) == 32);
static_assert(offsetof(RoutingCmd, data) == 8 && offsetof(RoutingCmd, flags) == 12 &&
              offsetof(RoutingCmd, src_addr_tag) == 28);

// Ours: what the firmware counts in the request queue's counter words (the host reads them to
// know its writes are done and whether anything failed).
enum Counter : uint32_t {
    kWritesDone = 0,  // write commands carried out (or failed: see kErrors)
    kReadsDone = 1,   // read commands answered
    kErrors = 2,      // commands that failed (unreachable, NoC or link error, timeout)
    kLastErrorFlags = 3,
    kLastErrorAddrLo = 4,
    kLastErrorAddrHi = 5,
    kCounterWords = 8,
};

struct CmdQueue {
    uint32_t counters[kCounterWords];
    uint32_t wptr;
    uint32_t pad0[3];
    uint32_t rptr;
    uint32_t pad1[3];
    RoutingCmd cmd[kQueueSlots];
};
static_assert(sizeof(CmdQueue) == 192);
static_assert(offsetof(CmdQueue, wptr) == 32 && offsetof(CmdQueue, rptr) == 48 &&
              offsetof(CmdQueue, cmd) == 64);
static_assert(kRequestQueue + 2 * sizeof(CmdQueue) == kResponseQueue);

// Addresses in a queue: its pointers, the command a pointer names, a counter word.
constexpr uint32_t wptr_addr(uint32_t queue) {
    return queue + offsetof(CmdQueue, wptr);
}
constexpr uint32_t rptr_addr(uint32_t queue) {
    return queue + offsetof(CmdQueue, rptr);
}
constexpr uint32_t cmd_addr(uint32_t queue, uint32_t ptr) {
    return queue + offsetof(CmdQueue, cmd) + (ptr % kQueueSlots) * sizeof(RoutingCmd);
}
constexpr uint32_t counter_addr(uint32_t index) {
    return kRequestQueue + offsetof(CmdQueue, counters) + 4 * index;
}

constexpr uint32_t request_block(uint32_t slot) {
    return kRequestBlocks + slot * kMaxBlockBytes;
}
// Ours: a read's data block, by response slot.
inline constexpr uint32_t kResponseBlocks = 0x13000;
constexpr uint32_t response_block(uint32_t slot) {
    return kResponseBlocks + slot * kMaxBlockBytes;
}

constexpr bool queue_empty(uint32_t wptr, uint32_t rptr) {
    return wptr == rptr;
}
constexpr bool queue_full(uint32_t wptr, uint32_t rptr) {
    return wptr != rptr && (wptr % kQueueSlots) == (rptr % kQueueSlots);
}
constexpr uint32_t next_ptr(uint32_t p) {
    return (p + 1) & kPtrMask;
}

// sys_addr: ((((chip_y << 6 | chip_x) << 6 | noc_y) << 6 | noc_x) << 36) | offset.
inline constexpr uint32_t kOffsetBits = 36;
inline constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;
struct SysAddr {
    uint32_t chip_x, chip_y, noc_x, noc_y;
    uint64_t offset;
};
constexpr uint64_t sys_addr(const SysAddr& a) {
    const uint64_t route =
        ((((uint64_t{a.chip_y} & 63) << 6 | (a.chip_x & 63)) << 6 | (a.noc_y & 63)) << 6 |
         (a.noc_x & 63));
    return route << kOffsetBits | (a.offset & kOffsetMask);
}
constexpr SysAddr decode_sys_addr(uint64_t s) {
    const uint64_t route = s >> kOffsetBits;
    return {static_cast<uint32_t>(route >> 12 & 63), static_cast<uint32_t>(route >> 18 & 63),
            static_cast<uint32_t>(route & 63), static_cast<uint32_t>(route >> 6 & 63),
            s & kOffsetMask};
}
static_assert(decode_sys_addr(sys_addr({3, 1, 9, 6, 0xFFB121B0})).chip_y == 1);
static_assert(decode_sys_addr(sys_addr({3, 1, 9, 6, 0xFFB121B0})).noc_x == 9);
static_assert(decode_sys_addr(sys_addr({3, 1, 9, 6, 0xFFB121B0})).offset == 0xFFB121B0);

// A chip's Ethernet coordinates in the link-training results (RESULTS_BUF 0x1EC0, 32-bit words,
// 0x0000YYXX): this chip's, and the chip at the other end of the link.
inline constexpr uint32_t kResultsLocalCoordWord = 66;
inline constexpr uint32_t kResultsRemoteCoordWord = 74;
constexpr uint32_t pack_coord(uint32_t x, uint32_t y) {
    return (y & 0xFF) << 8 | (x & 0xFF);
}

// ---- ours: the link boxes ----------------------------------------------------------------------
// A command crosses the link as a LinkMsg (and a write's data) into the peer's inbox, then a
// doorbell with its sequence number; the answer comes back the same way into the sender's reply
// box. Both sides use the same addresses. Ethernet writes on one queue arrive in order, so a
// doorbell seen means its message and data are there.
struct LinkMsg {
    uint64_t sys_addr;
    uint32_t flags;   // the command's kFlagWrReq / kFlagRdReq / kFlagDataBlock
    uint32_t size;    // bytes (a word: 4)
    uint32_t data;    // inline word (written, or read back)
    uint32_t status;  // reply: 0, or the kFlag... error bits
    uint32_t reserved[2];
};
static_assert(sizeof(LinkMsg) == 32);
struct Doorbell {
    uint32_t seq;  // nonzero, new for every message
    uint32_t reserved[3];
};
static_assert(sizeof(Doorbell) == 16);

// One box: the message, the data (a 32-B aligned target's bytes keep their offset mod 32), the
// doorbell.
inline constexpr uint32_t kBoxMsg = 0;
inline constexpr uint32_t kBoxData = 64;
inline constexpr uint32_t kBoxDoorbell = kBoxData + kMaxBlockBytes + 64;
inline constexpr uint32_t kBoxBytes = kBoxDoorbell + 64;
inline constexpr uint32_t kInbox = 0x14000;         // commands from the peer
inline constexpr uint32_t kReplyBox = 0x14800;      // answers from the peer
inline constexpr uint32_t kOutStaging = 0x15000;    // the commands this core sends
inline constexpr uint32_t kReplyStaging = 0x15800;  // the answers this core sends
static_assert(kBoxBytes <= 0x800);
static_assert(kReplyStaging + kBoxBytes <= kReservedEnd);
static_assert(response_block(kQueueSlots) <= kInbox);
static_assert(kReservedEnd <= hal::kWormholeB0.l1_unreserved_base,
              "applications' L1 (the router's block) starts above the reserved region");

// Before an application takes the core, the base firmware serves commands until none came for
// this many cycles: a host that saw the core idle just before is answered, then finds it busy.
inline constexpr uint32_t kQuietBeforeAppCycles = 2000;

// How long the gateway waits for its peer's answer before failing the command, in cycles
// (the peer's base firmware serves its inbox at least once per heartbeat period while idle).
inline constexpr uint32_t kPeerAnswerTimeoutCycles = 200000;

}  // namespace protocol::remote_access
