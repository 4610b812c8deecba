// Cluster descriptor: which chips a system has and how their Ethernet ports are wired, in the
// tt-umd YAML format (reference host-and-pcie.md §4.2):
//
//   arch: {0: wormhole_b0, 1: wormhole_b0}            # chip id -> arch (Wormhole, wormhole_b0,
//   ...) chips: {0: [0, 0, 0, 0], 1: [1, 0, 0, 0]}         # optional: WH ethernet coordinates x,
//   y, rack, shelf ethernet_connections:                              # [[{chip, chan}, {chip,
//   chan}(, {routing_enabled})]]
//     - [{chip: 0, chan: 8}, {chip: 1, chan: 0}, {routing_enabled: true}]
//   chips_with_mmio: [{0: 0}]                          # chip id -> PCIe device index
//
// Loading validates the file completely: chip ids are 0..N-1, one arch for all chips, every
// connection names known chips and channels that exist on the arch, and no port is used twice.
// Other tt-umd keys (harvesting, boards, chip_unique_ids, ethernet_connections_to_remote_devices,
// io_device_type, chip_to_bus_id, asic_locations, chip_pci_bdfs) are accepted and ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/coord.h"
#include "hal/arch_map.h"

namespace fabric {

// Ethernet channels per chip of an arch (WH 16, BH 14): the range a descriptor's `chan` must lie
// in.
uint32_t arch_eth_channels(hal::Arch arch);

struct EthPortRef {
    ChipId chip = 0;
    uint32_t chan = 0;
    auto operator<=>(const EthPortRef&) const = default;
    std::string str() const;  // "chip 0 chan 8"
};

struct EthConnection {
    EthPortRef a;
    EthPortRef b;
    std::optional<bool> routing_enabled;
};

// WH Ethernet coordinate of a chip: position in the board mesh, rack and shelf.
struct EthCoord {
    uint32_t x = 0;
    uint32_t y = 0;
    uint32_t rack = 0;
    uint32_t shelf = 0;
};

class ClusterDescriptor {
  public:
    // Load and validate. Error(BadInput) if the file cannot be read, Error(BadDescriptor) naming
    // the file, line and field for anything invalid.
    static ClusterDescriptor load_file(const std::string& path);
    static ClusterDescriptor parse(std::string_view yaml_text, const std::string& source);
    // A cluster of `chips` unconnected chips (what a run without a descriptor uses).
    static ClusterDescriptor unconnected(hal::Arch arch, uint32_t chips);

    const std::string& source() const { return source_; }
    hal::Arch arch() const { return arch_; }
    uint32_t chip_count() const { return chip_count_; }
    const std::vector<EthConnection>& connections() const { return connections_; }
    // Chips with a PCIe connection to the host, with their PCIe device index.
    const std::vector<std::pair<ChipId, uint32_t>>& mmio_chips() const { return mmio_chips_; }
    bool is_mmio(ChipId chip) const;
    std::optional<EthCoord> eth_coord(ChipId chip) const;
    // The port at the other end of (chip, chan); nullopt if that port is not connected.
    std::optional<EthPortRef> peer(EthPortRef port) const;
    // Connected channels of one chip, ascending.
    std::vector<uint32_t> connected_channels(ChipId chip) const;

  private:
    ClusterDescriptor() = default;

    std::string source_;
    hal::Arch arch_ = hal::Arch::WormholeB0;
    uint32_t chip_count_ = 0;
    std::vector<EthConnection> connections_;
    std::vector<std::pair<ChipId, uint32_t>> mmio_chips_;
    std::vector<std::optional<EthCoord>> coords_;

    friend class ClusterDescriptorParser;
};

}  // namespace fabric
