// fabricctl flash: load firmware onto the selected Ethernet cores of the selected chips and start
// it, on the model or on silicon.
//
//   fabricctl flash [--target sim|pcie] [--cluster yaml] [--no-base-fw | --base-fw elf] [--dir DIR]
//                   [--chips 0,1,..] --eth 0,1,..|all firmware.elf [--wait] [--max-cycles N]
//                   [--json]
//
//   --target sim   (default) the model of --cluster's chips (every chip reachable); the model lives
//                  only as long as the command, so it always waits for the cores (as --wait)
//   --target pcie  the PCIe-attached chips through tt-kmd (PcieDevice); a chip reached only over
//                  Ethernet is refused; without --wait the cores are left running
//
// Every core is checked (it exists, the image fits beside what it must not overwrite) before
// anything is written; then all are loaded, then all started together. With --wait each core's
// outcome is printed (exited with status, trapped, still running at the budget) and the exit code
// is 0 only if every core exited with status 0 (else the first failing core's code, as `sim run`).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_flash_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
