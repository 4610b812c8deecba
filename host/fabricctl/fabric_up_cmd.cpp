#include "fabric_up_cmd.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>

#include "fabric_session.h"

namespace fabricctl {

namespace {

class FabricUp final : public FabricCommand {
  public:
    FabricUp(CLI::App& app, bool& as_json)
        : FabricCommand(app, as_json, "up",
                        "Bring the fabric up, show every router, terminate it") {
        cmd_->add_option("--watch", watch_,
                         "Let the fabric run this many cycles under the health monitor before "
                         "terminating it (default 0; with --stall-router: long enough to see it)")
            ->check(CLI::NonNegativeNumber);
    }

    int run() const override {
        FabricSession s(args_, "up", as_json_);
        s.plan_fabric(s.fabric_options());
        s.load_router_image();
        s.choose_base_firmware();
        s.open_model(0);
        s.bring_up();
        s.inject_stall();
        if (const uint64_t watch = watch_cycles(s))
            s.runner().monitor(std::min(watch, s.cycles_left()));
        s.terminate();

        const fabric::FabricPlan& plan = s.plan();
        RunReport r;
        r.passed = fmt::format(
            "fabric up: {} {} ({} routers): handshake {} cycles, ready {} cycles, terminated",
            fabric::topology_name(plan.topology), fmt::join(plan.chips, ","), plan.routers.size(),
            s.runner().handshake_cycles(), s.runner().ready_cycles());
        r.print_body = [&] { s.print_router_table(); };
        return s.report(r);
    }

  private:
    // --watch, or with --stall-router and no --watch long enough for the monitor to see it.
    uint64_t watch_cycles(FabricSession& s) const {
        if (watch_ != 0 || !s.stall()) return watch_;
        return s.stall()->after + 2 * s.runner().stall_cycles();
    }

    uint64_t watch_ = 0;  // let the fabric run this long under the health monitor
};

}  // namespace

CliCommandPtr add_fabric_up_command(CLI::App& app, bool& as_json) {
    return std::make_shared<FabricUp>(app, as_json);
}

}  // namespace fabricctl
