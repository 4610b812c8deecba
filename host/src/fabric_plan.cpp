#include "fabric/fabric_plan.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "fabric/error.h"
#include "router_plan_common.h"

namespace fabric {

namespace pf = protocol::fabric;

std::string_view dir_name(FabricDir d) {
    switch (d) {
        case FabricDir::East:
            return "east";
        case FabricDir::West:
            return "west";
        default:
            return "unknown";
    }
}

std::string_view topology_name(pf::Topology t) {
    switch (t) {
        case pf::Topology::Line:
            return "line";
        case pf::Topology::Ring:
            return "ring";
        case pf::Topology::Mesh:
            return "mesh";
        case pf::Topology::Torus:
            return "torus";
        default:
            return "unknown";
    }
}

namespace {

using namespace plan_detail;

struct Link {
    EthPortRef west_end;  // on chip i (its East router)
    EthPortRef east_end;  // on chip i+1 (its West router)
};

std::string chip_list(const std::vector<ChipId>& chips) {
    std::string s;
    for (size_t i = 0; i < chips.size(); ++i) s += fmt::format("{}{}", i ? "," : "", chips[i]);
    return s;
}

// Every router's channels (slot count 1 = used): ch0 and ch1, rx0; a ring also ch2 and rx1.
pf::RouterConfig used_channels(const FabricOptions& o) {
    const bool ring = o.topology == pf::Topology::Ring;
    pf::RouterConfig c = base_router_config(o.topology, tuning_of(o));
    c.sender_slots[0] = 1;
    c.sender_slots[1] = 1;
    c.sender_slots[2] = ring ? 1 : 0;
    c.receiver_slots[0] = 1;
    c.receiver_slots[1] = ring ? 1 : 0;
    c.ring_size = ring ? static_cast<uint32_t>(o.chips.size()) : 0;
    return c;
}

}  // namespace

FabricPlan plan_fabric(const ClusterDescriptor& cluster, const SocDescriptor& soc,
                       const FabricOptions& o) {
    // ---- options ----
    if (o.topology != pf::Topology::Line && o.topology != pf::Topology::Ring) {
        fail(ErrorCategory::BadInput, "fabric plan: unknown topology {} (line = 0, ring = 1)",
             static_cast<uint32_t>(o.topology));
    }
    const bool ring = o.topology == pf::Topology::Ring;
    if (cluster.arch() != soc.arch()) {
        fail(ErrorCategory::BadInput,
             "fabric plan: cluster descriptor {} is {} but SoC descriptor {} is {}",
             cluster.source(), arch_name(cluster.arch()), soc.source(), arch_name(soc.arch()));
    }
    const hal::ArchMap& am = hal::arch_map(soc.arch());
    const size_t n = o.chips.size();
    if (n < 2) {
        fail(ErrorCategory::BadInput, "fabric plan: a {} needs at least 2 chips, got {} ({})",
             topology_name(o.topology), n, chip_list(o.chips));
    }
    if (n > pf::kMaxHops1D + 1) {
        fail(ErrorCategory::BadInput,
             "fabric plan: {} chips in a {}: at most {} (routes are at most {} hops)", n,
             topology_name(o.topology), pf::kMaxHops1D + 1, pf::kMaxHops1D);
    }
    std::set<ChipId> seen;
    for (ChipId c : o.chips) {
        if (c >= cluster.chip_count()) {
            fail(ErrorCategory::BadInput, "fabric plan: chip {} is not in cluster {} (chips 0..{})",
                 c, cluster.source(), cluster.chip_count() - 1);
        }
        if (!seen.insert(c).second) {
            fail(ErrorCategory::BadInput, "fabric plan: chip {} is listed twice ({})", c,
                 chip_list(o.chips));
        }
    }
    check_tuning("fabric plan", tuning_of(o), soc);

    // ---- slots ----
    const pf::RouterConfig used = used_channels(o);
    const SlotChoice slots = choose_slots("fabric plan", topology_name(o.topology), tuning_of(o),
                                          soc, {&used, 1}, SlotSteps::Halving);

    // ---- links ----
    const size_t link_count = ring ? n : n - 1;
    std::vector<Link> links;
    for (size_t i = 0; i < link_count; ++i) {
        const ChipId a = o.chips[i];
        const ChipId b = o.chips[(i + 1) % n];
        // Ring of two: both links join c0 and c1; order them by c0's channel.
        const bool wrap2 = ring && n == 2 && i == 1;
        auto between = wrap2 ? links_between(cluster, b, a) : links_between(cluster, a, b);
        const uint32_t want = o.link_index + (wrap2 ? 1 : 0);
        if (between.empty()) {
            fail(ErrorCategory::BadInput,
                 "fabric plan: chips {} and {} are neighbours in the {} ({}) but not connected in "
                 "{}",
                 a, b, topology_name(o.topology), chip_list(o.chips), cluster.source());
        }
        if (want >= between.size()) {
            fail(ErrorCategory::BadInput,
                 "fabric plan: chips {} and {} have {} link(s) in {}; link {} does not exist{}", a,
                 b, between.size(), cluster.source(), want,
                 wrap2 ? " (a ring of two chips uses links link_index and link_index + 1)" : "");
        }
        const auto [ca, cb] = between[want];
        if (wrap2) {
            links.push_back(Link{{a, cb}, {b, ca}});  // between is (chan on b = c0, chan on a = c1)
        } else {
            links.push_back(Link{{a, ca}, {b, cb}});
        }
    }

    // ---- routers ----
    FabricPlan plan;
    plan.arch = soc.arch();
    plan.topology = o.topology;
    plan.chips = o.chips;
    pf::RouterConfig base = with_slots(used, slots);
    // Automatic slots: the worker channel gets up to twice the others' where L1 still has room (a
    // line with the default payload; a ring's third channel and rx1 fill it). A ch0 slot comes back
    // only with the far router's completion, a round trip of ~3,000 cycles, so ch0's slots bound
    // one worker's rate. The forwarded channels' slots come back the same way (the next chip's
    // completion), so what L1 still holds then goes to them, a slot each at a time. The figures
    // behind both choices are in docs/PERFORMANCE.md (1D fabric, slots).
    if (o.sender_slots == 0) {
        pf::RouterConfig more = base;
        const uint32_t ch0_most = std::min(2 * base.sender_slots[0], kMaxRouterSlots);
        while (base.sender_slots[0] < ch0_most) {
            more = base;
            ++more.sender_slots[0];
            if (!layout_fits(soc, pf::router_layout(am, more))) break;
            base = more;
        }
        while (base.sender_slots[1] < kMaxRouterSlots) {
            more = base;
            ++more.sender_slots[1];
            if (ring) ++more.sender_slots[2];
            if (!layout_fits(soc, pf::router_layout(am, more))) break;
            base = more;
        }
    }
    auto add = [&](size_t index, FabricDir dir, EthPortRef self, EthPortRef peer) {
        RouterPlacement p{};
        p.chip = self.chip;
        p.eth_channel = self.chan;
        p.core = CoreLocation{self.chip, soc.eth_core(self.chan)};
        (void)soc.eth_core(peer.chan);  // BadInput if the SoC descriptor lacks the peer's channel
        p.dir = dir;
        p.index_in_line = index;
        p.config = base;
        p.config.chip_id = self.chip;
        p.config.eth_channel = self.chan;
        p.config.peer_chip_id = peer.chip;
        p.config.peer_eth_channel = peer.chan;
        p.config.is_master = self.chip < peer.chip ? 1 : 0;
        p.config.dateline = ring && ((dir == FabricDir::East && index == n - 1) ||
                                     (dir == FabricDir::West && index == 0))
                                ? 1
                                : 0;
        plan.routers.push_back(p);
    };
    for (size_t i = 0; i < link_count; ++i) {
        add(i, FabricDir::East, links[i].west_end, links[i].east_end);
        add((i + 1) % n, FabricDir::West, links[i].east_end, links[i].west_end);
    }
    // Downstream: the router on the same chip facing the other way, then the layout.
    for (RouterPlacement& p : plan.routers) {
        const FabricDir other = p.dir == FabricDir::East ? FabricDir::West : FabricDir::East;
        for (const RouterPlacement& q : plan.routers) {
            if (q.chip == p.chip && q.dir == other) {
                p.config.has_downstream = 1;
                p.config.downstream_x = q.core.core.x;
                p.config.downstream_y = q.core.core.y;
            }
        }
        p.layout = pf::router_layout(am, p.config);
        if (!layout_fits(soc, p.layout)) {  // checked above; a bug if it fails here
            fail(ErrorCategory::Internal, "fabric plan: router {} layout ends at {} past L1",
                 p.core.str(), hex32(p.layout.end));
        }
    }
    for (RouterPlacement& p : plan.routers) {
        p.config.line_reach = static_cast<uint32_t>(plan.line_chips(p).size());
    }
    return plan;
}

namespace {
// A 2D plan's routers have mesh ports, not east/west (RouterPlacement::dir is meaningless there).
void check_1d(const FabricPlan& plan, const char* what) {
    if (pf::is_2d(static_cast<uint32_t>(plan.topology))) {
        fail(ErrorCategory::BadInput,
             "fabric plan: {} of a {} plan: its routers face mesh directions (use MeshPlan)", what,
             topology_name(plan.topology));
    }
}
}  // namespace

const RouterPlacement& FabricPlan::router(ChipId chip, FabricDir dir) const {
    check_1d(*this, "router(chip, east/west)");
    for (const RouterPlacement& p : routers) {
        if (p.chip == chip && p.dir == dir) return p;
    }
    if (std::find(chips.begin(), chips.end(), chip) == chips.end()) {
        fail(ErrorCategory::BadInput, "fabric plan: chip {} is not in the {} ({})", chip,
             topology_name(topology), chip_list(chips));
    }
    fail(ErrorCategory::BadInput, "fabric plan: chip {} has no {} router (it ends the line {})",
         chip, dir_name(dir), chip_list(chips));
}

std::vector<ChipId> FabricPlan::line_chips(const RouterPlacement& r) const {
    check_1d(*this, "line_chips");
    const size_t n = chips.size();
    const bool ring = topology == pf::Topology::Ring;
    const size_t ahead = ring                       ? n - 1
                         : r.dir == FabricDir::East ? n - 1 - r.index_in_line
                                                    : r.index_in_line;
    std::vector<ChipId> out;
    for (size_t k = 1; k <= std::min<size_t>(ahead, pf::kMaxLineHops); ++k) {
        const size_t at = r.dir == FabricDir::East ? r.index_in_line + k : r.index_in_line + n - k;
        out.push_back(chips[at % n]);
    }
    return out;
}

uint32_t FabricPlan::ttl() const {
    return static_cast<uint32_t>(std::min<size_t>(chips.size(), pf::kMaxTtl));
}

uint32_t FabricPlan::hops(ChipId from, ChipId to, FabricDir dir) const {
    check_1d(*this, "hops(east/west)");
    const auto pos = [&](ChipId c) -> size_t {
        const auto it = std::find(chips.begin(), chips.end(), c);
        if (it == chips.end()) {
            fail(ErrorCategory::BadInput, "fabric plan: chip {} is not in the {} ({})", c,
                 topology_name(topology), chip_list(chips));
        }
        return static_cast<size_t>(it - chips.begin());
    };
    const size_t a = pos(from);
    const size_t b = pos(to);
    const size_t n = chips.size();
    if (a == b) {
        fail(ErrorCategory::BadInput, "fabric plan: hops from chip {} to itself", from);
    }
    if (topology == pf::Topology::Ring) {
        return static_cast<uint32_t>(dir == FabricDir::East ? (b + n - a) % n : (a + n - b) % n);
    }
    if (dir == FabricDir::East && b > a) return static_cast<uint32_t>(b - a);
    if (dir == FabricDir::West && b < a) return static_cast<uint32_t>(a - b);
    fail(ErrorCategory::BadInput,
         "fabric plan: chip {} is not reachable from chip {} going {} on the line {}", to, from,
         dir_name(dir), chip_list(chips));
}

pf::WorkerChannel FabricPlan::worker_channel(ChipId chip, FabricDir dir) const {
    const RouterPlacement& p = router(chip, dir);
    return pf::worker_channel(hal::arch_map(arch), p.config, p.core.core.x, p.core.core.y);
}

}  // namespace fabric
