// fabricctl fabric up | run: plan a 1D fabric over a cluster descriptor, bring it up in the
// simulator (FabricRunner over SimDevice), optionally run worker traffic through it (the
// fabric_traffic kernel on worker cores), check every byte that landed, terminate, report.
#include "fabric_cmd.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
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
#include "fabric/soc_descriptor.h"
#include "protocol/fabric.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace fabricctl {

namespace pf = protocol::fabric;
using fabric::ErrorCategory;
using fabric::FabricDir;
using nlohmann::json;

namespace {

// Default cycle budget of a fabric command: bring-up, traffic and termination together.
constexpr uint64_t kDefaultFabricMaxCycles = 50'000'000;
// Per-send positions a worker cycles through (each destination region holds this many packets).
constexpr uint32_t kMaxDestSlots = 8;
constexpr uint32_t kMaxPackets = 1'000'000;

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

std::string load_image_path(const std::string& given, hal::Arch arch, const std::string& name,
                            const std::string& option) {
    if (!given.empty()) return given;
    std::string looked;
    if (auto p = find_firmware(arch, name, &looked)) return *p;
    fabric::fail(ErrorCategory::BadInput,
                 "no {}.elf for {} found (looked in: {}); build the firmware or pass {}", name,
                 fabric::arch_name(arch), looked, option);
}

// One worker kernel: its core, direction, route and where its packets land.
struct WorkerPlan {
    fabric::CoreLocation core;
    FabricDir dir;
    size_t index;                       // source index: its region on every sink
    std::vector<fabric::ChipId> dests;  // chips its route writes, nearest first
    uint32_t route;
    uint32_t seed;
    protocol::FabricTrafficArgs args{};
    protocol::FabricDest dest{};
};

// `cycles`: the send phase the B/cycle figures are over.
json snapshot_json(const fabric::RouterSnapshot& s, const fabric::RouterPlacement& p,
                   uint32_t payload, uint64_t cycles) {
    const pf::RouterStatusBlock& b = s.block;
    json j{{"chip", s.chip},
           {"eth_channel", s.eth_channel},
           {"core", s.core.core.str()},
           {"dir", fabric::dir_name(s.dir)},
           {"peer_chip", p.config.peer_chip_id},
           {"peer_eth_channel", p.config.peer_eth_channel},
           {"is_master", p.config.is_master != 0},
           {"dateline", p.config.dateline != 0},
           {"status", s.status_name()},
           {"stage", s.stage_name()},
           {"stuck_at", s.stuck_at_name()},
           {"detail", b.detail},
           {"core_state", fabric::run_state_name(s.run.state)},
           {"sent", {b.sent[0], b.sent[1], b.sent[2]}},
           {"completed", {b.completed[0], b.completed[1], b.completed[2]}},
           {"received", {b.received[0], b.received[1]}},
           {"delivered", b.delivered},
           {"forwarded", b.forwarded},
           {"bad_packets", b.bad_packets},
           {"undrained", b.undrained},
           {"heartbeat", b.heartbeat},
           {"packets_sent", s.sent()},
           {"packets_received", s.received()},
           {"bytes_sent", s.sent() * payload},
           {"bytes_received", s.received() * payload}};
    j["bytes_per_cycle"] = cycles ? static_cast<double>(s.sent() * payload) / cycles : 0.0;
    return j;
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
        load_image_path(a.router_elf, arch, "fabric_router", "--router-elf");
    auto router_elf = fabric::ElfImage::load_file(router_path);
    for (const auto& r : plan.routers) {  // before the model is built: fail fast
        router_elf.check_placement(fabric::router_placement(r, am, soc.eth_l1_size()));
    }
    std::optional<fabric::ElfImage> worker_elf;
    std::string worker_path;
    if (traffic) {
        worker_path = load_image_path(a.worker_elf, arch, "fabric_traffic", "--worker-elf");
        worker_elf = fabric::ElfImage::load_file(worker_path);
    }
    auto worker_rules = fabric::erisc_placement(am, soc.worker_l1_size());
    worker_rules.target = fmt::format("{} worker core", fabric::arch_name(arch));
    if (worker_elf) worker_elf->check_placement(worker_rules);
    const std::optional<BaseFirmware> base_fw = choose_base_firmware(a.base_fw, !a.no_base_fw, arch);

    // ---- the workers: core, route, where the data lands ----
    const auto& workers_on_chip = soc.cores(fabric::CoreType::Worker);
    if (traffic && workers_on_chip.size() < 3) {
        fabric::fail(ErrorCategory::BadInput,
                     "{}: fabric run needs 3 worker cores per chip, {} has {}", soc_path, soc_path,
                     workers_on_chip.size());
    }
    const size_t n = plan.chips.size();
    const bool ring = plan.topology == pf::Topology::Ring;
    std::vector<WorkerPlan> wplans;
    const uint32_t dest_slots = std::min(a.packets, kMaxDestSlots);
    const uint32_t region_bytes = dest_slots * a.size;
    const uint32_t sink_base = pf::align_up(
        protocol::test_mailbox_addr(arch) + static_cast<uint32_t>(sizeof(protocol::TestMailbox)),
        4096);
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
        const uint32_t l1 = protocol::test_l1_base(arch);
        const fabric::CoreCoord sink = workers_on_chip[2];
        const uint32_t timeout_us =
            static_cast<uint32_t>(std::clamp<uint64_t>(budget / am.aiclk_mhz / 2, 1, 20'000));
        for (auto& w : wplans) {
            w.dest = protocol::FabricDest{
                w.route, sink.x, sink.y, static_cast<uint32_t>(sink_base + w.index * region_bytes),
                w.seed,  0,      0,      0, 0, 0, 0, 0};
            auto& g = w.args;
            g.channel = plan.worker_channel(w.core.chip, w.dir);
            g.send_type = static_cast<uint32_t>(pf::NocSendType::UnicastWrite);
            g.packet_bytes = a.size;
            g.packet_count = a.packets;
            g.num_dests = 1;
            g.dest_slots = dest_slots;
            g.dests_addr = l1;
            g.conn_l1 = l1 + 0x100;
            g.src_addr = l1 + 0x400;
            g.timeout_us = timeout_us;
            g.flags = 0;
            g.start_addr = 0;
            if (g.src_addr + region_bytes > protocol::test_mailbox_addr(arch)) {
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
    std::vector<fabric::LaunchResult> wres;
    std::vector<protocol::FabricTrafficResults> wout(wplans.size());
    std::vector<uint32_t> wstatus(wplans.size());
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
        wres = runner.run_workers(targets, lo, [&](const fabric::LaunchTarget& t) {
            const WorkerPlan& w = wplans[k++];
            (void)t;
            std::vector<uint8_t> d(sizeof(w.dest));
            std::memcpy(d.data(), &w.dest, sizeof(w.dest));
            dev.write(w.core, w.args.dests_addr, d);
            protocol::TestMailbox m{};
            m.magic = protocol::kTestMailboxMagic;
            m.role = static_cast<uint32_t>(protocol::KernelRole::Master);
            m.num_args = sizeof(w.args) / 4;
            std::memcpy(m.args, &w.args, sizeof(w.args));
            std::vector<uint8_t> mb(sizeof(m));
            std::memcpy(mb.data(), &m, sizeof(m));
            dev.write(w.core, protocol::test_mailbox_addr(arch), mb);
        });
        for (size_t i = 0; i < wplans.size(); ++i) {
            traffic_cycles = std::max(traffic_cycles, wres[i].cycles);
            protocol::TestMailbox m{};
            std::vector<uint8_t> mb(sizeof(m));
            dev.read(wplans[i].core, protocol::test_mailbox_addr(arch), mb);
            std::memcpy(&m, mb.data(), sizeof(m));
            std::memcpy(&wout[i], m.results, sizeof(wout[i]));
            send_cycles = std::max<uint64_t>(send_cycles, wout[i].cycles);
            wstatus[i] = m.status;
            const auto& r = wres[i];
            const std::string where = fmt::format("worker {} ({})", wplans[i].core.str(),
                                                  fabric::dir_name(wplans[i].dir));
            if (r.outcome == fabric::LaunchOutcome::Trapped) {
                problems.push_back(fmt::format("{} trapped: {} at pc {}", where, r.status.trap_name,
                                               fabric::hex32(r.status.trap_pc)));
            } else if (r.outcome == fabric::LaunchOutcome::Timeout) {
                problems.push_back(
                    fmt::format("{} still running after {} cycles", where, r.cycles));
            } else if (r.status.exit_status != 0 ||
                       m.status != static_cast<uint32_t>(protocol::TestStatus::Done)) {
                problems.push_back(fmt::format(
                    "{} failed: exit {}, code {}, step {}, detail {}, hal status {}, stuck at {}, "
                    "packets sent {}",
                    where, r.status.exit_status, wout[i].failure.code, wout[i].failure.step,
                    wout[i].failure.detail, wout[i].failure.hal_status, fabric::hex32(m.stuck_at),
                    wout[i].packets_sent));
            } else if (wout[i].packets_sent != a.packets) {
                problems.push_back(fmt::format("{} sent {} packets, expected {}", where,
                                               wout[i].packets_sent, a.packets));
            }
        }
        if (problems.empty()) {
            runner.check_running();
            runner.check_health();
        }
    }

    // ---- terminate ----
    std::vector<fabric::RouterSnapshot> final_snaps;
    if (problems.empty()) {
        final_snaps = runner.terminate(pf::Termination::Graceful, left());
    } else {
        final_snaps = runner.status();
        try {
            (void)runner.terminate(pf::Termination::Immediate, left());
        } catch (const fabric::Error& e) {
            problems.push_back(e.what());
        }
    }

    // ---- check what landed, and the router counters ----
    uint64_t data_mismatch_words = 0;
    uint64_t expect_deliveries = 0;
    if (traffic && problems.empty()) {
        for (const auto& w : wplans) {
            expect_deliveries += uint64_t{a.packets} * w.dests.size();
            for (fabric::ChipId c : w.dests) {
                std::vector<uint8_t> got(region_bytes);
                dev.read({c, workers_on_chip[2]}, w.dest.addr, got);
                uint32_t bad = 0;
                uint32_t first = 0;
                for (uint32_t p = 0; p < dest_slots; ++p) {
                    for (uint32_t i = 0; i < a.size / 4; ++i) {
                        uint32_t v;
                        std::memcpy(&v, got.data() + p * a.size + i * 4, 4);
                        if (v != protocol::pattern_word(w.seed + p, i)) {
                            if (bad++ == 0) first = p * a.size + i * 4;
                        }
                    }
                }
                if (bad) {
                    data_mismatch_words += bad;
                    problems.push_back(fmt::format(
                        "data from {} on chip {} (core {} at {}): {} words differ, first at +{}",
                        w.core.str(), c, workers_on_chip[2].str(), fabric::hex32(w.dest.addr), bad,
                        first));
                }
            }
        }
        uint64_t sent = 0, received = 0, delivered = 0;
        for (const auto& s : final_snaps) {
            sent += s.sent();
            received += s.received();
            delivered += s.block.delivered;
            if (s.block.bad_packets) {
                problems.push_back(fmt::format("chip {} eth {} rejected {} packets", s.chip,
                                               s.eth_channel, s.block.bad_packets));
            }
        }
        if (sent != received) {
            problems.push_back(
                fmt::format("routers sent {} packets but received {}", sent, received));
        }
        if (delivered != expect_deliveries) {
            problems.push_back(fmt::format("routers delivered {} packets, expected {}", delivered,
                                           expect_deliveries));
        }
    }

    // ---- report ----
    const bool ok = problems.empty();
    int code = kOk;
    if (!ok) {
        code = kFabric;
        for (const auto& r : wres) {
            if (r.outcome == fabric::LaunchOutcome::Timeout) code = kTimeout;
        }
        for (const auto& r : wres) {
            if (r.outcome == fabric::LaunchOutcome::Trapped) code = kTrap;
        }
    }
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
            send_cycles ? static_cast<double>(total_bytes) / send_cycles : 0.0);
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
            routers.push_back(
                snapshot_json(final_snaps[i], plan.routers[i], fig_bytes, send_cycles));
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
                        {"outcome", fabric::outcome_name(wres[i].outcome)},
                        {"exit_status", wres[i].status.exit_status},
                        {"packets_sent", wout[i].packets_sent},
                        {"send_cycles", wout[i].cycles},
                        {"close_cycles", wout[i].close_cycles},
                        {"cycles", wres[i].cycles}};
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
            j["bytes_per_cycle"] =
                send_cycles ? static_cast<double>(total_bytes) / send_cycles : 0.0;
        }
        std::cout << j.dump(2) << std::endl;
    } else {
        print_router_table(final_snaps, plan, fig_bytes, send_cycles, traffic);
        if (traffic) {
            for (size_t i = 0; i < wplans.size(); ++i) {
                const auto& w = wplans[i];
                fmt::print("worker {} {} -> chips {}: {} packets, {} cycles (send {}), {}\n",
                           w.core.str(), fabric::dir_name(w.dir), fmt::join(w.dests, ","),
                           wout[i].packets_sent, wres[i].cycles, wout[i].cycles,
                           fabric::outcome_name(wres[i].outcome));
            }
        }
        std::fflush(stdout);
    }
    if (!ok || !a.quiet) log_line(verdict);
    return code;
#endif
}

}  // namespace fabricctl
