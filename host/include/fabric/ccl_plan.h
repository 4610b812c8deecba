// Collectives as worker kernels on a fabric that is up (seeds/000 §1; protocol/ccl.h, kernel
// firmware/tests/ccl_ring.cpp): plan a ring all-gather, reduce-scatter or all-reduce, run it
// through FabricRunner::run_workers, check every rank's whole output against the host's
// computation, word for word. Over any Device; no output.
//
//   cycle    the chips in ring order, each once:
//              1D    a ring FabricPlan's chips in plan.chips order
//              line  2D: a node and the chips along its router's line facing `dir`, in a
//                    dimension that is a ring (a torus)
//              mesh  2D: every chip of a mesh, round a cycle that uses no wrap link: along row 0
//                    west to east, down the last column and back and forth over columns 1.. of
//                    the other rows, up column 0 (ccl_mesh_cycle; it needs an even number of rows
//                    or of columns, both at least 2)
//   rings    workers_per_direction rings round the cycle, and as many the other way round when
//            bidirectional (its chips in reverse order): ring i runs on worker core i of every
//            chip (the chip's i-th worker core of its harvested descriptor), each rank connected
//            to the router whose line leads one hop on to the next rank's chip (the ring's
//            direction first: East, the line's `dir`; back: West, the opposite). Each ring is a
//            collective of its own over its share of the data: chunk_bytes / rings a rank, its
//            inputs from seed + 0x100 * ring + rank.
//   mux      through_mux: a chip's rings of one direction share one fabric mux (mux.h) on the
//            worker core after the rings' (forward, then back), feeding that router, a full-size
//            channel per ring with mux_slots slots each: seeds/001's reduce-scatter shape (two
//            workers per direction through a mux on a T3K)
//   L1       on every rank: the connection at test_l1_base, the counter 0x300 above it, the
//            input 0x400 above it and the output (ranks x ring chunk) right behind the input,
//            below the mailbox (a rank sends from its output: NoC sources lie where the core's
//            NoC reaches locally)
//   expect   ccl_expected: every output word of every rank (protocol/ccl.h says what each slot
//            ends with), computed here from the inputs
//   figures  bus bandwidth as NCCL counts it: phases x (ranks - 1) x chunk_bytes over the slowest
//            rank's cycles (first send .. its result complete), an all-reduce two phases, the
//            others one; a ring moves that much over each of its links, so one ring reaches at
//            most one link's rate, and rings both ways twice that
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/launch.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "fabric/mux.h"
#include "protocol/ccl.h"

namespace fabric {

// "all-gather", "reduce-scatter", "all-reduce"; parse: nullopt for anything else.
std::string_view ccl_op_name(protocol::CclOp op);
std::optional<protocol::CclOp> parse_ccl_op(std::string_view text);

struct CclOptions {
    protocol::CclOp op = protocol::CclOp::AllGather;
    // A rank's share of the output, split evenly over the rings: a positive multiple of 16 x
    // rings.
    uint32_t chunk_bytes = 16 * 1024;
    uint32_t seed = 0xA110;
    uint32_t timeout_us = 20'000;  // every wait of every rank
    uint32_t workers_per_direction = 1;
    bool bidirectional = false;
    bool through_mux = false;
    uint32_t mux_slots = 1;  // slots of each mux channel (seeds/001: one)

    uint32_t rings() const { return workers_per_direction * (bidirectional ? 2 : 1); }
};

struct CclRank {
    uint32_t ring = 0;  // its index in CclPlan::rings
    LaunchTarget target;
    protocol::CclRingArgs args{};
    const RouterPlacement* router = nullptr;  // the router towards the next rank
};

struct CclRing {
    bool reverse = false;        // round the cycle the other way
    std::vector<CclRank> ranks;  // in ring order: rank r sends to rank r + 1
};

struct CclPlan {
    hal::Arch arch = hal::Arch::WormholeB0;
    CclOptions options;
    std::vector<ChipId> cycle;        // the chips in (forward) ring order
    std::vector<CclRing> rings;       // forward rings first
    std::vector<MuxPlacement> muxes;  // through_mux: per chip, forward then back

    uint32_t ranks() const { return static_cast<uint32_t>(cycle.size()); }
    // Each ring's share of a rank's output.
    uint32_t ring_chunk_bytes() const { return options.chunk_bytes / options.rings(); }
    // A rank's input and output in one ring.
    uint32_t input_bytes() const {
        return protocol::ccl_input_bytes(options.op, ranks(), ring_chunk_bytes());
    }
    uint32_t output_bytes() const {
        return protocol::ccl_output_bytes(options.op, ranks(), ring_chunk_bytes());
    }
    // Passes round the ring (an all-reduce makes two), each ranks - 1 chunks sent by every rank.
    uint32_t phases() const { return options.op == protocol::CclOp::AllReduce ? 2 : 1; }
};

// The cycle through every chip of mesh `mesh` (the top of the file); Error(BadInput) when no
// such cycle exists.
std::vector<MeshNode> ccl_mesh_cycle(const MeshPlan& plan, MeshId mesh);

// The plans (the top of the file). Pure. Error(BadInput) naming the option or node for: a 1D plan
// that is not a ring, a 2D line that is not a ring (a dimension that does not wrap, or an
// inter-mesh port), a mesh with no cycle, more ranks than kCclMaxRanks, a ring chunk of 0 B or not
// a multiple of 16, no workers, a chip without enough worker cores, an input and output that do
// not fit below the mailbox, a timeout of 0, the mux's own refusals (plan_mux).
CclPlan plan_ccl(const FabricPlan& plan, const ChipSocs& socs, const ElfImage& kernel,
                 const CclOptions& options = {});
CclPlan plan_ccl(const MeshPlan& plan, MeshNode node, MeshDir dir, uint32_t plane,
                 const ChipSocs& socs, const ElfImage& kernel, const CclOptions& options = {});
CclPlan plan_ccl(const MeshPlan& plan, MeshId mesh, uint32_t plane, const ChipSocs& socs,
                 const ElfImage& kernel, const CclOptions& options = {});

// The host's side: rank r's input in ring `ring`, and the output it must end with (every word).
std::vector<uint32_t> ccl_input(const CclPlan& plan, uint32_t ring, uint32_t rank);
std::vector<uint32_t> ccl_expected(const CclPlan& plan, uint32_t ring, uint32_t rank);

// A rank's mailbox and input written, its counter and output zeroed (every rank before any
// starts: run_ccl does it so).
void load_rank(Device& device, const CclPlan& plan, const CclRank& rank);

struct CclRankOutcome {
    uint32_t ring = 0, rank = 0;
    LaunchResult launch;
    uint32_t status = 0;    // TestMailbox::status
    uint32_t stuck_at = 0;  // TestMailbox::stuck_at
    protocol::CclRingResults results{};
};
struct CclRun {
    std::vector<CclRankOutcome> ranks;                    // ring by ring, each in ring order
    std::vector<protocol::fabric::MuxStatusBlock> muxes;  // each mux's last status
    uint64_t cycles = 0;              // device cycles of run_workers (load included)
    uint32_t slowest_cycles() const;  // the largest results.cycles
};

// Start the muxes (watched by the runner's health monitor), load every rank, run them all to their
// end, read each one's outcome, stop the muxes (stop_mux, within options.max_cycles). A failing
// rank is reported in its outcome, not thrown; the runner's Error(Fabric) passes through.
CclRun run_ccl(FabricRunner& runner, const CclPlan& plan, const LaunchOptions& options,
               const ElfImage* mux_image = nullptr);

// Every way the run differs from what it must be, one line each (empty: correct): a rank that did
// not finish Done, its sent / received counts (ranks - 1 each a phase), each rank's output against
// ccl_expected (how many words differ, the first one), a mux that did not forward exactly its
// rings' packets.
std::vector<std::string> ccl_problems(Device& device, const CclPlan& plan, const CclRun& run);

// The payload of one packet on a rank's path: the mux channel's, or the router's.
uint32_t ccl_path_payload(const CclPlan& plan);
// Packets a rank sends in the whole collective (protocol/ccl.h): a reducing step one fused packet
// a piece of ccl_path_payload, a gathering step one fused packet for a chunk that fits one, else
// its writes and one increment.
uint32_t ccl_packets_per_rank(const CclPlan& plan);

// Bytes per cycle of bus bandwidth (the top of the file); 0 when no rank reported cycles.
double ccl_bus_bandwidth(const CclPlan& plan, const CclRun& run);

}  // namespace fabric
