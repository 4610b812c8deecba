#include "flash_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/interrupt.h"
#include "fabric/kmd_abi.h"
#include "fabric/kmd_socket.h"
#include "fabric/launch.h"
#include "fabric/soc_descriptor.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using nlohmann::json;

class Command final : public CliCommand {
  public:
    Command(CLI::App& app, bool& as_json) : as_json_(as_json) {
        cmd_ = app.add_subcommand("flash", "Load firmware onto Ethernet cores and start it");
        cmd_->add_option("--target", target_, "sim (the model of --cluster) or pcie (tt-kmd)")
            ->check(CLI::IsMember({"sim", "pcie"}))
            ->capture_default_str();
        cmd_->add_option("--cluster", cluster_, "Cluster descriptor (--target sim)");
        cmd_->add_option("--soc", soc_, "SoC descriptor (default: the arch's)");
        cmd_->add_option("--base-fw", base_fw_,
                         "WH base firmware the model's eth cores boot (--target sim)");
        cmd_->add_flag("--no-base-fw", no_base_fw_,
                       "Bare-metal eth cores in the model (--target sim)");
        add_threads_option(*cmd_, threads_);
        cmd_->add_option("--dir", dir_, "Device node directory (--target pcie)")
            ->capture_default_str();
        cmd_->add_option("--chips", chips_,
                         "Chips, e.g. 0,1 (default: every chip the target reaches)");
        cmd_->add_option("--eth", eth_, "Ethernet channels, e.g. 0,1, or all");
        cmd_->add_option("--workers", workers_,
                         "Worker (Tensix) cores as x-y, e.g. 1-2,2-2 (kernels beside a fabric)");
        cmd_->add_option("--socket", socket_,
                         "--target sim: load onto the model a `fabricctl sim serve` keeps on this "
                         "Unix socket, as onto silicon (default: $FABRIC_SIM_SOCKET; none: a "
                         "model of its own)");
        cmd_->add_flag("--wait", wait_,
                       "Wait for every core to exit (always on a model of the command's own)");
        add_max_cycles_option(*cmd_, max_cycles_, "Cycle budget when waiting")
            ->capture_default_str();
        cmd_->add_option("firmware", firmware_, "Firmware ELF (rv32im)")->required();
        cmd_->add_flag("--json", as_json_, "Print the result as JSON");
    }

    bool parsed() const override { return cmd_->parsed(); }

    int run() const override {
        if (eth_.empty() && workers_.empty())
            fabric::fail(ErrorCategory::BadInput, "give the cores: --eth, --workers or both");
        const auto image = fabric::ElfImage::load_file(firmware_);
        std::unique_ptr<fabric::Device> dev =
            std::make_unique<fabric::InterruptibleDevice>(open_device());
        const std::vector<Core> cores = selected_cores(*dev);
        std::vector<fabric::LaunchTarget> targets;
        for (const Core& c : cores) targets.push_back({c.at, &image, c.placement});
        const std::vector<fabric::LaunchMethod> methods = fabric::load_many(*dev, targets);
        fabric::start_many(*dev, targets, methods);
        // The command's own model ends with the command: wait for it. A sim server's model, like
        // silicon, runs on: wait only when asked.
        const bool wait = wait_ || (target_ == "sim" && sim_socket().empty());
        std::vector<fabric::LaunchResult> results;
        if (wait) {
            fabric::LaunchOptions lo;
            lo.max_cycles = max_cycles_;
            try {
                results = fabric::wait_many(*dev, targets, methods, lo);
            } catch (const fabric::Interrupted& e) {
                std::vector<fabric::CoreLocation> launched;
                for (const fabric::LaunchTarget& t : targets) launched.push_back(t.core);
                stop_launched_and_rethrow(*dev, launched, methods, e);
            }
        }
        return report(*dev, cores, methods, results);
    }

  private:
    // A core to load: where, its placement rules, and its eth channel (eth cores only).
    struct Core {
        fabric::CoreLocation at;
        fabric::PlacementRules placement;
        std::optional<uint32_t> eth;
    };

    std::string sim_socket() const {
        if (target_ != "sim") return {};
        return socket_.empty() ? fabric::default_sim_socket() : socket_;
    }

    // Every (chip, core) of --chips x (--eth, --workers), checked before anything is written.
    std::vector<Core> selected_cores(fabric::Device& dev) const {
        const fabric::SocDescriptor& soc = dev.soc(0);
        std::vector<uint32_t> chips = parse_number_list("--chips", chips_, "chip number");
        if (chips.empty()) {
            for (uint32_t c = 0; c < dev.chip_count(); ++c) chips.push_back(c);
        }
        std::vector<uint32_t> channels;
        if (eth_ == "all") {
            for (uint32_t e = 0; e < soc.eth_channels(); ++e) channels.push_back(e);
        } else {
            channels = parse_number_list("--eth", eth_, "channel number");
        }
        for (uint32_t e : channels) {
            if (e >= soc.eth_channels()) {
                fabric::fail(ErrorCategory::BadInput,
                             "--eth: channel {} is not on a {} chip (0..{})", e,
                             fabric::arch_name(soc.arch()), soc.eth_channels() - 1);
            }
        }
        const std::vector<fabric::CoreCoord> workers = worker_cores(soc);
        const hal::ArchMap& am = hal::arch_map(soc.arch());
        std::vector<Core> cores;
        for (uint32_t chip : chips) {
            if (chip >= dev.chip_count()) {
                fabric::fail(ErrorCategory::BadInput, "--chips: chip {} is not on {} (chips 0..{})",
                             chip, dev.description(), dev.chip_count() - 1);
            }
            for (uint32_t e : channels) {
                cores.push_back(
                    {{chip, soc.eth_core(e)}, fabric::erisc_placement(am, soc.eth_l1_size()), e});
            }
            for (const fabric::CoreCoord& w : workers) {
                cores.push_back(
                    {{chip, w}, fabric::erisc_placement(am, soc.worker_l1_size()), std::nullopt});
            }
        }
        return cores;
    }

    std::vector<fabric::CoreCoord> worker_cores(const fabric::SocDescriptor& soc) const {
        std::vector<fabric::CoreCoord> out;
        if (workers_.empty()) return out;
        for (const std::string& text : split_list(workers_)) {
            const auto c = fabric::parse_core_coord(text);
            if (!c || soc.core_type(*c) != fabric::CoreType::Worker) {
                fabric::fail(ErrorCategory::BadInput,
                             "--workers: {} is not a worker core x-y of {} (e.g. {})", text,
                             soc.source(), soc.cores(fabric::CoreType::Worker).front().str());
            }
            out.push_back(*c);
        }
        return out;
    }

    std::unique_ptr<fabric::Device> open_device() const {
        if (target_ == "pcie" || !sim_socket().empty()) {
            if (!cluster_.empty() || !base_fw_.empty() || no_base_fw_) {
                fabric::fail(ErrorCategory::BadInput,
                             "--cluster / --base-fw / --no-base-fw describe a model of the "
                             "command's own: use them with --target sim and no sim server");
            }
            return open_pcie_device(dir_, soc_, sim_socket());
        }
#ifndef FABRIC_HAVE_SIM
        fabric::fail(ErrorCategory::Unsupported,
                     "this fabricctl was built without the simulator: --target sim is unavailable");
#else
        if (cluster_.empty())
            fabric::fail(ErrorCategory::BadInput,
                         "--target sim needs --cluster (a cluster descriptor)");
        auto cluster = fabric::ClusterDescriptor::load_file(cluster_);
        const hal::Arch arch = cluster.arch();
        fabric::SimDeviceOptions o;
        o.cluster = std::move(cluster);
        o.threads = sim_threads(threads_);
        if (auto base = choose_base_firmware(base_fw_, !no_base_fw_, arch))
            o.wh_base_firmware = std::move(base->image);
        return std::make_unique<fabric::SimDevice>(load_soc_for(arch, soc_), arch, std::move(o));
#endif
    }

    // "4 eth cores", "1 worker core", "3 cores (2 eth, 1 worker)".
    static std::string count_cores(const std::vector<Core>& cores) {
        const auto eth = static_cast<size_t>(
            std::count_if(cores.begin(), cores.end(), [](const Core& c) { return c.eth; }));
        const size_t workers = cores.size() - eth;
        const auto plural = [](size_t n) { return n == 1 ? "" : "s"; };
        if (workers == 0) return fmt::format("{} eth core{}", eth, plural(eth));
        if (eth == 0) return fmt::format("{} worker core{}", workers, plural(workers));
        return fmt::format("{} cores ({} eth, {} worker)", cores.size(), eth, workers);
    }

    // Under a core's line: what its firmware printed (its exit mailbox), indented.
    static std::string core_console(const fabric::ExitMailboxReport& mailbox) {
        const std::string lost = console_lost_note(mailbox);
        return (lost.empty() ? "" : fmt::format("{}[{}]\n", kConsoleIndent, lost)) +
               console_text(mailbox, kConsoleIndent);
    }
    static constexpr std::string_view kConsoleIndent = "    | ";

    // One line (or JSON entry) per core, each followed by its console (--wait); the exit code of
    // the first core that did not exit 0.
    int report(fabric::Device& dev, const std::vector<Core>& targets,
               const std::vector<fabric::LaunchMethod>& methods,
               const std::vector<fabric::LaunchResult>& results) const {
        int code = kOk;
        json cores = json::array();
        std::vector<std::string> lines;
        for (size_t i = 0; i < targets.size(); ++i) {
            const auto& core = targets[i].at;
            const char* method =
                methods[i] == fabric::LaunchMethod::LaunchFlag ? "launch_flag" : "reset_pc";
            json j{{"chip", core.chip}, {"x", core.core.x}, {"y", core.core.y}, {"launch", method}};
            if (targets[i].eth) j["eth"] = *targets[i].eth;
            std::string what = "started";
            if (!results.empty()) {
                const auto& r = results[i];
                int c = kOk;
                j["outcome"] = fabric::outcome_name(r.outcome);
                j["cycles"] = r.cycles;
                add_console_json(j, r.mailbox);
                if (r.outcome == fabric::LaunchOutcome::Exited) {
                    j["exit_status"] = r.status.exit_status;
                    c = firmware_exit_code(r.status.exit_status);
                    what = fmt::format("{} {} after {} cycles",
                                       r.returned_to_base_firmware
                                           ? "returned to the base firmware with status"
                                           : "exited with status",
                                       r.status.exit_status, r.cycles);
                } else if (r.outcome == fabric::LaunchOutcome::Trapped) {
                    c = kTrap;
                    what = fmt::format("trapped: {} (mcause {}) at pc {}", r.status.trap_name,
                                       r.status.trap_cause, fabric::hex32(r.status.trap_pc));
                } else {
                    c = kTimeout;
                    what = fmt::format("still running after {} cycles", r.cycles);
                }
                if (code == kOk) code = c;
            }
            cores.push_back(std::move(j));
            const std::string which =
                targets[i].eth ? fmt::format("eth {:<2}", *targets[i].eth) : std::string("worker");
            lines.push_back(fmt::format("chip {} {} (core {}): {}, {}\n", core.chip, which,
                                        core.core.str(), method, what));
            if (!results.empty()) lines.back() += core_console(results[i].mailbox);
        }
        if (as_json_) {
            print_json(json{{"ok", code == kOk},
                            {"device", dev.description()},
                            {"firmware", firmware_},
                            {"cores", cores},
                            {"exit_code", code}});
        } else {
            for (const auto& l : lines) fmt::print("{}", l);
            flush_stdout();
            log_line(fmt::format("flashed {} onto {} of {}", firmware_, count_cores(targets),
                                 dev.description()));
        }
        return code;
    }

    bool& as_json_;
    CLI::App* cmd_ = nullptr;
    std::string target_ = "sim";
    std::string cluster_;
    std::string soc_;
    std::string base_fw_;
    bool no_base_fw_ = false;
    uint32_t threads_ = 0;  // 0: sim_threads' default
    std::string dir_ = fabric::kmd::kDeviceDir;
    std::string chips_;
    std::string eth_;
    std::string workers_;
    std::string socket_;
    bool wait_ = false;
    uint64_t max_cycles_ = fabric::kDefaultMaxCycles;
    std::string firmware_;
};

}  // namespace

CliCommandPtr add_flash_command(CLI::App& app, bool& as_json) {
    return std::make_shared<Command>(app, as_json);
}

}  // namespace fabricctl
