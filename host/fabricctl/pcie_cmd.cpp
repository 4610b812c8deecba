#include "pcie_cmd.h"

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli_common.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/interrupt.h"
#include "fabric/kmd_abi.h"
#include "fabric/launch.h"
#include "fabric/pcie_device.h"
#include "fabric/soc_descriptor.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#include "fabric/sim_kmd_port.h"
#endif

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using nlohmann::json;

struct SimSetup {
    std::string arch;
    std::string cluster;
    bool no_base_fw = false;
};

// The port the command talks through: the real driver, or the simulated one over a fresh model.
std::shared_ptr<fabric::KmdPort> make_port(const std::string& dir, const SimSetup& sim) {
    if (sim.arch.empty()) return std::make_shared<fabric::LinuxKmdPort>(dir);
#ifndef FABRIC_HAVE_SIM
    fabric::fail(ErrorCategory::Unsupported,
                 "this fabricctl was built without the simulator; --sim / --target sim are "
                 "unavailable");
#else
    const auto arch = fabric::parse_arch(sim.arch);
    if (!arch) {
        fabric::fail(ErrorCategory::BadInput, "unknown arch '{}' (known: wormhole_b0, blackhole)",
                     sim.arch);
    }
    fabric::SimDeviceOptions o;
    if (!sim.cluster.empty()) {
        o.cluster = fabric::ClusterDescriptor::load_file(sim.cluster);
        if (o.cluster->arch() != *arch) {
            fabric::fail(ErrorCategory::BadInput, "{}: cluster is {} but the arch is {}",
                         sim.cluster, fabric::arch_name(o.cluster->arch()),
                         fabric::arch_name(*arch));
        }
    }
    if (auto fw = choose_base_firmware("", !sim.no_base_fw && !sim.cluster.empty(), *arch))
        o.wh_base_firmware = std::move(fw->image);
    auto model = std::make_shared<fabric::SimDevice>(
        fabric::SocDescriptor::load_file(find_default_descriptor(*arch)), *arch, std::move(o));
    return std::make_shared<fabric::SimKmdPort>(model);
#endif
}

std::string links_text(const fabric::ClusterDescriptor& cd) {
    std::string s;
    for (const auto& c : cd.connections())
        s += fmt::format("{}{}:{}-{}:{}", s.empty() ? "" : " ", c.a.chip, c.a.chan, c.b.chip,
                         c.b.chan);
    return s.empty() ? "none" : s;
}

class Commands final : public CliCommand {
  public:
    Commands(CLI::App& app, bool& as_json) : as_json_(as_json) {
        devices_ = app.add_subcommand("devices", "Discover Tenstorrent PCIe devices (tt-kmd)");
        devices_->add_option("--dir", dir_, "Device node directory")->capture_default_str();
        devices_->add_flag("--links", links_,
                           "Open the devices and print the cluster they report (chips, links)");
        devices_->add_option("--soc", soc_, "SoC descriptor for --links (default: the arch's)");
        devices_->add_option("--sim", dev_sim_.arch,
                             "Discover through the simulated driver over a model of this arch");
        devices_->add_option("--cluster", dev_sim_.cluster, "With --sim: the model's cluster");
        devices_->add_flag("--no-base-fw", dev_sim_.no_base_fw,
                           "With --sim --cluster: no Wormhole base firmware in the model");
        devices_->add_flag("--json", as_json_, "Print the result as JSON");

        auto* pcie = app.add_subcommand("pcie", "Firmware on ERISCs through the PCIe backend");
        pcie->require_subcommand(1);
        run_ = pcie->add_subcommand("run", "Launch an ELF on an ERISC through PcieDevice");
        run_->add_option("--target", target_, "pcie (silicon) or sim (the simulated driver)")
            ->check(CLI::IsMember({"pcie", "sim"}))
            ->capture_default_str();
        run_->add_option("--arch", run_sim_.arch, "Chip architecture (--target sim)");
        run_->add_option("--cluster", run_sim_.cluster, "Cluster descriptor (--target sim)");
        run_->add_flag("--no-base-fw", run_sim_.no_base_fw, "No base firmware (--target sim)");
        run_->add_option("--dir", dir_, "Device node directory (--target pcie)");
        run_->add_option("--soc", soc_, "SoC descriptor (default: the arch's)");
        run_->add_option("--core", core_, "ERISC: eth channel (e.g. 0) of chip 0")->required();
        add_max_cycles_option(*run_, max_cycles_, "Cycle budget")->capture_default_str();
        run_->add_option("firmware", firmware_, "Firmware ELF (rv32im)")->required();
        run_->add_flag("--json", as_json_, "Print the result as JSON");
    }

    bool parsed() const override { return devices_->parsed() || run_->parsed(); }

    int run() const override { return devices_->parsed() ? devices() : pcie_run(); }

  private:
    fabric::SocDescriptor soc_for(hal::Arch arch) const {
        auto soc =
            fabric::SocDescriptor::load_file(soc_.empty() ? find_default_descriptor(arch) : soc_);
        if (soc.arch() != arch) {
            fabric::fail(ErrorCategory::BadInput, "{}: descriptor is for {} but the device is {}",
                         soc.source(), fabric::arch_name(soc.arch()), fabric::arch_name(arch));
        }
        return soc;
    }

    int devices() const {
        auto port = make_port(dir_, dev_sim_);
        const auto found = fabric::discover_devices(*port);
        json list = json::array();
        for (const auto& d : found) {
            json j{{"ordinal", d.ordinal}, {"path", d.path}};
            if (d.error.empty()) {
                j["vendor_id"] = d.vendor_id;
                j["device_id"] = d.device_id;
                j["arch"] = d.arch ? json(std::string(fabric::arch_name(*d.arch))) : json(nullptr);
                j["kind"] = std::string(fabric::kmd::device_id_name(d.device_id));
                j["pci"] = d.bdf;
                j["driver_version"] = d.driver_version;
                j["driver_api"] = d.driver_api;
            } else {
                j["error"] = d.error;
            }
            list.push_back(std::move(j));
        }
        std::optional<fabric::ClusterDescriptor> cluster;
        std::string device_desc;
        if (links_ && !found.empty()) {
            const auto arch = found.front().arch;
            if (!arch) {
                fabric::fail(ErrorCategory::Unsupported, "{}: a {} device cannot be opened here",
                             found.front().path,
                             fabric::kmd::device_id_name(found.front().device_id));
            }
            fabric::PcieDevice dev(port, soc_for(*arch));
            cluster = dev.cluster_descriptor();
            device_desc = dev.description();
        }
        if (as_json_) {
            json j{{"ok", true}, {"source", port->description()}, {"devices", list}};
            if (cluster) {
                json links = json::array();
                for (const auto& c : cluster->connections())
                    links.push_back({{{"chip", c.a.chip}, {"chan", c.a.chan}},
                                     {{"chip", c.b.chip}, {"chan", c.b.chan}}});
                json mmio = json::object();
                for (const auto& [chip, ordinal] : cluster->mmio_chips())
                    mmio[std::to_string(chip)] = ordinal;
                j["cluster"] = {{"chips", cluster->chip_count()},
                                {"chips_with_mmio", mmio},
                                {"ethernet_connections", links}};
            }
            print_json(j);
            return kOk;
        }
        if (found.empty()) {
            log_line(fmt::format("no Tenstorrent device found under {}", port->description()));
            return kOk;
        }
        for (const auto& d : found) {
            if (!d.error.empty()) {
                fmt::print("{:<3} {}  error: {}\n", d.ordinal, d.path, d.error);
                continue;
            }
            fmt::print("{:<3} {}  {}  pci {}  driver {} (API {})\n", d.ordinal, d.path,
                       d.arch ? std::string(fabric::arch_name(*d.arch))
                              : std::string(fabric::kmd::device_id_name(d.device_id)),
                       d.bdf, d.driver_version, d.driver_api);
        }
        if (cluster) {
            std::string mmio;
            for (const auto& [chip, ordinal] : cluster->mmio_chips())
                mmio += fmt::format("{}{}={}", mmio.empty() ? "" : " ", chip, ordinal);
            fmt::print("cluster  {}\n", device_desc);
            fmt::print("chips    {} (PCIe-attached chip=ordinal: {})\n", cluster->chip_count(),
                       mmio);
            fmt::print("links    {}\n", links_text(*cluster));
        }
        return kOk;
    }

    int pcie_run() const {
        SimSetup sim = run_sim_;
        if (target_ == "sim") {
            if (sim.arch.empty()) {
                fabric::fail(ErrorCategory::BadInput,
                             "--target sim needs --arch (wormhole_b0 or blackhole)");
            }
        } else if (!sim.arch.empty() || !sim.cluster.empty()) {
            fabric::fail(ErrorCategory::BadInput,
                         "--arch / --cluster describe the model: use them with --target sim");
        } else {
            sim.arch.clear();
        }
        auto port = make_port(dir_, sim);
        const auto found = fabric::discover_devices(*port);
        if (found.empty()) {
            fabric::fail(
                ErrorCategory::Device,
                "--target pcie: no Tenstorrent device found under {} (is the tt-kmd driver "
                "loaded and a card present?)",
                port->description());
        }
        if (!found.front().arch) {
            fabric::fail(ErrorCategory::Device, "{}: {}", found.front().path,
                         found.front().error.empty() ? "not a Wormhole or Blackhole device"
                                                     : found.front().error);
        }
        const hal::Arch arch = *found.front().arch;
        fabric::SocDescriptor soc = soc_for(arch);
        const bool digits = !core_.empty() && core_.size() <= 6 &&
                            core_.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || std::stoul(core_) >= soc.eth_channels()) {
            fabric::fail(ErrorCategory::BadInput, "--core {}: not an eth channel of {} (0..{})",
                         core_, soc.source(), soc.eth_channels() - 1);
        }
        const fabric::CoreLocation core{0, soc.eth_core(static_cast<uint32_t>(std::stoul(core_)))};
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
#ifdef FABRIC_HAVE_SIM
        if (auto* sp = dynamic_cast<fabric::SimKmdPort*>(port.get()); sp && !as_json_) {
            fmt::print("{}", sp->model().console(core));
            flush_stdout();
        }
#endif
        int code = kOk;
        std::string verdict;
        switch (r.outcome) {
            case fabric::LaunchOutcome::Exited:
                code = r.status.exit_status <= kFirmwareStatusMax
                           ? static_cast<int>(r.status.exit_status)
                           : kFirmwareStatusHigh;
                verdict =
                    fmt::format("firmware on {} {} {} after {} cycles ({})", core.str(),
                                r.returned_to_base_firmware ? "returned" : "exited with status",
                                r.status.exit_status, r.cycles, dev.description());
                break;
            case fabric::LaunchOutcome::Trapped:
                code = kTrap;
                verdict = fmt::format("firmware trapped on {}: {} (mcause {}) at pc {}", core.str(),
                                      r.status.trap_name, r.status.trap_cause,
                                      fabric::hex32(r.status.trap_pc));
                break;
            default:
                code = kTimeout;
                verdict =
                    fmt::format("cycle budget of {} cycles exhausted: firmware on {} still running",
                                max_cycles_, core.str());
                break;
        }
        if (as_json_) {
            json j{{"ok", code == kOk},
                   {"device", dev.description()},
                   {"core", {{"chip", core.chip}, {"x", core.core.x}, {"y", core.core.y}}},
                   {"firmware", firmware_},
                   {"launch",
                    r.method == fabric::LaunchMethod::LaunchFlag ? "launch_flag" : "reset_pc"},
                   {"outcome", fabric::outcome_name(r.outcome)},
                   {"cycles", r.cycles},
                   {"exit_code", code}};
            if (r.outcome == fabric::LaunchOutcome::Exited) j["exit_status"] = r.status.exit_status;
            print_json(j);
        } else {
            log_line(verdict);
        }
        return code;
    }

    bool& as_json_;
    CLI::App* devices_ = nullptr;
    CLI::App* run_ = nullptr;
    std::string dir_ = fabric::kmd::kDeviceDir;
    bool links_ = false;
    std::string soc_;
    SimSetup dev_sim_;
    SimSetup run_sim_;
    std::string target_ = "pcie";
    std::string core_;
    std::string firmware_;
    uint64_t max_cycles_ = fabric::kDefaultMaxCycles;
};

}  // namespace

CliCommands add_pcie_commands(CLI::App& app, bool& as_json) {
    return {std::make_shared<Commands>(app, as_json)};
}

}  // namespace fabricctl
