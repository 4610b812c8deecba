#include "pcie_run_cmd.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_common.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/interrupt.h"
#include "fabric/kmd_abi.h"
#include "fabric/launch.h"
#include "fabric/pcie_device.h"
#include "fabric/soc_descriptor.h"
#include "pcie_port.h"

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using nlohmann::json;

// The first device the port finds, which must be a Wormhole or Blackhole; its arch.
hal::Arch first_device_arch(fabric::KmdPort& port) {
    const auto found = fabric::discover_devices(port);
    if (found.empty()) {
        fabric::fail(ErrorCategory::Device,
                     "--target pcie: no Tenstorrent device found under {} (is the tt-kmd driver "
                     "loaded and a card present?)",
                     port.description());
    }
    if (!found.front().arch) {
        fabric::fail(ErrorCategory::Device, "{}: {}", found.front().path,
                     found.front().error.empty() ? "not a Wormhole or Blackhole device"
                                                 : found.front().error);
    }
    return *found.front().arch;
}

// --core C: eth channel C of chip 0.
fabric::CoreLocation eth_core(const std::string& text, const fabric::SocDescriptor& soc) {
    const bool digits = !text.empty() && text.size() <= 6 &&
                        text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoul(text) >= soc.eth_channels()) {
        fabric::fail(ErrorCategory::BadInput, "--core {}: not an eth channel of {} (0..{})", text,
                     soc.source(), soc.eth_channels() - 1);
    }
    return {0, soc.eth_core(static_cast<uint32_t>(std::stoul(text)))};
}

// The exit code of a launch (as `sim run`'s) and its verdict line.
struct LaunchVerdict {
    int code = kOk;
    std::string line;
};

LaunchVerdict launch_verdict(const fabric::LaunchResult& r, const fabric::CoreLocation& core,
                             const std::string& device, uint64_t max_cycles) {
    switch (r.outcome) {
        case fabric::LaunchOutcome::Exited:
            return {firmware_exit_code(r.status.exit_status),
                    fmt::format("firmware on {} {} {} after {} cycles ({})", core.str(),
                                r.returned_to_base_firmware ? "returned" : "exited with status",
                                r.status.exit_status, r.cycles, device)};
        case fabric::LaunchOutcome::Trapped:
            return {kTrap, fmt::format("firmware trapped on {}: {} (mcause {}) at pc {}",
                                       core.str(), r.status.trap_name, r.status.trap_cause,
                                       fabric::hex32(r.status.trap_pc))};
        default:
            return {kTimeout,
                    fmt::format("cycle budget of {} cycles exhausted: firmware on {} still running",
                                max_cycles, core.str())};
    }
}

class PcieRun final : public CliCommand {
  public:
    PcieRun(CLI::App& app, bool& as_json) : as_json_(as_json) {
        CLI::App& pcie = command_group(app, "pcie", "Firmware on ERISCs through the PCIe backend");
        cmd_ = pcie.add_subcommand("run", "Launch an ELF on an ERISC through PcieDevice");
        cmd_->add_option("--target", target_, "pcie (silicon) or sim (the simulated driver)")
            ->check(CLI::IsMember({"pcie", "sim"}))
            ->capture_default_str();
        cmd_->add_option("--arch", sim_.arch, "Chip architecture (--target sim)");
        cmd_->add_option("--cluster", sim_.cluster, "Cluster descriptor (--target sim)");
        cmd_->add_flag("--no-base-fw", sim_.no_base_fw, "No base firmware (--target sim)");
        add_threads_option(*cmd_, sim_.threads);
        cmd_->add_option("--dir", dir_, "Device node directory (--target pcie)");
        cmd_->add_option("--socket", sim_.socket,
                         "--target sim: attach to the model a `fabricctl sim serve` keeps on this "
                         "Unix socket (default: $FABRIC_SIM_SOCKET; none: a model of its own)");
        cmd_->add_option("--soc", soc_, "SoC descriptor (default: the arch's)");
        cmd_->add_option("--core", core_, "ERISC: eth channel (e.g. 0) of chip 0")->required();
        add_max_cycles_option(*cmd_, max_cycles_, "Cycle budget")->capture_default_str();
        cmd_->add_option("firmware", firmware_, "Firmware ELF (rv32im)")->required();
        cmd_->add_flag("--json", as_json_, "Print the result as JSON");
    }

    bool parsed() const override { return cmd_->parsed(); }

    int run() const override {
        if (target_ == "sim" && sim_.arch.empty()) {
            fabric::fail(ErrorCategory::BadInput,
                         "--target sim needs --arch (wormhole_b0 or blackhole)");
        }
        if (target_ != "sim" && (!sim_.arch.empty() || !sim_.cluster.empty())) {
            fabric::fail(ErrorCategory::BadInput,
                         "--arch / --cluster describe the model: use them with --target sim");
        }
        auto port = open_kmd_port(dir_, sim_);
        const hal::Arch arch = first_device_arch(*port);
        fabric::SocDescriptor soc = load_soc_for(arch, soc_, "device");
        const fabric::CoreLocation core = eth_core(core_, soc);
        const auto image = fabric::ElfImage::load_file(firmware_);
        const auto placement = fabric::erisc_placement(hal::arch_map(arch), soc.eth_l1_size());
        image.check_placement(placement);
        fabric::PcieDevice dev(port, std::move(soc));
        fabric::InterruptibleDevice stoppable(dev);
        fabric::LaunchOptions lo;
        lo.max_cycles = max_cycles_;
        fabric::LaunchResult r;
        try {
            r = fabric::launch(stoppable, core, image, placement, lo);
        } catch (const fabric::Interrupted& e) {
            stop_launched_and_rethrow(dev, {core}, {dev.launch_method(core)}, e);
        }
        const LaunchVerdict v = launch_verdict(r, core, dev.description(), max_cycles_);
        if (!as_json_) {
            fmt::print("{}", console_text(r.mailbox, ""));
            flush_stdout();
            if (const std::string lost = console_lost_note(r.mailbox); !lost.empty())
                log_line(lost);
            log_line(v.line);
            return v.code;
        }
        json j{
            {"ok", v.code == kOk},
            {"device", dev.description()},
            {"core", {{"chip", core.chip}, {"x", core.core.x}, {"y", core.core.y}}},
            {"firmware", firmware_},
            {"launch", r.method == fabric::LaunchMethod::LaunchFlag ? "launch_flag" : "reset_pc"},
            {"outcome", fabric::outcome_name(r.outcome)},
            {"cycles", r.cycles},
            {"exit_code", v.code}};
        if (r.outcome == fabric::LaunchOutcome::Exited) j["exit_status"] = r.status.exit_status;
        add_console_json(j, r.mailbox);
        print_json(j);
        return v.code;
    }

  private:
    bool& as_json_;
    CLI::App* cmd_ = nullptr;
    std::string target_ = "pcie";
    SimSetup sim_;
    std::string dir_ = fabric::kmd::kDeviceDir;
    std::string soc_;
    std::string core_;
    std::string firmware_;
    uint64_t max_cycles_ = fabric::kDefaultMaxCycles;
};

}  // namespace

CliCommandPtr add_pcie_run_command(CLI::App& app, bool& as_json) {
    return std::make_shared<PcieRun>(app, as_json);
}

}  // namespace fabricctl
