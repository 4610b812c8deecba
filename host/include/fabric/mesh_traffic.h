// Unicast traffic on a 2D fabric (mesh_plan.h) that is up: flows (source node -> destination
// node on a plane) become fabric_traffic worker kernels (firmware/tests/fabric_traffic.cpp,
// protocol::FabricTrafficArgs), which run through FabricRunner::run_workers; then each worker's
// outcome is read and every byte that should have landed is compared with its pattern. What the
// mesh sim tests, `fabricctl mesh run` and benchmarks/mesh_bench share. Over any Device; no
// assertions, no output.
//
//   workers  one kernel per (source chip, router it sends through: MeshPlan::send), on the
//            source chip's worker cores in order (worker cores 0, 1, ...). It sends `packets`
//            UnicastWrites of `packet_bytes` per flow, round-robin over its flows (at most
//            protocol::kFabricMaxDests); position p of flow k carries word w =
//            pattern_word(0x1000 * (k + 1) + p, w).
//   sinks    every flow lands on the sink core (worker core `sink_core_index`) of its
//            destination chip, in a region of its own: `slots` positions of packet_bytes (packet
//            i goes to position i % slots), the flows into one chip numbered in flow order,
//            regions from mesh_sink_base() up. With count_deliveries the packets are fused
//            writes + atomic increments of a 16-B counter after the region (its first word
//            counts the packets that arrived; read_mesh_delivered).
//   seq      flow k's packet i carries protocol::traffic_seq(first_flow_id + k, i), so a router
//            that drops it names both in its event log (traffic_account.h).
//   worker L1  dests at test_l1_base, the start word (start_together) 768 B above it, the
//            connection 1 KiB above it, the source buffer (flows x slots x packet_bytes) 2 KiB
//            above it, up to the test mailbox.
//   start    run_mesh_traffic starts the workers through FabricRunner::run_workers; each begins
//            sending once it has filled its source buffer, which takes longer the more flows it
//            has. With start_together every worker waits (bounded by timeout_us) for its start
//            word after the fill, and the host writes all of them once every worker has filled:
//            a benchmark's all-to-all then starts at once, not the light workers first.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/fabric_runner.h"
#include "fabric/launch.h"
#include "fabric/mesh_plan.h"
#include "fabric/soc_descriptor.h"
#include "fabric/traffic_account.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"

namespace fabric {

// One flow: packets from a worker on `src` to a region on `dst`, through routers of `plane`.
struct MeshFlow {
    MeshNode src, dst;
    uint32_t plane = 0;
};

inline constexpr uint32_t kMeshSinkCoreIndex = 40;  // clear of the workers a chip can need
// Chip `chip`'s sink core: worker core `index` of `soc`, its descriptor (harvesting applied).
// Error(BadInput) when it has fewer worker cores.
CoreCoord mesh_traffic_sink(const SocDescriptor& soc, ChipId chip,
                            uint32_t index = kMeshSinkCoreIndex);

// The NoC send type of a traffic kernel's packets (1D and 2D; fabricctl --send-type), and how the
// sink counts them for the account. Fused writes and atomic increments count themselves: the
// increment lands on a counter word after the flow's region (an atomic increment carries no
// data, the region stays zero). The writes without an increment count by position: each packet
// has a position of its own (packets <= slots), and the positions holding their pattern intact
// are the packets delivered (a write delivered twice leaves the same bytes: only the counted
// types show duplicates).
//   unicast-write  packet_bytes of pattern at position p (the pattern of fused writes)
//   inline-write   one word at position p: word p of the region is pattern_word(seed, p)
//   atomic-inc     +1 on the counter word
//   fused-write-atomic-inc  the unicast write, then +1 on the counter word
//   scatter-write  the unicast write's bytes in 2 chunks, each its own NoC write (gap 0)
enum class TrafficSendType : uint8_t {
    UnicastWrite,
    InlineWrite,
    AtomicInc,
    FusedWriteAtomicInc,
    ScatterWrite,
};
// "unicast-write", "inline-write", "atomic-inc", "fused-write-atomic-inc", "scatter-write"
std::string_view traffic_send_type_name(TrafficSendType t);
// nullopt for anything else
std::optional<TrafficSendType> parse_traffic_send_type(std::string_view text);
// The names above, ", "-separated (for messages and --help).
std::string traffic_send_type_names();
protocol::fabric::NocSendType noc_send_type(TrafficSendType t);
// Fused writes and atomic increments: the sink's counter word counts them.
bool counted_by_increment(TrafficSendType t);
// The chunks of a scatter-write (each at least 16 B: packets of 32 B or more).
inline constexpr uint32_t kTrafficScatterChunks = 2;
// Error(BadInput) "<what>: ..." when `type` cannot be sent as `packet_bytes` packets, `packets`
// per flow into `slots` positions with deliveries counted (`count`): a scatter-write under 32 B,
// or a type counted by position with more packets than positions.
void check_traffic_send_type(std::string_view what, TrafficSendType type, uint32_t packet_bytes,
                             uint32_t packets, uint32_t slots, bool count);
// A kernel's send type (and a scatter-write's chunks).
void set_send_type(protocol::FabricTrafficArgs& args, TrafficSendType type);
// A destination's counter word, on its sink core: after its region of `region_bytes`, or for
// atomic increments the region's first word (which they increment).
void set_counter(protocol::FabricDest& dest, uint32_t region_bytes, TrafficSendType type);

struct MeshTrafficOptions {
    uint32_t packets = 1;          // per flow
    uint32_t packet_bytes = 1024;  // a multiple of 16
    uint32_t slots = 0;            // positions per flow region; 0: min(packets, 4)
    uint32_t sink_core_index = kMeshSinkCoreIndex;
    uint32_t timeout_us = 20'000;   // every wait of a kernel (slot credit, open, close, start)
    bool start_together = false;    // see "start" at the top of the file
    bool count_deliveries = false;  // see "sinks" at the top of the file
    uint32_t first_flow_id = 0;  // see "seq": flows of earlier rounds of a run take the ids below
    // The packets' send type; unset: fused writes when counting deliveries, else unicast writes.
    std::optional<TrafficSendType> send_type;
};

struct MeshTrafficWorker {
    LaunchTarget target;
    protocol::FabricTrafficArgs args{};
    std::vector<protocol::FabricDest> dests;  // one per flow it sends
    std::vector<size_t> flows;                // MeshTraffic::flows index of each dest
    std::vector<CoreLocation> sinks;          // the sink core of each dest
};

struct MeshTraffic {
    std::vector<MeshFlow> flows;
    std::vector<MeshTrafficWorker> workers;
    hal::Arch arch = hal::Arch::WormholeB0;
    uint32_t packets = 0, packet_bytes = 0, slots = 0;
    bool start_together = false;
    bool count_deliveries = false;
    uint32_t first_flow_id = 0;
    TrafficSendType send_type = TrafficSendType::UnicastWrite;

    uint32_t region_bytes() const { return slots * packet_bytes; }
    // A region and, when counting, its counter.
    uint32_t region_stride() const { return region_bytes() + (count_deliveries ? 16 : 0); }
    uint32_t flow_id(size_t k) const { return first_flow_id + static_cast<uint32_t>(k); }
    uint64_t total_packets() const { return uint64_t(packets) * flows.size(); }
    uint64_t total_bytes() const { return total_packets() * packet_bytes; }
};

// First byte of the sink regions: past the test mailbox, 4 KiB aligned.
uint32_t mesh_sink_base(hal::Arch arch);
// Bytes of a worker's source buffer (worker L1 above): flows x slots x packet_bytes must fit.
uint32_t mesh_worker_source_bytes(hal::Arch arch);

// `flows` in rounds a worker kernel each can take: a flow goes in the first round in which the
// router it is sent through (MeshPlan::send) has fewer than protocol::kFabricMaxDests flows, so a
// round has at most that many per router (one kernel sends through a router's ch0 at a time). In
// flow order within each round. Error(BadInput) as MeshPlan::send.
std::vector<std::vector<MeshFlow>> mesh_traffic_rounds(const MeshPlan& plan,
                                                       std::span<const MeshFlow> flows);

// The SoC descriptor of each chip, harvesting applied (SimDevice::soc, PcieDevice::soc): workers
// and sinks go only on the chip's own Worker cores, never on a harvested row or column.
using ChipSocs = std::function<const SocDescriptor&(ChipId)>;

// The workers for `flows` (see the top of the file). Pure. Error(Fabric) naming the cycle if the
// flows could deadlock (MeshPlan::wait_cycle). Error(BadInput) for a flow MeshPlan::send
// refuses, a worker with more than kFabricMaxDests flows or whose source buffer does not fit below
// the mailbox, a chip needing so many workers that they reach the sink core, sink regions beyond
// the worker L1, a packet size that is 0 or not a multiple of 16, more than 2^32 - 1 packets for
// one worker, more packets per flow or flow ids than the seq word holds
// (protocol::kTrafficSeqMaxPackets, kTrafficSeqMaxFlows).
MeshTraffic plan_mesh_traffic(const MeshPlan& plan, const ChipSocs& socs,
                              const ElfImage& traffic_elf, std::vector<MeshFlow> flows,
                              const MeshTrafficOptions& options = {});
// Each chip's descriptor from the device the traffic will run on.
MeshTraffic plan_mesh_traffic(const MeshPlan& plan, const Device& device,
                              const ElfImage& traffic_elf, std::vector<MeshFlow> flows,
                              const MeshTrafficOptions& options = {});
// The same descriptor for every chip (a cluster without harvesting).
MeshTraffic plan_mesh_traffic(const MeshPlan& plan, const SocDescriptor& soc,
                              const ElfImage& traffic_elf, std::vector<MeshFlow> flows,
                              const MeshTrafficOptions& options = {});

// Write a worker's destinations and mailbox, clear its start word and spoil the last word of its
// source buffer (the fill is seen there); what run_mesh_traffic does to each worker before any is
// started.
void load_mesh_worker(Device& device, hal::Arch arch, const MeshTrafficWorker& worker);
// Zero every flow's region, so nothing stale can pass check_mesh_landed.
void zero_mesh_sinks(Device& device, const MeshTraffic& traffic);

struct MeshWorkerOutcome {
    LaunchResult launch;
    uint32_t status = 0;    // TestMailbox::status
    uint32_t stuck_at = 0;  // TestMailbox::stuck_at
    protocol::FabricTrafficResults results{};

    // Exited, status Done and every packet sent.
    bool passed(const MeshTrafficWorker& w) const;
};

// The test mailbox of a kernel on `core` (protocol/test_mailbox.h), as it is now.
protocol::TestMailbox read_test_mailbox(Device& device, hal::Arch arch, const CoreLocation& core);
// A fabric_traffic kernel's outcome from its mailbox on `core`, after the launch that gave
// `launch`.
MeshWorkerOutcome read_worker_outcome(Device& device, hal::Arch arch, const CoreLocation& core,
                                      const LaunchResult& launch);
// Each worker's outcome from its mailbox, after the launch that gave `launches` (in workers order).
std::vector<MeshWorkerOutcome> read_mesh_outcomes(Device& device, const MeshTraffic& traffic,
                                                  std::span<const LaunchResult> launches);

struct MeshTrafficRun {
    std::vector<MeshWorkerOutcome> workers;  // in MeshTraffic::workers order
    // Device cycles until the last worker exited, from the start of run_workers (load included),
    // or with start_together from the moment the start words were written.
    uint64_t cycles = 0;
    bool passed(const MeshTraffic& t) const;
};

// Zero the sinks, run the workers to their end on the fabric and read each one's outcome. A worker
// that fails is reported in its outcome, not thrown; the runner's Error(Fabric) (a router failing
// while they run) passes through. With start_together the workers are loaded, started and waited
// for with load_many / start_many / wait_many (the routers' health checked at every poll), since
// run_workers gives no moment to write the start words; Error(BadInput) if the fabric is not up.
MeshTrafficRun run_mesh_traffic(FabricRunner& runner, const MeshTraffic& traffic,
                                const LaunchOptions& options);

// The words of `got` (slots positions of packet_bytes) that differ from pattern_word(seed +
// position, word), the byte offset of the first and the positions that hold any; Error(BadInput)
// if `got` is shorter than that.
struct PatternCheck {
    uint32_t bad_words = 0;
    uint32_t first_bad = 0;
    std::vector<uint32_t> bad_positions;  // ascending
};
PatternCheck check_pattern(std::span<const uint8_t> got, uint32_t packet_bytes, uint32_t slots,
                           uint32_t seed);
// A region as `type` leaves it (see TrafficSendType): the pattern of the writes, an inline
// write's word per position, or all zero for atomic increments (their counter is past the
// region).
PatternCheck check_region(std::span<const uint8_t> got, TrafficSendType type, uint32_t packet_bytes,
                          uint32_t slots, uint32_t seed);
// The packets a sink counted for a region checked as `check` whose counter word reads
// `counter`: the counter for the types that count themselves, else the intact positions.
uint32_t delivered_count(TrafficSendType type, uint32_t slots, const PatternCheck& check,
                         uint32_t counter);

// Per flow (MeshTraffic::flows order): the words of its region that differ from the pattern of its
// last `slots` packets. All zero: everything landed, byte for byte.
std::vector<uint32_t> check_mesh_landed(Device& device, const MeshTraffic& traffic);
// The same, each flow's check in full (which positions are wrong).
std::vector<PatternCheck> check_mesh_regions(Device& device, const MeshTraffic& traffic);

// The packet whose bytes a region's position holds at the end: the last of `packets` packets
// sent round the `slots` positions that went to `position` (packet i goes to i % slots).
uint32_t last_packet_at(uint32_t packets, uint32_t slots, uint32_t position);
// "packets 13, 15": the last packets at `positions` of a region (for messages).
std::string packets_at(uint32_t packets, uint32_t slots, std::span<const uint32_t> positions);

// Per flow (MeshTraffic::flows order): the packets its sink counted (count_deliveries; otherwise
// Error(BadInput)).
std::vector<uint32_t> read_mesh_delivered(Device& device, const MeshTraffic& traffic);

// Packets a worker that sent `packets_sent` round-robin over `num_dests` destinations sent to its
// destination `dest`.
uint64_t sent_to_dest(uint64_t packets_sent, uint32_t num_dests, uint32_t dest);

// Per flow (MeshTraffic::flows order) what its worker sent (from `outcomes`, in workers order;
// flows of workers without an outcome sent nothing) and its sink counted (`delivered`, from
// read_mesh_delivered), named "M0D0 -> M0D5 plane 0", for account_traffic.
std::vector<FlowTally> mesh_flow_tallies(const MeshTraffic& traffic,
                                         std::span<const MeshWorkerOutcome> outcomes,
                                         std::span<const uint32_t> delivered);

}  // namespace fabric
