#include "mesh_show_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "fabric/error.h"
#include "fabric/fabric_page.h"
#include "mesh_session.h"

namespace fabricctl {

namespace {

// How long a fresh fabric runs before it is drawn (as `mesh status`): a few poll intervals.
constexpr uint64_t kShowWatchCycles = 10 * fabric::kFabricPollCycles;

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
            if (!s.pcie()) {
                s.bring_up();
                s.runner().monitor(std::min(kShowWatchCycles, s.cycles_left()));
            }
            const std::string page =
                fabric::fabric_page_html(s.plan(), fabric::read_telemetry(s.runner()),
                                         fmt::format("erisc-fabric: {}", args_.cluster));
            if (!s.pcie()) s.terminate();
            if (output_.empty()) {
                fmt::print("{}", page);
                return finish_stdout(kOk);
            }
            std::ofstream out(output_, std::ios::binary);
            out << page;
            if (!out.flush()) {
                fabric::fail(fabric::ErrorCategory::BadInput, "cannot write {}", output_);
            }
            log_line(fmt::format("mesh show: wrote {} ({} bytes)", output_, page.size()));
            return static_cast<int>(kOk);
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
