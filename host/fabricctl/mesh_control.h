// `fabricctl mesh pause|drain|resume` (protocol/fabric.h RouterControl; firmware/router/README.md
// "Control"). On --target pcie they attach to the running fabric (as `mesh status` and `down`
// do), write every router's control word, wait for every router to report the state and show
// them. In the model the fabric lives in one process, so each verb brings it up with `mesh run`'s
// traffic and applies the control at --at CYCLE of the traffic (cycles from the workers' start):
// pause holds it --for CYCLES, shows every router's state and counters as they stood, then
// resumes (the traffic completes exactly, exit 0); resume does the same and says so; drain
// drains every router (a link that is down, e.g. --fault link-down:..., is cut: what was on it
// is dropped or found delivered, each packet named in the account).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/interrupt.h"
#include "protocol/fabric.h"

namespace fabricctl {

class MeshSession;
struct RunReport;

struct ControlArgs {
    protocol::fabric::RouterControl verb = protocol::fabric::RouterControl::Pause;
    uint64_t at = 40'000;  // the t3k mesh's traffic is well under way by then
    uint64_t hold = 20'000;

    // --at and (pause, resume) --for.
    void add_options(CLI::App& cmd);
    // "routers at traffic cycle 59999 (paused at 40000, resumed at 60000)", "... (drained at
    // 40000)": what ControlSchedule::held() shows.
    std::string when() const;
    // The verb's command: "pause", "drain", "resume" (Run).
    static std::string command(protocol::fabric::RouterControl verb);
    // "Pause every router ..." for the verb's help.
    static std::string description(protocol::fabric::RouterControl verb);
};

// The model's schedule of one verb: armed when the runner releases the workers; every router
// read just before the resume (pause, resume) or `hold` cycles after the drain. Error(BadInput)
// for a device that is not the model.
class ControlSchedule {
  public:
    ControlSchedule(const ControlArgs& args, fabric::InterruptibleDevice& device,
                    fabric::FabricRunner& runner);
    // Empty until the traffic got that far.
    const std::vector<fabric::RouterSnapshot>& held() const { return *held_; }

  private:
    std::shared_ptr<std::vector<fabric::RouterSnapshot>> held_;
};

// One line per router: its control state, whether its link was cut, and its counters.
void print_control_states(const std::vector<fabric::RouterSnapshot>& snaps,
                          const fabric::FabricPlan& plan);
nlohmann::json control_states_json(const std::vector<fabric::RouterSnapshot>& snaps,
                                   const fabric::FabricPlan& plan);

// --target pcie: attach, control, wait (the budget), report. The exit code.
int run_control_on_pcie(MeshSession& s, protocol::fabric::RouterControl verb);

}  // namespace fabricctl
