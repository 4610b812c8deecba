// fabricctl sim run: firmware on the simulated ERISC of one chip or of a cluster's chips.
//
//   fabricctl sim run --arch A [--soc yaml] [--cluster yaml] [--base-fw elf | --no-base-fw]
//                     (--core C firmware.elf | --load [chip:]core=fw.elf ...)
//                     [--max-cycles N] [--trace f.fst] [--json] [--quiet]
//
// stdout is exactly the firmware console (one core without --cluster; else each line prefixed
// "[chip:x-y] "); one verdict line per core on stderr; the exit code is the worst outcome
// (host/README.md, "sim run").
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_sim_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
