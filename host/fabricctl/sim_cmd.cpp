// fabricctl sim run: firmware on simulated ERISCs (SimDevice), one core or a cluster's, to exit.
#include "sim_cmd.h"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/interrupt.h"
#include "fabric/launch.h"
#include "fabric/soc_descriptor.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using nlohmann::json;

struct SimRunArgs {
    std::string arch;
    std::string soc;
    std::string cluster;
    std::string core;
    std::vector<std::string> loads;
    std::string base_fw;
    bool no_base_fw = false;
    uint32_t threads = 0;  // 0: sim_threads' default
    uint64_t max_cycles = fabric::kDefaultMaxCycles;
    std::string trace;
    std::string firmware;
    bool json = false;
    bool quiet = false;
};

// --core / the core part of --load: an eth channel ("3") or NOC0 coordinates ("9-0") of an eth
// core. `what` names the option in messages.
fabric::CoreCoord resolve_eth_core(const fabric::SocDescriptor& d, const std::string& spec,
                                   const std::string& what) {
    const bool digits = !spec.empty() && spec.find_first_not_of("0123456789") == std::string::npos;
    if (digits) {
        if (spec.size() > 6) {
            fabric::fail(ErrorCategory::BadInput, "{}: eth channel out of range", what);
        }
        const auto ch = static_cast<uint32_t>(std::stoul(spec));
        if (ch >= d.eth_channels()) {
            fabric::fail(ErrorCategory::BadInput,
                         "{}: eth channel {} does not exist ({} has channels 0..{})", what, ch,
                         d.source(), d.eth_channels() == 0 ? 0 : d.eth_channels() - 1);
        }
        return d.eth_core(ch);
    }
    const auto c = fabric::parse_core_coord(spec);
    if (!c) {
        fabric::fail(ErrorCategory::BadInput,
                     "{}: not an eth channel number or 'x-y' core coordinate", what);
    }
    const auto t = d.core_type(*c);
    if (!t) {
        fabric::fail(ErrorCategory::BadInput, "{}: no core at {} in {} (grid {}x{})", what,
                     c->str(), d.source(), d.grid_x(), d.grid_y());
    }
    if (*t != fabric::CoreType::Eth) {
        fabric::fail(ErrorCategory::BadInput, "{}: core {} is a '{}' core, not an eth core", what,
                     c->str(), fabric::core_type_name(*t));
    }
    return *c;
}

// One image for one core, from --core + firmware or from --load [chip:]core=firmware.elf.
struct LoadSpec {
    std::string option;  // as given, for messages
    fabric::CoreLocation loc;
    uint32_t channel = 0;
    std::string path;
    std::optional<fabric::ElfImage> image;
};

LoadSpec parse_load(const std::string& text, const fabric::SocDescriptor& soc, uint32_t chips) {
    const std::string what = fmt::format("--load {}", text);
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
        fabric::fail(ErrorCategory::BadInput, "{}: expected [chip:]core=firmware.elf", what);
    }
    LoadSpec l;
    l.option = what;
    l.path = text.substr(eq + 1);
    std::string core = text.substr(0, eq);
    if (const auto colon = core.find(':'); colon != std::string::npos) {
        const std::string chip = core.substr(0, colon);
        if (chip.empty() || chip.size() > 6 ||
            chip.find_first_not_of("0123456789") != std::string::npos) {
            fabric::fail(ErrorCategory::BadInput, "{}: '{}' is not a chip number", what, chip);
        }
        l.loc.chip = static_cast<uint32_t>(std::stoul(chip));
        core = core.substr(colon + 1);
    }
    if (l.loc.chip >= chips) {
        fabric::fail(ErrorCategory::BadInput,
                     "{}: chip {} does not exist (the cluster has {} chip{}: 0..{})", what,
                     l.loc.chip, chips, chips == 1 ? "" : "s", chips - 1);
    }
    l.loc.core = resolve_eth_core(soc, core, what);
    l.channel = *soc.eth_channel(l.loc.core);
    return l;
}

// Console output. A single core without --cluster streams its characters unchanged; otherwise
// every line is prefixed "[chip:x-y] " so the cores' outputs can be told apart.
class ConsoleMux {
  public:
    explicit ConsoleMux(bool prefixed) : prefixed_(prefixed) {}
    void put(const fabric::CoreLocation& c, char ch) {
        if (!prefixed_) {
            std::fputc(ch, stdout);
            if (ch == '\n') flush_stdout();
            return;
        }
        std::string& line = lines_[c];
        if (ch != '\n') {
            line.push_back(ch);
            return;
        }
        emit(c, line);
        line.clear();
    }
    void finish() {
        for (auto& [c, line] : lines_) {
            if (!line.empty()) emit(c, line);
            line.clear();
        }
        flush_stdout();
    }

  private:
    static void emit(const fabric::CoreLocation& c, const std::string& line) {
        std::fprintf(stdout, "[%u:%s] %s\n", c.chip, c.core.str().c_str(), line.c_str());
        flush_stdout();
    }
    bool prefixed_;
    std::map<fabric::CoreLocation, std::string> lines_;
};

int sim_run(const SimRunArgs& a) {
    const auto arch = fabric::parse_arch(a.arch);
    if (!arch) fabric::fail(ErrorCategory::Internal, "--arch {} passed validation", a.arch);
    const std::string soc_path = a.soc.empty() ? find_default_descriptor(*arch) : a.soc;
    auto soc = fabric::SocDescriptor::load_file(soc_path);
    if (soc.arch() != *arch) {
        fabric::fail(ErrorCategory::BadInput, "{}: descriptor is for {} but --arch is {}", soc_path,
                     fabric::arch_name(soc.arch()), fabric::arch_name(*arch));
    }
    std::optional<fabric::ClusterDescriptor> cluster;
    if (!a.cluster.empty()) {
        cluster = fabric::ClusterDescriptor::load_file(a.cluster);
        if (cluster->arch() != *arch) {
            fabric::fail(ErrorCategory::BadInput, "{}: cluster is {} but --arch is {}", a.cluster,
                         fabric::arch_name(cluster->arch()), fabric::arch_name(*arch));
        }
    }
    const uint32_t chips = cluster ? cluster->chip_count() : 1;

    // What runs where: --core + firmware first, then every --load in order.
    std::vector<LoadSpec> loads;
    if (!a.core.empty()) {
        LoadSpec l;
        l.option = fmt::format("--core {}", a.core);
        l.loc = {0, resolve_eth_core(soc, a.core, l.option)};
        l.channel = *soc.eth_channel(l.loc.core);
        l.path = a.firmware;
        loads.push_back(std::move(l));
    }
    for (const auto& text : a.loads) loads.push_back(parse_load(text, soc, chips));
    for (size_t i = 0; i < loads.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
            if (loads[j].loc == loads[i].loc) {
                fabric::fail(ErrorCategory::BadInput, "{}: {} already gets {} ({})",
                             loads[i].option, loads[i].loc.str(), loads[j].path, loads[j].option);
            }
        }
    }
    const auto placement = fabric::erisc_placement(hal::arch_map(*arch), soc.eth_l1_size());
    for (auto& l : loads) {
        l.image = fabric::ElfImage::load_file(l.path);
        l.image->check_placement(placement);  // before creating the model: fail fast
        const hal::ArchMap& am = hal::arch_map(*arch);
        if (l.image->entry() != am.app_fw_base && l.image->entry() != am.router_fw.base) {
            log_line(fmt::format(
                "warning: {}: entry {} is neither the {} firmware base {} nor its router base {}; "
                "was it built for another arch?",
                l.path, fabric::hex32(l.image->entry()), fabric::arch_name(*arch),
                fabric::hex32(am.app_fw_base), fabric::hex32(am.router_fw.base)));
        }
    }

    // Base firmware: by default for --cluster runs on Wormhole (eth cores boot like silicon).
    const std::optional<BaseFirmware> base_fw =
        choose_base_firmware(a.base_fw, !a.no_base_fw && cluster, *arch);

#ifndef FABRIC_HAVE_SIM
    (void)chips;
    fabric::fail(ErrorCategory::Unsupported,
                 "this fabricctl was built without the simulator (sim_model), 'sim run' is "
                 "unavailable");
#else
    fabric::SimDeviceOptions opts;
    opts.cluster = cluster;
    opts.threads = sim_threads(a.threads);
    if (base_fw) opts.wh_base_firmware = base_fw->image;
    fabric::SimDevice dev(std::move(soc), *arch, std::move(opts));
    const bool legacy = !cluster && loads.size() == 1;  // the single-core form: unchanged output
    ConsoleMux console(!legacy);
    if (!a.json)
        dev.set_console_sink([&](const fabric::CoreLocation& c, char ch) { console.put(c, ch); });
    if (!a.trace.empty()) dev.trace_to(loads.front().loc, a.trace);

    fabric::LaunchOptions lopts;
    lopts.max_cycles = a.max_cycles;
    std::vector<fabric::LaunchTarget> targets;
    for (const auto& l : loads) targets.push_back({l.loc, &*l.image, placement});
    fabric::InterruptibleDevice stoppable(dev);
    const auto results = fabric::launch_many(stoppable, targets, lopts);
    console.finish();
    flush_stdout();

    // Verdicts, one line per core; the exit code of the worst outcome (trap, then timeout, then the
    // first non-zero firmware status).
    bool any_trap = false, any_timeout = false;
    int first_status_code = kOk;
    json cores = json::array();
    for (size_t i = 0; i < loads.size(); ++i) {
        const LoadSpec& l = loads[i];
        const fabric::LaunchResult& r = results[i];
        const std::string where = fmt::format("{} (eth {})", l.loc.str(), l.channel);
        int code = kOk;
        switch (r.outcome) {
            case fabric::LaunchOutcome::Exited: {
                code = firmware_exit_code(r.status.exit_status);
                std::string verdict =
                    r.returned_to_base_firmware
                        ? fmt::format(
                              "firmware on {} returned {} to the base firmware after {} cycles",
                              where, r.status.exit_status, r.cycles)
                        : fmt::format("firmware on {} exited with status {} after {} cycles", where,
                                      r.status.exit_status, r.cycles);
                if (code == kFirmwareStatusHigh) verdict += fmt::format(" (exit code {})", code);
                if (!a.quiet || code != kOk) log_line(verdict);
                if (code != kOk && first_status_code == kOk) first_status_code = code;
                break;
            }
            case fabric::LaunchOutcome::Trapped:
                code = kTrap;
                any_trap = true;
                log_line(fmt::format(
                    "firmware trapped on {}: {} (mcause {}) at pc {}, tval {}, after {} cycles",
                    where, r.status.trap_name, r.status.trap_cause, fabric::hex32(r.status.trap_pc),
                    fabric::hex32(r.status.trap_tval), r.cycles));
                break;
            case fabric::LaunchOutcome::Timeout:
                code = kTimeout;
                any_timeout = true;
                log_line(fmt::format(
                    "cycle budget of {} cycles exhausted: firmware on {} still running at pc {}",
                    a.max_cycles, where,
                    r.status.pc ? fabric::hex32(*r.status.pc) : std::string("unknown")));
                break;
            default:
                fabric::fail(ErrorCategory::Internal, "unknown launch outcome");
        }
        json c{
            {"core",
             {{"chip", l.loc.chip},
              {"x", l.loc.core.x},
              {"y", l.loc.core.y},
              {"eth_channel", l.channel}}},
            {"firmware", l.path},
            {"entry", l.image->entry()},
            {"launch", r.method == fabric::LaunchMethod::LaunchFlag ? "launch_flag" : "reset_pc"},
            {"outcome", fabric::outcome_name(r.outcome)},
            {"cycles", r.cycles},
            {"console", dev.console(l.loc)},
            {"exit_code", code}};
        if (r.status.pc) c["pc"] = *r.status.pc;
        if (r.outcome == fabric::LaunchOutcome::Exited) {
            c["exit_status"] = r.status.exit_status;
            c["returned_to_base_firmware"] = r.returned_to_base_firmware;
        }
        if (r.outcome == fabric::LaunchOutcome::Trapped) {
            c["trap"] = {{"cause", r.status.trap_cause},
                         {"name", r.status.trap_name},
                         {"pc", r.status.trap_pc},
                         {"tval", r.status.trap_tval}};
        }
        cores.push_back(std::move(c));
    }
    const int code = any_trap ? kTrap : any_timeout ? kTimeout : first_status_code;

    if (a.json) {
        json j;
        if (legacy) {  // the single-core document, as before, plus "cores"
            j = cores.front();
            j.erase("launch");
            j.erase("returned_to_base_firmware");
            j["max_cycles"] = a.max_cycles;
        }
        j["ok"] = code == kOk;
        j["arch"] = fabric::arch_name(*arch);
        j["soc"] = soc_path;
        if (cluster) j["cluster"] = a.cluster;
        j["base_firmware"] = base_fw ? json(base_fw->path) : json(nullptr);
        j["device_cycles"] = dev.cycles();
        j["max_cycles"] = a.max_cycles;
        j["cores"] = cores;
        j["exit_code"] = code;
        print_json(j);
    }
    return code;
#endif
}

class SimRun final : public CliCommand {
  public:
    SimRun(CLI::App& app, bool& as_json) : as_json_(as_json) {
        auto* sim =
            &command_group(app, "sim", "The Verilated SoC model: run firmware on it, serve it");
        sim->require_subcommand(1);
        cmd_ = sim->add_subcommand("run", "Load an ELF onto a simulated ERISC and run it to exit");
        const CLI::Validator arch_check(
            [](std::string& s) -> std::string {
                if (fabric::parse_arch(s)) return {};
                return "unknown arch '" + s + "' (known: wormhole_b0, blackhole)";
            },
            "wormhole_b0|blackhole", "arch");
        cmd_->add_option("--arch", args_.arch, "Chip architecture")->required()->check(arch_check);
        cmd_->add_option("--soc", args_.soc,
                         "SoC descriptor (default: soc_descriptors/<arch default>.yaml)");
        cmd_->add_option("--cluster", args_.cluster,
                         "Cluster descriptor (tt-umd YAML): the chips and their Ethernet links");
        cmd_->add_option("--core", args_.core,
                         "ERISC to run on: eth channel (e.g. 0) or NOC0 x-y (9-0)");
        cmd_->add_option("--load", args_.loads,
                         "Load firmware onto a core: [chip:]core=firmware.elf (core: eth channel "
                         "or x-y; chip default 0); repeatable")
            ->allow_extra_args(false);
        auto* base_opt = cmd_->add_option("--base-fw", args_.base_fw,
                                          "Wormhole base firmware every eth core boots (default "
                                          "for --cluster: the build's erisc_base.elf)");
        cmd_->add_flag("--no-base-fw", args_.no_base_fw,
                       "Start every core bare metal (reset PC), also with --cluster")
            ->excludes(base_opt);
        add_threads_option(*cmd_, args_.threads);
        add_max_cycles_option(*cmd_, args_.max_cycles, "Cycle budget")->capture_default_str();
        cmd_->add_option("--trace", args_.trace,
                         "Write an FST waveform of the (first) core's tile");
        cmd_->add_flag("--json", as_json_,
                       "Print the result as JSON (console included, not streamed)");
        cmd_->add_flag("-q,--quiet", args_.quiet, "No log line on a successful exit");
        cmd_->add_option("firmware", args_.firmware, "Firmware ELF (rv32im) for --core");
    }

    bool parsed() const override { return cmd_->parsed(); }

    int run() const override {
        if (args_.core.empty() != args_.firmware.empty()) {
            return report_error(as_json_, "usage",
                                args_.core.empty()
                                    ? "a firmware file needs --core (or use --load core=fw.elf)"
                                    : "--core needs a firmware file (run 'fabricctl --help')",
                                kUsage);
        }
        if (args_.core.empty() && args_.loads.empty()) {
            return report_error(as_json_, "usage",
                                "nothing to run: give --core C firmware.elf or --load "
                                "[chip:]core=firmware.elf (run 'fabricctl --help')",
                                kUsage);
        }
        SimRunArgs a = args_;
        a.json = as_json_;
        return sim_run(a);
    }

  private:
    CLI::App* cmd_ = nullptr;
    bool& as_json_;
    SimRunArgs args_;
};

}  // namespace

CliCommandPtr add_sim_command(CLI::App& app, bool& as_json) {
    return std::make_shared<SimRun>(app, as_json);
}

}  // namespace fabricctl
