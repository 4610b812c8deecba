// fabricctl socket run: a socket over the 2D fabric (fabric/socket_plan.h) between a worker core of
// one chip and a worker core of another, in the model of a cluster (or on silicon).
//
//   fabricctl socket run --cluster FILE [--mesh-graph FILE] (the options of `mesh up`)
//       --from CHIP[:CORE] --to CHIP[:CORE] --bytes N [--page-bytes P] [--ring-pages R]
//       [--consume-delay C] [--close-after K] [--close-from sender|receiver] [--plane N]
//       [--worker-elf ELF] [--json]
//
// Brings the fabric up, runs the socket_stream sender on --from and receiver on --to (CORE as x-y;
// default: the chip's first worker core), terminates, checks every byte the receiver wrote out
// against the stream and every count each end reports, and prints bytes, pages, cycles and B/cycle.
// A kernel that traps is 104, one still running at the budget 105, any other failure 108.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_socket_run_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
