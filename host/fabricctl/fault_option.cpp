#include "fault_option.h"

#include "cli_common.h"
#include "fabric/error.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#endif

namespace fabricctl {

using fabric::ErrorCategory;

void FaultArgs::add_options(CLI::App& cmd) {
    cmd.add_option("--fault", specs,
                   "Simulator fault during the traffic (repeatable), cycles from the workers' "
                   "start: link-down:CHIP:ETH@CYCLE[/CYCLES] (up again CYCLES later), "
                   "link-flap:CHIP:ETH@CYCLE/PERIOD, "
                   "link-drop:CHIP:ETH@CYCLE/PPM, link-delay:CHIP:ETH@CYCLE/CYCLES, "
                   "router-stall:CHIP:ETH@CYCLE/CYCLES, noc-hold:CHIP:X-Y@CYCLE[/CYCLES] (the "
                   "NOC stops delivering to core X-Y, until CYCLES later)");
    cmd.add_option("--seed", seed, "Seed of the faults' random draws (link-drop)")
        ->capture_default_str();
}

std::vector<fabric::FaultSpec> FaultArgs::parse() const {
    std::vector<fabric::FaultSpec> out;
    for (const std::string& s : specs) out.push_back(fabric::parse_fault(s));
    return out;
}

void FaultArgs::refuse_on_pcie(bool pcie) const {
    if (pcie && !specs.empty()) {
        fabric::fail(ErrorCategory::BadInput,
                     "--fault {}: faults are injected into the model only, not into chips behind "
                     "tt-kmd: use --target sim",
                     specs.front());
    }
}

namespace {

// One applied fault as the run report and the --events log give it.
nlohmann::json applied_json(const fabric::AppliedFault& f) {
    nlohmann::json j{{"fault", fabric::fault_kind_name(f.kind)},
                     {"change", f.change},
                     {"chip", f.chip},
                     {"device_cycle", f.device_cycle},
                     {"traffic_cycle", f.traffic_cycle}};
    if (fabric::fault_on_core(f.kind)) {
        j["core"] = f.core.str();
    } else {
        j["eth"] = f.eth;
    }
    return j;
}

#ifdef FABRIC_HAVE_SIM
// The host record of one applied fault in the --events log ("cycle": the device's).
void append_event(fabric::EventLogFile& log, const fabric::AppliedFault& f) {
    nlohmann::json record = applied_json(f);
    record["kind"] = "fault";
    record["cycle"] = record["device_cycle"];
    record.erase("device_cycle");
    log.append_host("fault: " + f.describe(), record);
}
#endif

}  // namespace

RunFaults::RunFaults(std::vector<fabric::FaultSpec> specs, uint64_t seed,
                     fabric::InterruptibleDevice& device, fabric::FabricRunner& runner,
                     fabric::EventLogFile* events)
    : seed_(seed) {
    for (const fabric::FaultSpec& f : specs) specs_.push_back(f.text);
    if (specs.empty()) return;
#ifndef FABRIC_HAVE_SIM
    (void)seed, (void)device, (void)runner, (void)events;
    fabric::fail(ErrorCategory::Unsupported,
                 "--fault: this fabricctl was built without the simulator (sim_model)");
#else
    auto* model = dynamic_cast<fabric::SimDevice*>(&device.inner());
    if (model == nullptr) {
        fabric::fail(ErrorCategory::BadInput, "--fault {}: {} is not the model", specs.front().text,
                     device.inner().description());
    }
    injector_ = std::make_unique<fabric::FaultInjector>(*model, std::move(specs), seed);
    injector_->on_applied([events](const fabric::AppliedFault& f) {
        log_line("fault: " + f.describe());
        if (events != nullptr) append_event(*events, f);
    });
    runner.on_workers_released([inj = injector_.get()](uint64_t cycle) { inj->arm(cycle); });
#endif
}

RunFaults::~RunFaults() = default;

std::vector<fabric::AppliedFault> RunFaults::applied() const {
    return injector_ ? injector_->log() : std::vector<fabric::AppliedFault>{};
}

nlohmann::json RunFaults::json() const {
    nlohmann::json applied_list = nlohmann::json::array();
    for (const fabric::AppliedFault& f : applied()) applied_list.push_back(applied_json(f));
    return {{"seed", seed_}, {"specs", specs_}, {"applied", std::move(applied_list)}};
}

void RunFaults::log_effects() const {
    if (!injector_) return;
    for (const std::string& line : injector_->drop_effects()) log_line("fault: " + line);
}

}  // namespace fabricctl
