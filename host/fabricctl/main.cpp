// fabricctl: the erisc-fabric command line. main() only registers the subcommands and dispatches:
// every subcommand is a CliCommand (cli_common.h) in its own <name>_cmd.cpp, which parses its
// options, calls the host library and prints. Usage of each is at the top of its header.
//
// Results go to stdout (with --json: one JSON document), logs and errors to stderr, one line
// each. Exit codes are listed in ExitCode (cli_common.h) and documented in host/README.md.
#include <CLI/CLI.hpp>
#include <csignal>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>

#include "ccl_run_cmd.h"
#include "cli_common.h"
#include "cluster_check_cmd.h"
#include "devices_cmd.h"
#include "fabric/error.h"
#include "fabric/health_monitor.h"
#include "fabric/interrupt.h"
#include "fabric_run_cmd.h"
#include "fabric_up_cmd.h"
#include "fault_campaign_cmd.h"
#include "flash_cmd.h"
#include "mesh_down_cmd.h"
#include "mesh_events_cmd.h"
#include "mesh_map_cmd.h"
#include "mesh_routes_cmd.h"
#include "mesh_run_cmd.h"
#include "mesh_show_cmd.h"
#include "mesh_snapshot_cmd.h"
#include "mesh_status_cmd.h"
#include "mesh_telemetry_cmd.h"
#include "mesh_up_cmd.h"
#include "pcie_run_cmd.h"
#include "sim_cmd.h"
#include "sim_serve_cmd.h"
#include "soc_cmd.h"
#include "socket_run_cmd.h"

namespace {

using nlohmann::json;
using namespace fabricctl;

// SIGINT / SIGTERM only raise the flag; the device's next step throws fabric::Interrupted, and
// the command undoes what it started on hardware before the process exits (fabric/interrupt.h).
extern "C" void on_stop_signal(int signal) {
    fabric::request_interrupt(signal);
}

void install_stop_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (int signal : {SIGINT, SIGTERM}) sigaction(signal, &sa, nullptr);
}

// Every subcommand, in the order --help lists them (a group such as `mesh` where its first
// subcommand is added).
CliCommands add_all_commands(CLI::App& app, bool& as_json) {
    CliCommands all;
    for (auto add : {
             add_soc_command,             // soc show
             add_sim_command,             // sim run
             add_sim_serve_command,       // sim serve, status, pause, resume, step, stop
             add_fabric_up_command,       // fabric up
             add_fabric_run_command,      // fabric run
             add_mesh_routes_command,     // mesh routes
             add_mesh_up_command,         // mesh up
             add_mesh_status_command,     // mesh status
             add_mesh_down_command,       // mesh down
             add_mesh_run_command,        // mesh run
             add_mesh_pause_command,      // mesh pause
             add_mesh_drain_command,      // mesh drain
             add_mesh_resume_command,     // mesh resume
             add_mesh_events_command,     // mesh events
             add_mesh_telemetry_command,  // mesh telemetry
             add_mesh_show_command,       // mesh show
             add_mesh_replay_command,     // mesh replay
             add_mesh_snapshot_command,   // mesh snapshot
             add_devices_command,         // devices
             add_pcie_run_command,        // pcie run
             add_flash_command,           // flash
             add_mesh_map_command,        // mesh map
             add_cluster_check_command,   // cluster check
             add_socket_run_command,      // socket run
             add_ccl_run_command,         // ccl run
             add_ccl_mesh_run_command,    // ccl mesh-run
             add_fault_campaign_command,  // fault campaign
         }) {
        all.push_back(add(app, as_json));
    }
    return all;
}

// Run the parsed command; its failure, reported: one line on stderr (and with --json the error
// document on stdout), the exit code of its category.
int run_parsed(const CliCommands& commands, bool json_out) {
    try {
        for (const auto& c : commands) {
            if (c->parsed()) return c->run();
        }
        return report_error(json_out, "usage", "no command given (run 'fabricctl --help')", kUsage);
    } catch (const fabric::Interrupted& e) {
        return report_error(json_out, "interrupted", e.what(), kSignalBase + e.signal());
    } catch (const fabric::HealthError& e) {
        json stuck = json::array();
        for (const auto& r : e.reports()) stuck.push_back(stuck_json(r));
        return report_error(json_out, fabric::category_name(e.category()), e.what(),
                            exit_code_for(e.category()), json{{"stuck", stuck}});
    } catch (const fabric::Error& e) {
        return report_error(json_out, fabric::category_name(e.category()), e.what(),
                            exit_code_for(e.category()));
    } catch (const std::system_error& e) {
        // fmt::print throws when stdout refuses a write; main() reports that, once.
        if (stdout_write_failed(e)) return kOutput;
        return report_error(json_out, "internal", fmt::format("internal error: {}", e.what()),
                            kInternal);
    } catch (const std::exception& e) {
        return report_error(json_out, "internal", fmt::format("internal error: {}", e.what()),
                            kInternal);
    }
}

// Parse the command line and run the command it names; the exit code.
int run_fabricctl(int argc, char** argv) {
    CLI::App app{"erisc-fabric control: SoC descriptors, firmware on the simulated ERISC",
                 "fabricctl"};
    app.set_version_flag("--version", FABRIC_VERSION);
    app.require_subcommand(1);
    app.footer(
        "Exit codes: 0 ok; 1-63 firmware exit status (sim run); 64 firmware status >= 64; "
        "100 usage; 101 bad input; 102 bad SoC descriptor; 103 bad ELF; 104 firmware trapped; "
        "105 cycle budget exhausted; 106 device error; 107 unsupported; 108 fabric failure; "
        "109 stdout not writable; 110 internal error; 130/143 SIGINT/SIGTERM.");
    bool as_json = false;
    const CliCommands commands = add_all_commands(app, as_json);
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

    return run_parsed(commands, as_json);
}

}  // namespace

int main(int argc, char** argv) {
    install_stop_handlers();
    return finish_stdout(run_fabricctl(argc, argv));
}
