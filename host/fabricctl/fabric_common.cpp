#include "fabric_common.h"

#include <fmt/format.h>

#include "cli_common.h"
#include "fabric/error.h"
#include "fabric/mesh_graph.h"
#include "protocol/fabric.h"

namespace fabricctl {

namespace pf = protocol::fabric;
using nlohmann::json;

void check_traffic_options(uint32_t bytes, uint32_t packets, hal::Arch arch) {
    const uint32_t max = pf::max_payload_bytes(hal::arch_map(arch));
    if (bytes == 0 || bytes % 16 != 0 || bytes > max) {
        fabric::fail(fabric::ErrorCategory::BadInput,
                     "--bytes {}: must be a non-zero multiple of 16 and at most {} on {}", bytes,
                     max, fabric::arch_name(arch));
    }
    if (packets == 0 || packets > kMaxPackets) {
        fabric::fail(fabric::ErrorCategory::BadInput, "--packets {}: must be 1..{}", packets,
                     kMaxPackets);
    }
}

CLI::Option* add_send_type_option(CLI::App& cmd, std::string& value) {
    return cmd
        .add_option("--send-type", value,
                    "NoC send type of the packets: " + fabric::traffic_send_type_names() +
                        " (the writes without an increment are counted by the positions they "
                        "land in: at most as many packets as positions)")
        ->check([](const std::string& v) {
            return fabric::parse_traffic_send_type(v) ? std::string()
                                                      : "unknown send type '" + v + "' (" +
                                                            fabric::traffic_send_type_names() + ")";
        })
        ->capture_default_str();
}

fabric::TrafficSendType send_type_of(const std::string& name) {
    return fabric::parse_traffic_send_type(name).value();
}

void add_output_flags(CLI::App& cmd, bool& as_json, bool& quiet) {
    cmd.add_flag("--json", as_json, "Print the result as JSON");
    cmd.add_flag("-q,--quiet", quiet, "No verdict line on success");
}

uint64_t cycles_left(const fabric::Device& device, uint64_t budget) {
    return device.cycles() >= budget ? 1 : budget - device.cycles();
}

fabric::ElfImage load_router_image(const std::string& path, const fabric::FabricPlan& plan,
                                   const fabric::SocDescriptor& soc) {
    auto image = fabric::ElfImage::load_file(path);
    const hal::ArchMap& am = hal::arch_map(plan.arch);
    for (const auto& r : plan.routers) {
        image.check_placement(fabric::router_placement(r, am, soc.eth_l1_size()));
    }
    return image;
}

TrafficKernel load_traffic_kernel(const std::string& given, const fabric::SocDescriptor& soc) {
    return load_worker_kernel(given, soc, "fabric_traffic");
}

TrafficKernel load_worker_kernel(const std::string& given, const fabric::SocDescriptor& soc,
                                 const std::string& name) {
    auto rules = fabric::erisc_placement(hal::arch_map(soc.arch()), soc.worker_l1_size());
    rules.target = fmt::format("{} worker core", fabric::arch_name(soc.arch()));
    const std::string path = firmware_path(given, soc.arch(), name, "--worker-elf");
    TrafficKernel kernel{path, fabric::ElfImage::load_file(path)};
    kernel.image.check_placement(rules);
    return kernel;
}

void PacketTimeoutArgs::add_options(CLI::App& cmd) {
    cmd.add_option("--packet-timeout-us", timeout_us,
                   "Router timeouts: a packet that waits this long at a router for a downstream "
                   "that takes nothing is reported (event `stalled`); 0 = off")
        ->check(CLI::Range(0u, fabric::kMaxRouterTimeoutUs))
        ->capture_default_str();
    cmd.add_option("--on-packet-timeout", action,
                   "drop: drop it and the next ones for that downstream while it stays full "
                   "(each reported: bad_packet timeout); hold: only report it (debugging)")
        ->check(CLI::IsMember({"drop", "hold"}))
        ->capture_default_str();
}

void add_events_option(CLI::App& cmd, std::string& path) {
    cmd.add_option("--events", path,
                   "Write the routers' event log to this file (JSON lines; `mesh events FILE` "
                   "prints it)");
}

void add_link_down_options(CLI::App& cmd, LinkDownArgs& args) {
    cmd.add_option("--on-link-down", args.reaction,
                   "When the host acts on a router reporting its link down or its peer silent: "
                   "drain-after-grace (once the link has stayed down 50 us or the peer silent "
                   "1 ms), drain (at once), or none. It reroutes the link over its fallback (2D, "
                   "paired planes: the other plane's link between the same chips), else drains "
                   "its ends (--reliability): every packet is delivered once or named dropped")
        ->check(CLI::IsMember({"drain-after-grace", "drain", "none"}))
        ->capture_default_str();
    cmd.add_option("--reliability", args.reliability,
                   "A dead link with no other link between its chips: relaxed (drain its ends; "
                   "what needs it is dropped and reported) or strict (stop the fabric: every "
                   "router drained)")
        ->check(CLI::IsMember({"relaxed", "strict"}))
        ->capture_default_str();
    cmd.add_flag("--no-reroute", args.no_reroute,
                 "Drain a dead link's ends even where its fallback works (no reroute)");
    cmd.add_option("--rejoin-after-us", args.rejoin_after_us,
                   "A rerouted link gets its traffic back once both ends have seen it up this "
                   "long (0: it stays on its fallback)")
        ->capture_default_str();
}

void apply_link_down(fabric::FabricRunner& runner, const LinkDownArgs& args,
                     const fabric::ClusterDescriptor& cluster) {
    using Mode = fabric::FabricRunner::LinkDownReaction::Mode;
    fabric::FabricRunner::LinkDownReaction r;
    if (args.reaction == "drain") {
        r.mode = Mode::Drain;
    } else if (args.reaction == "none") {
        r.mode = Mode::None;
    } else if (args.reaction == "drain-after-grace") {
        r.mode = Mode::AfterGrace;
    } else {
        fabric::fail(fabric::ErrorCategory::BadInput,
                     "on-link-down '{}': use drain-after-grace, drain or none", args.reaction);
    }
    const auto mode = fabric::parse_reliability_mode(args.reliability);
    if (!mode) {
        fabric::fail(fabric::ErrorCategory::BadInput, "reliability '{}': use relaxed or strict",
                     args.reliability);
    }
    r.reliability = *mode;
    r.reroute = !args.no_reroute;
    r.rejoin_after_us = args.rejoin_after_us;
    r.cluster = &cluster;
    runner.react_to_dead_links(r);
}

std::unique_ptr<fabric::EventLogFile> log_events(fabric::FabricRunner& runner,
                                                 const std::string& path, fabric::DropLog& drops) {
    auto log = path.empty() ? nullptr : std::make_unique<fabric::EventLogFile>(path);
    runner.on_events(
        [&runner, &drops, file = log.get()](std::span<const fabric::RouterEventRecord> r) {
            drops.add(r, runner.plan());
            if (file) file->append(r, runner.plan());
        });
    return log;
}

std::unique_ptr<fabric::ProgressLine> fabric_progress(const std::string& title,
                                                      fabric::InterruptibleDevice& device,
                                                      fabric::FabricRunner& runner,
                                                      uint64_t expected_deliveries) {
    auto progress = progress_on_terminal(title);
    if (!progress) return nullptr;
    progress->set_expected(expected_deliveries);
    progress->set_delivered_counter([&runner] { return fabric::delivered_so_far(runner); });
    device.after_each_slice([p = progress.get()](uint64_t cycles) { p->tick(cycles); });
    return progress;
}

void print_account(const fabric::TrafficAccount& account) {
    fmt::print("\n");
    for (const std::string& line : fabric::account_table(account)) fmt::print("{}\n", line);
}

void print_link_reports(const fabric::FabricRunner& runner) {
    for (const std::string& line : runner.link_reports()) fmt::print("link: {}\n", line);
}

nlohmann::json link_reports_json(const fabric::FabricRunner& runner) {
    return runner.link_reports();
}

int exit_code_for(fabric::TrafficFailure failure) {
    switch (failure) {
        case fabric::TrafficFailure::Trapped:
            return kTrap;
        case fabric::TrafficFailure::Timeout:
            return kTimeout;
        default:
            return kFabric;
    }
}

int verdict_exit_code(std::span<const std::string> problems,
                      std::span<const TrafficOutcome> outcomes) {
    return problems.empty() ? kOk : exit_code_for(fabric::traffic_failure(outcomes));
}

std::string failed_verdict(std::string_view command, std::span<const std::string> problems) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
    return fmt::format("{} failed: {}", command, all);
}

double bytes_per_cycle(uint64_t bytes, uint64_t cycles) {
    return cycles ? static_cast<double>(bytes) / static_cast<double>(cycles) : 0.0;
}

json router_json(const fabric::RouterSnapshot& s, const fabric::RouterPlacement& p,
                 uint32_t packet_bytes, uint64_t cycles) {
    const pf::RouterStatusBlock& b = s.block;
    // A 1D router has three sender channels, a 2D one all of them.
    const size_t senders = p.mesh ? pf::kMaxSenderChannels : pf::kNumSenderChannels;
    const std::vector<uint32_t> sent(b.sent, b.sent + senders);
    const std::vector<uint32_t> completed(b.completed, b.completed + senders);
    json j{{"chip", s.chip}, {"eth_channel", s.eth_channel}, {"core", s.core.core.str()}};
    if (p.mesh) {
        j["mesh"] = p.mesh->node.mesh;
        j["device"] = p.mesh->node.device;
        j["dir"] = std::string(1, fabric::dir_letter(p.mesh->dir));
        j["plane"] = p.mesh->plane;
        j["inter_mesh"] = p.mesh->inter_mesh;
    } else {
        j["dir"] = fabric::dir_name(s.dir);
    }
    j.update(json{{"peer_chip", p.config.peer_chip_id},
                  {"peer_eth_channel", p.config.peer_eth_channel},
                  {"is_master", p.config.is_master != 0},
                  {"dateline", p.config.dateline != 0},
                  {"status", s.status_name()},
                  {"stage", s.stage_name()},
                  {"stuck_at", s.stuck_at_name()},
                  {"detail", b.detail},
                  {"core_state", fabric::run_state_name(s.run.state)},
                  {"sent", sent},
                  {"completed", completed},
                  {"received", {b.received[0], b.received[1]}},
                  {"delivered", b.delivered},
                  {"forwarded", b.forwarded},
                  {"bad_packets", b.bad_packets},
                  {"undrained", b.undrained},
                  {"heartbeat", b.heartbeat},
                  {"packets_sent", s.sent()},
                  {"packets_received", s.received()},
                  {"bytes_sent", s.sent() * packet_bytes},
                  {"bytes_received", s.received() * packet_bytes},
                  {"bytes_per_cycle", bytes_per_cycle(s.sent() * packet_bytes, cycles)}});
    return j;
}

}  // namespace fabricctl
