// fabricctl mesh up: the 2D fabric (mesh_plan.h) of a mesh graph descriptor brought up over the
// chips of a cluster.
//
//   fabricctl mesh up --cluster FILE [--mesh-graph FILE] [--pin M:D=CHIP ...]
//       [--topology mesh|torus] [--target sim|pcie] [--dir DIR] [--soc FILE] [--planes 0,1]
//       [--payload B] [--slots S,R] [--max-cycles N] [--stall-cycles N] [--router-elf ELF]
//       [--base-fw ELF | --no-base-fw] [--json] [-q]
//
// Prints a summary (meshes, chips, routers per plane, handshake and ready cycles, wall time).
// --target sim (the default) builds the model of --cluster for this one command, so the fabric
// is terminated gracefully before it ends; --target pcie leaves the routers running on the chips
// for `mesh status` and `mesh down`. Failures are reported by main() (mesh_session.h): bad input
// 101, bad descriptor 102, bad router image 103, no device 106, a fabric failure 108.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_up_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
