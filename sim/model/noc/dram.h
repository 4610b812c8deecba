// A chip's DRAM channels as NOC endpoints: one SparseMemory per channel (bank size from the SoC
// descriptor), attached as EndpointKind::Other at every NOC port of that channel, so all of a
// channel's ports see the same bytes. Feed it the descriptor's `dram` lists (physical coordinates)
// and `dram_bank_size`.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "noc/memory.h"
#include "noc/network.h"

namespace sim::noc {

class DramChannels {
  public:
    // Throws std::out_of_range if a port lies outside the network's grid.
    DramChannels(Network& net, const std::vector<std::vector<Coord>>& channels, uint64_t bank_size);

    std::size_t size() const { return banks_.size(); }
    SparseMemory& channel(std::size_t i) { return *banks_.at(i); }

  private:
    std::vector<std::unique_ptr<SparseMemory>> banks_;
};

}  // namespace sim::noc
