// --fault SPEC (repeatable) and --seed N of `fabric run` and `mesh run`: faults injected into the
// model during the run (fabric/fault_plan.h has the spellings). Each change a fault makes is
// logged on stderr as it happens ("fault: link-down chip 0 eth 8 at traffic cycle 5000 (device
// cycle 123456)") and, with --events FILE, appended to that log as a "host" record.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabric/fabric_runner.h"
#include "fabric/fault_plan.h"
#include "fabric/interrupt.h"
#include "fabric/router_events.h"

namespace fabricctl {

struct FaultArgs {
    std::vector<std::string> specs;
    uint64_t seed = 1;

    // Adds --fault and --seed to `cmd`.
    void add_options(CLI::App& cmd);
    // Every spec parsed (Error(BadInput) for the first bad one, fault_plan.h).
    std::vector<fabric::FaultSpec> parse() const;
    // Error(BadInput) when faults were asked for on a device that is not the model.
    void refuse_on_pcie(bool pcie) const;
};

// The faults of one run: checked against the model behind `device` when attached, armed when the
// runner first releases the workers (the start of traffic), logged as they are applied. Holds
// nothing when no --fault was given.
class RunFaults {
  public:
    // `specs` from FaultArgs::parse. Error(BadInput) for a spec that does not fit the model
    // (fault_plan.h check_fault) or a device that is not the model; Error(Unsupported) in a build
    // without the model. `events` may be null (no --events).
    RunFaults(std::vector<fabric::FaultSpec> specs, uint64_t seed,
              fabric::InterruptibleDevice& device, fabric::FabricRunner& runner,
              fabric::EventLogFile* events);
    ~RunFaults();
    RunFaults(const RunFaults&) = delete;
    RunFaults& operator=(const RunFaults&) = delete;

    // Every change applied so far.
    std::vector<fabric::AppliedFault> applied() const;
    // Log what the frame drops did (FaultInjector::drop_effects), once the traffic is over.
    void log_effects() const;
    // The run report's "faults": {"seed", "specs": [as written], "applied": [{"fault", "change",
    // "chip", "eth", "device_cycle", "traffic_cycle"}]} (empty lists without --fault).
    nlohmann::json json() const;

  private:
    std::vector<std::string> specs_;
    uint64_t seed_;
    std::unique_ptr<fabric::FaultInjector> injector_;
};

}  // namespace fabricctl
