// fabricctl: the erisc-fabric command line.
//
//   fabricctl soc show <descriptor.yaml> [--json]
//   fabricctl sim run --arch A [--soc yaml] --core C [--max-cycles N] [--trace f.fst] [--json]
//                     [--quiet] firmware.elf
//
// Results go to stdout (for `sim run`: exactly the firmware console; with --json: one JSON
// document), logs and errors to stderr, one line each. Exit codes are listed in ExitCode below and
// documented in host/README.md.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/launch.h"
#include "fabric/soc_descriptor.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace {

using fabric::ErrorCategory;
using nlohmann::json;

// Process exit codes. Firmware statuses 0..63 pass through unchanged; everything fabricctl itself
// reports is 64 or above, so a firmware status can never be mistaken for a tool failure.
enum ExitCode : int {
    kOk = 0,                   // success; for `sim run`: firmware exited with status 0
    kFirmwareStatusMax = 63,   // `sim run`: firmware exited with this status (1..63)
    kFirmwareStatusHigh = 64,  // `sim run`: firmware exited with a status >= 64
    kUsage = 100,              // bad command line
    kBadInput = 101,           // unreadable file, unknown/unsuitable core, arch mismatch
    kBadDescriptor = 102,      // SoC descriptor invalid
    kBadElf = 103,             // firmware ELF malformed or does not fit the core
    kTrap = 104,               // firmware trapped
    kTimeout = 105,            // cycle budget exhausted
    kDevice = 106,             // the device backend refused an access
    kUnsupported = 107,        // not available in this build (e.g. no simulator, no tracing)
    kInternal = 110,           // a bug: please report
};

int exit_code_for(ErrorCategory c) {
    switch (c) {
        case ErrorCategory::BadInput:
            return kBadInput;
        case ErrorCategory::BadDescriptor:
            return kBadDescriptor;
        case ErrorCategory::BadElf:
            return kBadElf;
        case ErrorCategory::Device:
            return kDevice;
        case ErrorCategory::Timeout:
            return kTimeout;
        case ErrorCategory::Unsupported:
            return kUnsupported;
        case ErrorCategory::Internal:
            return kInternal;
        default:
            return kInternal;
    }
}

// Messages are one line: fold any embedded newlines.
std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

void log_line(const std::string& msg) {
    std::fflush(stdout);
    std::fprintf(stderr, "fabricctl: %s\n", one_line(msg).c_str());
}

// With --json, failures are also reported on stdout as a document.
int report_error(bool as_json, std::string_view category, const std::string& message, int code) {
    log_line(fmt::format("error: {}", message));
    if (as_json) {
        json j{{"ok", false},
               {"error", {{"category", category}, {"message", one_line(message)}}},
               {"exit_code", code}};
        std::cout << j.dump(2) << std::endl;
    }
    return code;
}

// ---------------------------------------------------------------------------------------------
// Default SoC descriptors.

std::string default_descriptor_file(hal::Arch arch) {
    return arch == hal::Arch::Blackhole ? "blackhole_140_arch.yaml" : "wormhole_b0_80_arch.yaml";
}

std::string find_default_descriptor(hal::Arch arch) {
    namespace fs = std::filesystem;
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("FABRIC_SOC_DESCRIPTOR_DIR"); env && *env)
        dirs.emplace_back(env);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        dirs.push_back(exe.parent_path() / "soc_descriptors");
        dirs.push_back(exe.parent_path() / ".." / "share" / "erisc-fabric" / "soc_descriptors");
    }
    dirs.emplace_back(FABRIC_SOC_DESCRIPTOR_DIR);
    std::string looked;
    for (const auto& d : dirs) {
        const fs::path p = d / default_descriptor_file(arch);
        if (fs::is_regular_file(p, ec)) return p.string();
        looked += (looked.empty() ? "" : ", ") + d.string();
    }
    fabric::fail(ErrorCategory::BadInput,
                 "no default SoC descriptor {} for {} (looked in: {}); pass --soc",
                 default_descriptor_file(arch), fabric::arch_name(arch), looked);
}

// ---------------------------------------------------------------------------------------------
// soc show

json soc_json(const fabric::SocDescriptor& d) {
    using fabric::CoreType;
    json counts = json::object();
    for (auto t : {CoreType::Worker, CoreType::Eth, CoreType::Dram, CoreType::Pcie, CoreType::Arc,
                   CoreType::RouterOnly, CoreType::Security, CoreType::L2cpu}) {
        counts[std::string(fabric::core_type_name(t))] = d.count(t);
    }
    json eth = json::array();
    for (uint32_t ch = 0; ch < d.eth_channels(); ++ch) {
        const auto c = d.eth_core(ch);
        eth.push_back({{"channel", ch}, {"core", c.str()}, {"x", c.x}, {"y", c.y}});
    }
    json dram = json::array();
    for (const auto& chan : d.dram_channels()) {
        json ports = json::array();
        for (const auto& c : chan) ports.push_back(c.str());
        dram.push_back(ports);
    }
    return json{{"source", d.source()},
                {"arch", fabric::arch_name(d.arch())},
                {"grid", {{"x_size", d.grid_x()}, {"y_size", d.grid_y()}}},
                {"counts", counts},
                {"eth_channels", eth},
                {"dram_channels", dram},
                {"worker_l1_size", d.worker_l1_size()},
                {"eth_l1_size", d.eth_l1_size()},
                {"dram_bank_size", d.dram_bank_size()}};
}

std::string kib(uint64_t bytes) {
    if (bytes % (1024ull * 1024 * 1024) == 0) return fmt::format("{} GiB", bytes >> 30);
    if (bytes % (1024ull * 1024) == 0) return fmt::format("{} MiB", bytes >> 20);
    if (bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
    return fmt::format("{} B", bytes);
}

int soc_show(const std::string& path, bool as_json) {
    const auto d = fabric::SocDescriptor::load_file(path);
    if (as_json) {
        json j = soc_json(d);
        j["ok"] = true;
        std::cout << j.dump(2) << std::endl;
        return kOk;
    }
    using fabric::CoreType;
    std::string counts;
    for (auto t : {CoreType::Worker, CoreType::Eth, CoreType::Dram, CoreType::Pcie, CoreType::Arc,
                   CoreType::RouterOnly, CoreType::Security, CoreType::L2cpu}) {
        if (d.count(t) == 0 && (t == CoreType::Security || t == CoreType::L2cpu)) continue;
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", fabric::core_type_name(t),
                              d.count(t));
    }
    std::string eth;
    for (uint32_t ch = 0; ch < d.eth_channels(); ++ch) {
        eth += fmt::format("{}{}:{}", ch == 0 ? "" : " ", ch, d.eth_core(ch).str());
    }
    fmt::print("descriptor   {}\n", d.source());
    fmt::print("arch         {}\n", fabric::arch_name(d.arch()));
    fmt::print("grid         {} x {}\n", d.grid_x(), d.grid_y());
    fmt::print("cores        {}\n", counts);
    fmt::print("dram         {} channels, {} per bank\n", d.dram_channels().size(),
               kib(d.dram_bank_size()));
    fmt::print("L1           worker {} ({}), eth {} ({})\n", d.worker_l1_size(),
               kib(d.worker_l1_size()), d.eth_l1_size(), kib(d.eth_l1_size()));
    fmt::print("eth channels {}\n", eth.empty() ? "none" : eth);
    return kOk;
}

// ---------------------------------------------------------------------------------------------
// sim run

struct SimRunArgs {
    std::string arch;
    std::string soc;
    std::string core;
    uint64_t max_cycles = fabric::kDefaultMaxCycles;
    std::string trace;
    std::string firmware;
    bool json = false;
    bool quiet = false;
};

// --core: an eth channel ("3") or NOC0 coordinates ("9-0") of an eth core.
fabric::CoreCoord resolve_eth_core(const fabric::SocDescriptor& d, const std::string& spec) {
    const bool digits = !spec.empty() && spec.find_first_not_of("0123456789") == std::string::npos;
    if (digits) {
        if (spec.size() > 6) {
            fabric::fail(ErrorCategory::BadInput, "--core {}: eth channel out of range", spec);
        }
        const auto ch = static_cast<uint32_t>(std::stoul(spec));
        if (ch >= d.eth_channels()) {
            fabric::fail(ErrorCategory::BadInput,
                         "--core {}: eth channel {} does not exist ({} has channels 0..{})", spec,
                         ch, d.source(), d.eth_channels() == 0 ? 0 : d.eth_channels() - 1);
        }
        return d.eth_core(ch);
    }
    const auto c = fabric::parse_core_coord(spec);
    if (!c) {
        fabric::fail(ErrorCategory::BadInput,
                     "--core {}: not an eth channel number or 'x-y' core coordinate", spec);
    }
    const auto t = d.core_type(*c);
    if (!t) {
        fabric::fail(ErrorCategory::BadInput, "--core {}: no core at {} in {} (grid {}x{})", spec,
                     c->str(), d.source(), d.grid_x(), d.grid_y());
    }
    if (*t != fabric::CoreType::Eth) {
        fabric::fail(ErrorCategory::BadInput, "--core {}: core {} is a '{}' core, not an eth core",
                     spec, c->str(), fabric::core_type_name(*t));
    }
    return *c;
}

int sim_run(const SimRunArgs& a) {
    const auto arch = fabric::parse_arch(a.arch);
    if (!arch) fabric::fail(ErrorCategory::Internal, "--arch {} passed validation", a.arch);
    const std::string soc_path = a.soc.empty() ? find_default_descriptor(*arch) : a.soc;
    auto soc = fabric::SocDescriptor::load_file(soc_path);
    if (soc.arch() != *arch) {
        fabric::fail(ErrorCategory::BadInput, "{}: descriptor is for {} but --arch is {}", soc_path,
                     fabric::arch_name(soc.arch()), fabric::arch_name(*arch));
    }
    const fabric::CoreCoord coord = resolve_eth_core(soc, a.core);
    const uint32_t channel = *soc.eth_channel(coord);
    const fabric::CoreLocation loc{0, coord};
    const auto image = fabric::ElfImage::load_file(a.firmware);
    const auto placement = fabric::erisc_placement(hal::arch_map(*arch), soc.eth_l1_size());
    image.check_placement(placement);  // before creating the model: fail fast
    if (const uint32_t base = hal::arch_map(*arch).app_fw_base; image.entry() != base) {
        log_line(
            fmt::format("warning: {}: entry {} is not the {} firmware base {}; was it built "
                        "for another arch?",
                        a.firmware, fabric::hex32(image.entry()), fabric::arch_name(*arch),
                        fabric::hex32(base)));
    }

#ifndef FABRIC_HAVE_SIM
    (void)channel;
    (void)loc;
    fabric::fail(ErrorCategory::Unsupported,
                 "this fabricctl was built without the simulator (sim_model), 'sim run' is "
                 "unavailable");
#else
    fabric::SimDevice dev(std::move(soc), *arch);
    if (!a.json) {
        dev.set_console_sink([](const fabric::CoreLocation&, char c) {
            std::fputc(c, stdout);
            if (c == '\n') std::fflush(stdout);
        });
    }
    if (!a.trace.empty()) dev.trace_to(loc, a.trace);

    fabric::LaunchOptions opts;
    opts.max_cycles = a.max_cycles;
    const auto r = fabric::launch(dev, loc, image, placement, opts);
    std::fflush(stdout);

    const std::string where = fmt::format("{} (eth {})", loc.str(), channel);
    int code = kOk;
    std::string verdict;
    switch (r.outcome) {
        case fabric::LaunchOutcome::Exited:
            code = r.status.exit_status <= kFirmwareStatusMax
                       ? static_cast<int>(r.status.exit_status)
                       : kFirmwareStatusHigh;
            verdict = fmt::format("firmware on {} exited with status {} after {} cycles", where,
                                  r.status.exit_status, r.cycles);
            if (code == kFirmwareStatusHigh) verdict += fmt::format(" (exit code {})", code);
            if (!a.quiet || code != kOk) log_line(verdict);
            break;
        case fabric::LaunchOutcome::Trapped:
            code = kTrap;
            log_line(fmt::format(
                "firmware trapped on {}: {} (mcause {}) at pc {}, tval {}, after "
                "{} cycles",
                where, r.status.trap_name, r.status.trap_cause, fabric::hex32(r.status.trap_pc),
                fabric::hex32(r.status.trap_tval), r.cycles));
            break;
        case fabric::LaunchOutcome::Timeout:
            code = kTimeout;
            log_line(
                fmt::format("cycle budget of {} cycles exhausted: firmware on {} still "
                            "running at pc {}",
                            a.max_cycles, where,
                            r.status.pc ? fabric::hex32(*r.status.pc) : std::string("unknown")));
            break;
        default:
            fabric::fail(ErrorCategory::Internal, "unknown launch outcome");
    }

    if (a.json) {
        json j{{"ok", r.outcome == fabric::LaunchOutcome::Exited},
               {"arch", fabric::arch_name(*arch)},
               {"soc", soc_path},
               {"core",
                {{"chip", loc.chip}, {"x", coord.x}, {"y", coord.y}, {"eth_channel", channel}}},
               {"firmware", a.firmware},
               {"entry", image.entry()},
               {"outcome", fabric::outcome_name(r.outcome)},
               {"cycles", r.cycles},
               {"max_cycles", a.max_cycles},
               {"console", dev.console(loc)},
               {"exit_code", code}};
        if (r.status.pc) j["pc"] = *r.status.pc;
        if (r.outcome == fabric::LaunchOutcome::Exited) j["exit_status"] = r.status.exit_status;
        if (r.outcome == fabric::LaunchOutcome::Trapped) {
            j["trap"] = {{"cause", r.status.trap_cause},
                         {"name", r.status.trap_name},
                         {"pc", r.status.trap_pc},
                         {"tval", r.status.trap_tval}};
        }
        std::cout << j.dump(2) << std::endl;
    }
    return code;
#endif
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"erisc-fabric control: SoC descriptors, firmware on the simulated ERISC",
                 "fabricctl"};
    app.set_version_flag("--version", FABRIC_VERSION);
    app.require_subcommand(1);
    app.footer(
        "Exit codes: 0 ok; 1-63 firmware exit status (sim run); 64 firmware status >= 64; "
        "100 usage; 101 bad input; 102 bad SoC descriptor; 103 bad ELF; 104 firmware trapped; "
        "105 cycle budget exhausted; 106 device error; 107 unsupported; 110 internal error.");

    bool as_json = false;

    // soc show
    auto* soc = app.add_subcommand("soc", "SoC descriptors (tt-umd YAML)");
    soc->require_subcommand(1);
    auto* soc_show_cmd = soc->add_subcommand("show", "Validate a SoC descriptor and summarize it");
    std::string soc_path;
    soc_show_cmd->add_option("descriptor", soc_path, "SoC descriptor YAML")->required();
    soc_show_cmd->add_flag("--json", as_json, "Print the summary as JSON");

    // sim run
    auto* simc = app.add_subcommand("sim", "Run firmware on the Verilated SoC model");
    simc->require_subcommand(1);
    auto* run =
        simc->add_subcommand("run", "Load an ELF onto a simulated ERISC and run it to exit");
    SimRunArgs ra;
    const CLI::Validator arch_check(
        [](std::string& s) -> std::string {
            if (fabric::parse_arch(s)) return {};
            return "unknown arch '" + s + "' (known: wormhole_b0, blackhole)";
        },
        "wormhole_b0|blackhole", "arch");
    run->add_option("--arch", ra.arch, "Chip architecture")->required()->check(arch_check);
    run->add_option("--soc", ra.soc,
                    "SoC descriptor (default: soc_descriptors/<arch default>.yaml)");
    run->add_option("--core", ra.core, "ERISC to run on: eth channel (e.g. 0) or NOC0 x-y (9-0)")
        ->required();
    run->add_option("--max-cycles", ra.max_cycles, "Cycle budget")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    run->add_option("--trace", ra.trace, "Write an FST waveform of the core's tile");
    run->add_flag("--json", ra.json, "Print the result as JSON (console included, not streamed)");
    run->add_flag("-q,--quiet", ra.quiet, "No log line on a successful exit");
    run->add_option("firmware", ra.firmware, "Firmware ELF (rv32im)")->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
        const bool json_requested = [&] {
            for (int i = 1; i < argc; ++i) {
                if (std::string_view(argv[i]) == "--json") return true;
            }
            return false;
        }();
        std::string msg = e.what();
        return report_error(json_requested, "usage",
                            fmt::format("{} (run 'fabricctl --help')", msg), kUsage);
    }

    const bool json_out = as_json || ra.json;
    try {
        if (soc_show_cmd->parsed()) return soc_show(soc_path, as_json);
        if (run->parsed()) return sim_run(ra);
        return report_error(json_out, "usage", "no command given (run 'fabricctl --help')", kUsage);
    } catch (const fabric::Error& e) {
        return report_error(json_out, fabric::category_name(e.category()), e.what(),
                            exit_code_for(e.category()));
    } catch (const std::exception& e) {
        return report_error(json_out, "internal", fmt::format("internal error: {}", e.what()),
                            kInternal);
    }
}
