#include "fabric_run_cmd.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabric/error.h"
#include "fabric/fabric_traffic.h"
#include "fabric/launch.h"
#include "fabric/traffic_verdict.h"
#include "fabric_session.h"
#include "fault_option.h"
#include "packet_trace_option.h"
#include "protocol/fabric.h"

namespace fabricctl {

namespace {

namespace pf = protocol::fabric;
using nlohmann::json;

// What the workers did: each one's outcome (FabricTraffic::workers order) and the figures.
struct TrafficResults {
    std::vector<TrafficOutcome> outcomes;
    uint64_t traffic_cycles = 0;     // the workers' launch .. the last one's exit (host polls)
    uint64_t send_cycles = 0;        // the longest worker's open .. last send (its own clock)
    uint64_t mismatch_words = 0;     // words that landed other than the pattern
    fabric::TrafficAccount account;  // per (worker, chip its route writes)
};

class FabricRun final : public FabricCommand {
  public:
    FabricRun(CLI::App& app, bool& as_json)
        : FabricCommand(
              app, as_json, "run",
              "Bring the fabric up, send worker traffic through it, check it, terminate. " +
                  std::string(kAccountHelp)) {
        add_bytes_option(*cmd_, bytes_, "Payload bytes per packet (multiple of 16)")
            ->capture_default_str();
        cmd_->add_option("--packets", packets_, "Packets per worker")->capture_default_str();
        cmd_->add_option("--pattern", pattern_,
                         "neighbour: each chip to the next one; all-to-all: each chip to every "
                         "other (multicast in each direction)")
            ->check(CLI::IsMember({"neighbour", "all-to-all"}))
            ->capture_default_str();
        add_send_type_option(*cmd_, send_type_);
        cmd_->add_option("--worker-elf", worker_elf_,
                         "Worker traffic kernel (default: this build's fabric_traffic.elf)");
        faults_.add_options(*cmd_);
        trace_.add_options(*cmd_);
        add_link_down_options(*cmd_, link_down_);
    }

    int run() const override {
        FabricSession s(args_, "run", as_json_);
        std::vector<fabric::FaultSpec> faults = faults_.parse();
        fabric::FabricOptions fo = s.fabric_options();
        check_traffic_options(bytes_, packets_, s.arch());
        fo.payload_bytes = std::max(pf::kDefaultPayloadBytes, bytes_);
        s.plan_fabric(fo);
        s.load_router_image();
        const TrafficKernel kernel = load_traffic_kernel(worker_elf_, s.soc());
        s.choose_base_firmware();
        const fabric::FabricTraffic traffic = plan_traffic(s, kernel.image);

        s.open_model(traffic.deliveries());
        const auto trace = PacketTraceFile::start(trace_, s.plan(), s.device());
        const RunFaults armed(std::move(faults), faults_.seed, s.device(), s.runner(),
                              s.event_log());
        apply_link_down(s.runner(), link_down_, s.cluster());
        s.bring_up();
        TrafficResults results = run_traffic(s, traffic);
        fabric::resolve_link_down_drains(s.runner(), s.drops(), s.cycles_left());
        s.terminate();
        if (trace) trace->write();
        fabric::resolve_unacked_after_termination(s.runner(), s.drops(), s.final_snapshots());
        armed.log_effects();
        const bool clean = s.problems.empty();
        results.account = account(s, traffic, results);
        fabric::account_problems(results.account, s.problems);
        results.mismatch_words = check_landed(s, traffic);  // what landed, also after a failure
        if (clean) {
            fabric::check_router_counters(s.final_snapshots(), traffic.deliveries(), s.problems);
        }
        return report(s, traffic, kernel.path, results, armed);
    }

  private:
    // The workers, where they send and where their data lands (fabric/fabric_traffic.h).
    fabric::FabricTraffic plan_traffic(const FabricSession& s, const fabric::ElfImage& elf) const {
        fabric::FabricTrafficOptions to;
        to.pattern = *fabric::parse_fabric_traffic_pattern(pattern_);
        to.packets = packets_;
        to.packet_bytes = bytes_;
        to.timeout_us = fabric::traffic_timeout_us(s.budget(), s.arch());
        to.count_deliveries = true;
        to.send_type = send_type_of(send_type_);
        const fabric::HarvestedSocs socs(s.soc(), s.cluster());  // no worker on a harvested row
        return fabric::plan_fabric_traffic(s.plan(), std::cref(socs), elf, to);
    }

    // Run the workers (the --stall-router fault armed as they start); every kernel's problem
    // goes to the session's problems; the routers must still run and be healthy after them.
    TrafficResults run_traffic(FabricSession& s, const fabric::FabricTraffic& traffic) const {
        fabric::LaunchOptions lo;
        lo.max_cycles = s.cycles_left();
        lo.poll_cycles = 1'000;
        s.show_stage("traffic");
        s.inject_stall();
        const fabric::FabricTrafficRun run = fabric::run_fabric_traffic(s.runner(), traffic, lo);
        TrafficResults results;
        results.traffic_cycles = run.cycles;
        results.outcomes = run.workers;
        for (size_t i = 0; i < run.workers.size(); ++i) {
            const TrafficOutcome& o = run.workers[i];
            results.send_cycles = std::max<uint64_t>(results.send_cycles, o.results.cycles);
            if (auto p = fabric::traffic_problem(traffic.workers[i].name, o, packets_)) {
                s.problems.push_back(std::move(*p));
            }
        }
        if (s.problems.empty()) {
            s.runner().check_running();
            s.runner().check_health();
        }
        return results;
    }

    // Sent (the workers' outcomes), delivered (each chip's sink counter) and dropped (the routers'
    // events) per worker and chip its route writes.
    static fabric::TrafficAccount account(FabricSession& s, const fabric::FabricTraffic& traffic,
                                          const TrafficResults& results) {
        const auto delivered = fabric::read_fabric_delivered(s.device(), traffic);
        return fabric::account_traffic(
            fabric::fabric_flow_tallies(traffic, results.outcomes, delivered), s.drops());
    }

    // After termination: every worker's region, byte for byte; the words that differ.
    static uint64_t check_landed(FabricSession& s, const fabric::FabricTraffic& traffic) {
        uint64_t bad_words = 0;
        for (const auto& m : fabric::check_fabric_landed(s.device(), traffic)) {
            bad_words += m.check.bad_words;
            s.problems.push_back(fmt::format(
                "data from {} on chip {} (core {} at {}): {} words differ, first at +{} ({} not "
                "there intact)",
                traffic.workers[m.worker].target.core.str(), m.chip, traffic.sink.str(),
                fabric::hex32(m.addr), m.check.bad_words, m.check.first_bad,
                fabric::packets_at(traffic.packets, traffic.slots, m.check.bad_positions)));
        }
        return bad_words;
    }

    int report(FabricSession& s, const fabric::FabricTraffic& traffic,
               const std::string& worker_path, const TrafficResults& results,
               const RunFaults& faults) const {
        const fabric::FabricPlan& plan = s.plan();
        uint64_t total_bytes = 0;
        for (const auto& snap : s.final_snapshots()) total_bytes += snap.sent() * bytes_;
        const double rate = bytes_per_cycle(total_bytes, results.send_cycles);
        RunReport r;
        r.passed = fmt::format(
            "fabric run passed: {} {} ({} chips, {} routers), {} worker(s) x {} packets of {} B "
            "({}), {} deliveries checked; bring-up {} cycles, traffic {} cycles (sending {}), "
            "{:.3f} B/cycle over all links while sending",
            fabric::topology_name(plan.topology), fmt::join(plan.chips, ","), plan.chips.size(),
            plan.routers.size(), traffic.workers.size(), packets_, bytes_, pattern_,
            traffic.deliveries(), s.runner().ready_cycles(), results.traffic_cycles,
            results.send_cycles, rate);
        r.outcomes = results.outcomes;
        r.figure_bytes = bytes_;
        r.send_cycles = results.send_cycles;
        r.add_json = [&](json& j) {
            j["worker_firmware"] = worker_path;
            j["pattern"] = pattern_;
            j["send_type"] = send_type_;
            j["size"] = bytes_;
            j["packets"] = packets_;
            j["workers"] = workers_json(traffic, results.outcomes);
            j["traffic_cycles"] = results.traffic_cycles;
            j["send_cycles"] = results.send_cycles;
            j["deliveries"] = traffic.deliveries();
            j["data_mismatch_words"] = results.mismatch_words;
            j["bytes_per_cycle"] = rate;
            j["account"] = fabric::account_json(results.account);
            j["faults"] = faults.json();
            j["links"] = link_reports_json(s.runner());
        };
        r.print_body = [&] {
            s.print_router_table(bytes_, results.send_cycles);
            print_workers(traffic, results.outcomes);
            print_account(results.account);
            print_link_reports(s.runner());
        };
        return s.report(r);
    }

    static json workers_json(const fabric::FabricTraffic& traffic,
                             const std::vector<TrafficOutcome>& outcomes) {
        json workers = json::array();
        for (size_t i = 0; i < traffic.workers.size(); ++i) {
            const auto& w = traffic.workers[i];
            const TrafficOutcome& o = outcomes[i];
            workers.push_back({{"chip", w.target.core.chip},
                               {"core", w.target.core.core.str()},
                               {"dir", fabric::dir_name(w.dir)},
                               {"dests", w.dests},
                               {"route", w.dest.route},
                               {"outcome", fabric::outcome_name(o.launch.outcome)},
                               {"exit_status", o.launch.status.exit_status},
                               {"packets_sent", o.results.packets_sent},
                               {"send_cycles", o.results.cycles},
                               {"close_cycles", o.results.close_cycles},
                               {"cycles", o.launch.cycles}});
        }
        return workers;
    }

    static void print_workers(const fabric::FabricTraffic& traffic,
                              const std::vector<TrafficOutcome>& outcomes) {
        for (size_t i = 0; i < traffic.workers.size(); ++i) {
            const auto& w = traffic.workers[i];
            const TrafficOutcome& o = outcomes[i];
            fmt::print("worker {} {} -> chips {}: {} packets, {} cycles (send {}), {}\n",
                       w.target.core.str(), fabric::dir_name(w.dir), fmt::join(w.dests, ","),
                       o.results.packets_sent, o.launch.cycles, o.results.cycles,
                       fabric::outcome_name(o.launch.outcome));
        }
    }

    uint32_t bytes_ = 1024;
    uint32_t packets_ = 16;
    std::string pattern_ = "neighbour";
    std::string send_type_ = "fused-write-atomic-inc";
    std::string worker_elf_;
    FaultArgs faults_;
    PacketTraceArgs trace_;
    LinkDownArgs link_down_;
};

}  // namespace

CliCommandPtr add_fabric_run_command(CLI::App& app, bool& as_json) {
    return std::make_shared<FabricRun>(app, as_json);
}

}  // namespace fabricctl
