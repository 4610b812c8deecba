#include "mesh_status_cmd.h"

#include <fmt/format.h>

#include <algorithm>

#include "fabric/fabric_runner.h"
#include "mesh_session.h"

namespace fabricctl {

namespace {

class MeshStatus final : public MeshFabricCommand {
  public:
    MeshStatus(CLI::App& app, bool& as_json)
        : MeshFabricCommand(app, as_json, "status",
                            "Every router's status and every link's state (sim: brings the "
                            "fabric up first, terminates it after)") {}

    int run() const override {
        MeshSession s(args_, "status", as_json_);
        return run_without_traffic(s, [&] {
            s.show_live = true;
            if (s.pcie()) {  // on silicon the fabric outlives the command: read it, leave it
                s.read_live();
                return report(s);
            }
            s.bring_up_and_watch();
            s.read_live();
            s.terminate();
            return report(s);
        });
    }

  private:
    static int report(MeshSession& s) {
        RunReport r;
        r.print_body = [&] {
            fmt::print("\n");
            s.print_routers(s.shown(), false);
            fmt::print("\n");
            s.print_links(s.shown());
            s.print_terminated("\n");
        };
        return s.report(r);
    }
};

}  // namespace

CliCommandPtr add_mesh_status_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshStatus>(app, as_json);
}

}  // namespace fabricctl
