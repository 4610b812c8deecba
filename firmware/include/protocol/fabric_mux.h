// The fabric mux protocol, shared by the mux firmware (firmware/mux) and the host: many worker
// clients share one router worker channel (ch0) through a mux core (an idle Ethernet core or a
// Tensix tile). A client connects to a mux channel exactly as it would to a router's ch0
// (fabric/worker_adapter.h, WorkerChannel, WorkerConnectionInfo, pushed stream, credit word);
// the mux holds the single connection to the router's ch0 and forwards each slot as it is.
//
//   client --NoC--> [mux channel i slots] --NoC--> [router ch0 slots] --eth--> ...
//
// Channels: `full_channels` full-size channels (slots of header + full_payload_bytes), then
// `header_channels` header-only channels (64-B slots: inline writes and atomic increments).
// Channel i's pushed counter is stream kMuxStreamPushed0 + i on the mux core; its freed counter
// (packets forwarded and read out of the slot) is written into the client's credit word.
//
// Scheduling (firmware/mux/README.md has the argument): one packet per channel per visit, round
// robin; a channel whose packet finds the router full waits at most forward_wait_cycles, then the
// mux moves on; every channel's connection block is looked at every teardown_check_every rounds,
// so a teardown is answered within a bounded number of loop iterations whatever the router does;
// under contention header-only channels get one packet per header_every full packets.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch_map.h"
#include "protocol/fabric.h"

namespace protocol::fabric {

inline constexpr uint32_t kMuxConfigMagic = 0x3D0C0F16;
inline constexpr uint32_t kMuxMaxChannels = 16;   // full + header-only
inline constexpr uint32_t kMuxMaxSlots = 16;      // per channel
inline constexpr uint32_t kMuxStreamPushed0 = 0;  // channel i: stream kMuxStreamPushed0 + i

// Host-written at mux_layout().config before the mux starts.
struct MuxConfig {
    uint32_t magic;               // kMuxConfigMagic
    uint32_t version;             // kProtocolVersion
    uint32_t full_channels;       // N >= 0 (N + M in 1..kMuxMaxChannels)
    uint32_t full_slots;          // slots per full-size channel (1..kMuxMaxSlots)
    uint32_t full_payload_bytes;  // payload per full-size slot (multiple of 16, <= router's)
    uint32_t header_channels;     // M >= 0
    uint32_t header_slots;        // slots per header-only channel (1..kMuxMaxSlots)
    uint32_t
        header_every;  // under contention: one header-only packet per this many full ones (>= 1)
    uint32_t forward_wait_cycles;   // longest wait of one channel for a router slot per visit
    uint32_t teardown_check_every;  // rounds between looks at the connection blocks (>= 1)
    uint32_t ready_timeout_us;      // waiting for the router to be ReadyForTraffic
    uint32_t drain_timeout_us;      // graceful termination drain bound
    uint32_t progress_timeout_us;   // one NoC wait, opening and closing the router connection
    uint32_t
        router_status_addr;  // the router's RouterStatusBlock (its core: downstream.router_x/y)
    uint32_t reserved0[2];
    WorkerChannel downstream;  // the router's ch0, as a worker would open it
    uint32_t reserved[8];
};
static_assert(sizeof(MuxConfig) == 128);
static_assert(offsetof(MuxConfig, downstream) == 64);

// Mux -> host. It starts with the ComponentStatusHead every component shares (status, stage,
// stuck_at, detail, heartbeat; RouterStatus / RouterWait values), so one monitor reads both.
struct MuxStatusBlock {
    uint32_t status;  // RouterStatus: Started .. StreamsInitialized, ReadyForTraffic, Draining,
                      // Terminated, errors
    uint32_t stage;
    uint32_t stuck_at;  // RouterWait
    uint32_t detail;
    uint32_t heartbeat;    // main loop iterations, published every few rounds
    uint32_t bad_packets;  // headers refused (dropped, credit returned); detail: the last reason
    uint32_t connects;     // client connections accepted
    uint32_t teardowns;    // client close requests answered
    uint32_t forward_giveups;  // visits that waited forward_wait_cycles for a router slot in vain
    uint32_t undrained;        // packets left in mux slots at exit
    uint32_t undrained_channels;          // bit per channel that still held packets at exit
    uint32_t round_max_cycles;            // the longest main-loop round: a close is answered within
                                          // teardown_check_every + 1 of these
    uint32_t forwarded[kMuxMaxChannels];  // packets forwarded per channel
    uint32_t main_loop_iterations;
    uint32_t reserved[3];
};
static_assert(sizeof(MuxStatusBlock) == 128);
static_assert(offsetof(MuxStatusBlock, status) == offsetof(ComponentStatusHead, status));
static_assert(offsetof(MuxStatusBlock, stage) == offsetof(ComponentStatusHead, stage));
static_assert(offsetof(MuxStatusBlock, stuck_at) == offsetof(ComponentStatusHead, stuck_at));
static_assert(offsetof(MuxStatusBlock, detail) == offsetof(ComponentStatusHead, detail));
static_assert(offsetof(MuxStatusBlock, heartbeat) == offsetof(ComponentStatusHead, heartbeat));

// Why a MuxConfig was refused (status ConfigInvalid, detail).
enum class MuxConfigCheck : uint32_t {
    Magic = 1,
    Version = 2,
    Channels = 3,
    Slots = 4,
    PayloadBytes = 5,
    Downstream = 6,
    Timeouts = 7,
    Layout = 8,
    Schedule = 9,  // header_every or teardown_check_every is 0
};
inline constexpr CodeName<MuxConfigCheck> kMuxConfigCheckNames[] = {
    {MuxConfigCheck::Magic, "magic"},
    {MuxConfigCheck::Version, "version"},
    {MuxConfigCheck::Channels, "channels"},
    {MuxConfigCheck::Slots, "slots"},
    {MuxConfigCheck::PayloadBytes, "payload_bytes"},
    {MuxConfigCheck::Downstream, "downstream"},
    {MuxConfigCheck::Timeouts, "timeouts"},
    {MuxConfigCheck::Layout, "layout"},
    {MuxConfigCheck::Schedule, "schedule"},
};
static_assert(codes_consecutive(kMuxConfigCheckNames, 1) &&
              code_count(kMuxConfigCheckNames) == static_cast<uint32_t>(MuxConfigCheck::Schedule));

// Why a client's packet was refused (MuxStatusBlock::detail with bad_packets counted).
enum class MuxBadPacket : uint32_t {
    Magic = 0x200,
    PayloadBytes = 0x201,  // more than the channel's payload capacity (header-only: any payload)
};
inline constexpr CodeName<MuxBadPacket> kMuxBadPacketNames[] = {
    {MuxBadPacket::Magic, "magic"},
    {MuxBadPacket::PayloadBytes, "payload_bytes"},
};
static_assert(codes_consecutive(kMuxBadPacketNames, static_cast<uint32_t>(MuxBadPacket::Magic)));

struct MuxLayout {
    uint32_t config;       // MuxConfig (host writes)
    uint32_t status;       // MuxStatusBlock (mux writes)
    uint32_t termination;  // Termination (host or a client writes)
    uint32_t client;       // the mux's own router connection words: credit (+0), teardown (+16),
                           // staging (+32, 160 B) as fabric::FabricConnection::L1
    uint32_t scratch;      // 16 B per channel: staging for credit / teardown writes to clients
    uint32_t connection;   // WorkerConnectionInfo per channel, consecutive
    uint32_t slots[kMuxMaxChannels];  // channel i's first slot
    uint32_t full_slot_bytes;         // header + full_payload_bytes
    uint32_t end;                     // first byte after the last slot
    bool fits;  // end <= router_l1_top (the same bound on an Ethernet or Tensix core)
};

inline constexpr uint32_t kMuxClientBytes = 32 + 160;

constexpr uint32_t mux_channels(const MuxConfig& c) {
    return c.full_channels + c.header_channels;
}

// Laid out from the same base as a router (a mux and a router never share a core).
constexpr MuxLayout mux_layout(const hal::ArchMap& a, const MuxConfig& c) {
    MuxLayout l{};
    uint32_t p = router_l1_base(a);
    l.config = p;
    p += sizeof(MuxConfig);
    l.status = p;
    p += sizeof(MuxStatusBlock);
    l.termination = p;
    p += 16;
    l.client = p;
    p += kMuxClientBytes;
    l.scratch = p;
    p += 16 * 2 * kMuxMaxChannels;
    l.connection = p;
    p += sizeof(WorkerConnectionInfo) * kMuxMaxChannels;
    p = align_up(p, 64);
    l.full_slot_bytes =
        align_up(static_cast<uint32_t>(sizeof(PacketHeader)) + c.full_payload_bytes, 16);
    const uint32_t n = mux_channels(c) < kMuxMaxChannels ? mux_channels(c) : kMuxMaxChannels;
    for (uint32_t i = 0; i < n; ++i) {
        l.slots[i] = p;
        p += i < c.full_channels ? c.full_slots * l.full_slot_bytes
                                 : c.header_slots * static_cast<uint32_t>(sizeof(PacketHeader));
    }
    l.end = p;
    l.fits = p <= router_l1_top(a) && mux_channels(c) <= kMuxMaxChannels;
    return l;
}

static_assert(mux_layout(hal::kWormholeB0, MuxConfig{}).status ==
              endpoint_status_addr(hal::kWormholeB0));
static_assert(mux_layout(hal::kBlackhole, MuxConfig{}).status ==
              endpoint_status_addr(hal::kBlackhole));

// What a client of mux channel i opens (the mux core at mux_x, mux_y).
constexpr WorkerChannel mux_channel(const hal::ArchMap& a, const MuxConfig& c, uint32_t i,
                                    uint32_t mux_x, uint32_t mux_y) {
    const MuxLayout l = mux_layout(a, c);
    const bool full = i < c.full_channels;
    return WorkerChannel{mux_x,
                         mux_y,
                         l.slots[i],
                         full ? c.full_slots : c.header_slots,
                         full ? l.full_slot_bytes : static_cast<uint32_t>(sizeof(PacketHeader)),
                         full ? c.full_payload_bytes : 0,
                         l.connection + i * static_cast<uint32_t>(sizeof(WorkerConnectionInfo)),
                         kMuxStreamPushed0 + i};
}

}  // namespace protocol::fabric
