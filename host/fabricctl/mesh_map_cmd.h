// fabricctl mesh map: which physical chip plays each mesh device (fabric/topology_map.h).
//
//   fabricctl mesh map --cluster FILE [--mesh-graph FILE] [--pin M:D=CHIP ...]
//                      [--topology mesh|torus] [--links] [--json]
//
// Without --mesh-graph it maps the largest 2D mesh the cluster holds and says so. Prints every
// mesh as a grid of chip ids and the chips left unused (--links: every port's link; --json: all
// of it). A graph the cluster cannot host is bad input (101), naming the closest placement's short
// neighbour pairs; an invalid descriptor is 102.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_map_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
