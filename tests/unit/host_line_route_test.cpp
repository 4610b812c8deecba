// The line API (protocol/fabric.h "the line a worker's endpoint sends along"): the conversion of a
// line send into a 1D or 2D Route (line_unicast / line_multicast, exact hop words, destination
// nodes, round a ring), its refusals, what a router publishes (line_info), and the plans' lines
// (FabricPlan / MeshPlan::line_chips and RouterConfig::line_reach) on a t3k line and ring, the
// t3k 2x4 mesh, a 4x4 torus and the spec's 4 meshes.
#include <catch2/catch.hpp>
#include <vector>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/fabric_plan.h"
#include "fabric/mesh_plan.h"
#include "protocol/fabric.h"

namespace pf = protocol::fabric;
using fabric::ChipId;
using fabric::FabricDir;
using fabric::MeshDir;
using fabric::RouterPlacement;
using pf::LineCheck;
using pf::LineInfo;

namespace {

using fabric::test::cluster;
using fabric::test::wh_soc;

constexpr uint8_t kN = 0, kE = 1, kS = 2, kW = 3;

LineInfo line_1d(uint8_t reach) {
    return LineInfo{.reach = reach, .dir = pf::kLine1D};
}
// A router of device `device` of a rows x cols mesh facing `dir`.
LineInfo line_2d(uint8_t reach, uint8_t dir, uint16_t device, uint16_t rows, uint16_t cols,
                 uint16_t mesh = 0) {
    return LineInfo{
        .reach = reach, .dir = dir, .mesh = mesh, .device = device, .rows = rows, .cols = cols};
}

fabric::FabricPlan plan_1d(pf::Topology t, std::vector<ChipId> chips) {
    fabric::FabricOptions o;
    o.topology = t;
    o.chips = std::move(chips);
    return fabric::plan_fabric(cluster("t3k_cluster.yaml"), wh_soc(), o);
}

fabric::MeshPlan plan_2d(const std::string& graph, const std::string& cluster_file,
                         pf::Topology t) {
    fabric::MeshFabricOptions o;
    o.topology = t;
    o.planes = {0};
    return fabric::plan_mesh(fabric::test::mesh_graph(graph), cluster(cluster_file), wh_soc(), o);
}

}  // namespace

TEST_CASE("line route: 1D unicast and multicast are the 1D hop actions", "[line][protocol]") {
    const LineInfo l = line_1d(3);
    for (uint32_t hops = 1; hops <= 3; ++hops) {
        const pf::LineRoute u = pf::line_unicast(l, hops);
        INFO("hops " << hops);
        CHECK(u.check == LineCheck::Ok);
        CHECK(u.route == pf::Route(pf::route_unicast(hops)));
    }
    CHECK(pf::line_unicast(l, 3).route.hops == 0x1A);       // fwd, fwd, write
    CHECK(pf::line_multicast(l, 2, 2).route.hops == 0x1E);  // fwd, write+fwd, write
    CHECK(pf::line_multicast(l, 1, 3).route.hops == 0x1F);  // write+fwd, write+fwd, write
    CHECK(pf::line_multicast(l, 2, 2).route.ttl() == pf::kDefaultTtl);
    CHECK(pf::line_multicast(l, 2, 2).route.dst_node == 0);
}

TEST_CASE("line route: 2D along a row or column, every hop in the router's direction",
          "[line][protocol]") {
    // t3k 2x4, device 4 (row 1, col 0) facing E: 3 chips ahead.
    const LineInfo east = line_2d(3, kE, 4, 2, 4);
    const pf::LineRoute u3 = pf::line_unicast(east, 3);
    REQUIRE(u3.check == LineCheck::Ok);
    // E, E, then the arriving (W-facing) router writes: nibbles 2, 2, 8.
    CHECK(u3.route.hops == 0x822);
    CHECK(u3.route.ext == 0);
    CHECK(u3.route.flags_word == pf::kDefaultTtl);  // no branches: not a 2D rectangle multicast
    CHECK(u3.route.dst_node == pf::mesh_node_word(0, 7));
    CHECK(pf::line_unicast(east, 1).route.hops == 0x8);
    CHECK(pf::line_unicast(east, 1).route.dst_node == pf::mesh_node_word(0, 5));
    // The same route the dimension-ordered planner gives for that chip.
    CHECK(u3.route.hops == pf::mesh_route_xy(1, 0, 1, 3).route.hops);
    // Multicast to devices 6 and 7: forward at 5, write+forward at 6, write at 7.
    const pf::LineRoute m = pf::line_multicast(east, 2, 2);
    REQUIRE(m.check == LineCheck::Ok);
    CHECK(m.route.hops == 0x8A2);
    CHECK(m.route.dst_node == pf::mesh_node_word(0, 7));
    // Device 7 facing W, from the first chip on: write+forward twice, then write.
    const LineInfo west = line_2d(3, kW, 7, 2, 4, 5);
    CHECK(pf::line_multicast(west, 1, 3).route.hops == 0x2AA);
    CHECK(pf::line_multicast(west, 1, 3).route.dst_node == pf::mesh_node_word(5, 4));
    // Device 1 facing S: one chip below (device 5); the N-facing router there writes.
    const LineInfo south = line_2d(1, kS, 1, 2, 4);
    CHECK(pf::line_unicast(south, 1).route.hops == 0x1);
    CHECK(pf::line_unicast(south, 1).route.dst_node == pf::mesh_node_word(0, 5));
    // Device 5 facing N: device 1; the S-facing router writes.
    CHECK(pf::line_unicast(line_2d(1, kN, 5, 2, 4), 1).route.hops == 0x4);
}

TEST_CASE("line route: round a ring row of a torus, and routes of 16 hops", "[line][protocol]") {
    // 4x4 torus, device 6 (row 1, col 2) facing E: 7, 4, 5 (round the wrap link).
    const LineInfo east = line_2d(3, kE, 6, 4, 4);
    CHECK(pf::line_unicast(east, 1).route.dst_node == pf::mesh_node_word(0, 7));
    CHECK(pf::line_unicast(east, 2).route.dst_node == pf::mesh_node_word(0, 4));
    CHECK(pf::line_unicast(east, 3).route.dst_node == pf::mesh_node_word(0, 5));
    CHECK(pf::line_unicast(east, 3).route.hops == 0x822);
    // Device 1 facing N: 13, 9, 5 (up past row 0).
    const LineInfo north = line_2d(3, kN, 1, 4, 4);
    CHECK(pf::line_unicast(north, 1).route.dst_node == pf::mesh_node_word(0, 13));
    CHECK(pf::line_unicast(north, 3).route.dst_node == pf::mesh_node_word(0, 5));
    CHECK(pf::line_unicast(north, 3).route.hops == 0x411);
    // Device 2 facing W: 1, 0, 3.
    CHECK(pf::line_unicast(line_2d(3, kW, 2, 4, 4), 3).route.dst_node == pf::mesh_node_word(0, 3));
    // 16 hops along a 1x17 row: commands 8..15 go to route_ext.
    const pf::LineRoute far = pf::line_unicast(line_2d(16, kE, 0, 1, 17), 16);
    REQUIRE(far.check == LineCheck::Ok);
    CHECK(far.route.hops == 0x22222222);
    CHECK(far.route.ext == 0x82222222);
    CHECK(far.route.dst_node == pf::mesh_node_word(0, 16));
    CHECK(pf::line_unicast(line_1d(16), 16).route.hops == pf::route_unicast(16));
}

TEST_CASE("line route: bad sends are refused, never routed", "[line][protocol]") {
    for (const LineInfo& l : {line_1d(3), line_2d(3, kE, 4, 2, 4)}) {
        INFO("dir " << static_cast<int>(l.dir));
        CHECK(pf::line_unicast(l, 0).check == LineCheck::NoHops);
        CHECK(pf::line_unicast(l, 4).check == LineCheck::BeyondReach);
        CHECK(pf::line_unicast(l, 0xFFFFFFFF).check == LineCheck::BeyondReach);
        CHECK(pf::line_multicast(l, 0, 2).check == LineCheck::NoHops);
        CHECK(pf::line_multicast(l, 1, 0).check == LineCheck::NoHops);
        CHECK(pf::line_multicast(l, 2, 3).check == LineCheck::BeyondReach);
        CHECK(pf::line_multicast(l, 1, 4).check == LineCheck::BeyondReach);
        CHECK(pf::line_multicast(l, 0xFFFFFFFF, 2).check == LineCheck::BeyondReach);
        CHECK(pf::line_multicast(l, 2, 0xFFFFFFFF).check == LineCheck::BeyondReach);
        CHECK(pf::line_multicast(l, 3, 1).check == LineCheck::Ok);
        CHECK(pf::line_unicast(l, 0).route == pf::Route{});
    }
    // No line published: reach 0 (a router with none, a connection not open), or a shape that
    // is not one.
    CHECK(pf::line_unicast(LineInfo{}, 1).check == LineCheck::NoLine);
    CHECK(pf::line_unicast(line_1d(0), 1).check == LineCheck::NoLine);
    CHECK(pf::line_unicast(line_1d(17), 1).check == LineCheck::NoLine);
    CHECK(pf::line_unicast(line_2d(1, 4, 0, 2, 4), 1).check == LineCheck::NoLine);
    CHECK(pf::line_unicast(line_2d(1, kE, 8, 2, 4), 1).check == LineCheck::NoLine);
    CHECK(pf::line_unicast(line_2d(1, kE, 0, 0, 4), 1).check == LineCheck::NoLine);
}

TEST_CASE("line route: what a router publishes from its configuration", "[line][protocol]") {
    pf::RouterConfig c{};
    pf::MeshRouterConfig m{};
    m.dir = kS;
    m.mesh_id = 2;
    m.device_id = 5;
    m.mesh_rows = 3;
    m.mesh_cols = 4;
    c.topology = static_cast<uint32_t>(pf::Topology::Ring);
    c.line_reach = 7;
    LineInfo l = pf::line_info(c, m);  // 1D: the mesh config is not looked at
    CHECK(l.reach == 7);
    CHECK(l.dir == pf::kLine1D);
    CHECK(l.mesh == 0);
    CHECK(l.device == 0);
    c.topology = static_cast<uint32_t>(pf::Topology::Mesh);
    c.line_reach = 1;
    l = pf::line_info(c, m);
    CHECK(l.reach == 1);
    CHECK(l.dir == kS);
    CHECK(l.mesh == 2);
    CHECK(l.device == 5);
    CHECK(l.rows == 3);
    CHECK(l.cols == 4);
    c.line_reach = pf::kMaxLineHops + 1;  // more than a header holds: no line
    CHECK(pf::line_info(c, m).reach == 0);
    // Its words as the router stores them: reach, dir, mesh in word 0; device, rows; cols.
    const pf::LineInfoWords u{line_2d(3, kE, 0x0102, 0x0304, 0x0506, 0x0708)};
    CHECK(u.w[0] == 0x07080103);
    CHECK(u.w[1] == 0x03040102);
    CHECK(u.w[2] == 0x00000506);
}

TEST_CASE("line route: a 1D plan's lines, and the reach each router publishes", "[line][plan]") {
    const fabric::FabricPlan line = plan_1d(pf::Topology::Line, {0, 1, 2, 3});
    CHECK(line.line_chips(line.router(0, FabricDir::East)) == std::vector<ChipId>{1, 2, 3});
    CHECK(line.line_chips(line.router(2, FabricDir::East)) == std::vector<ChipId>{3});
    CHECK(line.line_chips(line.router(3, FabricDir::West)) == std::vector<ChipId>{2, 1, 0});
    CHECK(line.line_chips(line.router(1, FabricDir::West)) == std::vector<ChipId>{0});
    const uint32_t east_reach[] = {3, 2, 1}, west_reach[] = {0, 1, 2, 3};
    for (const RouterPlacement& r : line.routers) {
        INFO("chip " << r.chip << " " << fabric::dir_name(r.dir));
        CHECK(r.config.line_reach ==
              (r.dir == FabricDir::East ? east_reach[r.chip] : west_reach[r.chip]));
    }
    const fabric::FabricPlan ring = plan_1d(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    CHECK(ring.line_chips(ring.router(7, FabricDir::East)) ==
          std::vector<ChipId>{6, 5, 4, 0, 1, 2, 3});
    CHECK(ring.line_chips(ring.router(7, FabricDir::West)) ==
          std::vector<ChipId>{3, 2, 1, 0, 4, 5, 6});
    for (const RouterPlacement& r : ring.routers) CHECK(r.config.line_reach == 7);
}

TEST_CASE("line route: a 2D plan's lines along rows and columns", "[line][plan]") {
    // t3k 2x4 (device d is chip d): rows 0-3 and 4-7, no wrap.
    const fabric::MeshPlan t3k =
        plan_2d("t3k_mesh_graph.yaml", "t3k_cluster.yaml", pf::Topology::Mesh);
    CHECK(t3k.line_chips(t3k.router({0, 4}, MeshDir::E, 0)) == std::vector<ChipId>{5, 6, 7});
    CHECK(t3k.line_chips(t3k.router({0, 2}, MeshDir::W, 0)) == std::vector<ChipId>{1, 0});
    CHECK(t3k.line_chips(t3k.router({0, 3}, MeshDir::S, 0)) == std::vector<ChipId>{7});
    CHECK(t3k.line_chips(t3k.router({0, 6}, MeshDir::N, 0)) == std::vector<ChipId>{2});
    for (const RouterPlacement& r : t3k.fabric.routers) {
        const uint32_t col = r.mesh->node.device % 4;
        const uint32_t want = r.mesh->dir == MeshDir::E   ? 3 - col
                              : r.mesh->dir == MeshDir::W ? col
                                                          : 1;
        INFO(r.mesh->port().str());
        CHECK(r.config.line_reach == want);
    }
    // 4x4 torus: every line is a ring of 4, round the wrap link.
    const fabric::MeshPlan torus =
        plan_2d("mesh_4x4_mesh_graph.yaml", "torus_4x4_cluster.yaml", pf::Topology::Torus);
    CHECK(torus.line_chips(torus.router({0, 6}, MeshDir::E, 0)) == std::vector<ChipId>{7, 4, 5});
    CHECK(torus.line_chips(torus.router({0, 1}, MeshDir::N, 0)) == std::vector<ChipId>{13, 9, 5});
    for (const RouterPlacement& r : torus.fabric.routers) CHECK(r.config.line_reach == 3);
    // The spec's 4 meshes of 3x3: an inter-mesh router has no line; the others stay in their mesh.
    const fabric::MeshPlan spec = plan_2d("spec_4mesh_3x3_mesh_graph.yaml",
                                          "spec_4mesh_3x3_cluster.yaml", pf::Topology::Mesh);
    size_t inter = 0;
    for (const RouterPlacement& r : spec.fabric.routers) {
        INFO(r.mesh->port().str());
        const auto chips = spec.line_chips(r);
        CHECK(r.config.line_reach == chips.size());
        for (ChipId c : chips) CHECK(spec.node_of(c).mesh == r.mesh->node.mesh);
        if (r.mesh->inter_mesh) {
            ++inter;
            CHECK(chips.empty());
        }
    }
    CHECK(inter != 0);
}

TEST_CASE("line route: line_chips of a router of the other kind of plan is named", "[line][plan]") {
    const fabric::FabricPlan line = plan_1d(pf::Topology::Line, {0, 1});
    const fabric::MeshPlan t3k =
        plan_2d("t3k_mesh_graph.yaml", "t3k_cluster.yaml", pf::Topology::Mesh);
    CHECK(fabric::test::expect_error(fabric::ErrorCategory::BadInput, [&] {
              (void)t3k.line_chips(line.router(0, FabricDir::East));
          }) == "mesh plan: line_chips of router chip 0 core 8-0: not a mesh router");
    CHECK(fabric::test::expect_error(
              fabric::ErrorCategory::BadInput,
              [&] { (void)t3k.fabric.line_chips(t3k.fabric.routers.front()); }) ==
          "fabric plan: line_chips of a mesh plan: its routers face mesh directions "
          "(use MeshPlan)");
}
