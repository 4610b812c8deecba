// `fabricctl mesh up | status | down | run` as a process: the 2D fabric of the t3k mesh graph
// (2 x 4, two planes) on the simulated t3k cluster with the firmware of this build (the 2D router
// and the fabric_traffic kernel; a failed check while they are not built, never a skip): router
// counts, statuses, link states, counters and data exact; every bad input with its exit code and
// one-line message; --target pcie without a device is 106.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_expect.h"
#include "hal/arch_map.h"
#include "run_process.h"
#include "test_elf.h"

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using nlohmann::json;
namespace t = fabric::test;
using fabric::test::expect_failure;

using fabric::test::fabricctl;
using fabric::test::write_file;

namespace {

const std::string kTmp = FABRIC_TEST_TMP_DIR;
const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kFw = FABRIC_FIRMWARE_DIR;
const std::string kGraph = kSoc + "/t3k_mesh_graph.yaml";
const std::string kCluster = kSoc + "/t3k_cluster.yaml";

// `mesh <verb> --mesh-graph t3k --cluster t3k` and `extra`.
std::vector<std::string> t3k(const std::string& verb, std::vector<std::string> extra = {}) {
    std::vector<std::string> a{"mesh", verb, "--mesh-graph", kGraph, "--cluster", kCluster};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

bool have_mesh_firmware() {
    return fabric::test::have_firmware({"fabric_router_2d", "fabric_traffic"});
}

json parse_ok(const t::Run& r) {
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const json j = json::parse(r.out);
    REQUIRE(j["ok"] == true);
    REQUIRE(j["exit_code"] == 0);
    return j;
}

const json& router_at(const json& j, uint32_t chip, uint32_t eth) {
    for (const auto& r : j["routers"]) {
        if (r["chip"] == chip && r["eth_channel"] == eth) return r;
    }
    FAIL("no router on chip " << chip << " eth " << eth);
    return j;
}

}  // namespace

TEST_CASE("fabricctl mesh up/status/down/run: usage errors are 100", "[cli][mesh]") {
    for (const char* verb : {"up", "status", "down", "run"}) {
        INFO(verb);
        expect_failure(fabricctl({"mesh", verb}), 100);  // --cluster is required
        const auto topo = fabricctl(t3k(verb, {"--topology", "ring"}));
        expect_failure(topo, 100);
        CHECK_THAT(topo.err, Contains("ring not in {mesh,torus}"));
        expect_failure(fabricctl(t3k(verb, {"--target", "usb"})), 100);
        expect_failure(fabricctl(t3k(verb, {"--max-cycles", "0"})), 100);
    }
    expect_failure(fabricctl(t3k("up", {"--packets", "4"})), 100);  // run only
    const auto help = fabricctl({"mesh", "--help"});
    CHECK(help.code == 0);
    CHECK_THAT(help.out, Contains("routes") && Contains("up") && Contains("status") &&
                             Contains("down") && Contains("run"));
}

TEST_CASE("fabricctl mesh up/status/down/run: bad input names the reason", "[cli][mesh]") {
    const auto bad_yaml = write_file("bad_mesh_graph.yaml", "ChipSpec: {arch: wormhole_b0\n");
    struct Case {
        std::vector<std::string> args;
        int code;
        std::string says;
    };
    const std::vector<Case> cases{
        {{"mesh", "up", "--mesh-graph", kTmp + "/no_such_graph.yaml", "--cluster", kCluster},
         101,
         "no_such_graph.yaml"},
        {{"mesh", "status", "--mesh-graph", bad_yaml, "--cluster", kCluster}, 102, bad_yaml},
        {{"mesh", "down", "--mesh-graph", kCluster, "--cluster", kCluster}, 102, "'ChipSpec'"},
        {t3k("up", {"--planes", "2"}), 101,
         "mesh plan: routing plane 2 does not exist (" + kGraph + " on " + kCluster +
             " has planes 0..1)"},
        {t3k("up", {"--planes", "0,0"}), 101, "--planes 0,0: plane 0 is listed twice"},
        {t3k("up", {"--planes", "0,x"}), 101, "--planes 0,x: 'x' is not a plane number"},
        {t3k("up", {"--planes", ""}), 101, "--planes: give at least one routing plane"},
        {t3k("up", {"--topology", "torus"}), 101,
         "is a ring of 2 rows (N/S): its wrap would join the same two chips"},
        {t3k("up", {"--pin", "0:0"}), 101, "--pin '0:0': expected MESH:DEVICE=CHIP, e.g. 0:0=5"},
        {t3k("up", {"--pin", "0:0=9"}), 101, "topology map: pin M0D0=9: cluster"},
        {t3k("up", {"--slots", "8"}), 101, "--slots 8: expected SENDER,RECEIVER (e.g. 8,16)"},
        {t3k("up", {"--payload", "100"}), 101, "--payload 100: must be a multiple of 16"},
        {t3k("run", {"--bytes", "100"}), 101,
         "--bytes 100: must be a non-zero multiple of 16 and at most 7616"},
        {t3k("run", {"--bytes", "4864", "--payload", "4352"}), 101,
         "--bytes 4864 is more than the slot --payload 4352"},
        {t3k("run", {"--packets", "0"}), 101, "--packets 0: must be 1..1000000"},
        {t3k("up", {"--router-elf", kTmp + "/no_such_router.elf"}), 101, "no_such_router.elf"},
        {{"mesh", "up", "--mesh-graph", kGraph, "--cluster", kSoc + "/n300_cluster.yaml"},
         101,
         "has only 2 chip(s)"},
        {t3k("up", {"--target", "pcie", "--dir", kTmp + "/no_such_dev_dir", "--no-base-fw"}), 101,
         "--base-fw / --no-base-fw describe the model"},
    };
    for (const auto& c : cases) {
        INFO(c.says);
        const auto r = fabricctl(c.args);
        expect_failure(r, c.code);
        CHECK_THAT(r.err, Contains(c.says));
    }
    // --json: the error as a document on stdout too.
    const auto j = fabricctl(t3k("status", {"--planes", "5", "--json"}));
    CHECK(j.code == 101);
    const auto doc = json::parse(j.out);
    CHECK(doc["ok"] == false);
    CHECK(doc["error"]["category"] == "bad_input");
    CHECK(doc["exit_code"] == 101);
}

TEST_CASE("fabricctl mesh --target pcie without a device: exit 106", "[cli][mesh]") {
    for (const char* verb : {"up", "status", "down", "run"}) {
        INFO(verb);
        const auto r =
            fabricctl(t3k(verb, {"--target", "pcie", "--dir", kTmp + "/no_such_dev_dir"}));
        expect_failure(r, 106);
        CHECK_THAT(r.err,
                   Contains("no Tenstorrent device found under " + kTmp + "/no_such_dev_dir"));
    }
}

#ifdef FABRIC_HAVE_SIM

TEST_CASE("fabricctl mesh up: t3k 2x4, one and two planes", "[cli][mesh][sim]") {
    if (!have_mesh_firmware()) return;
    const auto text = fabricctl(t3k("up"));
    INFO("stdout: " << text.out);
    INFO("stderr: " << text.err);
    REQUIRE(text.code == 0);
    CHECK_THAT(
        text.out,
        Contains("  mesh 0: 2x4 devices on chips 0,1,2,3,4,5,6,7\n") &&
            Contains("routers: 20 on 8 chips (plane 0: 20); payload 4352 B, slots 7 sender / 14 "
                     "receiver\n") &&
            Contains("terminated gracefully: 20 of 20 routers terminated\n"));
    CHECK_THAT(
        text.err,
        StartsWith("fabricctl: mesh up: 1 mesh, 8 chips, 20 routers (plane 0: 20): handshake "));
    CHECK_THAT(text.err, Contains("; terminated gracefully\n"));

    const json j = parse_ok(fabricctl(t3k("up", {"--planes", "0,1", "--json"})));
    CHECK(j["command"] == "up");
    CHECK(j["target"] == "sim");
    CHECK(j["topology"] == "mesh");
    CHECK(j["planes"] == json::array({0, 1}));
    CHECK(j["chips"] == json::array({0, 1, 2, 3, 4, 5, 6, 7}));
    CHECK(j["routers_per_plane"] ==
          json::parse(R"([{"plane": 0, "routers": 20}, {"plane": 1, "routers": 20}])"));
    CHECK(j["brought_up"] == true);
    CHECK(j["terminated"] == true);
    CHECK(j["handshake_cycles"].get<uint64_t>() > 0);
    CHECK(j["ready_cycles"].get<uint64_t>() >= j["handshake_cycles"].get<uint64_t>());
    REQUIRE(j["routers"].size() == 40);
    for (const auto& r : j["routers"]) {
        CHECK(r["status"] == "terminated");
        CHECK(r["final_status"] == "terminated");
        CHECK(r["core_state"] == "exited");
    }
    REQUIRE(j["links"].size() == 20);
    for (const auto& l : j["links"]) CHECK(l["state"] == "terminated");
}

TEST_CASE("fabricctl mesh up/status/down on the 8x4 galaxy and on the spec's 4-mesh cluster",
          "[cli][mesh][sim]") {
    if (!have_mesh_firmware()) return;
    const auto graph = [](const char* name) { return kSoc + "/" + name; };
    // The galaxy, plane 0: 52 edges, a router at each end.
    const json up =
        parse_ok(fabricctl({"mesh", "up", "--mesh-graph", graph("galaxy_8x4_mesh_graph.yaml"),
                            "--cluster", graph("galaxy_8x4_cluster.yaml"), "--json"}));
    CHECK(up["routers"].size() == 104);
    CHECK(up["brought_up"] == true);
    CHECK(up["terminated"] == true);
    // The spec's 4 meshes (36 chips), plane 0: 48 intra-mesh edges and 5 cables, a router at each
    // end; every link up, then every router terminated.
    const std::vector<std::string> spec{"--mesh-graph", graph("spec_4mesh_3x3_mesh_graph.yaml"),
                                        "--cluster", graph("spec_4mesh_3x3_cluster.yaml"),
                                        "--json"};
    std::vector<std::string> status{"mesh", "status"};
    status.insert(status.end(), spec.begin(), spec.end());
    const json st = parse_ok(fabricctl(status));
    CHECK(st["routers"].size() == 106);
    REQUIRE(st["links"].size() == 53);
    for (const auto& l : st["links"]) CHECK(l["state"] == "up");
    for (const auto& r : st["routers"]) CHECK(r["status"] == "ready_for_traffic");
    std::vector<std::string> down{"mesh", "down"};
    down.insert(down.end(), spec.begin(), spec.end());
    const json dn = parse_ok(fabricctl(down));
    CHECK(dn["terminated"] == true);
    for (const auto& r : dn["routers"]) CHECK(r["final_status"] == "terminated");
}

TEST_CASE("fabricctl mesh status: every router ready, every link up", "[cli][mesh][sim]") {
    if (!have_mesh_firmware()) return;
    const auto text = fabricctl(t3k("status", {"-q"}));
    INFO("stdout: " << text.out);
    INFO("stderr: " << text.err);
    REQUIRE(text.code == 0);
    CHECK(text.err.empty());
    CHECK_THAT(
        text.out,
        Contains("\nM0D0 E p0       0   2 8-0   1:4    ready_for_traffic  ready_for_traffic "));
    CHECK_THAT(
        text.out,
        Contains("\nM0D7 N p0       7   0 9-0   3:8    ready_for_traffic  ready_for_traffic "));
    CHECK_THAT(
        text.out,
        Contains("\nM0D0 E p0 <-> M0D1 W p0     up          chip 0 eth 2 <-> chip 1 eth 4\n"));
    CHECK_THAT(
        text.out,
        Contains("\nM0D3 S p0 <-> M0D7 N p0     up          chip 3 eth 8 <-> chip 7 eth 0\n"));
    CHECK(std::count(text.out.begin(), text.out.end(), '\n') == 4 + 1 + 21 + 1 + 11 + 2);

    const json j = parse_ok(fabricctl(t3k("status", {"--planes", "1", "--json"})));
    CHECK(j["command"] == "status");
    REQUIRE(j["routers"].size() == 20);
    for (const auto& r : j["routers"]) {
        CHECK(r["plane"] == 1);
        CHECK(r["status"] == "ready_for_traffic");
        CHECK(r["core_state"] == "running");
        CHECK(r["heartbeat"].get<uint64_t>() > 0);
        CHECK(r["packets_sent"] == 0);
        CHECK(r["final_status"] == "terminated");
    }
    // Plane 1 is the second link of every edge: chip 0 eth 3 (east) <-> chip 1 eth 5 (west).
    const json& east = router_at(j, 0, 3);
    CHECK(east["mesh"] == 0);
    CHECK(east["device"] == 0);
    CHECK(east["dir"] == "E");
    CHECK(east["peer_chip"] == 1);
    CHECK(east["peer_eth_channel"] == 5);
    REQUIRE(j["links"].size() == 10);
    for (const auto& l : j["links"]) {
        CHECK(l["state"] == "up");
        CHECK(l["plane"] == 1);
        CHECK(l["inter_mesh"] == false);
    }
    CHECK(j["terminated"] == true);
}

TEST_CASE("fabricctl mesh down: every router terminated", "[cli][mesh][sim]") {
    if (!have_mesh_firmware()) return;
    const auto text = fabricctl(t3k("down"));
    INFO("stdout: " << text.out);
    INFO("stderr: " << text.err);
    REQUIRE(text.code == 0);
    CHECK_THAT(text.out, Contains("\nM0D4 N p0       4   0 9-0   0:8    terminated "));
    CHECK_THAT(text.out, Contains("terminated gracefully: 20 of 20 routers terminated\n"));
    CHECK_THAT(text.err,
               StartsWith("fabricctl: mesh down: 1 mesh, 8 chips, 20 routers (plane 0: 20)"));

    const json j = parse_ok(fabricctl(t3k("down", {"--no-base-fw", "--json"})));
    CHECK(j["base_firmware"].is_null());
    REQUIRE(j["routers"].size() == 20);
    for (const auto& r : j["routers"]) {
        CHECK(r["status"] == "terminated");
        CHECK(r["core_state"] == "exited");
        CHECK(r["undrained"] == 0);
    }
}

TEST_CASE("fabricctl mesh run: all-to-all on t3k, every byte and counter", "[cli][mesh][sim]") {
    if (!have_mesh_firmware()) return;
    const json j =
        parse_ok(fabricctl(t3k("run", {"--packets", "4", "--bytes", "512", "--json", "-q"})));
    CHECK(j["command"] == "run");
    CHECK(j["packets"] == 4);
    CHECK(j["bytes"] == 512);
    CHECK(j["rounds"] == 1);
    CHECK(j["deliveries"] == 8 * 7 * 4);
    CHECK(j["data_mismatch_words"] == 0);
    CHECK(j["problems"].empty());
    REQUIRE(j["routers"].size() == 20);
    uint64_t sent = 0, received = 0, delivered = 0;
    for (const auto& r : j["routers"]) {
        CHECK(r["status"] == "terminated");
        CHECK(r["bad_packets"] == 0);
        CHECK(r["undrained"] == 0);
        CHECK(r["bytes_sent"] == r["packets_sent"].get<uint64_t>() * 512);
        sent += r["packets_sent"].get<uint64_t>();
        received += r["packets_received"].get<uint64_t>();
        delivered += r["delivered"].get<uint64_t>();
    }
    CHECK(sent == received);
    CHECK(delivered == 8 * 7 * 4);
    // X first, then Y: chip 0's east router carries chip 0's packets to the six devices in other
    // columns; chip 0's south router those of the whole first row to device 4.
    CHECK(router_at(j, 0, 2)["packets_sent"] == 6 * 4);
    CHECK(router_at(j, 0, 8)["packets_sent"] == 4 * 4);
    CHECK(router_at(j, 0, 8)["dir"] == "S");
    // One kernel per (chip, first-hop direction): 2 on each corner, 3 on the others.
    REQUIRE(j["workers"].size() == 20);
    const json& w0 = j["workers"][0];
    CHECK(w0["chip"] == 0);
    CHECK(w0["dir"] == "E");
    CHECK(w0["dests"].size() == 6);
    for (const auto& w : j["workers"]) {
        CHECK(w["outcome"] == "exited");
        CHECK(w["exit_status"] == 0);
        CHECK(w["packets_sent"] == 4 * w["dests"].size());
    }
    CHECK(j["send_cycles"].get<uint64_t>() > 0);
    CHECK(j["bytes_per_cycle"].get<double>() > 0.0);
    // The account: every flow's packets sent, counted at its sink, none dropped or lost.
    const json& account = j["account"];
    CHECK(account["sent"] == 8 * 7 * 4);
    CHECK(account["delivered"] == 8 * 7 * 4);
    CHECK(account["dropped"] == 0);
    CHECK(account["lost"] == 0);
    CHECK(account["all_delivered"] == true);
    REQUIRE(account["flows"].size() == 56);
    CHECK(account["flows"][0]["flow"] == "M0D0 -> M0D1 plane 0");
    for (const auto& f : account["flows"]) {
        INFO(f.dump());
        CHECK(f["sent"] == 4);
        CHECK(f["delivered"] == 4);
        CHECK(f["drops"].empty());
    }

    // Text: a line per router with its figures, a line per kernel, the account, the verdict.
    const auto text = fabricctl(t3k("run", {"--packets", "2", "--planes", "0,1"}));
    INFO("stdout: " << text.out);
    INFO("stderr: " << text.err);
    REQUIRE(text.code == 0);
    CHECK_THAT(text.out, Contains("B/cycle") && Contains("\nM0D0 E p1 ") &&
                             Contains("\nworker chip 0 core ") &&
                             Contains(" M0D0 -> M0D1,M0D2,M0D3,M0D5,M0D6,M0D7: 12 packets") &&
                             Contains("\n\naccount: 112 flows, 224 sent, 224 delivered, 0 "
                                      "dropped, 0 lost\n"));
    CHECK_THAT(
        text.err,
        StartsWith("fabricctl: mesh run passed: 1 mesh, 8 chips, 40 routers (plane 0: 20, plane 1: "
                   "20); 40 worker(s) in 1 round(s), 2 packets of 1024 B to every other device per "
                   "plane, 224 deliveries checked; "));
}

TEST_CASE("fabricctl mesh run: more than 16 destinations behind one router take turns",
          "[cli][mesh][sim]") {
    if (!have_mesh_firmware()) return;
    // A 3 x 7 mesh, one plane: the east router of a row's first chip (and the west router of its
    // last) leads to the 18 devices of the other columns (X first), more than the traffic
    // kernel's 16 destinations.
    constexpr uint32_t kRows = 3, kCols = 7, kChips = kRows * kCols;
    const auto graph =
        write_file("mesh_3x7.yaml",
                   "ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 1, E: 1, S: 1, "
                   "W: 1}}\n"
                   "Board: [{name: B3x7, type: Mesh, topology: [3, 7]}]\n"
                   "Mesh: [{id: 0, board: B3x7, device_topology: [3, 7], "
                   "host_topology: [1, 1], host_ranks: [[0]]}]\n"
                   "Graph: []\n");
    std::string cluster = "arch: {";
    for (uint32_t c = 0; c < kChips; ++c)
        cluster += (c ? ", " : "") + std::to_string(c) + ": wormhole_b0";
    cluster += "}\nethernet_connections:\n";
    const auto link = [&](uint32_t a, uint32_t ca, uint32_t b, uint32_t cb) {
        cluster += "  - [{chip: " + std::to_string(a) + ", chan: " + std::to_string(ca) +
                   "}, {chip: " + std::to_string(b) + ", chan: " + std::to_string(cb) + "}]\n";
    };
    for (uint32_t c = 0; c < kChips; ++c) {
        if (c % kCols + 1 < kCols) link(c, 2, c + 1, 4);      // east 2 <-> west 4
        if (c / kCols + 1 < kRows) link(c, 8, c + kCols, 0);  // south 8 <-> north 0
    }
    cluster += "chips_with_mmio: [{0: 0}]\n";
    const auto cluster_path = write_file("mesh_3x7_cluster.yaml", cluster);
    const json j =
        parse_ok(fabricctl({"mesh", "run", "--mesh-graph", graph, "--cluster", cluster_path,
                            "--packets", "2", "--bytes", "256", "--json", "-q"}));
    CHECK(j["rounds"] == 2);
    CHECK(j["deliveries"] == kChips * (kChips - 1) * 2);
    CHECK(j["data_mismatch_words"] == 0);
    uint32_t second_round = 0;
    for (const auto& w : j["workers"]) {
        CHECK(w["dests"].size() <= 16);
        CHECK(w["outcome"] == "exited");
        if (w["round"] == 1) ++second_round;
    }
    // The first column's east kernels and the last column's west ones: 16 + 2 destinations each.
    CHECK(second_round == 2 * kRows);
}

TEST_CASE("fabricctl mesh: fabric failures are 108 and name the routers", "[cli][mesh][sim]") {
    if (!have_mesh_firmware()) return;
    const auto small = fabricctl(t3k("up", {"--max-cycles", "1000"}));
    expect_failure(small, 108);
    CHECK_THAT(
        small.err,
        Contains("not handshake_complete within 1000 cycles: 20 of 20 routers: chip 0 eth 2"));
    // A traffic kernel that just exits: the run fails its check, the fabric still terminates.
    const auto bare = t::program_elf(t::console_exit_program("", 5), hal::kWormholeB0.app_fw_base);
    const auto exits = write_file("mesh_exits.elf", std::string(bare.begin(), bare.end()));
    const auto r = fabricctl(t3k("run", {"--worker-elf", exits, "--packets", "2", "--json"}));
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    CHECK(r.code == 108);
    const auto j = json::parse(r.out);
    CHECK(j["ok"] == false);
    CHECK(j["exit_code"] == 108);
    CHECK(j["terminated"] == false);
    CHECK_THAT(j["verdict"].get<std::string>(),
               StartsWith("mesh run failed: worker chip 0 core ") &&
                   Contains(" (E plane 0) failed: exit 5"));
    // The bytes are checked all the same: every flow of the round is named as missing its data
    // (2 packets of the default size, none sent): both packets, 2 x 256 words.
    size_t missing = 0;
    for (const auto& p : j["problems"]) {
        const std::string text = p.get<std::string>();
        if (text.starts_with("data from ")) {
            CHECK_THAT(text, Contains(" on plane 0: 512 words differ (packets 0, 1 not there "
                                      "intact)"));
            ++missing;
        }
    }
    CHECK(missing == 56);  // 8 devices x 7 destinations on plane 0
}

TEST_CASE("fabricctl mesh run: all-to-all across the spec's 4 meshes, around their cycle",
          "[cli][mesh][sim]") {
    if (!have_mesh_firmware()) return;
    // Traffic that entered a mesh travels on VC1, so demand around the cycle of inter-mesh links
    // cannot close a cycle of waits (firmware/router/README.md, "2D"): every byte arrives.
    const auto r = fabricctl(
        {"mesh", "run", "--mesh-graph", kSoc + "/spec_4mesh_3x3_mesh_graph.yaml", "--cluster",
         kSoc + "/spec_4mesh_3x3_cluster.yaml", "--packets", "1", "--bytes", "256"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(
        r.err,
        StartsWith(
            "fabricctl: mesh run passed: 4 meshes, 36 chips, 106 routers (plane 0: 106); 144 "
            "worker(s) in 3 round(s), 1 packets of 256 B to every other device per plane, 1260 "
            "deliveries checked"));
    CHECK_THAT(r.out, Contains("terminated gracefully: 106 of 106 routers terminated"));
}

#endif
