#include "router_plan_common.h"

#include <algorithm>
#include <array>

#include "fabric/error.h"
#include "fabric/fabric_plan.h"

namespace fabric::plan_detail {

namespace pf = protocol::fabric;

void check_tuning(std::string_view who, const RouterTuning& t, const SocDescriptor& soc) {
    const uint32_t max_payload = pf::max_payload_bytes(hal::arch_map(soc.arch()));
    if (t.payload_bytes == 0 || t.payload_bytes % 16 != 0 || t.payload_bytes > max_payload) {
        fail(ErrorCategory::BadInput,
             "{}: payload_bytes {} must be a non-zero multiple of 16 and at most {} on {}", who,
             t.payload_bytes, max_payload, arch_name(soc.arch()));
    }
    if ((t.sender_slots == 0) != (t.receiver_slots == 0)) {
        fail(ErrorCategory::BadInput,
             "{}: sender_slots {} and receiver_slots {}: set both or neither (0 = automatic)", who,
             t.sender_slots, t.receiver_slots);
    }
    const std::pair<const char*, uint32_t> timeouts[] = {
        {"handshake_timeout_us", t.handshake_timeout_us},
        {"ready_timeout_us", t.ready_timeout_us},
        {"drain_timeout_us", t.drain_timeout_us},
        {"progress_timeout_us", t.progress_timeout_us}};
    for (const auto& [name, v] : timeouts) {
        if (v == 0) fail(ErrorCategory::BadInput, "{}: {} must be > 0", who, name);
        if (v > kMaxRouterTimeoutUs) {
            fail(ErrorCategory::BadInput, "{}: {} {} is too long (at most {} us)", who, name, v,
                 kMaxRouterTimeoutUs);
        }
    }
    if (t.stall_timeout_us > kMaxRouterTimeoutUs) {  // 0: off
        fail(ErrorCategory::BadInput, "{}: stall_timeout_us {} is too long (at most {} us)", who,
             t.stall_timeout_us, kMaxRouterTimeoutUs);
    }
}

pf::RouterConfig base_router_config(pf::Topology topology, const RouterTuning& t) {
    pf::RouterConfig c{};
    c.magic = pf::kRouterConfigMagic;
    c.version = pf::kProtocolVersion;
    c.topology = static_cast<uint32_t>(topology);
    c.payload_bytes = t.payload_bytes;
    c.handshake_timeout_us = t.handshake_timeout_us;
    c.ready_timeout_us = t.ready_timeout_us;
    c.drain_timeout_us = t.drain_timeout_us;
    c.progress_timeout_us = t.progress_timeout_us;
    c.stall_timeout_us = t.stall_timeout_us;
    c.stall_action = static_cast<uint32_t>(t.stall_action);
    return c;
}

pf::RouterConfig with_slots(pf::RouterConfig used, SlotChoice slots) {
    for (uint32_t& s : used.sender_slots)
        s = s == kFallbackChannel ? kFallbackSlots : s != 0 ? slots.sender : 0;
    for (uint32_t& r : used.receiver_slots) r = r != 0 ? slots.receiver : 0;
    return used;
}

bool layout_fits(const SocDescriptor& soc, const pf::RouterLayout& l) {
    return l.fits && l.end <= soc.eth_l1_size();
}

namespace {

// Most first: S sender / 2S receiver slots per channel.
constexpr std::array<SlotChoice, 4> kHalvingSlots{{{8, 16}, {4, 8}, {2, 4}, {1, 2}}};
constexpr std::array<SlotChoice, 8> kEverySlots{
    {{8, 16}, {7, 14}, {6, 12}, {5, 10}, {4, 8}, {3, 6}, {2, 4}, {1, 2}}};

// The router shape with the most slots, and that many slots, for a choice.
struct Largest {
    pf::RouterConfig config;
    uint64_t slots;
};
Largest largest(std::span<const pf::RouterConfig> used, SlotChoice choice) {
    Largest best{with_slots(used.front(), choice), 0};
    for (const pf::RouterConfig& u : used) {
        const pf::RouterConfig c = with_slots(u, choice);
        uint64_t n = 0;
        for (uint32_t s : c.sender_slots) n += s;
        for (uint32_t r : c.receiver_slots) n += r;
        if (n > best.slots) best = {c, n};
    }
    return best;
}

}  // namespace

SlotChoice choose_slots(std::string_view who, std::string_view what, const RouterTuning& t,
                        const SocDescriptor& soc, std::span<const pf::RouterConfig> used,
                        SlotSteps steps) {
    if (used.empty()) fail(ErrorCategory::Internal, "{}: slot choice without routers", who);
    const hal::ArchMap& am = hal::arch_map(soc.arch());
    const uint32_t limit = std::min<uint32_t>(pf::router_l1_top(am), soc.eth_l1_size());
    const auto all_fit = [&](SlotChoice choice) {
        return std::all_of(used.begin(), used.end(), [&](const pf::RouterConfig& u) {
            return layout_fits(soc, pf::router_layout(am, with_slots(u, choice)));
        });
    };
    if (t.sender_slots == 0) {
        const std::span<const SlotChoice> choices = steps == SlotSteps::Halving
                                                        ? std::span<const SlotChoice>(kHalvingSlots)
                                                        : std::span<const SlotChoice>(kEverySlots);
        for (const SlotChoice& choice : choices) {
            if (all_fit(choice)) return choice;
        }
        const SlotChoice smallest = choices.back();
        const auto l = pf::router_layout(am, largest(used, smallest).config);
        fail(ErrorCategory::BadInput,
             "{}: payload_bytes {} does not fit L1 even with {} sender / {} receiver slots ({} "
             "{}: router block would end at {}, limit {})",
             who, t.payload_bytes, smallest.sender, smallest.receiver, what, arch_name(soc.arch()),
             hex32(l.end), hex32(limit));
    }
    const SlotChoice choice{t.sender_slots, t.receiver_slots};
    if (choice.sender > kMaxRouterSlots || choice.receiver > kMaxRouterSlots) {
        fail(ErrorCategory::BadInput, "{}: {} sender / {} receiver slots: at most {} per channel",
             who, choice.sender, choice.receiver, kMaxRouterSlots);
    }
    const Largest big = largest(used, choice);
    const auto l = pf::router_layout(am, big.config);
    // Guard the 32-bit layout arithmetic before trusting it.
    if (big.slots * l.slot_bytes > pf::router_l1_top(am) || !all_fit(choice)) {
        fail(ErrorCategory::BadInput,
             "{}: {} sender / {} receiver slots of {} B do not fit L1 on {} ({}: router block "
             "would end at {}, limit {})",
             who, choice.sender, choice.receiver, l.slot_bytes, arch_name(soc.arch()), what,
             hex32(pf::router_l1_base(am) + big.slots * l.slot_bytes), hex32(limit));
    }
    return choice;
}

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

}  // namespace fabric::plan_detail
