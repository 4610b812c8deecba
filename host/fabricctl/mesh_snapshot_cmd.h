// fabricctl mesh snapshot: the state of a 2D fabric as one JSON document (seeds/000 §7.5.1).
//
//   fabricctl mesh snapshot --cluster FILE (the options of `mesh status`) [-o FILE]
//
// On silicon (--target pcie, or a `sim serve` model) it reads the routers a `mesh up` left
// running and leaves them; in a model of its own it brings the fabric up, reads it, terminates it.
// The document (to FILE, else to stdout; with --json inside the report as "snapshot"):
//
//   {"format": "erisc-fabric snapshot", "version": 1, "device_cycle": C,
//    "cluster":  the chips (board, harvesting, MMIO) and every Ethernet connection of the
//                descriptor, with the state of each link the fabric runs on,
//    "mapping":  `mesh map --json`'s: every mesh's devices on their chips, every link's ports,
//    "routing":  per node the dimension-ordered route to every device of its mesh ("EES") and
//                the exit towards every other mesh; per router the exit table it holds (read
//                from its L1),
//    "routers":  every router's status, counters and buffers: per sender channel its slots,
//                packets sent, taken by the peer, completed, and from those the packets on the
//                link or waiting in the peer's receiver buffer (sent - taken) and being
//                delivered there (taken - completed); per receiver channel (virtual channel)
//                its slots and packets taken; what it holds in all (RouterControlReport::held)}
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_snapshot_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
