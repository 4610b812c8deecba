#include "cli_common.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "fabric/error.h"
#include "fabric/health_monitor.h"
#include "fabric/kmd_port.h"
#include "fabric/kmd_socket.h"
#include "fabric/pcie_device.h"
#include "fabric/soc_descriptor.h"
#include "protocol/exit_mailbox.h"

namespace fabricctl {

using fabric::ErrorCategory;
using nlohmann::json;

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
        case ErrorCategory::Fabric:
            return kFabric;
        case ErrorCategory::Internal:
            return kInternal;
        default:
            return kInternal;
    }
}

int firmware_exit_code(uint32_t status) {
    return status <= kFirmwareStatusMax ? static_cast<int>(status) : kFirmwareStatusHigh;
}

std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

CLI::App& command_group(CLI::App& app, const std::string& name, const std::string& description) {
    for (CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == name) return *sub;
    }
    CLI::App* group = app.add_subcommand(name, description);
    group->require_subcommand(1);
    return *group;
}

CLI::App& mesh_group(CLI::App& app) {
    return command_group(app, "mesh", "Mesh graph descriptors, routing tables and the 2D fabric");
}

CLI::App& fabric_group(CLI::App& app) {
    return command_group(app, "fabric", "The 1D fabric (line or ring) in the simulator");
}

CLI::Option* add_max_cycles_option(CLI::App& cmd, uint64_t& value, const std::string& help) {
    return add_renamed_option(cmd, "--max-cycles", "--timeout-cycles", value, help,
                              CLI::PositiveNumber);
}

CLI::Option* add_bytes_option(CLI::App& cmd, uint32_t& value, const std::string& help) {
    return add_renamed_option(cmd, "--bytes", "--size", value, help);
}

namespace {
constexpr uint32_t kMaxSimThreads = 64;
}

CLI::Option* add_threads_option(CLI::App& cmd, uint32_t& value) {
    return cmd
        .add_option("--threads", value,
                    "Threads stepping the model, each a partition of the chips; the same results "
                    "as one (default: $FABRIC_SIM_THREADS, else 1)")
        ->check(CLI::Range(1u, kMaxSimThreads));
}

uint32_t sim_threads(uint32_t given) {
    if (given != 0) return given;
    const char* env = std::getenv("FABRIC_SIM_THREADS");
    if (env == nullptr || *env == '\0') return 1;
    const std::string text = env;
    uint32_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n == 0 || n > kMaxSimThreads) {
        fabric::fail(fabric::ErrorCategory::BadInput,
                     "FABRIC_SIM_THREADS '{}': not a number of threads (1..{})", text,
                     kMaxSimThreads);
    }
    return n;
}

namespace {
// errno of the first failed write to stdout; 0 while none failed (or the reason is unknown).
int stdout_errno = 0;

void note_stdout_failure() {
    if (stdout_errno == 0) stdout_errno = errno;
}
}  // namespace

std::unique_ptr<fabric::ProgressLine> progress_on_terminal(const std::string& title) {
    if (!::isatty(STDERR_FILENO)) return nullptr;
    return std::make_unique<fabric::ProgressLine>(stderr, title);
}

void print_json(const json& j) {
    std::cout << j.dump(2) << '\n';
    flush_stdout();
}

void flush_stdout() {
    errno = 0;
    if (std::fflush(stdout) != 0) note_stdout_failure();
}

bool stdout_write_failed(const std::system_error& e) {
    if (!std::ferror(stdout)) return false;
    if (stdout_errno == 0) stdout_errno = e.code().value();
    return true;
}

int finish_stdout(int code) {
    flush_stdout();
    if (!std::ferror(stdout) && std::cout.good()) return code;
    const std::string reason =
        stdout_errno ? fmt::format(": {}", std::strerror(stdout_errno)) : std::string();
    log_line(fmt::format("error: cannot write the results to stdout{}", reason));
    return code == kOk ? kOutput : code;
}

void log_line(const std::string& msg) {
    flush_stdout();
    // Paths and names in a message may come from the command line or a file: never raw.
    std::fprintf(stderr, "fabricctl: %s\n", fabric::escape_control(one_line(msg)).c_str());
}

std::string console_text(const fabric::ExitMailboxReport& mailbox, std::string_view indent) {
    std::string out;
    bool line_start = true;
    for (const char c : mailbox.console) {
        if (line_start) out += indent;
        out += c;
        line_start = c == '\n';
    }
    if (!line_start) out += '\n';
    return out;
}

std::string console_lost_note(const fabric::ExitMailboxReport& mailbox) {
    if (mailbox.console_lost == 0) return "";
    return fmt::format("{} earlier console bytes lost (the ring keeps the last {})",
                       mailbox.console_lost, protocol::kConsoleRingBytes);
}

void add_console_json(json& j, const fabric::ExitMailboxReport& mailbox) {
    if (mailbox.header.state == fabric::ExitMailboxState::NotSetUp) return;
    j["console"] = mailbox.console;
    j["console_lost"] = mailbox.console_lost;
}

void stop_launched_and_rethrow(fabric::Device& device,
                               const std::vector<fabric::CoreLocation>& cores,
                               const std::vector<fabric::LaunchMethod>& methods,
                               const fabric::Interrupted& interrupt) {
    if (const std::string done =
            fabric::stop_cores_after_interrupt(device, cores, methods, interrupt);
        !done.empty()) {
        log_line(done);
    }
    throw interrupt;
}

int report_error(bool as_json, std::string_view category, const std::string& message, int code,
                 const json& extra) {
    log_line(fmt::format("error: {}", message));
    if (as_json) {
        json j{{"ok", false},
               {"error", {{"category", category}, {"message", one_line(message)}}},
               {"exit_code", code}};
        for (const auto& [key, value] : extra.items()) j[key] = value;
        print_json(j);
    }
    return code;
}

namespace {
std::string default_descriptor_file(hal::Arch arch) {
    return arch == hal::Arch::Blackhole ? "blackhole_140_arch.yaml" : "wormhole_b0_80_arch.yaml";
}
}  // namespace

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

std::optional<std::string> find_firmware(hal::Arch arch, const std::string& name,
                                         std::string* looked) {
    namespace fs = std::filesystem;
    const std::string a(fabric::arch_name(arch));
    const std::string file = name + ".elf";
    std::vector<fs::path> candidates;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        candidates.push_back(exe.parent_path() / ".." / "firmware" / a / file);
        candidates.push_back(exe.parent_path() / ".." / "share" / "erisc-fabric" / "firmware" / a /
                             file);
    }
    candidates.emplace_back(fs::path(FABRIC_FIRMWARE_DIR) / a / file);
    for (const auto& p : candidates) {
        if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
        if (looked) {
            *looked += (looked->empty() ? "" : ", ") + p.parent_path().lexically_normal().string();
        }
    }
    return std::nullopt;
}

fabric::SocDescriptor load_soc_for(hal::Arch arch, const std::string& given,
                                   std::string_view what) {
    auto soc =
        fabric::SocDescriptor::load_file(given.empty() ? find_default_descriptor(arch) : given);
    if (soc.arch() != arch) {
        fabric::fail(ErrorCategory::BadInput, "{}: descriptor is for {} but the {} is {}",
                     soc.source(), fabric::arch_name(soc.arch()), what, fabric::arch_name(arch));
    }
    return soc;
}

std::unique_ptr<fabric::Device> open_pcie_device(const std::string& dir, const std::string& soc,
                                                 const std::string& sim_socket) {
    std::shared_ptr<fabric::KmdPort> port;
    if (sim_socket.empty()) {
        port = std::make_shared<fabric::LinuxKmdPort>(dir);
    } else {
        port = std::make_shared<fabric::RemoteKmdPort>(sim_socket);
    }
    const auto found = fabric::discover_devices(*port);
    if (found.empty()) {
        fabric::fail(ErrorCategory::Device,
                     "--target pcie: no Tenstorrent device found under {} (is the tt-kmd driver "
                     "loaded and a card present?)",
                     port->description());
    }
    if (!found.front().arch) {
        fabric::fail(ErrorCategory::Device, "{}: not a Wormhole or Blackhole device",
                     found.front().path);
    }
    return std::make_unique<fabric::PcieDevice>(port, load_soc_for(*found.front().arch, soc));
}

std::string firmware_path(const std::string& given, hal::Arch arch, const std::string& name,
                          const std::string& option) {
    if (!given.empty()) return given;
    std::string looked;
    if (auto p = find_firmware(arch, name, &looked)) return *p;
    fabric::fail(ErrorCategory::BadInput,
                 "no {}.elf for {} found (looked in: {}); build the firmware or pass {}", name,
                 fabric::arch_name(arch), looked, option);
}

std::optional<BaseFirmware> choose_base_firmware(const std::string& given, bool wanted,
                                                 hal::Arch arch) {
    std::optional<std::string> path;
    if (!given.empty()) {
        path = given;
    } else if (wanted && arch == hal::Arch::WormholeB0) {
        std::string looked;
        path = find_firmware(hal::Arch::WormholeB0, "erisc_base", &looked);
        if (!path) {
            fabric::fail(
                fabric::ErrorCategory::BadInput,
                "no Wormhole base firmware erisc_base.elf found (looked in: {}); build the "
                "firmware, pass --base-fw <elf>, or --no-base-fw",
                looked);
        }
    }
    if (path && arch != hal::Arch::WormholeB0) {
        log_line(fmt::format("warning: --base-fw {} ignored: {} has no base firmware in the model",
                             *path, fabric::arch_name(arch)));
        path.reset();
    }
    if (!path) return std::nullopt;
    BaseFirmware fw{*path, fabric::ElfImage::load_file(*path)};
    fw.image.check_placement(fabric::base_firmware_placement());
    return fw;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    if (text.empty()) return out;
    size_t at = 0;
    while (true) {
        const size_t comma = text.find(',', at);
        out.push_back(text.substr(at, comma == std::string::npos ? comma : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return out;
}

std::vector<uint32_t> parse_number_list(std::string_view option, const std::string& text,
                                        std::string_view what) {
    std::vector<uint32_t> out;
    for (const std::string& item : split_list(text)) {
        if (item.empty() || item.size() > 6 ||
            item.find_first_not_of("0123456789") != std::string::npos) {
            fabric::fail(fabric::ErrorCategory::BadInput, "{} {}: '{}' is not a {}", option, text,
                         item, what);
        }
        out.push_back(static_cast<uint32_t>(std::stoul(item)));
    }
    return out;
}

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

}  // namespace fabricctl
