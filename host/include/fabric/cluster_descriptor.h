// Cluster descriptor: which chips a system has and how their Ethernet ports are wired, in the
// tt-umd YAML format (reference host-and-pcie.md §4.2):
//
//   arch: {0: wormhole_b0, 1: wormhole_b0}     # chip id -> arch (Wormhole, wormhole_b0, ...)
//   chips: {0: [0, 0, 0, 0], 1: [1, 0, 0, 0]}  # optional: WH ethernet coordinates x, y, rack,
//   shelf ethernet_connections:                      # [[{chip, chan}, {chip, chan}(,
//   {routing_enabled})]]
//     - [{chip: 0, chan: 8}, {chip: 1, chan: 0}, {routing_enabled: true}]
//   chips_with_mmio: [{0: 0}]                  # chip id -> PCIe device index
//   harvesting: {0: {noc_translation: true, harvest_mask: 65, dram_harvesting_mask: 0, ...}}
//   boards: [[{board_id: 7}, {board_type: n300}, {chips: [0, 1]}]]
//
// Loading validates the file completely: chip ids are 0..N-1 (N <= kMaxClusterChips), one arch
// for all chips, every connection names known chips and channels that exist on the arch, no port
// is used twice, harvest masks fit the arch, and every chip-keyed map names known chips once.
// The top-level keys are closed: tt-umd's schema (docs/yaml_schemas/cluster_descriptor.yaml) plus
// what its writer emits (chip_to_boardtype); anything else is refused by name. Keys the host does
// not use (chip_pci_bdfs, io_device_type, cluster_id,
// ethernet_connections_to_remote_devices) are checked for their shape and otherwise ignored.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/coord.h"
#include "fabric/input_file.h"
#include "fabric/soc_descriptor.h"
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

// A chip's `harvesting` entry: what is fused off. Bit i of harvest_mask is the Tensix line
// tensix_harvest_lines(arch)[i] (rows on Wormhole, columns on Blackhole).
struct ChipHarvesting {
    bool noc_translation = false;
    uint32_t tensix_mask = 0;  // harvest_mask
    uint32_t dram_mask = 0;
    uint32_t eth_mask = 0;
    uint32_t pcie_mask = 0;
    uint32_t l2cpu_mask = 0;
    bool operator==(const ChipHarvesting&) const = default;
};

// A chip's board (`boards`): for messages that should name the hardware a user can find.
struct BoardInfo {
    uint64_t id = 0;
    std::string type;  // "n300", "p300", "ubb", ...
};

// Where a chip sits, as MGD pinnings name it: a Galaxy tray (1..4, from the PCI bus id) and the
// ASIC's location on it; on other systems tray = chip id + 1 and location `asic_locations` or 0
// (tt-metal's convention for PCIe boards).
struct AsicPosition {
    uint32_t tray_id = 0;
    uint32_t asic_location = 0;
    auto operator<=>(const AsicPosition&) const = default;
};

// A problem in the wiring found by ClusterDescriptor::lint.
enum class ClusterLintKind {
    DuplicateConnection,   // the same two ports listed again
    AsymmetricConnection,  // a port listed with two different peers
    SelfConnection,        // a link from a chip to itself (same port, or two ports of one chip)
    UnknownChip,           // an end names a chip the descriptor's `arch` does not list
    ChannelOutOfRange,     // an end names a channel the arch does not have
};
std::string_view cluster_lint_kind_name(ClusterLintKind kind);  // "duplicate_connection", ...

struct ClusterLintFinding {
    ClusterLintKind kind;
    uint32_t line = 0;    // of the connection entry in the file (1-based)
    std::string field;    // "ethernet_connections[4][1]"
    std::string message;  // one line, without source and field
};

struct ClusterLintReport;

class ClusterDescriptor {
  public:
    // Load and validate. Error(BadInput) if the file cannot be read, Error(BadDescriptor) naming
    // the file, line and field for anything invalid.
    static ClusterDescriptor load_file(const std::string& path);
    static ClusterDescriptor parse(std::string_view yaml_text, const std::string& source);
    // Every wiring problem of a descriptor instead of the first: duplicate and asymmetric
    // entries, self-connections, unknown chips and out-of-range channels, each with its line, in
    // file order; and the descriptor without the offending entries (of a duplicate or asymmetric
    // pair the first is kept). Anything else wrong with the file is thrown as parse() would.
    static ClusterLintReport lint(std::string_view yaml_text, const std::string& source);
    static ClusterLintReport lint_file(const std::string& path);
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
    // The chip's `harvesting` entry; nullopt when the descriptor has none for it.
    std::optional<ChipHarvesting> harvesting(ChipId chip) const;
    // Tensix harvest mask of every chip (0 where the descriptor gives none), in chip order.
    std::vector<uint32_t> tensix_harvest_masks() const;
    // The board the chip is on (`boards`), if the descriptor says.
    std::optional<BoardInfo> board(ChipId chip) const;
    // `asic_locations`: the chip's position on its board (or Galaxy tray), if given.
    std::optional<uint32_t> asic_location(ChipId chip) const;
    // `chip_unique_ids`, if given.
    std::optional<uint64_t> unique_id(ChipId chip) const;
    // `chip_to_bus_id`: the chip's PCI bus, if given.
    std::optional<uint32_t> bus_id(ChipId chip) const;
    // The chip's tray and ASIC location (AsicPosition); nullopt for a Galaxy chip whose bus id the
    // descriptor does not give (older files).
    std::optional<AsicPosition> asic_position(ChipId chip) const;

  private:
    ClusterDescriptor() = default;

    std::string source_;
    hal::Arch arch_ = hal::Arch::WormholeB0;
    uint32_t chip_count_ = 0;
    std::vector<EthConnection> connections_;
    std::vector<std::pair<ChipId, uint32_t>> mmio_chips_;
    std::map<ChipId, EthCoord> coords_;
    std::map<EthPortRef, EthPortRef> peers_;  // both directions of every connection
    std::map<ChipId, ChipHarvesting> harvesting_;
    std::vector<BoardInfo> boards_;
    std::map<ChipId, size_t> board_of_;  // chip -> boards_ index
    std::map<ChipId, uint32_t> asic_locations_;
    std::map<ChipId, uint64_t> unique_ids_;
    std::map<ChipId, uint32_t> bus_ids_;

    friend class ClusterDescriptorParser;
};

struct ClusterLintReport {
    ClusterDescriptor usable;
    std::vector<ClusterLintFinding> findings;
};

// Each chip's SoC descriptor: `soc` with the chip's Tensix harvesting from the cluster applied
// (SocDescriptor::harvested), one copy per distinct harvest mask. What places workers must use
// it, so no worker lands on a harvested row or column; callable as a mesh_traffic.h ChipSocs
// through std::cref. Not copyable (it hands out references into itself); movable.
class HarvestedSocs {
  public:
    // Error(BadInput) if the cluster and the descriptor are of different arches.
    HarvestedSocs(const SocDescriptor& soc, const ClusterDescriptor& cluster);
    HarvestedSocs(const HarvestedSocs&) = delete;
    HarvestedSocs& operator=(const HarvestedSocs&) = delete;
    HarvestedSocs(HarvestedSocs&&) = default;
    HarvestedSocs& operator=(HarvestedSocs&&) = default;

    // Error(BadInput) for a chip the cluster does not have.
    const SocDescriptor& operator()(ChipId chip) const;
    uint32_t chip_count() const { return static_cast<uint32_t>(per_chip_.size()); }

  private:
    std::map<uint32_t, SocDescriptor> by_mask_;  // map nodes stay put when the map moves
    std::vector<const SocDescriptor*> per_chip_;
    std::string cluster_source_;
};

}  // namespace fabric
