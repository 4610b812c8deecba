// fabricctl cluster check: whether a cluster's cabling can host a mesh graph
// (fabric/topology_map.h: check_cabling; fabric/cluster_descriptor.h: lint).
//
//   fabricctl cluster check --cluster FILE [--mesh-graph FILE] [--pin M:D=CHIP ...]
//                           [--topology mesh|torus] [--json]
//
// Without --mesh-graph it checks against the largest 2D mesh the cluster holds and says so. Lists
// every expected link that is missing, every link between chips of the fabric that are not
// neighbours in it, and the descriptor's own problems (entries listed twice, a port with two
// peers), naming chips, channels and mesh devices; exits 0 when the cluster can host the graph,
// 101 when it cannot, 102 when the descriptor itself is invalid.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_cluster_check_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
