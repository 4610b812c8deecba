// What `fabric run` and `mesh run` print alike once their kernels are planned
// (fabric/fabric_traffic.h, fabric/mesh_traffic.h): the exit code of a failure, a router as JSON.
// The verdict itself (a kernel's problem, the counters, termination) is fabric/traffic_verdict.h.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "fabric/device.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/launch.h"
#include "fabric/mesh_traffic.h"
#include "fabric/traffic_verdict.h"
#include "hal/arch_map.h"
#include "protocol/test_kernels.h"

namespace fabricctl {

// Default cycle budget of a fabric command: bring-up, traffic and termination together.
inline constexpr uint64_t kDefaultFabricMaxCycles = 50'000'000;
inline constexpr uint32_t kMaxPackets = 1'000'000;

// A kernel's launch result and mailbox (the same for 1D and 2D traffic).
using TrafficOutcome = fabric::MeshWorkerOutcome;

// The exit code of a failed traffic command: 104 if a kernel trapped, else 105 if one was still
// running at the budget, else 108.
int traffic_failure_code(std::span<const TrafficOutcome> outcomes);

// One router as JSON: the 1D fields, and for a 2D router its mesh node, direction and plane.
// Bytes are packets x `packet_bytes`; B/cycle over `cycles` (0: none).
nlohmann::json router_json(const fabric::RouterSnapshot& s, const fabric::RouterPlacement& p,
                           uint32_t packet_bytes, uint64_t cycles);

double bytes_per_cycle(uint64_t bytes, uint64_t cycles);

}  // namespace fabricctl
