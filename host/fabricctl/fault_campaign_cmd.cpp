#include "fault_campaign_cmd.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "fabric/error.h"
#include "fabric/fault_campaign.h"
#include "fabric/interrupt.h"

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using nlohmann::json;

constexpr uint64_t kMaxIterations = 10'000'000;
constexpr uint32_t kMaxJobs = 64;

// Comma-separated names, each parsed by `parse`; Error(BadInput) naming the option and the
// names it takes.
template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& option, const std::string& text, Parse parse,
                          const std::string& known) {
    std::vector<T> out;
    std::stringstream in(text);
    for (std::string name; std::getline(in, name, ',');) {
        const std::optional<T> v = parse(name);
        if (!v) {
            fabric::fail(ErrorCategory::BadInput, "{} {}: unknown name '{}' ({})", option, text,
                         name, known);
        }
        out.push_back(*v);
    }
    if (out.empty())
        fabric::fail(ErrorCategory::BadInput, "{}: no names given ({})", option, known);
    return out;
}

// One iteration's run and verdict.
struct Outcome {
    fabric::Iteration iteration;
    fabric::ChildRun run;
    fabric::IterationVerdict verdict;
    json report;  // the run's --json document (null if it printed none)
};

class FaultCampaign final : public CliCommand {
  public:
    FaultCampaign(CLI::App& app, bool& as_json) : as_json_(as_json) {
        cmd_ = command_group(app, "fault", "Fault campaigns in the model")
                   .add_subcommand("campaign",
                                   "Seeded runs of fabric run / mesh run with faults injected, "
                                   "each checked: bounded time, every packet delivered once or "
                                   "reported dropped; a failing one prints its replay command");
        cmd_->add_option("--iterations", options_.iterations, "Iterations to run")
            ->capture_default_str();
        cmd_->add_option("--first", options_.first,
                         "Index of the first iteration (a shard of a larger campaign)")
            ->capture_default_str();
        cmd_->add_option("--seed", options_.seed, "The campaign's seed")->capture_default_str();
        cmd_->add_option("--topology", topologies_,
                         "Comma-separated: n300-line, t3k-line, t3k-ring, t3k-mesh, spec-4mesh "
                         "(default: all, weighted)");
        cmd_->add_option("--faults", kinds_,
                         "Comma-separated fault kinds to draw (default: link-flap, link-drop, "
                         "link-delay, router-stall, link-down; a link-down iteration runs with "
                         "--on-link-down drain; also noc-hold, not drawn by default: a router "
                         "core's NOC ejection held 1,000-100,000 cycles, or half the time the "
                         "chip's sink core held for good or up to 300,000 cycles, with a packet "
                         "timeout that drops)");
        cmd_->add_flag("--link-returns", options_.link_returns,
                       "Each link-down comes up again 5,000 to 60,000 cycles later (a rerouted "
                       "link rejoins; a drained one stays cut)");
        cmd_->add_option("--jobs,-j", jobs_, "Iterations run at once")->capture_default_str();
        cmd_->add_option("--wall-limit-s", wall_limit_s_,
                         "Wall-clock seconds an iteration may take before it is killed as a hang")
            ->capture_default_str();
        cmd_->add_option("--descriptors", options_.descriptor_dir,
                         "Directory of the cluster and mesh graph files (default: this build's "
                         "soc_descriptors)");
        cmd_->add_flag("--reports", reports_,
                       "With --json: every iteration's account and faults as its run reported "
                       "them");
        cmd_->add_option("--progress-every", progress_every_,
                         "A progress line on stderr every N iterations (0: none)")
            ->capture_default_str();
        // Checks the checker: each run's account altered as a fault the fabric did not report
        // would alter it (a packet lost, or one delivered twice); every iteration must fail.
        cmd_->add_option("--tamper", tamper_, "")
            ->check(CLI::IsMember({"lose", "duplicate"}))
            ->group("");
        cmd_->add_flag("--json", as_json_, "Print the result as JSON");
    }

    bool parsed() const override { return cmd_->parsed(); }

    int run() const override {
        fabric::CampaignOptions o = checked_options();
        const fabric::CampaignPorts ports = fabric::campaign_ports(o);
        const std::string self = self_path();
        const auto start = std::chrono::steady_clock::now();
        std::map<uint64_t, Outcome> kept;  // the failing iterations (with --reports: all)
        fabric::CampaignSummary summary;
        std::mutex lock;
        std::atomic<uint64_t> next{0};
        std::exception_ptr error;  // the first a job met (a child that could not start): rethrown
        const auto work = [&] {
            try {
                for (uint64_t i; (i = next++) < o.iterations && !fabric::interrupt_requested();) {
                    Outcome out = run_iteration(o, ports, self, o.first + i);
                    const std::lock_guard<std::mutex> hold(lock);
                    summary.add(out.iteration, out.verdict, out.run.wall_seconds);
                    if (!out.verdict.passed()) print_failure(out, o.descriptor_dir);
                    show_progress(summary, o.iterations);
                    if (reports_ || !out.verdict.passed()) kept.emplace(i, std::move(out));
                }
            } catch (...) {
                const std::lock_guard<std::mutex> hold(lock);
                if (!error) error = std::current_exception();
                next = o.iterations;  // the other jobs stop too
            }
        };
        std::vector<std::thread> pool;
        for (uint32_t j = 0; j < jobs_; ++j) pool.emplace_back(work);
        for (std::thread& t : pool) t.join();
        if (error) std::rethrow_exception(error);
        summary.wall_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        // Interrupted: the iterations that ran are reported all the same, then the signal's code.
        const int code = report(o, summary, kept);
        const int signal = fabric::interrupt_requested();
        return signal != 0 ? kSignalBase + signal : code;
    }

  private:
    fabric::CampaignOptions checked_options() const {
        fabric::CampaignOptions o = options_;
        if (o.iterations == 0 || o.iterations > kMaxIterations) {
            fabric::fail(ErrorCategory::BadInput, "--iterations {}: must be 1..{}", o.iterations,
                         kMaxIterations);
        }
        if (jobs_ == 0 || jobs_ > kMaxJobs)
            fabric::fail(ErrorCategory::BadInput, "--jobs {}: must be 1..{}", jobs_, kMaxJobs);
        if (!(wall_limit_s_ > 0)) {
            fabric::fail(ErrorCategory::BadInput, "--wall-limit-s {}: must be more than 0",
                         wall_limit_s_);
        }
        if (!topologies_.empty()) {
            o.topologies = parse_list<fabric::CampaignTopology>(
                "--topology", topologies_, fabric::parse_campaign_topology,
                "n300-line, t3k-line, t3k-ring, t3k-mesh, spec-4mesh");
        }
        if (!kinds_.empty()) {
            o.kinds = parse_list<fabric::FaultKind>("--faults", kinds_, fabric::fault_kind_of,
                                                    fabric::fault_kind_names());
        }
        if (o.descriptor_dir.empty()) {
            o.descriptor_dir = std::filesystem::path(find_default_descriptor(hal::Arch::WormholeB0))
                                   .parent_path()
                                   .string();
        }
        return o;
    }

    static std::string self_path() {
        std::error_code ec;
        const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
        if (ec) {
            fabric::fail(ErrorCategory::Internal, "fault campaign: /proc/self/exe: {}",
                         ec.message());
        }
        return exe.string();
    }

    Outcome run_iteration(const fabric::CampaignOptions& o, const fabric::CampaignPorts& ports,
                          const std::string& self, uint64_t index) const {
        Outcome out;
        out.iteration = fabric::draw_iteration(o, ports, index);
        std::vector<std::string> args = out.iteration.args(o.descriptor_dir);
        args.push_back("--json");
        out.run = fabric::run_child(self, args, wall_limit_s_);
        out.report = json::parse(out.run.out, nullptr, false);
        if (out.report.is_discarded()) out.report = nullptr;
        if (!tamper_.empty()) tamper(out.report);
        out.verdict =
            fabric::judge_iteration(out.run, out.report.is_null() ? nullptr : &out.report);
        return out;
    }

    // --tamper: the first flow's sink counted one packet fewer (lose) or more (duplicate).
    void tamper(json& report) const {
        if (!report.is_object() || !report.contains("account")) return;
        json& flows = report["account"]["flows"];
        if (flows.empty()) return;
        const uint64_t delivered = flows[0]["delivered"];
        flows[0]["delivered"] = tamper_ == "lose" ? delivered - 1 : delivered + 1;
    }

    // At once, as it is found: on stdout, or with --json (whose document comes at the end) as
    // one line on stderr.
    void print_failure(const Outcome& out, const std::string& dir) const {
        const fabric::Iteration& it = out.iteration;
        if (as_json_) {
            log_line(fmt::format("iteration {} failed (seed {}): {}: {}; replay: {}", it.index,
                                 it.seed, it.describe(), fmt::join(out.verdict.failures, "; "),
                                 it.replay(dir)));
            return;
        }
        fmt::print("iteration {} failed (seed {}): {}\n", it.index, it.seed, it.describe());
        for (const std::string& f : out.verdict.failures) fmt::print("  {}\n", f);
        fmt::print("  replay: {}\n", it.replay(dir));
        flush_stdout();
    }

    void show_progress(const fabric::CampaignSummary& s, uint64_t total) const {
        if (progress_every_ == 0 || s.iterations % progress_every_ != 0) return;
        log_line(fmt::format(
            "campaign: {} of {} iterations, {} failed; packets sent {}, "
            "delivered {}, dropped {}",
            s.iterations, total, s.failed, s.packets.sent, s.packets.delivered, s.packets.dropped));
    }

    json iteration_json(const Outcome& out, const std::string& dir) const {
        const fabric::Iteration& it = out.iteration;
        json j{{"index", it.index},
               {"seed", it.seed},
               {"topology", fabric::campaign_topology_name(it.topology)},
               {"drawn", it.describe()},
               {"args", it.args(dir)},
               {"replay", it.replay(dir)},
               {"exit_code", out.run.exit_code},
               {"wall_seconds", out.run.wall_seconds},
               {"passed", out.verdict.passed()},
               {"failures", out.verdict.failures},
               {"sent", out.verdict.figures.sent},
               {"delivered", out.verdict.figures.delivered},
               {"dropped", out.verdict.figures.dropped},
               {"traffic_cycles",
                out.report.is_object() ? out.report.value("traffic_cycles", json()) : json()}};
        if (reports_ && out.report.is_object()) {
            j["account"] = out.report.value("account", json());
            j["faults"] = out.report.value("faults", json());
        }
        return j;
    }

    int report(const fabric::CampaignOptions& o, const fabric::CampaignSummary& summary,
               const std::map<uint64_t, Outcome>& kept) const {
        const bool ok = summary.failed == 0;
        if (as_json_) {
            json iterations = json::array();
            for (const auto& [i, out] : kept)
                iterations.push_back(iteration_json(out, o.descriptor_dir));
            print_json({{"ok", ok},
                        {"seed", o.seed},
                        {"first", o.first},
                        {"summary", summary.json()},
                        {"iterations", std::move(iterations)}});
        } else {
            for (const std::string& line : summary.lines()) fmt::print("{}\n", line);
            flush_stdout();
        }
        const std::string cut =
            summary.iterations == o.iterations
                ? ""
                : fmt::format(" (interrupted after {} iterations)", summary.iterations);
        log_line(fmt::format("fault campaign {}: seed {}, iterations {}..{}, {} failed{}",
                             ok ? "passed" : "FAILED", o.seed, o.first, o.first + o.iterations - 1,
                             summary.failed, cut));
        return ok ? kOk : kFabric;
    }

    bool& as_json_;
    CLI::App* cmd_ = nullptr;
    fabric::CampaignOptions options_;
    std::string topologies_;
    std::string kinds_;
    uint32_t jobs_ = 1;
    double wall_limit_s_ = 300;
    bool reports_ = false;
    uint64_t progress_every_ = 0;
    std::string tamper_;
};

}  // namespace

CliCommandPtr add_fault_campaign_command(CLI::App& app, bool& as_json) {
    return std::make_shared<FaultCampaign>(app, as_json);
}

}  // namespace fabricctl
