// fabricctl soc show <descriptor.yaml> [--json]: a tt-umd SoC descriptor validated and summarized
// (arch, grid, core counts, DRAM, L1 sizes, eth channels).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_soc_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
