// SimKmdPort: the tt-kmd driver, simulated, over the Verilated model (a SimDevice's sim::Cluster).
// Each PCIe-attached (MMIO) chip of the cluster descriptor is a device node: ordinal = the chip's
// PCI device index from chips_with_mmio. Its ioctls take and fill the same ABI structs as the
// kernel driver (fabric/kmd_abi.h) with the driver's checks (exact window sizes, -ENOMEM when no
// window is free, window ownership per open file, alignment and field ranges of a configuration),
// and CONFIGURE_TLB programs the model's PCIe tile registers (sim/model/pcie_tlb.h) with the arch's
// encoding. mmap of a TLB window returns a mapping whose accesses the model's PCIe tile routes to
// the target core; mmap of BAR0 reaches the TLB config registers and the BAR0 windows directly.
// LOCK_CTL: 64 locks per device, one holder each, a file's released when it closes (no blocking
// acquire). Opening the port powers the model on as a board (SimDevice::power_on_as_device).
//
// Everything above it is PcieDevice, unchanged: only this file stands in for the system calls.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "fabric/kmd_port.h"

namespace sim {
class PcieTlb;
}

namespace fabric {

class SimDevice;

class SimKmdPort final : public KmdPort {
  public:
    // The model behind the port. Its cluster descriptor's chips_with_mmio become the device nodes.
    // `sim_control` false hides the model's sim-control block as silicon has none: PcieDevice then
    // learns a core's run state and console from the firmware's exit mailbox only.
    explicit SimKmdPort(std::shared_ptr<SimDevice> model, bool sim_control = true);
    ~SimKmdPort() override;

    std::string description() const override;
    std::vector<uint32_t> list_devices() override;
    std::unique_ptr<KmdFile> open(uint32_t ordinal) override;
    uint64_t advance(uint64_t cycles, uint32_t clock_mhz) override;
    uint64_t cycles(uint32_t clock_mhz) const override;
    bool has_sim_control() const override { return sim_control_; }
    uint64_t step(uint64_t cycles, uint32_t clock_mhz) override;

    SimDevice& model() { return *model_; }
    // The PCIe tile of the chip behind device `ordinal` (for tests: read back the raw registers).
    sim::PcieTlb& pcie_tlb(uint32_t ordinal);
    // Windows currently allocated on device `ordinal` by any open file.
    uint32_t windows_in_use(uint32_t ordinal) const;
    // Successful CONFIGURE_TLB calls so far, all devices (tests check window reuse).
    uint64_t configure_calls() const { return configure_calls_; }

    struct Node;  // one device node (sim_kmd_port.cpp)

  private:
    Node& node(uint32_t ordinal);
    const Node& node(uint32_t ordinal) const;
    friend class SimKmdFile;

    std::shared_ptr<SimDevice> model_;
    std::vector<std::unique_ptr<Node>> nodes_;
    uint64_t configure_calls_ = 0;
    bool sim_control_ = true;
};

}  // namespace fabric
