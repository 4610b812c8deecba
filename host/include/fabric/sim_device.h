// SimDevice: the Device backend over the Verilated SoC model (sim::Tile). Tiles are created on
// first use, one per core the program touches: eth cores get eth_l1_size of L1, workers
// worker_l1_size. Other core types (DRAM, PCIe, ARC, routers) are not modelled yet and accesses to
// them fail with a clear error.
//
// Besides Device, it offers the extras only a simulator has: a console per core, waveform traces.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "fabric/device.h"
#include "fabric/soc_descriptor.h"

namespace sim {
class Tile;
}

namespace fabric {

class SimDevice final : public Device {
  public:
    // `arch` must match the descriptor's arch_name (Error(BadInput) otherwise).
    SimDevice(SocDescriptor soc, hal::Arch arch, uint32_t chips = 1);
    ~SimDevice() override;

    std::string description() const override;
    uint32_t chip_count() const override { return chips_; }
    const SocDescriptor& soc(ChipId chip) const override;

    void write(const CoreLocation& core, uint64_t addr, std::span<const uint8_t> data) override;
    void read(const CoreLocation& core, uint64_t addr, std::span<uint8_t> data) override;
    void write32(const CoreLocation& core, uint64_t addr, uint32_t value) override;
    uint32_t read32(const CoreLocation& core, uint64_t addr) override;

    // Steps every instantiated tile in lockstep. Stops early (and returns the cycles actually
    // run) when no tile is running any more.
    uint64_t advance(uint64_t cycles) override;
    uint64_t cycles() const override { return cycles_; }
    CoreStatus core_status(const CoreLocation& core) override;

    // --- simulator extras ---
    // Called for every console character any core prints (in addition to buffering it).
    void set_console_sink(std::function<void(const CoreLocation&, char)> sink);
    // Everything a core has printed so far.
    std::string console(const CoreLocation& core) const;
    // Waveform of one core's tile to an FST file. Error(Unsupported) if the model has no tracing.
    void trace_to(const CoreLocation& core, const std::string& fst_path);
    // The tile of a core, created if needed (for tests and tools that poke the model directly).
    sim::Tile& tile(const CoreLocation& core);
    size_t tile_count() const { return tiles_.size(); }

  private:
    struct TileSlot;
    TileSlot& slot(const CoreLocation& core);
    uint32_t addr32(const CoreLocation& core, uint64_t addr, size_t len) const;

    SocDescriptor soc_;
    hal::Arch arch_;
    uint32_t chips_;
    uint64_t cycles_ = 0;
    std::function<void(const CoreLocation&, char)> sink_;
    std::map<CoreLocation, std::unique_ptr<TileSlot>> tiles_;
};

}  // namespace fabric
