// decide_reroute (reroute_plan.h): the fallback link the control plane picks for a failed link on
// real-shaped clusters (an n300 line, a t3k mesh with both planes, a 6U Galaxy whose chip ids
// are not mesh positions and whose channel numbers differ at the two ends), what it does when no
// link between the two chips is left in each reliability mode, and bad input.
#include <catch2/catch.hpp>
#include <optional>
#include <set>
#include <string>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/fabric_plan.h"
#include "fabric/mesh_plan.h"
#include "fabric/reroute_plan.h"

using fabric::ClusterDescriptor;
using fabric::EthPortRef;
using fabric::ReliabilityMode;
using fabric::RerouteAction;
using fabric::test::cluster;
using fabric::test::wh_soc;
namespace pf = protocol::fabric;

namespace {

fabric::FabricPlan n300_line() {
    fabric::FabricOptions o;
    o.topology = pf::Topology::Line;
    o.chips = {0, 1};
    return fabric::plan_fabric(cluster("n300_cluster.yaml"), wh_soc(), o);
}

fabric::MeshPlan mesh_plan(const std::string& graph, const std::string& cluster_file,
                           std::vector<uint32_t> planes) {
    fabric::MeshFabricOptions o;
    o.planes = std::move(planes);
    return fabric::plan_mesh(fabric::test::mesh_graph(graph), cluster(cluster_file), wh_soc(), o);
}

// The port of the plan's router at `node` facing `dir` on `plane`.
EthPortRef port_of(const fabric::FabricPlan& plan, fabric::MeshNode node, fabric::MeshDir dir,
                   uint32_t plane) {
    for (const auto& r : plan.routers) {
        if (r.mesh && r.mesh->node == node && r.mesh->dir == dir && r.mesh->plane == plane) {
            return {r.chip, r.eth_channel};
        }
    }
    FAIL("no router at " << node.str() << " plane " << plane);
    return {};
}

}  // namespace

TEST_CASE("reroute: an n300 line's failed link falls back on the spare link", "[reroute]") {
    const auto plan = n300_line();
    const ClusterDescriptor& c = cluster("n300_cluster.yaml");
    const auto d = fabric::decide_reroute(c, plan, {0, 8}, {}, ReliabilityMode::Strict);
    CHECK(d.failed.str() == "chip 0 chan 8 <-> chip 1 chan 0");
    CHECK(plan.routers[d.near_router].chip == 0);
    CHECK(plan.routers[d.near_router].eth_channel == 8);
    CHECK(plan.routers[d.far_router].chip == 1);
    CHECK(plan.routers[d.far_router].eth_channel == 0);
    REQUIRE(d.action == RerouteAction::Reroute);
    CHECK(d.fallback->link.str() == "chip 0 chan 9 <-> chip 1 chan 1");
    CHECK_FALSE(d.fallback->near_router.has_value());  // the line runs nothing on it
    CHECK_FALSE(d.fallback->far_router.has_value());
    CHECK(d.summary(plan) ==
          "link chip 0 chan 8 <-> chip 1 chan 0 failed: rerouted over chip 0 chan 9 <-> chip 1 "
          "chan 1 (an idle link: fallback routers start on it)");
    // Seen from the other end, the same link is found the other way round.
    const auto back = fabric::decide_reroute(c, plan, {1, 0}, {}, ReliabilityMode::Strict);
    CHECK(back.fallback->link.str() == "chip 1 chan 1 <-> chip 0 chan 9");
}

TEST_CASE("reroute: with no link left, relaxed removes it and strict stops", "[reroute]") {
    const auto plan = n300_line();
    const ClusterDescriptor& c = cluster("n300_cluster.yaml");
    // Either end of the spare link being down takes it out.
    for (const EthPortRef down : {EthPortRef{0, 9}, EthPortRef{1, 1}}) {
        const auto relaxed =
            fabric::decide_reroute(c, plan, {0, 8}, {down}, ReliabilityMode::Relaxed);
        CHECK(relaxed.action == RerouteAction::RemoveLink);
        CHECK_FALSE(relaxed.fallback.has_value());
        CHECK(relaxed.summary(plan) ==
              "link chip 0 chan 8 <-> chip 1 chan 0 failed and no other link between chip 0 and "
              "chip 1 works: relaxed: removed from the routing tables; packets that need it are "
              "dropped and reported");
        const auto strict =
            fabric::decide_reroute(c, plan, {0, 8}, {down}, ReliabilityMode::Strict);
        CHECK(strict.action == RerouteAction::Stop);
        CHECK(strict.summary(plan) ==
              "link chip 0 chan 8 <-> chip 1 chan 0 failed and no other link between chip 0 and "
              "chip 1 works: strict: the fabric stops");
    }
}

TEST_CASE("reroute: a t3k plane-0 link falls back on plane 1's link between the same chips",
          "[reroute]") {
    const auto mesh = mesh_plan("t3k_mesh_graph.yaml", "t3k_cluster.yaml", {0, 1});
    const ClusterDescriptor& c = cluster("t3k_cluster.yaml");
    const auto d = fabric::decide_reroute(c, mesh.fabric, {0, 2}, {}, ReliabilityMode::Strict);
    REQUIRE(d.action == RerouteAction::Reroute);
    CHECK(d.fallback->link.str() == "chip 0 chan 3 <-> chip 1 chan 5");
    REQUIRE(d.fallback->near_router.has_value());
    CHECK(mesh.fabric.routers[*d.fallback->near_router].mesh->port().str() == "M0D0 E plane 1");
    CHECK(mesh.fabric.routers[*d.fallback->far_router].mesh->port().str() == "M0D1 W plane 1");
    CHECK(d.summary(mesh.fabric) ==
          "link chip 0 chan 2 <-> chip 1 chan 4 failed: rerouted over chip 0 chan 3 <-> chip 1 "
          "chan 5 (plane 1's routers)");
}

TEST_CASE("reroute: a Galaxy link prefers a running plane's link, then the lowest idle one",
          "[reroute]") {
    // 6U Galaxy, 4 links per neighbour pair; chip ids are the driver's, not mesh positions.
    const std::string graph = "galaxy_8x4_mesh_graph.yaml";
    const std::string file = "clusters/galaxy_6u_cluster.yaml";
    const ClusterDescriptor& c = cluster(file);
    const auto two = mesh_plan(graph, file, {0, 1});
    const auto all = mesh_plan(graph, file, {0, 1, 2, 3});  // where planes 2 and 3 would run
    const fabric::MeshNode node{0, 9};
    const EthPortRef p0 = port_of(two.fabric, node, fabric::MeshDir::E, 0);
    const EthPortRef p1 = port_of(two.fabric, node, fabric::MeshDir::E, 1);
    const EthPortRef p2 = port_of(all.fabric, node, fabric::MeshDir::E, 2);
    const EthPortRef p3 = port_of(all.fabric, node, fabric::MeshDir::E, 3);
    const auto d = fabric::decide_reroute(c, two.fabric, p0, {}, ReliabilityMode::Strict);
    REQUIRE(d.action == RerouteAction::Reroute);
    CHECK(d.fallback->link.near == p1);
    CHECK(two.fabric.routers[*d.fallback->near_router].mesh->port().str() == "M0D9 E plane 1");
    // Plane 1's link down too: the idle links of planes 2 and 3 are left, the lower channel
    // first.
    const auto idle = fabric::decide_reroute(c, two.fabric, p0, {p1}, ReliabilityMode::Strict);
    REQUIRE(idle.action == RerouteAction::Reroute);
    CHECK(idle.fallback->link.near == std::min(p2, p3));
    CHECK_FALSE(idle.fallback->near_router.has_value());
    // All four down: relaxed removes the link.
    const auto none =
        fabric::decide_reroute(c, two.fabric, p0, {p1, p2, p3}, ReliabilityMode::Relaxed);
    CHECK(none.action == RerouteAction::RemoveLink);
    // Four planes: each router's configured fallback is its pair's (0-1, 2-3), and a failed link
    // goes there first, whatever the channel numbers.
    const EthPortRef q0 = port_of(all.fabric, node, fabric::MeshDir::E, 0);
    const auto at = [&](EthPortRef p) {
        for (size_t i = 0; i < all.fabric.routers.size(); ++i) {
            const auto& r = all.fabric.routers[i];
            if (r.chip == p.chip && r.eth_channel == p.chan) return i;
        }
        FAIL("no router at " << p.str());
        return size_t{0};
    };
    CHECK(fabric::configured_fallback(all.fabric, at(p2)) == at(p3));
    CHECK(fabric::configured_fallback(all.fabric, at(p3)) == at(p2));
    CHECK(fabric::configured_fallback(all.fabric, at(q0)) ==
          at(port_of(all.fabric, node, fabric::MeshDir::E, 1)));
    for (const EthPortRef failed : {p2, p3}) {
        const auto d = fabric::decide_reroute(c, all.fabric, failed, {}, ReliabilityMode::Strict);
        REQUIRE(d.action == RerouteAction::Reroute);
        CHECK(d.fallback->near_router == fabric::configured_fallback(all.fabric, at(failed)));
    }
}

TEST_CASE("reroute: a port without a router of the fabric is refused", "[reroute]") {
    const auto plan = n300_line();
    const ClusterDescriptor& c = cluster("n300_cluster.yaml");
    CHECK(fabric::test::expect_error(fabric::ErrorCategory::BadInput, [&] {
              (void)fabric::decide_reroute(c, plan, {0, 9}, {}, ReliabilityMode::Relaxed);
          }) == "reroute: the fabric runs no router on chip 0 chan 9");
    CHECK(fabric::parse_reliability_mode("relaxed") == ReliabilityMode::Relaxed);
    CHECK(fabric::parse_reliability_mode("strict") == ReliabilityMode::Strict);
    CHECK_FALSE(fabric::parse_reliability_mode("Strict").has_value());
}
