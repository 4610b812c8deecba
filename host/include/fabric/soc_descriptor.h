// SoC descriptor: the core grid of one chip, in the tt-umd YAML format users already have
// (reference: host-and-pcie.md §4.1). Loading validates the file completely; a SocDescriptor that
// exists is consistent: every coordinate is inside the grid and belongs to exactly one core type.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/coord.h"
#include "hal/arch_map.h"

namespace fabric {

enum class CoreType {
    Worker,  // functional_workers (Tensix)
    Eth,     // eth: Ethernet cores, list index = channel
    Dram,    // dram: ports of the DRAM channels
    Pcie,
    Arc,
    RouterOnly,       // router_only: NOC routers without a core
    Security,         // security (Blackhole)
    L2cpu,            // l2cpu (Blackhole)
    HarvestedWorker,  // harvested_workers, or workers of a harvested row / column (harvested())
};

// The descriptor key of a core type ("functional_workers", "eth", ...).
std::string_view core_type_name(CoreType t);

// Arch from a descriptor or command-line spelling: WORMHOLE_B0, wormhole_b0, BLACKHOLE, blackhole.
std::optional<hal::Arch> parse_arch(std::string_view name);
// Canonical lower-case arch name ("wormhole_b0", "blackhole").
std::string_view arch_name(hal::Arch arch);

// The Tensix line each bit of a harvest mask disables (reference host-and-pcie.md §3): bit i is
// the NOC0 row y = lines[i] on Wormhole, the NOC0 column x = lines[i] on Blackhole.
std::span<const uint32_t> tensix_harvest_lines(hal::Arch arch);

// Largest worker (Tensix) L1 of either arch: 1.5 MiB (tt-umd's Wormhole descriptor exposes 1464 KiB
// of it).
inline constexpr uint32_t kMaxWorkerL1Size = 1536u << 10;
// Largest DRAM bank a descriptor may declare: the 36-bit NOC address space of a Wormhole DRAM
// core (real banks: 2 GiB on Wormhole, 4 GiB on Blackhole).
inline constexpr uint64_t kMaxDramBankSize = uint64_t{1} << 36;

class SocDescriptor {
  public:
    // Load and validate a descriptor file. Throws Error(BadInput) if the file cannot be read and
    // Error(BadDescriptor) naming the file, line and field for anything invalid.
    static SocDescriptor load_file(const std::string& path);
    // Same, from text; `source` names it in messages.
    static SocDescriptor parse(std::string_view yaml_text, const std::string& source);

    const std::string& source() const { return source_; }
    hal::Arch arch() const { return arch_; }
    uint32_t grid_x() const { return grid_x_; }
    uint32_t grid_y() const { return grid_y_; }
    uint32_t worker_l1_size() const { return worker_l1_size_; }
    uint32_t eth_l1_size() const { return eth_l1_size_; }
    uint64_t dram_bank_size() const { return dram_bank_size_; }

    // Core type at (x, y); nullopt for a grid position the descriptor does not list.
    std::optional<CoreType> core_type(CoreCoord c) const;
    // All cores of a type, in descriptor order (for dram: channel by channel).
    const std::vector<CoreCoord>& cores(CoreType t) const;
    size_t count(CoreType t) const { return cores(t).size(); }

    size_t eth_channels() const { return cores(CoreType::Eth).size(); }
    // Eth channel -> core. Throws Error(BadInput) for a channel the chip does not have.
    CoreCoord eth_core(uint32_t channel) const;
    // Core -> eth channel; nullopt if (x, y) is not an eth core.
    std::optional<uint32_t> eth_channel(CoreCoord c) const;

    // DRAM channels, each a list of NOC ports.
    const std::vector<std::vector<CoreCoord>>& dram_channels() const { return dram_channels_; }

    // L1 size of a core with L1 (eth, worker). Throws Error(BadInput) for other cores.
    uint32_t l1_size(CoreCoord c) const;

    // The descriptor of a chip whose Tensix lines in `tensix_mask` are harvested (a cluster
    // descriptor's harvest_mask; tensix_harvest_lines): their workers become HarvestedWorker
    // cores, in the order they were listed. Error(BadInput) for a bit beyond the arch's lines.
    SocDescriptor harvested(uint32_t tensix_mask) const;
    // The harvest mask applied by harvested() (0 for a descriptor as loaded).
    uint32_t tensix_harvest_mask() const { return tensix_harvest_mask_; }

  private:
    SocDescriptor() = default;

    std::string source_;
    hal::Arch arch_ = hal::Arch::WormholeB0;
    uint32_t grid_x_ = 0;
    uint32_t grid_y_ = 0;
    uint32_t worker_l1_size_ = 0;
    uint32_t eth_l1_size_ = 0;
    uint64_t dram_bank_size_ = 0;
    uint32_t tensix_harvest_mask_ = 0;
    std::map<CoreType, std::vector<CoreCoord>> cores_;
    std::vector<std::vector<CoreCoord>> dram_channels_;
    std::map<CoreCoord, CoreType> type_at_;
    std::map<CoreCoord, uint32_t> eth_channel_at_;

    friend class SocDescriptorParser;
};

}  // namespace fabric
