// fabricctl mesh up | status | down | run: the 2D fabric (mesh_plan.h) of a mesh graph descriptor
// over the chips of a cluster.
//
//   fabricctl mesh up|status|down|run --mesh-graph FILE [--cluster FILE] [--target sim|pcie]
//       [--topology mesh|torus] [--planes 0,1] [--payload B] [--slots S,R] [--timeout-cycles N]
//       [--json] ...; run: [--packets N] [--bytes B]
//
// --target sim (the default) builds the model of --cluster for this one command, so every
// command brings the fabric up and terminates it gracefully before it ends:
//   up      bring up; summary (meshes, chips, routers per plane, handshake / ready cycles, wall)
//   status  bring up; every router's status block and every link's state
//   down    bring up, terminate, check every router is Terminated; the routers
//   run     bring up; all-to-all traffic on every plane (mesh_traffic.h: a fabric_traffic kernel
//           per chip and router its routes start through), every byte checked; per-router
//           figures
// --target pcie drives the chips through tt-kmd: `up` leaves the routers running, `status` reads
// them, `run` as in the model; `down` needs the runner to take over running routers (107 until
// it can).
//
// Failures are fabric::Error thrown from run(), reported by main(): bad input 101, bad descriptor
// 102, bad router image 103, no device 106, a fabric failure 108 (a kernel that traps 104, one
// still running at the budget 105).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommands add_mesh_fabric_commands(CLI::App& app, bool& as_json);

}  // namespace fabricctl
