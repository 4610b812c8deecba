// What `devices` and `pcie run` share: the tt-kmd port they talk through (the real driver under a
// device directory, or the simulated driver over a fresh model of an arch, fabric/sim_kmd_port.h).
#pragma once

#include <memory>
#include <string>

#include "fabric/kmd_port.h"

namespace fabricctl {

// The model behind the simulated driver: `arch` (empty: the real driver), optionally the chips
// and links of a cluster descriptor, with or without the Wormhole base firmware.
struct SimSetup {
    std::string arch;
    std::string cluster;
    bool no_base_fw = false;
    uint32_t threads = 0;     // --threads; 0: sim_threads' default
    bool sim_control = true;  // false: no sim-control block, as on silicon (SimKmdPort)
    std::string socket;       // a sim server's socket (default: $FABRIC_SIM_SOCKET)
};

// The real driver's port under `dir`; with `sim.arch`, the simulated one: the sim server's at
// `sim.socket` or $FABRIC_SIM_SOCKET if either is set, else one over a new model
// (open_model_port).
// Error(Unsupported) for a model in a build without the simulator, Error(BadInput) for an unknown
// arch or a cluster of another arch.
std::shared_ptr<fabric::KmdPort> open_kmd_port(const std::string& dir, const SimSetup& sim);
// The simulated driver over a new model of `sim` (what `sim serve` serves).
std::shared_ptr<fabric::KmdPort> open_model_port(const SimSetup& sim);

}  // namespace fabricctl
