// `fabricctl mesh routes` as a process: the spec cluster's tables and a route across meshes in
// text and JSON, and the exit codes of bad descriptors and bad --from/--to/--plane.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_expect.h"
#include "run_process.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace t = fabric::test;
using fabric::test::expect_failure;

using fabric::test::fabricctl;

namespace {

const std::string kTmp = FABRIC_TEST_TMP_DIR;
const std::string kSpec =
    std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/spec_4mesh_3x3_mesh_graph.yaml";
const std::string kT3k = std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/t3k_mesh_graph.yaml";
const std::string kDir = FABRIC_SOC_DESCRIPTOR_DIR;

}  // namespace

TEST_CASE("fabricctl mesh routes: the spec cluster's tables as text", "[cli][mesh]") {
    const auto r = fabricctl({"mesh", "routes", "--mesh-graph", kSpec, "--mesh", "0"});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Contains("wormhole_b0, 4 meshes, 4 Ethernet ports per direction"));
    CHECK_THAT(r.out, Contains("M0D5 E -> M1D3 W  planes 0,1,2,3"));
    CHECK_THAT(r.out, Contains("M2D8 E -> M3D6 W  planes 0,1,2,3"));
    // Mesh 0's L0 row of device 8 (seeds/000: WWNN WNN NN WWN WN N WW W -).
    CHECK_THAT(r.out, Contains("      8  WWNN   WNN    NN   WWN    WN     N    WW     W     -"));
    CHECK_THAT(r.out, Contains("L0 routes of mesh 0"));
    CHECK_THAT(r.out, !Contains("L0 routes of mesh 1"));
    // L1 rows: mesh 0 device 2 exits at 5 (south of it) for meshes 1 and 3, at 8 for mesh 2.
    CHECK_THAT(r.out, Contains("     0    2       -     5 S     8 S     5 S"));
    CHECK_THAT(r.out, Contains("     3    6     2 E     2 E     2 E       -"));
}

TEST_CASE("fabricctl mesh routes --json: tables and a route from mesh 0 to mesh 3", "[cli][mesh]") {
    const auto r = fabricctl({"mesh", "routes", "--mesh-graph", kSpec, "--from", "0:0", "--to",
                              "3:8", "--plane", "1", "--json"});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == true);
    CHECK(j["arch"] == "wormhole_b0");
    CHECK(j["planes"] == 4);
    CHECK(j["meshes"].size() == 4);
    CHECK(j["links"].size() == 9);
    REQUIRE(j["l0"].size() == 4);
    CHECK(j["l0"][0]["routes"][0][8] == "EESS");
    CHECK(j["l0"][0]["routes"][4][4] == "");
    REQUIRE(j["l1"].size() == 4);
    CHECK(j["l1"][2]["exits"][1] == nlohmann::json::parse("[0, 0, null, 8]"));
    CHECK(j["l1"][3]["exits"][4] == nlohmann::json::parse("[2, 2, 2, null]"));
    CHECK(j["l1"][0]["next_mesh"] == nlohmann::json::parse("[null, 1, 2, 1]"));
    const auto& route = j["route"];
    CHECK(route["plane"] == 1);
    CHECK(route["meshes"] == nlohmann::json::parse("[0, 1, 3]"));
    CHECK(route["path"] ==
          "M0D0 -E-> M0D1 -E-> M0D2 -S-> M0D5 =E=> M1D3 -E-> M1D4 -E-> M1D5 -S-> M1D8 =S=> M3D2 "
          "-S-> M3D5 -S-> M3D8");
    REQUIRE(route["hops"].size() == 10);
    const auto& exit_hop = route["hops"][3];
    CHECK(exit_hop["inter_mesh"] == true);
    CHECK(exit_hop["dir"] == "E");
    CHECK(exit_hop["eth_channel"] == 9);    // E block 8-11, plane 1
    CHECK(exit_hop["peer_channel"] == 13);  // W block 12-15, plane 1
    for (const auto& h : route["hops"]) CHECK(h["eth_channel"].get<int>() % 4 == 1);
}

TEST_CASE("fabricctl mesh routes: a single mesh has no L1 table", "[cli][mesh]") {
    const auto r =
        fabricctl({"mesh", "routes", "--mesh-graph", kT3k, "--from", "0:0", "--to", "0:7"});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("mesh 0: 2x4 devices (LINE x LINE), board T3K, host topology 1x1, 2 "
                               "channels RELAXED"));
    CHECK_THAT(r.out, !Contains("L1 exit nodes"));
    CHECK_THAT(r.out, Contains("M0D0 -E-> M0D1 -E-> M0D2 -E-> M0D3 -S-> M0D7"));
}

TEST_CASE("fabricctl mesh routes: bad descriptors are 102 naming file and line", "[cli][mesh]") {
    const std::string path = t::temp_path(kTmp, "bad_mesh", ".yaml");
    std::ofstream(path)
        << "ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 2, E: 2, S: 2, W: 2}}\n"
           "Board: [{name: A, type: Mesh, topology: [1, 2]}]\n"
           "Mesh: [{id: 0, board: B}]\n";
    auto r = fabricctl({"mesh", "routes", "--mesh-graph", path});
    expect_failure(r, 102);
    CHECK_THAT(r.err, Contains(path + ":3:") && Contains("Mesh[0].board") && Contains("'B'"));

    r = fabricctl({"mesh", "routes", "--mesh-graph", path, "--json"});
    expect_failure(r, 102, true);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == false);
    CHECK(j["exit_code"] == 102);
    CHECK(j["error"]["category"] == "bad_descriptor");

    r = fabricctl({"mesh", "routes", "--mesh-graph", kTmp + "/no_such_mesh_graph.yaml"});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("cannot open"));
}

TEST_CASE("fabricctl mesh routes: bad --from/--to/--plane/--mesh", "[cli][mesh]") {
    auto r = fabricctl({"mesh", "routes", "--mesh-graph", kSpec, "--from", "0-0", "--to", "3:8"});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("--from '0-0'"));
    r = fabricctl({"mesh", "routes", "--mesh-graph", kSpec, "--from", "0:0", "--to", "3:9"});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("--to 3:9") && Contains("unknown device 9"));
    r = fabricctl({"mesh", "routes", "--mesh-graph", kSpec, "--from", "0:0", "--to", "5:0"});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("unknown mesh 5"));
    r = fabricctl(
        {"mesh", "routes", "--mesh-graph", kSpec, "--from", "0:0", "--to", "3:8", "--plane", "4"});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("plane 4"));
    r = fabricctl({"mesh", "routes", "--mesh-graph", kSpec, "--mesh", "4"});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("unknown mesh 4"));
    // --from without --to, and no --mesh-graph: usage.
    r = fabricctl({"mesh", "routes", "--mesh-graph", kSpec, "--from", "0:0"});
    expect_failure(r, 100);
    r = fabricctl({"mesh", "routes"});
    expect_failure(r, 100);
    CHECK_THAT(r.err, Contains("--mesh-graph"));
}

TEST_CASE("fabricctl mesh routes: MGD 2.0 text descriptors", "[cli][mesh][mgd]") {
    // One mesh: its tables as for YAML, with its dim types, channels and policy.
    auto r = fabricctl({"mesh", "routes", "--mesh-graph",
                        kDir + "/galaxy_8x4_torus_x_mesh_graph.textproto", "--from", "0:0", "--to",
                        "0:31"});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out,
               StartsWith("mesh graph " + kDir +
                          "/galaxy_8x4_torus_x_mesh_graph.textproto (textproto): wormhole_b0, "
                          "1 mesh, 4 Ethernet ports per direction (routing planes 0..3)\n"));
    CHECK_THAT(r.out,
               Contains("  mesh 0: 8x4 devices (LINE x RING), board M0, host topology 1x1, 4 "
                        "channels RELAXED\n"));
    CHECK_THAT(r.out, Contains("M0D0 -E-> M0D1 -E-> M0D2 -E-> M0D3 -S-> M0D7"));

    r = fabricctl(
        {"mesh", "routes", "--mesh-graph", kDir + "/dual_galaxy_mesh_graph.textproto", "--json"});
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["form"] == "textproto");
    CHECK(j["meshes"][0]["device_topology"] == nlohmann::json::parse("[8, 8]"));
    CHECK(j["meshes"][0]["host_topology"] == nlohmann::json::parse("[1, 2]"));
    CHECK(j["meshes"][0]["host_ranks"] == nlohmann::json::parse("[[0, 1]]"));
    CHECK(j["meshes"][0]["dim_types"] == nlohmann::json::parse(R"(["LINE", "LINE"])"));
    CHECK(j["meshes"][0]["channels"] == 4);
    CHECK(j["meshes"][0]["policy"] == "RELAXED");

    // Several meshes: their links are the mapping's to choose, so there are no tables yet.
    const std::string tg = kDir + "/tg_mesh_graph.textproto";
    r = fabricctl({"mesh", "routes", "--mesh-graph", tg});
    expect_failure(r, 101);
    CHECK_THAT(r.err,
               Contains(tg + ":28: routing tables between meshes need a cluster descriptor"));
}

TEST_CASE("fabricctl mesh routes: TG's cross-plane cables", "[cli][mesh][mgd]") {
    const auto r = fabricctl({"mesh", "routes", "--mesh-graph", kDir + "/tg_mesh_graph.yaml",
                              "--from", "0:0", "--to", "4:31", "--plane", "1"});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("  M0D0 S -> M4D1 N  planes 1 -> 0\n"));
    CHECK_THAT(r.out, Contains("  M4D1 N -> M0D0 S  planes 0 -> 1\n"));
    CHECK_THAT(r.out, Contains("  M0D0 S -> M4D0 N  planes 0\n"));
    // Plane 1 leaves the gateway on S channel 5 and arrives on the Galaxy's N channel 0 (plane 0).
    CHECK_THAT(r.out, Contains("  M0D0 =S=> M4D1  eth 5 -> 0  (exit of mesh 0, entry of mesh 4)"));
    CHECK_THAT(r.out, Contains("  M4D1 -E-> M4D2  eth 8 -> 12"));
}
