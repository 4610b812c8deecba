#include "mesh_control.h"

#include <fmt/format.h>

#include "cli_common.h"
#include "fabric/error.h"
#include "mesh_session.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace fabricctl {

namespace pf = protocol::fabric;
using fabric::ErrorCategory;

void ControlArgs::add_options(CLI::App& cmd) {
    cmd.add_option("--at", at, "Model: traffic cycle (from the workers' start) of the control")
        ->capture_default_str();
    if (verb == pf::RouterControl::Drain) return;
    cmd.add_option("--for", hold, "Model: cycles the fabric stays paused before it resumes")
        ->capture_default_str();
}

std::string ControlArgs::when() const {
    if (verb == pf::RouterControl::Drain)
        return fmt::format("routers at traffic cycle {} (drained at {})", at + hold - 1, at);
    return fmt::format("routers at traffic cycle {} (paused at {}, resumed at {})", at + hold - 1,
                       at, at + hold);
}

std::string ControlArgs::command(pf::RouterControl verb) {
    return verb == pf::RouterControl::Run
               ? "resume"
               : fabric::router_control_name(static_cast<uint32_t>(verb));
}

std::string ControlArgs::description(pf::RouterControl verb) {
    switch (verb) {
        case pf::RouterControl::Pause:
            return "Pause every router: nothing new taken or sent, what was taken completes, the "
                   "counters stand still (sim: brings the fabric up with `mesh run`'s traffic, "
                   "pauses at --at for --for cycles, shows the routers, resumes: the traffic "
                   "completes exactly)";
        case pf::RouterControl::Drain:
            return "Drain every router: what can move moves, what cannot within 20 us is dropped "
                   "and named; a dead link is cut and what was on it resolved (sim: brings the "
                   "fabric up with `mesh run`'s traffic, drains at --at; with --fault link-down "
                   "the account names every packet dropped)";
        default:
            return "Resume every router (the control word back to run) (sim: as pause, then "
                   "resumes after --for cycles: the traffic completes exactly)";
    }
}

ControlSchedule::ControlSchedule(const ControlArgs& args, fabric::InterruptibleDevice& device,
                                 fabric::FabricRunner& runner)
    : held_(std::make_shared<std::vector<fabric::RouterSnapshot>>()) {
#ifndef FABRIC_HAVE_SIM
    (void)args, (void)device, (void)runner;
    fabric::fail(ErrorCategory::Unsupported,
                 "mesh {}: this fabricctl was built without the simulator (sim_model)",
                 ControlArgs::command(args.verb));
#else
    auto* model = dynamic_cast<fabric::SimDevice*>(&device.inner());
    if (model == nullptr) {
        fabric::fail(ErrorCategory::BadInput, "mesh {}: {} is not the model",
                     ControlArgs::command(args.verb), device.inner().description());
    }
    const pf::RouterControl first =
        args.verb == pf::RouterControl::Drain ? pf::RouterControl::Drain : pf::RouterControl::Pause;
    bool armed = false;
    runner.on_workers_released([=, &runner, held = held_](uint64_t start) mutable {
        if (armed) return;  // the first round's traffic
        armed = true;
        model->at_cycle(start + args.at, [&runner, first] { runner.write_control(first); });
        const uint64_t read_at = start + args.at + args.hold;
        model->at_cycle(read_at - 1, [&runner, held] { *held = runner.status(); });
        if (first == pf::RouterControl::Pause) {
            model->at_cycle(read_at, [&runner] { runner.write_control(pf::RouterControl::Run); });
        }
    });
#endif
}

namespace {

std::string router_counters(const fabric::RouterSnapshot& s) {
    return fmt::format("sent {}, completed {}, received {}, delivered {}, forwarded {}", s.sent(),
                       s.completed(), s.received(), s.block.delivered, s.block.forwarded);
}

}  // namespace

void print_control_states(const std::vector<fabric::RouterSnapshot>& snaps,
                          const fabric::FabricPlan& plan) {
    for (size_t i = 0; i < snaps.size() && i < plan.routers.size(); ++i) {
        const fabric::RouterSnapshot& s = snaps[i];
        fmt::print("{}: {}{}; {}\n", fabric::router_component_name(plan.routers[i]),
                   fabric::router_control_name(s.control.state),
                   s.control.cut != 0 ? " (link cut)" : "", router_counters(s));
    }
}

nlohmann::json control_states_json(const std::vector<fabric::RouterSnapshot>& snaps,
                                   const fabric::FabricPlan& plan) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < snaps.size() && i < plan.routers.size(); ++i) {
        const fabric::RouterSnapshot& s = snaps[i];
        out.push_back({{"router", fabric::router_component_name(plan.routers[i])},
                       {"chip", s.chip},
                       {"eth", s.eth_channel},
                       {"state", fabric::router_control_name(s.control.state)},
                       {"cut", s.control.cut != 0},
                       {"reroute", fabric::reroute_state_name(s.control.reroute)},
                       {"sent", s.sent()},
                       {"completed", s.completed()},
                       {"received", s.received()},
                       {"delivered", s.block.delivered},
                       {"forwarded", s.block.forwarded}});
    }
    return out;
}

int run_control_on_pcie(MeshSession& s, pf::RouterControl verb) {
    return run_without_traffic(s, [&] {
        s.attach();
        const std::vector<fabric::RouterSnapshot> snaps = s.runner().control(verb, s.cycles_left());
        RunReport r;
        r.passed =
            fmt::format("mesh {} passed: {}; every router reports {}", ControlArgs::command(verb),
                        s.what(), fabric::router_control_name(static_cast<uint32_t>(verb)));
        r.add_json = [&](nlohmann::json& j) {
            j["control"] = control_states_json(snaps, s.plan().fabric);
        };
        r.print_body = [&] {
            fmt::print("\n");
            print_control_states(snaps, s.plan().fabric);
        };
        return s.report(r);
    });
}

}  // namespace fabricctl
