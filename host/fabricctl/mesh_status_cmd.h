// fabricctl mesh status: every router's status block and every link's state of the 2D fabric
// (mesh_plan.h) of a mesh graph descriptor over the chips of a cluster.
//
//   fabricctl mesh status --cluster FILE (the options of `mesh up`, mesh_up_cmd.h)
//
// --target sim (the default) brings the fabric up in the model of --cluster, lets it run a few
// poll intervals under the health monitor (so the heartbeats shown have moved), reads it and
// terminates it; --target pcie reads the routers an earlier `mesh up` left running. Exit codes as
// `mesh up`.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_status_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
