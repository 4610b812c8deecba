// What `fabric run` and `mesh run` share once their kernels are planned (fabric/fabric_traffic.h,
// fabric/mesh_traffic.h): a kernel's timeout from the command's budget, a kernel's failure and exit
// code, the routers' counters after termination, termination, a router as JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/device.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/launch.h"
#include "fabric/mesh_traffic.h"
#include "hal/arch_map.h"
#include "protocol/test_kernels.h"

namespace fabricctl {

// Default cycle budget of a fabric command: bring-up, traffic and termination together.
inline constexpr uint64_t kDefaultFabricMaxCycles = 50'000'000;
inline constexpr uint32_t kMaxPackets = 1'000'000;

// The per-wait timeout a kernel gets from the command's cycle budget: half of it, at most 20 ms.
uint32_t traffic_timeout_us(uint64_t budget_cycles, hal::Arch arch);

// A kernel's launch result and mailbox (the same for 1D and 2D traffic).
using TrafficOutcome = fabric::MeshWorkerOutcome;
// What went wrong with kernel `name` (trapped, still running, failed, sent too few), or nullopt.
std::optional<std::string> traffic_problem(std::string_view name, const TrafficOutcome& o,
                                           uint32_t expected_packets);

// The exit code of a failed traffic command: 104 if a kernel trapped, else 105 if one was still
// running at the budget, else 108.
int traffic_failure_code(std::span<const TrafficOutcome> outcomes);

// After a graceful termination: every router's packets taken by its peer (sent = received over
// all routers), `expect_deliveries` local deliveries, no rejected packets. Appends to `problems`.
void check_router_counters(std::span<const fabric::RouterSnapshot> snaps,
                           uint64_t expect_deliveries, std::vector<std::string>& problems);

// Terminate gracefully when nothing went wrong, else immediately (a failed immediate
// termination is one more problem). Returns the routers' last snapshots.
std::vector<fabric::RouterSnapshot> terminate_fabric(fabric::FabricRunner& runner,
                                                     uint64_t budget_cycles,
                                                     std::vector<std::string>& problems);

// One router as JSON: the 1D fields, and for a 2D router its mesh node, direction and plane.
// Bytes are packets x `packet_bytes`; B/cycle over `cycles` (0: none).
nlohmann::json router_json(const fabric::RouterSnapshot& s, const fabric::RouterPlacement& p,
                           uint32_t packet_bytes, uint64_t cycles);

double bytes_per_cycle(uint64_t bytes, uint64_t cycles);

// Packets the routers have delivered so far (their status blocks), for the progress line.
uint64_t delivered_so_far(fabric::FabricRunner& runner);

}  // namespace fabricctl
