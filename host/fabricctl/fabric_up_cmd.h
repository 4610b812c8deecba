// fabricctl fabric up: the 1D fabric (a line or ring over a cluster's chips) brought up in the
// simulator, every router shown, then terminated.
//
//   fabricctl fabric up --cluster yaml [--topology line|ring] [--chips 0,1,..] [--link N]
//       [--soc yaml] [--router-elf elf] [--base-fw elf | --no-base-fw] [--max-cycles N]
//       [--stall-cycles N] [--stall-router CHIP:ETH@CYCLES] [--watch N] [--json] [--quiet]
//
// Plans the fabric (fabric_plan.h), brings it up with FabricRunner over SimDevice, lets it run
// --watch cycles under the health monitor (with --stall-router, by default long enough to see
// the frozen router), terminates it gracefully and reports every router (fabric_session.h).
// A router that fails, lags or is stuck is 108.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_fabric_up_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
