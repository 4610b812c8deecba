#include "devices_cmd.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli_common.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/error.h"
#include "fabric/kmd_abi.h"
#include "fabric/pcie_device.h"
#include "pcie_port.h"

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using nlohmann::json;

std::string links_text(const fabric::ClusterDescriptor& cd) {
    std::string s;
    for (const auto& c : cd.connections())
        s += fmt::format("{}{}:{}-{}:{}", s.empty() ? "" : " ", c.a.chip, c.a.chan, c.b.chip,
                         c.b.chan);
    return s.empty() ? "none" : s;
}

json device_json(const fabric::DiscoveredDevice& d) {
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
    return j;
}

json cluster_json(const fabric::ClusterDescriptor& cluster) {
    json links = json::array();
    for (const auto& c : cluster.connections())
        links.push_back(
            {{{"chip", c.a.chip}, {"chan", c.a.chan}}, {{"chip", c.b.chip}, {"chan", c.b.chan}}});
    json mmio = json::object();
    for (const auto& [chip, ordinal] : cluster.mmio_chips()) mmio[std::to_string(chip)] = ordinal;
    return {{"chips", cluster.chip_count()},
            {"chips_with_mmio", mmio},
            {"ethernet_connections", links}};
}

void print_device(const fabric::DiscoveredDevice& d) {
    if (!d.error.empty()) {
        fmt::print("{:<3} {}  error: {}\n", d.ordinal, d.path, d.error);
        return;
    }
    fmt::print("{:<3} {}  {}  pci {}  driver {} (API {})\n", d.ordinal, d.path,
               d.arch ? std::string(fabric::arch_name(*d.arch))
                      : std::string(fabric::kmd::device_id_name(d.device_id)),
               d.bdf, d.driver_version, d.driver_api);
}

void print_cluster(const fabric::ClusterDescriptor& cluster, const std::string& device) {
    std::string mmio;
    for (const auto& [chip, ordinal] : cluster.mmio_chips())
        mmio += fmt::format("{}{}={}", mmio.empty() ? "" : " ", chip, ordinal);
    fmt::print("cluster  {}\n", device);
    fmt::print("chips    {} (PCIe-attached chip=ordinal: {})\n", cluster.chip_count(), mmio);
    fmt::print("links    {}\n", links_text(cluster));
}

class Devices final : public CliCommand {
  public:
    Devices(CLI::App& app, bool& as_json) : as_json_(as_json) {
        cmd_ = app.add_subcommand("devices", "Discover Tenstorrent PCIe devices (tt-kmd)");
        cmd_->add_option("--dir", dir_, "Device node directory")->capture_default_str();
        cmd_->add_flag("--links", links_,
                       "Open the devices and print the cluster they report (chips, links)");
        cmd_->add_option("--soc", soc_, "SoC descriptor for --links (default: the arch's)");
        cmd_->add_option("--sim", sim_.arch,
                         "Discover through the simulated driver over a model of this arch");
        cmd_->add_option("--cluster", sim_.cluster, "With --sim: the model's cluster");
        cmd_->add_flag("--no-base-fw", sim_.no_base_fw,
                       "With --sim --cluster: no Wormhole base firmware in the model");
        add_threads_option(*cmd_, sim_.threads);
        cmd_->add_flag("--json", as_json_, "Print the result as JSON");
    }

    bool parsed() const override { return cmd_->parsed(); }

    int run() const override {
        auto port = open_kmd_port(dir_, sim_);
        const auto found = fabric::discover_devices(*port);
        std::optional<fabric::ClusterDescriptor> cluster;
        std::string device_desc;
        if (links_ && !found.empty()) {
            const auto arch = found.front().arch;
            if (!arch) {
                fabric::fail(ErrorCategory::Unsupported, "{}: a {} device cannot be opened here",
                             found.front().path,
                             fabric::kmd::device_id_name(found.front().device_id));
            }
            fabric::PcieDevice dev(port, load_soc_for(*arch, soc_, "device"));
            cluster = dev.cluster_descriptor();
            device_desc = dev.description();
        }
        if (as_json_) {
            json list = json::array();
            for (const auto& d : found) list.push_back(device_json(d));
            json j{{"ok", true}, {"source", port->description()}, {"devices", list}};
            if (cluster) j["cluster"] = cluster_json(*cluster);
            print_json(j);
            return kOk;
        }
        if (found.empty()) {
            log_line(fmt::format("no Tenstorrent device found under {}", port->description()));
            return kOk;
        }
        for (const auto& d : found) print_device(d);
        if (cluster) print_cluster(*cluster, device_desc);
        return kOk;
    }

  private:
    bool& as_json_;
    CLI::App* cmd_ = nullptr;
    std::string dir_ = fabric::kmd::kDeviceDir;
    bool links_ = false;
    std::string soc_;
    SimSetup sim_;
};

}  // namespace

CliCommandPtr add_devices_command(CLI::App& app, bool& as_json) {
    return std::make_shared<Devices>(app, as_json);
}

}  // namespace fabricctl
