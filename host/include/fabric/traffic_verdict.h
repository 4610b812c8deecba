// The verdict on traffic run over a fabric that is up, 1D (fabric_traffic.h) or 2D
// (mesh_traffic.h): what `fabricctl fabric run`, `fabricctl mesh run`, a user program or a test
// decides once the kernels have run. A kernel's timeout from the run's cycle budget, what went
// wrong with a kernel, which failure weighs most, the termination (graceful only when nothing went
// wrong) and the routers' counters after it. Nothing is printed: every problem is one line that
// the caller collects, in the order found.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/fabric_runner.h"
#include "fabric/mesh_traffic.h"
#include "hal/arch_map.h"

namespace fabric {

// The per-wait timeout in microseconds a traffic kernel gets (FabricTrafficOptions::timeout_us,
// MeshTrafficOptions::timeout_us) from a run's budget of `budget_cycles` device cycles: half the
// budget at the arch's AI clock, at least 1 us and at most 20 ms. A kernel stuck on the fabric
// then gives up while the host still has budget left to read why.
uint32_t traffic_timeout_us(uint64_t budget_cycles, hal::Arch arch);

// What went wrong with the kernel called `name`, one line, or nullopt when it passed:
//   "<name> trapped: <cause> at pc 0x...", "<name> still running after N cycles",
//   "<name> failed: exit E, code C, step S, detail D, hal status H, stuck at 0x..., packets sent P"
//   (exit status not 0 or the mailbox not Done), "<name> sent P packets, expected N".
std::optional<std::string> traffic_problem(std::string_view name, const MeshWorkerOutcome& outcome,
                                           uint32_t expected_packets);

// How a run with problems failed, the weightiest first: a kernel trapped; else a kernel was still
// running when the budget ran out; else the fabric (a kernel's failure, data, counters, routers).
// fabricctl exits 104, 105 and 108 for them.
enum class TrafficFailure { Trapped, Timeout, Fabric };
TrafficFailure traffic_failure(std::span<const MeshWorkerOutcome> outcomes);

// After a graceful termination, the routers' counters over all of them: every packet sent was
// received by the peer, `expect_deliveries` were delivered locally, none was rejected. Appends a
// line per router that rejected packets ("chip C eth E rejected N packets"), then "routers sent S
// packets but received R" (links a drain cut left out) and "routers delivered D packets, expected
// N" where they disagree.
void check_router_counters(std::span<const RouterSnapshot> snaps, uint64_t expect_deliveries,
                           std::vector<std::string>& problems);

// Terminate the fabric within `budget_cycles`: gracefully while `problems` is empty (a router that
// fails it throws, as FabricRunner::terminate does), else immediately, keeping the snapshot taken
// before the stop, which shows where the fabric was when it failed; an immediate termination that
// fails is one more problem, not a throw. The routers' last snapshots, in plan order.
std::vector<RouterSnapshot> terminate_fabric(FabricRunner& runner, uint64_t budget_cycles,
                                             std::vector<std::string>& problems);

// Packets the routers have delivered so far (their status blocks, read now), e.g. for progress.
uint64_t delivered_so_far(FabricRunner& runner);

}  // namespace fabric
