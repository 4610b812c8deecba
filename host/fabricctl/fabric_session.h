// What `fabric up` and `fabric run` share (their usage: fabric_up_cmd.h, fabric_run_cmd.h): the
// options both take, and a FabricSession, the 1D fabric of one invocation: the cluster and SoC
// descriptors, the plan (fabric_plan.h), the router image, the model of the cluster with a
// FabricRunner over it, bring-up, the --stall-router fault, termination and the report both
// print (every router, the verdict, the JSON document).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli_common.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/interrupt.h"
#include "fabric/progress.h"
#include "fabric/soc_descriptor.h"
#include "fabric_common.h"

namespace fabricctl {

// The options of `fabric up` and `fabric run` alike.
struct FabricArgs {
    std::string cluster;
    std::string soc;
    std::string topology = "line";
    std::string chips;  // "0,1,2,3"; empty: 0..n-1
    uint32_t link = 0;
    std::string router_elf;
    std::string base_fw;
    bool no_base_fw = false;
    uint32_t threads = 0;       // 0: sim_threads' default
    uint64_t max_cycles = 0;    // 0: kDefaultFabricMaxCycles
    uint64_t stall_cycles = 0;  // 0: fabric::kDefaultStallCycles
    std::string stall_router;   // sim fault: "CHIP:ETH@CYCLES", freeze that router's core
    bool quiet = false;
    std::string events;  // --events FILE
    PacketTimeoutArgs packet_timeout;

    // Adds these options, --json (which sets `as_json`) and -q to `cmd`.
    void add_options(CLI::App& cmd, bool& as_json);
};

// `fabric <name>` with the options of FabricArgs; `fabric up` and `fabric run` add theirs and
// implement run().
class FabricCommand : public CliCommand {
  public:
    FabricCommand(CLI::App& app, bool& as_json, const std::string& name,
                  const std::string& description);
    // The same under another command group (e.g. `ccl run`).
    struct InGroup {
        CLI::App& group;
    };
    FabricCommand(InGroup in, bool& as_json, const std::string& name,
                  const std::string& description);
    bool parsed() const override { return cmd_->parsed(); }

  protected:
    bool& as_json_;
    CLI::App* cmd_ = nullptr;
    FabricArgs args_;
};

// --stall-router CHIP:ETH@CYCLES: freeze that router's core CYCLES after a moment the command
// chooses (the workers' start, or the end of bring-up).
struct StallFault {
    fabric::ChipId chip = 0;
    uint32_t eth = 0;
    uint64_t after = 0;
};

// One invocation of `fabric up` or `fabric run`, in the order the steps run.
class FabricSession {
  public:
    // Loads the cluster and the SoC descriptor (Error(BadInput) if they disagree on the arch) and
    // checks --stall-router. `command` is "up" or "run", of the command group `group` (the
    // verdict's and the progress line's "fabric run", "ccl run").
    FabricSession(const FabricArgs& args, std::string command, bool as_json,
                  std::string group = "fabric");
    ~FabricSession();

    hal::Arch arch() const { return cluster_.arch(); }
    const fabric::ClusterDescriptor& cluster() const { return cluster_; }
    const fabric::SocDescriptor& soc() const { return *soc_; }
    const fabric::FabricPlan& plan() const { return *plan_; }
    const std::optional<StallFault>& stall() const { return stall_; }
    uint64_t budget() const { return budget_; }

    // The line or ring of --topology, --chips and --link (the default slot payload).
    fabric::FabricOptions fabric_options() const;
    // The plan; when --chips was not given and chips 0..n-1 are not a line, the error says so.
    void plan_fabric(const fabric::FabricOptions& options);
    // The router image (--router-elf or this build's), checked on every router core.
    void load_router_image();
    // The Wormhole base firmware of --base-fw / --no-base-fw (fabricctl's choose_base_firmware).
    void choose_base_firmware();
    // The model of the cluster, the runner over it, the progress line (when stderr is a terminal;
    // `expected_deliveries` for its count) and the router --stall-router names, which must be
    // one of the plan's (Error(BadInput)). Error(Unsupported) in a build without the model.
    void open_model(uint64_t expected_deliveries);

    fabric::InterruptibleDevice& device() { return *device_; }
    fabric::FabricRunner& runner() { return *runner_; }
    // The --events log, null without --events (after the device is open).
    fabric::EventLogFile* event_log() { return events_.get(); }
    uint64_t cycles_left() const { return fabricctl::cycles_left(*device_, budget_); }
    void show_stage(const char* stage);

    // Bring the fabric up and check the routers' health.
    void bring_up();
    // Freeze the router of --stall-router from `after` cycles from now on, if one was given.
    void inject_stall();
    // Terminate (fabric/traffic_verdict.h: gracefully only while there is no problem).
    void terminate();

    std::vector<std::string> problems;
    const std::vector<fabric::RouterSnapshot>& final_snapshots() const { return final_; }
    // Every packet the routers dropped and reported, collected as the runner polls.
    const fabric::DropLog& drops() const { return drops_; }
    fabric::DropLog& drops() { return drops_; }

    // The verdict line (stderr; also on success unless --quiet), the command's text or the JSON
    // document; the exit code.
    int report(const RunReport& r);
    // Every router after termination; with `packet_bytes` also bytes sent and B/cycle over
    // `send_cycles`.
    void print_router_table(uint32_t packet_bytes = 0, uint64_t send_cycles = 0) const;

  private:
    nlohmann::json report_json(const RunReport& r, const std::string& verdict, int code);

    const FabricArgs& args_;
    std::string command_;
    bool as_json_;
    std::string group_;
    fabric::ClusterDescriptor cluster_;
    std::string soc_path_;
    std::optional<fabric::SocDescriptor> soc_;  // moved into the model by open_model
    uint64_t budget_;
    std::optional<StallFault> stall_;
    std::optional<fabric::FabricPlan> plan_;
    std::string router_path_;
    std::optional<fabric::ElfImage> router_elf_;  // moved into the runner by open_model
    std::optional<BaseFirmware> base_fw_;
    std::unique_ptr<fabric::InterruptibleDevice> device_;  // owns the model
    std::unique_ptr<fabric::FabricRunner> runner_;
    std::unique_ptr<fabric::ProgressLine> progress_;
    std::unique_ptr<fabric::EventLogFile> events_;  // --events
    fabric::DropLog drops_;
    std::optional<fabric::CoreLocation> stall_core_;
    std::vector<fabric::RouterSnapshot> final_;
};

}  // namespace fabricctl
