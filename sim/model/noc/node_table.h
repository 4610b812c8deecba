// What is attached at each node of the chip: the endpoint that answers NOC requests there (a
// tile's L1 and registers, a DRAM port) and, for a core, its NIU's register file on each NOC (the
// command-buffer words, NOC_CFG and the status counters). Both halves of the NIU, and the register
// port the core writes, work on this table.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "endpoint.h"
#include "hal/arch_map.h"
#include "noc/constants.h"
#include "noc/network.h"

namespace sim::noc {

// The NIU registers of one core for one NOC.
struct NiuRegs {
    std::vector<uint32_t> cmd;  // kNumCmdBufs * stride / 4 words
    std::array<uint32_t, kNumCfgRegs> cfg{};
    std::array<uint32_t, hal::noc::status::kCount> status{};
};

class NodeTable {
  public:
    NodeTable(uint32_t nodes, const hal::ArchMap& arch);

    void attach(uint32_t node, Endpoint* endpoint, EndpointKind kind) {
        nodes_[node].endpoint = endpoint;
        nodes_[node].kind = kind;
    }
    // Gives the node a core: its NIU counters count from now on.
    void add_niu(uint32_t node) { nodes_[node].has_niu = true; }
    bool has_niu(uint32_t node) const { return nodes_[node].has_niu; }
    Endpoint* endpoint(uint32_t node) const { return nodes_[node].endpoint; }
    EndpointKind kind(uint32_t node) const { return nodes_[node].kind; }

    NiuRegs& regs(uint32_t node, uint32_t noc) { return nodes_[node].regs[noc]; }
    const NiuRegs& regs(uint32_t node, uint32_t noc) const { return nodes_[node].regs[noc]; }
    // Command-buffer register at `offset` of buffer `buf`.
    uint32_t cmd_reg(uint32_t node, uint32_t noc, uint32_t buf, uint32_t offset) const {
        return nodes_[node].regs[noc].cmd[(buf * stride_ + offset) / 4];
    }

    // Status counters (hal::noc::status indices); nodes without a core count nothing.
    void count(uint32_t node, uint32_t noc, uint32_t index, uint32_t by = 1) {
        if (nodes_[node].has_niu) {
            nodes_[node].regs[noc].status[index] += by;
        }
    }
    // Per-transaction-ID counters wrap at 8 bits.
    void count_trid(uint32_t node, uint32_t noc, uint32_t index, int32_t by) {
        if (nodes_[node].has_niu) {
            uint32_t& c = nodes_[node].regs[noc].status[index];
            c = (c + static_cast<uint32_t>(by)) & kTridCounterMask;
        }
    }

  private:
    struct Node {
        Endpoint* endpoint = nullptr;
        EndpointKind kind = EndpointKind::Tile;
        bool has_niu = false;
        std::array<NiuRegs, hal::noc::kNumNocs> regs;
    };
    uint32_t stride_;
    std::vector<Node> nodes_;
};

}  // namespace sim::noc
