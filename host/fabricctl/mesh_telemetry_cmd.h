// fabricctl mesh telemetry: every router's counters and link state in the Prometheus text format,
// once on stdout or served on a local port (fabric/telemetry.h).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_telemetry_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
