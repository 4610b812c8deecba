// Collectives as worker kernels on a fabric that is up (seeds/000 §1; protocol/ccl.h, kernel
// firmware/tests/ccl_ring.cpp): plan a ring all-gather, reduce-scatter or all-reduce, run it
// through FabricRunner::run_workers, check every rank's whole output against the host's
// computation, word for word. Over any Device; no output.
//
//   ring     the ranks in ring order, one worker core per chip (the first worker core of its
//            harvested descriptor), each connected to the router whose line (the line API,
//            line_chips) leads one hop on to the next rank's chip:
//              1D  a ring FabricPlan's East routers, the ranks in plan.chips order;
//              2D  the routers facing `dir` along the row (E/W) or column (N/S) of a node, in a
//                  dimension that is a ring (a torus), from that node on
//   L1       on every rank: the connection at test_l1_base, the counter 0x300 above it, the
//            input 0x400 above it and the output (ranks x chunk_bytes) right behind the input,
//            below the mailbox (a rank sends from its output: NoC sources lie where the core's
//            NoC reaches locally)
//   input    rank r's: word w is pattern_word(seed + r, w) (one chunk for an all-gather, one per
//            rank for the reducing ops, of int32 elements)
//   expect   ccl_expected: every output word of every rank (protocol/ccl.h says what each slot
//            ends with), computed here from the inputs
//   figures  bus bandwidth as NCCL counts it: phases x (ranks - 1) x chunk_bytes over the slowest
//            rank's cycles (first send .. its result complete), an all-reduce two phases, the
//            others one; a ring moves that much over each of its links, so it is at most one
//            link's rate
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
#include "protocol/ccl.h"

namespace fabric {

// "all-gather", "reduce-scatter", "all-reduce"; parse: nullopt for anything else.
std::string_view ccl_op_name(protocol::CclOp op);
std::optional<protocol::CclOp> parse_ccl_op(std::string_view text);

struct CclOptions {
    protocol::CclOp op = protocol::CclOp::AllGather;
    uint32_t chunk_bytes = 16 * 1024;  // a positive multiple of 16 (a rank's share of the output)
    uint32_t seed = 0xA110;
    uint32_t timeout_us = 20'000;  // every wait of every rank
};

struct CclRank {
    LaunchTarget target;
    protocol::CclRingArgs args{};
    const RouterPlacement* router = nullptr;  // its worker's router (towards the next rank)
};

struct CclPlan {
    hal::Arch arch = hal::Arch::WormholeB0;
    CclOptions options;
    std::vector<CclRank> ranks;  // in ring order: rank r sends to rank r + 1

    uint32_t input_bytes() const {
        return protocol::ccl_input_bytes(options.op, static_cast<uint32_t>(ranks.size()),
                                         options.chunk_bytes);
    }
    uint32_t output_bytes() const {
        return protocol::ccl_output_bytes(options.op, static_cast<uint32_t>(ranks.size()),
                                          options.chunk_bytes);
    }
    // Passes round the ring (an all-reduce makes two), each ranks - 1 chunks sent by every rank.
    uint32_t phases() const { return options.op == protocol::CclOp::AllReduce ? 2 : 1; }
};

// The plans (the top of the file). Pure. Error(BadInput) naming the option or node for: a 1D plan
// that is not a ring, a 2D line that is not a ring (a dimension that does not wrap, or an
// inter-mesh port), more ranks than kCclMaxRanks, a chunk of 0 B or not a multiple of 16, an input
// and output that do not fit below the mailbox, a timeout of 0.
CclPlan plan_ccl(const FabricPlan& plan, const ChipSocs& socs, const ElfImage& kernel,
                 const CclOptions& options = {});
CclPlan plan_ccl(const MeshPlan& plan, MeshNode node, MeshDir dir, uint32_t plane,
                 const ChipSocs& socs, const ElfImage& kernel, const CclOptions& options = {});

// The host's side: rank r's input, and the output it must end with (every word).
std::vector<uint32_t> ccl_input(const CclPlan& plan, uint32_t rank);
std::vector<uint32_t> ccl_expected(const CclPlan& plan, uint32_t rank);

// A rank's mailbox and input written, its counter and output zeroed (every rank before any
// starts: run_ccl does it so).
void load_rank(Device& device, const CclPlan& plan, const CclRank& rank);

struct CclRankOutcome {
    LaunchResult launch;
    uint32_t status = 0;    // TestMailbox::status
    uint32_t stuck_at = 0;  // TestMailbox::stuck_at
    protocol::CclRingResults results{};
};
struct CclRun {
    std::vector<CclRankOutcome> ranks;  // in ring order
    uint64_t cycles = 0;                // device cycles of run_workers (load included)
    uint32_t slowest_cycles() const;    // the largest results.cycles
};

// Load every rank, run them all to their end, read each one's outcome. A failing rank is reported
// in its outcome, not thrown; the runner's Error(Fabric) passes through.
CclRun run_ccl(FabricRunner& runner, const CclPlan& plan, const LaunchOptions& options);

// Every way the run differs from what it must be, one line each (empty: correct): a rank that did
// not finish Done, its sent / received counts (ranks - 1 each), and each rank's output against
// ccl_expected (how many words differ, the first one).
std::vector<std::string> ccl_problems(Device& device, const CclPlan& plan, const CclRun& run);

// Bytes per cycle of bus bandwidth (the top of the file); 0 when no rank reported cycles.
double ccl_bus_bandwidth(const CclPlan& plan, const CclRun& run);

}  // namespace fabric
