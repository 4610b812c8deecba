// What `mesh up`, `mesh status`, `mesh down` and `mesh run` share (their usage: mesh_up_cmd.h,
// mesh_status_cmd.h, mesh_down_cmd.h, mesh_run_cmd.h): the options all four take, and a
// MeshSession, the 2D fabric of one invocation: the cluster and the mesh graph mapped onto it, the
// plan (mesh_plan.h), the router image, the device (the model of --cluster, or the chips behind
// tt-kmd), a FabricRunner over it, bring-up or attach, termination, and the report every verb
// prints (summary, routers, links, verdict, JSON).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli_common.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/fabric_runner.h"
#include "fabric/interrupt.h"
#include "fabric/kmd_abi.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/progress.h"
#include "fabric/soc_descriptor.h"
#include "fabric_common.h"
#include "mesh_mapping.h"

namespace fabricctl {

// The options of every mesh fabric verb.
struct MeshFabricArgs {
    MappingArgs mapping;
    std::string cluster;
    std::string target = "sim";
    std::string dir = fabric::kmd::kDeviceDir;
    std::string socket;  // --target sim: a sim server's socket (default $FABRIC_SIM_SOCKET)
    std::string soc;
    std::string planes = "0";
    uint32_t payload = 0;  // 0: the verb's default
    std::string slots;
    uint64_t budget = kDefaultFabricMaxCycles;
    uint64_t stall_cycles = 0;  // 0: the runner's default
    std::string router_elf;
    std::string base_fw;
    bool no_base_fw = false;
    uint32_t threads = 0;  // 0: sim_threads' default
    bool quiet = false;
    std::string events;  // --events FILE
    PacketTimeoutArgs packet_timeout;

    // Adds these options, --json (which sets `as_json`) and -q to `cmd`; the sim server's socket
    // as `socket_option`.
    void add_options(CLI::App& cmd, bool& as_json, const std::string& socket_option = "--socket");
};

// `mesh <name>` with the options of MeshFabricArgs; each verb adds its own and implements run().
class MeshFabricCommand : public CliCommand {
  public:
    MeshFabricCommand(CLI::App& app, bool& as_json, const std::string& name,
                      const std::string& description);
    // The same under another command group (e.g. `socket run`).
    struct InGroup {
        CLI::App& group;
    };
    MeshFabricCommand(InGroup in, bool& as_json, const std::string& name,
                      const std::string& description);
    bool parsed() const override { return cmd_->parsed(); }

  protected:
    bool& as_json_;
    CLI::App* cmd_ = nullptr;
    MeshFabricArgs args_;
};

// One invocation of a mesh verb, in the order the steps run.
class MeshSession {
  public:
    // Loads the cluster and the mesh graph the mapping options ask for. `verb` names the command
    // ("up", "status", "down", "run") in its verdict, its JSON and its progress line, as
    // "<group> <verb>" ("mesh run", "socket run").
    MeshSession(const MeshFabricArgs& args, std::string verb, bool as_json,
                std::string group = "mesh");
    ~MeshSession();

    hal::Arch arch() const { return graph_.chip_spec().arch; }
    // Chips behind tt-kmd, where the fabric outlives the command: silicon (--target pcie) or the
    // model a `fabricctl sim serve` keeps (--target sim with a server socket).
    bool pcie() const { return args_.target == "pcie" || !sim_socket().empty(); }
    std::string sim_socket() const;
    const std::string& graph_path() const { return graph_path_; }
    const fabric::ClusterDescriptor& cluster() const { return cluster_; }
    const fabric::SocDescriptor& soc() const { return *soc_; }
    const fabric::MeshPlan& plan() const { return *plan_; }
    uint64_t budget() const { return args_.budget; }

    // --planes and --slots.
    fabric::MeshFabricOptions fabric_options() const;
    // --payload (a multiple of 16 within the arch's slot), or `default_bytes` if not given.
    uint32_t payload_bytes(uint32_t default_bytes) const;
    // The device for --target pcie (which must be of the graph's arch), the SoC descriptor and
    // the plan of the fabric.
    void plan_fabric(const fabric::MeshFabricOptions& options);
    // Meshes of single chips have no link, so no router to bring up, read or terminate.
    bool has_routers() const { return !plan_->fabric.routers.empty(); }
    // The report of a fabric without routers; exit 0.
    int report_no_links() const;
    // The router image (--router-elf or this build's fabric_router_2d.elf), checked on every
    // router core.
    void load_router_image();
    // The model of --cluster (the chips the mesh uses) for --target sim, the runner over the
    // device and the progress line (`expected_deliveries` for its count).
    void open_device(uint64_t expected_deliveries);
    // `verb()`; on silicon, where the routers outlive the process, a signal that interrupts it
    // first terminates the routers this command started and says so.
    int run_interruptible(const std::function<int()>& verb);

    fabric::InterruptibleDevice& device() { return *device_; }
    fabric::FabricRunner& runner() { return *runner_; }
    // The --events log, null without --events (after the device is open).
    fabric::EventLogFile* event_log() { return events_.get(); }
    uint64_t cycles_left() const { return fabricctl::cycles_left(*device_, args_.budget); }
    void show_stage(const char* stage);

    // Bring the fabric up (timed in wall seconds) and check the routers' health.
    void bring_up();
    // On silicon: take over the routers an earlier `mesh up` left running (checked against this
    // plan), and read them.
    void attach();
    // Read every router now (the routers `status` shows, and `up` leaves running on silicon).
    void read_live();
    // A fabric of this command's own (the model): bring it up and let its routers turn their
    // main loops a few poll intervals under the health monitor, so what is read has moved.
    void bring_up_and_watch();
    // Terminate (fabric/traffic_verdict.h: gracefully only while there is no problem), then
    // every router must say Terminated and its core be done.
    void terminate();

    std::vector<std::string> problems;
    // The report shows the routers as they ran, not after termination (`status`).
    bool show_live = false;
    const std::vector<fabric::RouterSnapshot>& final_snapshots() const { return final_; }
    // Every packet the routers dropped and reported, collected as the runner polls.
    const fabric::DropLog& drops() const { return drops_; }
    fabric::DropLog& drops() { return drops_; }
    // The routers the report shows: after termination, or as they ran.
    const std::vector<fabric::RouterSnapshot>& shown() const;
    // "1 mesh, 8 chips, 40 routers (plane 0: 20, plane 1: 20)"
    std::string what() const;
    // How the fabric ended: "terminated gracefully", "routers left running on the chips" (pcie)
    // or "not terminated".
    std::string ending() const;

    // The report: the verdict line (stderr; also on success unless --quiet), the summary, the
    // bring-up line, what the verb prints and the termination line, or the JSON document; the
    // exit code.
    int report(const RunReport& r);
    // The router table: status, stage and heartbeat, or with `traffic` what each one moved.
    void print_routers(const std::vector<fabric::RouterSnapshot>& snaps, bool traffic,
                       uint32_t packet_bytes = 0, uint64_t send_cycles = 0) const;
    // Every link's state and its ends.
    void print_links(const std::vector<fabric::RouterSnapshot>& snaps) const;
    // "terminated gracefully: 40 of 40 routers terminated" once it did, after `before`.
    void print_terminated(std::string_view before) const;

  private:
    nlohmann::json report_json(const RunReport& r, const std::string& verdict, int code) const;
    nlohmann::json links_json(const std::vector<fabric::RouterSnapshot>& snaps) const;
    void print_summary() const;

    const MeshFabricArgs& args_;
    std::string verb_;
    std::string command_;  // "<group> <verb>"
    bool as_json_;
    fabric::ClusterDescriptor cluster_;
    fabric::MeshGraph graph_;
    std::string graph_path_;
    std::string derived_;  // how the mesh was chosen when no --mesh-graph was given
    std::string soc_path_;
    std::optional<fabric::SocDescriptor> soc_;  // moved into the model by open_device
    std::optional<fabric::MeshPlan> plan_;
    std::string router_path_;
    std::optional<fabric::ElfImage> router_elf_;  // moved into the runner by open_device
    std::optional<std::string> base_fw_path_;
    std::unique_ptr<fabric::Device> pcie_device_;  // --target pcie, until open_device
    std::unique_ptr<fabric::InterruptibleDevice> device_;
    std::unique_ptr<fabric::FabricRunner> runner_;
    std::unique_ptr<fabric::ProgressLine> progress_;
    std::unique_ptr<fabric::EventLogFile> events_;  // --events
    fabric::DropLog drops_;
    bool brought_up_ = false;
    bool attached_ = false;  // the routers were already up (mesh down, attach-and-run verbs)
    bool terminated_ = false;
    double bring_up_wall_seconds_ = 0;
    std::vector<fabric::RouterSnapshot> live_;   // while the fabric runs
    std::vector<fabric::RouterSnapshot> final_;  // after termination
};

// `up`, `status` and `down`: the fabric planned with the default slot payload, its router image
// and the device, then `verb` (run_interruptible). A fabric without routers is reported as such
// and `verb` not run.
int run_without_traffic(MeshSession& s, const std::function<int()>& verb);

// The fabric as it is now, as a page (fabric/fabric_page.h): to `path`, or stdout when empty.
void write_page(MeshSession& s, const std::string& path);

}  // namespace fabricctl
