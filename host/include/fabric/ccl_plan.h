// Collectives as worker kernels on a fabric that is up (seeds/000 §1; protocol/ccl.h, kernel
// firmware/tests/ccl_all_gather.cpp): plan a ring all-gather, run it through
// FabricRunner::run_workers, check every rank's output against the host's computation, word for
// word. Over any Device; no output.
//
//   ring     the ranks in ring order, one worker core per chip (the first worker core of its
//            harvested descriptor), each connected to the router whose line (the line API,
//            line_chips) leads one hop on to the next rank's chip:
//              1D  a ring FabricPlan's East routers, the ranks in plan.chips order;
//              2D  the routers facing `dir` along the row (E/W) or column (N/S) of a node, in a
//                  dimension that is a ring (a torus), from that node on
//   L1       on every rank: the connection at test_l1_base, the counter 0x300 above it, the
//            input 0x400 above it and the output (ranks x chunk_bytes) right behind the input,
//            below the mailbox (a rank forwards chunks from its output: NoC sources lie where the
//            core's NoC reaches locally)
//   input    rank r's chunk: word w is pattern_word(seed + r, w)
//   expect   every rank's output: chunk r is rank r's input, for every r
//   figures  bus bandwidth as NCCL counts it for an all-gather: (ranks - 1) x chunk_bytes over the
//            slowest rank's cycles (first send .. last chunk arrived); a ring moves that much over
//            each of its links, so it is at most one link's rate
#pragma once

#include <cstdint>
#include <string>
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

struct AllGatherOptions {
    uint32_t chunk_bytes = 16 * 1024;  // each rank's input: a positive multiple of 16
    uint32_t seed = 0xA110;
    uint32_t timeout_us = 20'000;  // every wait of every rank
};

struct CclRank {
    LaunchTarget target;
    protocol::AllGatherArgs args{};
    const RouterPlacement* router = nullptr;  // its worker's router (towards the next rank)
};

struct AllGatherPlan {
    hal::Arch arch = hal::Arch::WormholeB0;
    AllGatherOptions options;
    std::vector<CclRank> ranks;  // in ring order: rank r sends to rank r + 1

    uint32_t output_bytes() const {
        return static_cast<uint32_t>(ranks.size()) * options.chunk_bytes;
    }
};

// The plans (the top of the file). Pure. Error(BadInput) naming the option or node for: a 1D plan
// that is not a ring, a 2D line that is not a ring (a dimension that does not wrap, or an
// inter-mesh port), more ranks than kCclMaxRanks, a chunk of 0 B or not a multiple of 16, an input
// and output that do not fit below the mailbox, a timeout of 0.
AllGatherPlan plan_all_gather(const FabricPlan& plan, const ChipSocs& socs, const ElfImage& kernel,
                              const AllGatherOptions& options = {});
AllGatherPlan plan_all_gather(const MeshPlan& plan, MeshNode node, MeshDir dir, uint32_t plane,
                              const ChipSocs& socs, const ElfImage& kernel,
                              const AllGatherOptions& options = {});

// The host's computation: the output every rank must hold.
std::vector<uint32_t> all_gather_expected(const AllGatherPlan& plan);

// A rank's mailbox and input written, its counter and output zeroed (every rank before any
// starts: run_all_gather does it so).
void load_rank(Device& device, const AllGatherPlan& plan, const CclRank& rank);
void load_all_gather(Device& device, const AllGatherPlan& plan);

struct CclRankOutcome {
    LaunchResult launch;
    uint32_t status = 0;    // TestMailbox::status
    uint32_t stuck_at = 0;  // TestMailbox::stuck_at
    protocol::AllGatherResults results{};
};
struct AllGatherRun {
    std::vector<CclRankOutcome> ranks;  // in ring order
    uint64_t cycles = 0;                // device cycles of run_workers (load included)
    uint32_t slowest_cycles() const;    // the largest results.cycles
};

// Load every rank, run them all to their end, read each one's outcome. A failing rank is reported
// in its outcome, not thrown; the runner's Error(Fabric) passes through.
AllGatherRun run_all_gather(FabricRunner& runner, const AllGatherPlan& plan,
                            const LaunchOptions& options);

// Every way the run differs from what it must be, one line each (empty: correct): a rank that did
// not finish Done, its sent / received counts (ranks - 1 each), and each rank's output against
// all_gather_expected (how many words differ, the first one).
std::vector<std::string> all_gather_problems(Device& device, const AllGatherPlan& plan,
                                             const AllGatherRun& run);

// Bytes per cycle of bus bandwidth (the top of the file); 0 when no rank reported cycles.
double all_gather_bus_bandwidth(const AllGatherPlan& plan, const AllGatherRun& run);

}  // namespace fabric
