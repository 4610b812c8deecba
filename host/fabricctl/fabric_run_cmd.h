// fabricctl fabric run: traffic over the 1D fabric (a line or ring over a cluster's chips) in the
// simulator, every byte checked.
//
//   fabricctl fabric run --cluster yaml [--topology line|ring] [--chips 0,1,..] [--link N]
//       [--soc yaml] [--router-elf elf] [--base-fw elf | --no-base-fw] [--max-cycles N]
//       [--stall-cycles N] [--stall-router CHIP:ETH@CYCLES] [--bytes B] [--packets N]
//       [--pattern neighbour|all-to-all] [--worker-elf elf] [--json] [--quiet]
//
// Plans the fabric (fabric_plan.h) and its traffic (fabric_traffic.h), brings the fabric up with
// FabricRunner over SimDevice, runs the fabric_traffic kernels, terminates, checks every byte
// that landed and the routers' counters (fabric/traffic_verdict.h) and reports every router and
// worker (fabric_session.h). A kernel that traps is 104, one still running at the budget 105,
// any other failure 108.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_fabric_run_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
