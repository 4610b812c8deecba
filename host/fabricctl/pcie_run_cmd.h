// fabricctl pcie run: firmware on an ERISC through the PCIe backend (fabric/pcie_device.h).
//
//   fabricctl pcie run --target pcie|sim [--arch A] [--cluster yaml] [--no-base-fw]
//                      [--dir DIR] [--soc yaml] --core C firmware.elf [--max-cycles N] [--json]
//       Launch firmware on an ERISC through PcieDevice: on silicon (--target pcie, the default;
//       Error(Device) 106 "no Tenstorrent device found" without one) or on the model through the
//       simulated driver (--target sim, --arch required). Exit codes as `sim run`. On SIGINT /
//       SIGTERM the core it started is stopped where it can be, and stderr says so
//       (fabric::stop_cores_after_interrupt).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_pcie_run_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
