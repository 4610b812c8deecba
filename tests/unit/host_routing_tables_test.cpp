// Mesh graph descriptors and routing tables: the shipped descriptors, the spec's L0 and L1 tables
// (seeds/000 §2.2.1) reproduced exactly, source routes across meshes, routing planes, and one test
// per kind of bad descriptor.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "expect_error.h"
#include "fabric/mesh_graph.h"
#include "fabric/routing_tables.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using fabric::ErrorCategory;
using fabric::MeshDir;
using fabric::MeshGraph;
using fabric::MeshNode;
using fabric::RoutingTables;
using fabric::test::expect_error;

namespace {

const std::string kDir = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kSpec = kDir + "/spec_4mesh_3x3_mesh_graph.yaml";

// seeds/000 §2.2.1.1.1: "The intra-mesh routing table for devices on Mesh 0", row = source
// device, column = destination device, "-" = the device itself. Transcribed as printed.
const std::vector<std::vector<std::string>> kSpecL0Mesh0 = {
    // destination device 0 .. 8                                    source device
    {"-", "E", "EE", "S", "ES", "EES", "SS", "ESS", "EESS"},  // 0
    {"W", "-", "E", "WS", "S", "ES", "WSS", "SS", "ESS"},     // 1
    {"WW", "W", "-", "WWS", "WS", "S", "WWSS", "WSS", "SS"},  // 2
    {"N", "EN", "EEN", "-", "E", "EE", "S", "ES", "EES"},     // 3
    {"WN", "N", "EN", "W", "-", "E", "WS", "S", "ES"},        // 4
    {"WWN", "WN", "N", "WW", "W", "-", "WWS", "WS", "S"},     // 5
    {"NN", "ENN", "EENN", "N", "EN", "EEN", "-", "E", "EE"},  // 6
    {"WNN", "NN", "ENN", "WN", "N", "EN", "W", "-", "E"},     // 7
    {"WWNN", "WNN", "NN", "WWN", "WN", "N", "WW", "W", "-"},  // 8
};

// seeds/000 §2.2.1.2.1: "L1 routing table for devices on each of the 4 meshes": for source mesh
// m, row = node (device), column = destination mesh 0..3, entry = exit node, -1 for "-".
const std::vector<std::vector<std::vector<int>>> kSpecL1 = {
    {// Src Mesh 0
     {-1, 5, 6, 5},
     {-1, 5, 6, 5},
     {-1, 5, 8, 5},
     {-1, 5, 6, 5},
     {-1, 5, 6, 5},
     {-1, 5, 8, 5},
     {-1, 5, 6, 5},
     {-1, 5, 6, 5},
     {-1, 5, 8, 5}},
    {// Src Mesh 1
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8}},
    {// Src Mesh 2
     {0, 0, -1, 8},
     {0, 0, -1, 8},
     {2, 2, -1, 8},
     {0, 0, -1, 8},
     {0, 0, -1, 8},
     {2, 2, -1, 8},
     {0, 0, -1, 8},
     {0, 0, -1, 8},
     {2, 2, -1, 8}},
    {// Src Mesh 3
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1}},
};

std::vector<std::vector<int>> l1_table(const RoutingTables& t, fabric::MeshId mesh) {
    std::vector<std::vector<int>> out;
    const auto& g = t.graph();
    for (fabric::MeshDeviceId d = 0; d < g.mesh(mesh).device_count(); ++d) {
        std::vector<int> row;
        for (fabric::MeshId dst = 0; dst < g.mesh_count(); ++dst) {
            const auto e = t.l1_exit(mesh, d, dst);
            row.push_back(e ? static_cast<int>(e->exit) : -1);
        }
        out.push_back(row);
    }
    return out;
}

// A valid two-mesh descriptor (two 1x2 meshes, mesh 0's east edge device 1 cabled to mesh 1's
// device 0 on both planes, both directions); tests break one line at a time.
const std::string kSmall = R"(ChipSpec: {
  arch: wormhole_b0,
  ethernet_ports: {N: 2, E: 2, S: 2, W: 2}
}
Board: [
  {name: Pair, type: Mesh, topology: [1, 2]}
]
Mesh: [
  {id: 0, board: Pair, device_topology: [1, 2], host_topology: [1, 1], host_ranks: [[0]]},
  {id: 1, board: Pair, device_topology: [1, 2], host_topology: [1, 1], host_ranks: [[1]]}
]
Graph: [
  [[0, E0], [1, W0]],
  [[0, E1], [1, W1]],
  [[1, W0], [0, E0]],
  [[1, W1], [0, E1]]
]
)";

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    return text;
}

// Parse `text`, expect Error(BadDescriptor); the message names the file and a line.
std::string bad(const std::string& text) {
    const std::string msg =
        expect_error(ErrorCategory::BadDescriptor, [&] { MeshGraph::parse(text, "m.yaml"); });
    CHECK_THAT(msg, StartsWith("m.yaml:"));
    return msg;
}

// A ring of `n` 1x1 meshes, each cable in both directions.
std::string ring(uint32_t n) {
    std::string s =
        "ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 1, E: 1, S: 1, W: 1}}\n"
        "Board: [{name: One, type: Mesh, topology: [1, 1]}]\nMesh: [\n";
    for (uint32_t m = 0; m < n; ++m) {
        s += fmt::format("  {{id: {}, board: One}}{}\n", m, m + 1 < n ? "," : "");
    }
    s += "]\nGraph: [\n";
    for (uint32_t m = 0; m < n; ++m) {
        const uint32_t nx = (m + 1) % n;
        s += fmt::format("  [[{}, E0], [{}, W0]], [[{}, W0], [{}, E0]]{}\n", m, nx, nx, m,
                         m + 1 < n ? "," : "");
    }
    return s + "]\n";
}

}  // namespace

// ---- shipped descriptors ---------------------------------------------------------------------

TEST_CASE("mesh graph: n300, t3k and Galaxy descriptors", "[mesh]") {
    const auto n300 = MeshGraph::load_file(kDir + "/n300_mesh_graph.yaml");
    CHECK(n300.mesh_count() == 1);
    CHECK(n300.mesh(0).rows == 1);
    CHECK(n300.mesh(0).cols == 2);
    CHECK(n300.chip_spec().ports_per_direction == 2);
    CHECK(n300.links().empty());

    const auto t3k = MeshGraph::load_file(kDir + "/t3k_mesh_graph.yaml");
    CHECK(t3k.mesh(0).rows == 2);
    CHECK(t3k.mesh(0).cols == 4);
    CHECK(t3k.mesh(0).board == "T3K");
    const auto t3k_tables = RoutingTables::build(t3k);
    CHECK(t3k_tables.l0_string(0, 0, 7) == "EEES");
    CHECK(t3k_tables.l0_string(0, 7, 0) == "WWWN");

    const auto galaxy = MeshGraph::load_file(kDir + "/galaxy_8x4_mesh_graph.yaml");
    CHECK(galaxy.mesh(0).device_count() == 32);
    CHECK(galaxy.chip_spec().ports_per_direction == 4);
    const auto gt = RoutingTables::build(galaxy);
    CHECK(gt.l0_string(0, 0, 31) == "EEESSSSSSS");
    CHECK(gt.l0_string(0, 30, 1) == "WNNNNNNN");
    // WH: N 0-3, S 4-7, E 8-11, W 12-15 (the grouping of galaxy_8x4_cluster.yaml).
    CHECK(galaxy.chip_spec().eth_channel(MeshDir::N, 0) == 0u);
    CHECK(galaxy.chip_spec().eth_channel(MeshDir::S, 3) == 7u);
    CHECK(galaxy.chip_spec().eth_channel(MeshDir::E, 1) == 9u);
    CHECK(galaxy.chip_spec().eth_channel(MeshDir::W, 3) == 15u);
    CHECK_FALSE(galaxy.chip_spec().eth_channel(MeshDir::W, 4).has_value());
}

TEST_CASE("mesh graph: the spec cluster's devices and cables", "[mesh]") {
    const auto g = MeshGraph::load_file(kSpec);
    REQUIRE(g.mesh_count() == 4);
    for (const auto& m : g.meshes()) {
        CHECK(m.rows == 3);
        CHECK(m.cols == 3);
    }
    // Cables as (from, to) device pairs, one entry per direction and plane.
    std::set<std::pair<MeshNode, MeshNode>> pairs;
    for (const auto& l : g.links()) {
        CHECK(l.from.plane == l.to.plane);
        pairs.insert({l.from.node, l.to.node});
    }
    const std::set<std::pair<MeshNode, MeshNode>> expected = {
        {{0, 5}, {1, 3}}, {{1, 3}, {0, 5}}, {{0, 6}, {2, 0}}, {{2, 0}, {0, 6}}, {{0, 8}, {2, 2}},
        {{2, 2}, {0, 8}}, {{1, 8}, {3, 2}}, {{3, 2}, {1, 8}}, {{2, 8}, {3, 6}},
    };
    CHECK(pairs == expected);
    CHECK(g.links().size() == expected.size() * 4);
}

// ---- the spec's tables -------------------------------------------------------------------------

TEST_CASE("routing tables: mesh 0's L0 table equals seeds/000 §2.2.1.1.1", "[mesh][routing]") {
    const auto t = RoutingTables::build(MeshGraph::load_file(kSpec));
    for (uint32_t s = 0; s < 9; ++s) {
        for (uint32_t d = 0; d < 9; ++d) {
            INFO("mesh 0 device " << s << " -> device " << d);
            const std::string got = t.l0_string(0, s, d);
            CHECK((got.empty() ? "-" : got) == kSpecL0Mesh0[s][d]);
        }
    }
    // Every mesh is 3x3, so every mesh has the same L0 table.
    for (uint32_t m = 1; m < 4; ++m) {
        for (uint32_t s = 0; s < 9; ++s) {
            for (uint32_t d = 0; d < 9; ++d) CHECK(t.l0_route(m, s, d) == t.l0_route(0, s, d));
        }
    }
}

TEST_CASE("routing tables: the L1 tables of all four meshes equal seeds/000 §2.2.1.2.1",
          "[mesh][routing]") {
    const auto t = RoutingTables::build(MeshGraph::load_file(kSpec));
    for (uint32_t m = 0; m < 4; ++m) {
        INFO("source mesh " << m);
        CHECK(l1_table(t, m) == kSpecL1[m]);
    }
    // Directions towards the exit: mesh 0 device 0 goes E for mesh 1 (exit 5), S for mesh 2
    // (exit 6); the exit itself points out of the mesh.
    CHECK(t.l1_exit(0, 0, 1)->dir == MeshDir::E);
    CHECK(t.l1_exit(0, 0, 2)->dir == MeshDir::S);
    CHECK(t.l1_exit(0, 5, 1)->dir == MeshDir::E);
    CHECK(t.l1_exit(0, 8, 2)->dir == MeshDir::S);
    CHECK(t.l1_exit(3, 2, 0)->dir == MeshDir::N);
    CHECK(t.l1_exit(1, 4, 3)->dir == MeshDir::E);  // towards device 8: X first
}

TEST_CASE("routing tables: the one-way M2->M3 cable is the only reading that gives mesh 3's row",
          "[mesh][routing]") {
    // Declaring the M3D6 -> M2D8 direction too would send mesh 3's traffic for mesh 2 over the
    // direct cable (exit 6) - the spec's table says exit 2 - and change nothing else.
    std::string text = read_text(kSpec);
    text = replace(text, "  [[2, 8, E3], [3, 6, W3]]",
                   "  [[2, 8, E3], [3, 6, W3]],\n  [[3, 6, W0], [2, 8, E0]]");
    const auto t = RoutingTables::build(MeshGraph::parse(text, "both-ways.yaml"));
    for (uint32_t m = 0; m < 4; ++m) {
        auto expected = kSpecL1[m];
        if (m == 3) {
            for (auto& row : expected) row[2] = 6;
        }
        INFO("source mesh " << m);
        CHECK(l1_table(t, m) == expected);
    }
}

TEST_CASE("routing tables: mesh paths avoid the missing M0-M3 and M1-M2 links", "[mesh][routing]") {
    const auto t = RoutingTables::build(MeshGraph::load_file(kSpec));
    CHECK(t.mesh_path(0, 3) == std::vector<fabric::MeshId>{0, 1, 3});
    CHECK(t.mesh_path(3, 0) == std::vector<fabric::MeshId>{3, 1, 0});
    CHECK(t.mesh_path(1, 2) == std::vector<fabric::MeshId>{1, 0, 2});
    CHECK(t.mesh_path(2, 1) == std::vector<fabric::MeshId>{2, 0, 1});
    CHECK(t.mesh_path(2, 3) == std::vector<fabric::MeshId>{2, 3});
    CHECK(t.mesh_path(3, 2) == std::vector<fabric::MeshId>{3, 1, 0, 2});
    CHECK(t.mesh_path(1, 1) == std::vector<fabric::MeshId>{1});
    CHECK_FALSE(t.next_mesh(2, 2).has_value());
}

// ---- source routes -----------------------------------------------------------------------------

TEST_CASE("source route: mesh 0 to mesh 3 crosses mesh 1 (exit and entry nodes)",
          "[mesh][routing]") {
    const auto t = RoutingTables::build(MeshGraph::load_file(kSpec));
    const auto r = t.source_route({0, 0}, {3, 8}, 0);
    CHECK(r.meshes == std::vector<fabric::MeshId>{0, 1, 3});
    // M0D0 -E-> M0D1 -E-> M0D2 -S-> M0D5 (exit) =E=> M1D3 (entry) -E-> M1D4 -E-> M1D5 -S-> M1D8
    // (exit) =S=> M3D2 (entry) -S-> M3D5 -S-> M3D8
    CHECK(r.str() ==
          "M0D0 -E-> M0D1 -E-> M0D2 -S-> M0D5 =E=> M1D3 -E-> M1D4 -E-> M1D5 -S-> M1D8 =S=> M3D2 "
          "-S-> M3D5 -S-> M3D8");
    std::vector<std::pair<MeshNode, MeshNode>> crossings;
    for (const auto& h : r.hops) {
        if (h.inter_mesh) crossings.push_back({h.from, h.to});
    }
    CHECK(crossings ==
          std::vector<std::pair<MeshNode, MeshNode>>{{{0, 5}, {1, 3}}, {{1, 8}, {3, 2}}});
    // Hops chain up.
    MeshNode at = r.src;
    for (const auto& h : r.hops) {
        CHECK(h.from == at);
        at = h.to;
    }
    CHECK(at == r.dst);

    const auto back = t.source_route({3, 6}, {0, 0}, 0);
    CHECK(back.meshes == std::vector<fabric::MeshId>{3, 1, 0});
    CHECK(back.str() ==
          "M3D6 -E-> M3D7 -E-> M3D8 -N-> M3D5 -N-> M3D2 =N=> M1D8 -W-> M1D7 -W-> M1D6 -N-> M1D3 "
          "=W=> M0D5 -W-> M0D4 -W-> M0D3 -N-> M0D0");

    const auto same = t.source_route({2, 4}, {2, 4}, 1);
    CHECK(same.hops.empty());
    CHECK(same.meshes == std::vector<fabric::MeshId>{2});
}

TEST_CASE("source route: bad nodes and planes are bad input", "[mesh][routing]") {
    const auto t = RoutingTables::build(MeshGraph::load_file(kSpec));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                t.source_route({4, 0}, {0, 0});
                            }),
               Contains("unknown mesh 4"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                t.source_route({0, 0}, {1, 9});
                            }),
               Contains("unknown device 9"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                t.source_route({0, 0}, {1, 0}, 4);
                            }),
               Contains("plane 4"));
    CHECK(fabric::parse_mesh_node("3:8") == MeshNode{3, 8});
    CHECK_FALSE(fabric::parse_mesh_node("3-8").has_value());
    CHECK_FALSE(fabric::parse_mesh_node("3:").has_value());
}

TEST_CASE("source route: an unreachable mesh is bad input", "[mesh][routing]") {
    // Only mesh 0 -> mesh 1 is declared: mesh 1 cannot reach mesh 0.
    const std::string text =
        replace(replace(kSmall, "  [[1, W0], [0, E0]],\n", ""), "  [[1, W1], [0, E1]]\n", "");
    const std::string one_way = replace(text, "  [[0, E1], [1, W1]],", "  [[0, E1], [1, W1]]");
    const auto t = RoutingTables::build(MeshGraph::parse(one_way, "oneway.yaml"));
    CHECK(t.source_route({0, 0}, {1, 1}).hops.size() == 3);
    CHECK_FALSE(t.l1_exit(1, 0, 0).has_value());
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                t.source_route({1, 0}, {0, 0});
                            }),
               Contains("no route from mesh 1 to mesh 0"));
}

// ---- routing planes ----------------------------------------------------------------------------

TEST_CASE("routing planes: a route on plane k uses only plane-k channels", "[mesh][routing]") {
    const auto g = MeshGraph::load_file(kSpec);
    const auto t = RoutingTables::build(g);
    const auto& chip = g.chip_spec();
    REQUIRE(chip.ports_per_direction == 4);
    for (uint32_t plane = 0; plane < 4; ++plane) {
        std::set<uint32_t> mine;
        for (MeshDir d : fabric::kMeshDirs) mine.insert(*chip.eth_channel(d, plane));
        for (uint32_t sm = 0; sm < 4; ++sm) {
            for (uint32_t sd = 0; sd < 9; ++sd) {
                for (uint32_t dm = 0; dm < 4; ++dm) {
                    for (uint32_t dd = 0; dd < 9; ++dd) {
                        const auto r = t.source_route({sm, sd}, {dm, dd}, plane);
                        for (const auto& h : r.hops) {
                            INFO("plane " << plane << " route " << r.str());
                            CHECK(mine.count(h.eth_channel) == 1);
                            CHECK(mine.count(h.peer_channel) == 1);
                            CHECK(chip.channel_port(h.eth_channel)->second == plane);
                        }
                    }
                }
            }
        }
    }
    // Per-channel forwarding stays on the plane the packet arrived on.
    for (uint32_t ch = 0; ch < 16; ++ch) {
        const uint32_t plane = chip.channel_port(ch)->second;
        for (uint32_t dm = 0; dm < 4; ++dm) {
            for (uint32_t dd = 0; dd < 9; ++dd) {
                const auto out = t.forward_channel({0, 4}, ch, {dm, dd});
                if (dm == 0 && dd == 4) {
                    CHECK_FALSE(out.has_value());
                } else {
                    REQUIRE(out.has_value());
                    CHECK(chip.channel_port(*out)->second == plane);
                }
            }
        }
    }
    // (device, direction, plane) -> channel, only where a port leads somewhere.
    CHECK(t.eth_channel({0, 5}, MeshDir::E, 2) == 10u);             // inter-mesh port to mesh 1
    CHECK_FALSE(t.eth_channel({0, 2}, MeshDir::E, 0).has_value());  // mesh edge, no cable
    CHECK(t.eth_channel({0, 4}, MeshDir::N, 1) == 1u);
    CHECK_FALSE(t.eth_channel({0, 4}, MeshDir::N, 4).has_value());
    CHECK_FALSE(t.eth_channel({3, 6}, MeshDir::W, 0).has_value());  // the cable's receive-only end
}

TEST_CASE("routing planes: an exit without a cable on the plane is reported", "[mesh][routing]") {
    // Mesh 0 and 1 joined on plane 0 only.
    const std::string text =
        replace(replace(kSmall, "  [[0, E1], [1, W1]],\n", ""), ",\n  [[1, W1], [0, E1]]", "");
    const auto t = RoutingTables::build(MeshGraph::parse(text, "plane0.yaml"));
    CHECK(t.source_route({0, 0}, {1, 1}, 0).hops.size() == 3);
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                t.source_route({0, 0}, {1, 1}, 1);
                            }),
               Contains("M0D1") && Contains("plane 1"));
}

// ---- routing cycles ----------------------------------------------------------------------------

TEST_CASE("routing cycles: a ring of five meshes is rejected, four is fine", "[mesh][routing]") {
    CHECK_NOTHROW(RoutingTables::build(MeshGraph::parse(ring(4), "ring4.yaml")));
    CHECK_NOTHROW(RoutingTables::build(MeshGraph::parse(ring(2), "ring2.yaml")));
    const auto g = MeshGraph::parse(ring(5), "ring5.yaml");
    const std::string msg =
        expect_error(ErrorCategory::BadDescriptor, [&] { RoutingTables::build(g); });
    CHECK_THAT(msg, StartsWith("ring5.yaml:") && Contains("field 'Graph'") && Contains("cycle") &&
                        Contains("M0->M1"));
}

// ---- descriptor validation: one test per kind of bad input ------------------------------------

TEST_CASE("mesh graph: the small test descriptor is valid", "[mesh][bad]") {
    const auto g = MeshGraph::parse(kSmall, "m.yaml");
    CHECK(g.mesh_count() == 2);
    CHECK(g.links().size() == 4);
    CHECK(g.links()[0].from.node == MeshNode{0, 1});
    CHECK(g.links()[0].to.node == MeshNode{1, 0});
    CHECK(g.mesh(1).host_ranks == std::vector<std::vector<uint32_t>>{{1}});
    // The explicit form names the same ports.
    const auto h = MeshGraph::parse(
        replace(kSmall, "[[0, E0], [1, W0]]", "[[0, 1, E0], [1, 0, W0]]"), "m.yaml");
    CHECK(h.links()[0].from == g.links()[0].from);
    CHECK(h.links()[0].to == g.links()[0].to);
    // Legacy `topology` for the host topology, device_topology derived.
    const auto l = MeshGraph::parse(
        replace(kSmall, "device_topology: [1, 2], host_topology: [1, 1], host_ranks: [[0]]",
                "topology: [1, 1]"),
        "m.yaml");
    CHECK(l.mesh(0).cols == 2);
}

TEST_CASE("mesh graph: tt-metal edge-port numbering, trailing commas, host ranks", "[mesh]") {
    // tt-metal's flow style (trailing commas), `topology` as the host topology, and edge ports
    // numbered along each edge with `ethernet_ports` per device: on the 2x2 mesh 0, E0-E1 are
    // device 1's, E2-E3 device 3's; on the 2x4 mesh 1 (two 2x2 boards, two hosts) W2-W3 are
    // device 4's and S4-S5 device 6's.
    const std::string text = R"(ChipSpec: {
  arch: wormhole_b0,
  ethernet_ports: {N: 2, E: 2, S: 2, W: 2,},
}
Board: [
  {name: B2x2, type: MESH, topology: [2, 2]},
]
Mesh: [
  {id: 0, board: B2x2, topology: [1, 1], host_ranks: [[0]],},
  {id: 1, board: B2x2, device_topology: [2, 4], host_topology: [1, 2], host_ranks: [[3, 5]]},
]
Graph: [
  [[0, E2], [1, W2]],
  [[0, E3], [1, W3]],
  [[1, W2], [0, E2]],
  [[0, S1], [1, S5]],
]
)";
    const auto g = MeshGraph::parse(text, "ttm.yaml");
    REQUIRE(g.links().size() == 4);
    CHECK(g.links()[0].from == fabric::MeshPort{{0, 3}, MeshDir::E, 0});
    CHECK(g.links()[0].to == fabric::MeshPort{{1, 4}, MeshDir::W, 0});
    CHECK(g.links()[1].from == fabric::MeshPort{{0, 3}, MeshDir::E, 1});
    CHECK(g.links()[3].from == fabric::MeshPort{{0, 2}, MeshDir::S, 1});
    CHECK(g.links()[3].to == fabric::MeshPort{{1, 6}, MeshDir::S, 1});
    const auto& m1 = g.mesh(1);
    CHECK(m1.rows == 2);
    CHECK(m1.cols == 4);
    CHECK(m1.host_rank_of(0) == 3);
    CHECK(m1.host_rank_of(5) == 3);
    CHECK(m1.host_rank_of(2) == 5);
    CHECK(m1.host_rank_of(7) == 5);
    CHECK(m1.edge_devices(MeshDir::E) == std::vector<uint32_t>{3, 7});
    CHECK(m1.edge_devices(MeshDir::S) == std::vector<uint32_t>{4, 5, 6, 7});
    // Mesh 1 reaches mesh 0 only back over plane 0 of the W2 port.
    const auto t = RoutingTables::build(g);
    CHECK(t.l1_exit(1, 7, 0)->exit == 4);
    CHECK(t.source_route({1, 7}, {0, 0}, 0).str() ==
          "M1D7 -W-> M1D6 -W-> M1D5 -W-> M1D4 =W=> M0D3 -W-> M0D2 -N-> M0D0");
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                t.source_route({1, 7}, {0, 0}, 1);
                            }),
               Contains("plane 1"));
}

TEST_CASE("bad mesh graph: malformed YAML", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "Board: [", "Board: [[")), Contains("malformed YAML"));
}

TEST_CASE("bad mesh graph: a missing section", "[mesh][bad]") {
    const std::string msg = expect_error(ErrorCategory::BadDescriptor, [&] {
        const size_t from = kSmall.find("Mesh: [");
        const size_t to = kSmall.find("Graph: [");
        MeshGraph::parse(kSmall.substr(0, from) + kSmall.substr(to), "m.yaml");
    });
    CHECK(msg == "m.yaml: field 'Mesh': required field is missing");
}

TEST_CASE("bad mesh graph: an unknown arch", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "wormhole_b0", "grayskull")),
               Contains("m.yaml:2:") && Contains("ChipSpec.arch") && Contains("grayskull"));
}

TEST_CASE("mesh graph: ports per direction are logical, not limited by the arch's channels",
          "[mesh]") {
    // Blackhole has 14 Ethernet channels; 4 ports per direction (16 logical ports) load: the
    // physical channel of each port comes from the cluster descriptor.
    const std::string bh = replace(replace(kSmall, "wormhole_b0", "blackhole"),
                                   "{N: 2, E: 2, S: 2, W: 2}", "{N: 4, E: 4, S: 4, W: 4}");
    CHECK(MeshGraph::parse(bh, "bh.yaml").chip_spec().ports_per_direction == 4);
}

TEST_CASE("bad mesh graph: different port counts per direction", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "E: 2, S: 2", "E: 2, S: 1")),
               Contains("ChipSpec.ethernet_ports.S") && Contains("same number"));
}

TEST_CASE("bad mesh graph: a negative number", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "{N: 2, E: 2,", "{N: -2, E: 2,")),
               Contains("ChipSpec.ethernet_ports.N") && Contains("negative"));
    CHECK_THAT(bad(replace(kSmall, "{id: 1,", "{id: -1,")),
               Contains("m.yaml:10:") && Contains("Mesh[1].id") && Contains("negative"));
    CHECK_THAT(bad(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, E0], [-1, W0]]")),
               Contains("Graph[0][1][0]") && Contains("negative"));
}

TEST_CASE("bad mesh graph: a board defined twice", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "  {name: Pair, type: Mesh, topology: [1, 2]}\n",
                           "  {name: Pair, type: Mesh, topology: [1, 2]},\n"
                           "  {name: Pair, type: Mesh, topology: [2, 2]}\n")),
               Contains("m.yaml:7:") && Contains("Board[1].name") && Contains("already defined"));
}

TEST_CASE("bad mesh graph: an unsupported board type", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "type: Mesh", "type: Torus")),
               Contains("Board[0].type") && Contains("Torus"));
}

TEST_CASE("bad mesh graph: an empty topology", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "topology: [1, 2]}", "topology: [0, 2]}")),
               Contains("Board[0].topology") && Contains("no devices"));
}

TEST_CASE("bad mesh graph: an unknown board", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "{id: 1, board: Pair", "{id: 1, board: Quad")),
               Contains("m.yaml:10:") && Contains("Mesh[1].board") &&
                   Contains("unknown board 'Quad'") && Contains("Pair"));
}

TEST_CASE("bad mesh graph: device topology does not match board x host topology", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "{id: 1, board: Pair, device_topology: [1, 2]",
                           "{id: 1, board: Pair, device_topology: [2, 2]")),
               Contains("m.yaml:10:") && Contains("Mesh[1].device_topology") &&
                   Contains("does not match"));
}

TEST_CASE("bad mesh graph: host ranks not shaped like the host topology", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "host_ranks: [[1]]", "host_ranks: [[1, 2]]")),
               Contains("Mesh[1].host_ranks[0]") && Contains("expected 1 rank"));
}

TEST_CASE("bad mesh graph: a mesh id used twice", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "{id: 1,", "{id: 0,")),
               Contains("m.yaml:10:") && Contains("Mesh[1].id") && Contains("already defined"));
}

TEST_CASE("bad mesh graph: mesh ids with a gap", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "{id: 1,", "{id: 2,")),
               Contains("field 'Mesh'") && Contains("mesh 1 is missing"));
}

TEST_CASE("bad mesh graph: a connection to an unknown mesh", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, E0], [7, W0]]")),
               Contains("m.yaml:13:") && Contains("Graph[0][1][0]") && Contains("unknown mesh 7"));
}

TEST_CASE("bad mesh graph: a connection to an unknown device or port", "[mesh][bad]") {
    // Edge-port form: mesh 1 (1x2, 2 ports) has W0..W1 only.
    CHECK_THAT(bad(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, E0], [1, W2]]")),
               Contains("Graph[0][1][1]") && Contains("no port W2"));
    // Explicit form: device 5 does not exist; device 1 is not on the west edge; plane 2 neither.
    CHECK_THAT(bad(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, 1, E0], [1, 5, W0]]")),
               Contains("Graph[0][1][1]") && Contains("unknown device 5"));
    CHECK_THAT(bad(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, 1, E0], [1, 1, W0]]")),
               Contains("not on the W edge"));
    CHECK_THAT(bad(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, 1, E0], [1, 0, W2]]")),
               Contains("plane 2 does not exist"));
}

TEST_CASE("bad mesh graph: a malformed port", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, X0], [1, W0]]")),
               Contains("Graph[0][0][1]") && Contains("'X0'"));
    CHECK_THAT(bad(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, E0], [1, W0], [1, W1]]")),
               Contains("Graph[0]") && Contains("a list of 3"));
}

TEST_CASE("bad mesh graph: a mesh connected to itself", "[mesh][bad]") {
    CHECK_THAT(bad(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, E0], [0, W0]]")),
               Contains("Graph[0]") && Contains("itself"));
}

TEST_CASE("mesh graph: a cable may join two different planes (TG)", "[mesh][routing]") {
    // Plane 0 of mesh 0's east port cabled to plane 1 of mesh 1's west port, both directions;
    // a route continues on the plane it arrives on.
    const std::string crossed =
        replace(replace(replace(replace(kSmall, "[[0, E0], [1, W0]]", "[[0, E0], [1, W1]]"),
                                "[[0, E1], [1, W1]]", "[[0, E1], [1, W0]]"),
                        "[[1, W0], [0, E0]]", "[[1, W1], [0, E0]]"),
                "[[1, W1], [0, E1]]", "[[1, W0], [0, E1]]");
    const auto g = MeshGraph::parse(crossed, "crossed.yaml");
    CHECK(g.links()[0].from == fabric::MeshPort{{0, 1}, MeshDir::E, 0});
    CHECK(g.links()[0].to == fabric::MeshPort{{1, 0}, MeshDir::W, 1});
    const auto t = RoutingTables::build(g);
    const auto r = t.source_route({0, 0}, {1, 1}, 0);
    CHECK(r.str() == "M0D0 -E-> M0D1 =E=> M1D0 -E-> M1D1");
    REQUIRE(r.hops.size() == 3);
    // Two ports per direction: N 0-1, S 2-3, E 4-5, W 6-7.
    CHECK(r.hops[1].eth_channel == 4u);   // E plane 0
    CHECK(r.hops[1].peer_channel == 7u);  // W plane 1
    CHECK(r.hops[2].eth_channel == 5u);   // E plane 1: the route is on plane 1 now
    // A port still has one peer: E1 cabled to W1, which E0 already feeds, is refused.
    CHECK_THAT(bad(replace(crossed, "[[0, E1], [1, W0]]", "[[0, E1], [1, W1]]")),
               Contains("Graph[1][1]") &&
                   Contains("M1D0 W plane 1 already receives from M0D1 E plane 0 (Graph[0])"));
}

TEST_CASE("bad mesh graph: a port used by two cables", "[mesh][bad]") {
    // Both directions of cable 0 must name the same ports.
    CHECK_THAT(
        bad(replace(kSmall, "[[1, W0], [0, E0]]", "[[1, W0], [0, E0]],\n  [[0, E0], [1, W0]]")),
        Contains("m.yaml:16:") && Contains("Graph[3]") && Contains("duplicate of Graph[0]"));
    // Mesh 1's W0 already receives from mesh 0's E0.
    CHECK_THAT(bad(replace(kSmall, "[[0, E1], [1, W1]]", "[[0, N0], [1, W0]]")),
               Contains("m.yaml:14:") && Contains("Graph[1][1]") &&
                   Contains("M1D0 W plane 0 already receives from M0D1 E plane 0 (Graph[0])"));
}
