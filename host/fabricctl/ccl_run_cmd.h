// fabricctl ccl run / ccl mesh-run: a collective as worker kernels (fabric/ccl_plan.h) round
// rings of a cluster's chips, in the model.
//
//   fabricctl ccl run --cluster FILE --topology ring [--chips LIST] (the options of `fabric run`)
//       --op all-gather|reduce-scatter|all-reduce --bytes N [--workers W] [--bidirectional]
//       [--mux [--mux-slots S]] [--worker-elf ELF] [--mux-elf ELF] [--json]
//   fabricctl ccl mesh-run (the options of `mesh run`: --cluster, --mesh-graph, --planes, ...)
//       [--mesh M] [--plane P] and the same collective options
//
// `run` goes round the 1D ring's chips; `mesh-run` round a ring through every chip of mesh M that
// needs no wrap link (ccl_mesh_cycle). Brings the fabric up, runs W rings a direction (both ways
// with --bidirectional), each on its own worker core of every chip and over its own N / rings
// bytes a rank (a reducing op's input is that per rank, int32 elements summed by the workers);
// with --mux a chip's rings of one direction share a fabric mux (S slots a channel). Terminates,
// checks every rank's whole output against the host's computation, every count each rank reports
// and every mux's forwarded packets, and prints the algorithm, each ring and rank, and the bus
// bandwidth (NCCL's count: phases x (ranks - 1) x N over the slowest rank's cycles, an all-reduce
// two phases). A kernel that traps is 104, one still running at the budget 105, any other failure
// 108; a fabric with no such ring, or a size that does not fit, 101.
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_ccl_run_command(CLI::App& app, bool& as_json);
CliCommandPtr add_ccl_mesh_run_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
