#include "noc/path_reservation.h"

namespace sim::noc {

PathReservation::PathReservation(const Grid& grid, const RoutingUnit& routing) : routing_(routing) {
    for (uint32_t noc = 0; noc < hal::noc::kNumNocs; ++noc) {
        owner_[noc].assign(2 * grid.nodes(), kNone);
        pending_[noc].assign(2 * grid.nodes(), 0);
    }
}

bool PathReservation::try_reserve(Packet& p, uint32_t id) {
    routing_.links_of(p.noc, p, scratch_);
    std::vector<uint32_t>& owner = owner_[p.noc];
    for (uint32_t link : scratch_) {
        if (owner[link] != kNone) {
            return false;
        }
    }
    for (uint32_t link : scratch_) {
        owner[link] = id;
        ++pending_[p.noc][link];
    }
    p.reserved = true;
    return true;
}

void PathReservation::release(uint32_t noc, uint32_t router, uint32_t port) {
    const uint32_t link = router * 2 + port;
    if (pending_[noc][link] > 0 && --pending_[noc][link] == 0) {
        owner_[noc][link] = kNone;
    }
}

}  // namespace sim::noc
