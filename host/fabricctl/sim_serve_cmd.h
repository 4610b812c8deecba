// fabricctl sim serve | status | pause | resume | step | stop: a simulated cluster kept running
// behind the simulated tt-kmd driver on a Unix socket, and its controls (host/README.md, "sim
// server").
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_sim_serve_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
