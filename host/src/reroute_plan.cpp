// The control plane's decision about a failed link (reroute_plan.h).
#include "fabric/reroute_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "fabric/error.h"
#include "fabric/fabric_runner.h"

namespace fabric {

namespace {

std::optional<size_t> router_at(const FabricPlan& plan, EthPortRef port) {
    for (size_t i = 0; i < plan.routers.size(); ++i) {
        const RouterPlacement& r = plan.routers[i];
        if (r.chip == port.chip && r.eth_channel == port.chan) return i;
    }
    return std::nullopt;
}

// Every working link from `near_chip` to `far_chip` other than `failed`: first those the plan
// runs routers on, then the idle ones, each group by ascending channel.
std::vector<FallbackLink> candidates(const ClusterDescriptor& cluster, const FabricPlan& plan,
                                     const LinkEnds& failed, const std::set<EthPortRef>& down) {
    std::vector<FallbackLink> out;
    for (uint32_t chan : cluster.connected_channels(failed.near.chip)) {
        const EthPortRef near{failed.near.chip, chan};
        const std::optional<EthPortRef> far = cluster.peer(near);
        if (chan == failed.near.chan || !far || far->chip != failed.far.chip) continue;
        if (down.count(near) != 0 || down.count(*far) != 0) continue;
        out.push_back({{near, *far}, router_at(plan, near), router_at(plan, *far)});
    }
    std::stable_partition(out.begin(), out.end(), [](const FallbackLink& f) {
        return f.near_router.has_value() && f.far_router.has_value();
    });
    return out;
}

std::string fallback_routers(const FabricPlan& plan, const FallbackLink& f) {
    if (!f.near_router || !f.far_router) return "an idle link: fallback routers start on it";
    const RouterPlacement& near = plan.routers[*f.near_router];
    if (near.mesh) return fmt::format("plane {}'s routers", near.mesh->plane);
    return fmt::format("routers {} and {}", router_component_name(near),
                       router_component_name(plan.routers[*f.far_router]));
}

}  // namespace

std::optional<size_t> configured_fallback(const FabricPlan& plan, size_t router) {
    const RouterPlacement& r = plan.routers.at(router);
    if (!r.mesh) return std::nullopt;
    const uint32_t word = r.mesh->config.neighbor[static_cast<uint32_t>(r.mesh->dir)];
    if (word == 0) return std::nullopt;
    for (size_t j = 0; j < plan.routers.size(); ++j) {
        const CoreLocation& c = plan.routers[j].core;
        if (c.chip == r.chip && c.core.x == (word & 0xFF) && c.core.y == ((word >> 8) & 0xFF))
            return j;
    }
    return std::nullopt;
}

std::optional<ReliabilityMode> parse_reliability_mode(const std::string& s) {
    if (s == "strict") return ReliabilityMode::Strict;
    if (s == "relaxed") return ReliabilityMode::Relaxed;
    return std::nullopt;
}

const char* reliability_mode_name(ReliabilityMode m) {
    return m == ReliabilityMode::Strict ? "strict" : "relaxed";
}

const char* reroute_action_name(RerouteAction a) {
    switch (a) {
        case RerouteAction::Reroute:
            return "reroute";
        case RerouteAction::RemoveLink:
            return "remove_link";
        case RerouteAction::Stop:
            return "stop";
    }
    return "?";
}

std::string LinkEnds::str() const {
    return fmt::format("{} <-> {}", near.str(), far.str());
}

std::string RerouteDecision::summary(const FabricPlan& plan) const {
    const std::string head = fmt::format("link {} failed", failed.str());
    switch (action) {
        case RerouteAction::Reroute:
            return fmt::format("{}: rerouted over {} ({})", head, fallback->link.str(),
                               fallback_routers(plan, *fallback));
        case RerouteAction::RemoveLink:
            return fmt::format(
                "{} and no other link between chip {} and chip {} works: relaxed: removed from "
                "the routing tables; packets that need it are dropped and reported",
                head, failed.near.chip, failed.far.chip);
        case RerouteAction::Stop:
            return fmt::format(
                "{} and no other link between chip {} and chip {} works: strict: the fabric "
                "stops",
                head, failed.near.chip, failed.far.chip);
    }
    return head;
}

RerouteDecision decide_reroute(const ClusterDescriptor& cluster, const FabricPlan& plan,
                               EthPortRef failed_port, const std::set<EthPortRef>& down,
                               ReliabilityMode mode) {
    const std::optional<size_t> near_router = router_at(plan, failed_port);
    if (!near_router) {
        fail(ErrorCategory::BadInput, "reroute: the fabric runs no router on {}",
             failed_port.str());
    }
    const std::optional<EthPortRef> far = cluster.peer(failed_port);
    const std::optional<size_t> far_router = far ? router_at(plan, *far) : std::nullopt;
    if (!far || !far_router) {
        fail(ErrorCategory::BadInput,
             "reroute: {} has no router of the fabric at its other end in {}", failed_port.str(),
             cluster.source());
    }
    RerouteDecision d;
    d.failed = {failed_port, *far};
    d.near_router = *near_router;
    d.far_router = *far_router;
    std::vector<FallbackLink> links = candidates(cluster, plan, d.failed, down);
    const std::optional<size_t> configured = configured_fallback(plan, *near_router);
    const auto it = std::find_if(links.begin(), links.end(), [&](const FallbackLink& f) {
        return configured && f.near_router == configured;
    });
    if (it != links.end()) std::rotate(links.begin(), it, it + 1);
    if (!links.empty()) {
        d.action = RerouteAction::Reroute;
        d.fallback = links.front();
    } else {
        d.action =
            mode == ReliabilityMode::Relaxed ? RerouteAction::RemoveLink : RerouteAction::Stop;
    }
    return d;
}

}  // namespace fabric
