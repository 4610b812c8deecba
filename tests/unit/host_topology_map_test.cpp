// The topology mapping (fabric/topology_map.h): mesh graphs placed on clusters whose chip ids are
// not mesh positions and whose links cross channel numbers; pins; what a cluster that cannot host
// a graph is told; the largest mesh of a cluster; random renamings of valid clusters always map.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/mesh_graph.h"
#include "fabric/topology_map.h"
#include "scrambled_cluster.h"

using fabric::ChannelPolicy;
using fabric::ChipId;
using fabric::ClusterDescriptor;
using fabric::ErrorCategory;
using fabric::EthPortRef;
using fabric::map_topology;
using fabric::MapOptions;
using fabric::MeshDir;
using fabric::MeshGraph;
using fabric::MeshNode;
using fabric::MeshPort;
using fabric::TopologyMap;
using fabric::test::cluster;
using fabric::test::expect_error;
using fabric::test::mesh_graph;

namespace {

ClusterDescriptor parse_cluster(const std::string& yaml,
                                const std::string& name = "test_cluster.yaml") {
    return ClusterDescriptor::parse(yaml, name);
}

// "4x8 2": the largest mesh of a cluster, and its channels (routing planes).
std::string derived(const ClusterDescriptor& c) {
    const MeshGraph g = fabric::derive_mesh_graph(c);
    const fabric::MeshSpec& m = g.mesh(0);
    return fmt::format("{}x{} {}", m.rows, m.cols, m.channels);
}

// Every neighbour pair of the graph's meshes sits on two chips joined by at least `need` links,
// every port's link joins the chips of its two devices, and no chip plays two devices.
void check_embedding(const TopologyMap& map, uint32_t need) {
    const MeshGraph& g = map.graph();
    std::set<ChipId> chips;
    for (const fabric::MeshSpec& m : g.meshes()) {
        for (uint32_t d = 0; d < m.device_count(); ++d) {
            CHECK(chips.insert(map.chip_of({m.id, d})).second);
            for (MeshDir dir : {MeshDir::E, MeshDir::S}) {
                const auto nb = m.neighbor(d, dir);
                if (!nb) continue;
                uint32_t links = 0;
                for (const auto& c : map.cluster().connections()) {
                    const ChipId a = map.chip_of({m.id, d}), b = map.chip_of({m.id, *nb});
                    links += (c.a.chip == a && c.b.chip == b) || (c.a.chip == b && c.b.chip == a);
                }
                INFO("M" << m.id << "D" << d << " " << fabric::dir_letter(dir));
                CHECK(links >= need);
            }
        }
    }
    for (const auto& [port, link] : map.ports()) {
        CHECK(link.self_eth.chip == map.chip_of(port.node));
        CHECK(link.peer_eth.chip == map.chip_of(link.peer.node));
        CHECK(map.cluster().peer(link.self_eth) == std::optional<EthPortRef>(link.peer_eth));
        const auto* back = map.port(link.peer);
        REQUIRE(back != nullptr);
        CHECK(back->peer == port);
    }
}

const std::string kP300 = R"(arch: {0: blackhole, 1: blackhole}
chips: {}
ethernet_connections:
  - [{chip: 0, chan: 2}, {chip: 1, chan: 9}]
  - [{chip: 0, chan: 3}, {chip: 1, chan: 8}]
chips_with_mmio: [{0: 1}, {1: 0}]
)";

// t3k_cluster.yaml without one of the two links between chips 1 and 2.
std::string t3k_without_link() {
    const ClusterDescriptor& t3k = cluster("t3k_cluster.yaml");
    std::string y = "arch:\n";
    for (ChipId c = 0; c < 8; ++c) y += fmt::format("  {}: wormhole_b0\n", c);
    y += "ethernet_connections:\n";
    for (const auto& c : t3k.connections()) {
        if (c.a == EthPortRef{1, 2}) continue;
        y += fmt::format("  - [{{chip: {}, chan: {}}}, {{chip: {}, chan: {}}}]\n", c.a.chip,
                         c.a.chan, c.b.chip, c.b.chan);
    }
    return y + "chips_with_mmio: [{0: 0}]\n";
}

}  // namespace

TEST_CASE("a cluster wired in mesh order maps onto itself", "[topology_map]") {
    const TopologyMap map =
        map_topology(mesh_graph("t3k_mesh_graph.yaml"), cluster("t3k_cluster.yaml"));
    for (uint32_t d = 0; d < 8; ++d) CHECK(map.chip_of({0, d}) == d);
    CHECK(map.planes() == 2);
    CHECK(map.unused_chips().empty());
    const auto* east = map.port({{0, 0}, MeshDir::E, 1});
    REQUIRE(east != nullptr);
    CHECK(east->self_eth == EthPortRef{0, 3});
    CHECK(east->peer_eth == EthPortRef{1, 5});
    CHECK(east->peer == MeshPort{{0, 1}, MeshDir::W, 1});
    CHECK(east->how == "mesh neighbour");
    CHECK(map.port({{0, 0}, MeshDir::N, 0}) == nullptr);
    CHECK(map.ports().size() == 2 * 10 * 2);  // 10 neighbour pairs, 2 planes, both ends
    check_embedding(map, 2);
}

TEST_CASE("crossed channel numbers pair the k-th link at both ends", "[topology_map]") {
    const ClusterDescriptor p300 = parse_cluster(kP300);
    const MeshGraph g =
        MeshGraph::single_mesh(hal::Arch::Blackhole, 1, 2, 2, ChannelPolicy::Strict, "p300");
    const TopologyMap map = map_topology(g, p300);
    CHECK(map.planes() == 2);
    const auto* p0 = map.port({{0, 0}, MeshDir::E, 0});
    const auto* p1 = map.port({{0, 1}, MeshDir::W, 1});
    REQUIRE(p0 != nullptr);
    REQUIRE(p1 != nullptr);
    CHECK(p0->self_eth == EthPortRef{0, 2});
    CHECK(p0->peer_eth == EthPortRef{1, 9});
    CHECK(p1->self_eth == EthPortRef{1, 8});
    CHECK(p1->peer_eth == EthPortRef{0, 3});
}

TEST_CASE("random renamings of chip ids and channels of a valid cluster always map",
          "[topology_map]") {
    struct Case {
        const char* graph;
        const char* cluster;
        uint32_t links;
    };
    for (const Case& c : {Case{"t3k_mesh_graph.yaml", "t3k_cluster.yaml", 2},
                          Case{"galaxy_8x4_mesh_graph.yaml", "galaxy_8x4_cluster.yaml", 4},
                          Case{"bh_2x2_mesh_graph.yaml", "bh_2x2_cluster.yaml", 1}}) {
        for (uint32_t seed = 1; seed <= fabric::test::property_seeds(4); ++seed) {
            INFO(c.cluster << " seed " << seed);
            const auto s = fabric::test::scramble(cluster(c.cluster), seed);
            const ClusterDescriptor scrambled = parse_cluster(s.yaml, "scrambled.yaml");
            const TopologyMap map = map_topology(mesh_graph(c.graph), scrambled);
            check_embedding(map, c.links);
            const TopologyMap again = map_topology(mesh_graph(c.graph), scrambled);
            CHECK(again.ports().size() == map.ports().size());
            for (uint32_t d = 0; d < map.graph().device_count(); ++d) {
                CHECK(again.chip_of({0, d}) == map.chip_of({0, d}));
            }
        }
    }
}

TEST_CASE("pins place devices where the user says", "[topology_map]") {
    MapOptions o;
    o.pins = {{{0, 0}, 7}};
    const TopologyMap map =
        map_topology(mesh_graph("t3k_mesh_graph.yaml"), cluster("t3k_cluster.yaml"), o);
    CHECK(map.chip_of({0, 0}) == 7);
    CHECK(map.chip_of({0, 7}) == 0);
    check_embedding(map, 2);
    CHECK(fabric::parse_chip_pin("0:5=12")->chip == 12);
    CHECK(fabric::parse_chip_pin("0:5=12")->node == MeshNode{0, 5});
    CHECK_FALSE(fabric::parse_chip_pin("0:5"));
    CHECK_FALSE(fabric::parse_chip_pin("0:5=x"));
}

TEST_CASE("a cluster that cannot host the graph is told what is missing", "[topology_map]") {
    const MeshGraph& t3k = mesh_graph("t3k_mesh_graph.yaml");
    SECTION("one link missing") {
        const ClusterDescriptor c = parse_cluster(t3k_without_link(), "t3k_one_down.yaml");
        const MeshGraph strict =
            MeshGraph::single_mesh(hal::Arch::WormholeB0, 2, 4, 2, ChannelPolicy::Strict, "t3k");
        CHECK(expect_error(ErrorCategory::BadInput, [&] { map_topology(strict, c); }) ==
              "topology map: t3k (8 devices) cannot be placed on t3k_one_down.yaml (8 chips): M0D1 "
              "-E- M0D2 needs 2 "
              "links (STRICT, channels 2), but chip 1 and chip 2 have 1: chip 1 chan 3 <-> chip 2 "
              "chan 5");
        // The YAML form is Relaxed: the mesh comes up with the one plane every pair has.
        CHECK(map_topology(t3k, c).planes() == 1);
    }
    SECTION("a torus on a cluster without its wrap cables") {
        CHECK(expect_error(ErrorCategory::BadInput,
                           [&] {
                               map_topology(mesh_graph("mesh_4x4_mesh_graph.yaml").as_torus(),
                                            cluster("mesh_4x4_cluster.yaml"));
                           })
                  .find("(16 chips): M0D0 -W- M0D3 (torus wrap) needs 1 link (RELAXED, channels "
                        "2), but chip 0 and "
                        "chip 3 are not connected; M0D4 -W- M0D7 (torus wrap) needs 1 link") !=
              std::string::npos);
    }
    SECTION("too few chips") {
        const std::string msg = expect_error(ErrorCategory::BadInput, [&] {
            map_topology(mesh_graph("galaxy_8x4_mesh_graph.yaml"), cluster("t3k_cluster.yaml"));
        });
        CHECK(msg.find("has 32 devices but cluster") != std::string::npos);
    }
    SECTION("another arch") {
        const std::string msg =
            expect_error(ErrorCategory::BadInput, [&] { map_topology(t3k, parse_cluster(kP300)); });
        CHECK(msg.find("is wormhole_b0 but cluster test_cluster.yaml is blackhole") !=
              std::string::npos);
    }
    SECTION("pins") {
        MapOptions o;
        o.pins = {{{0, 0}, 8}};
        CHECK(expect_error(ErrorCategory::BadInput, [&] {
                  map_topology(t3k, cluster("t3k_cluster.yaml"), o);
              }).find("pin M0D0=8: cluster") != std::string::npos);
        o.pins = {{{0, 0}, 1}, {{0, 1}, 1}};
        CHECK(expect_error(ErrorCategory::BadInput, [&] {
                  map_topology(t3k, cluster("t3k_cluster.yaml"), o);
              }) == "topology map: chip 1 is pinned to both M0D0 and M0D1");
        o.pins = {{{0, 0}, 1}, {{0, 0}, 2}};
        CHECK(expect_error(ErrorCategory::BadInput, [&] {
                  map_topology(t3k, cluster("t3k_cluster.yaml"), o);
              }) == "topology map: M0D0 is pinned to both chip 1 and chip 2");
    }
    SECTION("no link at all") {
        const MeshGraph g =
            MeshGraph::single_mesh(hal::Arch::WormholeB0, 1, 2, 1, ChannelPolicy::Strict, "g");
        const ClusterDescriptor two = ClusterDescriptor::unconnected(hal::Arch::WormholeB0, 2);
        CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { map_topology(g, two); }),
                   Catch::Matchers::EndsWith(
                       "(2 chips): M0D0 -E- M0D1 needs 1 link (STRICT, channels 1), but chip 0 "
                       "and chip 1 are not connected"));
    }
    SECTION("nothing close") {
        const MeshGraph g =
            MeshGraph::single_mesh(hal::Arch::WormholeB0, 3, 3, 1, ChannelPolicy::Strict, "g");
        const ClusterDescriptor nine = ClusterDescriptor::unconnected(hal::Arch::WormholeB0, 9);
        CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { map_topology(g, nine); }),
                   Catch::Matchers::EndsWith(
                       "(9 devices) cannot be placed on " + nine.source() +
                       " (9 chips): no chip can be M0D0: it needs 2 linked neighbour(s); "
                       "the most any chip has is 0"));
    }
    SECTION("a ring of two") {
        MeshGraph g =
            MeshGraph::single_mesh(hal::Arch::WormholeB0, 2, 4, 2, ChannelPolicy::Strict, "g");
        CHECK(expect_error(ErrorCategory::BadInput,
                           [&] { map_topology(g.as_torus(), cluster("t3k_cluster.yaml")); }) ==
              "topology map: mesh 0 of g is a ring of 2 rows (N/S): its wrap would join the same "
              "two chips in two "
              "directions; rings of 2 are not supported");
    }
}

TEST_CASE("the largest mesh a cluster holds", "[topology_map]") {
    CHECK(derived(cluster("t3k_cluster.yaml")) == "2x4 2");
    CHECK(derived(cluster("galaxy_8x4_cluster.yaml")) == "4x8 4");
    CHECK(derived(cluster("n300_cluster.yaml")) == "1x2 2");
    CHECK(derived(parse_cluster(kP300)) == "1x2 2");
    CHECK(derived(parse_cluster(t3k_without_link())) == "2x4 1");
    CHECK(derived(ClusterDescriptor::unconnected(hal::Arch::WormholeB0, 3)) == "1x1 0");
    const auto s = fabric::test::scramble(cluster("galaxy_8x4_cluster.yaml"), 9);
    CHECK(derived(parse_cluster(s.yaml)) == "4x8 4");
}

namespace {

const ClusterDescriptor& real(const std::string& name) {
    return cluster("clusters/" + name + "_cluster.yaml");
}

MeshGraph shape(const ClusterDescriptor& c, uint32_t rows, uint32_t cols, uint32_t channels,
                bool torus = false) {
    const MeshGraph g =
        MeshGraph::single_mesh(c.arch(), rows, cols, channels, ChannelPolicy::Strict,
                               fmt::format("{}x{}{}", rows, cols, torus ? " torus" : ""));
    return torus ? g.as_torus() : g;
}

}  // namespace

TEST_CASE("every published shape maps onto a cluster shaped like the real one", "[topology_map]") {
    struct Case {
        const char* cluster;
        uint32_t rows, cols, channels;
        bool torus;
    };
    for (const Case& c :
         {Case{"n150", 1, 1, 0, false}, Case{"p150", 1, 1, 0, false}, Case{"n300", 1, 2, 2, false},
          Case{"p300", 1, 2, 2, false}, Case{"t3k", 2, 4, 2, false}, Case{"t3k", 4, 2, 2, false},
          Case{"n300_2x2", 2, 2, 2, false}, Case{"galaxy_6u", 8, 4, 4, false},
          Case{"galaxy_6u", 4, 8, 4, false}, Case{"galaxy_6u_torus", 8, 4, 4, true},
          Case{"p150_x8", 2, 4, 2, false}, Case{"p300_x2", 2, 2, 2, false},
          Case{"bh_galaxy", 8, 4, 2, true}, Case{"bh_galaxy_x4", 32, 4, 2, true},
          Case{"galaxy_6u_x2", 8, 8, 4, false}}) {
        INFO(c.cluster << " " << c.rows << "x" << c.cols);
        const TopologyMap map = map_topology(
            shape(real(c.cluster), c.rows, c.cols, c.channels, c.torus), real(c.cluster));
        check_embedding(map, c.channels);
        CHECK(map.planes() == c.channels);
    }
}

TEST_CASE("real-shaped clusters with a fault are refused naming it", "[topology_map]") {
    // The faults soc_descriptors/clusters/README.md documents: chip 1 ch 7 - chip 0 ch 7 down;
    // chip 13 ch 9 - chip 12 ch 9 down; the row-1 cable moved to another board.
    using Catch::Matchers::EndsWith;
    CHECK_THAT(
        expect_error(ErrorCategory::BadInput,
                     [&] { map_topology(shape(real("t3k"), 2, 4, 2), real("t3k_missing_link")); }),
        EndsWith("t3k_missing_link_cluster.yaml (8 chips): M0D1 -E- M0D2 needs 2 links (STRICT, "
                 "channels 2), "
                 "but chip 1 and chip 0 have 1: chip 1 chan 6 <-> chip 0 chan 6"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                map_topology(shape(real("galaxy_6u"), 8, 4, 4),
                                             real("galaxy_6u_missing_link"));
                            }),
               EndsWith("(32 chips): M0D12 -S- M0D16 needs 4 links (STRICT, channels 4), but chip "
                        "12 and chip 13 "
                        "have 3: chip 12 chan 8 <-> chip 13 chan 8, chip 12 chan 10 <-> chip 13 "
                        "chan 10, chip 12 "
                        "chan 11 <-> chip 13 chan 11"));
    CHECK_THAT(
        expect_error(ErrorCategory::BadInput,
                     [&] { map_topology(shape(real("t3k"), 2, 4, 2), real("t3k_miscabled")); }),
        EndsWith("t3k_miscabled_cluster.yaml (8 chips): M0D5 -E- M0D6 needs 2 links (STRICT, "
                 "channels 2), "
                 "but chip 3 and chip 2 are not connected"));
}

TEST_CASE("the descriptor's pinnings place devices on their tray and ASIC", "[topology_map]") {
    // A Galaxy's tray comes from the PCI bus (UBB numbering: bus 0x0N is Wormhole tray 3), other
    // boards count trays by chip; the older Galaxy format gives no bus, so no tray.
    CHECK(real("galaxy_6u_torus").asic_position(0) == fabric::AsicPosition{3, 1});
    CHECK_FALSE(real("galaxy_6u").asic_position(0));
    CHECK(real("p150_x8_cube").asic_position(3) == fabric::AsicPosition{4, 0});
    for (const auto& [graph, cluster_name] : std::vector<std::pair<std::string, std::string>>{
             {"p150_x8_mesh_graph.textproto", "p150_x8_cube"},
             {"galaxy_8x4_torus_x_mesh_graph.textproto", "galaxy_6u_torus"},
             {"galaxy_8x4_torus_y_mesh_graph.textproto", "galaxy_6u_y_torus"},
             {"galaxy_8x4_torus_xy_mesh_graph.textproto", "galaxy_6u_torus"},
             {"bh_galaxy_torus_xy_mesh_graph.textproto", "bh_galaxy"}}) {
        INFO(graph << " on " << cluster_name);
        const MeshGraph& g = mesh_graph(graph);
        const ClusterDescriptor& c = real(cluster_name);
        REQUIRE_FALSE(g.pins().empty());
        const TopologyMap map = map_topology(g, c);
        for (const fabric::AsicPin& pin : g.pins()) {
            INFO(pin.node.str());
            CHECK(c.asic_position(map.chip_of(pin.node)) ==
                  fabric::AsicPosition{pin.tray_id, pin.asic_location});
        }
    }
    using Catch::Matchers::EndsWith;
    // The 2 x 4 P150 cluster has no wrap links, so the pinned column torus cannot be placed.
    CHECK_THAT(
        expect_error(
            ErrorCategory::BadInput,
            [&] { map_topology(mesh_graph("p150_x8_mesh_graph.textproto"), real("p150_x8")); }),
        EndsWith("(8 chips): with 1 device(s) placed, no free chip next to chip 0 (M0D0) "
                 "can be M0D1 (it is pinned to chip 1)"));
    const MeshGraph tray9 = MeshGraph::parse_textproto(
        "mesh_descriptors { name: \"M0\" arch: BLACKHOLE device_topology { dims: [ 1, 2 ] }\n"
        "  host_topology { dims: [ 1, 1 ] } channels { count: 2 } }\n"
        "pinnings { logical_fabric_node_id { mesh_id: 0 chip_id: 1 } physical_asic_position { "
        "tray_id: 9 asic_location: 0 } }\n"
        "top_level_instance { mesh { mesh_descriptor: \"M0\" mesh_id: 0 } }\n",
        "tray9.textproto");
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { map_topology(tray9, real("p150_x8")); }),
               EndsWith("tray9.textproto line 3: M0D1 is pinned to tray 9 ASIC 0, which no chip "
                        "of " +
                        fabric::test::descriptor_dir() + "/clusters/p150_x8_cluster.yaml is"));
}

TEST_CASE("the largest mesh of real-shaped clusters", "[topology_map]") {
    const auto derived_real = [](const std::string& name) { return derived(real(name)); };
    CHECK(derived_real("n150") == "1x1 0");
    CHECK(derived_real("n300") == "1x2 2");
    CHECK(derived_real("p300") == "1x2 2");
    CHECK(derived_real("t3k") == "2x4 2");
    CHECK(derived_real("n300_2x2") == "2x2 2");
    CHECK(derived_real("galaxy_6u") == "4x8 4");
    CHECK(derived_real("p150_x8") == "2x4 2");
    CHECK(derived_real("p150_x4") == "2x2 4");
    CHECK(derived_real("p300_x2") == "2x2 2");
    CHECK(derived_real("bh_galaxy") == "4x8 2");
    CHECK(derived_real("t3k_missing_link") == "2x4 1");
}
