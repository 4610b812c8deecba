// The 2D fabric plan (plan_mesh) over the shipped mesh graphs and cluster descriptors: router
// placement, configs, neighbours and exit tables exact for t3k (mesh), a 4x4 torus and the spec's
// 4-mesh cluster; the worker routes of MeshPlan::send; every bad input with its message.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/routing_tables.h"
#include "fabric/soc_descriptor.h"
#include "hal/arch_map.h"
#include "protocol/fabric.h"
#include "protocol/test_mailbox.h"

using Catch::Matchers::Contains;
using fabric::ClusterDescriptor;
using fabric::ErrorCategory;
using fabric::MeshDir;
using fabric::MeshFabricOptions;
using fabric::MeshGraph;
using fabric::MeshNode;
using fabric::MeshPlan;
using fabric::plan_mesh;
using fabric::RouterPlacement;
using fabric::SocDescriptor;
using fabric::test::expect_error;
namespace pf = protocol::fabric;

namespace {

using fabric::test::bh_soc;
using fabric::test::cluster;
using fabric::test::wh_soc;
const MeshGraph& graph(const std::string& file) {
    return fabric::test::mesh_graph(file);
}

MeshFabricOptions opts(pf::Topology t, std::vector<uint32_t> planes = {0}) {
    MeshFabricOptions o;
    o.topology = t;
    o.planes = std::move(planes);
    return o;
}

MeshPlan t3k_plan(std::vector<uint32_t> planes = {0}) {
    return plan_mesh(graph("t3k_mesh_graph.yaml"), cluster("t3k_cluster.yaml"), wh_soc(),
                     opts(pf::Topology::Mesh, std::move(planes)));
}
MeshPlan torus_plan() {
    return plan_mesh(graph("mesh_4x4_mesh_graph.yaml"), cluster("torus_4x4_cluster.yaml"), wh_soc(),
                     opts(pf::Topology::Torus));
}
MeshPlan spec_plan(std::vector<uint32_t> planes = {0}) {
    return plan_mesh(graph("spec_4mesh_3x3_mesh_graph.yaml"),
                     cluster("spec_4mesh_3x3_cluster.yaml"), wh_soc(),
                     opts(pf::Topology::Mesh, std::move(planes)));
}

std::string bad_plan(const MeshGraph& g, const ClusterDescriptor& c, const SocDescriptor& s,
                     const MeshFabricOptions& o) {
    return expect_error(ErrorCategory::BadInput, [&] { (void)plan_mesh(g, c, s, o); });
}

uint32_t neighbor_word(const SocDescriptor& soc, uint32_t channel) {
    const fabric::CoreCoord c = soc.eth_core(channel);
    return pf::kMeshNeighborPresent | c.y << 8 | c.x;
}

// A router's channel use as 0/1 per sender channel (slot counts divided out).
std::vector<uint32_t> sender_use(const RouterPlacement& r) {
    std::vector<uint32_t> v;
    for (uint32_t s : r.config.sender_slots) v.push_back(s != 0 ? 1 : 0);
    return v;
}

const uint32_t N = static_cast<uint32_t>(MeshDir::N), E = static_cast<uint32_t>(MeshDir::E),
               S = static_cast<uint32_t>(MeshDir::S), W = static_cast<uint32_t>(MeshDir::W);

}  // namespace

TEST_CASE("mesh plan: the shipped 2D cluster descriptors load", "[mesh][plan]") {
    CHECK(cluster("mesh_4x4_cluster.yaml").chip_count() == 16);
    CHECK(cluster("mesh_4x4_cluster.yaml").connections().size() == 48);
    CHECK(cluster("torus_4x4_cluster.yaml").chip_count() == 16);
    CHECK(cluster("torus_4x4_cluster.yaml").connections().size() == 64);
    CHECK(cluster("spec_4mesh_3x3_cluster.yaml").chip_count() == 36);
    CHECK(cluster("spec_4mesh_3x3_cluster.yaml").connections().size() == 106);
    const MeshGraph& g = graph("mesh_4x4_mesh_graph.yaml");
    CHECK(g.mesh_count() == 1);
    CHECK(g.mesh(0).rows == 4);
    CHECK(g.mesh(0).cols == 4);
    CHECK(g.chip_spec().ports_per_direction == 2);
}

TEST_CASE("mesh plan: t3k 2x4 mesh, every router exact", "[mesh][plan]") {
    const MeshPlan plan = t3k_plan({0, 1});
    const auto& routers = plan.fabric.routers;
    // 6 E-W edges + 4 N-S edges, two routers each, on two planes.
    REQUIRE(routers.size() == 40);
    CHECK(plan.fabric.topology == pf::Topology::Mesh);
    CHECK(plan.fabric.arch == hal::Arch::WormholeB0);
    CHECK(plan.fabric.chips == std::vector<fabric::ChipId>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(plan.planes == std::vector<uint32_t>{0, 1});

    // Order: node, plane, direction. M0D0 (chip 0): E = channels 2, 3 to chip 1's 4, 5; S =
    // channels 8, 9 to chip 4's 0, 1 (t3k_cluster.yaml).
    struct Want {
        MeshDir dir;
        uint32_t plane, chan, peer_chip, peer_chan;
    };
    const Want m0d0[] = {{MeshDir::E, 0, 2, 1, 4},
                         {MeshDir::S, 0, 8, 4, 0},
                         {MeshDir::E, 1, 3, 1, 5},
                         {MeshDir::S, 1, 9, 4, 1}};
    for (size_t i = 0; i < 4; ++i) {
        const RouterPlacement& r = routers[i];
        INFO("router " << i);
        REQUIRE(r.mesh);
        CHECK(r.mesh->node == MeshNode{0, 0});
        CHECK(r.mesh->dir == m0d0[i].dir);
        CHECK(r.mesh->plane == m0d0[i].plane);
        CHECK(r.chip == 0);
        CHECK(r.eth_channel == m0d0[i].chan);
        CHECK(r.core.core == wh_soc().eth_core(m0d0[i].chan));
        CHECK(r.config.chip_id == 0);
        CHECK(r.config.eth_channel == m0d0[i].chan);
        CHECK(r.config.peer_chip_id == m0d0[i].peer_chip);
        CHECK(r.config.peer_eth_channel == m0d0[i].peer_chan);
        CHECK(r.config.is_master == 1);
        CHECK(&plan.router({0, 0}, m0d0[i].dir, m0d0[i].plane) == &r);
    }

    // M0D5 (chip 5, row 1, column 1): N to chip 1 (5.0 <-> 1.8), E to chip 6 (5.2 <-> 6.4),
    // W to chip 4 (5.4 <-> 4.2); no S.
    const RouterPlacement& n = plan.router({0, 5}, MeshDir::N, 0);
    const RouterPlacement& e = plan.router({0, 5}, MeshDir::E, 0);
    const RouterPlacement& w = plan.router({0, 5}, MeshDir::W, 0);
    CHECK(n.eth_channel == 0);
    CHECK(n.config.peer_chip_id == 1);
    CHECK(n.config.peer_eth_channel == 8);
    CHECK(n.config.is_master == 0);
    CHECK(e.eth_channel == 2);
    CHECK(e.config.peer_chip_id == 6);
    CHECK(e.config.peer_eth_channel == 4);
    CHECK(e.config.is_master == 1);
    CHECK(w.eth_channel == 4);
    CHECK(w.config.peer_chip_id == 4);
    CHECK(w.config.peer_eth_channel == 2);
    CHECK(w.config.is_master == 0);
    CHECK(plan.router({0, 5}, MeshDir::N, 1).eth_channel == 1);
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                (void)plan.router({0, 5}, MeshDir::S, 0);
                            }),
               Contains("M0D5 has no S router on plane 0"));

    // The N router of M0D5 knows the E and W routers of its chip on plane 0; ch0, ch1+E, ch1+W.
    const pf::MeshRouterConfig& nc = n.mesh->config;
    CHECK(nc.magic == pf::kMeshConfigMagic);
    CHECK(nc.dir == N);
    CHECK(nc.neighbor[N] == neighbor_word(wh_soc(), 1));  // plane 1's N router: the fallback
    CHECK(nc.neighbor[E] == neighbor_word(wh_soc(), 2));
    CHECK(nc.neighbor[E] == (pf::kMeshNeighborPresent | 0 << 8 | 8));  // channel 2 is core 8-0
    CHECK(nc.neighbor[S] == 0);
    CHECK(nc.neighbor[W] == neighbor_word(wh_soc(), 4));
    CHECK(nc.mesh_id == 0);
    CHECK(nc.device_id == 5);
    CHECK(nc.mesh_rows == 2);
    CHECK(nc.mesh_cols == 4);
    CHECK(nc.inter_mesh == 0);
    CHECK(nc.exit_dirs == 0);
    CHECK(nc.exit_count == 1);
    CHECK(n.mesh->exit_table == std::vector<uint32_t>{0});
    // One mesh: no VC1 channels (ch5..ch8). Two planes: ch1 + own side from the fallback.
    CHECK(sender_use(n) == std::vector<uint32_t>{1, 1, 1, 0, 1, 0, 0, 0, 0});
    CHECK(sender_use(e) == std::vector<uint32_t>{1, 1, 1, 0, 1, 0, 0, 0, 0});
    CHECK(sender_use(w) == std::vector<uint32_t>{1, 1, 1, 0, 1, 0, 0, 0, 0});
    // Plane 1's routers know plane 1's.
    CHECK(plan.router({0, 5}, MeshDir::N, 1).mesh->config.neighbor[E] ==
          neighbor_word(wh_soc(), 3));

    // A corner: M0D3 (chip 3) has W and S only.
    const RouterPlacement& c3 = plan.router({0, 3}, MeshDir::W, 0);
    CHECK(sender_use(c3) == std::vector<uint32_t>{1, 0, 0, 1, 1, 0, 0, 0, 0});
    CHECK(c3.mesh->config.neighbor[S] == neighbor_word(wh_soc(), 8));
    CHECK(c3.mesh->config.neighbor[N] == 0);
    CHECK(c3.mesh->config.neighbor[E] == 0);

    // Every router: a mesh config, no dateline, no ring, no downstream, one master per link, the
    // automatic slots that fit, the same numbers on every used channel.
    std::map<std::pair<uint32_t, uint32_t>, const RouterPlacement*> by_port;
    for (const RouterPlacement& r : routers) by_port[{r.chip, r.eth_channel}] = &r;
    CHECK(by_port.size() == routers.size());
    for (const RouterPlacement& r : routers) {
        INFO(r.mesh->port().str());
        CHECK(r.config.magic == pf::kRouterConfigMagic);
        CHECK(r.config.topology == static_cast<uint32_t>(pf::Topology::Mesh));
        CHECK(r.config.dateline == 0);
        CHECK(r.config.ring_size == 0);
        CHECK(r.config.has_downstream == 0);
        // Automatic slots: 7 / 14 is the most that fits above the routing firmware's region.
        CHECK(r.config.sender_slots[0] == 7);
        for (uint32_t f = 0; f < 4; ++f)
            CHECK(r.config.sender_slots[pf::kMeshVc1Channel0 + f] == 0);  // one mesh: no VC1
        CHECK(r.config.receiver_slots[0] == 14);
        CHECK(r.config.receiver_slots[1] == 0);
        CHECK(r.layout.fits);
        CHECK(r.layout.end <= wh_soc().eth_l1_size());
        CHECK(r.layout.end == pf::router_layout(hal::kWormholeB0, r.config).end);
        CHECK(r.index_in_line == r.chip);
        // The fallback: the other plane's router on the same node and side, its VC0 channel
        // from our side one slot.
        const uint32_t own = static_cast<uint32_t>(r.mesh->dir);
        const RouterPlacement& twin = plan.router(r.mesh->node, r.mesh->dir, 1 - r.mesh->plane);
        CHECK(twin.config.peer_chip_id == r.config.peer_chip_id);
        CHECK(r.mesh->config.neighbor[own] ==
              (pf::kMeshNeighborPresent | twin.core.core.y << 8 | twin.core.core.x));
        CHECK(r.config.sender_slots[pf::kMeshVc0Channel0 + own] == 1);
        const RouterPlacement* peer =
            by_port.at({r.config.peer_chip_id, r.config.peer_eth_channel});
        CHECK(peer->config.peer_chip_id == r.chip);
        CHECK(peer->config.peer_eth_channel == r.eth_channel);
        CHECK(peer->mesh->dir == fabric::opposite(r.mesh->dir));
        CHECK(peer->mesh->plane == r.mesh->plane);
        CHECK(peer->config.is_master + r.config.is_master == 1);
        const auto wc = plan.worker_channel(r);
        CHECK(wc.router_x == r.core.core.x);
        CHECK(wc.router_y == r.core.core.y);
        CHECK(wc.slots_base == r.layout.sender_base[0]);
        CHECK(wc.num_slots == 7);
    }
    CHECK_THAT(
        expect_error(ErrorCategory::BadInput,
                     [&] { (void)plan.fabric.router(0, fabric::FabricDir::East); }),
        Contains("router(chip, east/west) of a mesh plan: its routers face mesh directions"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] { (void)plan.fabric.hops(0, 1, fabric::FabricDir::East); }),
               Contains("hops(east/west) of a mesh plan"));
    CHECK(plan.chip_of({0, 6}) == 6);
    CHECK(plan.node_of(6) == MeshNode{0, 6});
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)plan.node_of(8); }),
               Contains("mesh plan: chip 8 plays no device of"));
}

TEST_CASE("mesh plan: the Wormhole cold window leaves the default slots of the t3k and 4x4 mesh",
          "[mesh][plan]") {
    // hal ArchMap::router_cold takes the top 2 KiB of the router block: what the default slot
    // counts left free there. The most slots a router has, and where its block ends.
    const auto most = [](const MeshPlan& p) {
        const RouterPlacement* big = &p.fabric.routers.front();
        for (const RouterPlacement& r : p.fabric.routers)
            if (r.layout.end > big->layout.end) big = &r;
        return big;
    };
    const RouterPlacement* t3k = most(t3k_plan());
    CHECK(t3k->config.sender_slots[0] == 7);
    CHECK(t3k->config.receiver_slots[0] == 14);
    const RouterPlacement* mesh =
        most(plan_mesh(graph("mesh_4x4_mesh_graph.yaml"), cluster("mesh_4x4_cluster.yaml"),
                       wh_soc(), opts(pf::Topology::Mesh)));
    CHECK(mesh->config.sender_slots[0] == 6);
    CHECK(mesh->config.receiver_slots[0] == 12);
    CHECK(mesh->layout.end <= hal::kWormholeB0.router_cold.base);
    CHECK(hal::kWormholeB0.router_cold.end() == protocol::kTestMailboxWormholeB0);
}

TEST_CASE("mesh plan: slots are chosen for the largest router and checked when given",
          "[mesh][plan]") {
    auto o = opts(pf::Topology::Torus);
    o.payload_bytes = 4096;  // {8, 16} of 6 + 2 channels no longer fits a WH eth core
    const MeshPlan big = plan_mesh(graph("mesh_4x4_mesh_graph.yaml"),
                                   cluster("torus_4x4_cluster.yaml"), wh_soc(), o);
    const uint32_t s = big.fabric.routers.front().config.sender_slots[0];
    const uint32_t r = big.fabric.routers.front().config.receiver_slots[0];
    CHECK(s < 8);
    for (const RouterPlacement& p : big.fabric.routers) {
        CHECK(p.config.sender_slots[0] == s);
        CHECK(p.layout.fits);
        CHECK(p.layout.end <= wh_soc().eth_l1_size());
    }
    // The next larger choice does not fit the torus router's 6 sender + 2 receiver channels.
    auto bigger = o;
    bigger.sender_slots = s * 2;
    bigger.receiver_slots = r * 2;
    CHECK_THAT(bad_plan(graph("mesh_4x4_mesh_graph.yaml"), cluster("torus_4x4_cluster.yaml"),
                        wh_soc(), bigger),
               Contains(fmt::format("mesh plan: {} sender / {} receiver slots of 4160 B do not fit "
                                    "L1 on wormhole_b0 (torus",
                                    s * 2, r * 2)));
    auto given = opts(pf::Topology::Mesh);
    given.sender_slots = 3;
    given.receiver_slots = 5;
    const MeshPlan three =
        plan_mesh(graph("t3k_mesh_graph.yaml"), cluster("t3k_cluster.yaml"), wh_soc(), given);
    CHECK(three.fabric.routers.front().config.sender_slots[0] == 3);
    CHECK(three.fabric.routers.front().config.receiver_slots[0] == 5);
    given.sender_slots = 33;
    CHECK_THAT(bad_plan(graph("t3k_mesh_graph.yaml"), cluster("t3k_cluster.yaml"), wh_soc(), given),
               Contains("33 sender / 5 receiver slots: at most 32 per channel"));
}

TEST_CASE("mesh plan: 4x4 torus datelines, ring sizes and VC1", "[mesh][plan]") {
    const MeshPlan plan = torus_plan();
    const auto& routers = plan.fabric.routers;
    REQUIRE(routers.size() == 16 * 4);
    CHECK(plan.fabric.topology == pf::Topology::Torus);
    // The wrap links (torus_4x4_cluster.yaml: N 0-1, S 2-3, E 4-5, W 6-7).
    const RouterPlacement& e3 = plan.router({0, 3}, MeshDir::E, 0);
    CHECK(e3.eth_channel == 4);
    CHECK(e3.config.peer_chip_id == 0);
    CHECK(e3.config.peer_eth_channel == 6);
    CHECK(e3.config.is_master == 0);
    const RouterPlacement& w0 = plan.router({0, 0}, MeshDir::W, 0);
    CHECK(w0.config.peer_chip_id == 3);
    CHECK(w0.config.peer_eth_channel == 4);
    CHECK(w0.config.is_master == 1);
    const RouterPlacement& s12 = plan.router({0, 12}, MeshDir::S, 0);
    CHECK(s12.eth_channel == 2);
    CHECK(s12.config.peer_chip_id == 0);
    CHECK(s12.config.peer_eth_channel == 0);
    const RouterPlacement& n0 = plan.router({0, 0}, MeshDir::N, 0);
    CHECK(n0.config.peer_chip_id == 12);
    CHECK(n0.config.peer_eth_channel == 2);

    for (const RouterPlacement& r : routers) {
        const auto& m = *r.mesh;
        INFO(m.port().str());
        const uint32_t row = m.node.device / 4, col = m.node.device % 4;
        const bool wrap = (m.dir == MeshDir::E && col == 3) || (m.dir == MeshDir::W && col == 0) ||
                          (m.dir == MeshDir::S && row == 3) || (m.dir == MeshDir::N && row == 0);
        CHECK(r.config.dateline == (wrap ? 1u : 0u));
        CHECK(r.config.ring_size == 4);
        CHECK(r.config.topology == static_cast<uint32_t>(pf::Topology::Torus));
        // Every chip has all four routers: ch0, the three others on VC0, the opposite one on VC1
        // (straight on past the dateline); rx0 and rx1.
        std::vector<uint32_t> use{1, 1, 1, 1, 1, 0, 0, 0, 0};
        use[pf::kMeshVc0Channel0 + static_cast<uint32_t>(m.dir)] = 0;
        use[pf::kMeshVc1Channel0 + static_cast<uint32_t>(fabric::opposite(m.dir))] = 1;
        CHECK(sender_use(r) == use);
        CHECK(r.config.receiver_slots[0] != 0);
        CHECK(r.config.receiver_slots[1] == r.config.receiver_slots[0]);
        for (MeshDir d : fabric::kMeshDirs) {
            CHECK((m.config.neighbor[static_cast<uint32_t>(d)] != 0) == (d != m.dir));
        }
        CHECK(m.config.mesh_rows == 4);
        CHECK(m.config.mesh_cols == 4);
    }
    // A 3 x 5 torus: ring_size is the columns for E/W routers and the rows for N/S ones.
    const std::string text =
        "ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 1, E: 1, S: 1, W: 1}}\n"
        "Board: [{name: B, type: Mesh, topology: [3, 5]}]\n"
        "Mesh: [{id: 0, board: B}]\nGraph: []\n";
    std::string yaml = "arch: {";
    for (uint32_t c = 0; c < 15; ++c) yaml += fmt::format("{}{}: wormhole_b0", c ? ", " : "", c);
    yaml += "}\nethernet_connections:\n";
    for (uint32_t c = 0; c < 15; ++c) {  // E 2 <-> W 3, S 1 <-> N 0
        const uint32_t east = c / 5 * 5 + (c + 1) % 5, south = (c + 5) % 15;
        yaml += fmt::format("  - [{{chip: {}, chan: 2}}, {{chip: {}, chan: 3}}]\n", c, east);
        yaml += fmt::format("  - [{{chip: {}, chan: 1}}, {{chip: {}, chan: 0}}]\n", c, south);
    }
    yaml += "chips_with_mmio: [{0: 0}]\n";
    const MeshPlan t35 = plan_mesh(MeshGraph::parse(text, "t35.yaml"),
                                   ClusterDescriptor::parse(yaml, "t35_cluster.yaml"), wh_soc(),
                                   opts(pf::Topology::Torus));
    CHECK(t35.fabric.routers.size() == 60);
    CHECK(t35.router({0, 7}, MeshDir::E, 0).config.ring_size == 5);
    CHECK(t35.router({0, 7}, MeshDir::W, 0).config.ring_size == 5);
    CHECK(t35.router({0, 7}, MeshDir::N, 0).config.ring_size == 3);
    CHECK(t35.router({0, 7}, MeshDir::S, 0).config.ring_size == 3);
    CHECK(t35.router({0, 14}, MeshDir::S, 0).config.dateline == 1);
    CHECK(t35.router({0, 14}, MeshDir::E, 0).config.dateline == 1);
    CHECK(t35.router({0, 14}, MeshDir::N, 0).config.dateline == 0);
}

TEST_CASE("mesh plan: routers that carry VC1 get their fallback's VC1 channel too",
          "[mesh][plan]") {
    // The spec's four meshes, planes 0 and 1: VC1 carries traffic from other meshes. Routers
    // inside a mesh fall back on their twin, VC0 and VC1; routers between meshes have none.
    const MeshPlan plan = spec_plan({0, 1});
    uint32_t with_fallback = 0;
    for (const RouterPlacement& r : plan.fabric.routers) {
        const auto& m = *r.mesh;
        INFO(m.port().str());
        const uint32_t own = static_cast<uint32_t>(m.dir);
        const bool fallback = m.config.neighbor[own] != 0;
        CHECK(fallback == (m.config.inter_mesh == 0));
        const uint32_t slots = fallback ? 1 : 0;
        CHECK(r.config.sender_slots[pf::kMeshVc0Channel0 + own] == slots);
        CHECK(r.config.sender_slots[pf::kMeshVc1Channel0 + own] == slots);
        with_fallback += fallback ? 1 : 0;
    }
    CHECK(with_fallback == 4 * 12 * 2 * 2);  // 12 links a mesh and plane, 2 ends, 2 planes
}

TEST_CASE("mesh plan: a torus with two planes pairs its routers as fallbacks, VC1 included",
          "[mesh][plan]") {
    // The 6U Galaxy cabled as a torus, four links per neighbour pair: planes 0 and 1 pair up.
    const MeshPlan plan = plan_mesh(graph("galaxy_8x4_torus_xy_mesh_graph.yaml"),
                                    cluster("clusters/galaxy_6u_torus_cluster.yaml"), wh_soc(),
                                    opts(pf::Topology::Torus, {0, 1}));
    REQUIRE(plan.fabric.routers.size() == 32 * 4 * 2);
    for (const RouterPlacement& r : plan.fabric.routers) {
        const auto& m = *r.mesh;
        INFO(m.port().str());
        const uint32_t own = static_cast<uint32_t>(m.dir);
        const RouterPlacement& twin = plan.router(m.node, m.dir, 1 - m.plane);
        CHECK(twin.config.peer_chip_id == r.config.peer_chip_id);
        CHECK(m.config.neighbor[own] ==
              (pf::kMeshNeighborPresent | twin.core.core.y << 8 | twin.core.core.x));
        // ch0, the three others on VC0, the opposite one on VC1, and the twin's VC0 and VC1
        // (its packets past the dateline stay on VC1) from our own side, one slot each.
        std::vector<uint32_t> use{1, 1, 1, 1, 1, 0, 0, 0, 0};
        use[pf::kMeshVc1Channel0 + static_cast<uint32_t>(fabric::opposite(m.dir))] = 1;
        use[pf::kMeshVc1Channel0 + own] = 1;
        CHECK(sender_use(r) == use);
        CHECK(r.config.sender_slots[pf::kMeshVc0Channel0 + own] == 1);
        CHECK(r.config.sender_slots[pf::kMeshVc1Channel0 + own] == 1);
    }
}

TEST_CASE("mesh plan: the spec's 4 meshes, exit tables and inter-mesh routers", "[mesh][plan]") {
    const MeshPlan plan = spec_plan({0, 1});
    const auto& routers = plan.fabric.routers;
    // Per plane: 4 meshes x 12 edges x 2 routers, and 5 cables x 2 routers.
    REQUIRE(routers.size() == 2 * (4 * 24 + 10));
    CHECK(plan.fabric.chips.size() == 36);
    CHECK(plan.chip_of({2, 8}) == 26);
    CHECK(plan.node_of(33) == MeshNode{3, 6});

    // M0D5 E (chip 5 channel 8) <-> M1D3 W (chip 12 channel 12).
    const RouterPlacement& out = plan.router({0, 5}, MeshDir::E, 0);
    CHECK(out.chip == 5);
    CHECK(out.eth_channel == 8);
    CHECK(out.config.peer_chip_id == 12);
    CHECK(out.config.peer_eth_channel == 12);
    CHECK(out.config.is_master == 1);
    CHECK(out.mesh->inter_mesh);
    CHECK(out.mesh->config.inter_mesh == 1);
    const RouterPlacement& in = plan.router({1, 3}, MeshDir::W, 1);
    CHECK(in.eth_channel == 13);
    CHECK(in.config.peer_chip_id == 5);
    CHECK(in.config.peer_eth_channel == 9);
    CHECK(in.config.is_master == 0);
    // M0D5's routers all know that E leaves the mesh; its E router is fed by N, S and W.
    for (MeshDir d : {MeshDir::N, MeshDir::E, MeshDir::S, MeshDir::W}) {
        CHECK(plan.router({0, 5}, d, 0).mesh->config.exit_dirs == pf::dir_bit(E));
    }
    // Four meshes: VC0 and VC1 from each other router (VC1: traffic that entered the mesh), and
    // rx1.
    CHECK(sender_use(out) == std::vector<uint32_t>{1, 1, 0, 1, 1, 1, 0, 1, 1});
    CHECK(out.config.receiver_slots[1] == out.config.receiver_slots[0]);
    CHECK(plan.router({0, 8}, MeshDir::N, 0).mesh->config.exit_dirs == pf::dir_bit(S));
    CHECK(plan.router({0, 4}, MeshDir::N, 0).mesh->config.exit_dirs == 0);
    // The one-way M2 -> M3 cable still has routers at both ends.
    CHECK(plan.router({3, 6}, MeshDir::W, 0).mesh->inter_mesh);
    CHECK(plan.router({3, 6}, MeshDir::W, 0).config.peer_chip_id == 26);

    // Exactly the ten cable ends of each plane are inter-mesh.
    std::vector<std::string> inter;
    for (const RouterPlacement& r : routers) {
        if (r.mesh->inter_mesh && r.mesh->plane == 0) inter.push_back(r.mesh->port().str());
        CHECK(r.mesh->inter_mesh ==
              (r.mesh->node.mesh != plan.node_of(r.config.peer_chip_id).mesh));
    }
    CHECK(inter == std::vector<std::string>{"M0D5 E plane 0", "M0D6 S plane 0", "M0D8 S plane 0",
                                            "M1D3 W plane 0", "M1D8 S plane 0", "M2D0 N plane 0",
                                            "M2D2 N plane 0", "M2D8 E plane 0", "M3D2 N plane 0",
                                            "M3D6 W plane 0"});

    // Every router's exit table is RoutingTables::l1_exit of its node, with the exit node's
    // inter-mesh port (l1_exit at the exit node itself gives that port's direction).
    for (const RouterPlacement& r : routers) {
        const MeshNode node = r.mesh->node;
        INFO(r.mesh->port().str());
        REQUIRE(r.mesh->exit_table.size() == 4);
        CHECK(r.mesh->config.exit_count == 4);
        for (uint32_t m = 0; m < 4; ++m) {
            const auto e = plan.tables.l1_exit(node.mesh, node.device, m);
            uint32_t want = 0;
            if (e) {
                const auto port = plan.tables.l1_exit(node.mesh, e->exit, m)->dir;
                want = pf::kMeshExitValid | static_cast<uint32_t>(port) << 8 | e->exit;
            }
            CHECK(r.mesh->exit_table[m] == want);
        }
    }
    // Hand-checked words (seeds/000 §2.2.1.2.1): mesh 0 leaves for 1 at D5 (E), for 2 at D6 or
    // D8 (S, the nearer), for 3 through mesh 1 at D5; mesh 3 reaches mesh 2 through mesh 1 at D2.
    const auto& t00 = plan.router({0, 0}, MeshDir::E, 0).mesh->exit_table;
    CHECK(t00 == std::vector<uint32_t>{0, pf::kMeshExitValid | E << 8 | 5,
                                       pf::kMeshExitValid | S << 8 | 6,
                                       pf::kMeshExitValid | E << 8 | 5});
    CHECK(plan.router({0, 2}, MeshDir::W, 0).mesh->exit_table[2] ==
          (pf::kMeshExitValid | S << 8 | 8));
    CHECK(plan.router({3, 8}, MeshDir::N, 1).mesh->exit_table ==
          std::vector<uint32_t>{pf::kMeshExitValid | N << 8 | 2, pf::kMeshExitValid | N << 8 | 2,
                                pf::kMeshExitValid | N << 8 | 2, 0});
}

TEST_CASE("mesh plan: send() routes, hand-checked nibbles", "[mesh][plan]") {
    const MeshPlan plan = spec_plan();
    // Inside mesh 0: D0 (0,0) -> D8 (2,2): E E S S; the last chip's N router writes.
    auto s = plan.send({0, 0}, {0, 8}, 0);
    CHECK(s.router == &plan.router({0, 0}, MeshDir::E, 0));
    CHECK(s.hops == 4);
    CHECK(s.route.hops == 0x1442);
    CHECK(s.route.ext == 0);
    // No branches; the TTL of the plan: one more than a route through all 36 chips could take.
    CHECK(s.route.flags_word == 36);
    CHECK(s.route.ttl() == plan.fabric.ttl());
    CHECK(s.route.dst_node == pf::mesh_node_word(0, 8));
    CHECK(s.route.dst_node == 0x00080000);
    // One hop north: the S router of D1 writes.
    s = plan.send({0, 4}, {0, 1}, 0);
    CHECK(s.router == &plan.router({0, 4}, MeshDir::N, 0));
    CHECK(s.hops == 1);
    CHECK(s.route.hops == 0x4);
    // Two hops west in mesh 1.
    s = plan.send({1, 5}, {1, 3}, 0);
    CHECK(s.router == &plan.router({1, 5}, MeshDir::W, 0));
    CHECK(s.route.hops == 0x28);
    CHECK(s.route.dst_node == 0x00030001);

    // M0D0 -> M3D8: mesh 0 -> 1 -> 3; to exit D5 (E E S), out E; the entry router (M1D3 W)
    // routes on, so the last command is 0.
    s = plan.send({0, 0}, {3, 8}, 0);
    CHECK(s.router == &plan.router({0, 0}, MeshDir::E, 0));
    CHECK(s.router->chip == 0);
    CHECK(s.router->eth_channel == 8);
    CHECK(s.hops == 4);
    CHECK(s.route.hops == 0x0242);
    CHECK(s.route.ext == 0);
    CHECK(s.route.dst_node == 0x00080003);
    // M3D0 -> M2D4: mesh 3 -> 1 (-> 0 -> 2): to exit D2 (E E), out N.
    s = plan.send({3, 0}, {2, 4}, 0);
    CHECK(s.router == &plan.router({3, 0}, MeshDir::E, 0));
    CHECK(s.hops == 3);
    CHECK(s.route.hops == 0x012);
    CHECK(s.route.dst_node == pf::mesh_node_word(2, 4));
    // From the exit node itself: one hop, out through the cable.
    s = plan.send({0, 6}, {2, 0}, 0);
    CHECK(s.router == &plan.router({0, 6}, MeshDir::S, 0));
    CHECK(s.router->mesh->inter_mesh);
    CHECK(s.hops == 1);
    CHECK(s.route.hops == 0);
    CHECK(s.route.dst_node == 0x00000002);

    // On a torus, inside the mesh: X then Y, each the shorter way round. (0,0) -> (3,3) on 4x4:
    // one hop W over the wrap, one N over the wrap; the N router of (0,3)... then (3,3) writes.
    const MeshPlan torus = torus_plan();
    s = torus.send({0, 0}, {0, 15}, 0);
    CHECK(s.hops == 2);
    CHECK(s.router->mesh->dir == fabric::MeshDir::W);
    CHECK(s.route.hops == 0x41);  // at (0,3): on N (bit 0); at (3,3): its S router writes (bit 2)
    // A tie (two columns either way) goes E.
    s = torus.send({0, 0}, {0, 2}, 0);
    CHECK(s.router->mesh->dir == fabric::MeshDir::E);
    CHECK(s.hops == 2);
}

TEST_CASE("mesh plan: crossed channel numbers join the k-th link at both ends", "[mesh][plan]") {
    const std::string crossed =
        "arch: {0: wormhole_b0, 1: wormhole_b0}\n"
        "ethernet_connections:\n"
        "  - [{chip: 1, chan: 4}, {chip: 0, chan: 3}]\n"
        "  - [{chip: 0, chan: 2}, {chip: 1, chan: 5}]\n"
        "chips_with_mmio: [{0: 0}]\n";
    const MeshPlan plan =
        plan_mesh(graph("n300_mesh_graph.yaml"), ClusterDescriptor::parse(crossed, "x.yaml"),
                  wh_soc(), opts(pf::Topology::Mesh, {0, 1}));
    const auto ends = [&](MeshNode n, MeshDir d, uint32_t plane) {
        const auto& c = plan.router(n, d, plane).config;
        return fmt::format("{}:{}-{}:{}", c.chip_id, c.eth_channel, c.peer_chip_id,
                           c.peer_eth_channel);
    };
    CHECK(ends({0, 0}, MeshDir::E, 0) == "0:2-1:5");
    CHECK(ends({0, 1}, MeshDir::W, 0) == "1:5-0:2");
    CHECK(ends({0, 0}, MeshDir::E, 1) == "0:3-1:4");
    CHECK(ends({0, 1}, MeshDir::W, 1) == "1:4-0:3");
}

TEST_CASE("mesh plan: every bad input is named", "[mesh][plan]") {
    const MeshGraph& t3kg = graph("t3k_mesh_graph.yaml");
    const ClusterDescriptor& t3kc = cluster("t3k_cluster.yaml");
    const MeshGraph& specg = graph("spec_4mesh_3x3_mesh_graph.yaml");
    const ClusterDescriptor& specc = cluster("spec_4mesh_3x3_cluster.yaml");

    CHECK_THAT(bad_plan(specg, specc, wh_soc(), opts(pf::Topology::Mesh, {4})),
               Contains("mesh plan: routing plane 4 does not exist") &&
                   Contains("spec_4mesh_3x3_cluster.yaml has planes 0..1)"));
    CHECK_THAT(bad_plan(specg, specc, wh_soc(), opts(pf::Topology::Mesh, {0, 1, 0})),
               Contains("routing plane 0 is listed twice (0,1,0)"));
    CHECK_THAT(bad_plan(specg, specc, wh_soc(), opts(pf::Topology::Mesh, {})),
               Contains("no routing plane selected"));
    CHECK_THAT(bad_plan(specg, t3kc, wh_soc(), opts(pf::Topology::Mesh)),
               Contains("spec_4mesh_3x3_mesh_graph.yaml has 36 devices but cluster") &&
                   Contains("t3k_cluster.yaml has only 8 chip(s)"));
    CHECK_THAT(bad_plan(t3kg, t3kc, bh_soc(), opts(pf::Topology::Mesh)),
               Contains("mesh graph") && Contains("is wormhole_b0 but SoC descriptor") &&
                   Contains("is blackhole"));
    CHECK_THAT(bad_plan(t3kg, ClusterDescriptor::unconnected(hal::Arch::Blackhole, 8), bh_soc(),
                        opts(pf::Topology::Mesh)),
               Contains("is wormhole_b0 but cluster 8 unconnected blackhole chips is blackhole"));
    // Missing links (topology_map's tests have the messages): none at all, a plane the cluster
    // has no link for, a torus without its wrap cables.
    CHECK_THAT(bad_plan(t3kg, ClusterDescriptor::unconnected(hal::Arch::WormholeB0, 8), wh_soc(),
                        opts(pf::Topology::Mesh)),
               Contains("no chip can be M0D0: it needs 2 linked neighbour(s)"));
    CHECK_THAT(bad_plan(specg, specc, wh_soc(), opts(pf::Topology::Mesh, {2})),
               Contains("mesh plan: routing plane 2 does not exist"));
    CHECK_THAT(bad_plan(graph("mesh_4x4_mesh_graph.yaml"), cluster("mesh_4x4_cluster.yaml"),
                        wh_soc(), opts(pf::Topology::Torus)),
               Contains("M0D0 -W- M0D3 (torus wrap) needs 1 link"));
    CHECK_THAT(bad_plan(t3kg, t3kc, wh_soc(), opts(pf::Topology::Torus)),
               Contains("is a ring of 2 rows (N/S)"));
    // A torus of several meshes (both its VCs are taken inside the mesh).
    CHECK_THAT(
        bad_plan(specg, specc, wh_soc(), opts(pf::Topology::Torus)),
        Contains("spec_4mesh_3x3_mesh_graph.yaml has 4 meshes and a torus; a torus is one mesh"));
    {
        auto o = opts(pf::Topology::Line);
        CHECK_THAT(bad_plan(t3kg, t3kc, wh_soc(), o),
                   Contains("mesh plan: unknown topology 0 (mesh = 2, torus = 3)"));
        o = opts(pf::Topology::Mesh);
        o.payload_bytes = 100;
        CHECK_THAT(bad_plan(t3kg, t3kc, wh_soc(), o),
                   Contains("mesh plan: payload_bytes 100 must be a non-zero multiple of 16"));
        o = opts(pf::Topology::Mesh);
        o.sender_slots = 4;
        CHECK_THAT(bad_plan(t3kg, t3kc, wh_soc(), o), Contains("set both or neither"));
        o = opts(pf::Topology::Mesh);
        o.drain_timeout_us = 0;
        CHECK_THAT(bad_plan(t3kg, t3kc, wh_soc(), o),
                   Contains("mesh plan: drain_timeout_us must be > 0"));
    }
    // Two chips that would be neighbours twice: M0D0's E and S ports both cabled to M1D0.
    {
        const std::string text =
            "ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 1, E: 1, S: 1, W: 1}}\n"
            "Board: [{name: One, type: Mesh, topology: [1, 1]}]\n"
            "Mesh: [{id: 0, board: One}, {id: 1, board: One}]\n"
            "Graph: [[[0, 0, E0], [1, 0, W0]], [[1, 0, W0], [0, 0, E0]],\n"
            "        [[0, 0, S0], [1, 0, N0]], [[1, 0, N0], [0, 0, S0]]]\n";
        const std::string two =
            "arch: {0: wormhole_b0, 1: wormhole_b0}\n"
            "ethernet_connections:\n"
            "  - [{chip: 0, chan: 2}, {chip: 1, chan: 5}]\n"
            "  - [{chip: 0, chan: 3}, {chip: 1, chan: 4}]\n"
            "chips_with_mmio: [{0: 0}]\n";
        CHECK_THAT(
            bad_plan(MeshGraph::parse(text, "twice.yaml"),
                     ClusterDescriptor::parse(two, "two.yaml"), wh_soc(), opts(pf::Topology::Mesh)),
            Contains("M0D0 (chip 0) and M1D0 (chip 1) would be neighbours in two "
                     "directions (E and S"));
    }
    // 65 meshes: more than an exit table holds.
    {
        std::string text =
            "ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 1, E: 1, S: 1, W: 1}}\n"
            "Board: [{name: One, type: Mesh, topology: [1, 1]}]\nMesh: [\n";
        for (uint32_t m = 0; m < 65; ++m) {
            text += fmt::format("  {{id: {}, board: One}}{}\n", m, m + 1 < 65 ? "," : "");
        }
        text += "]\nGraph: []\n";
        CHECK_THAT(bad_plan(MeshGraph::parse(text, "many.yaml"),
                            ClusterDescriptor::unconnected(hal::Arch::WormholeB0, 65), wh_soc(),
                            opts(pf::Topology::Mesh)),
                   Contains("many.yaml has 65 meshes; a router's exit table holds at most 64"));
    }

    // send() and router() on a plan.
    const MeshPlan plan = spec_plan();
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                (void)plan.send({0, 0}, {0, 0}, 0);
                            }),
               Contains("mesh plan: send from M0D0 to itself"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                (void)plan.send({0, 0}, {0, 1}, 1);
                            }),
               Contains("routing plane 1 is not brought up (planes 0)"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                (void)plan.send({0, 0}, {4, 1}, 0);
                            }),
               Contains("mesh 4"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                (void)plan.send({0, 9}, {0, 1}, 0);
                            }),
               Contains("unknown device 9 in mesh 0"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                (void)plan.chip_of({1, 9});
                            }),
               Contains("unknown device 9 in mesh 1"));
    // A one-way cable: mesh 1 cannot reach mesh 0.
    {
        const std::string text =
            "ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 1, E: 1, S: 1, W: 1}}\n"
            "Board: [{name: One, type: Mesh, topology: [1, 1]}]\n"
            "Mesh: [{id: 0, board: One}, {id: 1, board: One}]\n"
            "Graph: [[[0, 0, E0], [1, 0, W0]]]\n";
        const std::string yaml =
            "arch: {0: wormhole_b0, 1: wormhole_b0}\n"
            "ethernet_connections:\n"
            "  - [{chip: 0, chan: 8}, {chip: 1, chan: 12}]\n"
            "chips_with_mmio: [{0: 0}]\n";
        const MeshPlan one_way = plan_mesh(MeshGraph::parse(text, "oneway.yaml"),
                                           ClusterDescriptor::parse(yaml, "oneway_cluster.yaml"),
                                           wh_soc(), opts(pf::Topology::Mesh));
        CHECK(one_way.fabric.routers.size() == 2);
        CHECK(one_way.send({0, 0}, {1, 0}, 0).route.hops == 0);
        CHECK_THAT(expect_error(ErrorCategory::BadInput,
                                [&] {
                                    (void)one_way.send({1, 0}, {0, 0}, 0);
                                }),
                   Contains("no route from mesh 1 to mesh 0 in oneway.yaml"));
        CHECK(one_way.fabric.routers[1].mesh->exit_table ==
              std::vector<uint32_t>{0, 0});  // M1D0 cannot reach mesh 0
        CHECK(one_way.fabric.routers[0].mesh->exit_table ==
              std::vector<uint32_t>{0, pf::kMeshExitValid | E << 8 | 0});
    }
    // A route longer than 16 hops: a 1 x 18 line of chips.
    {
        const std::string text =
            "ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 1, E: 1, S: 1, W: 1}}\n"
            "Board: [{name: Long, type: Mesh, topology: [1, 18]}]\n"
            "Mesh: [{id: 0, board: Long}]\nGraph: []\n";
        std::string yaml = "arch: {";
        for (uint32_t c = 0; c < 18; ++c)
            yaml += fmt::format("{}{}: wormhole_b0", c ? ", " : "", c);
        yaml += "}\nethernet_connections:\n";
        for (uint32_t c = 0; c + 1 < 18; ++c) {
            yaml += fmt::format("  - [{{chip: {}, chan: 8}}, {{chip: {}, chan: 12}}]\n", c, c + 1);
        }
        yaml += "chips_with_mmio: [{0: 0}]\n";
        const MeshPlan line = plan_mesh(MeshGraph::parse(text, "long.yaml"),
                                        ClusterDescriptor::parse(yaml, "long_cluster.yaml"),
                                        wh_soc(), opts(pf::Topology::Mesh));
        CHECK(line.send({0, 0}, {0, 16}, 0).hops == 16);
        CHECK(line.send({0, 0}, {0, 16}, 0).route.ext == 0x82222222);
        CHECK_THAT(
            expect_error(ErrorCategory::BadInput,
                         [&] {
                             (void)line.send({0, 0}, {0, 17}, 0);
                         }),
            Contains("the route from M0D0 to M0D17 is 17 hops; a 2D route holds at most 16"));
    }
}

namespace {
// Every ordered pair of distinct devices of the plan (across meshes too).
std::vector<std::pair<MeshNode, MeshNode>> all_pairs(const MeshPlan& p) {
    std::vector<MeshNode> nodes;
    for (const auto& m : p.tables.graph().meshes()) {
        for (uint32_t d = 0; d < m.device_count(); ++d) nodes.push_back({m.id, d});
    }
    std::vector<std::pair<MeshNode, MeshNode>> out;
    for (const auto& a : nodes) {
        for (const auto& b : nodes) {
            if (!(a == b)) out.push_back({a, b});
        }
    }
    return out;
}
std::string hop_names(const std::vector<fabric::MeshHop>& hops) {
    std::string s;
    for (const auto& h : hops) {
        s += h.router->mesh->node.str() + " " + fabric::dir_letter(h.router->mesh->dir) +
             (h.vc ? "'" : "") + ", ";
    }
    return s;
}
}  // namespace

TEST_CASE("mesh plan: the links a packet crosses, entry routers included", "[mesh][plan]") {
    const MeshPlan spec = spec_plan();
    // M0D0 -> M3D8: to M0's exit to M1 (D5 E), M1's entry D3 on to its exit to M3 (D8 S), M3's
    // entry D2 on to D8. On VC1 (') from M1's entry router on.
    CHECK(hop_names(spec.links({0, 0}, {3, 8}, 0)) ==
          "M0D0 E, M0D1 E, M0D2 S, M0D5 E, M1D3 E', M1D4 E', M1D5 S', M1D8 S', M3D2 S', M3D5 S', ");
    // On a torus the VC changes past the dateline (the wrap) and back to 0 at a turn.
    const MeshPlan torus = torus_plan();
    CHECK(hop_names(torus.links({0, 3}, {0, 0}, 0)) == "M0D3 E, ");  // the wrap link itself: VC0
    CHECK(hop_names(torus.links({0, 2}, {0, 4}, 0)) == "M0D2 E, M0D3 E, M0D0 S, ");  // turned: VC0
    CHECK(hop_names(torus.links({0, 3}, {0, 1}, 0)) == "M0D3 E, M0D0 E', ");  // straight on: VC1
}

TEST_CASE("mesh plan: no cycle of waits for all-to-all, the detector finds one", "[mesh][plan]") {
    // Inside a mesh or a torus (datelines) all-to-all has no cycle of waits; between the spec's
    // meshes neither, as traffic that entered a mesh travels on VC1 and never waits behind the
    // mesh's own traffic to other meshes.
    for (const MeshPlan& p :
         {t3k_plan(), torus_plan(),
          plan_mesh(graph("mesh_4x4_mesh_graph.yaml"), cluster("mesh_4x4_cluster.yaml"), wh_soc(),
                    opts(pf::Topology::Mesh)),
          spec_plan()}) {
        const auto cycle = p.wait_cycle(all_pairs(p), 0);
        CHECK_FALSE(cycle.has_value());
        if (cycle) WARN(*cycle);
    }
    // A torus without its datelines closes every ring: found, and named router by router.
    MeshPlan flat = torus_plan();
    for (RouterPlacement& r : flat.fabric.routers) r.config.dateline = 0;
    const auto cycle = flat.wait_cycle(all_pairs(flat), 0);
    REQUIRE(cycle.has_value());
    INFO(*cycle);
    CHECK_THAT(*cycle, Catch::Matchers::Matches("(M0D[0-9]+ [NESW] -> )+M0D[0-9]+ [NESW]"));
}
