#include "fabric/traffic_account.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "fabric/error.h"
#include "fabric/fabric_runner.h"
#include "protocol/fabric.h"
#include "protocol/test_kernels.h"

namespace fabric {

namespace pf = protocol::fabric;

namespace {

// Indices a report lists per drop group before it says how many more there are.
constexpr size_t kListedPackets = 8;
// Flows with lost (or duplicated) packets named one line each before the rest are summed up: the
// verdict of a 1,000-flow run stays one readable line; the table and the JSON have them all.
constexpr size_t kListedFlows = 8;

// Whether drop `d` is `flow`'s: made on one of its drop chips; a delivery its destination did not
// accept (NotAccepted) only on the chip the flow ends at (a multicast went on from there).
// The same packet reported by the same router.
bool same_packet(const PacketDrop& a, const PacketDrop& b) {
    return a.chip == b.chip && a.eth_channel == b.eth_channel && a.seq == b.seq;
}

bool counts_for(const FlowTally& flow, const PacketDrop& d) {
    const ChipId chip = d.short_of.value_or(d.chip);
    if (flow.drop_chips.empty()) return true;
    if (d.reason == static_cast<uint32_t>(pf::BadPacket::NotAccepted))
        return flow.drop_chips.back() == chip;
    return std::find(flow.drop_chips.begin(), flow.drop_chips.end(), chip) != flow.drop_chips.end();
}

// The tallies by flow id.
std::multimap<uint32_t, size_t> index_by_id(std::span<const FlowTally> flows) {
    std::multimap<uint32_t, size_t> by_id;
    for (size_t i = 0; i < flows.size(); ++i) by_id.emplace(flows[i].id, i);
    return by_id;
}

void add_to_group(FlowAccount& flow, const PacketDrop& d) {
    const uint32_t index = protocol::traffic_seq_index(d.seq);
    for (DropGroup& g : flow.drops) {
        if (g.chip == d.chip && g.eth_channel == d.eth_channel && g.reason == d.reason) {
            g.packets.push_back(index);
            return;
        }
    }
    flow.drops.push_back({d.chip, d.eth_channel, d.reason, {index}});
}

// `pending`: the flow's drops that were reported not accepted only (they may have landed late).
void settle(FlowAccount& f, uint64_t pending) {
    const uint64_t over = f.tally.delivered + f.dropped > f.tally.sent
                              ? f.tally.delivered + f.dropped - f.tally.sent
                              : 0;
    f.landed_late = std::min(over, pending);
    f.dropped -= f.landed_late;
    const uint64_t arrived = f.tally.delivered + f.dropped;
    f.lost = f.tally.sent > arrived ? f.tally.sent - arrived : 0;
    f.duplicated = arrived > f.tally.sent ? arrived - f.tally.sent : 0;
}

std::string where(ChipId chip, uint32_t eth) {
    return fmt::format("chip {} eth {}", chip, eth);
}

std::string packet_list(const std::vector<uint32_t>& packets) {
    const size_t shown = std::min(packets.size(), kListedPackets);
    std::string out = fmt::format(
        "{}", fmt::join(packets.begin(), packets.begin() + static_cast<ptrdiff_t>(shown), ", "));
    if (packets.size() > shown) out += fmt::format(" and {} more", packets.size() - shown);
    return out;
}

}  // namespace

void DropLog::add(std::span<const RouterEventRecord> records, const FabricPlan& plan) {
    for (const RouterEventRecord& r : records) {
        if (r.lost != 0) {
            unrecorded += r.lost;
            continue;
        }
        const RouterPlacement& router = plan.routers.at(r.router);
        const ChipId peer = router.config.peer_chip_id;
        switch (static_cast<pf::RouterEventKind>(r.event.kind)) {
            case pf::RouterEventKind::Unacked:
                unacked.push_back({router.chip, router.eth_channel, peer, r.event.channel,
                                   r.event.code, r.event.value});
                continue;
            case pf::RouterEventKind::Unsent:
                drops.push_back({router.chip, router.eth_channel, r.event.code, r.event.channel,
                                 r.event.value, peer});
                continue;
            case pf::RouterEventKind::NotAccepted:
                not_accepted.push_back({router.chip, router.eth_channel,
                                        static_cast<uint32_t>(pf::BadPacket::NotAccepted),
                                        r.event.channel, r.event.value, std::nullopt});
                continue;
            case pf::RouterEventKind::Accepted: {
                const PacketDrop went{router.chip, router.eth_channel, 0, 0, r.event.value, {}};
                std::erase_if(not_accepted,
                              [&](const PacketDrop& d) { return same_packet(d, went); });
                continue;
            }
            case pf::RouterEventKind::BadPacket:
                break;
            default:
                continue;
        }
        drops.push_back({router.chip, router.eth_channel, r.event.code, r.event.channel,
                         r.event.value, std::nullopt});
    }
}

bool TrafficAccount::all_delivered() const {
    return delivered == sent && dropped == 0 && duplicated == 0 && strays.empty() &&
           unrecorded == 0;
}

void DropLog::resolve_unacked(
    const std::function<std::optional<uint32_t>(const UnackedPacket&)>& peer_taken) {
    std::erase_if(unacked, [&](const UnackedPacket& u) {
        const std::optional<uint32_t> taken = peer_taken(u);
        if (!taken) return false;
        if (static_cast<int32_t>(u.position - *taken) >= 0) {  // free-running counts
            drops.push_back({u.chip, u.eth_channel, static_cast<uint32_t>(pf::BadPacket::Unacked),
                             u.sender_channel, u.seq, u.peer_chip});
        }
        return true;
    });
}

std::function<std::optional<uint32_t>(const UnackedPacket&)> taken_by_peers(
    const FabricPlan& plan, std::vector<RouterSnapshot> routers) {
    return [plan, routers = std::move(routers)](const UnackedPacket& u) -> std::optional<uint32_t> {
        const auto sender =
            std::find_if(routers.begin(), routers.end(), [&](const RouterSnapshot& s) {
                return s.chip == u.chip && s.eth_channel == u.eth_channel;
            });
        if (sender == routers.end()) return std::nullopt;
        const pf::RouterConfig& c = plan.routers[sender - routers.begin()].config;
        for (const RouterSnapshot& s : routers) {
            // Only a peer that cut the link too, or ended, has stopped taking from it: its count
            // is final.
            const bool ended =
                s.core_finished &&
                s.block.status == static_cast<uint32_t>(pf::RouterStatus::Terminated);
            if (s.chip == c.peer_chip_id && s.eth_channel == c.peer_eth_channel &&
                (s.control.cut != 0 || ended) && u.sender_channel < pf::kMaxSenderChannels) {
                return s.control.taken[u.sender_channel];
            }
        }
        return std::nullopt;
    };
}

void resolve_link_down_drains(FabricRunner& runner, DropLog& drops, uint64_t timeout_cycles) {
    const std::vector<size_t> drained = runner.drained_for_link_down();
    if (drained.empty()) return;
    std::vector<RouterSnapshot> routers =
        runner.control(pf::RouterControl::Drain, timeout_cycles, drained);
    drops.resolve_unacked(taken_by_peers(runner.plan(), std::move(routers)));
}

void resolve_unacked_after_termination(const FabricRunner& runner, DropLog& drops,
                                       std::vector<RouterSnapshot> final_snapshots) {
    if (drops.unacked.empty()) return;
    drops.resolve_unacked(taken_by_peers(runner.plan(), std::move(final_snapshots)));
}

bool TrafficAccount::accounted() const {
    return lost == 0 && duplicated == 0 && strays.empty() && unrecorded == 0;
}

size_t TrafficAccount::flows_not_delivered() const {
    return static_cast<size_t>(std::count_if(flows.begin(), flows.end(), [](const FlowAccount& f) {
        return !f.all_delivered() || f.lost != 0 || f.duplicated != 0;
    }));
}

TrafficAccount account_traffic(std::span<const FlowTally> flows, const DropLog& log) {
    const std::multimap<uint32_t, size_t> by_id = index_by_id(flows);
    TrafficAccount a;
    for (const FlowTally& t : flows) a.flows.push_back({t, 0, 0, 0, 0, {}});
    // A packet reported not accepted counts once, also when its router dropped the rest of it
    // (a scatter cut short: BadPacket NotAccepted).
    std::vector<PacketDrop> drops = log.drops;
    const size_t definite = drops.size();
    for (const PacketDrop& n : log.not_accepted) {
        const bool known = std::any_of(drops.begin(), drops.end(),
                                       [&](const PacketDrop& d) { return same_packet(d, n); });
        if (!known) drops.push_back(n);
    }
    std::vector<uint64_t> pending(flows.size(), 0);
    for (size_t i = 0; i < drops.size(); ++i) {
        const PacketDrop& d = drops[i];
        bool counted = false;
        auto [first, last] = by_id.equal_range(protocol::traffic_seq_flow(d.seq));
        for (auto it = first; it != last; ++it) {
            if (!counts_for(flows[it->second], d)) continue;
            FlowAccount& f = a.flows[it->second];
            ++f.dropped;
            if (i >= definite) ++pending[it->second];
            add_to_group(f, d);
            counted = true;
        }
        if (!counted) a.strays.push_back(d);
    }
    for (size_t i = 0; i < a.flows.size(); ++i) {
        FlowAccount& f = a.flows[i];
        settle(f, pending[i]);
        a.sent += f.tally.sent;
        a.delivered += f.tally.delivered;
        a.dropped += f.dropped;
        a.lost += f.lost;
        a.duplicated += f.duplicated;
    }
    a.unrecorded = log.unrecorded;
    return a;
}

std::string describe_drops(const FlowAccount& flow) {
    std::vector<std::string> parts;
    for (const DropGroup& g : flow.drops) {
        parts.push_back(fmt::format("{} at {}: {} packet{} ({})", bad_packet_name(g.reason),
                                    where(g.chip, g.eth_channel), g.packets.size(),
                                    g.packets.size() == 1 ? "" : "s", packet_list(g.packets)));
    }
    if (flow.landed_late != 0) {
        parts.push_back(
            fmt::format("{} of the not accepted landed late (delivered)", flow.landed_late));
    }
    return fmt::format("{}", fmt::join(parts, "; "));
}

// A line per flow `what` picks (at most kListedFlows, then one line for the rest).
template <typename Pick, typename Line>
void flow_lines(const TrafficAccount& a, Pick&& pick, Line&& line, std::string_view what,
                std::vector<std::string>& problems) {
    size_t listed = 0, rest = 0;
    uint64_t rest_packets = 0;
    for (const FlowAccount& f : a.flows) {
        const uint64_t n = pick(f);
        if (n == 0) continue;
        if (listed < kListedFlows) {
            problems.push_back(line(f));
            ++listed;
        } else {
            ++rest;
            rest_packets += n;
        }
    }
    if (rest != 0) {
        problems.push_back(fmt::format("{} more flows with {} packets {} (see the account)", rest,
                                       rest_packets, what));
    }
}

void account_problems(const TrafficAccount& a, std::vector<std::string>& problems) {
    flow_lines(
        a, [](const FlowAccount& f) { return f.lost; },
        [](const FlowAccount& f) {
            return fmt::format("flow {}: {} of {} packets lost (delivered {}, dropped {})",
                               f.tally.name, f.lost, f.tally.sent, f.tally.delivered, f.dropped);
        },
        "lost", problems);
    flow_lines(
        a, [](const FlowAccount& f) { return f.duplicated; },
        [](const FlowAccount& f) {
            return fmt::format("flow {}: {} packets duplicated (sent {}, delivered {}, dropped {})",
                               f.tally.name, f.duplicated, f.tally.sent, f.tally.delivered,
                               f.dropped);
        },
        "duplicated", problems);
    if (a.unrecorded != 0) {
        problems.push_back(fmt::format(
            "{} event records not written (router log full): drops may be missing from the "
            "account",
            a.unrecorded));
    }
    if (!a.strays.empty()) {
        const PacketDrop& d = a.strays.front();
        problems.push_back(
            fmt::format("{} dropped packet{} name no flow of this run (first: seq {}, {} at {})",
                        a.strays.size(), a.strays.size() == 1 ? "" : "s", hex32(d.seq),
                        bad_packet_name(d.reason), where(d.chip, d.eth_channel)));
    }
    const uint64_t attributed = a.dropped;
    if (attributed != 0) {
        const size_t flows = static_cast<size_t>(std::count_if(
            a.flows.begin(), a.flows.end(), [](const FlowAccount& f) { return f.dropped != 0; }));
        problems.push_back(fmt::format("{} packet{} dropped by routers in {} flow{} ({})",
                                       attributed, attributed == 1 ? "" : "s", flows,
                                       flows == 1 ? "" : "s",
                                       a.accounted() ? "all accounted for" : "see above"));
    }
}

std::string account_totals(const TrafficAccount& a) {
    std::string out = fmt::format("account: {} flows, {} sent, {} delivered, {} dropped, {} lost",
                                  a.flows.size(), a.sent, a.delivered, a.dropped, a.lost);
    if (a.duplicated != 0) out += fmt::format(", {} duplicated", a.duplicated);
    return out;
}

std::vector<std::string> account_table(const TrafficAccount& a) {
    std::vector<const FlowAccount*> shown;
    size_t name_width = 4;  // "flow"
    for (const FlowAccount& f : a.flows) {
        if (f.all_delivered() && f.lost == 0 && f.duplicated == 0) continue;
        shown.push_back(&f);
        name_width = std::max(name_width, f.tally.name.size());
    }
    std::vector<std::string> out;
    if (!shown.empty()) {
        out.push_back(fmt::format("{:<{}} {:>8} {:>9} {:>7} {:>6} {:>10}  {}", "flow", name_width,
                                  "sent", "delivered", "dropped", "lost", "duplicated", "drops"));
        for (const FlowAccount* f : shown) {
            out.push_back(fmt::format("{:<{}} {:>8} {:>9} {:>7} {:>6} {:>10}  {}", f->tally.name,
                                      name_width, f->tally.sent, f->tally.delivered, f->dropped,
                                      f->lost, f->duplicated, describe_drops(*f)));
        }
    }
    out.push_back(account_totals(a));
    for (const PacketDrop& d : a.strays) {
        out.push_back(fmt::format("dropped packet of no flow: seq {}, {} at {}", hex32(d.seq),
                                  bad_packet_name(d.reason), where(d.chip, d.eth_channel)));
    }
    if (a.unrecorded != 0) {
        out.push_back(fmt::format("{} event records not written (router log full)", a.unrecorded));
    }
    return out;
}

namespace {

nlohmann::json drop_json(ChipId chip, uint32_t eth, uint32_t reason) {
    return {{"reason", bad_packet_name(reason)}, {"chip", chip}, {"eth", eth}};
}

nlohmann::json flow_json(const FlowAccount& f) {
    nlohmann::json drops = nlohmann::json::array();
    for (const DropGroup& g : f.drops) {
        nlohmann::json one = drop_json(g.chip, g.eth_channel, g.reason);
        one["packets"] = g.packets;
        drops.push_back(std::move(one));
    }
    return {{"flow", f.tally.name},       {"id", f.tally.id},
            {"sent", f.tally.sent},       {"delivered", f.tally.delivered},
            {"dropped", f.dropped},       {"lost", f.lost},
            {"duplicated", f.duplicated}, {"landed_late", f.landed_late},
            {"drops", std::move(drops)}};
}

}  // namespace

nlohmann::json account_json(const TrafficAccount& a) {
    nlohmann::json flows = nlohmann::json::array();
    for (const FlowAccount& f : a.flows) flows.push_back(flow_json(f));
    nlohmann::json strays = nlohmann::json::array();
    for (const PacketDrop& d : a.strays) {
        nlohmann::json one = drop_json(d.chip, d.eth_channel, d.reason);
        one["seq"] = d.seq;
        strays.push_back(std::move(one));
    }
    return {{"sent", a.sent},
            {"delivered", a.delivered},
            {"dropped", a.dropped},
            {"lost", a.lost},
            {"duplicated", a.duplicated},
            {"all_delivered", a.all_delivered()},
            {"accounted", a.accounted()},
            {"unrecorded_events", a.unrecorded},
            {"stray_drops", std::move(strays)},
            {"flows", std::move(flows)}};
}

}  // namespace fabric
