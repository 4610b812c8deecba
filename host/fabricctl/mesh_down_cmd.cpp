#include "mesh_down_cmd.h"

#include <fmt/format.h>

#include "mesh_session.h"

namespace fabricctl {

namespace {

class MeshDown final : public MeshFabricCommand {
  public:
    MeshDown(CLI::App& app, bool& as_json)
        : MeshFabricCommand(app, as_json, "down",
                            "Terminate the 2D fabric gracefully and check every router (sim: "
                            "brings it up first)") {}

    int run() const override {
        MeshSession s(args_, "down", as_json_);
        return run_without_traffic(s, [&] {
            if (s.pcie()) {
                s.attach();  // the routers an earlier `mesh up` left running
            } else {
                s.bring_up();
                s.read_live();
            }
            s.terminate();
            RunReport r;
            r.print_body = [&] {
                fmt::print("\n");
                s.print_routers(s.shown(), false);
                s.print_terminated("\n");
            };
            return s.report(r);
        });
    }
};

}  // namespace

CliCommandPtr add_mesh_down_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshDown>(app, as_json);
}

}  // namespace fabricctl
