// fabricctl mesh down: the 2D fabric (mesh_plan.h) of a mesh graph descriptor over the chips of a
// cluster terminated gracefully, every router checked to be Terminated.
//
//   fabricctl mesh down --cluster FILE (the options of `mesh up`, mesh_up_cmd.h)
//
// --target sim (the default) brings the fabric up in the model of --cluster first; --target pcie
// takes over the routers an earlier `mesh up` left running (their configs checked against this
// plan, every one ready for traffic, else 108). Prints every router after termination. Exit codes
// as `mesh up`.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_down_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
