// fabricctl devices: Tenstorrent PCIe devices (tt-kmd) as the PCIe backend
// (fabric/pcie_device.h) finds them.
//
//   fabricctl devices [--dir DIR] [--links] [--soc yaml] [--json]
//       Discover /dev/tenstorrent/* (or DIR): one line per device node (ordinal, node, arch, PCI
//       address, driver version). --links also opens them as a PcieDevice and prints the cluster
//       the chips report (chips, PCIe-attached ordinals, Ethernet links). No device is not an
//       error: "no Tenstorrent device found under ..." on stderr, exit 0, {"devices": []}.
//   fabricctl devices --sim ARCH [--cluster yaml] [--no-base-fw] ...
//       The same through the simulated tt-kmd driver over the model (SimKmdPort).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_devices_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
