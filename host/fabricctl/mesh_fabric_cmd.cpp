#include "mesh_fabric_cmd.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli_common.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/fabric_runner.h"
#include "fabric/interrupt.h"
#include "fabric/kmd_abi.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "fabric/progress.h"
#include "fabric/soc_descriptor.h"
#include "fabric_common.h"
#include "mesh_mapping.h"
#include "protocol/fabric.h"
#include "protocol/test_kernels.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace fabricctl {

namespace {

namespace pf = protocol::fabric;
using fabric::ErrorCategory;
using fabric::MeshNode;
using fabric::RouterPlacement;
using fabric::RouterSnapshot;
using nlohmann::json;

enum class Verb { Up, Status, Down, Run };

// How long `mesh status` lets a fresh fabric run before it reads it: a few poll intervals.
constexpr uint64_t kStatusWatchCycles = 10 * fabric::kFabricPollCycles;
// Positions per flow region in `mesh run` (fewer when the kernels' source buffers need it).
constexpr uint64_t kMeshRunSlots = 4;

const char* verb_name(Verb v) {
    switch (v) {
        case Verb::Up:
            return "up";
        case Verb::Status:
            return "status";
        case Verb::Down:
            return "down";
        case Verb::Run:
            return "run";
        default:
            return "?";
    }
}

// "M0D1 E p0": a router by its mesh port.
std::string router_label(const RouterPlacement& r) {
    if (!r.mesh)
        fabric::fail(ErrorCategory::Internal, "router chip {} eth {} has no mesh port", r.chip,
                     r.eth_channel);
    return fmt::format("{} {} p{}", r.mesh->node.str(), fabric::dir_letter(r.mesh->dir),
                       r.mesh->plane);
}

bool is_status(const RouterSnapshot& s, pf::RouterStatus st) {
    return s.block.status == static_cast<uint32_t>(st);
}

std::vector<MeshNode> all_nodes(const fabric::MeshGraph& g) {
    std::vector<MeshNode> out;
    for (const auto& m : g.meshes()) {
        for (uint32_t d = 0; d < m.device_count(); ++d) out.push_back({m.id, d});
    }
    return out;
}

// The plan checks each plane against what the mapping found; here only the list itself.
std::vector<uint32_t> parse_planes(const std::string& text) {
    const std::vector<uint32_t> planes = parse_number_list("--planes", text, "plane number");
    if (planes.empty())
        fabric::fail(ErrorCategory::BadInput, "--planes: give at least one routing plane, e.g. 0");
    std::set<uint32_t> seen;
    for (uint32_t p : planes) {
        if (!seen.insert(p).second)
            fabric::fail(ErrorCategory::BadInput, "--planes {}: plane {} is listed twice", text, p);
    }
    return planes;
}

// --slots S,R: sender and receiver slots per channel; empty = the plan chooses.
std::pair<uint32_t, uint32_t> parse_slots(const std::string& text) {
    if (text.empty()) return {0, 0};
    const std::vector<uint32_t> v = parse_number_list("--slots", text, "slot count");
    if (v.size() != 2)
        fabric::fail(ErrorCategory::BadInput, "--slots {}: expected SENDER,RECEIVER (e.g. 8,16)",
                     text);
    return {v[0], v[1]};
}

// The two routers of each link, each link once, in plan order of its first end.
struct LinkEnds {
    size_t a;
    size_t b;
};

std::vector<LinkEnds> plan_links(const fabric::FabricPlan& plan) {
    std::vector<LinkEnds> out;
    for (size_t i = 0; i < plan.routers.size(); ++i) {
        const auto& r = plan.routers[i];
        for (size_t j = i + 1; j < plan.routers.size(); ++j) {
            const auto& p = plan.routers[j];
            if (p.chip == r.config.peer_chip_id && p.eth_channel == r.config.peer_eth_channel)
                out.push_back({i, j});
        }
    }
    return out;
}

// up: both ends ready and each learned the other in the handshake; terminated: both ends are.
std::string link_state(const RouterSnapshot& a, const RouterSnapshot& b) {
    const auto running = [](const RouterSnapshot& s) {
        return !s.core_finished && (is_status(s, pf::RouterStatus::ReadyForTraffic) ||
                                    is_status(s, pf::RouterStatus::Draining));
    };
    const bool paired = a.block.peer_chip == b.chip && a.block.peer_channel == b.eth_channel &&
                        b.block.peer_chip == a.chip && b.block.peer_channel == a.eth_channel;
    if (running(a) && running(b) && paired) return "up";
    if (is_status(a, pf::RouterStatus::Terminated) && is_status(b, pf::RouterStatus::Terminated))
        return "terminated";
    return "down";
}

// `mesh run` sends every (source, destination, plane) flow through the fabric_traffic kernels
// mesh_traffic.h plans and runs. A kernel takes at most kFabricMaxDests flows and one router's
// ch0 one kernel at a time, so the flows of a router beyond those go in later rounds; each round
// lands on a sink core of its own, so every byte is checked after termination.
struct MeshRound {
    fabric::MeshTraffic traffic;
    fabric::MeshTrafficRun run;
};

// One kernel of a round, as the report shows it.
struct MeshWorker {
    uint32_t round = 0;
    const fabric::MeshTrafficWorker* kernel = nullptr;
    const RouterPlacement* router = nullptr;  // the one whose ch0 it sends through
    std::string name;                         // "worker chip 0 core 1-1 (E plane 0)"
};

struct Session;

class Command final : public CliCommand {
  public:
    Command(CLI::App& app, bool& as_json) : as_json_(as_json) {
        CLI::App& mesh = mesh_group(app);
        verbs_ = {
            {Verb::Up,
             mesh.add_subcommand(
                 "up", "Bring the 2D fabric up and summarize it (sim: then terminate it)")},
            {Verb::Status,
             mesh.add_subcommand("status",
                                 "Every router's status and every link's state (sim: brings "
                                 "the fabric up first, terminates it after)")},
            {Verb::Down,
             mesh.add_subcommand("down",
                                 "Terminate the 2D fabric gracefully and check every router "
                                 "(sim: brings it up first)")},
            {Verb::Run,
             mesh.add_subcommand("run",
                                 "Bring the 2D fabric up, send all-to-all traffic through it, "
                                 "check every byte, show what each router moved, terminate")},
        };
        for (auto& [verb, c] : verbs_) {
            mapping_.add_options(*c,
                                 "Mesh graph descriptor (MGD 2.0 .textproto or YAML; default: the "
                                 "largest mesh the cluster holds)");
            c->add_option("--cluster", cluster_,
                          "Cluster descriptor (tt-umd YAML): the chips and their links")
                ->required();
            c->add_option("--target", target_, "sim (the model of --cluster) or pcie (tt-kmd)")
                ->check(CLI::IsMember({"sim", "pcie"}))
                ->capture_default_str();
            c->add_option("--dir", dir_, "Device node directory (--target pcie)")
                ->capture_default_str();
            c->add_option("--soc", soc_, "SoC descriptor (default: the arch's)");
            c->add_option("--planes", planes_, "Routing planes to bring up, e.g. 0,1")
                ->capture_default_str();
            c->add_option(
                "--payload", payload_,
                "Slot payload bytes (multiple of 16; default 4352, or --bytes if larger)");
            c->add_option(
                "--slots", slots_,
                "Sender and receiver slots per channel, S,R (default: the most that fit)");
            add_max_cycles_option(
                *c, budget_,
                "Cycle budget for bring-up, traffic and termination together (default 50000000)");
            c->add_option("--stall-cycles", stall_cycles_,
                          "Health monitor: a router whose heartbeat stands still this many cycles "
                          "while it should run is stuck (default 1000000)")
                ->check(CLI::PositiveNumber);
            c->add_option("--router-elf", router_elf_,
                          "Router firmware (default: this build's fabric_router_2d.elf)");
            auto* base = c->add_option(
                "--base-fw", base_fw_,
                "Wormhole base firmware the model's router cores boot (default: this build's "
                "erisc_base.elf; --target sim)");
            c->add_flag("--no-base-fw", no_base_fw_,
                        "Start the model's routers bare metal (--target sim)")
                ->excludes(base);
            c->add_flag("--json", as_json_, "Print the result as JSON");
            c->add_flag("-q,--quiet", quiet_, "No verdict line on success");
        }
        CLI::App* run = verbs_.at(Verb::Run);
        run->add_option("--packets", packets_, "Packets to every destination, per plane")
            ->capture_default_str();
        add_bytes_option(*run, bytes_, "Bytes per packet (multiple of 16)")->capture_default_str();
        run->add_option("--worker-elf", worker_elf_,
                        "Traffic kernel (default: this build's fabric_traffic.elf)");
    }

    bool parsed() const override {
        return std::any_of(verbs_.begin(), verbs_.end(),
                           [](const auto& v) { return v.second->parsed(); });
    }

    int run() const override;

  private:
    // Bring up (or attach), run the verb, terminate as the target asks, report.
    int operate(Session& s, fabric::FabricRunner& runner) const;

    Verb verb() const {
        for (const auto& [v, c] : verbs_) {
            if (c->parsed()) return v;
        }
        fabric::fail(ErrorCategory::Internal, "no mesh fabric command was parsed");
    }

    bool& as_json_;
    std::map<Verb, CLI::App*> verbs_;
    MappingArgs mapping_;
    std::string cluster_;
    std::string target_ = "sim";
    std::string dir_ = fabric::kmd::kDeviceDir;
    std::string soc_;
    std::string planes_ = "0";
    uint32_t payload_ = 0;  // 0: default
    std::string slots_;
    uint64_t budget_ = kDefaultFabricMaxCycles;
    uint64_t stall_cycles_ = 0;  // 0: the runner's default
    std::string router_elf_;
    std::string base_fw_;
    bool no_base_fw_ = false;
    bool quiet_ = false;
    uint32_t packets_ = 16;
    uint32_t bytes_ = 1024;
    std::string worker_elf_;
};

// Everything one invocation plans, runs and reports.
struct Session {
    Verb verb = Verb::Up;
    bool pcie = false;
    std::string graph_path, cluster_path, soc_path, router_path, worker_path;
    std::string derived;  // how the mesh was chosen when no --mesh-graph was given
    std::optional<std::string> base_fw_path;
    std::optional<fabric::MeshPlan> plan;
    std::unique_ptr<fabric::Device> dev;
    std::optional<fabric::ElfImage> worker_elf;
    uint64_t budget = 0;
    uint32_t packets = 0, bytes = 0;

    // results
    std::vector<RouterSnapshot> live;   // while the fabric runs (status, and up on pcie)
    std::vector<RouterSnapshot> final;  // after termination
    bool brought_up = false;
    bool terminated = false;
    double bring_up_wall_seconds = 0;
    std::vector<MeshRound> rounds;
    std::vector<MeshWorker> workers;       // every round's, in order
    std::vector<TrafficOutcome> outcomes;  // beside `workers`
    uint32_t slots = 0;                    // positions per flow region
    uint64_t traffic_cycles = 0, send_cycles = 0, deliveries = 0, mismatch_words = 0;
    std::vector<std::string> problems;
    fabric::ProgressLine* progress = nullptr;  // on a terminal only
};

void show_stage(const Session& s, const char* stage) {
    if (s.progress) s.progress->stage(stage);
}

// ---- the traffic of `mesh run` ------------------------------------------------------------------

void plan_traffic(Session& s, const fabric::SocDescriptor& soc,
                  const fabric::ClusterDescriptor& cluster) {
    const fabric::HarvestedSocs socs(soc, cluster);  // no worker on a harvested row or column
    const fabric::MeshPlan& plan = *s.plan;
    const std::vector<MeshNode> nodes = all_nodes(plan.tables.graph());
    std::vector<fabric::MeshFlow> all;
    for (const MeshNode& src : nodes) {
        for (uint32_t plane : plan.planes) {
            for (const MeshNode& dst : nodes) {
                if (dst == src) continue;
                all.push_back({src, dst, plane});
                s.deliveries += s.packets;
            }
        }
    }
    const std::vector<std::vector<fabric::MeshFlow>> flows = fabric::mesh_traffic_rounds(plan, all);
    // Flows of the busiest kernel: the first round has the most through every router.
    std::map<const RouterPlacement*, uint32_t> through;
    uint32_t most = 0;
    if (!flows.empty()) {
        for (const fabric::MeshFlow& f : flows[0])
            most = std::max(most, ++through[plan.send(f.src, f.dst, f.plane).router]);
    }
    if (flows.empty()) {
        fabric::fail(ErrorCategory::BadInput, "{}: one device, nothing to send to", s.graph_path);
    }
    // Positions per flow: the kernel's source buffer holds them for each of its flows.
    const hal::Arch arch = plan.fabric.arch;
    const uint64_t src_bytes = fabric::mesh_worker_source_bytes(arch);
    s.slots = static_cast<uint32_t>(
        std::min<uint64_t>({s.packets, kMeshRunSlots, src_bytes / (uint64_t{most} * s.bytes)}));
    if (s.slots == 0) {
        fabric::fail(
            ErrorCategory::BadInput,
            "--bytes {}: {} flows x {} B do not fit a traffic kernel's source buffer ({} B)",
            s.bytes, most, s.bytes, src_bytes);
    }
    for (fabric::ChipId chip : plan.fabric.chips) {
        const size_t sinks = socs(chip).cores(fabric::CoreType::Worker).size();
        if (fabric::kMeshSinkCoreIndex + flows.size() > sinks) {
            fabric::fail(ErrorCategory::BadInput,
                         "mesh run needs {} rounds (a router with {} flows), one sink core each "
                         "from worker core {}; chip {} has {} worker cores ({})",
                         flows.size(), (flows.size() - 1) * protocol::kFabricMaxDests + 1,
                         fabric::kMeshSinkCoreIndex, chip, sinks, soc.source());
        }
    }
    for (size_t r = 0; r < flows.size(); ++r) {
        fabric::MeshTrafficOptions o;
        o.packets = s.packets;
        o.packet_bytes = s.bytes;
        o.slots = s.slots;
        o.sink_core_index = fabric::kMeshSinkCoreIndex + static_cast<uint32_t>(r);
        o.timeout_us = fabric::traffic_timeout_us(s.budget, arch);
        s.rounds.push_back(
            {fabric::plan_mesh_traffic(plan, std::cref(socs), *s.worker_elf, flows[r], o), {}});
    }
    for (size_t r = 0; r < s.rounds.size(); ++r) {
        const fabric::MeshTraffic& t = s.rounds[r].traffic;
        for (const auto& k : t.workers) {
            const fabric::MeshFlow& f = t.flows[k.flows.front()];
            const RouterPlacement* router = plan.send(f.src, f.dst, f.plane).router;
            s.workers.push_back({static_cast<uint32_t>(r), &k, router,
                                 fmt::format("worker {} ({} plane {})", k.target.core.str(),
                                             fabric::dir_letter(router->mesh->dir), f.plane)});
        }
    }
}

void run_traffic(Session& s, fabric::FabricRunner& runner) {
    for (MeshRound& round : s.rounds) {
        if (!s.problems.empty()) break;
        fabric::LaunchOptions lo;
        lo.max_cycles = s.dev->cycles() >= s.budget ? 1 : s.budget - s.dev->cycles();
        lo.poll_cycles = 1'000;
        round.run = fabric::run_mesh_traffic(runner, round.traffic, lo);
        uint64_t send = 0;
        for (const auto& o : round.run.workers) {
            s.outcomes.push_back(o);
            send = std::max<uint64_t>(send, o.results.cycles);
            const MeshWorker& w = s.workers[s.outcomes.size() - 1];
            if (auto p = fabric::traffic_problem(w.name, s.outcomes.back(),
                                                 w.kernel->args.packet_count)) {
                s.problems.push_back(std::move(*p));
            }
        }
        s.traffic_cycles += round.run.cycles;
        s.send_cycles += send;
    }
    if (s.problems.empty()) {
        runner.check_running();
        runner.check_health();
    }
}

// After termination: every flow's region, byte for byte, and the routers' counters.
void check_traffic(Session& s) {
    for (const MeshRound& round : s.rounds) {
        const std::vector<uint32_t> bad = fabric::check_mesh_landed(*s.dev, round.traffic);
        for (size_t k = 0; k < bad.size(); ++k) {
            if (bad[k] == 0) continue;
            const fabric::MeshFlow& f = round.traffic.flows[k];
            s.mismatch_words += bad[k];
            s.problems.push_back(fmt::format("data from {} to {} on plane {}: {} words differ",
                                             f.src.str(), f.dst.str(), f.plane, bad[k]));
        }
    }
    fabric::check_router_counters(s.final, s.deliveries, s.problems);
}

// ---- the report --------------------------------------------------------------------------------

uint64_t total_bytes_sent(const std::vector<RouterSnapshot>& snaps, uint32_t packet_bytes) {
    uint64_t b = 0;
    for (const auto& r : snaps) b += r.sent() * packet_bytes;
    return b;
}

// "plane 0: 20, plane 1: 20"
std::string routers_per_plane(const fabric::MeshPlan& plan) {
    std::string out;
    for (uint32_t p : plan.planes) {
        const auto n =
            std::count_if(plan.fabric.routers.begin(), plan.fabric.routers.end(),
                          [&](const RouterPlacement& r) { return r.mesh && r.mesh->plane == p; });
        out += fmt::format("{}plane {}: {}", out.empty() ? "" : ", ", p, n);
    }
    return out;
}

std::vector<fabric::ChipId> mesh_chips(const fabric::MeshPlan& plan, const fabric::MeshSpec& m) {
    std::vector<fabric::ChipId> chips;
    for (uint32_t d = 0; d < m.device_count(); ++d) chips.push_back(plan.chip_of({m.id, d}));
    return chips;
}

void print_summary(const Session& s) {
    const fabric::MeshPlan& plan = *s.plan;
    const auto& g = plan.tables.graph();
    const auto& r0 = plan.fabric.routers.front().config;
    if (!s.derived.empty()) fmt::print("{}\n", s.derived);
    fmt::print("mesh graph {}: {}, topology {}, planes {}\n", g.source(),
               fabric::arch_name(plan.fabric.arch),
               plan.fabric.topology == pf::Topology::Torus ? "torus" : "mesh",
               fmt::join(plan.planes, ","));
    for (const auto& m : g.meshes()) {
        fmt::print("  mesh {}: {}x{} devices on chips {}\n", m.id, m.rows, m.cols,
                   fmt::join(mesh_chips(plan, m), ","));
    }
    fmt::print("routers: {} on {} chips ({}); payload {} B, slots {} sender / {} receiver\n",
               plan.fabric.routers.size(), plan.fabric.chips.size(), routers_per_plane(plan),
               r0.payload_bytes, r0.sender_slots[0], r0.receiver_slots[0]);
}

void print_routers(const Session& s, const std::vector<RouterSnapshot>& snaps, bool traffic) {
    const auto& routers = s.plan->fabric.routers;
    const std::string head = fmt::format("{:<12} {:>4} {:>3} {:<5} {:<6} {:<18}", "router", "chip",
                                         "eth", "core", "peer", "status");
    if (traffic) {
        fmt::print("{} {:>8} {:>8} {:>9} {:>9} {:>11} {:>8}\n", head, "sent", "received",
                   "delivered", "forwarded", "bytes sent", "B/cycle");
    } else {
        fmt::print("{} {:<18} {:>9} {:>8} {:>8}\n", head, "stage", "heartbeat", "sent", "received");
    }
    for (size_t i = 0; i < snaps.size(); ++i) {
        const RouterSnapshot& r = snaps[i];
        const RouterPlacement& p = routers[i];
        const std::string row =
            fmt::format("{:<12} {:>4} {:>3} {:<5} {:<6} {:<18}", router_label(p), r.chip,
                        r.eth_channel, r.core.core.str(),
                        fmt::format("{}:{}", p.config.peer_chip_id, p.config.peer_eth_channel),
                        r.status_name());
        if (traffic) {
            const uint64_t b = r.sent() * s.bytes;
            fmt::print("{} {:>8} {:>8} {:>9} {:>9} {:>11} {:>8.3f}\n", row, r.sent(), r.received(),
                       r.block.delivered, r.block.forwarded, b, bytes_per_cycle(b, s.send_cycles));
        } else {
            fmt::print("{} {:<18} {:>9} {:>8} {:>8}\n", row, r.stage_name(), r.block.heartbeat,
                       r.sent(), r.received());
        }
    }
}

void print_links(const Session& s, const std::vector<RouterSnapshot>& snaps) {
    const auto& routers = s.plan->fabric.routers;
    fmt::print("{:<27} {:<11} {}\n", "link", "state", "ends");
    for (const auto& l : plan_links(s.plan->fabric)) {
        const auto &a = snaps[l.a], &b = snaps[l.b];
        fmt::print("{:<27} {:<11} chip {} eth {} <-> chip {} eth {}{}\n",
                   fmt::format("{} <-> {}", router_label(routers[l.a]), router_label(routers[l.b])),
                   link_state(a, b), a.chip, a.eth_channel, b.chip, b.eth_channel,
                   routers[l.a].mesh->inter_mesh ? " (inter-mesh)" : "");
    }
}

json links_json(const Session& s, const std::vector<RouterSnapshot>& snaps) {
    const auto& routers = s.plan->fabric.routers;
    const auto end = [&](size_t i) {
        const auto& m = *routers[i].mesh;
        return json{{"chip", routers[i].chip},
                    {"eth_channel", routers[i].eth_channel},
                    {"mesh", m.node.mesh},
                    {"device", m.node.device},
                    {"dir", std::string(1, fabric::dir_letter(m.dir))}};
    };
    json out = json::array();
    for (const auto& l : plan_links(s.plan->fabric)) {
        out.push_back({{"a", end(l.a)},
                       {"b", end(l.b)},
                       {"plane", routers[l.a].mesh->plane},
                       {"inter_mesh", routers[l.a].mesh->inter_mesh},
                       {"state", link_state(snaps[l.a], snaps[l.b])}});
    }
    return out;
}

// Meshes of single chips have no link, so no router: nothing to bring up, status or terminate
// (a fabric on a one-device mesh must not wait for a peer that does not exist).
int report_no_links(const Session& s, bool as_json) {
    const auto& g = s.plan->tables.graph();
    const std::string verdict =
        fmt::format("mesh {}: {} mesh{}, {} chip{}, no links between devices: no router to run",
                    verb_name(s.verb), g.mesh_count(), g.mesh_count() == 1 ? "" : "es",
                    s.plan->fabric.chips.size(), s.plan->fabric.chips.size() == 1 ? "" : "s");
    if (as_json) {
        print_json(json{{"ok", true},
                        {"command", verb_name(s.verb)},
                        {"mesh_graph", s.graph_path},
                        {"cluster", s.cluster_path},
                        {"chips", s.plan->fabric.chips},
                        {"routers", json::array()},
                        {"verdict", verdict},
                        {"exit_code", kOk}});
    } else if (!s.derived.empty()) {
        fmt::print("{}\n", s.derived);
    }
    log_line(verdict);
    return kOk;
}

int report(const Session& s, bool as_json, bool quiet, const fabric::FabricRunner* runner) {
    if (s.progress) s.progress->finish();
    const fabric::MeshPlan& plan = *s.plan;
    const auto& g = plan.tables.graph();
    const bool ok = s.problems.empty();
    const int code = verdict_exit_code(s.problems, s.outcomes);
    const uint32_t fig_bytes =
        s.verb == Verb::Run ? s.bytes : plan.fabric.routers.front().config.payload_bytes;
    const std::vector<RouterSnapshot>& shown =
        s.final.empty() || s.verb == Verb::Status ? s.live : s.final;
    const uint64_t handshake = runner ? runner->handshake_cycles() : 0,
                   ready = runner ? runner->ready_cycles() : 0;
    const std::string what = fmt::format("{} mesh{}, {} chips, {} routers ({})", g.mesh_count(),
                                         g.mesh_count() == 1 ? "" : "es", plan.fabric.chips.size(),
                                         plan.fabric.routers.size(), routers_per_plane(plan));
    const std::string ending = s.terminated ? "terminated gracefully"
                               : s.pcie     ? "routers left running on the chips"
                                            : "not terminated";
    std::string verdict;
    if (!ok) {
        std::string all;
        for (const auto& p : s.problems) all += (all.empty() ? "" : "; ") + p;
        verdict = fmt::format("mesh {} failed: {}", verb_name(s.verb), all);
    } else if (s.verb == Verb::Run) {
        verdict = fmt::format(
            "mesh run passed: {}; {} worker(s) in {} round(s), {} packets of {} B to every other "
            "device per plane, {} deliveries checked; bring-up {} cycles, traffic {} cycles "
            "(sending {}), {:.3f} B/cycle over all links while sending; {}",
            what, s.workers.size(), s.rounds.size(), s.packets, s.bytes, s.deliveries, ready,
            s.traffic_cycles, s.send_cycles,
            bytes_per_cycle(total_bytes_sent(s.final, s.bytes), s.send_cycles), ending);
    } else if (s.brought_up) {
        verdict = fmt::format("mesh {}: {}: handshake {} cycles, ready {} cycles; {}",
                              verb_name(s.verb), what, handshake, ready, ending);
    } else {  // pcie status: read, not brought up here
        verdict =
            fmt::format("mesh {}: {}: read from the running routers", verb_name(s.verb), what);
    }

    if (as_json) {
        json routers = json::array();
        for (size_t i = 0; i < shown.size(); ++i) {
            json r = router_json(shown[i], plan.fabric.routers[i], fig_bytes, s.send_cycles);
            r["final_status"] = s.final.empty() ? json(nullptr) : json(s.final[i].status_name());
            routers.push_back(std::move(r));
        }
        json meshes = json::array();
        for (const auto& m : g.meshes()) {
            meshes.push_back(
                {{"id", m.id}, {"rows", m.rows}, {"cols", m.cols}, {"chips", mesh_chips(plan, m)}});
        }
        json per_plane = json::array();
        for (uint32_t p : plan.planes) {
            per_plane.push_back(
                {{"plane", p},
                 {"routers", std::count_if(plan.fabric.routers.begin(), plan.fabric.routers.end(),
                                           [&](const RouterPlacement& r) {
                                               return r.mesh && r.mesh->plane == p;
                                           })}});
        }
        const auto& r0 = plan.fabric.routers.front().config;
        json j{{"ok", ok},
               {"command", verb_name(s.verb)},
               {"target", s.pcie ? "pcie" : "sim"},
               {"arch", fabric::arch_name(plan.fabric.arch)},
               {"mesh_graph", s.graph_path},
               {"derived", !s.derived.empty()},
               {"cluster", s.cluster_path},
               {"soc", s.soc_path},
               {"base_firmware", s.base_fw_path ? json(*s.base_fw_path) : json(nullptr)},
               {"router_firmware", s.router_path},
               {"topology", plan.fabric.topology == pf::Topology::Torus ? "torus" : "mesh"},
               {"planes", plan.planes},
               {"meshes", meshes},
               {"chips", plan.fabric.chips},
               {"routers_per_plane", per_plane},
               {"payload_bytes", r0.payload_bytes},
               {"sender_slots", r0.sender_slots[0]},
               {"receiver_slots", r0.receiver_slots[0]},
               {"brought_up", s.brought_up},
               {"handshake_cycles", handshake},
               {"ready_cycles", ready},
               {"bring_up_wall_seconds", s.bring_up_wall_seconds},
               {"terminated", s.terminated},
               {"routers", routers},
               {"links", links_json(s, shown)},
               {"device_cycles", s.dev->cycles()},
               {"timeout_cycles", s.budget},
               {"stall_cycles", runner ? json(runner->stall_cycles()) : json(nullptr)},
               {"verdict", verdict},
               {"problems", s.problems},
               {"exit_code", code}};
        if (s.verb == Verb::Run) {
            json workers = json::array();
            for (size_t i = 0; i < s.workers.size(); ++i) {
                const MeshWorker& w = s.workers[i];
                const fabric::MeshTraffic& t = s.rounds[w.round].traffic;
                const MeshNode src = t.flows[w.kernel->flows.front()].src;
                json dests = json::array();
                for (size_t k : w.kernel->flows) {
                    const fabric::MeshFlow& f = t.flows[k];
                    dests.push_back({{"mesh", f.dst.mesh},
                                     {"device", f.dst.device},
                                     {"chip", plan.chip_of(f.dst)},
                                     {"hops", plan.send(f.src, f.dst, f.plane).hops}});
                }
                json wj{{"chip", w.kernel->target.core.chip},
                        {"core", w.kernel->target.core.core.str()},
                        {"mesh", src.mesh},
                        {"device", src.device},
                        {"dir", std::string(1, fabric::dir_letter(w.router->mesh->dir))},
                        {"plane", w.router->mesh->plane},
                        {"round", w.round},
                        {"router_eth_channel", w.router->eth_channel},
                        {"dests", dests},
                        {"outcome", "not_run"}};
                if (i < s.outcomes.size()) {  // later rounds do not run after a failure
                    const TrafficOutcome& o = s.outcomes[i];
                    wj["outcome"] = fabric::outcome_name(o.launch.outcome);
                    wj["exit_status"] = o.launch.status.exit_status;
                    wj["packets_sent"] = o.results.packets_sent;
                    wj["send_cycles"] = o.results.cycles;
                    wj["close_cycles"] = o.results.close_cycles;
                    wj["cycles"] = o.launch.cycles;
                }
                workers.push_back(std::move(wj));
            }
            j["worker_firmware"] = s.worker_path;
            j["packets"] = s.packets;
            j["bytes"] = s.bytes;
            j["slots"] = s.slots;
            j["rounds"] = s.rounds.size();
            j["workers"] = workers;
            j["traffic_cycles"] = s.traffic_cycles;
            j["send_cycles"] = s.send_cycles;
            j["deliveries"] = s.deliveries;
            j["data_mismatch_words"] = s.mismatch_words;
            j["bytes_per_cycle"] =
                bytes_per_cycle(total_bytes_sent(s.final, s.bytes), s.send_cycles);
        }
        print_json(j);
    } else {
        print_summary(s);
        if (s.brought_up) {
            fmt::print("bring-up: handshake {} cycles, ready {} cycles ({:.2f} s wall)\n",
                       handshake, ready, s.bring_up_wall_seconds);
        }
        if (s.verb == Verb::Status) {
            fmt::print("\n");
            print_routers(s, s.live, false);
            fmt::print("\n");
            print_links(s, s.live);
        } else if (s.verb == Verb::Down) {
            fmt::print("\n");
            print_routers(s, shown, false);
        } else if (s.verb == Verb::Run && !shown.empty()) {
            fmt::print("\n");
            print_routers(s, shown, true);
            fmt::print("\n");
            for (size_t i = 0; i < s.outcomes.size(); ++i) {
                const MeshWorker& w = s.workers[i];
                const fabric::MeshTraffic& t = s.rounds[w.round].traffic;
                const TrafficOutcome& o = s.outcomes[i];
                std::vector<std::string> dsts;
                for (size_t k : w.kernel->flows) dsts.push_back(t.flows[k].dst.str());
                fmt::print("{} {} -> {}: {} packets, {} cycles (send {}), {}\n", w.name,
                           t.flows[w.kernel->flows.front()].src.str(), fmt::join(dsts, ","),
                           o.results.packets_sent, o.launch.cycles, o.results.cycles,
                           fabric::outcome_name(o.launch.outcome));
            }
        }
        if (s.terminated) {
            const auto n = std::count_if(
                s.final.begin(), s.final.end(),
                [](const RouterSnapshot& r) { return is_status(r, pf::RouterStatus::Terminated); });
            fmt::print("{}terminated gracefully: {} of {} routers terminated\n",
                       s.verb == Verb::Up ? "" : "\n", n, s.final.size());
        }
        flush_stdout();
    }
    if (!ok || !quiet) log_line(verdict);
    return code;
}

int Command::run() const {
    Session s;
    s.verb = verb();
    s.pcie = target_ == "pcie";
    s.cluster_path = cluster_;
    s.budget = budget_;
    s.packets = packets_;
    s.bytes = bytes_;
    const auto cluster = fabric::ClusterDescriptor::load_file(cluster_);
    const fabric::MeshGraph graph = mapping_.graph_for(cluster);
    s.graph_path = graph.source();
    if (mapping_.derived()) s.derived = derived_note(graph, cluster);
    const hal::Arch arch = graph.chip_spec().arch;

    fabric::MeshFabricOptions mo;
    mo.planes = parse_planes(planes_);
    std::tie(mo.sender_slots, mo.receiver_slots) = parse_slots(slots_);
    const uint32_t max_payload = pf::max_payload_bytes(hal::arch_map(arch));
    if (s.verb == Verb::Run) {
        if (bytes_ == 0 || bytes_ % 16 != 0 || bytes_ > max_payload) {
            fabric::fail(ErrorCategory::BadInput,
                         "--bytes {}: must be a non-zero multiple of 16 and at most {} on {}",
                         bytes_, max_payload, fabric::arch_name(arch));
        }
        if (packets_ == 0 || packets_ > kMaxPackets) {
            fabric::fail(ErrorCategory::BadInput, "--packets {}: must be 1..{}", packets_,
                         kMaxPackets);
        }
    }
    if (payload_ != 0 && (payload_ % 16 != 0 || payload_ > max_payload)) {
        fabric::fail(ErrorCategory::BadInput,
                     "--payload {}: must be a multiple of 16 and at most {} on {}", payload_,
                     max_payload, fabric::arch_name(arch));
    }
    if (s.verb == Verb::Run && payload_ != 0 && bytes_ > payload_) {
        fabric::fail(ErrorCategory::BadInput, "--bytes {} is more than the slot --payload {}",
                     bytes_, payload_);
    }
    mo.payload_bytes = payload_ != 0         ? payload_
                       : s.verb == Verb::Run ? std::max(pf::kDefaultPayloadBytes, bytes_)
                                             : pf::kDefaultPayloadBytes;

    // ---- the device: the model of --cluster, or the chips behind tt-kmd ----
    if (s.pcie && (!base_fw_.empty() || no_base_fw_)) {
        fabric::fail(ErrorCategory::BadInput,
                     "--base-fw / --no-base-fw describe the model: use them with --target sim");
    }
    if (s.pcie) s.dev = open_pcie_device(dir_, soc_);
    if (s.pcie && s.dev->soc(0).arch() != arch) {
        fabric::fail(ErrorCategory::BadInput, "{} describes {} chips but {} is {}", s.graph_path,
                     fabric::arch_name(arch), s.dev->description(),
                     fabric::arch_name(s.dev->soc(0).arch()));
    }
    fabric::SocDescriptor soc = s.pcie ? s.dev->soc(0) : load_soc_for(arch, soc_);
    s.soc_path = soc.source();
    s.plan = fabric::plan_mesh(graph, cluster, soc, mo, mapping_.map_options());
    if (s.plan->fabric.routers.empty() && s.verb != Verb::Run) return report_no_links(s, as_json_);

    // ---- images, checked before the model is built ----
    const hal::ArchMap& am = hal::arch_map(arch);
    s.router_path = firmware_path(router_elf_, arch, "fabric_router_2d", "--router-elf");
    auto router_elf = fabric::ElfImage::load_file(s.router_path);
    for (const auto& r : s.plan->fabric.routers) {
        router_elf.check_placement(fabric::router_placement(r, am, soc.eth_l1_size()));
    }
    if (s.verb == Verb::Run) {
        auto worker_rules = fabric::erisc_placement(am, soc.worker_l1_size());
        worker_rules.target = fmt::format("{} worker core", fabric::arch_name(arch));
        s.worker_path = firmware_path(worker_elf_, arch, "fabric_traffic", "--worker-elf");
        s.worker_elf = fabric::ElfImage::load_file(s.worker_path);
        s.worker_elf->check_placement(worker_rules);
        plan_traffic(s, soc, cluster);
    }
    if (!s.pcie) {
#ifndef FABRIC_HAVE_SIM
        fabric::fail(ErrorCategory::Unsupported,
                     "this fabricctl was built without the simulator (sim_model): --target sim is "
                     "unavailable");
#else
        const std::optional<BaseFirmware> base_fw =
            choose_base_firmware(base_fw_, !no_base_fw_, arch);
        fabric::SimDeviceOptions o;
        o.cluster = cluster;
        o.modeled_chips = s.plan->fabric.chips;  // the chips the mesh uses, not the whole cluster
        if (base_fw) {
            s.base_fw_path = base_fw->path;
            o.wh_base_firmware = base_fw->image;
        }
        s.dev = std::make_unique<fabric::SimDevice>(std::move(soc), arch, std::move(o));
#endif
    }
    s.dev = std::make_unique<fabric::InterruptibleDevice>(std::move(s.dev));
    fabric::FabricRunner runner(*s.dev, s.plan->fabric, std::move(router_elf));
    if (stall_cycles_) runner.set_stall_cycles(stall_cycles_);
    const auto progress = progress_on_terminal(fmt::format("mesh {}", verb_name(s.verb)));
    if (progress) {
        s.progress = progress.get();
        progress->set_expected(s.deliveries);
        progress->set_delivered_counter([&runner] { return fabric::delivered_so_far(runner); });
        static_cast<fabric::InterruptibleDevice&>(*s.dev).after_each_slice(
            [p = progress.get()](uint64_t cycles) { p->tick(cycles); });
    }
    if (!s.pcie) return operate(s, runner);
    // On silicon the routers outlive the process: an interrupted command stops what it started.
    try {
        return operate(s, runner);
    } catch (const fabric::Interrupted& e) {
        if (progress) progress->finish();
        if (const std::string done = fabric::terminate_after_interrupt(runner, e, s.budget);
            !done.empty()) {
            log_line(done);
        }
        throw;
    }
}

int Command::operate(Session& s, fabric::FabricRunner& runner) const {
    const auto left = [&]() -> uint64_t {
        return s.dev->cycles() >= s.budget ? 1 : s.budget - s.dev->cycles();
    };
    // ---- on silicon the fabric outlives the command: status reads it, down stops it ----
    if (s.pcie && s.verb == Verb::Status) {
        s.live = runner.status();
        return report(s, as_json_, quiet_, nullptr);
    }
    if (s.pcie && s.verb == Verb::Down) {
        // The routers an earlier `mesh up` left running: take them over (checked against this
        // plan), then terminate them below.
        runner.attach();
        s.brought_up = true;
        s.live = runner.status();
    } else {
        // ---- bring up ----
        const auto t0 = std::chrono::steady_clock::now();
        show_stage(s, "bring-up");
        runner.bring_up(s.budget);
        s.bring_up_wall_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        s.brought_up = true;
        runner.check_health();
        // Let the routers turn their main loops under the health monitor first, so the heartbeats
        // `status` shows have moved.
        if (s.verb == Verb::Status) runner.monitor(std::min(kStatusWatchCycles, left()));
        s.live = runner.status();
        if (s.verb == Verb::Run) {
            show_stage(s, "traffic");
            run_traffic(s, runner);
        }
        if (s.pcie && s.verb == Verb::Up) return report(s, as_json_, quiet_, &runner);
    }

    // ---- terminate (the model ends with the command; on silicon `run` stops what it started) ----
    show_stage(s, "termination");
    s.final = fabric::terminate_fabric(runner, left(), s.problems);
    s.terminated = s.problems.empty();  // graceful: then every router must say so
    const bool graceful = s.terminated;
    for (size_t i = 0; graceful && i < s.final.size(); ++i) {
        if (!is_status(s.final[i], pf::RouterStatus::Terminated) || !s.final[i].core_finished) {
            s.problems.push_back(fmt::format("router {} did not terminate: {}",
                                             router_label(s.plan->fabric.routers[i]),
                                             s.final[i].describe()));
            s.terminated = false;
        }
    }
    if (s.verb == Verb::Run && s.problems.empty()) check_traffic(s);
    return report(s, as_json_, quiet_, &runner);
}

}  // namespace

CliCommands add_mesh_fabric_commands(CLI::App& app, bool& as_json) {
    return {std::make_shared<Command>(app, as_json)};
}

}  // namespace fabricctl
