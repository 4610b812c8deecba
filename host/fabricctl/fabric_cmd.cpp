// fabricctl fabric up | run: plan a 1D fabric over a cluster descriptor, bring it up in the
// simulator (FabricRunner over SimDevice), optionally run worker traffic through it (the
// fabric_traffic kernel on worker cores), check every byte that landed, terminate, report.
#include "fabric_cmd.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "cli_common.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/fabric_traffic.h"
#include "fabric/interrupt.h"
#include "fabric/launch.h"
#include "fabric/mesh_traffic.h"
#include "fabric/progress.h"
#include "fabric/soc_descriptor.h"
#include "protocol/fabric.h"
#include "protocol/test_kernels.h"
#include "traffic.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace fabricctl {

namespace pf = protocol::fabric;
using fabric::ErrorCategory;
using fabric::FabricDir;
using nlohmann::json;

namespace {

// The options of `fabric up` and `fabric run` (one parse fills one of them).
struct FabricArgs {
    std::string cluster;
    std::string soc;
    std::string topology = "line";
    std::string chips;  // "0,1,2,3"; empty: 0..n-1
    uint32_t link = 0;
    uint32_t size = 1024;
    uint32_t packets = 16;
    std::string pattern = "neighbour";
    std::string router_elf;
    std::string worker_elf;
    std::string base_fw;
    bool no_base_fw = false;
    uint64_t max_cycles = 0;    // 0: kDefaultFabricMaxCycles
    uint64_t stall_cycles = 0;  // 0: fabric::kDefaultStallCycles
    uint64_t watch = 0;         // `up`: let the fabric run this long under the health monitor
    std::string stall_router;   // sim fault: "CHIP:ETH@CYCLES", freeze that router's core
    bool json = false;
    bool quiet = false;
};

std::vector<fabric::ChipId> parse_chips(const std::string& text, uint32_t chip_count) {
    if (text.empty()) {
        std::vector<fabric::ChipId> all;
        for (uint32_t c = 0; c < chip_count; ++c) all.push_back(c);
        return all;
    }
    return parse_number_list("--chips", text, "chip number");
}

// --stall-router CHIP:ETH@CYCLES
struct StallFault {
    fabric::ChipId chip = 0;
    uint32_t eth = 0;
    uint64_t after = 0;
};

std::optional<StallFault> parse_stall_router(const std::string& text) {
    if (text.empty()) return std::nullopt;
    const auto number = [&](const std::string& item, uint64_t max) -> uint64_t {
        if (item.empty() || item.size() > 19 ||
            item.find_first_not_of("0123456789") != std::string::npos || std::stoull(item) > max) {
            fabric::fail(ErrorCategory::BadInput,
                         "--stall-router {}: expected CHIP:ETH@CYCLES (e.g. 0:8@20000), '{}' is "
                         "not a number in range",
                         text, item);
        }
        return std::stoull(item);
    };
    const size_t colon = text.find(':');
    const size_t at = text.find('@');
    if (colon == std::string::npos || at == std::string::npos || at < colon) {
        fabric::fail(ErrorCategory::BadInput,
                     "--stall-router {}: expected CHIP:ETH@CYCLES (e.g. 0:8@20000)", text);
    }
    StallFault f;
    f.chip = static_cast<fabric::ChipId>(number(text.substr(0, colon), 0xFFFF));
    f.eth = static_cast<uint32_t>(number(text.substr(colon + 1, at - colon - 1), 0xFFFF));
    f.after = number(text.substr(at + 1), UINT64_MAX / 4);
    return f;
}

void print_router_table(const std::vector<fabric::RouterSnapshot>& snaps,
                        const fabric::FabricPlan& plan, uint32_t payload, uint64_t cycles,
                        bool traffic) {
    fmt::print("{:<8} {:<5} {:<5} {:<6} {:<15} {:<18} {:>8} {:>8} {:>9} {:>9}{}\n", "router", "eth",
               "core", "peer", "", "status", "sent", "received", "delivered", "forwarded",
               traffic ? fmt::format(" {:>11} {:>8}", "bytes sent", "B/cycle") : "");
    for (size_t i = 0; i < snaps.size(); ++i) {
        const auto& s = snaps[i];
        const auto& p = plan.routers[i];
        const std::string flags = fmt::format("{}{}", p.config.is_master ? "master" : "",
                                              p.config.dateline ? " dateline" : "");
        std::string figs;
        if (traffic) {
            figs = fmt::format(" {:>11} {:>8.3f}", s.sent() * payload,
                               cycles ? static_cast<double>(s.sent() * payload) / cycles : 0.0);
        }
        fmt::print(
            "{:<8} {:<5} {:<5} {:<6} {:<15} {:<18} {:>8} {:>8} {:>9} {:>9}{}\n",
            fmt::format("{}:{}", s.chip, fabric::dir_name(s.dir)), s.eth_channel, s.core.core.str(),
            fmt::format("{}:{}", p.config.peer_chip_id, p.config.peer_eth_channel), flags,
            s.status_name(), s.sent(), s.received(), s.block.delivered, s.block.forwarded, figs);
    }
}

}  // namespace

namespace {

// Plan, bring up, (run traffic,) terminate, check and report: the whole of `fabric up|run`.
int fabric_main(const FabricArgs& a, bool traffic) {
    const auto cluster = fabric::ClusterDescriptor::load_file(a.cluster);
    const hal::Arch arch = cluster.arch();
    const hal::ArchMap& am = hal::arch_map(arch);
    const std::string soc_path = a.soc.empty() ? find_default_descriptor(arch) : a.soc;
    auto soc = fabric::SocDescriptor::load_file(soc_path);
    if (soc.arch() != arch) {
        fabric::fail(ErrorCategory::BadInput, "{}: descriptor is for {} but cluster {} is {}",
                     soc_path, fabric::arch_name(soc.arch()), a.cluster, fabric::arch_name(arch));
    }
    const uint64_t budget = a.max_cycles ? a.max_cycles : kDefaultFabricMaxCycles;
    const std::optional<StallFault> stall = parse_stall_router(a.stall_router);

    // ---- the plan ----
    fabric::FabricOptions fo;
    fo.topology = a.topology == "ring" ? pf::Topology::Ring : pf::Topology::Line;
    fo.chips = parse_chips(a.chips, cluster.chip_count());
    fo.link_index = a.link;
    if (traffic) {
        const uint32_t max = pf::max_payload_bytes(am);
        if (a.size == 0 || a.size % 16 != 0 || a.size > max) {
            fabric::fail(ErrorCategory::BadInput,
                         "--bytes {}: must be a non-zero multiple of 16 and at most {} on {}",
                         a.size, max, fabric::arch_name(arch));
        }
        if (a.packets == 0 || a.packets > kMaxPackets) {
            fabric::fail(ErrorCategory::BadInput, "--packets {}: must be 1..{}", a.packets,
                         kMaxPackets);
        }
        fo.payload_bytes = std::max(pf::kDefaultPayloadBytes, a.size);
    }
    fabric::FabricPlan plan = [&] {
        try {
            return fabric::plan_fabric(cluster, soc, fo);
        } catch (const fabric::Error& e) {
            if (e.category() == ErrorCategory::BadInput && a.chips.empty() &&
                std::string(e.what()).find("not connected") != std::string::npos) {
                fabric::fail(ErrorCategory::BadInput,
                             "{} (the default --chips is 0..{}; pass --chips)", e.what(),
                             cluster.chip_count() - 1);
            }
            throw;
        }
    }();
    const uint32_t payload_cap = plan.routers.front().config.payload_bytes;

    // ---- images ----
    const std::string router_path =
        firmware_path(a.router_elf, arch, "fabric_router", "--router-elf");
    auto router_elf = fabric::ElfImage::load_file(router_path);
    for (const auto& r : plan.routers) {  // before the model is built: fail fast
        router_elf.check_placement(fabric::router_placement(r, am, soc.eth_l1_size()));
    }
    std::optional<fabric::ElfImage> worker_elf;
    std::string worker_path;
    if (traffic) {
        worker_path = firmware_path(a.worker_elf, arch, "fabric_traffic", "--worker-elf");
        worker_elf = fabric::ElfImage::load_file(worker_path);
    }
    auto worker_rules = fabric::erisc_placement(am, soc.worker_l1_size());
    worker_rules.target = fmt::format("{} worker core", fabric::arch_name(arch));
    if (worker_elf) worker_elf->check_placement(worker_rules);
    const std::optional<BaseFirmware> base_fw =
        choose_base_firmware(a.base_fw, !a.no_base_fw, arch);

    // ---- the workers: core, route, where the data lands (fabric/fabric_traffic.h) ----
    std::optional<fabric::FabricTraffic> plan_traffic;
    if (traffic) {
        fabric::FabricTrafficOptions to;
        to.pattern = *fabric::parse_fabric_traffic_pattern(a.pattern);
        to.packets = a.packets;
        to.packet_bytes = a.size;
        to.timeout_us = fabric::traffic_timeout_us(budget, arch);
        const fabric::HarvestedSocs socs(soc, cluster);  // no worker on a harvested row/column
        plan_traffic = fabric::plan_fabric_traffic(plan, std::cref(socs), *worker_elf, to);
    }

#ifndef FABRIC_HAVE_SIM
    (void)payload_cap;
    (void)stall;
    fabric::fail(ErrorCategory::Unsupported,
                 "this fabricctl was built without the simulator (sim_model), 'fabric' is "
                 "unavailable");
#else
    fabric::SimDeviceOptions opts;
    opts.cluster = cluster;
    if (base_fw) opts.wh_base_firmware = base_fw->image;
    fabric::SimDevice model(std::move(soc), arch, std::move(opts));
    fabric::InterruptibleDevice dev(model);
    const auto left = [&]() -> uint64_t {
        return dev.cycles() >= budget ? 1 : budget - dev.cycles();
    };

    fabric::FabricRunner runner(dev, plan, std::move(router_elf));
    const auto progress = progress_on_terminal(traffic ? "fabric run" : "fabric up");
    const auto show_stage = [&](const char* stage) {
        if (progress) progress->stage(stage);
    };
    if (progress) {
        progress->set_expected(plan_traffic ? plan_traffic->deliveries() : 0);
        progress->set_delivered_counter([&runner] { return fabric::delivered_so_far(runner); });
        dev.after_each_slice([p = progress.get()](uint64_t cycles) { p->tick(cycles); });
    }
    if (a.stall_cycles) runner.set_stall_cycles(a.stall_cycles);
    // The router --stall-router freezes (checked before anything runs).
    std::optional<fabric::CoreLocation> stall_core;
    if (stall) {
        std::string routers;
        for (const auto& r : plan.routers) {
            if (r.chip == stall->chip && r.eth_channel == stall->eth) stall_core = r.core;
            routers += fmt::format("{}{}:{}", routers.empty() ? "" : ", ", r.chip, r.eth_channel);
        }
        if (!stall_core) {
            fabric::fail(ErrorCategory::BadInput,
                         "--stall-router {}: chip {} eth {} is not a router of this fabric "
                         "(routers: {})",
                         a.stall_router, stall->chip, stall->eth, routers);
        }
    }
    const auto inject_stall = [&] {
        if (!stall_core) return;
        model.freeze_core(*stall_core, model.cycles() + stall->after);
    };
    show_stage("bring-up");
    runner.bring_up(budget);
    runner.check_health();
    if (!traffic) {
        inject_stall();
        uint64_t watch = a.watch;
        if (stall && watch == 0) watch = stall->after + 2 * runner.stall_cycles();
        if (watch) runner.monitor(std::min(watch, left()));
    }

    // ---- traffic ----
    std::vector<TrafficOutcome> wout;
    uint64_t traffic_cycles = 0;  // workers' launch .. the last one's exit (host poll granularity)
    uint64_t send_cycles = 0;     // the longest worker's open .. last send (its own clock)
    std::vector<std::string> problems;
    if (traffic) {
        fabric::LaunchOptions lo;
        lo.max_cycles = left();
        lo.poll_cycles = 1'000;
        show_stage("traffic");
        inject_stall();  // the workers start now
        const fabric::FabricTrafficRun run = fabric::run_fabric_traffic(runner, *plan_traffic, lo);
        traffic_cycles = run.cycles;
        for (size_t i = 0; i < run.workers.size(); ++i) {
            const auto& o = run.workers[i];
            wout.push_back(o);
            send_cycles = std::max<uint64_t>(send_cycles, o.results.cycles);
            if (auto p =
                    fabric::traffic_problem(plan_traffic->workers[i].name, wout[i], a.packets)) {
                problems.push_back(std::move(*p));
            }
        }
        if (problems.empty()) {
            runner.check_running();
            runner.check_health();
        }
    }

    // ---- terminate ----
    show_stage("termination");
    const std::vector<fabric::RouterSnapshot> final_snaps =
        fabric::terminate_fabric(runner, left(), problems);

    // ---- check what landed, and the router counters ----
    uint64_t data_mismatch_words = 0;
    const uint64_t expect_deliveries = plan_traffic ? plan_traffic->deliveries() : 0;
    if (traffic && problems.empty()) {
        for (const auto& m : fabric::check_fabric_landed(dev, *plan_traffic)) {
            data_mismatch_words += m.check.bad_words;
            problems.push_back(fmt::format(
                "data from {} on chip {} (core {} at {}): {} words differ, first at +{}",
                plan_traffic->workers[m.worker].target.core.str(), m.chip, plan_traffic->sink.str(),
                fabric::hex32(m.addr), m.check.bad_words, m.check.first_bad));
        }
        fabric::check_router_counters(final_snaps, expect_deliveries, problems);
    }

    // ---- report ----
    if (progress) progress->finish();
    const bool ok = problems.empty();
    const int code = ok ? kOk : traffic_failure_code(wout);
    const uint32_t fig_bytes = traffic ? a.size : payload_cap;
    uint64_t total_bytes = 0;
    for (const auto& s : final_snaps) total_bytes += s.sent() * fig_bytes;
    std::string verdict;
    if (ok && traffic) {
        verdict = fmt::format(
            "fabric run passed: {} {} ({} chips, {} routers), {} worker(s) x {} packets of {} B "
            "({}), {} deliveries checked; bring-up {} cycles, traffic {} cycles (sending {}), "
            "{:.3f} B/cycle over all links while sending",
            fabric::topology_name(plan.topology), fmt::join(plan.chips, ","), plan.chips.size(),
            plan.routers.size(), plan_traffic->workers.size(), a.packets, a.size, a.pattern,
            expect_deliveries, runner.ready_cycles(), traffic_cycles, send_cycles,
            bytes_per_cycle(total_bytes, send_cycles));
    } else if (ok) {
        verdict = fmt::format(
            "fabric up: {} {} ({} routers): handshake {} cycles, ready {} cycles, terminated",
            fabric::topology_name(plan.topology), fmt::join(plan.chips, ","), plan.routers.size(),
            runner.handshake_cycles(), runner.ready_cycles());
    } else {
        std::string all;
        for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
        verdict = fmt::format("fabric {} failed: {}", traffic ? "run" : "up", all);
    }

    if (a.json) {
        json routers = json::array();
        for (size_t i = 0; i < final_snaps.size(); ++i) {
            routers.push_back(router_json(final_snaps[i], plan.routers[i], fig_bytes, send_cycles));
        }
        json j{{"ok", ok},
               {"command", traffic ? "run" : "up"},
               {"arch", fabric::arch_name(arch)},
               {"cluster", a.cluster},
               {"soc", soc_path},
               {"base_firmware", base_fw ? json(base_fw->path) : json(nullptr)},
               {"router_firmware", router_path},
               {"topology", fabric::topology_name(plan.topology)},
               {"chips", plan.chips},
               {"link", a.link},
               {"payload_bytes", payload_cap},
               {"sender_slots", plan.routers.front().config.sender_slots[0]},
               {"receiver_slots", plan.routers.front().config.receiver_slots[0]},
               {"handshake_cycles", runner.handshake_cycles()},
               {"ready_cycles", runner.ready_cycles()},
               {"routers", routers},
               {"device_cycles", dev.cycles()},
               {"max_cycles", budget},
               {"stall_cycles", runner.stall_cycles()},
               {"verdict", verdict},
               {"problems", problems},
               {"exit_code", code}};
        if (traffic) {
            json workers = json::array();
            for (size_t i = 0; i < plan_traffic->workers.size(); ++i) {
                const auto& w = plan_traffic->workers[i];
                json wj{{"chip", w.target.core.chip},
                        {"core", w.target.core.core.str()},
                        {"dir", fabric::dir_name(w.dir)},
                        {"dests", w.dests},
                        {"route", w.dest.route},
                        {"outcome", fabric::outcome_name(wout[i].launch.outcome)},
                        {"exit_status", wout[i].launch.status.exit_status},
                        {"packets_sent", wout[i].results.packets_sent},
                        {"send_cycles", wout[i].results.cycles},
                        {"close_cycles", wout[i].results.close_cycles},
                        {"cycles", wout[i].launch.cycles}};
                workers.push_back(std::move(wj));
            }
            j["worker_firmware"] = worker_path;
            j["pattern"] = a.pattern;
            j["size"] = a.size;
            j["packets"] = a.packets;
            j["workers"] = workers;
            j["traffic_cycles"] = traffic_cycles;
            j["send_cycles"] = send_cycles;
            j["deliveries"] = expect_deliveries;
            j["data_mismatch_words"] = data_mismatch_words;
            j["bytes_per_cycle"] = bytes_per_cycle(total_bytes, send_cycles);
        }
        print_json(j);
    } else {
        print_router_table(final_snaps, plan, fig_bytes, send_cycles, traffic);
        if (traffic) {
            for (size_t i = 0; i < plan_traffic->workers.size(); ++i) {
                const auto& w = plan_traffic->workers[i];
                fmt::print("worker {} {} -> chips {}: {} packets, {} cycles (send {}), {}\n",
                           w.target.core.str(), fabric::dir_name(w.dir), fmt::join(w.dests, ","),
                           wout[i].results.packets_sent, wout[i].launch.cycles,
                           wout[i].results.cycles, fabric::outcome_name(wout[i].launch.outcome));
            }
        }
        flush_stdout();
    }
    if (!ok || !a.quiet) log_line(verdict);
    return code;
#endif
}

// `fabric up` (no traffic) or `fabric run`; both read the one FabricArgs the parse filled.
class FabricCommand final : public CliCommand {
  public:
    FabricCommand(CLI::App* cmd, std::shared_ptr<const FabricArgs> args, bool& as_json,
                  bool traffic)
        : cmd_(cmd), args_(std::move(args)), as_json_(as_json), traffic_(traffic) {}

    bool parsed() const override { return cmd_->parsed(); }
    int run() const override {
        FabricArgs a = *args_;
        a.json = as_json_;
        return fabric_main(a, traffic_);
    }

  private:
    CLI::App* cmd_;
    std::shared_ptr<const FabricArgs> args_;
    bool& as_json_;
    bool traffic_;
};

}  // namespace

CliCommands add_fabric_commands(CLI::App& app, bool& as_json) {
    auto* fab = app.add_subcommand("fabric", "The 1D fabric (line or ring) in the simulator");
    fab->require_subcommand(1);
    const auto args = std::make_shared<FabricArgs>();
    FabricArgs& a = *args;
    struct {
        CLI::App* up;
        CLI::App* run;
    } cmds;
    cmds.up = fab->add_subcommand("up", "Bring the fabric up, show every router, terminate it");
    cmds.run = fab->add_subcommand(
        "run", "Bring the fabric up, send worker traffic through it, check it, terminate");
    for (CLI::App* c : {cmds.up, cmds.run}) {
        c->add_option("--cluster", a.cluster, "Cluster descriptor (tt-umd YAML)")->required();
        c->add_option("--soc", a.soc, "SoC descriptor (default: the cluster arch's)");
        c->add_option("--topology", a.topology, "line or ring")
            ->check(CLI::IsMember({"line", "ring"}))
            ->capture_default_str();
        c->add_option("--chips", a.chips,
                      "Chips in line/ring order, e.g. 0,1,2,3 (default: every chip, 0..n-1)");
        c->add_option("--link", a.link, "Which link between two neighbours (ascending channel)")
            ->capture_default_str();
        c->add_option("--router-elf", a.router_elf,
                      "Router firmware (default: this build's fabric_router.elf)");
        auto* base = c->add_option("--base-fw", a.base_fw,
                                   "Wormhole base firmware on the router cores (default: this "
                                   "build's erisc_base.elf)");
        c->add_flag("--no-base-fw", a.no_base_fw, "Start the routers bare metal (reset PC)")
            ->excludes(base);
        add_max_cycles_option(*c, a.max_cycles,
                              "Cycle budget for bring-up, traffic and termination together "
                              "(default 50000000)");
        c->add_option("--stall-cycles", a.stall_cycles,
                      "Health monitor: a router whose heartbeat stands still this many cycles "
                      "while it should run is stuck (default 1000000)")
            ->check(CLI::PositiveNumber);
        c->add_option("--stall-router", a.stall_router,
                      "Simulator fault: freeze router CHIP:ETH (its eth channel) CYCLES after the "
                      "workers start (run) or after bring-up (up), as CHIP:ETH@CYCLES; the "
                      "health monitor must name it");
        c->add_flag("--json", as_json, "Print the result as JSON");
        c->add_flag("-q,--quiet", a.quiet, "No verdict line on success");
    }
    cmds.up
        ->add_option("--watch", a.watch,
                     "Let the fabric run this many cycles under the health monitor before "
                     "terminating it (default 0; with --stall-router: long enough to see it)")
        ->check(CLI::NonNegativeNumber);
    add_bytes_option(*cmds.run, a.size, "Payload bytes per packet (multiple of 16)")
        ->capture_default_str();
    cmds.run->add_option("--packets", a.packets, "Packets per worker")->capture_default_str();
    cmds.run
        ->add_option("--pattern", a.pattern,
                     "neighbour: each chip to the next one; all-to-all: each chip to every "
                     "other (multicast in each direction)")
        ->check(CLI::IsMember({"neighbour", "all-to-all"}))
        ->capture_default_str();
    cmds.run->add_option("--worker-elf", a.worker_elf,
                         "Worker traffic kernel (default: this build's fabric_traffic.elf)");
    return {std::make_shared<FabricCommand>(cmds.up, args, as_json, false),
            std::make_shared<FabricCommand>(cmds.run, args, as_json, true)};
}

}  // namespace fabricctl
