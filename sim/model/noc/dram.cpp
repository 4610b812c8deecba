#include "noc/dram.h"

#include <stdexcept>
#include <string>

namespace sim::noc {

DramChannels::DramChannels(Network& net, const std::vector<std::vector<Coord>>& channels,
                           uint64_t bank_size) {
    for (const auto& ports : channels) {
        for (const Coord& c : ports) {
            if (c.x >= net.grid_x() || c.y >= net.grid_y()) {
                throw std::out_of_range("sim::noc::DramChannels: DRAM port (" +
                                        std::to_string(c.x) + "," + std::to_string(c.y) +
                                        ") is outside the grid");
            }
        }
    }
    for (const auto& ports : channels) {
        banks_.push_back(std::make_unique<SparseMemory>(bank_size));
        for (const Coord& c : ports) {
            net.attach(c.x, c.y, banks_.back().get(), EndpointKind::Other);
        }
    }
}

}  // namespace sim::noc
