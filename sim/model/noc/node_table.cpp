#include "noc/node_table.h"

namespace sim::noc {

NodeTable::NodeTable(uint32_t nodes, const hal::ArchMap& arch)
    : stride_(arch.noc_cmd_buf_stride), nodes_(nodes) {
    const uint32_t words = hal::noc::kNumCmdBufs * arch.noc_cmd_buf_stride / 4;
    for (Node& n : nodes_) {
        for (NiuRegs& r : n.regs) {
            r.cmd.assign(words, 0);
        }
    }
}

}  // namespace sim::noc
