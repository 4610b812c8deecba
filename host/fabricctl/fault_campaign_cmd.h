// fabricctl fault campaign: many seeded runs of `fabric run` / `mesh run` with faults injected
// into the model (fabric/fault_campaign.h), each checked for the fabric's promise: it ends within
// its cycle budget, and every packet is delivered exactly once or reported dropped by the router
// that dropped it.
//
//   fabricctl fault campaign [--iterations N] [--first I] [--seed S] [--topology LIST]
//                            [--faults LIST] [--jobs J]
//                            [--wall-limit-s SECONDS] [--descriptors DIR] [--reports]
//                            [--progress-every N] [--json]
//
// Iteration i of campaign S is drawn from (S, i) alone and runs as one fabricctl command line (a
// child process of this one). A failing iteration is printed at once: its index and seed, what
// was drawn, every broken promise and the command that replays it. The summary follows:
// iterations per topology and fault kind, packets sent, delivered and dropped, wall time and
// iterations per second. Exit 0 when every iteration kept the promise, 108 when one did not;
// bad options are 100 (usage) or 101 (bad input).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_fault_campaign_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
