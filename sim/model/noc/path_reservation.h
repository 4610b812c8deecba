// Multicast path reservation (NOC_CMD_PATH_RESERVE). A multicast launched with it claims every
// router-to-router link of its route (leg and tree) before its header is injected, all or nothing,
// and frees each link as its tail crosses it. Multicasts therefore never wait for each other
// inside the network (they use their own VCs, so unicasts never share their buffers): no
// tree-saturation deadlock. Without PATH_RESERVE, trees fork wormhole-style and can deadlock under
// contention, as on silicon. The reservation is made with global knowledge in one cycle (a
// simplification of the silicon's distributed reservation).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "noc/grid.h"
#include "noc/packet.h"
#include "noc/routing_unit.h"

namespace sim::noc {

class PathReservation {
  public:
    PathReservation(const Grid& grid, const RoutingUnit& routing);

    // Claims every link of packet `id`'s route on its NOC, or none when any is held by another
    // multicast (the injector then waits). Marks the packet reserved on success.
    bool try_reserve(Packet& p, uint32_t id);
    // The reserving packet's tail crossed output `port` of router `router` on `noc`.
    void release(uint32_t noc, uint32_t router, uint32_t port);
    // The packet holding that link, or kNone.
    uint32_t holder(uint32_t noc, uint32_t router, uint32_t port) const {
        return owner_[noc][router * 2 + port];
    }

  private:
    const RoutingUnit& routing_;
    // Per NOC and link (router * 2 + port): the holding packet, and the traversals of its tail
    // still to come (a tree may cross a link more than once).
    std::array<std::vector<uint32_t>, hal::noc::kNumNocs> owner_;
    std::array<std::vector<uint32_t>, hal::noc::kNumNocs> pending_;
    std::vector<uint32_t> scratch_;
};

}  // namespace sim::noc
