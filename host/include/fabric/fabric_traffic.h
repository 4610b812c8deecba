// Traffic on a 1D fabric (fabric_plan.h: a line or ring) that is up: fabric_traffic worker kernels
// (firmware/tests/fabric_traffic.cpp, protocol::FabricTrafficArgs) that unicast to the next chip
// or multicast along the line, run through FabricRunner::run_workers; then each worker's outcome
// is read and every byte that should have landed is compared with its pattern. The 1D sibling of
// mesh_traffic.h, shared by `fabricctl fabric run` and the tests. Over any Device; no output.
//
//   workers   on every chip of the plan: one kernel per direction it sends in, on the first worker
//             core (east) or the second (west) that every chip of the plan has once harvesting is
//             applied (a multicast writes one core position on every chip).
//             Neighbour: each chip to the next one east (the last chip of a line: west).
//             AllToAll:  a ring multicasts east to every other chip; a line multicasts east to the
//             chips after it and west to the chips before it.
//   sinks     the third such worker core of every destination chip; worker k's packets land in
//             region k (slots positions of packet_bytes, packet i at position i % slots) from
//             fabric_sink_base() up; position p of worker k carries pattern_word(0x1000 * (k + 1)
//             + p, w). With count_deliveries the packets are fused writes + atomic increments of
//             a 16-B counter after the region on every chip (read_fabric_delivered).
//   seq       worker k's packet i carries protocol::traffic_seq(k, i); a flow of the account
//             (traffic_account.h) is a worker and one chip its route writes.
//   worker L1 destinations at test_l1_base, the connection 0x300 above it, the source buffer
//             (slots x packet_bytes) 0x400 above it, up to the test mailbox.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/launch.h"
#include "fabric/mesh_traffic.h"
#include "protocol/test_kernels.h"

namespace fabric {

enum class FabricTrafficPattern { Neighbour, AllToAll };
// "neighbour", "all-to-all"; parse: nullopt for anything else.
std::string_view fabric_traffic_pattern_name(FabricTrafficPattern p);
std::optional<FabricTrafficPattern> parse_fabric_traffic_pattern(std::string_view text);

// Positions a worker's region holds at most (fewer when it sends fewer packets).
inline constexpr uint32_t kFabricTrafficMaxSlots = 8;

struct FabricTrafficOptions {
    FabricTrafficPattern pattern = FabricTrafficPattern::Neighbour;
    uint32_t packets = 16;          // per worker
    uint32_t packet_bytes = 1024;   // a multiple of 16
    uint32_t timeout_us = 20'000;   // every wait of a kernel
    bool count_deliveries = false;  // see "sinks" at the top of the file
    // The packets' send type (mesh_traffic.h TrafficSendType); unset: fused writes when counting
    // deliveries, else unicast writes.
    std::optional<TrafficSendType> send_type;
};

// A traffic kernel's buffers in its worker core's L1, below the test mailbox.
struct FabricTrafficL1 {
    uint32_t dests;    // FabricDest[kFabricMaxDests]
    uint32_t conn;     // kFabricConnL1Bytes of connection words
    uint32_t src;      // the source buffer: slots x packet_bytes
    uint32_t src_end;  // the mailbox
};
FabricTrafficL1 fabric_traffic_l1(hal::Arch arch);
// First byte of the sink regions: past the test mailbox, 4 KiB aligned.
uint32_t fabric_sink_base(hal::Arch arch);

struct FabricTrafficWorker {
    LaunchTarget target;
    FabricDir dir = FabricDir::East;
    std::vector<ChipId> dests;  // the chips its route writes, nearest first
    std::string name;           // "worker chip 0 core 1-1 (east)", for messages
    protocol::FabricDest dest{};
    protocol::FabricTrafficArgs args{};
};

struct FabricTraffic {
    std::vector<FabricTrafficWorker> workers;
    hal::Arch arch = hal::Arch::WormholeB0;
    CoreCoord sink;  // the receiving core on every chip
    uint32_t packets = 0, packet_bytes = 0, slots = 0;
    bool count_deliveries = false;
    TrafficSendType send_type = TrafficSendType::UnicastWrite;

    uint32_t region_bytes() const { return slots * packet_bytes; }
    // A region and, when counting, its counter.
    uint32_t region_stride() const { return region_bytes() + (count_deliveries ? 16 : 0); }
    // Packets that land: every worker's packets on every chip its route writes.
    uint64_t deliveries() const;
};

// The core every flow of fabric traffic on `chips` lands on, on each of them: the third worker
// core all of them have. Error(BadInput) when they have fewer than 3 in common.
CoreCoord fabric_traffic_sink(const ChipSocs& socs, const std::vector<ChipId>& chips);

// The workers of `pattern` (see the top of the file). Pure. Error(BadInput) when the chips have
// fewer than 3 worker cores in common, for a packet size that is 0, not a multiple of 16 or
// larger than the routers' payload, 0 packets or more than protocol::kTrafficSeqMaxPackets (the
// seq word numbers no more), or regions that do not fit the sending or the receiving worker's L1.
FabricTraffic plan_fabric_traffic(const FabricPlan& plan, const ChipSocs& socs,
                                  const ElfImage& traffic_elf,
                                  const FabricTrafficOptions& options = {});

// The same descriptor for every chip (a cluster without harvesting).
FabricTraffic plan_fabric_traffic(const FabricPlan& plan, const SocDescriptor& soc,
                                  const ElfImage& traffic_elf,
                                  const FabricTrafficOptions& options = {});

// Write a worker's destination and mailbox (run_workers' setup hook).
void load_fabric_worker(Device& device, hal::Arch arch, const FabricTrafficWorker& worker);
// Zero every region on every chip of the plan, so nothing stale can pass check_fabric_landed.
void zero_fabric_sinks(Device& device, const FabricPlan& plan, const FabricTraffic& traffic);

struct FabricTrafficRun {
    std::vector<MeshWorkerOutcome> workers;  // in FabricTraffic::workers order
    // Device cycles from the start of run_workers (load included) until the last worker exited.
    uint64_t cycles = 0;
};
// Zero the sinks, run the workers to their end on the fabric and read each one's outcome. A
// worker that fails is reported in its outcome, not thrown; the runner's Error(Fabric) (a router
// failing while they run) passes through. `before_start` runs once every worker is loaded.
FabricTrafficRun run_fabric_traffic(FabricRunner& runner, const FabricTraffic& traffic,
                                    const LaunchOptions& options);

// One (worker, destination chip) whose region differs from the pattern.
struct FabricLandedMismatch {
    size_t worker = 0;
    ChipId chip = 0;
    uint32_t addr = 0;
    PatternCheck check;
};
// Every region that should hold a worker's last `slots` packets, compared word by word. Empty:
// everything landed, byte for byte.
std::vector<FabricLandedMismatch> check_fabric_landed(Device& device, const FabricTraffic& traffic);

// Per worker (FabricTraffic::workers order), per chip its route writes (its dests order): the
// packets the sink there counted (count_deliveries; otherwise Error(BadInput)).
std::vector<std::vector<uint32_t>> read_fabric_delivered(Device& device,
                                                         const FabricTraffic& traffic);

// A flow per (worker, chip its route writes), in workers then dests order: what the worker sent
// (from `outcomes`; none for a worker without one), what that chip's sink counted (`delivered`,
// from read_fabric_delivered), named "worker chip 0 core 1-1 (east) -> chip 2", counting the drops
// of the routers on the chips up to that one (traffic_account.h).
std::vector<FlowTally> fabric_flow_tallies(const FabricTraffic& traffic,
                                           std::span<const MeshWorkerOutcome> outcomes,
                                           const std::vector<std::vector<uint32_t>>& delivered);

}  // namespace fabric
