// SimDevice: the Device backend over the simulator (sim::Cluster of sim::Chip, sim/README.md).
// One chip, or the chips and Ethernet links of a cluster descriptor; every chip uses the same SoC
// descriptor, harvested as the cluster descriptor says (SocDescriptor::harvested with the chip's
// harvest_mask): a harvested worker is not modeled, and touching it is Error(Device), as on
// silicon where that tile is off. Tiles are created on first use, one per core the program
// touches: eth cores get eth_l1_size of L1, workers worker_l1_size. Other core types (DRAM, PCIe,
// ARC, routers) are not cores the host can address and accesses to them fail with a clear error.
//
// Wormhole eth cores boot like silicon when a base firmware image is given: the model loads it,
// writes the link-training results (connected or not, from the cluster descriptor) and releases
// the core at PC 0; launch() then sees LaunchMethod::LaunchFlag and starts applications through the
// launch flag instead of the reset PC. Without the image every core starts bare metal (as before).
//
// Besides Device, it offers the extras only a simulator has: a console per core, waveform traces,
// stepping regardless of activity, the underlying cluster.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/soc_descriptor.h"

namespace sim {
class Chip;
class Tile;
class Cluster;
}  // namespace sim

namespace fabric {

struct SimDeviceOptions {
    // Chips, links and harvesting (default: one chip, no links). Its arch must be the SoC
    // descriptor's, and every connected channel must exist in the SoC descriptor.
    std::optional<ClusterDescriptor> cluster;
    // Wormhole only: base firmware every eth core boots when first used (base_firmware_placement).
    // Ignored for Blackhole, which has no base firmware in the model.
    std::optional<ElfImage> wh_base_firmware;
    // Only these chips of the cluster are modeled (default: every chip): a run that uses a few
    // chips of a large cluster pays only for those, since the model keeps about 3.6 MB of NOC
    // state per chip. A link to a chip that is not modeled is down (its port never trains);
    // touching such a chip is Error(BadInput).
    std::optional<std::vector<ChipId>> modeled_chips = std::nullopt;
    // Threads stepping the model (sim::ClusterOptions::threads: the chips in that many partitions,
    // the same results as one thread). At most one per modeled chip is used.
    uint32_t threads = 1;
};

class SimDevice final : public Device {
  public:
    // `chips` unconnected chips, bare metal. `arch` must match the descriptor's arch_name
    // (Error(BadInput) otherwise).
    SimDevice(SocDescriptor soc, hal::Arch arch, uint32_t chips = 1);
    // Error(BadInput) for an arch mismatch or a connection to a channel the SoC descriptor lacks,
    // Error(BadElf) for a base firmware image outside its region.
    SimDevice(SocDescriptor soc, hal::Arch arch, SimDeviceOptions options);
    ~SimDevice() override;

    std::string description() const override;
    uint32_t chip_count() const override;
    // The chip's descriptor: the device's SoC descriptor with the chip's harvesting applied.
    const SocDescriptor& soc(ChipId chip) const override;

    void write(const CoreLocation& core, uint64_t addr, std::span<const uint8_t> data) override;
    void read(const CoreLocation& core, uint64_t addr, std::span<uint8_t> data) override;
    void write32(const CoreLocation& core, uint64_t addr, uint32_t value) override;
    uint32_t read32(const CoreLocation& core, uint64_t addr) override;

    // Steps every chip and link in lockstep. Stops early (and returns the cycles actually run)
    // when no core is busy any more: running and not an idle base firmware (one whose launch flag
    // is 0 just supervises, as it would forever).
    uint64_t advance(uint64_t cycles) override;
    uint64_t cycles() const override;
    CoreStatus core_status(const CoreLocation& core) override;
    // LaunchFlag for a WH eth core booted with the base firmware, else ResetPc.
    LaunchMethod launch_method(const CoreLocation& core) override;

    // --- simulator extras ---
    // Exactly `cycles` cycles, whether anything is busy or not (e.g. to watch a heartbeat).
    void step(uint64_t cycles);
    // Called for every console character any core prints (in addition to buffering it); one call
    // at a time, but with threads > 1 characters of cores on different threads may interleave.
    void set_console_sink(std::function<void(const CoreLocation&, char)> sink);
    // Everything a core has printed so far.
    std::string console(const CoreLocation& core) const;
    // Waveform of one core's tile to an FST file. Error(Unsupported) if the model has no tracing.
    void trace_to(const CoreLocation& core, const std::string& fst_path);
    // The tile of a core, created if needed (for tests and tools that poke the model directly).
    sim::Tile& tile(const CoreLocation& core);
    // Power the cluster on as a board is when the host opens it (SimKmdPort does this): every
    // connected eth core runs its base firmware from the start (Wormhole), and the cores of chips
    // that are not PCIe-attached come into being when the NoC first reaches them (the host can
    // only reach them through it; sim::Chip::create_cores_on_noc_access).
    void power_on_as_device();
    size_t tile_count() const;
    const ClusterDescriptor& cluster_descriptor() const { return cluster_desc_; }
    bool has_base_firmware() const { return base_fw_; }
    // The model itself: chips, links (fault hooks), run reports. Its chip indices are the
    // device's chip ids unless SimDeviceOptions::modeled_chips picked a subset (model_chip_index).
    sim::Cluster& cluster() { return *cluster_; }
    // The model's index of a chip; nullopt for a chip that is not modeled.
    std::optional<uint32_t> model_chip_index(ChipId chip) const;

    // Timed actions: run `action` when the device clock reaches `at_cycle` (a cycle already
    // passed: at once, or at the end of the action being applied). advance() and step() stop the
    // clock at that cycle to apply it, so it happens exactly then, between two cycles, whatever
    // step sizes the caller uses. Actions due at the same cycle run in the order they were
    // scheduled; an action may schedule more (e.g. the next phase of a flapping link). What a
    // fault plan (fault_plan.h) and freeze_core schedule.
    void at_cycle(uint64_t at_cycle, std::function<void()> action);
    // The device cycle of the earliest scheduled action; nullopt when there is none.
    std::optional<uint64_t> next_action_cycle() const;

    // Fault hook: freeze a core (sim::Chip::set_frozen) at device cycle `at_cycle` (default: now;
    // a cycle already passed also means now), a timed action: its RISC stops executing while the
    // rest of the cluster runs, so its firmware stops making progress (its heartbeat stops)
    // without exiting or trapping, the way a hung kernel looks on silicon. A later call for the
    // same core replaces a pending freeze. A frozen running core still counts as busy.
    // Error(BadInput) for a core the model does not have.
    void freeze_core(const CoreLocation& core, std::optional<uint64_t> at_cycle = std::nullopt);
    // Undo freeze_core (also a pending one): the core continues where it stopped.
    void thaw_core(const CoreLocation& core);
    bool core_frozen(const CoreLocation& core);
    // Fault hook: the chip's NOCs stop (true) or start again (false) delivering to `core`
    // (sim::noc::Network::hold_ejection): what is sent to it backs up, a destination that never
    // accepts. Error(BadInput) for a chip the model does not have or a core outside its grid.
    void hold_noc_ejection(const CoreLocation& core, bool hold);
    // The chips the model holds (every chip unless SimDeviceOptions::modeled_chips), in order.
    const std::vector<ChipId>& modeled_chips() const { return modeled_; }

  private:
    void choose_modeled_chips(const std::optional<std::vector<ChipId>>& chips);
    // The model of a chip (Error(BadInput) if it is not modeled).
    sim::Chip& model_chip(ChipId chip) const;
    void check_core(const CoreLocation& core) const;
    uint32_t addr32(const CoreLocation& core, uint64_t addr, size_t len) const;
    void tile_created(const CoreLocation& core);
    // Run `cycles` (while some core is busy, or all of them), stopping the clock at every
    // scheduled action to apply it; returns the cycles run.
    uint64_t run_scheduled(uint64_t cycles, bool only_while_busy);
    // Every action due at the current cycle, including those they schedule for it.
    void apply_due_actions();
    void cancel_pending_freeze(const CoreLocation& core);

    SocDescriptor soc_;
    hal::Arch arch_;
    std::optional<HarvestedSocs> chip_socs_;  // per chip, the cluster's harvesting applied
    std::vector<std::optional<uint32_t>> model_index_;  // per chip: its index in the model
    std::vector<ChipId> modeled_;                       // model index -> chip
    ClusterDescriptor cluster_desc_;
    bool base_fw_ = false;
    std::unique_ptr<sim::Cluster> cluster_;
    std::function<void(const CoreLocation&, char)> sink_;
    std::mutex sink_mutex_;  // cores on several threads print (SimDeviceOptions::threads)
    std::map<CoreLocation, std::string> consoles_;
    struct TimedAction {
        std::optional<CoreLocation> freezes;  // freeze_core's, so that it can be replaced
        std::function<void()> apply;
    };
    std::multimap<uint64_t, TimedAction> schedule_;  // device cycle -> action, in schedule order
    bool applying_ = false;                          // inside apply_due_actions
};

}  // namespace fabric
