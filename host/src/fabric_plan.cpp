#include "fabric/fabric_plan.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <utility>

#include "fabric/error.h"

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
        default:
            return "unknown";
    }
}

namespace {

struct Link {
    EthPortRef west_end;  // on chip i (its East router)
    EthPortRef east_end;  // on chip i+1 (its West router)
};

// Links between chips a and b, as (channel on a, channel on b), ascending by the channel on a.
std::vector<std::pair<uint32_t, uint32_t>> links_between(const ClusterDescriptor& cluster, ChipId a,
                                                         ChipId b) {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (const EthConnection& c : cluster.connections()) {
        if (c.a.chip == a && c.b.chip == b) out.emplace_back(c.a.chan, c.b.chan);
        if (c.b.chip == a && c.a.chip == b) out.emplace_back(c.b.chan, c.a.chan);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string chip_list(const std::vector<ChipId>& chips) {
    std::string s;
    for (size_t i = 0; i < chips.size(); ++i) s += fmt::format("{}{}", i ? "," : "", chips[i]);
    return s;
}

struct SlotChoice {
    uint32_t sender;
    uint32_t receiver;
};
constexpr std::array<SlotChoice, 4> kAutoSlots{{{8, 16}, {4, 8}, {2, 4}, {1, 2}}};

pf::RouterConfig base_config(const FabricOptions& o, uint32_t s, uint32_t r) {
    const bool ring = o.topology == pf::Topology::Ring;
    pf::RouterConfig c{};
    c.magic = pf::kRouterConfigMagic;
    c.version = pf::kProtocolVersion;
    c.topology = static_cast<uint32_t>(o.topology);
    c.payload_bytes = o.payload_bytes;
    c.sender_slots[0] = s;
    c.sender_slots[1] = s;
    c.sender_slots[2] = ring ? s : 0;
    c.receiver_slots[0] = r;
    c.receiver_slots[1] = ring ? r : 0;
    c.handshake_timeout_us = o.handshake_timeout_us;
    c.ready_timeout_us = o.ready_timeout_us;
    c.drain_timeout_us = o.drain_timeout_us;
    c.progress_timeout_us = o.progress_timeout_us;
    c.ring_size = ring ? static_cast<uint32_t>(o.chips.size()) : 0;
    return c;
}

// The layout fits the router block and the core's L1.
bool layout_fits(const SocDescriptor& soc, const pf::RouterLayout& l) {
    return l.fits && l.end <= soc.eth_l1_size();
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
    const uint32_t max_payload = pf::max_payload_bytes(am);
    if (o.payload_bytes == 0 || o.payload_bytes % 16 != 0 || o.payload_bytes > max_payload) {
        fail(ErrorCategory::BadInput,
             "fabric plan: payload_bytes {} must be a non-zero multiple of 16 and at most {} on {}",
             o.payload_bytes, max_payload, arch_name(soc.arch()));
    }
    if ((o.sender_slots == 0) != (o.receiver_slots == 0)) {
        fail(ErrorCategory::BadInput,
             "fabric plan: sender_slots {} and receiver_slots {}: set both or neither (0 = "
             "automatic)",
             o.sender_slots, o.receiver_slots);
    }
    const std::pair<const char*, uint32_t> timeouts[] = {
        {"handshake_timeout_us", o.handshake_timeout_us},
        {"ready_timeout_us", o.ready_timeout_us},
        {"drain_timeout_us", o.drain_timeout_us},
        {"progress_timeout_us", o.progress_timeout_us}};
    for (const auto& [name, v] : timeouts) {
        if (v == 0) fail(ErrorCategory::BadInput, "fabric plan: {} must be > 0", name);
        if (v > kMaxRouterTimeoutUs) {
            fail(ErrorCategory::BadInput, "fabric plan: {} {} is too long (at most {} us)", name, v,
                 kMaxRouterTimeoutUs);
        }
    }

    // ---- slots ----
    uint32_t s = o.sender_slots;
    uint32_t r = o.receiver_slots;
    if (s == 0) {
        bool found = false;
        for (const SlotChoice& ch : kAutoSlots) {
            if (layout_fits(soc, pf::router_layout(am, base_config(o, ch.sender, ch.receiver)))) {
                s = ch.sender;
                r = ch.receiver;
                found = true;
                break;
            }
        }
        if (!found) {
            const auto l = pf::router_layout(am, base_config(o, 1, 2));
            fail(ErrorCategory::BadInput,
                 "fabric plan: payload_bytes {} does not fit L1 even with 1 sender / 2 receiver "
                 "slots ({} {}: router block would end at {}, limit {})",
                 o.payload_bytes, topology_name(o.topology), arch_name(soc.arch()), hex32(l.end),
                 hex32(std::min<uint32_t>(pf::router_l1_top(am), soc.eth_l1_size())));
        }
    } else {
        if (s > kMaxRouterSlots || r > kMaxRouterSlots) {
            fail(ErrorCategory::BadInput,
                 "fabric plan: {} sender / {} receiver slots: at most {} per channel", s, r,
                 kMaxRouterSlots);
        }
        const auto l = pf::router_layout(am, base_config(o, s, r));
        const uint64_t slots = uint64_t{s} * (ring ? 3 : 2) + uint64_t{r} * (ring ? 2 : 1);
        // Guard the 32-bit layout arithmetic before trusting it.
        if (slots * l.slot_bytes > pf::router_l1_top(am) || !layout_fits(soc, l)) {
            fail(ErrorCategory::BadInput,
                 "fabric plan: {} sender / {} receiver slots of {} B do not fit L1 on {} ({}: "
                 "router block would end at {}, limit {})",
                 s, r, l.slot_bytes, arch_name(soc.arch()), topology_name(o.topology),
                 hex32(pf::router_l1_base(am) + slots * l.slot_bytes),
                 hex32(std::min<uint32_t>(pf::router_l1_top(am), soc.eth_l1_size())));
        }
    }

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
    const pf::RouterConfig base = base_config(o, s, r);
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
    return plan;
}

const RouterPlacement& FabricPlan::router(ChipId chip, FabricDir dir) const {
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

uint32_t FabricPlan::hops(ChipId from, ChipId to, FabricDir dir) const {
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
