// What the fabricctl commands share: exit codes, the stderr log line, error reports (also as
// JSON), and where default SoC descriptors and firmware images are found.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/error.h"
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
    kInternal = 110,           // a bug: please report
};

int exit_code_for(fabric::ErrorCategory c);

// A fabricctl command: registered on the command line at start, run when it was parsed.
class CliCommand {
  public:
    virtual ~CliCommand() = default;
    virtual bool parsed() const = 0;
    virtual int run() const = 0;  // the exit code; throws fabric::Error
};

// Messages are one line: fold any embedded newlines.
std::string one_line(std::string s);
// "fabricctl: <msg>" on stderr (stdout flushed first), control characters escaped
// (fabric::escape_control).
void log_line(const std::string& msg);
// Log "error: <message>"; with --json also print {"ok": false, "error": {...}, "exit_code"}
// (and the members of `extra`, an object, beside them).
int report_error(bool as_json, std::string_view category, const std::string& message, int code,
                 const nlohmann::json& extra = nlohmann::json::object());

// "0,2,5" -> {0, 2, 5}; Error(BadInput) "<option> <text>: 'x' is not a <what>" for anything but
// comma-separated decimal numbers (at most 6 digits each). Empty text gives an empty list.
std::vector<uint32_t> parse_number_list(std::string_view option, const std::string& text,
                                        std::string_view what = "number");

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

// The SoC descriptor `given` (or the arch's default) for a target of `arch`; Error(BadInput) if
// it describes another arch.
fabric::SocDescriptor load_soc_for(hal::Arch arch, const std::string& given);

// `--target pcie`: the first Tenstorrent device under `dir` (tt-kmd) as a PcieDevice, with the
// SoC descriptor of its arch (`soc`, or the default). Error(Device) "--target pcie: no
// Tenstorrent device found under <dir> ..." when there is none.
std::unique_ptr<fabric::Device> open_pcie_device(const std::string& dir, const std::string& soc);

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
