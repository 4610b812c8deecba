#include "mesh_show_cmd.h"

#include <fmt/format.h>

#include <algorithm>

#include "fabric/error.h"
#include "mesh_session.h"

namespace fabricctl {

namespace {

class MeshShow final : public MeshFabricCommand {
  public:
    MeshShow(CLI::App& app, bool& as_json)
        : MeshFabricCommand(app, as_json, "show",
                            "The fabric as a picture: an HTML page of every mesh's chips and every "
                            "link, coloured by state and drawn by load (sim: brings the fabric up "
                            "first, terminates it after)") {
        cmd_->add_option("-o,--output", output_, "Write the page here (default: stdout)");
    }

    int run() const override {
        MeshSession s(args_, "show", as_json_);
        return run_without_traffic(s, [&] {
            if (!s.pcie()) s.bring_up_and_watch();
            write_page(s, output_);
            if (!s.pcie()) s.terminate();
            return output_.empty() ? finish_stdout(kOk) : static_cast<int>(kOk);
        });
    }

  private:
    std::string output_;
};

}  // namespace

CliCommandPtr add_mesh_show_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshShow>(app, as_json);
}

}  // namespace fabricctl
