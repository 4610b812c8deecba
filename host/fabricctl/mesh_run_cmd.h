// fabricctl mesh run: all-to-all traffic over the 2D fabric (mesh_plan.h) of a mesh graph
// descriptor on the chips of a cluster, every byte checked.
//
//   fabricctl mesh run --cluster FILE (the options of `mesh up`, mesh_up_cmd.h)
//       [--packets N] [--bytes B] [--worker-elf ELF] [--record FILE]
//   fabricctl mesh replay FILE [--target sim|pcie] [--socket S] [--json]
//
// Brings the fabric up, sends --packets packets of --bytes from every device to every other one
// on every plane (mesh_traffic.h: a fabric_traffic kernel per chip and router its routes start
// through; a router with more flows than a kernel takes sends them in later rounds), terminates,
// checks every byte that landed and the routers' counters (fabric/traffic_verdict.h) and prints
// what each router and kernel moved. On silicon (--target pcie) it terminates what it started too.
// A kernel that traps is 104, one still running at the budget 105, any other failure 108.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_run_command(CLI::App& app, bool& as_json);
// mesh replay FILE (traffic_record.h): the run `mesh run --record FILE` recorded, again, with
// every flow's account checked against the record.
CliCommandPtr add_mesh_replay_command(CLI::App& app, bool& as_json);
// mesh pause|drain|resume (mesh_control.h): on silicon the control of the running fabric; in the
// model `mesh run` with the control applied during the traffic.
CliCommandPtr add_mesh_pause_command(CLI::App& app, bool& as_json);
CliCommandPtr add_mesh_drain_command(CLI::App& app, bool& as_json);
CliCommandPtr add_mesh_resume_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
