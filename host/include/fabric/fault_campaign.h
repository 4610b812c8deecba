// Fault campaigns (issue 18 item 8): many seeded runs of `fabricctl fabric run` / `mesh run` with
// faults injected into the model, each checked for the fabric's promise: the run ends within its
// cycle budget, and every packet is delivered exactly once or reported dropped with its identity.
//
// An iteration is one fabricctl command line. Its index and the campaign seed fix everything it
// draws (topology, traffic, faults, their cycles, the run's --seed), and it runs as exactly that
// command (`fabricctl fault campaign` starts itself as a child per iteration), so the replay line
// printed for a failing iteration reproduces it bit for bit.
//
//   CampaignOptions o;  o.seed = 7;  o.iterations = 100;
//   const CampaignPorts ports = campaign_ports(o);       // the router ports each topology uses
//   Iteration it = draw_iteration(o, ports, 42);         // iteration 42 of campaign 7
//   ChildRun run = run_child(fabricctl, it.args_json(), wall_limit_s);
//   IterationVerdict v = judge_iteration(run.exit_code, report_json, run.timed_out);
//
// The draws use their own generator (splitmix64) and integer arithmetic only, so a seed draws the
// same iteration on every compiler and machine.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/coord.h"
#include "fabric/fault_plan.h"

namespace fabric {

// The fabrics a campaign runs on (issue 18 item 8: a 1D line, a ring, a 2D mesh with both
// planes, the spec's 4-mesh cluster).
enum class CampaignTopology : uint8_t {
    N300Line,   // fabric run, n300: a 2-chip line
    T3kLine,    // fabric run, t3k: a line of 3..8 chips along the ring's order
    T3kRing,    // fabric run, t3k: the 8-chip ring
    T3kMesh,    // mesh run, t3k 2 x 4, planes 0 and 1
    Spec4Mesh,  // mesh run, the spec's four 3 x 3 meshes
};
inline constexpr size_t kCampaignTopologies = 5;

// "n300-line", "t3k-line", "t3k-ring", "t3k-mesh", "spec-4mesh"; parse: nullopt otherwise.
std::string_view campaign_topology_name(CampaignTopology t);
std::optional<CampaignTopology> parse_campaign_topology(std::string_view text);

// How a topology is drawn and run.
struct CampaignTopologyInfo {
    CampaignTopology topology;
    bool mesh = false;            // mesh run (else fabric run)
    uint32_t weight = 0;          // relative share of the iterations (the CI mix)
    const char* cluster = "";     // file in the descriptor directory
    const char* mesh_graph = "";  // mesh run only
    uint64_t traffic_window = 0;  // fault cycles are drawn in [0, window): the traffic's span
    uint64_t max_cycles = 0;      // the run's --max-cycles: its bound (a hang ends there)
    uint32_t max_packets = 0;     // packets drawn in 1..max_packets
};
const CampaignTopologyInfo& campaign_topology_info(CampaignTopology t);

// What a campaign draws from.
struct CampaignOptions {
    uint64_t seed = 1;
    uint64_t first = 0;  // the first iteration's index (shards of one campaign)
    uint64_t iterations = 100;
    std::vector<CampaignTopology> topologies;  // empty: all, by their weights
    std::vector<FaultKind> kinds;              // empty: all
    // A link-down comes up again 5,000 to 60,000 cycles later (a rerouted link rejoins); the
    // draws of a campaign without it are unchanged.
    bool link_returns = false;
    std::string descriptor_dir;  // where the cluster and mesh graph files are
};

// One port a fault can hit: a router's chip and Ethernet channel.
struct CampaignPort {
    ChipId chip = 0;
    uint32_t eth = 0;
    ChipId peer = 0;  // the chip at the link's other end
    uint32_t peer_eth = 0;
    CoreCoord core;  // the router's eth core (what a noc-hold on this port holds)
    CoreCoord sink;  // the chip's sink core of the topology's traffic (the other noc-hold)
};
// Per topology, the router ports of its fabric (t3k-line: those of t3k's 8-chip ring; a drawn
// line uses the ports between its own chips).
using CampaignPorts = std::map<CampaignTopology, std::vector<CampaignPort>>;
// Plans every topology of `options` (as fabricctl would) for its router ports. Errors of the
// descriptors pass through.
CampaignPorts campaign_ports(const CampaignOptions& options);

// One iteration, as drawn.
struct Iteration {
    uint64_t index = 0;
    uint64_t seed = 0;  // the iteration's own seed (from the campaign's and the index)
    CampaignTopology topology = CampaignTopology::N300Line;
    std::vector<ChipId> chips;  // fabric run: the line or ring
    std::string pattern;        // fabric run: "neighbour" or "all-to-all"
    std::string send_type;      // --send-type (mesh_traffic.h TrafficSendType names)
    uint32_t packets = 0, bytes = 0;
    std::vector<FaultSpec> faults;
    uint32_t packet_timeout_us = 0;  // 0: none
    std::string on_packet_timeout;   // "drop" or "hold" when a timeout is set
    uint64_t run_seed = 0;           // the run's --seed (link-drop draws)
    uint64_t max_cycles = 0;

    // fabricctl's arguments (without the program name) that run it.
    std::vector<std::string> args(const std::string& descriptor_dir) const;
    // The command line to replay it: "fabricctl fabric run --cluster ... --seed N", shell-quoted.
    std::string replay(const std::string& descriptor_dir) const;
    // "t3k-ring all-to-all atomic-inc 3 x 512 B; link-flap:2:0@1200/800 (seed 9)"
    std::string describe() const;
};

// Iteration `index` of the campaign. Pure: the same (options, ports, index) give the same
// iteration. Error(BadInput) when `ports` lacks a topology the options draw from.
Iteration draw_iteration(const CampaignOptions& options, const CampaignPorts& ports,
                         uint64_t index);

// What a child fabricctl did.
struct ChildRun {
    int exit_code = -1;      // its exit status, or 128 + signal
    bool timed_out = false;  // killed after the wall-clock limit
    std::string out, err;
    double wall_seconds = 0;
};
// Runs `program` with `args`, stdout and stderr captured; killed (SIGKILL) after `wall_limit_s`
// seconds. Error(Internal) when it cannot be started.
ChildRun run_child(const std::string& program, const std::vector<std::string>& args,
                   double wall_limit_s);

// The figures of one iteration's run, from its --json report.
struct IterationFigures {
    uint64_t sent = 0, delivered = 0, dropped = 0;
};

// The verdict on one iteration: what broke the fabric's promise, one line each (empty: it
// kept it), and its figures.
struct IterationVerdict {
    std::vector<std::string> failures;
    IterationFigures figures;
    bool passed() const { return failures.empty(); }
};

// Judges a run: it must end with exit 0 (all delivered) or 108 with every drop accounted for,
// within its budget and the wall-clock limit; its account must show, per flow, lost == 0,
// duplicated == 0, delivered + dropped == sent, no stray drops and no unwritten event records;
// data may differ from the pattern only where packets were dropped; any other problem the
// report names is a failure. `report` is the run's --json document (null when it printed none).
IterationVerdict judge_iteration(const ChildRun& run, const nlohmann::json* report);

// Per topology and per fault kind, how many iterations ran and how many failed.
struct CampaignTally {
    uint64_t iterations = 0, failed = 0;
};

// The campaign so far.
struct CampaignSummary {
    uint64_t iterations = 0, failed = 0;
    IterationFigures packets;
    std::map<std::string, CampaignTally> by_topology, by_fault;
    double wall_seconds = 0;   // the campaign's, start to end
    double child_seconds = 0;  // the sum of the iterations' own

    void add(const Iteration& it, const IterationVerdict& v, double wall_s);
    // "campaign: 1000 iterations, 0 failed, 1412 s of runs in 380.2 s (2.63 iterations/s); packets
    // sent 91234, delivered 91001, dropped 233", then a line per topology and per fault kind.
    std::vector<std::string> lines() const;
    nlohmann::json json() const;
};

}  // namespace fabric
