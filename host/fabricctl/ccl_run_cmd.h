// fabricctl ccl run: a collective as worker kernels (fabric/ccl_plan.h) on the 1D ring of a
// cluster, in the model.
//
//   fabricctl ccl run --cluster FILE --topology ring [--chips LIST] (the options of `fabric run`)
//       --op all-gather|reduce-scatter|all-reduce --bytes N [--worker-elf ELF] [--json]
//
// Brings the ring up, runs one rank of the collective (the ccl_ring kernel) on the first worker
// core of every chip (N bytes: a rank's share of the output; a reducing op's input is N bytes per
// rank, int32 elements summed by the workers), terminates, checks every rank's whole output
// against the host's computation and every count each rank reports, and prints the algorithm,
// each rank and the bus bandwidth (NCCL's count: phases x (ranks - 1) x N over the slowest rank's
// cycles, an all-reduce two phases). A kernel that traps is 104, one still running at the budget
// 105, any other failure 108; a fabric that is not a ring, or a size that does not fit, 101.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_ccl_run_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
