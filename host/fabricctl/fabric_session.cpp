#include "fabric_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabric/error.h"
#include "fabric/traffic_verdict.h"
#include "protocol/fabric.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace fabricctl {

namespace pf = protocol::fabric;
using fabric::ErrorCategory;
using nlohmann::json;

namespace {

std::vector<fabric::ChipId> parse_chips(const std::string& text, uint32_t chip_count) {
    if (text.empty()) {
        std::vector<fabric::ChipId> all;
        for (uint32_t c = 0; c < chip_count; ++c) all.push_back(c);
        return all;
    }
    return parse_number_list("--chips", text, "chip number");
}

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

}  // namespace

void FabricArgs::add_options(CLI::App& c, bool& as_json) {
    c.add_option("--cluster", cluster, "Cluster descriptor (tt-umd YAML)")->required();
    c.add_option("--soc", soc, "SoC descriptor (default: the cluster arch's)");
    c.add_option("--topology", topology, "line or ring")
        ->check(CLI::IsMember({"line", "ring"}))
        ->capture_default_str();
    c.add_option("--chips", chips,
                 "Chips in line/ring order, e.g. 0,1,2,3 (default: every chip, 0..n-1)");
    c.add_option("--link", link, "Which link between two neighbours (ascending channel)")
        ->capture_default_str();
    c.add_option("--router-elf", router_elf,
                 "Router firmware (default: this build's fabric_router.elf)");
    auto* base = c.add_option("--base-fw", base_fw,
                              "Wormhole base firmware on the router cores (default: this "
                              "build's erisc_base.elf)");
    c.add_flag("--no-base-fw", no_base_fw, "Start the routers bare metal (reset PC)")
        ->excludes(base);
    add_threads_option(c, threads);
    add_max_cycles_option(c, max_cycles,
                          "Cycle budget for bring-up, traffic and termination together "
                          "(default 50000000)");
    c.add_option("--stall-cycles", stall_cycles,
                 "Health monitor: a router whose heartbeat stands still this many cycles "
                 "while it should run is stuck (default 1000000)")
        ->check(CLI::PositiveNumber);
    c.add_option("--stall-router", stall_router,
                 "Simulator fault: freeze router CHIP:ETH (its eth channel) CYCLES after the "
                 "workers start (run) or after bring-up (up), as CHIP:ETH@CYCLES; the "
                 "health monitor must name it");
    packet_timeout.add_options(c);
    add_events_option(c, events);
    add_output_flags(c, as_json, quiet);
}

FabricCommand::FabricCommand(CLI::App& app, bool& as_json, const std::string& name,
                             const std::string& description)
    : FabricCommand(InGroup{fabric_group(app)}, as_json, name, description) {}

FabricCommand::FabricCommand(InGroup in, bool& as_json, const std::string& name,
                             const std::string& description)
    : as_json_(as_json), cmd_(in.group.add_subcommand(name, description)) {
    args_.add_options(*cmd_, as_json);
}

FabricSession::FabricSession(const FabricArgs& args, std::string command, bool as_json,
                             std::string group)
    : args_(args),
      command_(std::move(command)),
      as_json_(as_json),
      group_(std::move(group)),
      cluster_(fabric::ClusterDescriptor::load_file(args.cluster)),
      soc_path_(args.soc.empty() ? find_default_descriptor(cluster_.arch()) : args.soc),
      soc_(fabric::SocDescriptor::load_file(soc_path_)),
      budget_(args.max_cycles ? args.max_cycles : kDefaultFabricMaxCycles) {
    if (soc_->arch() != arch()) {
        fabric::fail(ErrorCategory::BadInput, "{}: descriptor is for {} but cluster {} is {}",
                     soc_path_, fabric::arch_name(soc_->arch()), args.cluster,
                     fabric::arch_name(arch()));
    }
    stall_ = parse_stall_router(args.stall_router);
}

FabricSession::~FabricSession() = default;

fabric::FabricOptions FabricSession::fabric_options() const {
    fabric::FabricOptions fo;
    fo.topology = args_.topology == "ring" ? pf::Topology::Ring : pf::Topology::Line;
    fo.chips = parse_chips(args_.chips, cluster_.chip_count());
    fo.link_index = args_.link;
    args_.packet_timeout.apply(fo);
    return fo;
}

void FabricSession::plan_fabric(const fabric::FabricOptions& options) {
    try {
        plan_ = fabric::plan_fabric(cluster_, *soc_, options);
    } catch (const fabric::Error& e) {
        // Chips 0..n-1 in id order are rarely a line: say which option picks them.
        if (e.category() == ErrorCategory::BadInput && args_.chips.empty() &&
            std::string(e.what()).find("not connected") != std::string::npos) {
            fabric::fail(ErrorCategory::BadInput, "{} (the default --chips is 0..{}; pass --chips)",
                         e.what(), cluster_.chip_count() - 1);
        }
        throw;
    }
}

void FabricSession::load_router_image() {
    router_path_ = firmware_path(args_.router_elf, arch(), "fabric_router", "--router-elf");
    router_elf_ = fabricctl::load_router_image(router_path_, *plan_, *soc_);
}

void FabricSession::choose_base_firmware() {
    base_fw_ = fabricctl::choose_base_firmware(args_.base_fw, !args_.no_base_fw, arch());
}

void FabricSession::open_model(uint64_t expected_deliveries) {
#ifndef FABRIC_HAVE_SIM
    (void)expected_deliveries;
    fabric::fail(ErrorCategory::Unsupported,
                 "this fabricctl was built without the simulator (sim_model), 'fabric' is "
                 "unavailable");
#else
    fabric::SimDeviceOptions opts;
    opts.cluster = cluster_;
    opts.threads = sim_threads(args_.threads);
    if (base_fw_) opts.wh_base_firmware = base_fw_->image;
    device_ = std::make_unique<fabric::InterruptibleDevice>(
        std::make_unique<fabric::SimDevice>(std::move(*soc_), arch(), std::move(opts)));
    soc_.reset();
    runner_ = std::make_unique<fabric::FabricRunner>(*device_, *plan_, std::move(*router_elf_));
    events_ = log_events(*runner_, args_.events, drops_);
    progress_ = fabric_progress(fmt::format("{} {}", group_, command_), *device_, *runner_,
                                expected_deliveries);
    if (args_.stall_cycles) runner_->set_stall_cycles(args_.stall_cycles);
    if (!stall_) return;
    std::string routers;
    for (const auto& r : plan_->routers) {
        if (r.chip == stall_->chip && r.eth_channel == stall_->eth) stall_core_ = r.core;
        routers += fmt::format("{}{}:{}", routers.empty() ? "" : ", ", r.chip, r.eth_channel);
    }
    if (!stall_core_) {
        fabric::fail(ErrorCategory::BadInput,
                     "--stall-router {}: chip {} eth {} is not a router of this fabric "
                     "(routers: {})",
                     args_.stall_router, stall_->chip, stall_->eth, routers);
    }
#endif
}

void FabricSession::show_stage(const char* stage) {
    if (progress_) progress_->stage(stage);
}

void FabricSession::bring_up() {
    show_stage("bring-up");
    runner_->bring_up(budget_);
    runner_->check_health();
}

void FabricSession::inject_stall() {
#ifdef FABRIC_HAVE_SIM
    if (!stall_core_) return;
    auto& model = static_cast<fabric::SimDevice&>(device_->inner());
    model.freeze_core(*stall_core_, model.cycles() + stall_->after);
#endif
}

void FabricSession::terminate() {
    show_stage("termination");
    final_ = fabric::terminate_fabric(*runner_, cycles_left(), problems);
}

int FabricSession::report(const RunReport& r) {
    if (progress_) progress_->finish();
    const bool ok = problems.empty();
    const int code = verdict_exit_code(problems, r.outcomes);
    const std::string verdict =
        ok ? r.passed : failed_verdict(fmt::format("{} {}", group_, command_), problems);
    if (as_json_) {
        print_json(report_json(r, verdict, code));
    } else {
        if (r.print_body) r.print_body();
        flush_stdout();
    }
    if (!ok || !args_.quiet) log_line(verdict);
    return code;
}

json FabricSession::report_json(const RunReport& r, const std::string& verdict, int code) {
    const fabric::FabricPlan& plan = *plan_;
    const auto& r0 = plan.routers.front().config;
    const uint32_t fig_bytes = r.figure_bytes ? r.figure_bytes : r0.payload_bytes;
    json routers = json::array();
    for (size_t i = 0; i < final_.size(); ++i) {
        routers.push_back(router_json(final_[i], plan.routers[i], fig_bytes, r.send_cycles));
    }
    json j{{"ok", problems.empty()},
           {"command", command_},
           {"arch", fabric::arch_name(arch())},
           {"cluster", args_.cluster},
           {"soc", soc_path_},
           {"base_firmware", base_fw_ ? json(base_fw_->path) : json(nullptr)},
           {"router_firmware", router_path_},
           {"topology", fabric::topology_name(plan.topology)},
           {"chips", plan.chips},
           {"link", args_.link},
           {"payload_bytes", r0.payload_bytes},
           {"sender_slots", r0.sender_slots[0]},
           {"receiver_slots", r0.receiver_slots[0]},
           {"handshake_cycles", runner_->handshake_cycles()},
           {"ready_cycles", runner_->ready_cycles()},
           {"routers", routers},
           {"device_cycles", device_->cycles()},
           {"max_cycles", budget_},
           {"stall_cycles", runner_->stall_cycles()},
           {"verdict", verdict},
           {"problems", problems},
           {"exit_code", code}};
    if (r.add_json) r.add_json(j);
    return j;
}

void FabricSession::print_router_table(uint32_t packet_bytes, uint64_t send_cycles) const {
    const fabric::FabricPlan& plan = *plan_;
    const bool traffic = packet_bytes != 0;
    fmt::print("{:<8} {:<5} {:<5} {:<6} {:<15} {:<18} {:>8} {:>8} {:>9} {:>9}{}\n", "router", "eth",
               "core", "peer", "", "status", "sent", "received", "delivered", "forwarded",
               traffic ? fmt::format(" {:>11} {:>8}", "bytes sent", "B/cycle") : "");
    for (size_t i = 0; i < final_.size(); ++i) {
        const auto& s = final_[i];
        const auto& p = plan.routers[i];
        const std::string flags = fmt::format("{}{}", p.config.is_master ? "master" : "",
                                              p.config.dateline ? " dateline" : "");
        std::string figs;
        if (traffic) {
            figs = fmt::format(" {:>11} {:>8.3f}", s.sent() * packet_bytes,
                               bytes_per_cycle(s.sent() * packet_bytes, send_cycles));
        }
        fmt::print(
            "{:<8} {:<5} {:<5} {:<6} {:<15} {:<18} {:>8} {:>8} {:>9} {:>9}{}\n",
            fmt::format("{}:{}", s.chip, fabric::dir_name(s.dir)), s.eth_channel, s.core.core.str(),
            fmt::format("{}:{}", p.config.peer_chip_id, p.config.peer_eth_channel), flags,
            s.status_name(), s.sent(), s.received(), s.block.delivered, s.block.forwarded, figs);
    }
}

}  // namespace fabricctl
