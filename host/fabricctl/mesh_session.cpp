#include "mesh_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>

#include "fabric/error.h"
#include "fabric/fabric_page.h"
#include "fabric/kmd_socket.h"
#include "fabric/traffic_verdict.h"
#include "protocol/fabric.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace fabricctl {

namespace pf = protocol::fabric;
using fabric::ErrorCategory;
using fabric::RouterPlacement;
using fabric::RouterSnapshot;
using nlohmann::json;

namespace {

// "M0D1 E p0": a router by its mesh port.
std::string router_label(const RouterPlacement& r) {
    if (!r.mesh)
        fabric::fail(ErrorCategory::Internal, "router chip {} eth {} has no mesh port", r.chip,
                     r.eth_channel);
    return fmt::format("{} {} p{}", r.mesh->node.str(), fabric::dir_letter(r.mesh->dir),
                       r.mesh->plane);
}

bool is_status(const RouterSnapshot& s, pf::RouterStatus st) {
    return s.block.status == static_cast<uint32_t>(st);
}

// The plan checks each plane against what the mapping found; here only the list itself.
std::vector<uint32_t> parse_planes(const std::string& text) {
    const std::vector<uint32_t> planes = parse_number_list("--planes", text, "plane number");
    if (planes.empty())
        fabric::fail(ErrorCategory::BadInput, "--planes: give at least one routing plane, e.g. 0");
    std::set<uint32_t> seen;
    for (uint32_t p : planes) {
        if (!seen.insert(p).second)
            fabric::fail(ErrorCategory::BadInput, "--planes {}: plane {} is listed twice", text, p);
    }
    return planes;
}

// --slots S,R: sender and receiver slots per channel; empty = the plan chooses.
std::pair<uint32_t, uint32_t> parse_slots(const std::string& text) {
    if (text.empty()) return {0, 0};
    const std::vector<uint32_t> v = parse_number_list("--slots", text, "slot count");
    if (v.size() != 2)
        fabric::fail(ErrorCategory::BadInput, "--slots {}: expected SENDER,RECEIVER (e.g. 8,16)",
                     text);
    return {v[0], v[1]};
}

uint32_t routers_on_plane(const fabric::MeshPlan& plan, uint32_t plane) {
    return static_cast<uint32_t>(
        std::count_if(plan.fabric.routers.begin(), plan.fabric.routers.end(),
                      [&](const RouterPlacement& r) { return r.mesh && r.mesh->plane == plane; }));
}

// "plane 0: 20, plane 1: 20"
std::string routers_per_plane(const fabric::MeshPlan& plan) {
    std::string out;
    for (uint32_t p : plan.planes) {
        out += fmt::format("{}plane {}: {}", out.empty() ? "" : ", ", p, routers_on_plane(plan, p));
    }
    return out;
}

std::vector<fabric::ChipId> mesh_chips(const fabric::MeshPlan& plan, const fabric::MeshSpec& m) {
    std::vector<fabric::ChipId> chips;
    for (uint32_t d = 0; d < m.device_count(); ++d) chips.push_back(plan.chip_of({m.id, d}));
    return chips;
}

const char* topology_name(const fabric::MeshPlan& plan) {
    return plan.fabric.topology == pf::Topology::Torus ? "torus" : "mesh";
}

}  // namespace

void MeshFabricArgs::add_options(CLI::App& c, bool& as_json, const std::string& socket_option) {
    mapping.add_options(c,
                        "Mesh graph descriptor (MGD 2.0 .textproto or YAML; default: the "
                        "largest mesh the cluster holds)");
    c.add_option("--cluster", cluster,
                 "Cluster descriptor (tt-umd YAML): the chips and their links")
        ->required();
    c.add_option("--target", target, "sim (the model of --cluster) or pcie (tt-kmd)")
        ->check(CLI::IsMember({"sim", "pcie"}))
        ->capture_default_str();
    c.add_option("--dir", dir, "Device node directory (--target pcie)")->capture_default_str();
    c.add_option(socket_option, socket,
                 "--target sim: attach to the model a `fabricctl sim serve` keeps on this Unix "
                 "socket (default: $FABRIC_SIM_SOCKET; none: a model of its own)");
    c.add_option("--soc", soc, "SoC descriptor (default: the arch's)");
    c.add_option("--planes", planes, "Routing planes to bring up, e.g. 0,1")->capture_default_str();
    c.add_option("--payload", payload,
                 "Slot payload bytes (multiple of 16; default 4352, or --bytes if larger)");
    c.add_option("--slots", slots,
                 "Sender and receiver slots per channel, S,R (default: the most that fit)");
    add_max_cycles_option(
        c, budget,
        "Cycle budget for bring-up, traffic and termination together (default 50000000)");
    c.add_option("--stall-cycles", stall_cycles,
                 "Health monitor: a router whose heartbeat stands still this many cycles "
                 "while it should run is stuck (default 1000000)")
        ->check(CLI::PositiveNumber);
    c.add_option("--router-elf", router_elf,
                 "Router firmware (default: this build's fabric_router_2d.elf)");
    auto* base = c.add_option("--base-fw", base_fw,
                              "Wormhole base firmware the model's router cores boot (default: "
                              "this build's erisc_base.elf; --target sim)");
    c.add_flag("--no-base-fw", no_base_fw, "Start the model's routers bare metal (--target sim)")
        ->excludes(base);
    add_threads_option(c, threads);
    packet_timeout.add_options(c);
    add_events_option(c, events);
    add_output_flags(c, as_json, quiet);
}

MeshFabricCommand::MeshFabricCommand(CLI::App& app, bool& as_json, const std::string& name,
                                     const std::string& description)
    : MeshFabricCommand(InGroup{mesh_group(app)}, as_json, name, description) {}

MeshFabricCommand::MeshFabricCommand(InGroup in, bool& as_json, const std::string& name,
                                     const std::string& description)
    : as_json_(as_json), cmd_(in.group.add_subcommand(name, description)) {
    // Under `mesh`, the server's socket is --socket; elsewhere (`socket run`) the word may mean
    // something else, so it is --sim-socket there.
    args_.add_options(*cmd_, as_json, in.group.get_name() == "mesh" ? "--socket" : "--sim-socket");
}

// ---- the steps ----------------------------------------------------------------------------------

MeshSession::MeshSession(const MeshFabricArgs& args, std::string verb, bool as_json,
                         std::string group)
    : args_(args),
      verb_(std::move(verb)),
      command_(group + " " + verb_),
      as_json_(as_json),
      cluster_(fabric::ClusterDescriptor::load_file(args.cluster)),
      graph_(args.mapping.graph_for(cluster_)),
      graph_path_(graph_.source()),
      derived_(args.mapping.derived() ? derived_note(graph_, cluster_) : "") {}

MeshSession::~MeshSession() = default;

std::string MeshSession::sim_socket() const {
    if (args_.target != "sim") return {};
    return args_.socket.empty() ? fabric::default_sim_socket() : args_.socket;
}

fabric::MeshFabricOptions MeshSession::fabric_options() const {
    fabric::MeshFabricOptions mo;
    mo.planes = parse_planes(args_.planes);
    std::tie(mo.sender_slots, mo.receiver_slots) = parse_slots(args_.slots);
    args_.packet_timeout.apply(mo);
    return mo;
}

uint32_t MeshSession::payload_bytes(uint32_t default_bytes) const {
    const uint32_t max_payload = pf::max_payload_bytes(hal::arch_map(arch()));
    if (args_.payload != 0 && (args_.payload % 16 != 0 || args_.payload > max_payload)) {
        fabric::fail(ErrorCategory::BadInput,
                     "--payload {}: must be a multiple of 16 and at most {} on {}", args_.payload,
                     max_payload, fabric::arch_name(arch()));
    }
    return args_.payload != 0 ? args_.payload : default_bytes;
}

void MeshSession::plan_fabric(const fabric::MeshFabricOptions& options) {
    if (pcie() && (!args_.base_fw.empty() || args_.no_base_fw)) {
        fabric::fail(ErrorCategory::BadInput,
                     "--base-fw / --no-base-fw describe the model: use them with --target sim");
    }
    if (pcie()) {
        pcie_device_ = open_pcie_device(args_.dir, args_.soc, sim_socket());
        if (pcie_device_->soc(0).arch() != arch()) {
            fabric::fail(ErrorCategory::BadInput, "{} describes {} chips but {} is {}", graph_path_,
                         fabric::arch_name(arch()), pcie_device_->description(),
                         fabric::arch_name(pcie_device_->soc(0).arch()));
        }
    }
    soc_ = pcie() ? pcie_device_->soc(0) : load_soc_for(arch(), args_.soc);
    soc_path_ = soc_->source();
    plan_ = fabric::plan_mesh(graph_, cluster_, *soc_, options, args_.mapping.map_options());
}

void MeshSession::load_router_image() {
    router_path_ = firmware_path(args_.router_elf, arch(), "fabric_router_2d", "--router-elf");
    router_elf_ = fabricctl::load_router_image(router_path_, plan_->fabric, *soc_);
}

void MeshSession::open_device(uint64_t expected_deliveries) {
    std::unique_ptr<fabric::Device> dev = std::move(pcie_device_);
    if (!pcie()) {
#ifndef FABRIC_HAVE_SIM
        fabric::fail(ErrorCategory::Unsupported,
                     "this fabricctl was built without the simulator (sim_model): --target sim is "
                     "unavailable");
#else
        const std::optional<BaseFirmware> base_fw =
            choose_base_firmware(args_.base_fw, !args_.no_base_fw, arch());
        fabric::SimDeviceOptions o;
        o.cluster = cluster_;
        o.modeled_chips = plan_->fabric.chips;  // the chips the mesh uses, not the whole cluster
        o.threads = sim_threads(args_.threads);
        if (base_fw) {
            base_fw_path_ = base_fw->path;
            o.wh_base_firmware = base_fw->image;
        }
        dev = std::make_unique<fabric::SimDevice>(std::move(*soc_), arch(), std::move(o));
        soc_.reset();
#endif
    }
    device_ = std::make_unique<fabric::InterruptibleDevice>(std::move(dev));
    runner_ =
        std::make_unique<fabric::FabricRunner>(*device_, plan_->fabric, std::move(*router_elf_));
    if (args_.stall_cycles) runner_->set_stall_cycles(args_.stall_cycles);
    events_ = log_events(*runner_, args_.events, drops_);
    progress_ = fabric_progress(command_, *device_, *runner_, expected_deliveries);
}

int MeshSession::run_interruptible(const std::function<int()>& verb) {
    if (!pcie()) return verb();
    try {
        return verb();
    } catch (const fabric::Interrupted& e) {
        if (progress_) progress_->finish();
        if (const std::string done = fabric::terminate_after_interrupt(*runner_, e, args_.budget);
            !done.empty()) {
            log_line(done);
        }
        throw;
    }
}

void MeshSession::show_stage(const char* stage) {
    if (progress_) progress_->stage(stage);
}

void MeshSession::bring_up() {
    const auto t0 = std::chrono::steady_clock::now();
    show_stage("bring-up");
    runner_->bring_up(args_.budget);
    bring_up_wall_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    brought_up_ = true;
    runner_->check_health();
}

void MeshSession::attach() {
    runner_->attach();
    brought_up_ = true;
    attached_ = true;
    read_live();
}

void MeshSession::bring_up_and_watch() {
    constexpr uint64_t kWatchCycles = 10 * fabric::kFabricPollCycles;
    bring_up();
    runner_->monitor(std::min(kWatchCycles, cycles_left()));
}

void MeshSession::read_live() {
    live_ = runner_->status();
}

void MeshSession::terminate() {
    show_stage("termination");
    final_ = fabric::terminate_fabric(*runner_, cycles_left(), problems);
    terminated_ = problems.empty();  // graceful: then every router must say so
    const bool graceful = terminated_;
    for (size_t i = 0; graceful && i < final_.size(); ++i) {
        if (!is_status(final_[i], pf::RouterStatus::Terminated) || !final_[i].core_finished) {
            problems.push_back(fmt::format("router {} did not terminate: {}",
                                           router_label(plan_->fabric.routers[i]),
                                           final_[i].describe()));
            terminated_ = false;
        }
    }
}

void write_page(MeshSession& s, const std::string& path) {
    const std::string page =
        fabric::fabric_page_html(s.plan(), fabric::read_telemetry(s.runner()),
                                 fmt::format("erisc-fabric: {}", s.cluster().source()));
    if (path.empty()) {
        fmt::print("{}", page);
        return;
    }
    std::ofstream out(path, std::ios::binary);
    out << page;
    if (!out.flush()) fabric::fail(ErrorCategory::BadInput, "cannot write the page to {}", path);
    log_line(fmt::format("wrote the fabric's page to {} ({} bytes)", path, page.size()));
}

int run_without_traffic(MeshSession& s, const std::function<int()>& verb) {
    fabric::MeshFabricOptions mo = s.fabric_options();
    mo.payload_bytes = s.payload_bytes(pf::kDefaultPayloadBytes);
    s.plan_fabric(mo);
    if (!s.has_routers()) return s.report_no_links();
    s.load_router_image();
    s.open_device(0);
    return s.run_interruptible(verb);
}

// ---- the report ---------------------------------------------------------------------------------

const std::vector<RouterSnapshot>& MeshSession::shown() const {
    return final_.empty() || show_live ? live_ : final_;
}

std::string MeshSession::what() const {
    const auto& g = plan_->tables.graph();
    return fmt::format("{} mesh{}, {} chips, {} routers ({})", g.mesh_count(),
                       g.mesh_count() == 1 ? "" : "es", plan_->fabric.chips.size(),
                       plan_->fabric.routers.size(), routers_per_plane(*plan_));
}

namespace {

// How a termination that went as asked ended: gracefully, or (a link a drain or a reroute cut)
// immediately once the rest of the fabric was quiet; and what was done about dead links.
std::string termination_kind(fabric::FabricRunner& runner) {
    std::string out = runner.termination_written() == pf::Termination::Immediate
                          ? "terminated (a link was cut: immediately, once the rest was quiet)"
                          : "terminated gracefully";
    for (const std::string& line : runner.link_reports()) out += "; " + line;
    return out;
}

}  // namespace

std::string MeshSession::ending() const {
    return terminated_ ? termination_kind(*runner_)
           : pcie()    ? std::string("routers left running on the chips")
                       : std::string("not terminated");
}

int MeshSession::report_no_links() const {
    const auto& g = plan_->tables.graph();
    const size_t chips = plan_->fabric.chips.size();
    const std::string verdict = fmt::format(
        "{}: {} mesh{}, {} chip{}, no links between devices: no router to run", command_,
        g.mesh_count(), g.mesh_count() == 1 ? "" : "es", chips, chips == 1 ? "" : "s");
    if (as_json_) {
        print_json(json{{"ok", true},
                        {"command", verb_},
                        {"mesh_graph", graph_path_},
                        {"cluster", args_.cluster},
                        {"chips", plan_->fabric.chips},
                        {"routers", json::array()},
                        {"verdict", verdict},
                        {"exit_code", kOk}});
    } else if (!derived_.empty()) {
        fmt::print("{}\n", derived_);
    }
    log_line(verdict);
    return kOk;
}

int MeshSession::report(const RunReport& r) {
    if (progress_) progress_->finish();
    const bool ok = problems.empty();
    const int code = verdict_exit_code(problems, r.outcomes);
    std::string verdict;
    if (!ok) {
        verdict = failed_verdict(command_, problems);
    } else if (!r.passed.empty()) {
        verdict = r.passed;
    } else if (attached_) {  // an earlier command brought the routers up
        verdict =
            fmt::format("{}: {}: attached to the running routers; {}", command_, what(), ending());
    } else if (brought_up_) {
        verdict = fmt::format("{}: {}: handshake {} cycles, ready {} cycles; {}", command_, what(),
                              runner_->handshake_cycles(), runner_->ready_cycles(), ending());
    } else {  // pcie status: read, not brought up here
        verdict = fmt::format("{}: {}: read from the running routers", command_, what());
    }
    if (as_json_) {
        print_json(report_json(r, verdict, code));
    } else {
        print_summary();
        if (brought_up_ && !attached_) {
            fmt::print("bring-up: handshake {} cycles, ready {} cycles ({:.2f} s wall)\n",
                       runner_->handshake_cycles(), runner_->ready_cycles(),
                       bring_up_wall_seconds_);
        }
        if (r.print_body) r.print_body();
        flush_stdout();
    }
    if (!ok || !args_.quiet) log_line(verdict);
    return code;
}

json MeshSession::report_json(const RunReport& r, const std::string& verdict, int code) const {
    const fabric::MeshPlan& plan = *plan_;
    const auto& r0 = plan.fabric.routers.front().config;
    const uint32_t fig_bytes = r.figure_bytes ? r.figure_bytes : r0.payload_bytes;
    json routers = json::array();
    for (size_t i = 0; i < shown().size(); ++i) {
        json one = router_json(shown()[i], plan.fabric.routers[i], fig_bytes, r.send_cycles);
        one["final_status"] = final_.empty() ? json(nullptr) : json(final_[i].status_name());
        routers.push_back(std::move(one));
    }
    json meshes = json::array();
    for (const auto& m : plan.tables.graph().meshes()) {
        meshes.push_back(
            {{"id", m.id}, {"rows", m.rows}, {"cols", m.cols}, {"chips", mesh_chips(plan, m)}});
    }
    json per_plane = json::array();
    for (uint32_t p : plan.planes) {
        per_plane.push_back({{"plane", p}, {"routers", routers_on_plane(plan, p)}});
    }
    json j{{"ok", problems.empty()},
           {"command", verb_},
           {"target", pcie() ? "pcie" : "sim"},
           {"arch", fabric::arch_name(plan.fabric.arch)},
           {"mesh_graph", graph_path_},
           {"derived", !derived_.empty()},
           {"cluster", args_.cluster},
           {"soc", soc_path_},
           {"base_firmware", base_fw_path_ ? json(*base_fw_path_) : json(nullptr)},
           {"router_firmware", router_path_},
           {"topology", topology_name(plan)},
           {"planes", plan.planes},
           {"meshes", meshes},
           {"chips", plan.fabric.chips},
           {"routers_per_plane", per_plane},
           {"payload_bytes", r0.payload_bytes},
           {"sender_slots", r0.sender_slots[0]},
           {"receiver_slots", r0.receiver_slots[0]},
           {"brought_up", brought_up_},
           {"attached", attached_},
           {"handshake_cycles", brought_up_ ? runner_->handshake_cycles() : 0},
           {"ready_cycles", brought_up_ ? runner_->ready_cycles() : 0},
           {"bring_up_wall_seconds", bring_up_wall_seconds_},
           {"terminated", terminated_},
           {"routers", routers},
           {"links", links_json(shown())},
           {"device_cycles", device_->cycles()},
           {"timeout_cycles", args_.budget},
           {"stall_cycles", brought_up_ ? json(runner_->stall_cycles()) : json(nullptr)},
           {"verdict", verdict},
           {"problems", problems},
           {"exit_code", code}};
    if (r.add_json) r.add_json(j);
    return j;
}

json MeshSession::links_json(const std::vector<RouterSnapshot>& snaps) const {
    const auto& routers = plan_->fabric.routers;
    const auto end = [&](size_t i) {
        const auto& m = *routers[i].mesh;
        return json{{"chip", routers[i].chip},
                    {"eth_channel", routers[i].eth_channel},
                    {"mesh", m.node.mesh},
                    {"device", m.node.device},
                    {"dir", std::string(1, fabric::dir_letter(m.dir))}};
    };
    json out = json::array();
    for (const auto& l : fabric::router_pairs(plan_->fabric)) {
        out.push_back({{"a", end(l.a)},
                       {"b", end(l.b)},
                       {"plane", routers[l.a].mesh->plane},
                       {"inter_mesh", routers[l.a].mesh->inter_mesh},
                       {"state", fabric::link_state(snaps[l.a], snaps[l.b])}});
    }
    return out;
}

void MeshSession::print_summary() const {
    const fabric::MeshPlan& plan = *plan_;
    const auto& g = plan.tables.graph();
    const auto& r0 = plan.fabric.routers.front().config;
    if (!derived_.empty()) fmt::print("{}\n", derived_);
    fmt::print("mesh graph {}: {}, topology {}, planes {}\n", g.source(),
               fabric::arch_name(plan.fabric.arch), topology_name(plan),
               fmt::join(plan.planes, ","));
    for (const auto& m : g.meshes()) {
        fmt::print("  mesh {}: {}x{} devices on chips {}\n", m.id, m.rows, m.cols,
                   fmt::join(mesh_chips(plan, m), ","));
    }
    fmt::print("routers: {} on {} chips ({}); payload {} B, slots {} sender / {} receiver\n",
               plan.fabric.routers.size(), plan.fabric.chips.size(), routers_per_plane(plan),
               r0.payload_bytes, r0.sender_slots[0], r0.receiver_slots[0]);
}

void MeshSession::print_routers(const std::vector<RouterSnapshot>& snaps, bool traffic,
                                uint32_t packet_bytes, uint64_t send_cycles) const {
    const auto& routers = plan_->fabric.routers;
    const std::string head = fmt::format("{:<12} {:>4} {:>3} {:<5} {:<6} {:<18}", "router", "chip",
                                         "eth", "core", "peer", "status");
    if (traffic) {
        fmt::print("{} {:>8} {:>8} {:>9} {:>9} {:>11} {:>8}\n", head, "sent", "received",
                   "delivered", "forwarded", "bytes sent", "B/cycle");
    } else {
        fmt::print("{} {:<18} {:>9} {:>8} {:>8}\n", head, "stage", "heartbeat", "sent", "received");
    }
    for (size_t i = 0; i < snaps.size(); ++i) {
        const RouterSnapshot& r = snaps[i];
        const RouterPlacement& p = routers[i];
        const std::string row =
            fmt::format("{:<12} {:>4} {:>3} {:<5} {:<6} {:<18}", router_label(p), r.chip,
                        r.eth_channel, r.core.core.str(),
                        fmt::format("{}:{}", p.config.peer_chip_id, p.config.peer_eth_channel),
                        r.status_name());
        if (traffic) {
            const uint64_t b = r.sent() * packet_bytes;
            fmt::print("{} {:>8} {:>8} {:>9} {:>9} {:>11} {:>8.3f}\n", row, r.sent(), r.received(),
                       r.block.delivered, r.block.forwarded, b, bytes_per_cycle(b, send_cycles));
        } else {
            fmt::print("{} {:<18} {:>9} {:>8} {:>8}\n", row, r.stage_name(), r.block.heartbeat,
                       r.sent(), r.received());
        }
    }
}

void MeshSession::print_links(const std::vector<RouterSnapshot>& snaps) const {
    const auto& routers = plan_->fabric.routers;
    fmt::print("{:<27} {:<11} {}\n", "link", "state", "ends");
    for (const auto& l : fabric::router_pairs(plan_->fabric)) {
        const auto &a = snaps[l.a], &b = snaps[l.b];
        fmt::print("{:<27} {:<11} chip {} eth {} <-> chip {} eth {}{}\n",
                   fmt::format("{} <-> {}", router_label(routers[l.a]), router_label(routers[l.b])),
                   fabric::link_state(a, b), a.chip, a.eth_channel, b.chip, b.eth_channel,
                   routers[l.a].mesh->inter_mesh ? " (inter-mesh)" : "");
    }
}

void MeshSession::print_terminated(std::string_view before) const {
    if (!terminated_) return;
    const auto n = std::count_if(final_.begin(), final_.end(), [](const RouterSnapshot& r) {
        return is_status(r, pf::RouterStatus::Terminated);
    });
    fmt::print("{}{}: {} of {} routers terminated\n", before, termination_kind(*runner_), n,
               final_.size());
}

}  // namespace fabricctl
