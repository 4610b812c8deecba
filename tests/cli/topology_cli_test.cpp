// `fabricctl mesh map`, `fabricctl cluster check` and `mesh run` without a mesh graph, as a
// process, on the cluster fixtures shaped like real ones (soc_descriptors/clusters/): the grid of
// chips printed exactly, the JSON document's links joining the chips the cluster joins, cabling
// faults named, and all-to-all traffic (every byte checked by the command) on the real shapes in
// the model.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_expect.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/soc_descriptor.h"
#include "run_process.h"

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using fabric::test::expect_failure;
using fabric::test::fabricctl;
using nlohmann::json;

namespace {

const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;
std::string real(const std::string& name) {
    return kSoc + "/clusters/" + name + "_cluster.yaml";
}

}  // namespace

TEST_CASE("fabricctl mesh map: the largest mesh of a T3K, chip by chip", "[cli][topology]") {
    const auto r = fabricctl({"mesh", "map", "--cluster", real("t3k")});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out == "no --mesh-graph: the largest mesh " + real("t3k") +
                       " holds is 2 x 4 with 2 routing planes\n"
                       "mesh graph (the largest mesh) on cluster " +
                       real("t3k") +
                       ": 1 mesh, 8 devices on 8 of 8 chips, 2 routing planes\n"
                       "mesh 0: 2 x 4, mesh, 2 channels per neighbour pair (RELAXED)\n"
                       "         col 0  col 1  col 2  col 3\n"
                       "  row 0       5      1      0      4\n"
                       "  row 1       7      3      2      6\n"
                       "unused chips: none\n");
    CHECK(r.err.empty());
}

TEST_CASE("fabricctl mesh map --json: every link joins the chips the cluster joins",
          "[cli][topology]") {
    const auto r = fabricctl({"mesh", "map", "--cluster", real("p150_x8"), "--json"});
    REQUIRE(r.code == 0);
    const json j = json::parse(r.out);
    const auto cluster = fabric::ClusterDescriptor::load_file(real("p150_x8"));
    CHECK(j["derived"] == true);
    CHECK(j["planes"] == 2);
    CHECK(j["meshes"][0]["rows"] == 2);
    CHECK(j["meshes"][0]["cols"] == 4);
    REQUIRE(j["links"].size() == 10 * 2);  // 10 neighbour pairs, 2 planes
    for (const auto& l : j["links"]) {
        const fabric::EthPortRef self{l["chip"], l["chan"]}, peer{l["peer_chip"], l["peer_chan"]};
        CHECK(cluster.peer(self) == std::optional<fabric::EthPortRef>(peer));
        const auto& devices = j["meshes"][0]["devices"];
        CHECK(devices[l["port"]["device"].get<int>()]["chip"] == l["chip"]);
        CHECK(devices[l["peer"]["device"].get<int>()]["chip"] == l["peer_chip"]);
        CHECK(l["port"]["plane"] == l["peer"]["plane"]);
    }
    CHECK(j["unused_chips"].empty());
}

TEST_CASE("fabricctl mesh map --pin moves a device, and bad pins are named", "[cli][topology]") {
    const auto r = fabricctl({"mesh", "map", "--cluster", real("t3k"), "--pin", "0:0=6", "--json"});
    REQUIRE(r.code == 0);
    const json j = json::parse(r.out);
    CHECK(j["meshes"][0]["devices"][0]["chip"] == 6);
    CHECK(j["meshes"][0]["devices"][7]["chip"] == 5);
    const auto bad = fabricctl({"mesh", "map", "--cluster", real("t3k"), "--pin", "0:0=x"});
    expect_failure(bad, 101);
    CHECK_THAT(bad.err, EndsWith("--pin '0:0=x': expected MESH:DEVICE=CHIP, e.g. 0:0=5\n"));
    const auto twice =
        fabricctl({"mesh", "map", "--cluster", real("t3k"), "--pin", "0:0=6", "--pin", "0:1=6"});
    expect_failure(twice, 101);
    CHECK_THAT(twice.err, EndsWith("topology map: chip 6 is pinned to both M0D0 and M0D1\n"));
}

TEST_CASE("fabricctl cluster check: a miscabled T3K, a link down, a good one", "[cli][topology]") {
    const std::string graph = kSoc + "/t3k_mesh_graph.yaml";
    const auto bad =
        fabricctl({"cluster", "check", "--cluster", real("t3k_miscabled"), "--mesh-graph", graph});
    CHECK(bad.code == 101);
    const std::string chip0 = "chip 0 [n300 0x100014611a33e15]",
                      chip2 = "chip 2 [n300 0x100014611a34a01]",
                      chip3 = "chip 3 [n300 0x100014611a34cc7]";
    CHECK(bad.out == "cluster " + real("t3k_miscabled") + ": 8 wormhole_b0 chips, 20 links\n" +
                         "missing: M0D5 -E- M0D6 (" + chip3 + " - " + chip2 +
                         ") has 0 of 2 links (RELAXED)\n" +
                         "wrong pair: chip 0 chan 0 <-> chip 3 chan 0 joins M0D2 on " + chip0 +
                         " and M0D5 on " + chip3 + ", which are not neighbours in " + graph + "\n" +
                         "wrong pair: chip 0 chan 1 <-> chip 3 chan 1 joins M0D2 on " + chip0 +
                         " and M0D5 on " + chip3 + ", which are not neighbours in " + graph + "\n");
    CHECK_THAT(
        bad.err,
        EndsWith("M0D5 -E- M0D6 needs 1 link (RELAXED, channels 2), but chip 3 and chip 2 are not "
                 "connected\n"));

    const auto down = fabricctl(
        {"cluster", "check", "--cluster", real("t3k_missing_link"), "--mesh-graph", graph});
    CHECK(down.code == 0);
    CHECK_THAT(down.out,
               Contains("missing: M0D1 -E- M0D2 (chip 1 [n300 ") &&
                   Contains("has 1 of 2 links (RELAXED): chip 1 chan 6 <-> chip 0 chan 6\n"));
    CHECK_THAT(down.err, Contains("cluster check passed") && Contains("with fewer routing planes"));

    const auto good = fabricctl({"cluster", "check", "--cluster", real("galaxy_6u"), "--json"});
    CHECK(good.code == 0);
    const json j = json::parse(good.out);
    CHECK(j["hostable"] == true);
    CHECK(j["wiring"].empty());
    CHECK(j["missing"].empty());
    CHECK(j["unused"].empty());
    CHECK(j["placement"].size() == 32);

    // A mesh graph on a torus-cabled Galaxy leaves the wrap links unused: counted, not listed.
    const auto wraps = fabricctl({"cluster", "check", "--cluster", real("galaxy_6u_torus"),
                                  "--mesh-graph", kSoc + "/galaxy_8x4_mesh_graph.yaml"});
    CHECK(wraps.code == 0);
    CHECK_THAT(wraps.out, Contains("unused: 48 links between chips whose devices are not "
                                   "neighbours in " +
                                   kSoc + "/galaxy_8x4_mesh_graph.yaml\n"));
    CHECK_THAT(wraps.out, !Contains("wrong pair"));
}

TEST_CASE(
    "fabricctl cluster check: entries listed twice or with two peers are named with their lines",
    "[cli][topology]") {
    const auto dup = fabricctl({"cluster", "check", "--cluster", real("t3k_duplicate")});
    CHECK(dup.code == 102);
    CHECK_THAT(
        dup.out,
        Contains("duplicate_connection: " + real("t3k_duplicate") +
                 ":176: ethernet_connections[20]: chip 5 chan 0 <-> chip 1 chan 8 is listed again "
                 "(first as ethernet_connections[6])\n"));
    CHECK_THAT(dup.err, EndsWith("has 1 wiring problem (listed above)\n"));
    const auto asym =
        fabricctl({"cluster", "check", "--cluster", real("t3k_asymmetric"), "--json"});
    CHECK(asym.code == 102);
    const json j = json::parse(asym.out);
    REQUIRE(j["wiring"].size() == 1);
    CHECK(j["wiring"][0]["kind"] == "asymmetric_connection");
    CHECK(j["wiring"][0]["line"] == 176);
    CHECK(j["wiring"][0]["message"] ==
          "chip 5 chan 0 is joined to chip 1 chan 0 here but to chip 1 chan 8 by "
          "ethernet_connections[6]");
    // What is left once the second entry is set aside still hosts the T3K.
    CHECK(j["hostable"] == true);
}

TEST_CASE("fabricctl mesh run on real-shaped clusters: all-to-all, every byte checked",
          "[cli][topology][sim]") {
    struct Case {
        const char* cluster;
        const char* says;
    };
    for (const Case& c :
         {Case{"t3k",
               "1 mesh, 8 chips, 20 routers (plane 0: 20); 20 worker(s) in 1 round(s), 2 "
               "packets of 256 B to every other device per plane, 112 deliveries checked"},
          Case{"p300", "1 mesh, 2 chips, 2 routers"},
          Case{"p150_x8", "1 mesh, 8 chips, 20 routers"},
          Case{"n300_2x2", "1 mesh, 4 chips, 8 routers"},
          Case{"galaxy_6u",
               "1 mesh, 32 chips, 104 routers (plane 0: 104); 128 worker(s) in 2 "
               "round(s), 2 packets of 256 B to every other device per plane, 1984 "
               "deliveries checked"}}) {
        INFO(c.cluster);
        const auto r = fabricctl(
            {"mesh", "run", "--cluster", real(c.cluster), "--packets", "2", "--bytes", "256"});
        INFO(r.err);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Contains("no --mesh-graph: the largest mesh"));
        CHECK_THAT(r.err, Contains("mesh run passed: " + std::string(c.says)) &&
                              Contains("terminated gracefully"));
    }
}

TEST_CASE(
    "fabricctl mesh up: every published shape, in both forms, mapped onto a real-shaped cluster",
    "[cli][topology][sim]") {
    struct Case {
        const char* graph;
        const char* cluster;
        const char* says;  // the verdict's meshes, chips and routers
    };
    const std::vector<Case> cases{
        {"n150_mesh_graph.textproto", "n150",
         "mesh up: 1 mesh, 1 chip, no links between devices: no router to run"},
        {"n150_mesh_graph.yaml", "n150",
         "mesh up: 1 mesh, 1 chip, no links between devices: no router to run"},
        {"p150_mesh_graph.textproto", "p150",
         "mesh up: 1 mesh, 1 chip, no links between devices: no router to run"},
        {"p150_mesh_graph.yaml", "p150",
         "mesh up: 1 mesh, 1 chip, no links between devices: no router to run"},
        {"n300_mesh_graph.textproto", "n300",
         "mesh up: 1 mesh, 2 chips, 2 routers (plane 0: 2): handshake"},
        {"n300_mesh_graph.yaml", "n300",
         "mesh up: 1 mesh, 2 chips, 2 routers (plane 0: 2): handshake"},
        {"n300_2x2_mesh_graph.textproto", "n300_2x2",
         "mesh up: 1 mesh, 4 chips, 8 routers (plane 0: 8): handshake"},
        {"n300_2x2_mesh_graph.yaml", "n300_2x2",
         "mesh up: 1 mesh, 4 chips, 8 routers (plane 0: 8): handshake"},
        {"p300_mesh_graph.textproto", "p300",
         "mesh up: 1 mesh, 2 chips, 2 routers (plane 0: 2): handshake"},
        {"p300_mesh_graph.yaml", "p300",
         "mesh up: 1 mesh, 2 chips, 2 routers (plane 0: 2): handshake"},
        {"p300_x2_mesh_graph.textproto", "p300_x2",
         "mesh up: 1 mesh, 4 chips, 8 routers (plane 0: 8): handshake"},
        {"p300_x2_mesh_graph.yaml", "p300_x2",
         "mesh up: 1 mesh, 4 chips, 8 routers (plane 0: 8): handshake"},
        {"p150_x2_mesh_graph.textproto", "p150_x4",
         "mesh up: 1 mesh, 2 chips, 2 routers (plane 0: 2): handshake"},
        {"p150_x2_mesh_graph.yaml", "p150_x4",
         "mesh up: 1 mesh, 2 chips, 2 routers (plane 0: 2): handshake"},
        {"p150_x4_mesh_graph.textproto", "p150_x4",
         "mesh up: 1 mesh, 4 chips, 6 routers (plane 0: 6): handshake"},
        {"p150_x4_mesh_graph.yaml", "p150_x4",
         "mesh up: 1 mesh, 4 chips, 6 routers (plane 0: 6): handshake"},
        {"p150_x8_mesh_graph.yaml", "p150_x8",
         "mesh up: 1 mesh, 8 chips, 20 routers (plane 0: 20): handshake"},
        {"p150_x8_mesh_graph.textproto", "p150_x8_cube",
         "mesh up: 1 mesh, 8 chips, 24 routers (plane 0: 24): handshake"},
        {"p150_x8_ring_mesh_graph.textproto", "p150_x8_cube",
         "mesh up: 1 mesh, 8 chips, 16 routers (plane 0: 16): handshake"},
        {"t3k_mesh_graph.textproto", "t3k",
         "mesh up: 1 mesh, 8 chips, 20 routers (plane 0: 20): handshake"},
        {"t3k_mesh_graph.yaml", "t3k",
         "mesh up: 1 mesh, 8 chips, 20 routers (plane 0: 20): handshake"},
        {"t3k_1x8_ring_mesh_graph.textproto", "t3k",
         "mesh up: 1 mesh, 8 chips, 16 routers (plane 0: 16): handshake"},
        {"t3k_split_mesh_graph.yaml", "t3k",
         "mesh up: 2 meshes, 8 chips, 20 routers (plane 0: 20): handshake"},
        {"galaxy_8x4_mesh_graph.textproto", "galaxy_6u",
         "mesh up: 1 mesh, 32 chips, 104 routers (plane 0: 104): handshake"},
        {"galaxy_8x4_mesh_graph.yaml", "galaxy_6u",
         "mesh up: 1 mesh, 32 chips, 104 routers (plane 0: 104): handshake"},
        {"galaxy_8x4_torus_x_mesh_graph.yaml", "galaxy_6u_torus",
         "mesh up: 1 mesh, 32 chips, 120 routers (plane 0: 120): handshake"},
        {"galaxy_8x4_torus_y_mesh_graph.yaml", "galaxy_6u_y_torus",
         "mesh up: 1 mesh, 32 chips, 112 routers (plane 0: 112): handshake"},
        {"galaxy_8x4_torus_xy_mesh_graph.yaml", "galaxy_6u_torus",
         "mesh up: 1 mesh, 32 chips, 128 routers (plane 0: 128): handshake"},
        {"galaxy_8x4_torus_x_mesh_graph.textproto", "galaxy_6u_torus",
         "mesh up: 1 mesh, 32 chips, 120 routers (plane 0: 120): handshake"},
        {"galaxy_8x4_torus_y_mesh_graph.textproto", "galaxy_6u_y_torus",
         "mesh up: 1 mesh, 32 chips, 112 routers (plane 0: 112): handshake"},
        {"galaxy_8x4_torus_xy_mesh_graph.textproto", "galaxy_6u_torus",
         "mesh up: 1 mesh, 32 chips, 128 routers (plane 0: 128): handshake"},
        {"galaxy_8x4_torus_2d_mesh_graph.yaml", "galaxy_6u_torus",
         "mesh up: 1 mesh, 32 chips, 128 routers (plane 0: 128): handshake"},
        {"dual_galaxy_mesh_graph.textproto", "galaxy_6u_x2",
         "mesh up: 1 mesh, 64 chips, 224 routers (plane 0: 224): handshake"},
        {"dual_galaxy_mesh_graph.yaml", "galaxy_6u_x2",
         "mesh up: 1 mesh, 64 chips, 224 routers (plane 0: 224): handshake"},
        {"dual_galaxy_relaxed_mesh_graph.yaml", "galaxy_6u_x2",
         "mesh up: 2 meshes, 64 chips, 210 routers (plane 0: 210): handshake"},
        {"tg_mesh_graph.textproto", "tg",
         "mesh up: 5 meshes, 36 chips, 120 routers (plane 0: 120): handshake"},
        {"tg_mesh_graph.yaml", "tg",
         "mesh up: 5 meshes, 36 chips, 120 routers (plane 0: 116): handshake"},
        {"bh_galaxy_split_2x4_mesh_graph.textproto", "bh_galaxy",
         "mesh up: 4 meshes, 32 chips, 100 routers (plane 0: 100): handshake"},
        {"bh_galaxy_split_4x2_mesh_graph.textproto", "bh_galaxy",
         "mesh up: 4 meshes, 32 chips, 104 routers (plane 0: 104): handshake"},
        {"bh_galaxy_torus_xy_mesh_graph.textproto", "bh_galaxy",
         "mesh up: 1 mesh, 32 chips, 128 routers (plane 0: 128): handshake"},
        {"bh_quad_galaxy_32x4_torus_xy_mesh_graph.textproto", "bh_galaxy_x4",
         "mesh up: 1 mesh, 128 chips, 512 routers (plane 0: 512): handshake"},
    };
    for (const Case& c : cases) {
        INFO(c.graph << " on " << c.cluster);
        const auto r = fabricctl(
            {"mesh", "up", "--mesh-graph", kSoc + "/" + c.graph, "--cluster", real(c.cluster)});
        INFO(r.err);
        CHECK(r.code == 0);
        CHECK_THAT(r.err, Contains(c.says));
    }
}

TEST_CASE("fabricctl mesh up: a STRICT graph on a cluster with a link down names that link",
          "[cli][topology]") {
    const std::string strict = fabric::test::write_file("t3k_strict.textproto", R"(
mesh_descriptors {
  name: "M0"
  arch: WORMHOLE_B0
  device_topology { dims: [ 2, 4 ] }
  host_topology   { dims: [ 1, 1 ] }
  channels { count: 2 policy: STRICT }
}
top_level_instance { mesh { mesh_descriptor: "M0" mesh_id: 0 } }
)");
    const auto r =
        fabricctl({"mesh", "up", "--mesh-graph", strict, "--cluster", real("t3k_missing_link")});
    expect_failure(r, 101);
    CHECK_THAT(
        r.err,
        EndsWith("t3k_missing_link_cluster.yaml (8 chips): M0D1 -E- M0D2 needs 2 links (STRICT, "
                 "channels 2), but chip 1 and chip 0 have 1: chip 1 chan 6 <-> chip 0 chan 6\n"));
    // The same graph on the intact cluster comes up.
    const auto ok = fabricctl({"mesh", "up", "--mesh-graph", strict, "--cluster", real("t3k")});
    CHECK(ok.code == 0);
}

TEST_CASE("fabricctl mesh run between meshes on real-shaped clusters: every byte checked",
          "[cli][topology][sim]") {
    // The T3K split into two 2x2 meshes (YAML Graph cables) and TG: four gateways and a Galaxy.
    const auto split =
        fabricctl({"mesh", "run", "--mesh-graph", kSoc + "/t3k_split_mesh_graph.yaml", "--cluster",
                   real("t3k"), "--packets", "2", "--bytes", "256"});
    INFO(split.err);
    CHECK(split.code == 0);
    CHECK_THAT(split.err, Contains("mesh run passed: 2 meshes, 8 chips, 20 routers") &&
                              Contains("112 deliveries checked"));
    const auto tg = fabricctl({"mesh", "run", "--mesh-graph", kSoc + "/tg_mesh_graph.textproto",
                               "--cluster", real("tg"), "--packets", "2", "--bytes", "256"});
    INFO(tg.err);
    CHECK(tg.code == 0);
    CHECK_THAT(tg.err, Contains("mesh run passed: 5 meshes, 36 chips, 120 routers") &&
                           Contains("2520 deliveries checked"));
}

TEST_CASE("fabricctl mesh routes --cluster: each hop on its chips and channels",
          "[cli][topology]") {
    const auto r =
        fabricctl({"mesh", "routes", "--mesh-graph", kSoc + "/t3k_mesh_graph.yaml", "--cluster",
                   real("t3k"), "--from", "0:0", "--to", "0:7", "--plane", "1"});
    REQUIRE(r.code == 0);
    // The T3K fixture's grid is 5 1 0 4 / 7 3 2 6; plane 1 is the second link of each pair.
    CHECK_THAT(r.out, EndsWith("  M0D0 -E-> M0D1  chip 5 chan 1 -> chip 1 chan 9\n"
                               "  M0D1 -E-> M0D2  chip 1 chan 7 -> chip 0 chan 7\n"
                               "  M0D2 -E-> M0D3  chip 0 chan 9 -> chip 4 chan 1\n"
                               "  M0D3 -S-> M0D7  chip 4 chan 7 -> chip 6 chan 7\n"));
    const auto cluster = fabric::ClusterDescriptor::load_file(real("t3k"));
    for (const auto& [a, b] : {std::pair{fabric::EthPortRef{5, 1}, fabric::EthPortRef{1, 9}},
                               {fabric::EthPortRef{1, 7}, fabric::EthPortRef{0, 7}},
                               {fabric::EthPortRef{0, 9}, fabric::EthPortRef{4, 1}},
                               {fabric::EthPortRef{4, 7}, fabric::EthPortRef{6, 7}}}) {
        CHECK(cluster.peer(a) == std::optional<fabric::EthPortRef>(b));
    }
    // Between meshes an MGD graph needs the cluster: the mapping chooses the links.
    const std::string split = kSoc + "/bh_galaxy_split_2x4_mesh_graph.textproto";
    expect_failure(fabricctl({"mesh", "routes", "--mesh-graph", split}), 101);
    const auto mapped = fabricctl({"mesh", "routes", "--mesh-graph", split, "--cluster",
                                   real("bh_galaxy"), "--from", "0:0", "--to", "3:7", "--json"});
    REQUIRE(mapped.code == 0);
    const json j = json::parse(mapped.out);
    CHECK(j["route"]["meshes"] == json::array({0, 1, 2, 3}));
    for (const auto& h : j["route"]["hops"]) CHECK(h.contains("chip"));
}

TEST_CASE("fabricctl fabric run on a harvested cluster: workers only where no chip is harvested",
          "[cli][topology][sim]") {
    // The T3K fixture harvests rows on every chip (chip 1: mask 3, the rows of workers 1-1 and
    // 3-1); a 1D multicast writes one core position on every chip of the line.
    const auto r =
        fabricctl({"fabric", "run", "--cluster", real("t3k"), "--chips", "5,1,0,4", "--packets",
                   "8", "--size", "512", "--pattern", "all-to-all", "--json"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const json j = json::parse(r.out);
    const auto cluster = fabric::ClusterDescriptor::load_file(real("t3k"));
    const auto soc = fabric::SocDescriptor::load_file(kSoc + "/wormhole_b0_80_arch.yaml");
    const fabric::HarvestedSocs socs(soc, cluster);
    REQUIRE(j["workers"].size() == 6);
    for (const auto& w : j["workers"]) {
        const auto core = fabric::parse_core_coord(w["core"].get<std::string>());
        REQUIRE(core);
        for (fabric::ChipId chip : {5u, 1u, 0u, 4u})
            CHECK(socs(chip).core_type(*core) == fabric::CoreType::Worker);
    }
    CHECK(j["data_mismatch_words"] == 0);
    CHECK(j["deliveries"] == 96);  // 8 packets to each of the 3 others from each of the 4 chips
}
