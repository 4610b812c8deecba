// fabricctl sim serve | status | pause | resume | step | stop: the model as a device that outlives
// a command (fabric/kmd_socket.h). `serve` keeps a simulated cluster behind the simulated tt-kmd
// driver on a Unix socket; every `--target sim` command given that socket (--socket, or
// $FABRIC_SIM_SOCKET) then talks to it as it talks to /dev/tenstorrent, so `mesh up`, `mesh
// status` and `mesh down` are three invocations on one fabric, as on silicon.
#include "sim_serve_cmd.h"

#include <fmt/format.h>

#include "cli_common.h"
#include "fabric/error.h"
#include "fabric/interrupt.h"
#include "fabric/kmd_socket.h"
#include "pcie_port.h"

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
using fabric::KmdServerControl;
using nlohmann::json;

std::string socket_or_default(const std::string& given) {
    const std::string s = given.empty() ? fabric::default_sim_socket() : given;
    if (s.empty()) {
        fabric::fail(ErrorCategory::BadInput,
                     "no sim server socket: give --socket PATH or set FABRIC_SIM_SOCKET");
    }
    return s;
}

void add_socket_option(CLI::App& c, std::string& socket) {
    c.add_option("--socket", socket, "The server's Unix socket (default: $FABRIC_SIM_SOCKET)");
}

class SimServe final : public CliCommand {
  public:
    explicit SimServe(CLI::App& sim) {
        cmd_ = sim.add_subcommand(
            "serve",
            "Keep a simulated cluster running behind the simulated tt-kmd driver on a Unix socket; "
            "`--target sim` commands given the socket attach to it. Runs until `sim stop` or "
            "SIGINT/SIGTERM");
        cmd_->add_option("--cluster", setup_.cluster,
                         "Cluster descriptor (tt-umd YAML): the chips and their links")
            ->required();
        add_socket_option(*cmd_, socket_);
        cmd_->add_flag("--paused", options_.paused,
                       "Start paused: the clock moves only when a client advances or steps it");
        cmd_->add_option("--quantum", options_.quantum_cycles,
                         "Cycles the model runs between two looks at the clients while running")
            ->check(CLI::Range(uint64_t{1}, uint64_t{10'000'000}))
            ->capture_default_str();
        cmd_->add_flag("--no-base-fw", setup_.no_base_fw,
                       "Start every core bare metal, without the Wormhole base firmware");
        cmd_->add_flag("--no-sim-control{false}", setup_.sim_control,
                       "Serve the cluster as silicon, without the model's sim-control block: "
                       "clients see a core's exit and console through its exit mailbox only");
        add_threads_option(*cmd_, setup_.threads);
    }
    bool parsed() const override { return cmd_->parsed(); }
    int run() const override {
        SimSetup setup = setup_;
        setup.arch = fabric::arch_name(fabric::ClusterDescriptor::load_file(setup.cluster).arch());
        fabric::KmdServer server(open_model_port(setup), socket_or_default(socket_), options_);
        log_line(fmt::format("sim server: {} on {}, {}; stop it with `fabricctl sim stop`",
                             server.status().description, server.socket_path(),
                             options_.paused ? "paused" : "running"));
        server.serve([] { return fabric::interrupt_requested() == 0; });
        if (const int sig = fabric::interrupt_requested()) {
            log_line(fmt::format("sim server stopped by {}", fabric::signal_name(sig)));
            return kSignalBase + sig;
        }
        log_line("sim server stopped");
        return kOk;
    }

  private:
    CLI::App* cmd_ = nullptr;
    SimSetup setup_;
    std::string socket_;
    fabric::KmdServerOptions options_;
};

// status, pause, resume, step N, stop: one request to the server, its state printed.
class SimControl final : public CliCommand {
  public:
    SimControl(CLI::App& sim, bool& as_json, KmdServerControl what, const std::string& name,
               const std::string& description)
        : as_json_(as_json), what_(what) {
        cmd_ = sim.add_subcommand(name, description);
        add_socket_option(*cmd_, socket_);
        if (what == KmdServerControl::Step) {
            cmd_->add_option("cycles", cycles_, "Cycles to run")
                ->required()
                ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000'000}));
        }
        cmd_->add_flag("--json", as_json_, "Print the server's state as JSON");
    }
    bool parsed() const override { return cmd_->parsed(); }
    int run() const override {
        fabric::RemoteKmdPort port(socket_or_default(socket_));
        const fabric::KmdServerStatus s = port.control(what_, cycles_);
        if (as_json_) {
            print_json(json{{"ok", true},
                            {"model", s.description},
                            {"running", s.running},
                            {"cycles", s.cycles},
                            {"clients", s.clients}});
        } else {
            fmt::print("{}: {}, {}, cycle {}, {} client(s){}\n", socket_or_default(socket_),
                       s.description, s.running ? "running" : "paused", s.cycles, s.clients,
                       what_ == KmdServerControl::Stop ? ", stopping" : "");
        }
        return finish_stdout(kOk);
    }

  private:
    CLI::App* cmd_ = nullptr;
    bool& as_json_;
    KmdServerControl what_;
    std::string socket_;
    uint64_t cycles_ = 0;
};

// The commands of this file, run as one.
class SimServerCommands final : public CliCommand {
  public:
    SimServerCommands(CLI::App& app, bool& as_json) {
        CLI::App& sim = command_group(app, "sim", "The Verilated SoC model");
        all_.push_back(std::make_shared<SimServe>(sim));
        const struct {
            KmdServerControl what;
            const char* name;
            const char* description;
        } controls[] = {
            {KmdServerControl::Status, "status", "A sim server's model, clock and clients"},
            {KmdServerControl::Pause, "pause", "Pause a sim server's clock"},
            {KmdServerControl::Resume, "resume", "Let a sim server's clock run again"},
            {KmdServerControl::Step, "step", "Run a sim server's model N cycles"},
            {KmdServerControl::Stop, "stop", "Stop a sim server"},
        };
        for (const auto& c : controls) {
            all_.push_back(
                std::make_shared<SimControl>(sim, as_json, c.what, c.name, c.description));
        }
    }
    bool parsed() const override {
        return std::any_of(all_.begin(), all_.end(), [](const auto& c) { return c->parsed(); });
    }
    int run() const override {
        for (const auto& c : all_) {
            if (c->parsed()) return c->run();
        }
        return kUsage;
    }

  private:
    CliCommands all_;
};

}  // namespace

CliCommandPtr add_sim_serve_command(CLI::App& app, bool& as_json) {
    return std::make_shared<SimServerCommands>(app, as_json);
}

}  // namespace fabricctl
