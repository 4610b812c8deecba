// fabricctl mesh routes: mesh graph descriptors and their routing tables.
//
//   fabricctl mesh routes --mesh-graph FILE [--mesh M] [--from M:D --to M:D] [--plane P] [--json]
//
// Prints the meshes, the inter-mesh connections, the L0 (intra-mesh) table of every mesh (or of
// --mesh M), the L1 (inter-mesh) exit-node tables, and with --from/--to the source route between
// two devices on routing plane P (default 0). Failures are fabric::Error thrown from run(), which
// main() reports like every other command (bad descriptor 102, bad --from/--to/--mesh/--plane 101).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_routes_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
