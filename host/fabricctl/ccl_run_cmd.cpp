#include "ccl_run_cmd.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabric/ccl_plan.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/launch.h"
#include "fabric/traffic_verdict.h"
#include "fabric_session.h"
#include "mesh_session.h"

namespace fabricctl {

namespace {

namespace pf = protocol::fabric;
using nlohmann::json;

CLI::App& ccl_group(CLI::App& app) {
    return command_group(app, "ccl", "Collectives as worker kernels on the fabric");
}

// What every ccl verb takes: the collective, its size and its rings.
struct CclArgs {
    std::string op = "all-gather";
    std::string worker_elf, mux_elf;
    fabric::CclOptions options;

    void add_options(CLI::App& cmd) {
        cmd.add_option("--op", op,
                       "The collective: all-gather (each rank's N bytes to every rank), "
                       "reduce-scatter (int32 sums: rank r gets the sum of every rank's N bytes "
                       "number r) or all-reduce (every rank gets every sum)")
            ->check(CLI::IsMember({"all-gather", "reduce-scatter", "all-reduce"}))
            ->capture_default_str();
        add_bytes_option(cmd, options.chunk_bytes,
                         "N: bytes of a rank's share of the output, split over the rings "
                         "(a multiple of 16 x rings)")
            ->capture_default_str();
        cmd.add_option("--workers", options.workers_per_direction,
                       "Rings (worker cores of each chip) a direction; more than one share a mux")
            ->capture_default_str();
        cmd.add_flag("--bidirectional", options.bidirectional,
                     "As many rings the other way round (the other router of each chip)");
        cmd.add_flag("--mux", options.through_mux,
                     "Each chip's workers of a direction send through one fabric mux on a worker "
                     "core (seeds/001's reduce-scatter)");
        cmd.add_option("--mux-slots", options.mux_slots, "Slots of each mux channel")
            ->capture_default_str();
        cmd.add_option("--worker-elf", worker_elf,
                       "Collective kernel (default: this build's ccl_ring.elf)");
        cmd.add_option("--mux-elf", mux_elf, "Mux image (default: this build's fabric_mux.elf)");
    }

    fabric::CclOptions checked_options(uint64_t budget, hal::Arch arch) const {
        fabric::CclOptions o = options;
        o.op = *fabric::parse_ccl_op(op);
        o.timeout_us = fabric::traffic_timeout_us(budget, arch);
        return o;
    }
};

// The images a run needs: the kernel, and the mux's when the plan has muxes.
struct CclImages {
    TrafficKernel kernel;
    std::optional<TrafficKernel> mux;
    const fabric::ElfImage* mux_image() const { return mux ? &mux->image : nullptr; }
};
CclImages load_images(const CclArgs& a, const fabric::SocDescriptor& soc) {
    CclImages i{load_worker_kernel(a.worker_elf, soc, "ccl_ring"), std::nullopt};
    if (a.options.through_mux) i.mux = load_worker_kernel(a.mux_elf, soc, "fabric_mux");
    return i;
}

// Packets the routers deliver: every rank's of every ring.
uint64_t deliveries(const fabric::CclPlan& plan) {
    return uint64_t{plan.rings.size()} * plan.ranks() * fabric::ccl_packets_per_rank(plan);
}

fabric::LaunchOptions launch_options(uint64_t cycles_left) {
    fabric::LaunchOptions lo;
    lo.max_cycles = cycles_left;
    lo.poll_cycles = 1'000;
    return lo;
}

std::vector<fabric::MeshWorkerOutcome> outcomes_of(const fabric::CclRun& run) {
    std::vector<fabric::MeshWorkerOutcome> out;
    for (const auto& o : run.ranks) {
        fabric::MeshWorkerOutcome w;
        w.launch = o.launch;
        w.status = o.status;
        w.stuck_at = o.stuck_at;
        out.push_back(w);
    }
    return out;
}

// "ring of 8 ranks", "ring of 8 ranks, 4 rings (2 a direction, both ways) through 16 muxes"
std::string shape(const fabric::CclPlan& p) {
    const auto& o = p.options;
    std::string s = fmt::format("ring of {} ranks", p.ranks());
    if (p.rings.size() > 1) {
        s += fmt::format(", {} rings ({} a direction{})", p.rings.size(), o.workers_per_direction,
                         o.bidirectional ? ", both ways" : "");
    }
    if (!p.muxes.empty()) s += fmt::format(" through {} muxes", p.muxes.size());
    return s;
}

json ranks_json(const fabric::CclPlan& plan, const fabric::CclRun& run) {
    json out = json::array();
    for (const auto& o : run.ranks) {
        const auto& rank = plan.rings.at(o.ring).ranks.at(o.rank);
        out.push_back({{"ring", o.ring},
                       {"rank", o.rank},
                       {"chip", rank.target.core.chip},
                       {"core", rank.target.core.core.str()},
                       {"outcome", fabric::outcome_name(o.launch.outcome)},
                       {"status", o.status},
                       {"stuck_at", o.stuck_at},
                       {"sent", o.results.sent},
                       {"received", o.results.received},
                       {"cycles", o.results.cycles}});
    }
    return out;
}

void print_run(const fabric::CclPlan& plan, const fabric::CclRun& run, const std::string& op,
               bool checked) {
    const auto& o = plan.options;
    fmt::print(
        "{}: {} (chips {}), each rank sends one chunk a step one hop along its router's "
        "line\n",
        op, shape(plan), fmt::join(plan.cycle, ","));
    for (size_t i = 0; i < plan.rings.size(); ++i) {
        std::vector<fabric::ChipId> chips;
        for (const auto& r : plan.rings[i].ranks) chips.push_back(r.target.core.chip);
        fmt::print("ring {} ({}): chips {}, worker core {}\n", i,
                   plan.rings[i].reverse ? "back" : "forward", fmt::join(chips, ","),
                   plan.rings[i].ranks.front().target.core.core.str());
    }
    for (const auto& r : run.ranks) {
        fmt::print("ring {} rank {} {}: sent {}, received {}, {} cycles ({})\n", r.ring, r.rank,
                   plan.rings[r.ring].ranks[r.rank].target.core.str(), r.results.sent,
                   r.results.received, r.results.cycles, fabric::outcome_name(r.launch.outcome));
    }
    for (size_t i = 0; i < run.muxes.size(); ++i)
        fmt::print("{}\n", fabric::describe_mux(plan.muxes[i], run.muxes[i]));
    const std::string per_ring =
        plan.rings.size() > 1 ? fmt::format(" ({} B a ring)", plan.ring_chunk_bytes()) : "";
    fmt::print("size: {} B a rank{}, {} B of input and {} B of output on every rank{}\n",
               o.chunk_bytes, per_ring, plan.input_bytes(), plan.output_bytes(),
               plan.rings.size() > 1 ? " of a ring" : "");
    fmt::print(
        "bus bandwidth: {:.3f} B/cycle ({} x ({} - 1) x {} B over {} cycles, the slowest "
        "rank's)\n",
        fabric::ccl_bus_bandwidth(plan, run), plan.phases(), plan.ranks(), o.chunk_bytes,
        run.slowest_cycles());
    if (checked) fmt::print("every word checked: every rank's output equals the host's\n");
}

// The report of a run on either fabric; `print_fabric` adds the session's router lines.
RunReport ccl_report(const std::string& command, const CclArgs& a, const fabric::CclPlan& plan,
                     const fabric::CclRun& run, const CclImages& images, bool checked,
                     const std::string& ending, std::span<const fabric::MeshWorkerOutcome> outcomes,
                     std::function<void()> print_fabric) {
    const double bus = fabric::ccl_bus_bandwidth(plan, run);
    RunReport r;
    r.passed = fmt::format(
        "{} passed: {} on a {}, {} B a rank, every rank's {} B of output checked; {} cycles, bus "
        "bandwidth {:.3f} B/cycle; {}",
        command, a.op, shape(plan), plan.options.chunk_bytes,
        plan.output_bytes() * plan.rings.size(), run.slowest_cycles(), bus, ending);
    r.outcomes = outcomes;
    r.add_json = [&a, &plan, &run, &images, bus, checked](json& j) {
        j["worker_firmware"] = images.kernel.path;
        if (images.mux) j["mux_firmware"] = images.mux->path;
        j["ccl"] = {{"op", a.op},
                    {"algorithm", "ring"},
                    {"phases", plan.phases()},
                    {"chips", plan.cycle},
                    {"rings", plan.rings.size()},
                    {"workers_per_direction", plan.options.workers_per_direction},
                    {"bidirectional", plan.options.bidirectional},
                    {"muxes", plan.muxes.size()},
                    {"ranks", ranks_json(plan, run)},
                    {"chunk_bytes", plan.options.chunk_bytes},
                    {"ring_chunk_bytes", plan.ring_chunk_bytes()},
                    {"output_bytes", plan.output_bytes()},
                    {"cycles", run.slowest_cycles()},
                    {"bus_bytes_per_cycle", bus},
                    {"every_word_checked", checked}};
    };
    r.print_body = [&a, &plan, &run, checked, print_fabric] {
        print_run(plan, run, a.op, checked);
        print_fabric();
    };
    return r;
}

class CclRunCommand final : public FabricCommand {
  public:
    CclRunCommand(CLI::App& app, bool& as_json)
        : FabricCommand(InGroup{ccl_group(app)}, as_json, "run",
                        "Bring a 1D ring up, run a collective with one rank on every chip of each "
                        "ring, check every rank's output against the host's computation, print "
                        "the algorithm and bus bandwidth, terminate") {
        ccl_.add_options(*cmd_);
    }

    int run() const override {
        FabricSession s(args_, "run", as_json_, "ccl");
        s.plan_fabric(s.fabric_options());
        s.load_router_image();
        const CclImages images = load_images(ccl_, s.soc());
        s.choose_base_firmware();
        const fabric::HarvestedSocs socs(s.soc(), s.cluster());  // no worker on a harvested row
        const fabric::CclPlan plan =
            fabric::plan_ccl(s.plan(), std::cref(socs), images.kernel.image,
                             ccl_.checked_options(s.budget(), s.arch()));
        s.open_model(deliveries(plan));
        s.bring_up();
        s.show_stage("ccl");
        const fabric::CclRun run =
            fabric::run_ccl(s.runner(), plan, launch_options(s.cycles_left()), images.mux_image());
        for (auto& p : fabric::ccl_problems(s.device(), plan, run))
            s.problems.push_back(std::move(p));
        s.terminate();
        const auto outcomes = outcomes_of(run);
        return s.report(ccl_report("ccl run", ccl_, plan, run, images, s.problems.empty(),
                                   "terminated gracefully", outcomes,
                                   [&s] { s.print_router_table(); }));
    }

  private:
    CclArgs ccl_;
};

class CclMeshRunCommand final : public MeshFabricCommand {
  public:
    CclMeshRunCommand(CLI::App& app, bool& as_json)
        : MeshFabricCommand(InGroup{ccl_group(app)}, as_json, "mesh-run",
                            "Bring a 2D fabric up, run a collective round a ring through every "
                            "chip of a mesh (no wrap link needed), check every rank's output "
                            "against the host's computation, print the algorithm and bus "
                            "bandwidth, terminate") {
        ccl_.add_options(*cmd_);
        cmd_->add_option("--mesh", mesh_, "The mesh whose chips the ring goes through")
            ->capture_default_str();
        cmd_->add_option("--plane", plane_, "Routing plane of the ring's routers")
            ->capture_default_str();
    }

    int run() const override {
        MeshSession s(args_, "mesh-run", as_json_, "ccl");
        s.plan_fabric(s.fabric_options());
        s.load_router_image();
        const CclImages images = load_images(ccl_, s.soc());
        const fabric::HarvestedSocs socs(s.soc(), s.cluster());
        const fabric::CclPlan plan =
            fabric::plan_ccl(s.plan(), mesh_, plane_, std::cref(socs), images.kernel.image,
                             ccl_.checked_options(s.budget(), s.arch()));
        s.open_device(deliveries(plan));
        return s.run_interruptible([&] {
            s.bring_up();
            s.show_stage("ccl");
            const fabric::CclRun run = fabric::run_ccl(
                s.runner(), plan, launch_options(s.cycles_left()), images.mux_image());
            for (auto& p : fabric::ccl_problems(s.device(), plan, run))
                s.problems.push_back(std::move(p));
            if (s.problems.empty()) s.runner().check_health();
            s.terminate();
            const auto outcomes = outcomes_of(run);
            return s.report(ccl_report("ccl mesh-run", ccl_, plan, run, images, s.problems.empty(),
                                       s.ending(), outcomes, [&s] { s.print_terminated(""); }));
        });
    }

  private:
    CclArgs ccl_;
    uint32_t mesh_ = 0;
    uint32_t plane_ = 0;
};

}  // namespace

CliCommandPtr add_ccl_run_command(CLI::App& app, bool& as_json) {
    return std::make_shared<CclRunCommand>(app, as_json);
}

CliCommandPtr add_ccl_mesh_run_command(CLI::App& app, bool& as_json) {
    return std::make_shared<CclMeshRunCommand>(app, as_json);
}

}  // namespace fabricctl
