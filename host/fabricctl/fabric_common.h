// What the fabric commands (`fabric up|run`, fabric_session.h; `mesh up|status|down|run`,
// mesh_session.h) share: the defaults and checks of their options, their router and traffic
// images, the progress line, a router as JSON, bytes per cycle, and the verdict of a failed command
// with its exit code. The decisions on traffic themselves (a kernel's problem, the counters,
// termination) are the library's: fabric/traffic_verdict.h.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/elf.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/interrupt.h"
#include "fabric/mesh_traffic.h"
#include "fabric/progress.h"
#include "fabric/router_events.h"
#include "fabric/soc_descriptor.h"
#include "fabric/traffic_account.h"
#include "fabric/traffic_verdict.h"
#include "hal/arch_map.h"

namespace fabricctl {

// Default cycle budget of a fabric command: bring-up, traffic and termination together.
inline constexpr uint64_t kDefaultFabricMaxCycles = 50'000'000;
// The most packets a traffic command sends per worker (`fabric run`) or per flow (`mesh run`).
inline constexpr uint32_t kMaxPackets = 1'000'000;

// --bytes (a non-zero multiple of 16, at most the arch's slot payload) and --packets
// (1..kMaxPackets); Error(BadInput) naming the option.
void check_traffic_options(uint32_t bytes, uint32_t packets, hal::Arch arch);

// --send-type NAME of `fabric run` and `mesh run` (fabric/mesh_traffic.h TrafficSendType;
// default fused-write-atomic-inc, whose increments count the deliveries).
CLI::Option* add_send_type_option(CLI::App& cmd, std::string& value);
// The send type `name` names (the option's check has refused any other).
fabric::TrafficSendType send_type_of(const std::string& name);

// --json (sets `as_json`) and -q/--quiet (no verdict line on success).
void add_output_flags(CLI::App& cmd, bool& as_json, bool& quiet);

// What is left of a command's budget of device cycles (at least 1, so a wait still looks once).
uint64_t cycles_left(const fabric::Device& device, uint64_t budget);

// The router image at `path`, its placement checked on every router core of `plan` (before a
// model is built: a bad image fails fast).
fabric::ElfImage load_router_image(const std::string& path, const fabric::FabricPlan& plan,
                                   const fabric::SocDescriptor& soc);
// The traffic kernel (fabric_traffic): `given` (--worker-elf) or this build's, its placement
// checked on a worker core of `soc`.
struct TrafficKernel {
    std::string path;
    fabric::ElfImage image;
};
TrafficKernel load_traffic_kernel(const std::string& given, const fabric::SocDescriptor& soc);
// Any worker kernel the same way: `given` (--worker-elf) or this build's `name`.elf.
TrafficKernel load_worker_kernel(const std::string& given, const fabric::SocDescriptor& soc,
                                 const std::string& name);

// The progress line of a fabric command when stderr is a terminal (progress_on_terminal), fed
// by `device`'s slices and the packets the routers delivered of `expected_deliveries`; nullptr
// otherwise.
std::unique_ptr<fabric::ProgressLine> fabric_progress(const std::string& title,
                                                      fabric::InterruptibleDevice& device,
                                                      fabric::FabricRunner& runner,
                                                      uint64_t expected_deliveries);

// --packet-timeout-us N and --on-packet-timeout drop|hold: the routers' own timeouts
// (RouterConfig::stall_timeout_us, stall_action; firmware/router/README.md "Timeouts"), for
// FabricOptions and MeshFabricOptions alike.
struct PacketTimeoutArgs {
    uint32_t timeout_us = 0;  // 0: off
    std::string action = "drop";

    void add_options(CLI::App& cmd);
    template <typename Options>
    void apply(Options& o) const {
        o.stall_timeout_us = timeout_us;
        o.stall_action = action == "hold" ? protocol::fabric::StallAction::Hold
                                          : protocol::fabric::StallAction::Drop;
    }
};

// --events FILE: the routers' event records (fabric/router_events.h), collected at every poll of
// the runner's waits and appended to FILE as JSON lines (created anew); `mesh events FILE` prints
// them.
void add_events_option(CLI::App& cmd, std::string& path);
// The log of `path` fed by `runner` (nullptr when `path` is empty); keep it while the runner runs.
// Every packet a router drops also goes to `drops` (the traffic account), with or without a file.
std::unique_ptr<fabric::EventLogFile> log_events(fabric::FabricRunner& runner,
                                                 const std::string& path, fabric::DropLog& drops);

// --on-link-down drain-after-grace|drain|none and --reliability relaxed|strict
// (fabric::FabricRunner::react_to_dead_links): the host acts on a link that stays down 50 us or
// whose peer stays silent 1 ms (the default), or at the first link_down / peer_silent (drain), or
// never (none): it reroutes the link over its fallback (2D, paired planes), else drains its ends
// (relaxed) or stops the fabric when no link between the two chips is left (strict). Either way
// the traffic ends in bounded time with every packet delivered or dropped with its identity.
// --no-reroute drains a dead link's ends even where it has a working fallback; --rejoin-after-us N
// gives a rerouted link its traffic back once both ends have seen it up N us (0: never).
struct LinkDownArgs {
    std::string reaction = "drain-after-grace";
    std::string reliability = "relaxed";
    bool no_reroute = false;
    uint32_t rejoin_after_us = fabric::FabricRunner::LinkDownReaction{}.rejoin_after_us;
};
void add_link_down_options(CLI::App& cmd, LinkDownArgs& args);
// Error(BadInput) for a reaction or mode that is not one (a record's fields).
void apply_link_down(fabric::FabricRunner& runner, const LinkDownArgs& args,
                     const fabric::ClusterDescriptor& cluster);

// What `fabric run` and `mesh run` say in their help about the account and the exit code.
inline constexpr const char* kAccountHelp =
    "Ends with a per-flow account: packets sent, delivered (counted at the sink), dropped (with "
    "the reason and the router that dropped them) and lost (sent but neither delivered nor "
    "reported dropped). Exit 0 only when every packet was delivered: a run whose packets were "
    "dropped fails (108) even when every drop is accounted for (the report says so), and so "
    "does one with lost or duplicated packets.";
// The account as text (fabric::account_table), after a blank line.
void print_account(const fabric::TrafficAccount& account);
// What the host did about each dead link (FabricRunner::link_reports): "link: ..." lines, and
// the same lines as a JSON array ("links").
void print_link_reports(const fabric::FabricRunner& runner);
nlohmann::json link_reports_json(const fabric::FabricRunner& runner);

// A kernel's launch result and mailbox (the same for 1D and 2D traffic).
using TrafficOutcome = fabric::MeshWorkerOutcome;

// What a fabric command adds to the report its session prints (FabricSession, MeshSession).
struct RunReport {
    std::string passed;  // the verdict when nothing failed (mesh: empty, the session's own)
    std::span<const TrafficOutcome> outcomes;  // the kernels that ran, if any
    uint32_t figure_bytes = 0;                 // bytes per packet sent (JSON); 0: the slot payload
    uint64_t send_cycles = 0;                  // B/cycle over this many cycles (0: none)
    std::function<void(nlohmann::json&)> add_json;  // the command's members of the document
    std::function<void()> print_body;               // the command's part of the text
};

// The exit code of a failed traffic command: 104 (a kernel trapped), 105 (one still running at
// the budget) or 108 (the fabric).
int exit_code_for(fabric::TrafficFailure failure);
// The exit code of a fabric command that found `problems` (none: 0) after these kernels ran.
int verdict_exit_code(std::span<const std::string> problems,
                      std::span<const TrafficOutcome> outcomes);
// "<command> failed: <problem>; <problem>..." ("mesh run failed: ...").
std::string failed_verdict(std::string_view command, std::span<const std::string> problems);

// One router as JSON: the 1D fields, and for a 2D router its mesh node, direction and plane.
// Bytes are packets x `packet_bytes`; B/cycle over `cycles` (0: none).
nlohmann::json router_json(const fabric::RouterSnapshot& s, const fabric::RouterPlacement& p,
                           uint32_t packet_bytes, uint64_t cycles);

double bytes_per_cycle(uint64_t bytes, uint64_t cycles);

}  // namespace fabricctl
