// fabricctl devices / fabricctl pcie run: the PCIe backend (fabric/pcie_device.h) from the CLI.
//
//   fabricctl devices [--dir DIR] [--links] [--soc yaml] [--json]
//       Discover /dev/tenstorrent/* (or DIR): one line per device node (ordinal, node, arch, PCI
//       address, driver version). --links also opens them as a PcieDevice and prints the cluster
//       the chips report (chips, PCIe-attached ordinals, Ethernet links). No device is not an
//       error: "no Tenstorrent device found under ..." on stderr, exit 0, {"devices": []}.
//   fabricctl devices --sim ARCH [--cluster yaml] [--no-base-fw] ...
//       The same through the simulated tt-kmd driver over the model (SimKmdPort).
//   fabricctl pcie run --target pcie|sim [--arch A] [--cluster yaml] [--no-base-fw]
//                      --core C firmware.elf [--max-cycles N] [--json]
//       Launch firmware on an ERISC through PcieDevice: on silicon (--target pcie, the default;
//       Error(Device) 106 "no Tenstorrent device found" without one) or on the model through the
//       simulated driver (--target sim, --arch required). Exit codes as `sim run`.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommands add_pcie_commands(CLI::App& app, bool& as_json);

}  // namespace fabricctl
