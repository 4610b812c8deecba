// The host's health monitor: finds a fabric component (router, mux, ...) that stopped making
// progress and names it, instead of a generic timeout.
//
// Every long-running component publishes a status block that starts with the five words of
// protocol::fabric::ComponentStatusHead: status, stage, stuck_at, detail, heartbeat. The monitor
// reads them (and what the core is doing) at every poll and declares a component stuck when
//   - its status is an error (the component stopped itself and says where: stage, stuck_at),
//   - its core trapped, or exited / returned to the base firmware / sits in reset while its
//     status says it should be running (anything but "done" or "not started"),
//   - its status is one in which its main loop runs (the heartbeat must move) and the heartbeat
//     has not changed for the stall window (device cycles). The window restarts whenever the
//     status changes, so a component that just entered its main loop is not stuck.
// A report names the chip, core, component, its status / stage / stuck_at / detail by name,
// heartbeat value and how long it has not moved, and the core's run state with its pc.
//
// The monitor does not know the component kinds: a ComponentKind says how to name and judge one
// kind's words (router_component_kind() in fabric_runner.h for the router; a mux brings its own).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/device.h"
#include "fabric/error.h"
#include "protocol/fabric.h"

namespace fabric {

// Default stall window: how long a heartbeat may stand still while the main loop should run.
// The router publishes its heartbeat every 16 main-loop passes: a few hundred cycles apart when
// idle; under the heaviest load measured (8-chip ring, all-to-all, 7616-B packets) the longest
// gap is between 10,000 and 20,000 cycles (a 10,000-cycle window reports healthy routers, 20,000
// does not). Its longest single bounded wait inside the loop is progress_timeout_us (10 ms by
// default), after which it reports Timeout itself. 1 M cycles (1 ms on Wormhole) is 50 times the
// longest healthy gap and still names a hung core long before the firmware's own timeout or a
// worker's.
inline constexpr uint64_t kDefaultStallCycles = 1'000'000;

// How to read one kind of component's status words.
struct ComponentKind {
    std::string name;  // "router", "mux": for messages
    std::function<std::string(uint32_t)> status_name;
    std::function<std::string(uint32_t)> stage_name;
    std::function<std::string(uint32_t)> stuck_at_name;
    // The detail word by name, given the status it goes with (optional: hex when empty).
    std::function<std::string(uint32_t status, uint32_t detail)> detail_name;
    std::function<bool(uint32_t)> is_error;  // the component stopped with an error
    std::function<bool(uint32_t)> beating;   // its main loop runs: the heartbeat must move
    std::function<bool(uint32_t)> done;      // it ended normally: its core may have stopped
    uint32_t not_started = 0;                // status before it ran (its core may be in reset)
};

// One component the monitor watches.
struct WatchedComponent {
    CoreLocation core;
    std::string name;          // "router east chip 0 eth 2", "mux chip 0 core 1-1"
    uint64_t status_addr = 0;  // its status block (ComponentStatusHead first)
    ComponentKind kind;
    // LaunchFlag: a core running base firmware; the component has ended when the launch flag is
    // 0 again (returned to the base firmware), like an exit.
    LaunchMethod method = LaunchMethod::ResetPc;
};

// Why a component is stuck.
enum class StuckReason {
    Stalled,  // heartbeat unchanged for the stall window while it should move
    Error,    // its status is an error
    Trapped,  // its core trapped
    Stopped,  // its core exited, returned to the base firmware or is in reset while not done
};
std::string_view stuck_reason_name(StuckReason r);  // "stalled", "error", "trapped", "stopped"

// One stuck component, as the monitor saw it.
struct StuckReport {
    CoreLocation core;
    std::string component;  // WatchedComponent::name
    std::string kind;       // ComponentKind::name
    StuckReason reason = StuckReason::Stalled;
    protocol::fabric::ComponentStatusHead head{};
    std::string status_name;
    std::string stage_name;
    std::string stuck_at_name;
    std::string detail_name;
    uint64_t unchanged_cycles = 0;  // how long the heartbeat has not moved (as polled)
    uint64_t at_cycle = 0;          // device cycle of the poll that found it
    CoreStatus run;                 // what the core is doing

    // "router east chip 0 eth 2 (chip 0 core 8-0): stalled; status ready_for_traffic, stage
    // ready_for_traffic, stuck at none, detail 0x00000000, heartbeat 4176 unchanged for 1000000
    // cycles, core running at pc 0x00009abc"
    std::string describe() const;
};

// "1 of 4 components stuck: <describe>; <describe>"
std::string describe_stuck(const std::vector<StuckReport>& reports, size_t watched);

// Error(Fabric) that carries the reports (fabricctl prints them as JSON too).
class HealthError : public Error {
  public:
    HealthError(const std::string& message, std::vector<StuckReport> reports)
        : Error(ErrorCategory::Fabric, message), reports_(std::move(reports)) {}
    const std::vector<StuckReport>& reports() const noexcept { return reports_; }

  private:
    std::vector<StuckReport> reports_;
};

class HealthMonitor {
  public:
    // Error(BadInput) for a stall window of 0 or a component without a kind.
    HealthMonitor(Device& device, std::vector<WatchedComponent> components,
                  uint64_t stall_cycles = kDefaultStallCycles);

    void add(WatchedComponent component);
    const std::vector<WatchedComponent>& components() const { return components_; }
    uint64_t stall_cycles() const { return stall_cycles_; }

    // Read every component now (the device is not advanced). Returns the stuck ones, in watch
    // order; empty when all are healthy. Each call is one poll: heartbeat windows are measured
    // between polls, so poll regularly while the device runs.
    std::vector<StuckReport> poll();
    // Advance the device by `cycles` in steps of `poll_cycles`, polling after each; returns at
    // the first poll that finds a stuck component (its reports), or empty after `cycles` (or
    // earlier when the device stops: nothing can make progress any more).
    std::vector<StuckReport> watch(uint64_t cycles, uint64_t poll_cycles);

  private:
    struct Track {
        bool seen = false;
        uint32_t status = 0;
        uint32_t heartbeat = 0;
        uint64_t since = 0;  // device cycle of the poll that first saw this heartbeat and status
    };

    Device& device_;
    std::vector<WatchedComponent> components_;
    std::vector<Track> tracks_;
    uint64_t stall_cycles_;
};

}  // namespace fabric
