#include "mesh_up_cmd.h"

#include "mesh_session.h"

namespace fabricctl {

namespace {

class MeshUp final : public MeshFabricCommand {
  public:
    MeshUp(CLI::App& app, bool& as_json)
        : MeshFabricCommand(app, as_json, "up",
                            "Bring the 2D fabric up and summarize it (sim: then terminate it)") {}

    int run() const override {
        MeshSession s(args_, "up", as_json_);
        return run_without_traffic(s, [&] {
            s.bring_up();
            s.read_live();
            if (!s.pcie()) s.terminate();  // on silicon the routers stay up for status and down
            RunReport r;
            r.print_body = [&] { s.print_terminated(""); };
            return s.report(r);
        });
    }
};

}  // namespace

CliCommandPtr add_mesh_up_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshUp>(app, as_json);
}

}  // namespace fabricctl
