// fabricctl fabric up | run: the 1D fabric (a line or ring over a cluster's chips) in the
// simulator.
//
//   fabricctl fabric up|run --cluster yaml [--topology line|ring] [--chips 0,1,..] [--link N]
//       [--soc yaml] [--router-elf elf] [--base-fw elf | --no-base-fw] [--max-cycles N]
//       [--stall-cycles N] [--stall-router CHIP:ETH@CYCLES] [--json] [--quiet]
//       up: [--watch N]; run: [--bytes B] [--packets N] [--pattern neighbour|all-to-all]
//       [--worker-elf elf]
//
// Plans the fabric (fabric_plan.h), brings it up with FabricRunner over SimDevice, for `run` sends
// the traffic fabric_traffic.h plans and checks every byte, terminates, reports every router.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommands add_fabric_commands(CLI::App& app, bool& as_json);

}  // namespace fabricctl
