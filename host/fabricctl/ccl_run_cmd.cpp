#include "ccl_run_cmd.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabric/ccl_plan.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/launch.h"
#include "fabric/traffic_verdict.h"
#include "fabric_session.h"

namespace fabricctl {

namespace {

namespace pf = protocol::fabric;
using nlohmann::json;

CLI::App& ccl_group(CLI::App& app) {
    return command_group(app, "ccl", "Collectives as worker kernels on the fabric");
}

fabric::MeshWorkerOutcome as_outcome(const fabric::CclRankOutcome& o) {
    fabric::MeshWorkerOutcome out;
    out.launch = o.launch;
    out.status = o.status;
    out.stuck_at = o.stuck_at;
    return out;
}

// Packets the routers deliver: every rank sends ranks - 1 chunks a phase, each its writes (split at
// the slot payload) and one atomic increment (the progress line's count).
uint64_t deliveries(const fabric::CclPlan& plan, uint32_t payload_bytes) {
    const uint64_t ranks = plan.ranks.size();
    const uint64_t writes = (plan.options.chunk_bytes + payload_bytes - 1) / payload_bytes;
    return plan.phases() * ranks * (ranks - 1) * (writes + 1);
}

class CclRunCommand final : public FabricCommand {
  public:
    CclRunCommand(CLI::App& app, bool& as_json)
        : FabricCommand(InGroup{ccl_group(app)}, as_json, "run",
                        "Bring a 1D ring up, run a collective with one rank on every chip, check "
                        "every rank's output against the host's computation, print the algorithm "
                        "and bus bandwidth, terminate") {
        cmd_->add_option("--op", op_,
                         "The collective: all-gather (each rank's N bytes to every rank), "
                         "reduce-scatter (int32 sums: rank r gets the sum of every rank's N bytes "
                         "number r) or all-reduce (every rank gets every sum)")
            ->check(CLI::IsMember({"all-gather", "reduce-scatter", "all-reduce"}))
            ->capture_default_str();
        add_bytes_option(*cmd_, o_.chunk_bytes,
                         "N: bytes of a rank's share of the output (multiple of 16)")
            ->capture_default_str();
        cmd_->add_option("--worker-elf", worker_elf_,
                         "Collective kernel (default: this build's ccl_ring.elf)");
    }

    int run() const override {
        FabricSession s(args_, "run", as_json_, "ccl");
        s.plan_fabric(s.fabric_options());
        s.load_router_image();
        const TrafficKernel kernel = load_worker_kernel(worker_elf_, s.soc(), "ccl_ring");
        s.choose_base_firmware();
        fabric::CclOptions o = o_;
        o.op = *fabric::parse_ccl_op(op_);
        o.timeout_us = fabric::traffic_timeout_us(s.budget(), s.arch());
        const fabric::HarvestedSocs socs(s.soc(), s.cluster());  // no worker on a harvested row
        const fabric::CclPlan plan = fabric::plan_ccl(s.plan(), std::cref(socs), kernel.image, o);
        s.open_model(deliveries(plan, s.plan().routers.front().config.payload_bytes));
        s.bring_up();
        s.show_stage("ccl");
        fabric::LaunchOptions lo;
        lo.max_cycles = s.cycles_left();
        lo.poll_cycles = 1'000;
        const fabric::CclRun run = fabric::run_ccl(s.runner(), plan, lo);
        for (auto& p : fabric::ccl_problems(s.device(), plan, run)) {
            s.problems.push_back(std::move(p));
        }
        s.terminate();
        return report(s, plan, run, kernel.path);
    }

  private:
    int report(FabricSession& s, const fabric::CclPlan& plan, const fabric::CclRun& run,
               const std::string& kernel_path) const {
        std::vector<fabric::MeshWorkerOutcome> outcomes;
        for (const auto& r : run.ranks) outcomes.push_back(as_outcome(r));
        const double bus = fabric::ccl_bus_bandwidth(plan, run);
        const uint32_t ranks = static_cast<uint32_t>(plan.ranks.size());
        std::vector<fabric::ChipId> chips;
        for (const auto& r : plan.ranks) chips.push_back(r.target.core.chip);
        RunReport r;
        r.passed = fmt::format(
            "ccl run passed: {} on a ring of {} ranks, {} B a rank, every rank's {} B of output "
            "checked; {} cycles, bus bandwidth {:.3f} B/cycle; terminated gracefully",
            op_, ranks, plan.options.chunk_bytes, plan.output_bytes(), run.slowest_cycles(), bus);
        r.outcomes = outcomes;
        r.add_json = [&](json& j) {
            json rank_list = json::array();
            for (size_t i = 0; i < plan.ranks.size(); ++i) {
                const auto& res = run.ranks[i].results;
                rank_list.push_back({{"rank", i},
                                     {"chip", plan.ranks[i].target.core.chip},
                                     {"core", plan.ranks[i].target.core.core.str()},
                                     {"outcome", fabric::outcome_name(run.ranks[i].launch.outcome)},
                                     {"status", run.ranks[i].status},
                                     {"stuck_at", run.ranks[i].stuck_at},
                                     {"sent", res.sent},
                                     {"received", res.received},
                                     {"cycles", res.cycles}});
            }
            j["worker_firmware"] = kernel_path;
            j["ccl"] = {{"op", op_},
                        {"algorithm", "ring"},
                        {"phases", plan.phases()},
                        {"ranks", rank_list},
                        {"chunk_bytes", plan.options.chunk_bytes},
                        {"output_bytes", plan.output_bytes()},
                        {"cycles", run.slowest_cycles()},
                        {"bus_bytes_per_cycle", bus},
                        {"every_word_checked", s.problems.empty()}};
        };
        r.print_body = [&] {
            fmt::print(
                "{}: ring, {} ranks (chips {}), each sends one chunk a step one hop along its "
                "East router's line\n",
                op_, ranks, fmt::join(chips, ","));
            for (size_t i = 0; i < plan.ranks.size(); ++i) {
                const auto& o = run.ranks[i];
                fmt::print("rank {} {}: sent {}, received {}, {} cycles ({})\n", i,
                           plan.ranks[i].target.core.str(), o.results.sent, o.results.received,
                           o.results.cycles, fabric::outcome_name(o.launch.outcome));
            }
            fmt::print("size: {} B a rank, {} B of input and {} B of output on every rank\n",
                       plan.options.chunk_bytes, plan.input_bytes(), plan.output_bytes());
            fmt::print(
                "bus bandwidth: {:.3f} B/cycle ({} x ({} - 1) x {} B over {} cycles, the "
                "slowest rank's)\n",
                bus, plan.phases(), ranks, plan.options.chunk_bytes, run.slowest_cycles());
            if (s.problems.empty()) {
                fmt::print("every word checked: every rank's output equals the host's\n");
            }
            s.print_router_table();
        };
        return s.report(r);
    }

    std::string op_ = "all-gather";
    std::string worker_elf_;
    fabric::CclOptions o_;
};

}  // namespace

CliCommandPtr add_ccl_run_command(CLI::App& app, bool& as_json) {
    return std::make_shared<CclRunCommand>(app, as_json);
}

}  // namespace fabricctl
