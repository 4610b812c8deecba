// fabricctl soc show <descriptor.yaml> [--json]: a tt-umd SoC descriptor validated and summarized
// (arch, grid, core counts, DRAM, L1 sizes, eth channels).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommands add_soc_commands(CLI::App& app, bool& as_json);

}  // namespace fabricctl
