// What the control plane does about a failed link (seeds/000 §7.4): carry its traffic over another
// link between the same two chips (an Ethernet fallback channel), or, with none left, remove the
// link from the routing tables (Relaxed) or refuse to go on (Strict). A pure decision over the
// cluster and the plan; firmware/router/README.md "Rerouting" says how the routers use it.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_plan.h"

namespace fabric {

// The two reliability modes: what happens when no link in a direction is left.
enum class ReliabilityMode : uint8_t { Strict, Relaxed };
std::optional<ReliabilityMode> parse_reliability_mode(const std::string& s);  // "strict", "relaxed"
const char* reliability_mode_name(ReliabilityMode m);

// One link between two chips, seen from `near` (the failed router's chip).
struct LinkEnds {
    EthPortRef near;
    EthPortRef far;
    auto operator<=>(const LinkEnds&) const = default;
    std::string str() const;  // "chip 0 chan 8 <-> chip 1 chan 0"
};

struct FallbackLink {
    LinkEnds link;
    // The plan's routers on it (another routing plane's), which then carry the failed link's
    // traffic in their fallback channels; nullopt for a link the plan runs no router on (a
    // line's spare link), whose routers the control plane starts for the purpose.
    std::optional<size_t> near_router, far_router;
};

enum class RerouteAction : uint8_t {
    Reroute,     // over `fallback`
    RemoveLink,  // Relaxed, no working link left between the two chips
    Stop,        // Strict, no working link left
};
const char* reroute_action_name(RerouteAction a);

struct RerouteDecision {
    LinkEnds failed;
    size_t near_router = 0, far_router = 0;  // plan indices of the routers at its two ends
    RerouteAction action = RerouteAction::Stop;
    std::optional<FallbackLink> fallback;  // set iff action == Reroute
    // One line for the operator, e.g. "link chip 0 chan 8 <-> chip 1 chan 0 failed: rerouted
    // over chip 0 chan 9 <-> chip 1 chan 1 (plane 1's routers)".
    std::string summary(const FabricPlan& plan) const;
};

// The router plan.routers[router] reroutes over (its MeshRouterConfig::neighbor[dir]: the router
// of the paired plane on the same chip and side, mesh_plan.h), if the plan configured one.
std::optional<size_t> configured_fallback(const FabricPlan& plan, size_t router);

// The decision for the link at `failed_port` (a port the plan runs a router on), with the ports
// in `down` (either end of a link) known to be down too. The fallback is the working link
// between the same two chips that already runs a router of the plan: the failed router's
// configured fallback's if it works, else the lowest channel; else the lowest idle one.
// Error(BadInput) if no router of the plan is at `failed_port` or its port is not connected in
// `cluster`.
RerouteDecision decide_reroute(const ClusterDescriptor& cluster, const FabricPlan& plan,
                               EthPortRef failed_port, const std::set<EthPortRef>& down,
                               ReliabilityMode mode);

}  // namespace fabric
