// Mesh graph descriptors in both forms (MGD 2.0 text and YAML) into one model: every published
// shape loads (fixtures of ours in soc_descriptors/ shaped like tt-metal's files) with its exact
// fields; the published features load (torus dim types, host topologies, graph topologies,
// pinnings, TG's cross-plane cabling, the older YAML keys); resolved MGD graphs route; and one
// test per refusal with its exact message.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "expect_error.h"
#include "fabric/mesh_graph.h"
#include "fabric/routing_tables.h"

using fabric::AsicPin;
using fabric::ChannelPolicy;
using fabric::DescriptorForm;
using fabric::ErrorCategory;
using fabric::InterMeshLink;
using fabric::MeshConnection;
using fabric::MeshDir;
using fabric::MeshGraph;
using fabric::MeshNode;
using fabric::MeshPort;
using fabric::MeshSpec;
using fabric::RoutingTables;
using fabric::test::expect_error;
using Ranks = std::vector<std::vector<uint32_t>>;

namespace {

const std::string kDir = FABRIC_SOC_DESCRIPTOR_DIR;

MeshGraph fixture(const std::string& name) {
    return MeshGraph::load_file(kDir + "/" + name);
}

// What a mesh of a fixture must be, field by field.
struct Shape {
    uint32_t rows;
    uint32_t cols;
    bool ring_ns;
    bool ring_ew;
    uint32_t host_rows;
    uint32_t host_cols;
    uint32_t channels;
    ChannelPolicy policy;
};

void check_mesh(const MeshSpec& m, const Shape& s) {
    CHECK(m.rows == s.rows);
    CHECK(m.cols == s.cols);
    CHECK(m.ring_ns == s.ring_ns);
    CHECK(m.ring_ew == s.ring_ew);
    CHECK(m.host_rows == s.host_rows);
    CHECK(m.host_cols == s.host_cols);
    CHECK(m.channels == s.channels);
    CHECK(m.policy == s.policy);
}

// A single-mesh fixture: its form, arch, ports per direction and the mesh.
void check_single(const std::string& name, DescriptorForm form, hal::Arch arch, uint32_t ports,
                  const Shape& s) {
    INFO(name);
    const MeshGraph g = fixture(name);
    CHECK(g.form() == form);
    CHECK(g.chip_spec().arch == arch);
    CHECK(g.chip_spec().ports_per_direction == ports);
    REQUIRE(g.mesh_count() == 1);
    CHECK(g.mesh(0).id == 0);
    check_mesh(g.mesh(0), s);
    CHECK(g.links().empty());
    CHECK(g.mesh_connections().empty());
    CHECK(g.links_resolved());
}

constexpr auto kYaml = DescriptorForm::Yaml;
constexpr auto kMgd = DescriptorForm::TextProto;
constexpr auto kWh = hal::Arch::WormholeB0;
constexpr auto kBh = hal::Arch::Blackhole;
constexpr auto kStrict = ChannelPolicy::Strict;
constexpr auto kRelaxed = ChannelPolicy::Relaxed;

bool same(const MeshConnection& c, const MeshConnection& want) {
    return c.a == want.a && c.b == want.b && c.device_a == want.device_a &&
           c.device_b == want.device_b && c.channels == want.channels && c.policy == want.policy &&
           c.directional == want.directional && c.z_direction == want.z_direction;
}

MeshConnection conn(fabric::MeshId a, fabric::MeshId b, uint32_t channels, ChannelPolicy policy,
                    bool z = false) {
    MeshConnection c;
    c.a = a;
    c.b = b;
    c.channels = channels;
    c.policy = policy;
    c.z_direction = z;
    return c;
}

void check_connections(const MeshGraph& g, const std::vector<MeshConnection>& want) {
    REQUIRE(g.mesh_connections().size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        INFO("connection " << i);
        CHECK(same(g.mesh_connections()[i], want[i]));
    }
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    return text;
}

// A valid MGD graph: two 1x2 Wormhole meshes joined by one STRICT channel; tests break it.
const std::string kPair = R"(# two n300s
mesh_descriptors {
  name: "M0"
  arch: WORMHOLE_B0
  device_topology { dims: [ 1, 2 ] }
  host_topology { dims: [ 1, 1 ] }
  channels { count: 2 policy: RELAXED }
}
graph_descriptors {
  name: "G0"
  type: "FABRIC"
  instances { mesh { mesh_descriptor: "M0" mesh_id: 0 } }
  instances { mesh { mesh_descriptor: "M0" mesh_id: 1 } }
  connections {
    nodes { mesh { mesh_descriptor: "M0" mesh_id: 0 } }
    nodes { mesh { mesh_descriptor: "M0" mesh_id: 1 } }
    channels { count: 1 }
  }
}
top_level_instance { graph { graph_descriptor: "G0" graph_id: 0 } }
)";

// A valid single-mesh MGD file.
const std::string kSingle = R"(mesh_descriptors {
  name: "M0"
  arch: BLACKHOLE
  device_topology { dims: [ 8, 4 ] dim_types: [ RING, RING ] }
  host_topology { dims: [ 1, 1 ] }
  channels { count: 2 policy: STRICT }
}
top_level_instance { mesh { mesh_descriptor: "M0" mesh_id: 0 } }
)";

// A valid YAML file to break.
const std::string kYamlMesh =
    R"(ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 2, E: 2, S: 2, W: 2}}
Board: [{name: B, type: Mesh, topology: [1, 2]}]
Mesh: [{id: 0, board: B, device_topology: [1, 2], host_topology: [1, 1]}]
Graph: []
)";

// Parse MGD text named m.textproto; expect Error(BadDescriptor) and return its message.
std::string bad_mgd(const std::string& text) {
    return expect_error(ErrorCategory::BadDescriptor,
                        [&] { MeshGraph::parse_textproto(text, "m.textproto"); });
}

std::string bad_yaml(const std::string& text) {
    return expect_error(ErrorCategory::BadDescriptor,
                        [&] { MeshGraph::parse_yaml(text, "m.yaml"); });
}

}  // namespace

// ---- every published shape, both forms --------------------------------------------------------

TEST_CASE("mesh graph fixtures: single-chip boards (n150, p150)", "[mesh][mgd]") {
    // YAML single-chip boards have no Ethernet ports; MGD gives them a channel count.
    check_single("n150_mesh_graph.yaml", kYaml, kWh, 0, {1, 1, false, false, 1, 1, 0, kRelaxed});
    check_single("p150_mesh_graph.yaml", kYaml, kBh, 0, {1, 1, false, false, 1, 1, 0, kRelaxed});
    check_single("n150_mesh_graph.textproto", kMgd, kWh, 1,
                 {1, 1, false, false, 1, 1, 1, kRelaxed});
    check_single("p150_mesh_graph.textproto", kMgd, kBh, 1, {1, 1, false, false, 1, 1, 1, kStrict});
}

TEST_CASE("mesh graph fixtures: n300, 2x2 n300, p300 and 2x p300", "[mesh][mgd]") {
    check_single("n300_mesh_graph.yaml", kYaml, kWh, 2, {1, 2, false, false, 1, 1, 2, kRelaxed});
    check_single("n300_mesh_graph.textproto", kMgd, kWh, 2,
                 {1, 2, false, false, 1, 1, 2, kRelaxed});
    check_single("n300_2x2_mesh_graph.yaml", kYaml, kWh, 2,
                 {2, 2, false, false, 1, 1, 2, kRelaxed});
    check_single("n300_2x2_mesh_graph.textproto", kMgd, kWh, 2,
                 {2, 2, false, false, 1, 1, 2, kRelaxed});
    check_single("p300_mesh_graph.yaml", kYaml, kBh, 2, {1, 2, false, false, 1, 1, 2, kRelaxed});
    check_single("p300_mesh_graph.textproto", kMgd, kBh, 2,
                 {1, 2, false, false, 1, 1, 2, kRelaxed});
    check_single("p300_x2_mesh_graph.yaml", kYaml, kBh, 2, {2, 2, false, false, 1, 1, 2, kRelaxed});
    check_single("p300_x2_mesh_graph.textproto", kMgd, kBh, 2,
                 {2, 2, false, false, 1, 1, 2, kRelaxed});
}

TEST_CASE("mesh graph fixtures: T3K as 2x4 (YAML), 4x2 (MGD) and a ring of 8", "[mesh][mgd]") {
    check_single("t3k_mesh_graph.yaml", kYaml, kWh, 2, {2, 4, false, false, 1, 1, 2, kRelaxed});
    check_single("t3k_mesh_graph.textproto", kMgd, kWh, 2, {4, 2, false, false, 1, 1, 2, kRelaxed});
    check_single("t3k_1x8_ring_mesh_graph.textproto", kMgd, kWh, 2,
                 {1, 8, false, true, 1, 1, 2, kStrict});
}

TEST_CASE("mesh graph fixtures: 6U Galaxy 8x4 and its torus variants in both forms",
          "[mesh][mgd]") {
    check_single("galaxy_8x4_mesh_graph.yaml", kYaml, kWh, 4,
                 {8, 4, false, false, 1, 1, 4, kRelaxed});
    check_single("galaxy_8x4_mesh_graph.textproto", kMgd, kWh, 4,
                 {8, 4, false, false, 1, 1, 4, kRelaxed});
    // Torus X: the columns wrap (E/W); torus Y: the rows (N/S); XY and 2D: both.
    check_single("galaxy_8x4_torus_x_mesh_graph.yaml", kYaml, kWh, 4,
                 {8, 4, false, true, 1, 1, 4, kRelaxed});
    check_single("galaxy_8x4_torus_x_mesh_graph.textproto", kMgd, kWh, 4,
                 {8, 4, false, true, 1, 1, 4, kRelaxed});
    check_single("galaxy_8x4_torus_y_mesh_graph.yaml", kYaml, kWh, 4,
                 {8, 4, true, false, 1, 1, 4, kRelaxed});
    check_single("galaxy_8x4_torus_y_mesh_graph.textproto", kMgd, kWh, 4,
                 {8, 4, true, false, 1, 1, 4, kRelaxed});
    check_single("galaxy_8x4_torus_xy_mesh_graph.yaml", kYaml, kWh, 4,
                 {8, 4, true, true, 1, 1, 4, kRelaxed});
    check_single("galaxy_8x4_torus_xy_mesh_graph.textproto", kMgd, kWh, 4,
                 {8, 4, true, true, 1, 1, 4, kRelaxed});
    // TORUS_2D with the older `topology` key as the device topology (one host rank).
    check_single("galaxy_8x4_torus_2d_mesh_graph.yaml", kYaml, kWh, 4,
                 {8, 4, true, true, 1, 1, 4, kRelaxed});
    const MeshGraph pinned = fixture("galaxy_8x4_torus_xy_mesh_graph.textproto");
    REQUIRE(pinned.pins().size() == 1);
    CHECK(pinned.pins()[0].node == MeshNode{0, 0});
    CHECK(pinned.pins()[0].tray_id == 1);
    CHECK(pinned.pins()[0].asic_location == 1);
}

TEST_CASE("mesh graph fixtures: TG, four gateways and a 4x8 Galaxy, in both forms", "[mesh][mgd]") {
    const MeshGraph y = fixture("tg_mesh_graph.yaml");
    REQUIRE(y.mesh_count() == 5);
    for (uint32_t m = 0; m < 4; ++m) check_mesh(y.mesh(m), {1, 1, false, false, 1, 1, 4, kRelaxed});
    check_mesh(y.mesh(4), {4, 8, false, false, 1, 1, 4, kRelaxed});
    REQUIRE(y.links().size() == 16);
    // Gateway 1's S1 (plane 1) lands on N12: plane 0 of Galaxy device 3.
    CHECK(y.links()[3].from == MeshPort{{1, 0}, MeshDir::S, 1});
    CHECK(y.links()[3].to == MeshPort{{4, 3}, MeshDir::N, 0});
    CHECK(y.links()[11].from == MeshPort{{4, 3}, MeshDir::N, 0});
    CHECK(y.links()[11].to == MeshPort{{1, 0}, MeshDir::S, 1});

    const MeshGraph t = fixture("tg_mesh_graph.textproto");
    CHECK(t.form() == kMgd);
    REQUIRE(t.mesh_count() == 5);
    for (uint32_t m = 0; m < 4; ++m) {
        check_mesh(t.mesh(m), {1, 1, false, false, 1, 1, 4, kRelaxed});
        CHECK(t.mesh(m).board == "M0");
    }
    check_mesh(t.mesh(4), {4, 8, false, false, 1, 1, 4, kRelaxed});
    CHECK(t.mesh(4).board == "M1");
    CHECK(t.chip_spec().ports_per_direction == 4);
    check_connections(t, {conn(0, 4, 2, kStrict), conn(1, 4, 2, kStrict), conn(2, 4, 2, kStrict),
                          conn(3, 4, 2, kStrict)});
    CHECK(t.mesh_connections()[0].line == 28);
    CHECK_FALSE(t.links_resolved());
}

TEST_CASE("mesh graph fixtures: p150 x2, x4, x8 and the ring of eight", "[mesh][mgd]") {
    // Blackhole with four ports per direction: logical ports, no longer checked against the
    // arch's 14 channels.
    check_single("p150_x2_mesh_graph.yaml", kYaml, kBh, 4, {1, 2, false, false, 1, 1, 4, kRelaxed});
    check_single("p150_x2_mesh_graph.textproto", kMgd, kBh, 4,
                 {1, 2, false, false, 1, 1, 4, kRelaxed});
    check_single("p150_x4_mesh_graph.yaml", kYaml, kBh, 2, {1, 4, false, false, 1, 1, 2, kRelaxed});
    check_single("p150_x4_mesh_graph.textproto", kMgd, kBh, 4,
                 {1, 4, false, false, 1, 1, 4, kRelaxed});
    check_single("p150_x8_mesh_graph.yaml", kYaml, kBh, 2, {2, 4, false, false, 1, 1, 2, kRelaxed});
    check_single("p150_x8_mesh_graph.textproto", kMgd, kBh, 2,
                 {2, 4, false, true, 1, 1, 2, kRelaxed});
    check_single("p150_x8_ring_mesh_graph.textproto", kMgd, kBh, 2,
                 {1, 8, false, true, 1, 1, 2, kRelaxed});
    const MeshGraph x8 = fixture("p150_x8_mesh_graph.textproto");
    const std::vector<std::pair<uint32_t, uint32_t>> trays = {{0, 1}, {1, 2}, {2, 4}, {3, 3},
                                                              {4, 5}, {5, 6}, {6, 8}, {7, 7}};
    REQUIRE(x8.pins().size() == trays.size());
    for (size_t i = 0; i < trays.size(); ++i) {
        CHECK(x8.pins()[i].node == MeshNode{0, trays[i].first});
        CHECK(x8.pins()[i].tray_id == trays[i].second);
        CHECK(x8.pins()[i].asic_location == 0);
    }
}

TEST_CASE("mesh graph fixtures: Blackhole Galaxy torus, split into 4x2 and 2x4 meshes",
          "[mesh][mgd]") {
    check_single("bh_galaxy_torus_xy_mesh_graph.textproto", kMgd, kBh, 2,
                 {8, 4, true, true, 1, 1, 2, kStrict});

    const MeshGraph split42 = fixture("bh_galaxy_split_4x2_mesh_graph.textproto");
    REQUIRE(split42.mesh_count() == 4);
    for (const MeshSpec& m : split42.meshes()) {
        check_mesh(m, {4, 2, false, false, 1, 1, 2, kRelaxed});
    }
    check_connections(split42, {conn(0, 1, 8, kRelaxed), conn(1, 2, 4, kRelaxed),
                                conn(2, 3, 8, kRelaxed), conn(3, 0, 4, kRelaxed)});
    CHECK(split42.device_count() == 32);

    const MeshGraph split24 = fixture("bh_galaxy_split_2x4_mesh_graph.textproto");
    REQUIRE(split24.mesh_count() == 4);
    for (const MeshSpec& m : split24.meshes()) {
        check_mesh(m, {2, 4, false, false, 1, 1, 2, kStrict});
    }
    check_connections(split24, {conn(0, 1, 8, kRelaxed, true), conn(1, 2, 4, kRelaxed, true),
                                conn(2, 3, 8, kRelaxed, true)});
}

TEST_CASE("mesh graph fixtures: four BH Galaxies, one 32x4 torus or four meshes all to all",
          "[mesh][mgd]") {
    check_single("bh_quad_galaxy_32x4_torus_xy_mesh_graph.textproto", kMgd, kBh, 2,
                 {32, 4, true, true, 4, 1, 2, kRelaxed});
    // Hosts stacked vertically: ranks 0..3 row by row.
    const MeshGraph quad = fixture("bh_quad_galaxy_32x4_torus_xy_mesh_graph.textproto");
    CHECK(quad.mesh(0).host_ranks == Ranks{{0}, {1}, {2}, {3}});
    CHECK(quad.mesh(0).host_rank_of(0) == 0);
    CHECK(quad.mesh(0).host_rank_of(127) == 3);
    CHECK(quad.mesh(0).host_rank_of(8 * 4) == 1);

    // graph_topology ALL_TO_ALL: a connection per pair, in instance order.
    const MeshGraph all = fixture("bh_quad_galaxy_all_to_all_mesh_graph.textproto");
    REQUIRE(all.mesh_count() == 4);
    for (const MeshSpec& m : all.meshes()) check_mesh(m, {8, 4, true, true, 1, 1, 2, kStrict});
    check_connections(all, {conn(0, 1, 2, kStrict, true), conn(0, 2, 2, kStrict, true),
                            conn(0, 3, 2, kStrict, true), conn(1, 2, 2, kStrict, true),
                            conn(1, 3, 2, kStrict, true), conn(2, 3, 2, kStrict, true)});
}

TEST_CASE("mesh graph fixtures: dual Galaxy 8x8 over two hosts, and two Galaxies relaxed",
          "[mesh][mgd]") {
    check_single("dual_galaxy_mesh_graph.yaml", kYaml, kWh, 4,
                 {8, 8, false, false, 1, 2, 4, kRelaxed});
    check_single("dual_galaxy_mesh_graph.textproto", kMgd, kWh, 4,
                 {8, 8, false, false, 1, 2, 4, kRelaxed});
    for (const char* name : {"dual_galaxy_mesh_graph.yaml", "dual_galaxy_mesh_graph.textproto"}) {
        INFO(name);
        const MeshSpec m = fixture(name).mesh(0);
        CHECK(m.host_ranks == Ranks{{0, 1}});
        CHECK(m.host_rank_of(3) == 0);
        CHECK(m.host_rank_of(4) == 1);
        CHECK(m.host_rank_of(63) == 1);
    }
    // RelaxedGraph: meshes joined by a channel count; the mapping finds the links.
    const MeshGraph relaxed = fixture("dual_galaxy_relaxed_mesh_graph.yaml");
    REQUIRE(relaxed.mesh_count() == 2);
    check_connections(relaxed, {conn(0, 1, 4, kRelaxed)});
    CHECK(relaxed.mesh_connections()[0].line == 18);
    CHECK(relaxed.links().empty());
}

TEST_CASE("mesh graph fixtures: the YAML T3K split in two meshes", "[mesh][mgd]") {
    const MeshGraph g = fixture("t3k_split_mesh_graph.yaml");
    REQUIRE(g.mesh_count() == 2);
    for (const MeshSpec& m : g.meshes()) check_mesh(m, {2, 2, false, false, 1, 1, 2, kRelaxed});
    REQUIRE(g.links().size() == 8);
    CHECK(g.links()[2].from == MeshPort{{0, 3}, MeshDir::E, 0});
    CHECK(g.links()[2].to == MeshPort{{1, 2}, MeshDir::W, 0});
}

// ---- forms, detection, files ------------------------------------------------------------------

TEST_CASE("mesh graph: the form is found by the first token, after comments", "[mesh][mgd]") {
    CHECK(MeshGraph::detect_form(kPair) == kMgd);
    CHECK(MeshGraph::detect_form("\n  # c\n\ntop_level_instance {}") == kMgd);
    CHECK(MeshGraph::detect_form("pinnings {}") == kMgd);
    CHECK(MeshGraph::detect_form(kYamlMesh) == kYaml);
    CHECK(MeshGraph::detect_form("# mesh_descriptors\nChipSpec: {}") == kYaml);
    CHECK(MeshGraph::detect_form("") == kYaml);
    CHECK(MeshGraph::parse(kPair, "pair").form() == kMgd);
    CHECK(MeshGraph::parse(kYamlMesh, "mesh").form() == kYaml);
    // A YAML text given to the MGD parser is a protobuf syntax error, not "malformed YAML".
    CHECK(bad_mgd(kYamlMesh) ==
          "m.textproto:1:9: Message type \"fabric.mgd.MeshGraphDescriptor\" has no field named "
          "\"ChipSpec\".");
}

TEST_CASE("mesh graph: MGD text features of the published files", "[mesh][mgd]") {
    // Fields separated by commas, the older `types` spelling, a partial dim_types list.
    const MeshGraph older =
        MeshGraph::parse_textproto(replace(kSingle, "{ dims: [ 8, 4 ] dim_types: [ RING, RING ] }",
                                           "{ dims: [ 8, 4 ], types: [ RING ] }"),
                                   "older");
    CHECK(older.mesh(0).ring_ns);
    CHECK_FALSE(older.mesh(0).ring_ew);
    // Channels without a policy are STRICT.
    const MeshGraph pair = MeshGraph::parse_textproto(kPair, "pair");
    check_connections(pair, {conn(0, 1, 1, kStrict)});
    CHECK(pair.mesh_connections()[0].line == 14);
    // Devices named in a connection; directional.
    const MeshGraph devices = MeshGraph::parse_textproto(
        replace(
            replace(replace(kPair, "mesh_id: 0 } }\n    nodes",
                            "mesh_id: 0 device_id: 1 } }\n    nodes"),
                    "mesh_id: 1 } }\n    channels", "mesh_id: 1 device_id: 0 } }\n    channels"),
            "channels { count: 1 }", "channels { count: 1 } directional: true"),
        "devices");
    REQUIRE(devices.mesh_connections().size() == 1);
    CHECK(devices.mesh_connections()[0].device_a == 1u);
    CHECK(devices.mesh_connections()[0].device_b == 0u);
    CHECK(devices.mesh_connections()[0].directional);
    // graph_topology RING with the graph's channels (the older layout); a ring of two is one
    // connection.
    const MeshGraph ring = MeshGraph::parse_textproto(
        replace(
            kPair,
            "  connections {\n    nodes { mesh { mesh_descriptor: \"M0\" mesh_id: 0 } }\n"
            "    nodes { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }\n"
            "    channels { count: 1 }\n  }\n",
            "  channels { count: 3 policy: RELAXED }\n  graph_topology { layout_type: RING }\n"),
        "ring");
    check_connections(ring, {conn(0, 1, 3, kRelaxed)});
    // Mesh ids are global across mesh descriptors; each mesh keeps its descriptor's shape.
    const std::string two_kinds = R"(
mesh_descriptors { name: "A" arch: BLACKHOLE device_topology { dims: [ 4, 4 ] } host_topology { dims: [ 1, 1 ] } channels { count: 2 } }
mesh_descriptors { name: "B" arch: BLACKHOLE device_topology { dims: [ 4, 4 ] } host_topology { dims: [ 2, 1 ] } channels { count: 2 } }
graph_descriptors {
  name: "G" type: "FABRIC"
  instances { mesh { mesh_descriptor: "B" mesh_id: 1 } }
  instances { mesh { mesh_descriptor: "A" mesh_id: 0 } }
  instances { mesh { mesh_descriptor: "A" mesh_id: 2 } }
  graph_topology { layout_type: RING channels { count: 8 policy: RELAXED } assign_z_direction: true }
}
top_level_instance { graph { graph_descriptor: "G" graph_id: 0 } }
)";
    const MeshGraph kinds = MeshGraph::parse_textproto(two_kinds, "kinds");
    REQUIRE(kinds.mesh_count() == 3);
    CHECK(kinds.mesh(0).board == "A");
    CHECK(kinds.mesh(1).board == "B");
    CHECK(kinds.mesh(1).host_ranks == Ranks{{0}, {1}});
    CHECK(kinds.mesh(2).board == "A");
    check_connections(kinds, {conn(1, 0, 8, kRelaxed, true), conn(0, 2, 8, kRelaxed, true),
                              conn(2, 1, 8, kRelaxed, true)});
    // A graph without connections (independent meshes on separate hosts).
    const MeshGraph alone = MeshGraph::parse_textproto(
        replace(kPair,
                "  connections {\n    nodes { mesh { mesh_descriptor: \"M0\" mesh_id: 0 } }\n"
                "    nodes { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }\n"
                "    channels { count: 1 }\n  }\n",
                ""),
        "alone");
    CHECK(alone.mesh_count() == 2);
    CHECK(alone.links_resolved());
}

TEST_CASE("mesh graph: YAML features of the published files", "[mesh][mgd]") {
    // `topology` is the host topology when host_ranks has its shape (tt-metal's first files)...
    const MeshGraph host =
        MeshGraph::parse_yaml(replace(kYamlMesh, "device_topology: [1, 2], host_topology: [1, 1]",
                                      "topology: [2, 1], host_ranks: [[0], [1]]"),
                              "host");
    check_mesh(host.mesh(0), {2, 2, false, false, 2, 1, 2, kRelaxed});
    // ... and the device topology when it is the board times host_ranks' shape (later files).
    const MeshGraph device =
        MeshGraph::parse_yaml(replace(kYamlMesh, "device_topology: [1, 2], host_topology: [1, 1]",
                                      "topology: [1, 2], host_ranks: [[7]]"),
                              "device");
    check_mesh(device.mesh(0), {1, 2, false, false, 1, 1, 2, kRelaxed});
    CHECK(device.mesh(0).host_ranks == Ranks{{7}});
    const MeshGraph two_hosts =
        MeshGraph::parse_yaml(replace(kYamlMesh, "device_topology: [1, 2], host_topology: [1, 1]",
                                      "topology: [1, 4], host_ranks: [[0, 1]]"),
                              "two_hosts");
    check_mesh(two_hosts.mesh(0), {1, 4, false, false, 1, 2, 2, kRelaxed});
    // Without host_ranks `topology` is the host topology.
    const MeshGraph plain = MeshGraph::parse_yaml(
        replace(kYamlMesh, "device_topology: [1, 2], host_topology: [1, 1]", "topology: [1, 2]"),
        "plain");
    check_mesh(plain.mesh(0), {1, 4, false, false, 1, 2, 2, kRelaxed});
    // host_mapping is accepted and ignored; board types in any case.
    const MeshGraph mapping = MeshGraph::parse_yaml(
        replace(replace(kYamlMesh, "host_topology: [1, 1]", "host_mapping: [[]]"), "type: Mesh",
                "type: torus_x"),
        "mapping");
    check_mesh(mapping.mesh(0), {1, 2, false, true, 1, 1, 2, kRelaxed});
}

// ---- resolved graphs and routing tables -------------------------------------------------------

TEST_CASE("mesh graph: an MGD graph routes once its links are resolved", "[mesh][mgd][routing]") {
    const MeshGraph pair = MeshGraph::parse_textproto(kPair, "pair.textproto");
    CHECK(expect_error(ErrorCategory::BadInput, [&] { RoutingTables::build(pair); }) ==
          "pair.textproto:14: routing tables between meshes need a cluster descriptor (--cluster): "
          "the links "
          "of the connection of mesh 0 and mesh 1 (1 channels) are chosen by the topology mapping "
          "(fabricctl mesh map --cluster FILE --mesh-graph pair.textproto)");
    // The mapping's choice: mesh 0 device 1 east, plane 0, to mesh 1 device 0 west, both ways.
    const MeshPort east{{0, 1}, MeshDir::E, 0};
    const MeshPort west{{1, 0}, MeshDir::W, 0};
    const MeshGraph g = pair.resolved({{east, west, 0}, {west, east, 0}});
    CHECK(g.links_resolved());
    CHECK(g.links().size() == 2);
    CHECK(g.form() == kMgd);
    const RoutingTables t = RoutingTables::build(g);
    CHECK(t.source_route({0, 0}, {1, 1}).str() == "M0D0 -E-> M0D1 =E=> M1D0 -E-> M1D1");
    CHECK(t.source_route({1, 1}, {0, 0}).str() == "M1D1 -W-> M1D0 =W=> M0D1 -W-> M0D0");

    // A single MGD mesh builds its L0 tables as it is.
    const RoutingTables single = RoutingTables::build(MeshGraph::parse_textproto(kSingle, "s"));
    CHECK(single.l0_string(0, 0, 31) == "EEESSSSSSS");
}

TEST_CASE("mesh graph: resolved links the descriptor does not allow are internal errors",
          "[mesh][mgd]") {
    const MeshGraph pair = MeshGraph::parse_textproto(kPair, "pair.textproto");
    const MeshPort east{{0, 1}, MeshDir::E, 0};
    const MeshPort west{{1, 0}, MeshDir::W, 0};
    // Device 0 of mesh 0 is not on its east edge.
    CHECK(expect_error(ErrorCategory::Internal,
                       [&] {
                           pair.resolved({{{{0, 0}, MeshDir::E, 0}, west, 0}, {west, east, 0}});
                       }) ==
          "pair.textproto: resolved link 0 (M0D0 E plane 0 -> M1D0 W plane 0): M0D0 is not on "
          "the E edge of mesh 0");
    CHECK(expect_error(ErrorCategory::Internal,
                       [&] {
                           pair.resolved({{{{0, 1}, MeshDir::E, 2}, west, 0}});
                       }) ==
          "pair.textproto: resolved link 0 (M0D1 E plane 2 -> M1D0 W plane 0): M0D1 E plane 2: "
          "plane 2 does not exist (2 ports per direction)");
    // One port cabled to two peers.
    const MeshPort west1{{1, 0}, MeshDir::W, 1};
    CHECK(expect_error(ErrorCategory::Internal,
                       [&] {
                           pair.resolved({{east, west, 0}, {east, west1, 0}});
                       }) ==
          "pair.textproto: resolved link 1 (M0D1 E plane 0 -> M1D0 W plane 1): M0D1 E plane 0 "
          "already sends to M1D0 W plane 0 (resolved link 0)");
    // The undirected connection needs a link in each direction.
    CHECK(expect_error(ErrorCategory::Internal,
                       [&] {
                           pair.resolved({{east, west, 0}});
                       }) ==
          "pair.textproto:14: the connection of mesh 0 and mesh 1 (1 channels, STRICT) has 0 "
          "resolved link(s) from mesh 1 to mesh 0");
    // Links between meshes that no connection joins.
    const MeshGraph alone = MeshGraph::parse_textproto(
        replace(kPair,
                "  connections {\n    nodes { mesh { mesh_descriptor: \"M0\" mesh_id: 0 } }\n"
                "    nodes { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }\n"
                "    channels { count: 1 }\n  }\n",
                ""),
        "alone.textproto");
    CHECK(expect_error(ErrorCategory::Internal,
                       [&] {
                           alone.resolved({{east, west, 0}});
                       }) ==
          "alone.textproto: resolved links M0D1 E plane 0 -> M1D0 W plane 0 join meshes 0 and 1, "
          "which no connection joins");
}

// ---- MGD refusals, one per kind, exact messages -----------------------------------------------

TEST_CASE("bad MGD: a syntax error is protobuf's, with line and column", "[mesh][mgd][bad]") {
    CHECK(bad_mgd(replace(kPair, "dims: [ 1, 2 ]", "dims: [ 1, 2 }")) ==
          "m.textproto:5:34: Expected \",\", found \"}\".");
    CHECK(bad_mgd(kPair + "}\n") == "m.textproto:21:1: Expected identifier, got: }");
}

TEST_CASE("bad MGD: an unknown field is refused by protobuf, by name", "[mesh][mgd][bad]") {
    CHECK(bad_mgd(replace(kPair, "  type: \"FABRIC\"", "  kind: \"FABRIC\"")) ==
          "m.textproto:11:7: Message type \"fabric.mgd.GraphDescriptor\" has no field named "
          "\"kind\".");
    CHECK(bad_mgd(replace(kPair, "arch: WORMHOLE_B0", "arch: GRAYSKULL")) ==
          "m.textproto:5:3: Unknown enumeration value of \"GRAYSKULL\" for field \"arch\".");
    CHECK(bad_mgd(replace(kPair, "name: \"G0\"", "name: \"G0\" name: \"G1\"")) ==
          "m.textproto:10:18: Non-repeated field \"name\" is specified multiple times.");
}

TEST_CASE("bad MGD: device topologies of one or three dimensions", "[mesh][mgd][bad]") {
    CHECK(bad_mgd(replace(kSingle, "dims: [ 8, 4 ]", "dims: [ 2, 4, 4 ]")) ==
          "m.textproto:4: field 'mesh_descriptors[0].device_topology.dims': 3-dimensional "
          "topologies are not supported (dims [2, 4, 4]): this project builds 2D meshes, give "
          "[rows, cols]");
    CHECK(bad_mgd(replace(kSingle, "dims: [ 8, 4 ]", "dims: [ 32 ]")) ==
          "m.textproto:4: field 'mesh_descriptors[0].device_topology.dims': 1-dimensional "
          "topologies are not supported (dims [32]): this project builds 2D meshes, give "
          "[rows, cols]");
    CHECK(bad_mgd(replace(kSingle, "dims: [ 8, 4 ] ", "")) ==
          "m.textproto:4: field 'mesh_descriptors[0].device_topology.dims': required field is "
          "missing: expected [rows, cols]");
    CHECK(bad_mgd(replace(kSingle, "dims: [ 8, 4 ]", "dims: [ 8, 0 ]")) ==
          "m.textproto:4: field 'mesh_descriptors[0].device_topology.dims': dims[1] is 0: every "
          "dimension needs at least one device");
}

TEST_CASE("bad MGD: a mesh of more than 256 devices", "[mesh][mgd][bad]") {
    CHECK(bad_mgd(replace(kSingle, "dims: [ 8, 4 ]", "dims: [ 64, 8 ]")) ==
          "m.textproto:4: field 'mesh_descriptors[0].device_topology.dims': 64x8 = 512 devices; "
          "a mesh has at most 256 devices");
    CHECK(bad_mgd(replace(kSingle, "dims: [ 8, 4 ]", "dims: [ 2147483647, 2147483647 ]")) ==
          "m.textproto:4: field 'mesh_descriptors[0].device_topology.dims': 2147483647x2147483647 "
          "= 4611686014132420609 devices; a mesh has at most 256 devices");
}

TEST_CASE("bad MGD: dim types", "[mesh][mgd][bad]") {
    CHECK(
        bad_mgd(replace(kSingle, "dim_types: [ RING, RING ]", "dim_types: [ RING, RING, LINE ]")) ==
        "m.textproto:4: field 'mesh_descriptors[0].device_topology.dim_types': 3 types for 2 "
        "dims");
    CHECK(bad_mgd(replace(kSingle, "dim_types: [ RING, RING ]",
                          "dim_types: [ RING ] types: [ RING ]")) ==
          "m.textproto:4: field 'mesh_descriptors[0].device_topology.types': give dim_types or its "
          "older spelling types, not both");
    CHECK(bad_mgd(
              replace(kSingle, "dim_types: [ RING, RING ]", "dim_types: [ RING, INVALID_TYPE ]")) ==
          "m.textproto:4: field 'mesh_descriptors[0].device_topology.dim_types[1]': expected LINE "
          "or RING, got INVALID_TYPE");
}

TEST_CASE("bad MGD: hosts that do not divide the mesh", "[mesh][mgd][bad]") {
    CHECK(bad_mgd(replace(kSingle, "host_topology { dims: [ 1, 1 ] }",
                          "host_topology { dims: [ 3, 1 ] }")) ==
          "m.textproto:5: field 'mesh_descriptors[0].host_topology.dims': hosts [3, 1] do not "
          "divide the devices [8, 4]: every host owns an equal block of the mesh");
    CHECK(bad_mgd(replace(kSingle, "  host_topology { dims: [ 1, 1 ] }\n", "")) ==
          "m.textproto:1: field 'mesh_descriptors[0].host_topology': required field is missing");
}

TEST_CASE("bad MGD: channels", "[mesh][mgd][bad]") {
    CHECK(bad_mgd(replace(kSingle, "count: 2 policy: STRICT", "count: 0")) ==
          "m.textproto:6: field 'mesh_descriptors[0].channels.count': 0 channels: a connection "
          "needs at least 1");
    CHECK(bad_mgd(replace(kSingle, "count: 2 policy: STRICT", "policy: STRICT")) ==
          "m.textproto:6: field 'mesh_descriptors[0].channels.count': required field is missing");
    CHECK(bad_mgd(replace(kSingle, "policy: STRICT", "policy: INVALID_POLICY")) ==
          "m.textproto:6: field 'mesh_descriptors[0].channels.policy': expected STRICT or "
          "RELAXED, got INVALID_POLICY");
    CHECK(bad_mgd(replace(kPair, "    channels { count: 1 }\n", "")) ==
          "m.textproto:14: field 'graph_descriptors[0].connections[0].channels': required field is "
          "missing");
}

TEST_CASE("bad MGD: features this project does not implement are refused by name",
          "[mesh][mgd][bad]") {
    CHECK(bad_mgd(replace(kSingle, "  channels {",
                          "  express_connections { src: 0 dst: 4 }\n  channels {")) ==
          "m.textproto:6: field 'mesh_descriptors[0].express_connections[0]': "
          "express_connections are not supported");
    CHECK(bad_mgd(kSingle + "switch_descriptors { name: \"SW0\" arch: BLACKHOLE }\n") ==
          "m.textproto:9: field 'switch_descriptors[0]': switch_descriptors are not supported");
    CHECK(bad_mgd(replace(kPair, "channels { count: 1 }",
                          "channels { count: 1 } routing_direction: [ E ]")) ==
          "m.textproto:17: field 'graph_descriptors[0].connections[0].routing_direction[0]': "
          "routing_direction is not supported: the directions of a connection come from the "
          "cluster's cabling");
    CHECK(bad_mgd(replace(kPair, "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }",
                          "instances { graph { graph_descriptor: \"G1\" graph_id: 0 } }")) ==
          "m.textproto:13: field 'graph_descriptors[0].instances[1].graph': an instance names "
          "graph 'G1': nested graphs are not supported (a graph of meshes only)");
    CHECK(
        bad_mgd(replace(kPair, "graph_id: 0 }",
                        "graph_id: 0 sub_ref { mesh { mesh_descriptor: \"M0\" mesh_id: 0 } } }")) ==
        "m.textproto:20: field 'top_level_instance.graph.sub_ref': the top-level instance is a "
        "whole graph: sub-references are not supported");
}

TEST_CASE("bad MGD: meshes of different archs in one fabric", "[mesh][mgd][bad]") {
    const std::string bh =
        "mesh_descriptors { name: \"M1\" arch: BLACKHOLE device_topology { dims: [ 1, 2 ] } "
        "host_topology { dims: [ 1, 1 ] } channels { count: 2 } }\n";
    const std::string mixed =
        replace(replace(kPair, "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }",
                        "instances { mesh { mesh_descriptor: \"M1\" mesh_id: 1 } }"),
                "nodes { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }",
                "nodes { mesh { mesh_descriptor: \"M1\" mesh_id: 1 } }");
    CHECK(bad_mgd(bh + mixed) ==
          "m.textproto:14: field 'graph_descriptors[0].instances[1].mesh': mesh 1 ('M1') is "
          "blackhole but mesh 0 ('M0') is "
          "wormhole_b0: every mesh of a fabric has the same arch");
}

TEST_CASE("bad MGD: mesh instances and references", "[mesh][mgd][bad]") {
    CHECK(bad_mgd(replace(kPair, "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }",
                          "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 2 } }")) ==
          "m.textproto:16: field 'graph_descriptors[0].connections[0].nodes[1].mesh.mesh_id': "
          "mesh 1 is not an instance of this graph");
    CHECK(
        bad_mgd(replace(replace(kPair, "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }",
                                "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 2 } }"),
                        "mesh_id: 1 } }\n    channels", "mesh_id: 2 } }\n    channels")) ==
        "m.textproto:9: field 'graph_descriptors[0].instances': mesh ids must be 0..1 without "
        "gaps; mesh 1 is missing");
    CHECK(bad_mgd(replace(kPair, "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }",
                          "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 0 } }")) ==
          "m.textproto:13: field 'graph_descriptors[0].instances[1].mesh.mesh_id': mesh 0 is "
          "already an instance of this graph (line 12)");
    CHECK(bad_mgd(replace(kPair, "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }",
                          "instances { mesh { mesh_descriptor: \"M9\" mesh_id: 1 } }")) ==
          "m.textproto:13: field 'graph_descriptors[0].instances[1].mesh.mesh_descriptor': unknown "
          "mesh descriptor 'M9' (mesh descriptors: M0)");
    CHECK(bad_mgd(replace(kPair, "mesh_id: 1 } }\n    channels",
                          "mesh_id: 1 device_id: 2 } }\n    channels")) ==
          "m.textproto:16: field 'graph_descriptors[0].connections[0].nodes[1].mesh.device_id': "
          "unknown device 2 in mesh 1 (1x2: devices 0..1)");
    CHECK(bad_mgd(replace(kPair, "mesh_id: 1 } }\n    channels", "mesh_id: 0 } }\n    channels")) ==
          "m.textproto:15: field 'graph_descriptors[0].connections[0].nodes': connects mesh 0 to "
          "itself: connections join two meshes");
    CHECK(bad_mgd(replace(kPair, "graph_descriptor: \"G0\"", "graph_descriptor: \"G7\"")) ==
          "m.textproto:20: field 'top_level_instance.graph.graph_descriptor': unknown graph "
          "descriptor 'G7' (graph descriptors: G0)");
    CHECK(bad_mgd(replace(kSingle, "mesh_id: 0 }", "mesh_id: 3 }")) ==
          "m.textproto:8: field 'top_level_instance.mesh.mesh_id': the only mesh of the fabric "
          "has id 0, got 3");
    CHECK(bad_mgd(replace(
              kSingle, "top_level_instance { mesh { mesh_descriptor: \"M0\" mesh_id: 0 } }\n",
              "")) == "m.textproto:1: field 'top_level_instance': required field is missing");
    CHECK(bad_mgd(replace(kSingle, "name: \"M0\"\n", "")) ==
          "m.textproto:1: field 'mesh_descriptors[0].name': required field is missing");
    CHECK(bad_mgd(kSingle + "mesh_descriptors { name: \"M0\" }\n") ==
          "m.textproto:9: field 'mesh_descriptors[1].name': mesh descriptor 'M0' is already "
          "defined (line 1)");
    CHECK(bad_mgd("# nothing\n") ==
          "m.textproto:1: field 'mesh_descriptors': required field is missing: a descriptor needs "
          "a mesh");
}

TEST_CASE("bad MGD: graph topology without channels", "[mesh][mgd][bad]") {
    CHECK(bad_mgd(
              replace(kPair,
                      "  connections {\n    nodes { mesh { mesh_descriptor: \"M0\" mesh_id: 0 } }\n"
                      "    nodes { mesh { mesh_descriptor: \"M0\" mesh_id: 1 } }\n"
                      "    channels { count: 1 }\n  }\n",
                      "  graph_topology { layout_type: ALL_TO_ALL }\n")) ==
          "m.textproto:14: field 'graph_descriptors[0].graph_topology.channels': required field "
          "is missing: graph_topology needs channels (in graph_topology or in the graph)");
}

TEST_CASE("bad MGD: pinnings", "[mesh][mgd][bad]") {
    const std::string pin00 =
        "pinnings { logical_fabric_node_id { mesh_id: 0 chip_id: 0 } physical_asic_position { "
        "tray_id: 1 asic_location: 1 } }\n";
    const MeshGraph ok = MeshGraph::parse_textproto(kSingle + pin00, "ok");
    REQUIRE(ok.pins().size() == 1);
    CHECK(ok.pins()[0].line == 9);
    CHECK(bad_mgd(kSingle + pin00 + pin00) ==
          "m.textproto:10: field 'pinnings[1]': M0D0 is already pinned (line 9)");
    CHECK(bad_mgd(kSingle + pin00 + replace(pin00, "chip_id: 0", "chip_id: 5")) ==
          "m.textproto:10: field 'pinnings[1]': tray 1 ASIC 1 already holds M0D0 (line 9)");
    CHECK(bad_mgd(kSingle + replace(pin00, "chip_id: 0", "chip_id: 32")) ==
          "m.textproto:9: field 'pinnings[0].logical_fabric_node_id.chip_id': unknown device 32 "
          "in mesh 0 (8x4: devices 0..31)");
    CHECK(bad_mgd(kSingle + replace(pin00, "mesh_id: 0 chip_id", "mesh_id: 1 chip_id")) ==
          "m.textproto:9: field 'pinnings[0].logical_fabric_node_id.mesh_id': unknown mesh 1 "
          "(meshes 0..0)");
    CHECK(bad_mgd(kSingle + replace(pin00, " asic_location: 1", "")) ==
          "m.textproto:9: field 'pinnings[0].physical_asic_position.asic_location': required "
          "field is missing");
}

// ---- YAML refusals and limits ------------------------------------------------------------------

TEST_CASE("bad mesh graph YAML: a mesh of more than 256 devices, sizes in 64 bits",
          "[mesh][mgd][bad]") {
    CHECK(bad_yaml(replace(replace(kYamlMesh, "topology: [1, 2]}", "topology: [64, 8]}"),
                           "device_topology: [1, 2]", "device_topology: [64, 8]")) ==
          "m.yaml:3: field 'Mesh[0]': 64x8 = 512 devices; a mesh has at most 256 devices");
    // 65536 x 65536 boards of 65536 x 65536 devices: no 32-bit wrap to a small mesh.
    CHECK(bad_yaml(replace(replace(kYamlMesh, "topology: [1, 2]}", "topology: [65536, 65536]}"),
                           "device_topology: [1, 2], host_topology: [1, 1]",
                           "host_topology: [65536, 65536]")) ==
          "m.yaml:3: field 'Mesh[0]': 4294967296x4294967296 devices; a mesh has at most 256 "
          "devices");
    CHECK(bad_yaml(replace(replace(kYamlMesh, "topology: [1, 2]}", "topology: [65536, 1]}"),
                           "device_topology: [1, 2], host_topology: [1, 1]",
                           "host_topology: [65536, 1]")) ==
          "m.yaml:3: field 'Mesh[0]': 4294967296x1 = 4294967296 devices; a mesh has at most 256 "
          "devices");
}

TEST_CASE("bad mesh graph YAML: unknown keys in closed mappings", "[mesh][mgd][bad]") {
    CHECK(bad_yaml(kYamlMesh + "Graphs: []\n") ==
          "m.yaml:5: unknown key 'Graphs' (known: ChipSpec, Board, Mesh, Graph, RelaxedGraph)");
    CHECK(
        bad_yaml(replace(kYamlMesh, "host_topology: [1, 1]", "host_topology: [1, 1], hosts: 1")) ==
        "m.yaml:3: field 'Mesh[0]': unknown key 'hosts' (known: id, board, device_topology, "
        "host_topology, topology, host_ranks, host_mapping)");
    CHECK(bad_yaml(replace(kYamlMesh, "W: 2}", "W: 2, U: 1}")) ==
          "m.yaml:1: field 'ChipSpec.ethernet_ports': unknown key 'U' (known: N, E, S, W, Z)");
}

TEST_CASE("bad mesh graph YAML: an unsupported board type", "[mesh][mgd][bad]") {
    CHECK(bad_yaml(replace(kYamlMesh, "type: Mesh", "type: Torus")) ==
          "m.yaml:2: field 'Board[0].type': board type 'Torus' is not supported (known: Mesh, "
          "TORUS_X, TORUS_Y, TORUS_XY, TORUS_2D)");
}

TEST_CASE("bad mesh graph YAML: no Ethernet ports for a mesh of several devices",
          "[mesh][mgd][bad]") {
    CHECK(bad_yaml(replace(kYamlMesh, "{N: 2, E: 2, S: 2, W: 2}", "{N: 0, E: 0, S: 0, W: 0}")) ==
          "m.yaml:3: field 'Mesh[0]': 1x2 devices need Ethernet ports between them, but "
          "ChipSpec.ethernet_ports is 0 per direction");
}

TEST_CASE("bad mesh graph YAML: the older topology key with the newer ones", "[mesh][mgd][bad]") {
    CHECK(bad_yaml(replace(kYamlMesh, "host_topology: [1, 1]", "topology: [1, 1]")) ==
          "m.yaml:3: field 'Mesh[0].topology': the older key 'topology' cannot be combined with "
          "device_topology or host_topology");
}

TEST_CASE("bad mesh graph YAML: RelaxedGraph entries", "[mesh][mgd][bad]") {
    const std::string two =
        replace(kYamlMesh, "host_topology: [1, 1]}]", "host_topology: [1, 1]}, {id: 1, board: B}]");
    CHECK(MeshGraph::parse_yaml(two + "RelaxedGraph: [[M0, 1, 2]]\n", "ok")
              .mesh_connections()
              .size() == 1);
    CHECK(bad_yaml(two + "RelaxedGraph: [[M0, M2, 2]]\n") ==
          "m.yaml:5: field 'RelaxedGraph[0][1]': unknown mesh 2 (meshes 0..1)");
    CHECK(bad_yaml(two + "RelaxedGraph: [[M0, M0, 2]]\n") ==
          "m.yaml:5: field 'RelaxedGraph[0]': connects mesh 0 to itself");
    CHECK(bad_yaml(two + "RelaxedGraph: [[M0, M1, 0]]\n") ==
          "m.yaml:5: field 'RelaxedGraph[0][2]': a connection needs at least 1 channel");
    CHECK(bad_yaml(two + "RelaxedGraph: [[M0, X1, 2]]\n") ==
          "m.yaml:5: field 'RelaxedGraph[0][1]': expected a mesh like M0, got 'X1'");
    CHECK(bad_yaml(two + "RelaxedGraph: [[M0, M1]]\n") ==
          "m.yaml:5: field 'RelaxedGraph[0]': expected [M<a>, M<b>, channels], got a list of 2");
}
