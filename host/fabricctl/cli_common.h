// What the fabricctl commands share: exit codes, the stderr log line, error reports (also as
// JSON), and where default SoC descriptors and firmware images are found.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/exit_mailbox.h"
#include "fabric/health_monitor.h"
#include "fabric/interrupt.h"
#include "fabric/progress.h"
#include "fabric/soc_descriptor.h"
#include "hal/arch_map.h"

namespace fabricctl {

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
    kFabric = 108,             // `fabric`: a router failed / lagged, or the traffic check failed,
                               // or the health monitor found a stuck component (a router whose
                               // heartbeat stopped, that trapped or exited while it should run):
                               // the message names it; --json adds a "stuck" array
    kOutput = 109,             // the results could not be written to stdout (disk full, ...)
    kInternal = 110,           // a bug: please report
    kSignalBase = 128,         // stopped by signal N (SIGINT 130, SIGTERM 143), as a shell says
};

int exit_code_for(fabric::ErrorCategory c);
// The exit code of a firmware that exited with `status`: the status itself up to
// kFirmwareStatusMax, kFirmwareStatusHigh above.
int firmware_exit_code(uint32_t status);

// A fabricctl subcommand. Its constructor adds it and its options to the command line (CLI11);
// main() parses, asks every command whether it was the one parsed, and runs that one: it calls
// the library and prints. Each lives in its own <name>_cmd.cpp, whose header declares only
// add_<name>_command(app, as_json); the --json flag of every command sets `as_json`, which main()
// reads when it reports an error.
class CliCommand {
  public:
    virtual ~CliCommand() = default;
    virtual bool parsed() const = 0;
    virtual int run() const = 0;  // the exit code; throws fabric::Error
};
using CliCommandPtr = std::shared_ptr<const CliCommand>;
using CliCommands = std::vector<CliCommandPtr>;

// The subcommand `name` of `app` (e.g. "mesh", which several command files add to), added with
// `description` the first time.
CLI::App& command_group(CLI::App& app, const std::string& name, const std::string& description);
// `mesh`: routes, up, status, down, run, map (mesh_<verb>_cmd).
CLI::App& mesh_group(CLI::App& app);
// `fabric`: up, run (fabric_<verb>_cmd).
CLI::App& fabric_group(CLI::App& app);

// stdout: every result goes through these, so a failed write is seen however it was printed.
// A JSON document (2-space indent) and a newline on stdout.
void print_json(const nlohmann::json& j);
// Flush stdout, remembering the reason of the first write that failed.
void flush_stdout();
// Whether `e` (what fmt::print throws) is a failed write to stdout; if so its reason is remembered.
bool stdout_write_failed(const std::system_error& e);
// The exit code once the results are out: `code`, or kOutput if stdout could not be written
// (a full disk, a closed file): then "error: cannot write the results to stdout: <reason>" is
// logged. A command's own failure code is kept, with the same line.
int finish_stdout(int code);

// A progress line on stderr (fabric/progress.h) when stderr is a terminal; nullptr otherwise, so
// nothing extra is written to a file or a pipe.
std::unique_ptr<fabric::ProgressLine> progress_on_terminal(const std::string& title);

// Messages are one line: fold any embedded newlines.
std::string one_line(std::string s);
// "fabricctl: <msg>" on stderr (stdout flushed first), control characters escaped
// (fabric::escape_control).
void log_line(const std::string& msg);
// Log "error: <message>"; with --json also print {"ok": false, "error": {...}, "exit_code"}
// (and the members of `extra`, an object, beside them).
int report_error(bool as_json, std::string_view category, const std::string& message, int code,
                 const nlohmann::json& extra = nlohmann::json::object());

// Kernels this command launched (`pcie run`, `flash --wait`), when a signal interrupted it: what
// can be stopped is stopped and stderr says so (fabric::stop_cores_after_interrupt), then the
// Interrupted goes on to main's handler.
// The console a launched core's exit mailbox kept (fabric/exit_mailbox.h), every line after
// `indent`, ending in a newline. Empty when the firmware printed nothing or set no mailbox up.
std::string console_text(const fabric::ExitMailboxReport& mailbox, std::string_view indent);
// "47 earlier console bytes lost (the ring keeps the last 512)" when the ring wrapped, else empty.
std::string console_lost_note(const fabric::ExitMailboxReport& mailbox);
// The same for --json: "console" (the bytes kept) and "console_lost", when the firmware set its
// mailbox up.
void add_console_json(nlohmann::json& j, const fabric::ExitMailboxReport& mailbox);

[[noreturn]] void stop_launched_and_rethrow(fabric::Device& device,
                                            const std::vector<fabric::CoreLocation>& cores,
                                            const std::vector<fabric::LaunchMethod>& methods,
                                            const fabric::Interrupted& interrupt);

// One stuck component as JSON (the "stuck" array of an error document).
nlohmann::json stuck_json(const fabric::StuckReport& r);

// "a,b,,c" -> {"a", "b", "", "c"}; empty text gives an empty list.
std::vector<std::string> split_list(const std::string& text);

// "0,2,5" -> {0, 2, 5}; Error(BadInput) "<option> <text>: 'x' is not a <what>" for anything but
// comma-separated decimal numbers (at most 6 digits each). Empty text gives an empty list.
std::vector<uint32_t> parse_number_list(std::string_view option, const std::string& text,
                                        std::string_view what = "number");

// Option names are the same in every command: --max-cycles (the cycle budget), --bytes (bytes
// per packet). A renamed option stays as a hidden alias that still works and says on stderr
// "warning: --size is deprecated, use --bytes"; given both, the later one counts.
template <typename T>
CLI::Option* add_renamed_option(CLI::App& cmd, const std::string& name, const std::string& old_name,
                                T& value, const std::string& help,
                                const CLI::Validator& check = CLI::Validator()) {
    CLI::Option* opt = cmd.add_option(name, value, help)->check(check);
    cmd.add_option_function<T>(
           old_name,
           [&value, name, old_name](const T& v) {
               log_line("warning: " + old_name + " is deprecated, use " + name);
               value = v;
           },
           "")
        ->check(check)
        ->group("");  // hidden from --help
    return opt;
}
// --max-cycles N (N > 0); old name --timeout-cycles.
CLI::Option* add_max_cycles_option(CLI::App& cmd, uint64_t& value, const std::string& help);
// --bytes B: bytes per packet; old name --size.
CLI::Option* add_bytes_option(CLI::App& cmd, uint32_t& value, const std::string& help);
// --threads N (1..64): threads stepping the model (fabric::SimDeviceOptions::threads). `value`
// stays 0 when the option is not given; sim_threads() then decides.
CLI::Option* add_threads_option(CLI::App& cmd, uint32_t& value);
// The threads a command's model runs on: `given` (--threads) if not 0, else $FABRIC_SIM_THREADS,
// else 1 (one thread is the fastest for runs where few chips are busy at once, and leaves the
// other cores to other work). Error(BadInput) "FABRIC_SIM_THREADS 'x': not a number of threads
// (1..64)".
uint32_t sim_threads(uint32_t given);

// The default SoC descriptor of an arch: $FABRIC_SOC_DESCRIPTOR_DIR, next to the executable,
// ../share/erisc-fabric/soc_descriptors, then the source tree. Error(BadInput) if none.
std::string find_default_descriptor(hal::Arch arch);
// A firmware image of this build (<name>.elf for `arch`): next to the build tree's fabricctl
// (../firmware/<arch>/), installed (../share/erisc-fabric/firmware/<arch>/), or where this build
// writes it. nullopt if none exists; `looked` (if given) lists the places tried.
std::optional<std::string> find_firmware(hal::Arch arch, const std::string& name,
                                         std::string* looked = nullptr);
// `given` if not empty, else this build's <name>.elf for `arch`; Error(BadInput) naming the
// places looked in and the option that overrides them.
std::string firmware_path(const std::string& given, hal::Arch arch, const std::string& name,
                          const std::string& option);

// The SoC descriptor `given` (or the arch's default) for a target of `arch`; Error(BadInput)
// "<file>: descriptor is for X but the <what> is Y" if it describes another arch.
fabric::SocDescriptor load_soc_for(hal::Arch arch, const std::string& given,
                                   std::string_view what = "target");

// `--target pcie`: the first Tenstorrent device under `dir` (tt-kmd) as a PcieDevice, with the
// SoC descriptor of its arch (`soc`, or the default). Error(Device) "--target pcie: no
// Tenstorrent device found under <dir> ..." when there is none.
// `sim_socket` non-empty: the chips a `fabricctl sim serve` keeps on that socket, instead.
std::unique_ptr<fabric::Device> open_pcie_device(const std::string& dir, const std::string& soc,
                                                 const std::string& sim_socket = "");

// The Wormhole base firmware the eth cores boot in the model, as the --base-fw / --no-base-fw
// options ask: `given` if not empty; else, when `wanted` (the command's default applies) and
// the arch is Wormhole, this build's erisc_base.elf (Error(BadInput) if there is none). Blackhole
// has no base firmware in the model: a given image is ignored with a warning. The image is
// loaded and its placement checked.
struct BaseFirmware {
    std::string path;
    fabric::ElfImage image;
};
std::optional<BaseFirmware> choose_base_firmware(const std::string& given, bool wanted,
                                                 hal::Arch arch);

}  // namespace fabricctl
