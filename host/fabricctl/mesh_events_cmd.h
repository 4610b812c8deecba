// fabricctl mesh events: the routers' event log a run wrote (`--events FILE` of mesh up / mesh run
// / fabric up / fabric run; fabric/router_events.h), one event per line.
//
//   fabricctl mesh events FILE [--follow] [--json]
//
// Prints "<host time> <router>: <event>" per record, or with --json the records as they are
// (JSON lines). --follow keeps printing what is appended until interrupted (SIGINT: exit 130).
// A file that cannot be read, or a line that is not an event record, is bad input (101) naming
// the line.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_events_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
