// Faults injected into the model during a run (issue 18 item 8), as `fabricctl fabric run` and
// `mesh run` take them with --fault SPEC:
//
//   link-down:CHIP:ETH@CYCLE[/CYCLES]   the link goes down and stays down, or comes up again
//                                       CYCLES later
//   link-flap:CHIP:ETH@CYCLE/PERIOD     down for PERIOD cycles, up for PERIOD cycles, again and
//                                       again until the run ends
//   link-drop:CHIP:ETH@CYCLE/PPM        from CYCLE on, each frame is corrupted with probability
//                                       PPM / 1e6, in both directions (the link's Go-Back-N
//                                       resends it); drawn from the run's seed: reproducible
//   link-delay:CHIP:ETH@CYCLE/CYCLES    from CYCLE on, CYCLES of extra latency in both directions
//   router-stall:CHIP:ETH@CYCLE/CYCLES  the eth core's RISC frozen at CYCLE, thawed CYCLES later
//   noc-hold:CHIP:X-Y@CYCLE[/CYCLES]    the chip's NOCs stop delivering to core X-Y (a destination
//                                       that never accepts: what is sent to it backs up), for
//                                       good or until CYCLES later
//
// CHIP is the cluster descriptor's chip id and ETH its Ethernet channel; the port must have a link
// in the cluster and its chip must be modeled. X-Y is a core of the chip's SoC descriptor. CYCLE
// counts device cycles from the start of traffic: the device cycle at which the runner released the
// workers (FabricRunner::traffic_start_cycle). Every fault is applied exactly at its cycle
// (SimDevice stops its clock there, see SimDevice::at_cycle) and logged as an AppliedFault.
//
//   std::vector<FaultSpec> specs{parse_fault("link-delay:0:8@5000/300")};
//   FaultInjector faults(sim_device, specs, seed);   // checks every spec against the model
//   faults.on_applied([](const AppliedFault& f) { ... f.describe() ... });
//   runner.on_workers_released([&](uint64_t cycle) { faults.arm(cycle); });
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/coord.h"
#include "fabric/soc_descriptor.h"

namespace fabric {

class SimDevice;

enum class FaultKind : uint8_t { LinkDown, LinkFlap, LinkDrop, LinkDelay, RouterStall, NocHold };

// "link-down", "link-flap", "link-drop", "link-delay", "router-stall", "noc-hold"
std::string_view fault_kind_name(FaultKind kind);
// The kind of that name; nullopt for any other.
std::optional<FaultKind> fault_kind_of(std::string_view name);
// Every kind's name, comma-separated, in the order above (for messages).
std::string fault_kind_names();
// The fault names a core (X-Y, FaultSpec::core), not an eth channel.
constexpr bool fault_on_core(FaultKind kind) {
    return kind == FaultKind::NocHold;
}

// The largest CYCLE, PERIOD or stall CYCLES a spec may give (2^48 cycles, over three days of
// device time at 1 GHz): far beyond any run, and start + CYCLE + PERIOD never overflows.
inline constexpr uint64_t kMaxFaultCycles = uint64_t{1} << 48;
inline constexpr uint32_t kMaxFaultPpm = 1'000'000;

struct FaultSpec {
    FaultKind kind = FaultKind::LinkDown;
    ChipId chip = 0;
    uint32_t eth = 0;  // the link's kinds
    CoreCoord core;    // noc-hold
    uint64_t at = 0;   // traffic cycle
    // flap: PERIOD; drop: PPM; delay, stall, link-down, noc-hold: CYCLES (0: for good)
    uint64_t amount = 0;
    std::string text;  // as written
};

// One spec; Error(BadInput) "fault 'TEXT': ..." naming what is wrong (unknown kind, a missing
// field, a field that is not a number or not a core or out of range, a zero period or stall, PPM
// above 1e6).
FaultSpec parse_fault(std::string_view text);

// Error(BadInput) "fault 'TEXT': ..." if the spec's chip is not in `cluster`, the chip has no eth
// channel ETH (among `soc`'s), the port has no link in the cluster, the chip is not among
// `modeled` (the chips the model holds), or a noc-hold's core is not in `soc`.
void check_fault(const FaultSpec& spec, const ClusterDescriptor& cluster, const SocDescriptor& soc,
                 std::span<const ChipId> modeled);

// One change a fault made to the model.
struct AppliedFault {
    FaultKind kind = FaultKind::LinkDown;
    ChipId chip = 0;
    uint32_t eth = 0;
    CoreCoord core;  // noc-hold
    // What changed beside the kind: "" / "up" (link-down), "down" / "up" (link-flap), "1000 ppm",
    // "+300 cycles", "frozen" / "thawed", "" / "released" (noc-hold).
    std::string change;
    uint64_t device_cycle = 0;
    uint64_t traffic_cycle = 0;  // device_cycle - the start of traffic

    // "link-down chip 0 eth 8 at traffic cycle 5000 (device cycle 123456)",
    // "link-flap chip 0 eth 8 up at traffic cycle 7000 (device cycle 125456)",
    // "noc-hold chip 1 core 1-1 released at traffic cycle 9000 (device cycle 127456)"
    std::string describe() const;
};

// The faults of one run on a SimDevice. Arm it at the start of traffic; each fault then changes
// the model at its cycle (sim::Cluster::link(...).set_up / set_drop_rate / set_extra_delay,
// SimDevice::freeze_core / thaw_core), and every change is logged.
class FaultInjector {
  public:
    // Checks every spec against the device (check_fault). `seed` seeds the drop draws: each
    // direction of each link draws from its own stream derived from (seed, chip, eth, direction).
    FaultInjector(SimDevice& device, std::vector<FaultSpec> faults, uint64_t seed);
    FaultInjector(const FaultInjector&) = delete;  // the device's actions point at this
    FaultInjector& operator=(const FaultInjector&) = delete;

    // Schedule every fault, counting from `traffic_start` (a device cycle). Only the first call
    // arms (later rounds of traffic do not restart the faults' clock).
    void arm(uint64_t traffic_start);
    std::optional<uint64_t> traffic_start() const { return start_; }
    // Called as each change is made (besides the log).
    void on_applied(std::function<void(const AppliedFault&)> sink) { sink_ = std::move(sink); }
    const std::vector<AppliedFault>& log() const { return log_; }
    const std::vector<FaultSpec>& faults() const { return faults_; }
    // What the frame drops did so far, one line per link-drop fault that was applied, from the
    // link's statistics (both directions): "link-drop chip 0 eth 8: 3 frames dropped, 41 resent
    // (seed 5)".
    std::vector<std::string> drop_effects();

  private:
    void schedule(const FaultSpec& f, uint64_t at);
    void schedule_flap(const FaultSpec& f, uint64_t at, bool down);
    void record(const FaultSpec& f, std::string change);
    CoreLocation eth_core(const FaultSpec& f) const;

    SimDevice& device_;
    std::vector<FaultSpec> faults_;
    uint64_t seed_;
    std::optional<uint64_t> start_;
    std::function<void(const AppliedFault&)> sink_;
    std::vector<AppliedFault> log_;
};

}  // namespace fabric
