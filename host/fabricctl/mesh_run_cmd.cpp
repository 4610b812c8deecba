#include "mesh_run_cmd.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabric/error.h"
#include "fabric/launch.h"
#include "fabric/mesh_traffic.h"
#include "fabric/traffic_verdict.h"
#include "fault_option.h"
#include "mesh_control.h"
#include "mesh_session.h"
#include "packet_trace_option.h"
#include "protocol/fabric.h"
#include "protocol/test_kernels.h"
#include "traffic_record.h"

namespace fabricctl {

namespace {

namespace pf = protocol::fabric;
using fabric::ErrorCategory;
using fabric::MeshNode;
using fabric::RouterPlacement;
using nlohmann::json;

// How long the fabric runs after the traffic before --page reads it: a few poll intervals, so
// every router has published its final counters.
constexpr uint64_t kPageSettleCycles = 10 * fabric::kFabricPollCycles;

// Positions per flow region (fewer when the kernels' source buffers need it).
constexpr uint64_t kMeshRunSlots = 4;

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

// The traffic of one run: its rounds and kernels, planned, and what they did.
struct MeshRunTraffic {
    std::vector<MeshRound> rounds;
    std::vector<MeshWorker> workers;       // every round's, in order
    std::vector<TrafficOutcome> outcomes;  // beside `workers`, as far as they ran
    uint32_t slots = 0;                    // positions per flow region
    uint64_t deliveries = 0;
    uint64_t traffic_cycles = 0, send_cycles = 0, mismatch_words = 0;
    fabric::TrafficAccount account;  // per flow of the rounds that ran (check_traffic)
};

std::vector<MeshNode> all_nodes(const fabric::MeshGraph& g) {
    std::vector<MeshNode> out;
    for (const auto& m : g.meshes()) {
        for (uint32_t d = 0; d < m.device_count(); ++d) out.push_back({m.id, d});
    }
    return out;
}

uint64_t total_bytes_sent(const std::vector<fabric::RouterSnapshot>& snaps, uint32_t packet_bytes) {
    uint64_t b = 0;
    for (const auto& r : snaps) b += r.sent() * packet_bytes;
    return b;
}

// One `mesh run` over the fabric of `args` with the traffic of `run` (and, for `mesh
// pause|drain|resume`, the control applied during it): what `mesh run`, the control verbs and
// `mesh replay` share. With `expect`, the run's account must equal the recorded one.
class MeshTrafficRun {
  public:
    MeshTrafficRun(const MeshFabricArgs& args, const MeshRunArgs& run, std::string verb,
                   bool as_json, const std::optional<ControlArgs>& control = std::nullopt,
                   const TrafficRecord* expect = nullptr)
        : args_(args),
          run_(run),
          verb_(std::move(verb)),
          as_json_(as_json),
          control_(control),
          expect_(expect) {}

    int run() const {
        MeshSession s(args_, verb_, as_json_);
        if (control_ && s.pcie()) return run_control_on_pcie(s, control_->verb);
        run_.faults.refuse_on_pcie(s.pcie());
        std::vector<fabric::FaultSpec> faults = run_.faults.parse();
        fabric::MeshFabricOptions mo = s.fabric_options();
        check_traffic_options(run_.bytes, run_.packets, s.arch());
        mo.payload_bytes = s.payload_bytes(std::max(pf::kDefaultPayloadBytes, run_.bytes));
        if (args_.payload != 0 && run_.bytes > args_.payload) {
            fabric::fail(ErrorCategory::BadInput, "--bytes {} is more than the slot --payload {}",
                         run_.bytes, args_.payload);
        }
        s.plan_fabric(mo);
        s.load_router_image();
        const TrafficKernel kernel = load_traffic_kernel(run_.worker_elf, s.soc());
        MeshRunTraffic traffic = plan_traffic(s, kernel.image);

        s.open_device(traffic.deliveries);
        const auto trace = PacketTraceFile::start(run_.trace, s.plan().fabric, s.device());
        const RunFaults armed(std::move(faults), run_.faults.seed, s.device(), s.runner(),
                              s.event_log());
        // `mesh drain`: a link that dies is drained at both ends too (and resolved after).
        const bool draining = control_ && control_->verb == pf::RouterControl::Drain;
        LinkDownArgs link_down = run_.link_down;
        if (draining) link_down.reaction = "drain";
        apply_link_down(s.runner(), link_down, s.cluster());
        std::optional<ControlSchedule> control;
        if (control_) control.emplace(*control_, s.device(), s.runner());
        held_ = control ? &control->held() : nullptr;
        return s.run_interruptible([&] {
            s.bring_up();
            s.read_live();
            s.show_stage("traffic");
            run_traffic(s, traffic);
            fabric::resolve_link_down_drains(s.runner(), s.drops(), s.cycles_left());
            if (!run_.page.empty()) {
                // The routers publish their counters once idle for a few passes.
                s.runner().monitor(std::min(kPageSettleCycles, s.cycles_left()));
                write_page(s, run_.page);
            }
            s.terminate();
            if (trace) trace->write();
            fabric::resolve_unacked_after_termination(s.runner(), s.drops(), s.final_snapshots());
            armed.log_effects();
            check_traffic(s, traffic);  // what landed, also after a failure
            if (expect_) {
                replay_differences_ = record_differences(*expect_, traffic.account);
                // The replay's own question first: did it give what was recorded.
                s.problems.insert(s.problems.begin(), replay_differences_.begin(),
                                  replay_differences_.end());
            }
            if (!run_.record.empty()) {
                write_traffic_record(run_.record, record_of(args_, run_, traffic.account));
            }
            return report(s, traffic, kernel.path, armed);
        });
    }

  private:
    // Every flow from each device to every other one on every plane, in rounds of kernels.
    MeshRunTraffic plan_traffic(const MeshSession& s, const fabric::ElfImage& elf) const {
        const fabric::HarvestedSocs socs(s.soc(), s.cluster());  // no worker on a harvested row
        const fabric::MeshPlan& plan = s.plan();
        MeshRunTraffic t;
        const std::vector<MeshNode> nodes = all_nodes(plan.tables.graph());
        std::vector<fabric::MeshFlow> all;
        for (const MeshNode& src : nodes) {
            for (uint32_t plane : plan.planes) {
                for (const MeshNode& dst : nodes) {
                    if (dst == src) continue;
                    all.push_back({src, dst, plane});
                    t.deliveries += run_.packets;
                }
            }
        }
        const std::vector<std::vector<fabric::MeshFlow>> flows =
            fabric::mesh_traffic_rounds(plan, all);
        if (flows.empty()) {
            fabric::fail(ErrorCategory::BadInput, "{}: one device, nothing to send to",
                         s.graph_path());
        }
        t.slots = flow_slots(s, flows.front());
        check_sink_cores(s, socs, flows.size());
        uint32_t first_flow_id = 0;
        for (size_t r = 0; r < flows.size(); ++r) {
            fabric::MeshTrafficOptions o;
            o.count_deliveries = true;
            o.send_type = send_type_of(run_.send_type);
            o.first_flow_id = first_flow_id;
            first_flow_id += static_cast<uint32_t>(flows[r].size());
            o.packets = run_.packets;
            o.packet_bytes = run_.bytes;
            o.slots = t.slots;
            o.sink_core_index = fabric::kMeshSinkCoreIndex + static_cast<uint32_t>(r);
            o.timeout_us = fabric::traffic_timeout_us(s.budget(), s.arch());
            t.rounds.push_back(
                {fabric::plan_mesh_traffic(plan, std::cref(socs), elf, flows[r], o), {}});
        }
        name_workers(plan, t);
        return t;
    }

    // Positions per flow: the kernel's source buffer holds them for each of its flows, and the
    // first round has the most flows through every router.
    uint32_t flow_slots(const MeshSession& s, const std::vector<fabric::MeshFlow>& first) const {
        std::map<const RouterPlacement*, uint32_t> through;
        uint32_t most = 0;
        for (const fabric::MeshFlow& f : first)
            most = std::max(most, ++through[s.plan().send(f.src, f.dst, f.plane).router]);
        const uint64_t src_bytes = fabric::mesh_worker_source_bytes(s.arch());
        const auto slots = static_cast<uint32_t>(std::min<uint64_t>(
            {run_.packets, kMeshRunSlots, src_bytes / (uint64_t{most} * run_.bytes)}));
        if (slots == 0) {
            fabric::fail(
                ErrorCategory::BadInput,
                "--bytes {}: {} flows x {} B do not fit a traffic kernel's source buffer ({} B)",
                run_.bytes, most, run_.bytes, src_bytes);
        }
        return slots;
    }

    // Every round lands on a sink core of its own on every chip.
    static void check_sink_cores(const MeshSession& s, const fabric::HarvestedSocs& socs,
                                 size_t rounds) {
        for (fabric::ChipId chip : s.plan().fabric.chips) {
            const size_t sinks = socs(chip).cores(fabric::CoreType::Worker).size();
            if (fabric::kMeshSinkCoreIndex + rounds > sinks) {
                fabric::fail(ErrorCategory::BadInput,
                             "mesh run needs {} rounds (a router with {} flows), one sink core "
                             "each from worker core {}; chip {} has {} worker cores ({})",
                             rounds, (rounds - 1) * protocol::kFabricMaxDests + 1,
                             fabric::kMeshSinkCoreIndex, chip, sinks, s.soc().source());
            }
        }
    }

    // Every round's kernels with the router they send through, as the report names them.
    static void name_workers(const fabric::MeshPlan& plan, MeshRunTraffic& t) {
        for (size_t r = 0; r < t.rounds.size(); ++r) {
            const fabric::MeshTraffic& round = t.rounds[r].traffic;
            for (const auto& k : round.workers) {
                const fabric::MeshFlow& f = round.flows[k.flows.front()];
                const RouterPlacement* router = plan.send(f.src, f.dst, f.plane).router;
                t.workers.push_back({static_cast<uint32_t>(r), &k, router,
                                     fmt::format("worker {} ({} plane {})", k.target.core.str(),
                                                 fabric::dir_letter(router->mesh->dir), f.plane)});
            }
        }
    }

    // The rounds one after the other, until one has a problem; the routers must still run and be
    // healthy after them.
    static void run_traffic(MeshSession& s, MeshRunTraffic& t) {
        for (MeshRound& round : t.rounds) {
            if (!s.problems.empty()) break;
            fabric::LaunchOptions lo;
            lo.max_cycles = s.cycles_left();
            lo.poll_cycles = 1'000;
            round.run = fabric::run_mesh_traffic(s.runner(), round.traffic, lo);
            uint64_t send = 0;
            for (const auto& o : round.run.workers) {
                t.outcomes.push_back(o);
                send = std::max<uint64_t>(send, o.results.cycles);
                const MeshWorker& w = t.workers[t.outcomes.size() - 1];
                if (auto p = fabric::traffic_problem(w.name, o, w.kernel->args.packet_count)) {
                    s.problems.push_back(std::move(*p));
                }
            }
            t.traffic_cycles += round.run.cycles;
            t.send_cycles += send;
        }
        if (s.problems.empty()) {
            s.runner().check_running();
            s.runner().check_health();
        }
    }

    // After termination: the account of every flow of the rounds that ran (sent, delivered,
    // dropped by whom, lost), its region byte for byte (after a failure too: what is missing is
    // named per flow), the flows never sent, and when nothing failed before, the routers'
    // counters.
    static void check_traffic(MeshSession& s, MeshRunTraffic& t) {
        const bool clean = s.problems.empty();
        t.account = account_rounds(s, t);
        fabric::account_problems(t.account, s.problems);
        size_t not_sent = 0;
        for (const MeshRound& round : t.rounds) {
            if (round.run.workers.empty()) {
                not_sent += round.traffic.flows.size();
            } else {
                t.mismatch_words += check_regions(s, round.traffic);
            }
        }
        if (not_sent != 0) {
            s.problems.push_back(
                fmt::format("{} flows not sent: a round before theirs failed", not_sent));
        }
        if (clean) fabric::check_router_counters(s.final_snapshots(), t.deliveries, s.problems);
    }

    // A round's regions byte for byte: a problem per flow whose data differs, naming the packets
    // not there intact. The words that differ.
    static uint64_t check_regions(MeshSession& s, const fabric::MeshTraffic& traffic) {
        uint64_t bad_words = 0;
        const auto checks = fabric::check_mesh_regions(s.device(), traffic);
        for (size_t k = 0; k < checks.size(); ++k) {
            if (checks[k].bad_words == 0) continue;
            const fabric::MeshFlow& f = traffic.flows[k];
            bad_words += checks[k].bad_words;
            s.problems.push_back(fmt::format(
                "data from {} to {} on plane {}: {} words differ ({} not there intact)",
                f.src.str(), f.dst.str(), f.plane, checks[k].bad_words,
                fabric::packets_at(traffic.packets, traffic.slots, checks[k].bad_positions)));
        }
        return bad_words;
    }

    // Sent (the workers' outcomes), delivered (the sinks' counters) and dropped (the routers'
    // events) per flow of every round that ran.
    static fabric::TrafficAccount account_rounds(MeshSession& s, const MeshRunTraffic& t) {
        std::vector<fabric::FlowTally> tallies;
        for (const MeshRound& round : t.rounds) {
            if (round.run.workers.empty()) continue;
            const std::vector<uint32_t> delivered =
                fabric::read_mesh_delivered(s.device(), round.traffic);
            for (auto& f : fabric::mesh_flow_tallies(round.traffic, round.run.workers, delivered))
                tallies.push_back(std::move(f));
        }
        return fabric::account_traffic(tallies, s.drops());
    }

    int report(MeshSession& s, const MeshRunTraffic& t, const std::string& worker_path,
               const RunFaults& faults) const {
        const double rate =
            bytes_per_cycle(total_bytes_sent(s.final_snapshots(), run_.bytes), t.send_cycles);
        RunReport r;
        r.passed = fmt::format(
            "mesh {} passed: {}; {} worker(s) in {} round(s), {} packets of {} B to every other "
            "device per plane, {} deliveries checked; bring-up {} cycles, traffic {} cycles "
            "(sending {}), {:.3f} B/cycle over all links while sending; {}{}",
            verb_, s.what(), t.workers.size(), t.rounds.size(), run_.packets, run_.bytes,
            t.deliveries, s.runner().ready_cycles(), t.traffic_cycles, t.send_cycles, rate,
            s.ending(), expect_ ? "; every flow's account as recorded" : "");
        r.outcomes = t.outcomes;
        r.figure_bytes = run_.bytes;
        r.send_cycles = t.send_cycles;
        r.add_json = [&](json& j) {
            j["worker_firmware"] = worker_path;
            j["packets"] = run_.packets;
            j["bytes"] = run_.bytes;
            j["send_type"] = run_.send_type;
            j["slots"] = t.slots;
            j["rounds"] = t.rounds.size();
            j["workers"] = workers_json(s.plan(), t);
            j["traffic_cycles"] = t.traffic_cycles;
            j["send_cycles"] = t.send_cycles;
            j["deliveries"] = t.deliveries;
            j["data_mismatch_words"] = t.mismatch_words;
            j["bytes_per_cycle"] = rate;
            j["account"] = fabric::account_json(t.account);
            j["faults"] = faults.json();
            j["links"] = link_reports_json(s.runner());
            if (expect_) {
                j["replay"] = {{"flows", expect_->flows.size()},
                               {"same_account", replay_differences_.empty()},
                               {"differences", replay_differences_}};
            }
            if (held_) j["control"] = control_states_json(*held_, s.plan().fabric);
        };
        r.print_body = [&] {
            if (held_ && !held_->empty()) {
                fmt::print("\n{}:\n", control_->when());
                print_control_states(*held_, s.plan().fabric);
            }
            if (!s.shown().empty()) {
                fmt::print("\n");
                s.print_routers(s.shown(), true, run_.bytes, t.send_cycles);
                fmt::print("\n");
                print_workers(t);
            }
            print_account(t.account);
            print_link_reports(s.runner());
            if (expect_) print_replay();
            s.print_terminated("\n");
        };
        return s.report(r);
    }

    // Whether the replay gave the recorded account, flow by flow.
    void print_replay() const {
        if (replay_differences_.empty()) {
            fmt::print(
                "replay: every flow's account (sent, delivered, dropped by whom) equals the "
                "record's ({} flows)\n",
                expect_->flows.size());
            return;
        }
        fmt::print("replay: {} flows differ from the record\n", replay_differences_.size());
        for (const std::string& d : replay_differences_) fmt::print("  {}\n", d);
    }

    static json workers_json(const fabric::MeshPlan& plan, const MeshRunTraffic& t) {
        json workers = json::array();
        for (size_t i = 0; i < t.workers.size(); ++i) {
            const MeshWorker& w = t.workers[i];
            const fabric::MeshTraffic& round = t.rounds[w.round].traffic;
            const MeshNode src = round.flows[w.kernel->flows.front()].src;
            json dests = json::array();
            for (size_t k : w.kernel->flows) {
                const fabric::MeshFlow& f = round.flows[k];
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
            if (i < t.outcomes.size()) {  // later rounds do not run after a failure
                const TrafficOutcome& o = t.outcomes[i];
                wj["outcome"] = fabric::outcome_name(o.launch.outcome);
                wj["exit_status"] = o.launch.status.exit_status;
                wj["packets_sent"] = o.results.packets_sent;
                wj["send_cycles"] = o.results.cycles;
                wj["close_cycles"] = o.results.close_cycles;
                wj["cycles"] = o.launch.cycles;
            }
            workers.push_back(std::move(wj));
        }
        return workers;
    }

    static void print_workers(const MeshRunTraffic& t) {
        for (size_t i = 0; i < t.outcomes.size(); ++i) {
            const MeshWorker& w = t.workers[i];
            const fabric::MeshTraffic& round = t.rounds[w.round].traffic;
            const TrafficOutcome& o = t.outcomes[i];
            std::vector<std::string> dsts;
            for (size_t k : w.kernel->flows) dsts.push_back(round.flows[k].dst.str());
            fmt::print("{} {} -> {}: {} packets, {} cycles (send {}), {}\n", w.name,
                       round.flows[w.kernel->flows.front()].src.str(), fmt::join(dsts, ","),
                       o.results.packets_sent, o.launch.cycles, o.results.cycles,
                       fabric::outcome_name(o.launch.outcome));
        }
    }

    const MeshFabricArgs& args_;
    const MeshRunArgs& run_;
    std::string verb_;
    bool as_json_;
    const std::optional<ControlArgs>& control_;
    const TrafficRecord* expect_;
    mutable const std::vector<fabric::RouterSnapshot>* held_ = nullptr;  // the control's reading
    mutable std::vector<std::string> replay_differences_;
};

// `mesh run`, and with a ControlArgs `mesh pause|drain|resume` (mesh_control.h).
class MeshRun final : public MeshFabricCommand {
  public:
    MeshRun(CLI::App& app, bool& as_json, std::optional<ControlArgs> control = std::nullopt)
        : MeshFabricCommand(
              app, as_json, control ? ControlArgs::command(control->verb) : "run",
              control ? ControlArgs::description(control->verb)
                      : "Bring the 2D fabric up, send all-to-all traffic through it, check "
                        "every byte, show what each router moved, terminate. " +
                            std::string(kAccountHelp)),
          control_(std::move(control)) {
        if (control_) control_->add_options(*cmd_);
        run_.add_options(*cmd_);
    }

    int run() const override {
        return MeshTrafficRun(args_, run_, cmd_->get_name(), as_json_, control_).run();
    }

  private:
    MeshRunArgs run_;
    std::optional<ControlArgs> control_;
};

// A directory of its own under the system's temporary one, removed with everything in it.
class TempDir {
  public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "fabricctl-replay-XXXXXX");
        if (mkdtemp(tmpl.data()) == nullptr) {
            fabric::fail(ErrorCategory::Internal, "cannot make a directory {}", tmpl);
        }
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

// `mesh replay FILE`: the run a record describes, again, on the model or on the chips.
class MeshReplay final : public CliCommand {
  public:
    MeshReplay(CLI::App& app, bool& as_json)
        : as_json_(as_json),
          cmd_(mesh_group(app).add_subcommand(
              "replay",
              "Run the traffic a `mesh run --record FILE` recorded again, on the fabric it "
              "describes (its descriptors and options, faults in the model only), and check that "
              "every flow's account (sent, delivered, dropped by whom) equals the recorded one")) {
        cmd_->add_option("record", record_, "The record (JSON) `mesh run --record` wrote")
            ->required();
        cmd_->add_option("--target", target_.target, "sim (the model) or pcie (tt-kmd)")
            ->check(CLI::IsMember({"sim", "pcie"}))
            ->capture_default_str();
        cmd_->add_option("--dir", target_.dir, "Device node directory (--target pcie)")
            ->capture_default_str();
        cmd_->add_option("--socket", target_.socket,
                         "--target sim: attach to the model a `fabricctl sim serve` keeps on this "
                         "Unix socket (default: $FABRIC_SIM_SOCKET; none: a model of its own)");
        add_max_cycles_option(*cmd_, target_.budget,
                              "Cycle budget for bring-up, traffic and termination together");
        cmd_->add_option("--router-elf", target_.router_elf,
                         "Router firmware (default: this build's fabric_router_2d.elf)");
        cmd_->add_option("--worker-elf", worker_elf_,
                         "Traffic kernel (default: this build's fabric_traffic.elf)");
        add_threads_option(*cmd_, target_.threads);
        add_events_option(*cmd_, target_.events);
        add_output_flags(*cmd_, as_json, target_.quiet);
    }

    bool parsed() const override { return cmd_->parsed(); }

    int run() const override {
        const TrafficRecord record = read_traffic_record(record_);
        const TempDir dir;
        const MeshFabricArgs args = replay_fabric_args(record, dir.path(), target_);
        MeshRunArgs run = record.run;
        run.worker_elf = worker_elf_;
        return MeshTrafficRun(args, run, "replay", as_json_, std::nullopt, &record).run();
    }

  private:
    bool& as_json_;
    CLI::App* cmd_;
    std::string record_, worker_elf_;
    MeshFabricArgs target_;
};

}  // namespace

CliCommandPtr add_mesh_replay_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshReplay>(app, as_json);
}

CliCommandPtr add_mesh_run_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshRun>(app, as_json);
}

CliCommandPtr add_mesh_pause_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshRun>(app, as_json, ControlArgs{pf::RouterControl::Pause});
}

CliCommandPtr add_mesh_drain_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshRun>(app, as_json, ControlArgs{pf::RouterControl::Drain});
}

CliCommandPtr add_mesh_resume_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshRun>(app, as_json, ControlArgs{pf::RouterControl::Run});
}

}  // namespace fabricctl
