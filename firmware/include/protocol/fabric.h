// The fabric protocol (lines and rings, meshes and tori), shared by the router and worker-adapter
// firmware (rv32) and the host control plane (x86-64): the packet header and its NoC send types,
// the 1D route encoding and the 2D hop-nibble routes, the router configuration the host writes
// into each router's L1, the router L1 layout computed from that configuration (one function,
// used by both sides), status and termination words with the codes behind them (ConfigCheck,
// BadPacket, HandshakeField), and the worker connection block. Fixed-width fields only; every
// layout is pinned by static_asserts.
//
// Data path (one direction of one link; "sender"/"receiver" are relative to Ethernet):
//
//   worker --NoC--> [sender ch0 slots] --eth--> [peer receiver rx0/rx1 slots] --NoC--> local write
//   upstream router --NoC--> [sender ch1 (VC0) / ch2 (VC1) slots]             \--NoC--> next
//   router's
//                                                                                       ch1 / ch2
// Credits (all counters free-running, counted in packets):
//   - "pushed": a producer (worker or upstream router) writes a packet into a sender-channel slot
//     over the NoC, then adds 1 to that channel's pushed stream register (NoC inline write to the
//     stream's update register). The router subtracts 1 when it has sent the packet on Ethernet.
//   - "sent": after the Ethernet data packet the sender adds 1 to the peer's rx_sent stream of the
//     target receiver channel (Ethernet remote register write, same TX queue, so it lands after
//     the data). The receiver subtracts 1 when it takes the packet.
//   - "completed": once the receiver's NoC writes for a slot are flushed (transaction ID of the
//     slot), it adds 1 to the peer's completion stream of the packet's source sender channel.
//     Only then does the sender free its own slot (TT-link may re-read it until then) and count
//     the remote receiver slot free again.
//   - "freed": the router writes each sender channel's free-running freed counter into its
//     producer's credit word in the producer's L1. The producer may push while
//     pushed_count - freed < slots.
//
// 2D (Topology Mesh / Torus): one router per Ethernet port of a mesh device, four per routing
// plane (N, E, S, W). Sender channel 0 takes the local workers, channel 1 + F the traffic
// forwarded by this chip's router facing direction F (F != this router's direction), channel 5
// (torus) the VC1 traffic continuing straight from the opposite router. Routes are one hop
// command (a nibble of direction bits) per hop; the section "2D mesh routing" below.
//
// Ring deadlock avoidance: dateline virtual channels (DESIGN in firmware/router/README.md). A
// router whose outgoing link is the dateline of its direction sends ch0 and ch1 traffic into the
// peer's rx1 (VC1); rx1 forwards into the next router's ch2, which sends into rx1 again. VC1 never
// crosses the dateline a second time because a route is at most ring_size - 1 hops, so the channel
// dependency graph is acyclic. Lines have no dateline and use VC0 only.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch_map.h"
#include "protocol/test_mailbox.h"

namespace protocol::fabric {

// 3: the router's event log (RouterLayout::events). 4: TTL. 5: the control word
// (router_control) and the router's control report (RouterControlReport). 6: the line API
// (RouterConfig::line_reach, WorkerConnectionInfo::line).
inline constexpr uint32_t kProtocolVersion = 6;

// ---- packet header ----------------------------------------------------------------------------

// A core on the destination chip (NOC0 coordinates) and an L1 address there.
struct NocTarget {
    uint32_t addr;
    uint8_t x;
    uint8_t y;
    uint16_t reserved;
};
static_assert(sizeof(NocTarget) == 8);

enum class NocSendType : uint8_t {
    UnicastWrite = 0,         // payload -> write.dst
    InlineWrite = 1,          // inline.value -> inline.dst (4 B), no payload
    AtomicInc = 2,            // atomic.dst += atomic.value, no payload
    FusedWriteAtomicInc = 3,  // payload -> fused.dst, then fused.sem += fused.value
    ScatterWrite = 4,         // payload split into 2..4 chunks -> scatter.dst[i]
    kCount = 5,
};

struct UnicastWriteCmd {
    NocTarget dst;
};
struct InlineWriteCmd {
    NocTarget dst;
    uint32_t value;
};
struct AtomicIncCmd {
    NocTarget dst;
    uint32_t value;
    uint8_t flush;  // flush this receiver channel's earlier writes before incrementing
    uint8_t reserved[3];
};
struct FusedWriteAtomicIncCmd {
    NocTarget dst;  // payload
    NocTarget sem;  // incremented once the payload write is flushed (if flush) or issued
    uint32_t value;
    uint8_t flush;
    uint8_t reserved[3];
};
inline constexpr uint32_t kScatterMaxChunks = 4;
struct ScatterWriteCmd {
    NocTarget dst[kScatterMaxChunks];
    uint16_t chunk_bytes[kScatterMaxChunks - 1];  // the last chunk is the rest of the payload
    uint8_t chunk_count;                          // 2..4
    uint8_t reserved;
};
static_assert(sizeof(ScatterWriteCmd) == 40);

union NocCommand {
    UnicastWriteCmd write;
    InlineWriteCmd inline_write;
    AtomicIncCmd atomic;
    FusedWriteAtomicIncCmd fused;
    ScatterWriteCmd scatter;
    uint32_t words[10];
};
static_assert(sizeof(NocCommand) == 40);

// 1D route: 2 bits per hop, hop 0 (the first receiving router) in the low bits. Each receiving
// router acts on (route & 3) and forwards the packet with route >> 2.
enum class HopAction : uint32_t {
    Invalid = 0,          // a route that ends before its last action (a bad header)
    Write = 1,            // deliver here, stop
    Forward = 2,          // pass on to the next chip
    WriteAndForward = 3,  // deliver here and pass on (multicast)
};
inline constexpr uint32_t kMaxHops1D = 16;

// Unicast to the chip `hops` (1..16) away.
constexpr uint32_t route_unicast(uint32_t hops) {
    uint32_t r = 0;
    for (uint32_t i = 0; i + 1 < hops; ++i)
        r |= static_cast<uint32_t>(HopAction::Forward) << (2 * i);
    return r | (static_cast<uint32_t>(HopAction::Write) << (2 * (hops - 1)));
}
// Multicast to `range` (>= 1) consecutive chips, the first `start` (>= 1) hops away.
constexpr uint32_t route_multicast(uint32_t start, uint32_t range) {
    uint32_t r = 0;
    const uint32_t last = start + range - 1;
    for (uint32_t i = 0; i + 1 < last; ++i) {
        const HopAction a = (i + 1 >= start) ? HopAction::WriteAndForward : HopAction::Forward;
        r |= static_cast<uint32_t>(a) << (2 * i);
    }
    return r | (static_cast<uint32_t>(HopAction::Write) << (2 * (last - 1)));
}
constexpr bool route_hops_ok(uint32_t hops) {
    return hops >= 1 && hops <= kMaxHops1D;
}
constexpr bool route_multicast_ok(uint32_t start, uint32_t range) {
    return start >= 1 && range >= 1 && start + range - 1 <= kMaxHops1D;
}
static_assert(route_unicast(1) == 0x1);
static_assert(route_unicast(3) == 0x1A);  // fwd, fwd, write
static_assert(route_multicast(3, 2) == 0x7A);

inline constexpr uint32_t kHeaderMagic = 0xFA;

// Time to live (seeds/000 §7.2): the sender sets PacketHeader::ttl to a bound on the Ethernet
// hops of any legitimate route of its fabric plus one (the plans' ttl()); every router that takes
// a packet from its link decrements it, and one that finds it expired (1 or 0 on arrival: 0 once
// decremented) drops it (BadPacket::TtlExpired) instead of writing or forwarding it, so a packet
// caught in a routing loop dies within ttl hops. kDefaultTtl is the sender's bound when no plan
// gives one: 16 hops (the longest route a header holds) in each of 8 meshes.
inline constexpr uint32_t kDefaultTtl = 128;
inline constexpr uint32_t kMaxTtl = 255;
constexpr bool ttl_expired(uint32_t ttl_on_arrival) {
    return ttl_on_arrival <= 1;
}

struct PacketHeader {
    NocCommand cmd;          // +0
    uint16_t payload_bytes;  // +40: payload after the header (0 for inline write / atomic inc)
    uint8_t send_type;       // +42: NocSendType
    uint8_t src_channel;     // +43: written by the sending router: its sender channel
    uint32_t route;          // +44: 1D: HopAction per hop. 2D: hop commands 0..7 (a nibble each)
    uint8_t magic;           // +48: kHeaderMagic, so a slot that was never written is caught
    uint8_t ttl;             // +49: time to live: Ethernet hops left (see kDefaultTtl)
    uint16_t branch_hops;    // +50: 2D multicast: chips a branch turning into direction d covers
                             //      (nibble d, MeshDirection order; non-zero: a multicast)
    uint32_t seq;            // +52: free for the sender (tests put a sequence number here)
    uint32_t route_ext;      // +56: 2D: hop commands 8..15
    uint16_t dst_mesh;       // +60: 2D: destination mesh and device (inter-mesh: the entry
    uint8_t dst_device;      // +62:     router of each mesh computes the route on from these)
    uint8_t reserved;
};
static_assert(sizeof(PacketHeader) == 64);
static_assert(offsetof(PacketHeader, ttl) == 49);
static_assert(offsetof(PacketHeader, branch_hops) == 50);
static_assert(offsetof(PacketHeader, route_ext) == 56);
static_assert(offsetof(PacketHeader, dst_mesh) == 60);
static_assert(offsetof(PacketHeader, dst_device) == 62);
static_assert(offsetof(PacketHeader, payload_bytes) == 40);
static_assert(offsetof(PacketHeader, send_type) == 42);
static_assert(offsetof(PacketHeader, src_channel) == 43);
static_assert(offsetof(PacketHeader, route) == 44);
static_assert(offsetof(PacketHeader, magic) == 48);
static_assert(sizeof(PacketHeader) % 16 == 0, "slots and NoC/eth transfers are 16-B aligned");

// Largest payload of one packet: the NoC's largest single write minus the header, rounded down
// to a whole number of 1088-B Bfp8 tiles as the reference does (WH 7 tiles = 7616 B in an 8 KiB
// burst, BH 14 tiles = 15232 B in 16 KiB).
inline constexpr uint32_t kTileBytes = 1088;
constexpr uint32_t max_payload_bytes(const hal::ArchMap& a) {
    return (a.noc_max_burst_bytes - 96) / kTileBytes * kTileBytes;
}
static_assert(max_payload_bytes(hal::kWormholeB0) == 7616);
static_assert(max_payload_bytes(hal::kBlackhole) == 15232);
// Default slot payload: 4 tiles (4352 B), room for 4 KiB packets.
inline constexpr uint32_t kDefaultPayloadBytes = 4 * kTileBytes;

// ---- channels and streams ---------------------------------------------------------------------

// 1D: ch0 worker, ch1 forwarded VC0, ch2 forwarded VC1. 2D: ch0 worker, ch1 + F forwarded on VC0
// from this chip's router facing F, ch5 + F forwarded on VC1 from the router facing F (a torus:
// straight on past a dateline; a mesh of a multi-mesh graph: traffic that entered it from another
// mesh). Arrays are sized for 2D.
inline constexpr uint32_t kNumSenderChannels = 3;    // 1D
inline constexpr uint32_t kMaxSenderChannels = 9;    // 2D
inline constexpr uint32_t kNumReceiverChannels = 2;  // rx0 VC0, rx1 VC1
inline constexpr uint32_t kWorkerChannel = 0;
inline constexpr uint32_t kMeshVc0Channel0 = 1;  // + F
inline constexpr uint32_t kMeshVc1Channel0 = 5;  // + F

// Stream register IDs on the router's Ethernet core.
inline constexpr uint32_t kStreamRxSent0 = 0;     // + rx: packets landed in rx (peer writes)
inline constexpr uint32_t kStreamCompleted0 = 2;  // + ch: completions for sender ch (peer writes)
inline constexpr uint32_t kStreamPushed0 = 11;    // + ch: packets pushed into sender ch (producer)
inline constexpr uint32_t kStreamPeerDrained = 20;  // peer says it drained (graceful termination)
inline constexpr uint32_t kStreamPeerAlive = 21;    // the peer's keep-alives (link health)
// The peer's rejoin marker (RouterControl::Rejoin): behind everything it sent before the link was
// cut, so its arrival says all of that has landed.
inline constexpr uint32_t kStreamPeerRejoin = 22;
static_assert(kStreamCompleted0 >= kStreamRxSent0 + kNumReceiverChannels);
static_assert(kStreamPushed0 >= kStreamCompleted0 + kMaxSenderChannels);
static_assert(kStreamPeerDrained >= kStreamPushed0 + kMaxSenderChannels);
static_assert(kStreamPeerRejoin == kStreamPeerAlive + 1);

// ---- router configuration (host -> router L1) ------------------------------------------------

enum class Topology : uint32_t { Line = 0, Ring = 1, Mesh = 2, Torus = 3 };
constexpr bool is_2d(uint32_t topology) {
    return topology == static_cast<uint32_t>(Topology::Mesh) ||
           topology == static_cast<uint32_t>(Topology::Torus);
}

// Written by the host at RouterLayout::config before launch. Everything the router needs.
struct RouterConfig {
    uint32_t magic;         // kRouterConfigMagic
    uint32_t version;       // kProtocolVersion
    uint32_t topology;      // Topology
    uint32_t chip_id;       // this chip
    uint32_t eth_channel;   // this router's Ethernet channel
    uint32_t peer_chip_id;  // the chip at the other end of the link
    uint32_t peer_eth_channel;
    uint32_t is_master;      // 1: lower chip id; drives the handshake
    uint32_t payload_bytes;  // slot payload capacity (multiple of 16, <= max_payload_bytes)
    uint32_t sender_slots[kMaxSenderChannels];      // 0 = channel unused (1D: ch3..ch8 always)
    uint32_t receiver_slots[kNumReceiverChannels];  // 0 = channel unused (line, mesh: rx1)
    uint32_t dateline;        // 1: VC0 channels send into the peer's rx1 (ring/torus dateline link)
    uint32_t has_downstream;  // 1D: 1 if a router on this chip continues the line past this one
    uint32_t downstream_x;    // its NOC0 coordinates (2D: MeshRouterConfig::neighbor)
    uint32_t downstream_y;
    uint32_t handshake_timeout_us;  // how long to wait for the peer at start-up
    uint32_t ready_timeout_us;      // how long to wait for the host's ready word
    uint32_t drain_timeout_us;      // graceful termination drain bound
    uint32_t progress_timeout_us;   // a single blocked wait inside the main loop (e.g. NoC cmd buf)
    uint32_t ring_size;  // ring: chips in the ring (routes are at most ring_size - 1 hops)
    // Timeouts (seeds/000 §7.3): a packet that has waited this long at the head of a receiver
    // channel for a port with no room, while nothing of that channel moved, is stalled; 0: never.
    uint32_t stall_timeout_us;
    uint32_t stall_action;  // StallAction
    // The line API's bound (LineInfo::reach, published to workers): the chips this router's line
    // reaches past its own chip. 1D line: the chips ahead in its direction; ring: ring_size - 1;
    // 2D: the chips of the mesh row or column ahead in its direction, ring size - 1 where that
    // dimension wraps, 0 on an inter-mesh link. At most kMaxLineHops; 0: no line sends here.
    uint32_t line_reach;
};
// What a router does with a stalled packet: drop it (reported as bad_packet:timeout, its
// completion returned) and every later one for the same port while that port stays full, or
// (debugging) keep it where it is and only report the stall.
enum class StallAction : uint32_t { Drop = 0, Hold = 1 };
inline constexpr uint32_t kRouterConfigMagic = 0xFAB1C0F9;
static_assert(sizeof(RouterConfig) == 128);
static_assert(offsetof(RouterConfig, payload_bytes) == 32 &&
                  offsetof(RouterConfig, receiver_slots) == 72,
              "a router reads its neighbours' payload and slot counts as one 48-B block from +32");

// The fields both ends of a link must agree on; exchanged in the handshake.
struct LinkParams {
    uint32_t version;
    uint32_t topology;
    uint32_t payload_bytes;
    uint32_t receiver_slots[kNumReceiverChannels];
    uint32_t chip_id;  // the sender's identity ...
    uint32_t eth_channel;
    uint32_t expect_chip;  // ... and who it expects at the other end
    bool operator==(const LinkParams&) const = default;
};

// Every code a router or the mux reports has a name, in a table beside its enum: the host prints
// the names (fabric::router_detail_name and friends), tests compare them. A table lists every
// enumerator; static_asserts check that each value in the enum's range has one name.
template <typename E>
struct CodeName {
    E code;
    const char* name;
};
// The name of `value` in `names`, or nullptr when it is not one of the codes.
template <typename E, size_t N>
constexpr const char* code_name(const CodeName<E> (&names)[N], uint32_t value) {
    for (const CodeName<E>& n : names) {
        if (static_cast<uint32_t>(n.code) == value) return n.name;
    }
    return nullptr;
}
// How many codes the table names.
template <typename E, size_t N>
constexpr size_t code_count(const CodeName<E> (&)[N]) {
    return N;
}
// No code twice.
template <typename E, size_t N>
constexpr bool codes_distinct(const CodeName<E> (&names)[N]) {
    for (size_t i = 0; i < N; ++i) {
        for (size_t j = i + 1; j < N; ++j) {
            if (names[i].code == names[j].code) return false;
        }
    }
    return true;
}
// The table has the codes first, first + 1, ..., in order (and nothing else).
template <typename E, size_t N>
constexpr bool codes_consecutive(const CodeName<E> (&names)[N], uint32_t first) {
    for (size_t i = 0; i < N; ++i) {
        if (static_cast<uint32_t>(names[i].code) != first + i) return false;
    }
    return true;
}

// ---- status (router -> host) ------------------------------------------------------------------

// Start-up stages in order, then the end states. The router writes the stage it is in; a timeout
// or error leaves `stage` at the stage that failed and sets `status` to the error.
enum class RouterStatus : uint32_t {
    NotStarted = 0,
    Started = 0xA0B0C0D0,
    ConfigChecked = 0xA0B0C0D1,
    StreamsInitialized = 0xA0B0C0D2,
    Handshaking = 0xA0B0C0D3,
    HandshakeComplete = 0xA1B1C1D1,  // peer answered and agreed: the host may set ready
    ReadyForTraffic = 0xA3B3C3D3,    // main loop running
    Draining = 0xA3B3C3D4,           // graceful termination in progress
    // The control states (RouterControl) as State events name them; `status` stays
    // ReadyForTraffic (the firmware runs), RouterControlReport::state says which.
    Paused = 0xA3B3C3D5,   // RouterControl::Pause reached: quiescent
    Drained = 0xA3B3C3D6,  // RouterControl::Drain reached (a dead link cut, if it was dead)
    // RouterControl::Reroute reached: the link cut, its unacked packets held for the host's
    // RerouteOrder; then the order applied, the sender channels going over the fallback router.
    RerouteHeld = 0xA3B3C3D7,
    Rerouted = 0xA3B3C3D8,
    // RouterControl::Rejoin reached: the link back, its state as after the handshake, still cut
    // until the host's Run.
    Rejoined = 0xA3B3C3D9,
    Terminated = 0xA4B4C4D4,
    // errors (the router stops; `stage` says where)
    ConfigInvalid = 0xE0000001,
    HandshakeMismatch = 0xE0000002,  // the peer disagrees (detail: a HandshakeField)
    Timeout = 0xE0000003,
    BadPacket = 0xE0000004,  // not fatal: counted in RouterStatusBlock::bad_packets
    Fault = 0xE0000005,      // a HAL call failed (detail: hal::Status)
};
inline constexpr CodeName<RouterStatus> kRouterStatusNames[] = {
    {RouterStatus::NotStarted, "not_started"},
    {RouterStatus::Started, "started"},
    {RouterStatus::ConfigChecked, "config_checked"},
    {RouterStatus::StreamsInitialized, "streams_initialized"},
    {RouterStatus::Handshaking, "handshaking"},
    {RouterStatus::HandshakeComplete, "handshake_complete"},
    {RouterStatus::ReadyForTraffic, "ready_for_traffic"},
    {RouterStatus::Draining, "draining"},
    {RouterStatus::Paused, "paused"},
    {RouterStatus::Drained, "drained"},
    {RouterStatus::RerouteHeld, "reroute_held"},
    {RouterStatus::Rerouted, "rerouted"},
    {RouterStatus::Rejoined, "rejoined"},
    {RouterStatus::Terminated, "terminated"},
    {RouterStatus::ConfigInvalid, "config_invalid"},
    {RouterStatus::HandshakeMismatch, "handshake_mismatch"},
    {RouterStatus::Timeout, "timeout"},
    {RouterStatus::BadPacket, "bad_packet"},
    {RouterStatus::Fault, "fault"},
};
static_assert(codes_distinct(kRouterStatusNames) &&
              code_count(kRouterStatusNames) == 19);  // all of them

// Where a router was when something went wrong (RouterStatusBlock::stuck_at).
enum class RouterWait : uint32_t {
    None = 0,
    HandshakeSend = 1,
    HandshakeReply = 2,
    ReadyWord = 3,
    EthTxq = 4,
    NocCmdBuf = 5,
    NocFlush = 6,
    Drain = 7,
    WorkerTeardown = 8,
    // the mux (protocol/fabric_mux.h)
    RouterReady = 9,   // waiting for its router to be ReadyForTraffic
    RouterOpen = 10,   // opening its connection to the router's ch0
    RouterClose = 11,  // closing it at exit
    RouterSlot =
        12,  // waiting for a free router slot (only the unbounded test variant blocks here)
};
inline constexpr CodeName<RouterWait> kRouterWaitNames[] = {
    {RouterWait::None, "none"},
    {RouterWait::HandshakeSend, "handshake_send"},
    {RouterWait::HandshakeReply, "handshake_reply"},
    {RouterWait::ReadyWord, "ready_word"},
    {RouterWait::EthTxq, "eth_txq"},
    {RouterWait::NocCmdBuf, "noc_cmd_buf"},
    {RouterWait::NocFlush, "noc_flush"},
    {RouterWait::Drain, "drain"},
    {RouterWait::WorkerTeardown, "worker_teardown"},
    {RouterWait::RouterReady, "router_ready"},
    {RouterWait::RouterOpen, "router_open"},
    {RouterWait::RouterClose, "router_close"},
    {RouterWait::RouterSlot, "router_slot"},
};
static_assert(codes_consecutive(kRouterWaitNames, 0) &&
              code_name(kRouterWaitNames, static_cast<uint32_t>(RouterWait::RouterSlot) + 1) ==
                  nullptr);

// ---- what RouterStatusBlock::detail says -----------------------------------------------------
//
// The detail word names the reason behind the status, in the terms below, so the host can print it
// by name (fabric::router_detail_name): ConfigInvalid a ConfigCheck, HandshakeMismatch a
// HandshakeField, Fault and Timeout the hal::Status of the call that failed, and while a router
// runs, a BadPacket (the last packet it dropped; the status stays as it was).

// Why a config was refused (status ConfigInvalid).
enum class ConfigCheck : uint32_t {
    None = 0,  // the config is fine
    Magic = 1,
    Version = 2,
    Topology = 3,       // not one the image runs (1D image: line, ring; 2D image: mesh, torus)
    PayloadBytes = 4,   // 0, not a multiple of 16, or above max_payload_bytes
    SenderSlots = 5,    // more than kMaxRouterSlots, or a channel the image does not have
    ReceiverSlots = 6,  // rx0 without slots, or more than kMaxRouterSlots
    Dateline = 7,       // traffic into rx1 (a dateline link or a VC1 channel) without rx1 slots
    Downstream = 8,     // has_downstream not 0/1, or its coordinates off the NoC
    Timeouts = 9,       // a timeout of 0, or a stall_action that is not one
    Layout = 10,        // the slots do not fit below router_l1_top
    IsMaster = 11,
    DownstreamConfig = 12,  // the downstream router's config does not match ours (read at ready)
    MeshConfig = 13,        // 2D: MeshRouterConfig missing or inconsistent
};
inline constexpr CodeName<ConfigCheck> kConfigCheckNames[] = {
    {ConfigCheck::None, "none"},
    {ConfigCheck::Magic, "magic"},
    {ConfigCheck::Version, "version"},
    {ConfigCheck::Topology, "topology"},
    {ConfigCheck::PayloadBytes, "payload_bytes"},
    {ConfigCheck::SenderSlots, "sender_slots"},
    {ConfigCheck::ReceiverSlots, "receiver_slots"},
    {ConfigCheck::Dateline, "dateline"},
    {ConfigCheck::Downstream, "downstream"},
    {ConfigCheck::Timeouts, "timeouts"},
    {ConfigCheck::Layout, "layout"},
    {ConfigCheck::IsMaster, "is_master"},
    {ConfigCheck::DownstreamConfig, "downstream_config"},
    {ConfigCheck::MeshConfig, "mesh_config"},
};
static_assert(codes_consecutive(kConfigCheckNames, 0) &&
              code_count(kConfigCheckNames) == static_cast<uint32_t>(ConfigCheck::MeshConfig) + 1);
// Slots per channel a router keeps state for (a config with more is refused).
inline constexpr uint32_t kMaxRouterSlots = 32;

// Why a packet was dropped (counted in bad_packets, completed so its credit returns).
enum class BadPacket : uint32_t {
    None = 0,  // the packet is fine
    Magic = 0x100,
    SendType = 0x101,
    PayloadBytes = 0x102,  // more than the slot's payload
    Route = 0x103,         // no hop action, or forwarded with nothing left to do
    Target = 0x104,        // destination coordinates, alignment or address range
    Scatter = 0x105,       // chunk count or sizes
    NoDownstream = 0x106,  // a forward into a channel this router does not feed
    SrcChannel = 0x107,    // src_channel is not a sender channel (its credit cannot be returned)
    RouteTooLong =
        0x108,  // ring/torus: a worker's route of more than ring_size - 1 hops (per dimension)
    DstNode = 0x109,     // 2D entry router: the destination mesh/device has no route from here
    Turn = 0x10A,        // 2D: a Y -> X turn (dimension order), other than out of the mesh
    TtlExpired = 0x10B,  // its time to live ran out here (a routing loop, or a TTL too small)
    Timeout = 0x10C,     // it waited stall_timeout_us for a port with no room (StallAction::Drop)
    // RouterControl::Drain: it could not move within kRouterDrainHoldUs, or it was pushed into a
    // sender channel of a cut link (then a RouterEventKind::Unsent record)
    Drained = 0x10D,
    // Sent over a link that was cut, and not taken by the peer (the host decides this from a
    // RouterEventKind::Unacked record and the peer's RouterControlReport::taken; no router
    // reports it)
    Unacked = 0x10E,
    // Its NoC requests were issued and its destination did not accept them (the host decides
    // this from a RouterEventKind::NotAccepted record with no Accepted after it), or, reported
    // by the router, a scatter whose later chunks could not be issued (its first ones were)
    NotAccepted = 0x10F,
};
// The reasons proper: BadPacket::Magic .. kLastBadPacket (a detail in this range names one).
inline constexpr BadPacket kLastBadPacket = BadPacket::NotAccepted;
inline constexpr CodeName<BadPacket> kBadPacketNames[] = {
    {BadPacket::Magic, "magic"},
    {BadPacket::SendType, "send_type"},
    {BadPacket::PayloadBytes, "payload_bytes"},
    {BadPacket::Route, "route"},
    {BadPacket::Target, "target"},
    {BadPacket::Scatter, "scatter"},
    {BadPacket::NoDownstream, "no_downstream"},
    {BadPacket::SrcChannel, "src_channel"},
    {BadPacket::RouteTooLong, "route_too_long"},
    {BadPacket::DstNode, "dst_node"},
    {BadPacket::Turn, "turn"},
    {BadPacket::TtlExpired, "ttl_expired"},
    {BadPacket::Timeout, "timeout"},
    {BadPacket::Drained, "drained"},
    {BadPacket::Unacked, "unacked"},
    {BadPacket::NotAccepted, "not_accepted"},
};
static_assert(codes_consecutive(kBadPacketNames, static_cast<uint32_t>(BadPacket::Magic)) &&
              code_count(kBadPacketNames) == static_cast<uint32_t>(kLastBadPacket) -
                                                 static_cast<uint32_t>(BadPacket::Magic) + 1);

// What the two ends of a link disagreed on (status HandshakeMismatch): a LinkParams field (in
// declaration order), or one of the checks after it.
enum class HandshakeField : uint32_t {
    Version = 0,
    Topology = 1,
    PayloadBytes = 2,
    ReceiverSlots0 = 3,
    ReceiverSlots1 = 4,
    ChipId = 5,       // the peer is not the chip we expect
    EthChannel = 6,   // ... or not on the channel we expect
    ExpectChip = 7,   // the peer expects another chip
    BothMasters = 8,  // both ends were configured as master
    RxArea = 9,       // the peer's receive area (its rx_base, the agreed slot counts) is
                      // misaligned or outside L1: the data sends into it go unchecked
};
static_assert(offsetof(LinkParams, expect_chip) ==
              4 * static_cast<uint32_t>(HandshakeField::ExpectChip));
inline constexpr CodeName<HandshakeField> kHandshakeFieldNames[] = {
    {HandshakeField::Version, "version"},
    {HandshakeField::Topology, "topology"},
    {HandshakeField::PayloadBytes, "payload_bytes"},
    {HandshakeField::ReceiverSlots0, "receiver_slots_0"},
    {HandshakeField::ReceiverSlots1, "receiver_slots_1"},
    {HandshakeField::ChipId, "chip_id"},
    {HandshakeField::EthChannel, "eth_channel"},
    {HandshakeField::ExpectChip, "expect_chip"},
    {HandshakeField::BothMasters, "both_masters"},
    {HandshakeField::RxArea, "rx_area"},
};
static_assert(codes_consecutive(kHandshakeFieldNames, 0) &&
              code_count(kHandshakeFieldNames) ==
                  static_cast<uint32_t>(HandshakeField::RxArea) + 1);

enum class Termination : uint32_t {
    KeepRunning = 0,
    Graceful = 1,   // finish what is in flight, then exit
    Immediate = 2,  // exit now (bounded), returning credits for what was delivered
};
inline constexpr CodeName<Termination> kTerminationNames[] = {
    {Termination::KeepRunning, "keep_running"},
    {Termination::Graceful, "graceful"},
    {Termination::Immediate, "immediate"},
};
static_assert(codes_consecutive(kTerminationNames, 0));
inline constexpr uint32_t kReadyMagic = 0x4EAD1111;

// The control word (router_control(), host writes; read at the main loop's polls, beside the
// termination word). seeds/000 §1.1.2 "pause, flush, resume".
//   Run    normal operation (also what Resume writes).
//   Pause  take no new packets (receiver channels, the worker channel) and send nothing new; what
//          was taken finishes (completions, credits), so the counters settle and stay still.
//          Heartbeat, keep-alives, link watch, termination go on; stall timeouts do not fire.
//          Reached (RouterControlReport::state) once every taken packet is completed. On the way
//          back to Run the router reads its MeshRouterConfig again (a table changed while paused
//          is used).
//   Drain  move what can move; what cannot within kRouterDrainHoldUs is dropped (BadPacket
//          Drained). A link that is down or whose peer is silent is cut: the packets sent on it
//          and never completed are reported (RouterEventKind::Unacked, with their position on
//          the link), the ones never sent dropped (Drained), nothing more is taken from it or
//          sent on it, and every packet pushed into the router's sender channels later is
//          dropped and reported too (so its producers finish). A cut link stays cut (until the
//          fabric is brought up again); Run after Drain runs the live links on.
// Reroute (2D, a router whose MeshRouterConfig names a fallback): the link is cut at once, the
// packets sent on it and not completed are held (not reported), and once the host's RerouteOrder
// says how many of each sender channel's packets the peer took, the rest are sent again, and
// everything after them, over the fallback router (seeds/000 §7.4; firmware/router/README.md
// "Rerouting").
// Rejoin (a rerouted router whose link is up again): forwarding over the fallback stops; once
// every forward has landed, the router sends its rejoin marker (kStreamPeerRejoin) over the link,
// and once the peer's has landed (everything the peer sent before the cut with it) it starts the
// link's state again as after the handshake and reports RerouteState::Rejoined. The link stays
// cut until the host writes Run (to both ends, once both report Rejoined): then its traffic
// returns to it.
enum class RouterControl : uint32_t { Run = 0, Pause = 1, Drain = 2, Reroute = 3, Rejoin = 4 };
inline constexpr CodeName<RouterControl> kRouterControlNames[] = {
    {RouterControl::Run, "run"},       {RouterControl::Pause, "pause"},
    {RouterControl::Drain, "drain"},   {RouterControl::Reroute, "reroute"},
    {RouterControl::Rejoin, "rejoin"},
};
static_assert(codes_consecutive(kRouterControlNames, 0));
// A draining router's packet that waits this long for a port is dropped.
inline constexpr uint32_t kRouterDrainHoldUs = 20;

// The router's side of control (router_control_report(), written from the main loop on;
// zero before). `taken` is what exactly-once decisions rest on: a packet the peer sent on its
// sender channel c at link position p (0, 1, ... on that channel) was taken here iff p <
// taken[c]; exact once `state` is Pause or Drain (every taken packet completed).
struct RouterControlReport {
    uint32_t state;  // the RouterControl the router has reached (the word's, once reached)
    uint32_t cut;    // 1: the link was cut (Drain on a dead link)
    uint32_t taken[kMaxSenderChannels];  // packets taken from the peer's sender channel c
    // Packets not finished here, published with the counters: pushed and not sent, sent and not
    // completed, landed and not taken, taken and not completed. On a cut link, those it has still
    // to decide (what landed from the peer is the peer's to report, as Unacked). A graceful
    // termination waits for 0 on every router, so nothing is left to drop unnamed.
    uint32_t held;
    uint32_t reroute;  // RerouteState
    uint32_t reserved[3];
};
static_assert(sizeof(RouterControlReport) == 64);
// RouterControlReport::state from a link's cut until its packets are settled: the `taken` counts
// published before the cut are stale until a state is reported again.
inline constexpr uint32_t kControlStateSettling = 0xFFFFFFFFu;
static_assert(offsetof(RouterControlReport, held) == 44);
enum class RerouteState : uint32_t {
    None = 0,
    Applied = 1,  // the RerouteOrder applied: the sender channels go over the fallback router
    // The order was refused: no fallback port (MeshRouterConfig::neighbor[dir] with slots in its
    // ch(1 + dir)), or a resume count outside the channel's unacked packets
    Refused = 2,
    // RouterControl::Rejoin done: the link's state as after the handshake (cut until Run)
    Rejoined = 3,
};
inline constexpr CodeName<RerouteState> kRerouteStateNames[] = {
    {RerouteState::None, "none"},
    {RerouteState::Applied, "applied"},
    {RerouteState::Refused, "refused"},
    {RerouteState::Rejoined, "rejoined"},
};
static_assert(codes_consecutive(kRerouteStateNames, 0));

// The host's answer to RouterStatus::RerouteHeld, in the router's L1 (router_reroute_order):
// resume[c] is the peer's RouterControlReport::taken[c] (its count of our channel c's packets it
// took). Written once, magic last.
struct RerouteOrder {
    uint32_t resume[kMaxSenderChannels];
    uint32_t magic;  // kRerouteOrderMagic
};
inline constexpr uint32_t kRerouteOrderMagic = 0xFAB1F0B0;
static_assert(sizeof(RerouteOrder) == 40);

// The router's main loop stores its iteration count as the heartbeat every kRouterPollEvery
// iterations, and publishes its counters (the status block and RouterControlReport::held) every
// kRouterPublishEvery: a heartbeat kRouterPublishEvery + kRouterPollEvery above one the host read
// means counters published after that read.
inline constexpr uint32_t kRouterPollEvery = 16;
inline constexpr uint32_t kRouterPublishEvery = 256;

struct RouterStatusBlock {
    uint32_t status;     // RouterStatus
    uint32_t stage;      // the last start-up / run stage reached (a RouterStatus)
    uint32_t stuck_at;   // RouterWait, when status is Timeout/Fault
    uint32_t detail;     // ConfigCheck, HandshakeField, hal::Status or the last BadPacket
    uint32_t heartbeat;  // the main loop's iteration count (kRouterPollEvery above)
    uint32_t peer_chip;  // learned in the handshake
    uint32_t peer_channel;
    uint32_t bad_packets;               // headers rejected (dropped with their credits returned)
    uint32_t sent[kMaxSenderChannels];  // packets sent on Ethernet per sender channel
    uint32_t completed[kMaxSenderChannels];   // completions received per sender channel
    uint32_t received[kNumReceiverChannels];  // packets taken per receiver channel
    uint32_t delivered;  // local deliveries (NoC commands executed on this chip)
    uint32_t forwarded;  // packet copies forwarded to other routers of this chip
    uint32_t undrained;  // packets left when graceful drain timed out / immediate exit
    uint32_t main_loop_iterations;
};
static_assert(sizeof(RouterStatusBlock) == 128);

// ---- the line a worker's endpoint sends along ----------------------------------------------
//
// The line API (seeds/000 §4): a kernel sends "to the chip `hops` hops away along my router's
// line" and "to `range` chips from `start` hops away", and runs unchanged on a 1D fabric and on a
// 2D one. The endpoint it connects to (a router, or a mux passing on its router's) publishes its
// line in the connection block (WorkerConnectionInfo::line, line_info() below); line_unicast and
// line_multicast ("2D mesh routing") turn a line send into that fabric's Route: 1D the hop
// actions, 2D every hop in the router's direction, along its row or column of the mesh (over the
// wrap link where that dimension is a ring).
inline constexpr uint32_t kMaxLineHops = kMaxHops1D;  // == kMaxHops2D: both headers hold it
inline constexpr uint8_t kLine1D = 0xFF;              // LineInfo::dir of a 1D fabric's endpoint
struct LineInfo {
    uint8_t reach = 0;    // +0: hops a line send may reach (RouterConfig::line_reach); 0: none
    uint8_t dir = 0;      // +1: 2D: the MeshDirection the router's link leaves in; 1D: kLine1D
    uint16_t mesh = 0;    // +2: 2D: this chip's mesh
    uint16_t device = 0;  // +4: 2D: this chip's device (row-major)
    uint16_t rows = 0;    // +6: 2D: the mesh's shape
    uint16_t cols = 0;    // +8
    uint16_t reserved = 0;
};
static_assert(sizeof(LineInfo) == 12 && offsetof(LineInfo, mesh) == 2 &&
              offsetof(LineInfo, cols) == 8);
// Its words, as the endpoint stores them and a worker loads them (L1 is read by the word).
union LineInfoWords {
    LineInfo info;
    uint32_t w[sizeof(LineInfo) / 4];
};

// ---- worker connection (ch0) -----------------------------------------------------------------

enum class ConnectionState : uint32_t { Closed = 0, Open = 1, CloseRequested = 2 };

// In router L1 (RouterLayout::connection): the one worker connected to ch0. Each field sits in
// its own 16-B line so a worker can read or write it with one aligned NoC transfer.
struct WorkerConnectionInfo {
    uint32_t state;  // ConnectionState (worker writes Open/CloseRequested)
    LineInfo line;   // the endpoint's line (written at its start; a worker reads it on open)
    uint32_t worker_xy;
    uint32_t pad1[3];  // (y << 16) | x of the connected worker
    uint32_t credit_addr;
    uint32_t pad2[3];  // worker L1 word the router writes `freed` into
    uint32_t teardown_addr;
    uint32_t pad3[3];  // worker L1 word the router sets to 1 on close
    uint32_t pushed;
    uint32_t pad4[3];  // worker's pushed count at close (next opener)
    uint32_t freed;
    uint32_t pad5[3];  // router's freed count (next opener)
};
static_assert(sizeof(WorkerConnectionInfo) == 96);
static_assert(offsetof(WorkerConnectionInfo, line) == 4 &&
                  offsetof(WorkerConnectionInfo, worker_xy) == 16,
              "the line shares the state's 16-B line: a worker's open reads both at once");

// ---- router L1 layout -----------------------------------------------------------------------

constexpr uint32_t align_up(uint32_t v, uint32_t a) {
    return (v + a - 1) / a * a;
}

// The router's block starts on a 4 KiB boundary, as its fixed bases before did (0x11000, 0x16000):
// easy to find in an L1 dump, and well above the 64-B alignment its slots need.
inline constexpr uint32_t kRouterL1BlockAlign = 4096;

// First L1 byte of the router's block: the first 4 KiB boundary above the window the router image
// is linked into (hal ArchMap::router_fw) and the chip's reserved low L1 (l1_unreserved_base): WH
// 0x18000 (above the routing firmware's region, which carries remote-chip accesses), BH 0x22000
// (above the 48 KiB router window at 0x15740).
constexpr uint32_t router_l1_base(const hal::ArchMap& a) {
    const uint32_t above =
        a.router_fw.end() > a.l1_unreserved_base ? a.router_fw.end() : a.l1_unreserved_base;
    return align_up(above, kRouterL1BlockAlign);
}
// First byte above it: the router images' cold window where they have one (hal ArchMap::
// router_cold), else the test mailbox; routers keep clear of both.
constexpr uint32_t router_l1_top(const hal::ArchMap& a) {
    return a.router_cold.size != 0 ? a.router_cold.base : test_mailbox_addr(a.arch);
}

// The router block lies above every image window (application and router) and below the cold
// window, the test mailbox, the syseng area and the link status word when that sits up there.
constexpr bool router_block_placed(const hal::ArchMap& a) {
    const uint32_t base = router_l1_base(a);
    const uint32_t top = router_l1_top(a);
    const uint32_t mailbox = test_mailbox_addr(a.arch);
    const bool above_images = base >= a.router_fw.end() && base >= a.app_fw_base + a.app_fw_size;
    const bool cold_below_mailbox = a.router_cold.size == 0 || a.router_cold.end() <= mailbox;
    const bool below_syseng = mailbox + sizeof(TestMailbox) <= a.eth_l1_usable_top;
    const bool clear_of_link_status =
        a.link_status.addr + 4 <= base || a.link_status.addr >= mailbox + sizeof(TestMailbox);
    return base < top && above_images && cold_below_mailbox && below_syseng && clear_of_link_status;
}
static_assert(router_block_placed(hal::kWormholeB0));
static_assert(router_block_placed(hal::kBlackhole));

struct RouterLayout {
    uint32_t config;         // RouterConfig (host writes)
    uint32_t status;         // RouterStatusBlock (router writes)
    uint32_t termination;    // Termination (host writes); RouterControl at +4 (router_control)
    uint32_t ready;          // kReadyMagic (host writes once every router is HandshakeComplete)
    uint32_t handshake_in;   // 64 B: the peer's HandshakeMsg lands here
    uint32_t handshake_out;  // 64 B: staging for ours; from the main loop on the
                             // RouterControlReport (router_control_report)
    uint32_t connection;     // WorkerConnectionInfo for ch0
    uint32_t upstream_credit[kMaxSenderChannels];  // freed counters of the channels this router
                                                   // feeds in its neighbours (they write here;
                                                   // 16 B each). 1D: [1] ch1, [2] ch2 of the
                                                   // downstream. 2D: [1 + F] / [5 + F] the VC0 /
                                                   // VC1 channel of the router facing F
    uint32_t scratch;      // 64 B router-private words (NoC staging, atomic return)
    uint32_t mesh_config;  // 2D: MeshRouterConfig (host writes)
    uint32_t exit_table;   // 2D: kMeshExitEntries words (host writes; MeshRouterConfig::exit_count)
    uint32_t events;       // RouterEventLog (router writes records, the host `consumed`)
    uint32_t sender_base[kMaxSenderChannels];
    uint32_t receiver_base[kNumReceiverChannels];
    uint32_t slot_bytes;  // header + payload_bytes
    uint32_t end;         // first byte after the last slot
    bool fits;            // end <= router_l1_top
};

constexpr RouterLayout router_layout(const hal::ArchMap& a, const RouterConfig& c) {
    RouterLayout l{};
    uint32_t p = router_l1_base(a);
    l.config = p;
    p += sizeof(RouterConfig);
    l.status = p;
    p += sizeof(RouterStatusBlock);
    l.termination = p;
    p += 16;
    l.ready = p;
    p += 16;
    l.handshake_in = p;
    p += 64;
    l.handshake_out = p;
    p += 64;
    l.connection = p;
    p += sizeof(WorkerConnectionInfo);
    for (uint32_t i = 0; i < kMaxSenderChannels; ++i) {
        l.upstream_credit[i] = p;
        p += 16;
    }
    l.scratch = p;
    p += 64;
    l.mesh_config = p;
    p += 64;  // sizeof(MeshRouterConfig), asserted below
    l.exit_table = p;
    p += 4 * 64;  // kMeshExitEntries
    l.events = p;
    p += 32 + 16 * 24;  // sizeof(RouterEventLog), asserted below
    p = align_up(p, 64);
    l.slot_bytes = align_up(static_cast<uint32_t>(sizeof(PacketHeader)) + c.payload_bytes, 16);
    for (uint32_t i = 0; i < kMaxSenderChannels; ++i) {
        l.sender_base[i] = p;
        p += c.sender_slots[i] * l.slot_bytes;
    }
    for (uint32_t i = 0; i < kNumReceiverChannels; ++i) {
        l.receiver_base[i] = p;
        p += c.receiver_slots[i] * l.slot_bytes;
    }
    l.end = p;
    l.fits = p <= router_l1_top(a);
    return l;
}

// The control word (RouterControl, host writes): in the termination word's 16-B line, read at
// the same polls.
constexpr uint32_t router_control(const RouterLayout& l) {
    return l.termination + 4;
}
// The RouterControlReport (router writes): where the handshake message was staged, which is free
// once the main loop runs (the handshake is over; the layout keeps its size).
constexpr uint32_t router_control_report(const RouterLayout& l) {
    return l.handshake_out;
}
static_assert(sizeof(RouterControlReport) <= 64);
// The RerouteOrder (host writes): where the peer's handshake message landed, free once the main
// loop runs (the peer's handshake is over; a router zeroes it at start-up).
constexpr uint32_t router_reroute_order(const RouterLayout& l) {
    return l.handshake_in;
}
static_assert(sizeof(RerouteOrder) <= 64);

// Where a router's (and a mux's, protocol/fabric_mux.h) status word is: right after its config.
// A client reads it to know the endpoint is ReadyForTraffic before it opens a connection.
constexpr uint32_t endpoint_status_addr(const hal::ArchMap& a) {
    return router_l1_base(a) + static_cast<uint32_t>(sizeof(RouterConfig));
}
static_assert(router_layout(hal::kWormholeB0, RouterConfig{}).status ==
              endpoint_status_addr(hal::kWormholeB0));
static_assert(router_layout(hal::kBlackhole, RouterConfig{}).status ==
              endpoint_status_addr(hal::kBlackhole));

// The handshake message (64 B, one Ethernet packet), repeated by the master until answered.
inline constexpr uint32_t kHandshakeMagic = 0x4A5D0001;
struct HandshakeMsg {
    uint32_t magic;     // kHandshakeMagic
    uint32_t is_reply;  // 0 from the master, 1 from the subordinate
    uint32_t agree;     // reply only: 1 if the subordinate's params matched
    uint32_t rx_base;   // the sender's RouterLayout::receiver_base[0] (rx1 follows rx0's slots):
                        // where the peer's Ethernet writes land, whatever its sender slot counts
    LinkParams params;  // 32 B
    uint32_t check;     // magic ^ chip_id ^ payload_bytes: a torn write is not a message
    uint32_t mismatch;  // reply with agree 0: the HandshakeField that differed
    uint32_t reserved2[2];
};
static_assert(sizeof(LinkParams) == 32);
static_assert(sizeof(HandshakeMsg) == 64);
static_assert(offsetof(HandshakeMsg, rx_base) == 12);
static_assert(offsetof(HandshakeMsg, params) == 16);
static_assert(offsetof(HandshakeMsg, check) == 48);
static_assert(offsetof(HandshakeMsg, mismatch) == 52);

// ---- 2D mesh routing ------------------------------------------------------------------------
//
// Directions (the host's fabric::MeshDir has the same values): N towards row 0, E towards the
// last column, S towards the last row, W towards column 0. Devices of a mesh are row-major.
//
// A route is one hop command per hop (a nibble, hop 0 in the low bits of `route`, hops 8..15 in
// `route_ext`): bit d = "send on in direction d". The router that takes the packet off its link
// faces the direction the packet came from; its own direction's bit, which could only mean
// "back", means "write here". Each receiving router acts on the low nibble and passes the route
// on shifted by one nibble. The first hop is the router the worker sends through.
//
//   unicast   X first (E/W), then Y (N/S); the last command is the arrival router's own bit
//   multicast a trunk along E or W; each trunk chip's command may also hold N and/or S: the copy
//             turning there becomes a line multicast of branch_hops[N|S] chips (its sending
//             router rewrites the route; branch_hops non-zero marks a multicast, and the rewrite
//             clears it). Trunks along X and branches along
//             Y keep dimension order, so multicast adds no turn unicast does not make.
//   inter-mesh  a route to the exit node and out through its inter-mesh port; the entry router
//             (MeshRouterConfig::inter_mesh) computes the route on from dst_mesh/dst_device: to
//             the device, or to the next exit node of its exit table.
enum class MeshDirection : uint32_t { N = 0, E = 1, S = 2, W = 3 };
inline constexpr uint32_t kMeshDirections = 4;
constexpr uint32_t dir_bit(uint32_t d) {
    return 1u << d;
}
constexpr uint32_t opposite_dir(uint32_t d) {
    return d ^ 2;
}
constexpr bool perpendicular(uint32_t a, uint32_t b) {
    return ((a ^ b) & 1) != 0;
}
constexpr bool is_y(uint32_t d) {
    return (d & 1) == 0;
}  // N or S
static_assert(opposite_dir(0) == 2 && opposite_dir(1) == 3 && perpendicular(0, 1) &&
              !perpendicular(1, 3));

inline constexpr uint32_t kMaxHops2D = 16;
static_assert(kMaxLineHops == kMaxHops2D);

// What a header carries to find its way: the 1D route (one word) converts implicitly.
struct Route {
    uint32_t hops = 0;                  // PacketHeader::route
    uint32_t ext = 0;                   // PacketHeader::route_ext
    uint32_t flags_word = kDefaultTtl;  // ttl | branch_hops << 8 (header bytes 49..51)
    uint32_t dst_node = 0;              // dst_mesh | dst_device << 16 (header bytes 60..63)
    constexpr Route() = default;
    constexpr Route(uint32_t one_d) : hops(one_d) {}  // NOLINT: a 1D route is a Route
    constexpr Route(uint32_t h, uint32_t e, uint32_t f, uint32_t node)
        : hops(h), ext(e), flags_word(f), dst_node(node) {}
    constexpr bool operator==(const Route&) const = default;
    constexpr uint32_t ttl() const { return flags_word & 0xFF; }
    constexpr uint32_t branch_hops() const { return flags_word >> 8; }
    constexpr Route with_ttl(uint32_t t) const {
        Route r = *this;
        r.flags_word = (flags_word & ~0xFFu) | (t & 0xFF);
        return r;
    }
};
constexpr uint32_t mesh_node_word(uint32_t mesh, uint32_t device) {
    return (mesh & 0xFFFF) | (device & 0xFF) << 16;
}

// Hop command `cmd` as hop `i` of a route.
constexpr void set_hop(Route& r, uint32_t i, uint32_t cmd) {
    if (i < 8) {
        r.hops |= (cmd & 15) << (4 * i);
    } else if (i < kMaxHops2D) {
        r.ext |= (cmd & 15) << (4 * (i - 8));
    }
}
constexpr uint32_t hop_cmd(const Route& r, uint32_t i) {
    return i < 8 ? (r.hops >> (4 * i)) & 15 : i < kMaxHops2D ? (r.ext >> (4 * (i - 8))) & 15 : 0;
}

// A route along `path` (the direction each hop leaves its chip, path[0] = the router the worker
// sends through; n <= kMaxHops2D): hop i is taken at the chip after path[i], which sends on in
// path[i + 1], and the last chip writes (write_last) or, for a path that leaves the mesh through
// an inter-mesh port, gets 0 (the entry router computes the rest).
constexpr Route mesh_route_path(const uint32_t* path, uint32_t n, bool write_last = true) {
    Route r{};
    for (uint32_t i = 0; i < n && i < kMaxHops2D; ++i) {
        const uint32_t cmd = i + 1 < n    ? dir_bit(path[i + 1])
                             : write_last ? dir_bit(opposite_dir(path[i]))
                                          : 0;
        set_hop(r, i, cmd);
    }
    return r;
}

// Dimension-ordered unicast inside a mesh from (row, col) to (dst_row, dst_col), X first: the
// direction of the first hop (the router to send through) and the route. The node must differ.
struct MeshUnicast {
    uint32_t first_dir = 0;
    uint32_t hops = 0;
    Route route{};
};
// The dimension-ordered path (X first, then Y) from (row, col) to (dst_row, dst_col) into `path`
// (room for kMaxHops2D); returns its length (at most kMaxHops2D).
constexpr uint32_t mesh_path_xy(uint32_t row, uint32_t col, uint32_t dst_row, uint32_t dst_col,
                                uint32_t* path) {
    uint32_t n = 0;
    while (col != dst_col && n < kMaxHops2D) {
        path[n++] = dst_col > col ? static_cast<uint32_t>(MeshDirection::E)
                                  : static_cast<uint32_t>(MeshDirection::W);
        col = dst_col > col ? col + 1 : col - 1;
    }
    while (row != dst_row && n < kMaxHops2D) {
        path[n++] = dst_row > row ? static_cast<uint32_t>(MeshDirection::S)
                                  : static_cast<uint32_t>(MeshDirection::N);
        row = dst_row > row ? row + 1 : row - 1;
    }
    return n;
}
// The same on a torus of rows x cols: each dimension that wraps (ring_ns: rows, ring_ew: columns)
// the shorter way round (a tie goes E / S), so at most half a ring per dimension; one that does
// not wrap the direct way. Returns the path length.
constexpr uint32_t mesh_path_torus_xy(uint32_t row, uint32_t col, uint32_t dst_row,
                                      uint32_t dst_col, uint32_t rows, uint32_t cols,
                                      uint32_t* path, bool ring_ns = true, bool ring_ew = true) {
    uint32_t n = 0;
    const uint32_t east = (dst_col + cols - col) % cols, south = (dst_row + rows - row) % rows;
    const bool go_e = ring_ew ? east <= cols - east : dst_col >= col;
    const bool go_s = ring_ns ? south <= rows - south : dst_row >= row;
    for (uint32_t i = 0, k = go_e ? east : cols - east; i < k && n < kMaxHops2D; ++i) {
        path[n++] = static_cast<uint32_t>(go_e ? MeshDirection::E : MeshDirection::W);
    }
    for (uint32_t i = 0, k = go_s ? south : rows - south; i < k && n < kMaxHops2D; ++i) {
        path[n++] = static_cast<uint32_t>(go_s ? MeshDirection::S : MeshDirection::N);
    }
    return n;
}
constexpr uint32_t torus_path_len(uint32_t row, uint32_t col, uint32_t dst_row, uint32_t dst_col,
                                  uint32_t rows, uint32_t cols) {
    uint32_t path[kMaxHops2D] = {};
    return mesh_path_torus_xy(row, col, dst_row, dst_col, rows, cols, path);
}
static_assert(torus_path_len(0, 0, 0, 3, 4, 4) == 1 && torus_path_len(0, 0, 2, 2, 4, 4) == 4);
static_assert([] {  // columns only wrap: 3 columns east of col 0 is 1 hop W, 3 rows south stays 3 S
    uint32_t p[kMaxHops2D] = {};
    return mesh_path_torus_xy(0, 0, 3, 3, 4, 4, p, false, true) == 4 &&
           p[0] == static_cast<uint32_t>(MeshDirection::W);
}());

constexpr MeshUnicast mesh_route_xy(uint32_t row, uint32_t col, uint32_t dst_row,
                                    uint32_t dst_col) {
    uint32_t path[kMaxHops2D] = {};
    const uint32_t n = mesh_path_xy(row, col, dst_row, dst_col, path);
    return MeshUnicast{n != 0 ? path[0] : 0, n, mesh_route_path(path, n)};
}
static_assert(mesh_route_xy(0, 0, 0, 1).route.hops == 0x8);    // E, then the W router writes
static_assert(mesh_route_xy(0, 0, 1, 2).route.hops == 0x142);  // E; E; S; then N writes
static_assert(mesh_route_xy(1, 1, 0, 1).first_dir == 0 &&
              mesh_route_xy(1, 1, 0, 1).route.hops == 0x4);

// Rectangle multicast: along trunk_dir (E or W) over `trunk` chips (the first is the neighbour),
// writing on each; from each, branches of branch_n chips north and branch_s chips south (0: none).
constexpr Route mesh_route_multicast(uint32_t trunk_dir, uint32_t trunk, uint32_t branch_n,
                                     uint32_t branch_s) {
    Route r{};
    for (uint32_t i = 0; i < trunk && i < kMaxHops2D; ++i) {
        uint32_t cmd = dir_bit(opposite_dir(trunk_dir));  // write here
        if (i + 1 < trunk) cmd |= dir_bit(trunk_dir);
        if (branch_n != 0) cmd |= dir_bit(static_cast<uint32_t>(MeshDirection::N));
        if (branch_s != 0) cmd |= dir_bit(static_cast<uint32_t>(MeshDirection::S));
        set_hop(r, i, cmd);
    }
    r.flags_word |= ((branch_n & 15) << (4 * static_cast<uint32_t>(MeshDirection::N)) |
                     (branch_s & 15) << (4 * static_cast<uint32_t>(MeshDirection::S)))
                    << 8;
    return r;
}
// The route a multicast branch turning into `dir` gets (written by the router facing `dir`):
// `chips` chips along `dir`, writing on each.
constexpr Route mesh_route_line_multicast(uint32_t dir, uint32_t chips) {
    Route r{};
    for (uint32_t i = 0; i < chips && i < kMaxHops2D; ++i) {
        set_hop(r, i, dir_bit(opposite_dir(dir)) | (i + 1 < chips ? dir_bit(dir) : 0));
    }
    return r;
}
static_assert(mesh_route_line_multicast(0, 2).hops == 0x45);

// ---- line sends (the line API; LineInfo above) ----
enum class LineCheck : uint32_t {
    Ok = 0,
    NoLine = 1,       // the endpoint published no line (reach 0, or a shape that is not one)
    NoHops = 2,       // 0 hops, or a multicast of 0 chips
    BeyondReach = 3,  // past the line's last chip (a ring: round to this chip or further)
};
struct LineRoute {
    LineCheck check = LineCheck::NoLine;
    Route route{};  // valid when check is Ok
};

constexpr bool line_ok(const LineInfo& l) {
    if (l.reach == 0 || l.reach > kMaxLineHops) return false;
    return l.dir == kLine1D ||
           (l.dir < kMeshDirections && l.rows != 0 && l.cols != 0 && l.device < l.rows * l.cols);
}
// 2D: the device `hops` along the line (modulo the dimension: a ring wraps, and on a line that
// does not, reach keeps every send inside the mesh).
constexpr uint32_t line_device(const LineInfo& l, uint32_t hops) {
    uint32_t row = l.device / l.cols, col = l.device % l.cols;
    switch (static_cast<MeshDirection>(l.dir)) {
        case MeshDirection::N:
            row = (row + l.rows - hops % l.rows) % l.rows;
            break;
        case MeshDirection::S:
            row = (row + hops) % l.rows;
            break;
        case MeshDirection::E:
            col = (col + hops) % l.cols;
            break;
        case MeshDirection::W:
            col = (col + l.cols - hops % l.cols) % l.cols;
            break;
        default:
            break;
    }
    return row * l.cols + col;
}
// To `range` consecutive chips along the line, the first `start` hops away, writing on each.
// 2D: a hop command per chip in the line's direction, the write bit (the arrival router's own)
// from chip `start` on, dst_node the last chip.
constexpr LineRoute line_multicast(const LineInfo& l, uint32_t start, uint32_t range) {
    if (!line_ok(l)) return {LineCheck::NoLine, {}};
    if (start == 0 || range == 0) return {LineCheck::NoHops, {}};
    if (range > l.reach || start > l.reach - range + 1) return {LineCheck::BeyondReach, {}};
    if (l.dir == kLine1D) return {LineCheck::Ok, Route(route_multicast(start, range))};
    const uint32_t last = start + range - 1;
    Route r{};
    for (uint32_t i = 0; i < last; ++i) {
        uint32_t cmd = i + 1 >= start ? dir_bit(opposite_dir(l.dir)) : 0;
        if (i + 1 < last) cmd |= dir_bit(l.dir);
        set_hop(r, i, cmd);
    }
    r.dst_node = mesh_node_word(l.mesh, line_device(l, last));
    return {LineCheck::Ok, r};
}
// To the chip `hops` away along the line (a multicast of one chip).
constexpr LineRoute line_unicast(const LineInfo& l, uint32_t hops) {
    return line_multicast(l, hops, 1);
}
static_assert(route_multicast(3, 1) == route_unicast(3));
static_assert([] {  // 2D unicast along a row is the dimension-ordered route to that chip
    const LineInfo east{.reach = 3, .dir = 1, .mesh = 0, .device = 4, .rows = 2, .cols = 4};
    const LineRoute u = line_unicast(east, 3);
    return u.check == LineCheck::Ok && u.route.hops == mesh_route_xy(1, 0, 1, 3).route.hops &&
           u.route.dst_node == mesh_node_word(0, 7);
}());
static_assert([] {  // 2D multicast from the first chip on is the branch route of that line
    const LineInfo north{.reach = 1, .dir = 0, .mesh = 0, .device = 4, .rows = 2, .cols = 4};
    return line_multicast(north, 1, 1).route.hops == mesh_route_line_multicast(0, 1).hops;
}());

// 2D router configuration beside RouterConfig (RouterLayout::mesh_config), host-written.
inline constexpr uint32_t kMeshConfigMagic = 0x3E5D2D01;
inline constexpr uint32_t kMeshNeighborPresent = 1u << 16;  // neighbor word: present | y << 8 | x
inline constexpr uint32_t kMeshExitEntries = 64;            // meshes an exit table covers
inline constexpr uint32_t kMeshExitValid = 1u << 31;        // exit word: valid | dir << 8 | device
struct MeshRouterConfig {
    uint32_t magic;                      // kMeshConfigMagic
    uint32_t dir;                        // MeshDirection this router's link leaves in
    uint32_t neighbor[kMeshDirections];  // the router of this chip on the same plane facing each
                                         // direction; neighbor[dir]: the fallback, this chip's
                                         // router on another plane whose link joins the same two
                                         // chips (RouterControl::Reroute; 0: none)
    uint32_t mesh_id;
    uint32_t device_id;
    uint32_t mesh_rows;
    uint32_t mesh_cols;
    uint32_t inter_mesh;  // 1: the peer is in another mesh (this router is an entry node's)
    uint32_t exit_dirs;   // bit d: the router facing d on this chip leads to another mesh
    uint32_t exit_count;  // exit_table entries used: destination meshes 0..exit_count-1
    uint32_t reserved[3];
};
static_assert(sizeof(MeshRouterConfig) == 64);

// What an endpoint publishes as its line (WorkerConnectionInfo::line), from its router's
// configuration (`m` is read on a 2D fabric only). A reach past kMaxLineHops publishes none.
constexpr LineInfo line_info(const RouterConfig& c, const MeshRouterConfig& m) {
    LineInfo l{};
    l.reach = c.line_reach <= kMaxLineHops ? static_cast<uint8_t>(c.line_reach) : 0;
    if (!is_2d(c.topology)) {
        l.dir = kLine1D;
        return l;
    }
    l.dir = static_cast<uint8_t>(m.dir);
    l.mesh = static_cast<uint16_t>(m.mesh_id);
    l.device = static_cast<uint16_t>(m.device_id);
    l.rows = static_cast<uint16_t>(m.mesh_rows);
    l.cols = static_cast<uint16_t>(m.mesh_cols);
    return l;
}
static_assert(router_layout(hal::kWormholeB0, RouterConfig{}).exit_table -
                  router_layout(hal::kWormholeB0, RouterConfig{}).mesh_config ==
              sizeof(MeshRouterConfig));
static_assert(router_layout(hal::kWormholeB0, RouterConfig{}).events -
                  router_layout(hal::kWormholeB0, RouterConfig{}).exit_table ==
              4 * kMeshExitEntries);

// ---- the event log (router -> host) -----------------------------------------------------------
//
// What happened to a router, as it happened: a ring of fixed-size records in its L1. The router
// never waits for the host: a record that finds no room (the host has not consumed enough) is not
// written and is counted in `dropped`. The host reads records [consumed, written) (record i is at
// records[i % kRouterEventRecords]), then writes `consumed`. The router clears the log when it
// starts.
// RouterEventKind::Stalled's code for a packet to deliver on this chip whose NoC request cannot
// be issued: the delivery command buffer stays busy (a destination that does not accept).
inline constexpr uint32_t kStalledOnNoc = 0;
enum class RouterEventKind : uint16_t {
    State = 1,      // code: the RouterStatus entered; at a stop also value: the status detail,
                    // channel: the RouterWait it was in
    BadPacket = 2,  // code: the BadPacket reason; channel: the receiver channel; value: the
                    // header's seq word (the sender's identity for the packet)
    // Link health (firmware/router/link_watch.h); channel: the peer's Ethernet channel, value:
    // the peer's chip id.
    LinkDown = 3,    // code: the link status word read
    LinkUp = 4,      // code: the link status word read
    PeerSilent = 5,  // code: cycles since the peer was last heard (>= kRouterPeerSilentUs)
    PeerHeard = 6,   // code: cycles it had been silent
    // A packet stalled at the head of receiver channel `channel` (code: the port it waits for,
    // or kStalledOnNoc, value: its seq), once per stall; StallAction::Drop then drops it and the
    // port's next ones.
    Stalled = 7,
    // Drain cut the link: a packet of sender channel `channel` sent on it and never completed
    // (code: its position on the link, value: its seq). The host decides with the peer's
    // RouterControlReport::taken whether the peer took it (BadPacket Unacked if not).
    Unacked = 8,
    // Drain cut the link: a packet pushed into sender channel `channel` dropped unsent (code:
    // BadPacket::Drained, value: its seq).
    Unsent = 9,
    // The oldest packet of receiver channel `channel` not completed had its NoC requests issued
    // and not flushed for stall_timeout_us (code: its destination core, x | y << 8; value: its
    // seq): the destination does not accept them, and the channel's slots stay pinned behind it.
    // Once the link is cut the packet completes without them (the host counts it dropped,
    // BadPacket::NotAccepted) unless Accepted came first.
    NotAccepted = 10,
    // The packet reported NotAccepted flushed after all (value: its seq): delivered.
    Accepted = 11,
};
inline constexpr CodeName<RouterEventKind> kRouterEventKindNames[] = {
    {RouterEventKind::State, "state"},
    {RouterEventKind::BadPacket, "bad_packet"},
    {RouterEventKind::LinkDown, "link_down"},
    {RouterEventKind::LinkUp, "link_up"},
    {RouterEventKind::PeerSilent, "peer_silent"},
    {RouterEventKind::PeerHeard, "peer_heard"},
    {RouterEventKind::Stalled, "stalled"},
    {RouterEventKind::Unacked, "unacked"},
    {RouterEventKind::Unsent, "unsent"},
    {RouterEventKind::NotAccepted, "not_accepted"},
    {RouterEventKind::Accepted, "accepted"},
};
// Link health: a router sends its peer a keep-alive every kRouterKeepAliveUs and reports it
// silent after kRouterPeerSilentUs without a sign of life (a keep-alive, a packet, a
// completion); both are checked at the main loop's polls.
inline constexpr uint32_t kRouterKeepAliveUs = 2;
inline constexpr uint32_t kRouterPeerSilentUs = 8;
static_assert(codes_consecutive(kRouterEventKindNames, 1));

struct RouterEvent {
    uint32_t time;     // the router's wall clock (low 32 bits of its cycle count)
    uint16_t kind;     // RouterEventKind
    uint16_t channel;  // per kind (above)
    uint32_t code;
    uint32_t value;
};
static_assert(sizeof(RouterEvent) == 16);

// As many as fit beside a Wormhole line router's default slots (4352-B payload: 16 ch0, 11 ch1,
// 16 rx0); 32 would cost it a ch1 slot. The host collects every poll, so 24 is ample.
inline constexpr uint32_t kRouterEventRecords = 24;
struct RouterEventLog {
    uint32_t written;   // records written since the router started (router)
    uint32_t dropped;   // records not written for lack of room (router)
    uint32_t capacity;  // kRouterEventRecords (router, at start: the host checks it)
    uint32_t reserved0;
    uint32_t consumed;  // records the host has read (host; its own 16-B line)
    uint32_t reserved1[3];
    RouterEvent records[kRouterEventRecords];
};
static_assert(sizeof(RouterEventLog) == 32 + 16 * kRouterEventRecords);
static_assert(offsetof(RouterEventLog, consumed) == 16 && offsetof(RouterEventLog, records) == 32);
static_assert(router_layout(hal::kWormholeB0, RouterConfig{}).sender_base[0] -
                  router_layout(hal::kWormholeB0, RouterConfig{}).events >=
              sizeof(RouterEventLog));

// ---- what a worker needs to connect to a router's ch0 ----------------------------------------

// Computed by the host (worker_channel()) and handed to a worker kernel in its arguments.
struct WorkerChannel {
    uint32_t router_x;  // router core, NOC0 coordinates
    uint32_t router_y;
    uint32_t slots_base;  // ch0 slot 0 in router L1
    uint32_t num_slots;
    uint32_t slot_bytes;     // header + payload capacity
    uint32_t payload_bytes;  // payload capacity
    uint32_t connection;     // WorkerConnectionInfo in router L1
    uint32_t pushed_stream;  // stream ID of ch0's pushed counter on the router core
};
static_assert(sizeof(WorkerChannel) == 32);

constexpr WorkerChannel worker_channel(const hal::ArchMap& a, const RouterConfig& c,
                                       uint32_t router_x, uint32_t router_y) {
    const RouterLayout l = router_layout(a, c);
    return WorkerChannel{router_x,
                         router_y,
                         l.sender_base[kWorkerChannel],
                         c.sender_slots[kWorkerChannel],
                         l.slot_bytes,
                         c.payload_bytes,
                         l.connection,
                         kStreamPushed0 + kWorkerChannel};
}

// ---- the status head every long-running component shares (router, mux, ...) ---------------

// The first five words of a component's status block: what the host's health monitor
// (host/include/fabric/health_monitor.h) reads to tell whether the component is alive, whatever
// kind it is. `status` and `stage` are the component's own status enum, `stuck_at` its wait enum;
// `heartbeat` moves while its main loop runs. A component's status block starts with these words
// at these offsets (RouterStatusBlock does; a new component's block pins the same asserts).
struct ComponentStatusHead {
    uint32_t status;
    uint32_t stage;
    uint32_t stuck_at;
    uint32_t detail;
    uint32_t heartbeat;
};
static_assert(sizeof(ComponentStatusHead) == 20);
static_assert(offsetof(ComponentStatusHead, heartbeat) == 16);
static_assert(offsetof(RouterStatusBlock, status) == offsetof(ComponentStatusHead, status));
static_assert(offsetof(RouterStatusBlock, stage) == offsetof(ComponentStatusHead, stage));
static_assert(offsetof(RouterStatusBlock, stuck_at) == offsetof(ComponentStatusHead, stuck_at));
static_assert(offsetof(RouterStatusBlock, detail) == offsetof(ComponentStatusHead, detail));
static_assert(offsetof(RouterStatusBlock, heartbeat) == offsetof(ComponentStatusHead, heartbeat));

}  // namespace protocol::fabric
