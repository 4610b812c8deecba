// The fabric_traffic kernel (firmware/tests/fabric_traffic.cpp) as `fabric run` drives it — where
// its buffers go in a worker's L1, its mailbox, its outcome, the byte check — and what `fabric run`
// and `mesh run` (whose kernels host/include/fabric/mesh_traffic.h plans) share: a kernel's failure
// and exit code, the routers' counters after termination, termination, a router as JSON.
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
#include "hal/arch_map.h"
#include "protocol/test_kernels.h"

namespace fabricctl {

// Default cycle budget of a fabric command: bring-up, traffic and termination together.
inline constexpr uint64_t kDefaultFabricMaxCycles = 50'000'000;
// Per-send positions a worker cycles through (each destination region holds this many packets).
inline constexpr uint32_t kMaxDestSlots = 8;
inline constexpr uint32_t kMaxPackets = 1'000'000;

// A traffic kernel's buffers in its worker core's L1, below the test mailbox.
struct TrafficL1 {
    uint32_t dests;    // FabricDest[kFabricMaxDests]
    uint32_t conn;     // kFabricConnL1Bytes of connection words
    uint32_t src;      // the source buffer: num_dests x dest_slots x packet_bytes
    uint32_t src_end;  // the mailbox
};
TrafficL1 traffic_l1(hal::Arch arch);

// First byte of the receiving worker's regions: past the mailbox, 4 KiB aligned.
uint32_t traffic_sink_base(hal::Arch arch);

// The per-wait timeout a kernel gets from the command's cycle budget: half of it, at most 20 ms.
uint32_t traffic_timeout_us(uint64_t budget_cycles, hal::Arch arch);

// One fabric_traffic kernel: its core, destinations and arguments.
struct TrafficKernel {
    fabric::CoreLocation core;
    std::string name;  // "worker chip 0 core 1-1 (east)", for messages
    std::vector<protocol::FabricDest> dests;
    protocol::FabricTrafficArgs args{};
};

// Write its destinations and its mailbox (run_workers' setup hook).
void load_traffic_kernel(fabric::Device& dev, hal::Arch arch, const TrafficKernel& k);

struct TrafficOutcome {
    fabric::LaunchResult launch;
    protocol::FabricTrafficResults results{};
    uint32_t status = 0;    // TestMailbox::status
    uint32_t stuck_at = 0;  // TestMailbox::stuck_at
};
TrafficOutcome read_traffic_outcome(fabric::Device& dev, hal::Arch arch, const TrafficKernel& k,
                                    const fabric::LaunchResult& launch);

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

}  // namespace fabricctl
