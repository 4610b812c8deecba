// PcieDevice: the Device backend over tt-kmd (host-and-pcie §1-2), written once over a KmdPort so
// the same code runs against silicon (LinuxKmdPort) and against the model (SimKmdPort).
//
//   chips      One per device node the port lists (or the ordinals asked for), in ordinal order:
//              chip i is the i-th opened node. Chips only reachable over Ethernet (found through
//              the Wormhole base firmware's link results) follow, as remote chips, in the order
//              of their asic ids: they are in the cluster descriptor, and every access to them
//              goes through a gateway, an eth core of a PCIe-attached chip linked to them
//              (fabric/remote_access.h): one whose base firmware is idle (not running a router)
//              when there is one, else the first. Each access holds the gateway's tt-kmd lock
//              (LOCK_CTL, index = its eth channel) so two processes never interleave commands
//              in one gateway's queues; a driver without LOCK_CTL is used unlocked.
//   access     Every read/write goes through a small per-chip cache of TLB windows (ALLOCATE_TLB
//              of one window size, mmap of its UC and WC offsets). A window is CONFIGURE_TLB'd
//              for (x, y, address & ~(size-1)) with strict ordering on NOC0, reused while it fits,
//              and the least recently used one is reprogrammed otherwise; an access crossing a
//              window edge is split. Bulk copies use the WC mapping, 32-bit register accesses
//              the UC mapping. Addresses are checked before anything is written: inside the core's
//              L1 (the SoC descriptor's size) or whole aligned words of the core-local register
//              space (0xFFB00000 and up).
//   reset      Device's default read-modify-write of RISCV_DEBUG_REG_SOFT_RESET_0 through a window.
//   launch     launch.h unchanged: a WH eth core whose ERISC0 is out of reset with the base
//              firmware heartbeat (0xABCD in the upper half of L1 0x1C) is LaunchFlag (load at
//              0x9040, set 0x9004); everything else ResetPc (assert, load, reset PC 0xFFB14000,
//              release), which is also the Blackhole idle-ETH path. A Blackhole core running
//              base firmware takes the mailbox RELEASE_CORE (bh_release_core below).
//   time       advance() asks the port: the model steps, silicon sleeps (cycles / clock MHz).
//   status     core_status: soft-reset bit -> Reset; the model's run-state words when the port has
//              them (KmdPort::has_sim_control); otherwise (silicon) the firmware's exit mailbox
//              (fabric/exit_mailbox.h): Running, or Exited with its code; Unknown when the
//              firmware has set none up.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/device.h"
#include "fabric/kmd_abi.h"
#include "fabric/kmd_port.h"
#include "fabric/remote_access.h"
#include "fabric/soc_descriptor.h"

namespace fabric {

// One device node as it reports itself (GET_DEVICE_INFO, GET_DRIVER_INFO).
struct DiscoveredDevice {
    uint32_t ordinal = 0;
    std::string path;
    uint16_t vendor_id = 0;
    uint16_t device_id = 0;
    std::optional<hal::Arch> arch;  // nullopt: a device this project does not drive
    std::string bdf;                // "0000:01:00.0"
    uint32_t driver_api = 0;
    std::string driver_version;  // "2.4.1"
    std::string error;           // non-empty when the node could not be opened or queried
};

// Open every node the port lists and ask it what it is. Never throws for a device that fails: the
// failure is in DiscoveredDevice::error. An absent /dev/tenstorrent gives an empty list.
std::vector<DiscoveredDevice> discover_devices(KmdPort& port);

struct PcieDeviceOptions {
    std::optional<std::vector<uint32_t>> ordinals;  // default: every node the port lists
    uint64_t window_size = 0;       // 0: 2 MiB (both arches); WH also 1 MiB / 16 MiB
    uint32_t windows_per_chip = 4;  // TLB windows each chip's cache may hold
    uint32_t clock_mhz = 0;         // 0: the arch's busy AICLK (WH 1000, BH 1350)
    // Read each MMIO chip's eth cores for link results (WH base firmware words) to find
    // connections and remote chips. Off: chips and no links.
    bool discover_links = true;
};

class PcieDevice final : public Device {
  public:
    // Throws Error(Device) when the port has no device ("no Tenstorrent device under ..."), a node
    // cannot be opened, or a chip's arch is not the SoC descriptor's; Error(BadInput) for a window
    // size the arch does not have.
    PcieDevice(std::shared_ptr<KmdPort> port, SocDescriptor soc, PcieDeviceOptions options = {});
    ~PcieDevice() override;

    std::string description() const override;
    uint32_t chip_count() const override;
    const SocDescriptor& soc(ChipId chip) const override;

    void write(const CoreLocation& core, uint64_t addr, std::span<const uint8_t> data) override;
    void read(const CoreLocation& core, uint64_t addr, std::span<uint8_t> data) override;
    void write32(const CoreLocation& core, uint64_t addr, uint32_t value) override;
    uint32_t read32(const CoreLocation& core, uint64_t addr) override;

    uint64_t advance(uint64_t cycles) override;
    uint64_t cycles() const override;
    CoreStatus core_status(const CoreLocation& core) override;
    LaunchMethod launch_method(const CoreLocation& core) override;

    // --- PCIe extras ---
    // Blackhole active ETH: ask the base firmware (mailbox at 0x7D000, host slot) to start ERISC0
    // at `l1_addr` (RELEASE_CORE) and wait (bounded) for its DONE reply. Error(Unsupported) on
    // Wormhole, Error(Timeout) when no base firmware answers.
    void bh_release_core(const CoreLocation& core, uint32_t l1_addr);
    // What the chips reported: chips, MMIO ordinals, links found.
    const ClusterDescriptor& cluster_descriptor() const { return *cluster_; }
    const std::vector<DiscoveredDevice>& devices() const { return devices_; }
    uint64_t window_size() const { return window_size_; }
    // CONFIGURE_TLB calls made so far (window reprogramming; tests check reuse).
    uint64_t tlb_configures() const { return configures_; }

  private:
    struct Window;
    struct ChipPort;

    struct RemoteChip;

    // Checks the core exists and is addressed here; true when its chip is PCIe-attached.
    bool check_core(const CoreLocation& core) const;
    ChipPort& mmio_chip(const CoreLocation& core);
    RemoteAccess& remote(const CoreLocation& core);
    // f(RemoteAccess&) with the gateway's lock held (bounded wait for another holder).
    template <typename F>
    void with_remote(const CoreLocation& core, F&& f);
    bool lock_gateway(const CoreLocation& gateway, uint32_t flags);
    bool is_remote(const CoreLocation& core) const { return core.chip >= chips_.size(); }
    void check_range(const CoreLocation& core, uint64_t addr, size_t len) const;
    Window& window_for(ChipPort& cp, const CoreLocation& core, uint64_t base);
    template <typename F>
    void for_each_chunk(const CoreLocation& core, uint64_t addr, size_t len, F&& f);
    void discover_links();

    std::shared_ptr<KmdPort> port_;
    SocDescriptor soc_;
    PcieDeviceOptions options_;
    uint64_t window_size_ = 0;
    uint32_t clock_mhz_ = 0;
    std::vector<DiscoveredDevice> devices_;
    std::vector<std::unique_ptr<ChipPort>> chips_;     // MMIO chips, chip id = index
    std::vector<std::unique_ptr<RemoteChip>> remote_;  // chip id = chips_.size() + index
    std::optional<ClusterDescriptor> cluster_;
    uint64_t configures_ = 0;
    uint64_t use_clock_ = 0;
};

}  // namespace fabric
