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
#include "fabric/launch.h"
#include "fabric/mesh_traffic.h"
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

// The worker cores of `soc` that are workers on every chip of `chips` once the cluster's
// harvesting is applied, in the descriptor's order.
std::vector<fabric::CoreCoord> workers_on_every_chip(const fabric::SocDescriptor& soc,
                                                     const fabric::ClusterDescriptor& cluster,
                                                     const std::vector<fabric::ChipId>& chips) {
    const fabric::HarvestedSocs socs(soc, cluster);
    std::vector<fabric::CoreCoord> out;
    for (const fabric::CoreCoord& c : soc.cores(fabric::CoreType::Worker)) {
        const bool everywhere = std::all_of(chips.begin(), chips.end(), [&](fabric::ChipId chip) {
            return socs(chip).core_type(c) == fabric::CoreType::Worker;
        });
        if (everywhere) out.push_back(c);
    }
    return out;
}

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

// One worker kernel: its core, direction, route and where its packets land.
struct WorkerPlan {
    fabric::CoreLocation core;
    FabricDir dir;
    size_t index;                       // source index: its region on every sink
    std::vector<fabric::ChipId> dests;  // chips its route writes, nearest first
    uint32_t route;
    uint32_t seed;
    TrafficKernel kernel;  // one destination: the route's chips
};

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

json stuck_json(const fabric::StuckReport& r) {
    return json{{"chip", r.core.chip},
                {"core", r.core.core.str()},
                {"component", r.component},
                {"kind", r.kind},
                {"reason", fabric::stuck_reason_name(r.reason)},
                {"status", r.status_name},
                {"stage", r.stage_name},
                {"stuck_at", r.stuck_at_name},
                {"detail", r.head.detail},
                {"heartbeat", r.head.heartbeat},
                {"unchanged_cycles", r.unchanged_cycles},
                {"at_cycle", r.at_cycle},
                {"core_state", fabric::run_state_name(r.run.state)},
                {"pc", r.run.pc ? json(*r.run.pc) : json(nullptr)},
                {"description", r.describe()}};
}

FabricCommands add_fabric_commands(CLI::App& app, FabricArgs& a) {
    auto* fab = app.add_subcommand("fabric", "The 1D fabric (line or ring) in the simulator");
    fab->require_subcommand(1);
    FabricCommands cmds;
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
        c->add_option("--max-cycles", a.max_cycles,
                      "Cycle budget for bring-up, traffic and termination together (default "
                      "50000000)")
            ->check(CLI::PositiveNumber);
        c->add_option("--stall-cycles", a.stall_cycles,
                      "Health monitor: a router whose heartbeat stands still this many cycles "
                      "while it should run is stuck (default 1000000)")
            ->check(CLI::PositiveNumber);
        c->add_option("--stall-router", a.stall_router,
                      "Simulator fault: freeze router CHIP:ETH (its eth channel) CYCLES after the "
                      "workers start (run) or after bring-up (up), as CHIP:ETH@CYCLES; the "
                      "health monitor must name it");
        c->add_flag("--json", a.json, "Print the result as JSON");
        c->add_flag("-q,--quiet", a.quiet, "No verdict line on success");
    }
    cmds.up
        ->add_option("--watch", a.watch,
                     "Let the fabric run this many cycles under the health monitor before "
                     "terminating it (default 0; with --stall-router: long enough to see it)")
        ->check(CLI::NonNegativeNumber);
    cmds.run->add_option("--size", a.size, "Payload bytes per packet (multiple of 16)")
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
    return cmds;
}

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
                         "--size {}: must be a non-zero multiple of 16 and at most {} on {}",
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

    // ---- the workers: core, route, where the data lands ----
    // A multicast writes one core position on every chip, so the workers are those no chip of
    // the line harvests.
    const std::vector<fabric::CoreCoord> workers_on_chip =
        workers_on_every_chip(soc, cluster, plan.chips);
    if (traffic && workers_on_chip.size() < 3) {
        fabric::fail(
            ErrorCategory::BadInput,
            "{}: fabric run needs 3 worker cores that every chip has, {} has {} (harvesting "
            "of {} applied)",
            soc_path, soc_path, workers_on_chip.size(), a.cluster);
    }
    const size_t n = plan.chips.size();
    const bool ring = plan.topology == pf::Topology::Ring;
    std::vector<WorkerPlan> wplans;
    const uint32_t dest_slots = std::min(a.packets, kMaxDestSlots);
    const uint32_t region_bytes = dest_slots * a.size;
    const uint32_t sink_base = traffic_sink_base(arch);
    if (traffic) {
        const auto add = [&](size_t i, FabricDir dir, uint32_t count) {
            WorkerPlan w;
            w.core = {plan.chips[i], workers_on_chip[dir == FabricDir::East ? 0 : 1]};
            w.dir = dir;
            w.index = wplans.size();
            for (uint32_t h = 1; h <= count; ++h) {
                const size_t j = dir == FabricDir::East ? (i + h) % n : (i + n - h) % n;
                w.dests.push_back(plan.chips[j]);
            }
            w.route = count == 1 ? pf::route_unicast(1) : pf::route_multicast(1, count);
            w.seed = 0x1000u * static_cast<uint32_t>(w.index + 1);
            wplans.push_back(std::move(w));
        };
        for (size_t i = 0; i < n; ++i) {
            if (a.pattern == "neighbour") {
                if (ring || i + 1 < n) {
                    add(i, FabricDir::East, 1);
                } else {
                    add(i, FabricDir::West, 1);
                }
            } else if (ring) {
                add(i, FabricDir::East, static_cast<uint32_t>(n - 1));
            } else {
                if (i + 1 < n) add(i, FabricDir::East, static_cast<uint32_t>(n - 1 - i));
                if (i > 0) add(i, FabricDir::West, static_cast<uint32_t>(i));
            }
        }
        const uint64_t sink_end = uint64_t{sink_base} + uint64_t{region_bytes} * wplans.size();
        if (sink_end > soc.worker_l1_size()) {
            fabric::fail(ErrorCategory::BadInput,
                         "--size {} x {} positions x {} workers do not fit the receiving worker's "
                         "L1 ({} B from {})",
                         a.size, dest_slots, wplans.size(), soc.worker_l1_size(),
                         fabric::hex32(sink_base));
        }
        const TrafficL1 l1 = traffic_l1(arch);
        const fabric::CoreCoord sink = workers_on_chip[2];
        for (auto& w : wplans) {
            TrafficKernel& k = w.kernel;
            k.core = w.core;
            k.name = fmt::format("worker {} ({})", w.core.str(), fabric::dir_name(w.dir));
            protocol::FabricDest d{};
            d.route = w.route;
            d.x = sink.x;
            d.y = sink.y;
            d.addr = static_cast<uint32_t>(sink_base + w.index * region_bytes);
            d.seed = w.seed;
            k.dests = {d};
            auto& g = k.args;
            g.channel = plan.worker_channel(w.core.chip, w.dir);
            g.send_type = static_cast<uint32_t>(pf::NocSendType::UnicastWrite);
            g.packet_bytes = a.size;
            g.packet_count = a.packets;
            g.num_dests = 1;
            g.dest_slots = dest_slots;
            g.dests_addr = l1.dests;
            g.conn_l1 = l1.conn;
            g.src_addr = l1.src;
            g.timeout_us = traffic_timeout_us(budget, arch);
            if (uint64_t{g.src_addr} + region_bytes > l1.src_end) {
                fabric::fail(ErrorCategory::BadInput,
                             "--size {} x {} positions do not fit the sending worker's L1 below "
                             "the mailbox",
                             a.size, dest_slots);
            }
        }
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
    fabric::SimDevice dev(std::move(soc), arch, std::move(opts));
    const auto left = [&]() -> uint64_t {
        return dev.cycles() >= budget ? 1 : budget - dev.cycles();
    };

    fabric::FabricRunner runner(dev, plan, std::move(router_elf));
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
        dev.freeze_core(*stall_core, dev.cycles() + stall->after);
    };
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
        std::vector<fabric::LaunchTarget> targets;
        for (const auto& w : wplans) targets.push_back({w.core, &*worker_elf, worker_rules});
        // Clear every sink region first (on every chip), so stale data cannot pass the check.
        for (fabric::ChipId c : plan.chips) {
            const std::vector<uint8_t> zeros(region_bytes * wplans.size(), 0);
            dev.write({c, workers_on_chip[2]}, sink_base, zeros);
        }
        fabric::LaunchOptions lo;
        lo.max_cycles = left();
        lo.poll_cycles = 1'000;
        size_t k = 0;
        inject_stall();  // the workers start now
        const auto wres = runner.run_workers(targets, lo, [&](const fabric::LaunchTarget&) {
            load_traffic_kernel(dev, arch, wplans[k++].kernel);
        });
        for (size_t i = 0; i < wplans.size(); ++i) {
            wout.push_back(read_traffic_outcome(dev, arch, wplans[i].kernel, wres[i]));
            traffic_cycles = std::max(traffic_cycles, wres[i].cycles);
            send_cycles = std::max<uint64_t>(send_cycles, wout[i].results.cycles);
            if (auto p = traffic_problem(wplans[i].kernel.name, wout[i], a.packets)) {
                problems.push_back(std::move(*p));
            }
        }
        if (problems.empty()) {
            runner.check_running();
            runner.check_health();
        }
    }

    // ---- terminate ----
    const std::vector<fabric::RouterSnapshot> final_snaps =
        terminate_fabric(runner, left(), problems);

    // ---- check what landed, and the router counters ----
    uint64_t data_mismatch_words = 0;
    uint64_t expect_deliveries = 0;
    if (traffic && problems.empty()) {
        for (const auto& w : wplans) {
            expect_deliveries += uint64_t{a.packets} * w.dests.size();
            for (fabric::ChipId c : w.dests) {
                const protocol::FabricDest& d = w.kernel.dests.front();
                std::vector<uint8_t> got(region_bytes);
                dev.read({c, workers_on_chip[2]}, d.addr, got);
                const fabric::PatternCheck check =
                    fabric::check_pattern(got, a.size, dest_slots, d.seed);
                if (check.bad_words) {
                    data_mismatch_words += check.bad_words;
                    problems.push_back(fmt::format(
                        "data from {} on chip {} (core {} at {}): {} words differ, first at +{}",
                        w.core.str(), c, workers_on_chip[2].str(), fabric::hex32(d.addr),
                        check.bad_words, check.first_bad));
                }
            }
        }
        check_router_counters(final_snaps, expect_deliveries, problems);
    }

    // ---- report ----
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
            fabric::topology_name(plan.topology), fmt::join(plan.chips, ","), n,
            plan.routers.size(), wplans.size(), a.packets, a.size, a.pattern, expect_deliveries,
            runner.ready_cycles(), traffic_cycles, send_cycles,
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
            for (size_t i = 0; i < wplans.size(); ++i) {
                const auto& w = wplans[i];
                json wj{{"chip", w.core.chip},
                        {"core", w.core.core.str()},
                        {"dir", fabric::dir_name(w.dir)},
                        {"dests", w.dests},
                        {"route", w.route},
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
        std::cout << j.dump(2) << std::endl;
    } else {
        print_router_table(final_snaps, plan, fig_bytes, send_cycles, traffic);
        if (traffic) {
            for (size_t i = 0; i < wplans.size(); ++i) {
                const auto& w = wplans[i];
                fmt::print("worker {} {} -> chips {}: {} packets, {} cycles (send {}), {}\n",
                           w.core.str(), fabric::dir_name(w.dir), fmt::join(w.dests, ","),
                           wout[i].results.packets_sent, wout[i].launch.cycles,
                           wout[i].results.cycles, fabric::outcome_name(wout[i].launch.outcome));
            }
        }
        std::fflush(stdout);
    }
    if (!ok || !a.quiet) log_line(verdict);
    return code;
#endif
}

}  // namespace fabricctl
