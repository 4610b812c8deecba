// `fabricctl fabric up | run` as a process: every bad input with its exit code and one-line
// message; bring-up, traffic and termination in the simulator with the firmware of this build
// (the router and the fabric_traffic kernel; skipped with a warning while they are not built);
// fabric failures (a router image that is not a router, a budget too small) as exit code 108.

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
const std::string kN300 = kSoc + "/n300_cluster.yaml";
const std::string kT3k = kSoc + "/t3k_cluster.yaml";

// The firmware this build makes for the fabric exists (a failed check otherwise, never a skip).
bool have_fabric_firmware(const std::string& arch = "wormhole_b0") {
    return fabric::test::have_firmware({"fabric_router", "fabric_traffic"}, arch);
}

std::vector<std::string> run_args(std::vector<std::string> extra) {
    std::vector<std::string> a{"fabric", "run"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

}  // namespace

TEST_CASE("fabricctl fabric: usage errors", "[cli][fabric]") {
    expect_failure(fabricctl({"fabric"}), 100);
    expect_failure(fabricctl({"fabric", "run"}), 100);  // --cluster is required
    const auto topo = fabricctl({"fabric", "up", "--cluster", kN300, "--topology", "star"});
    expect_failure(topo, 100);
    CHECK_THAT(topo.err, Contains("star"));
    expect_failure(fabricctl(run_args({"--cluster", kN300, "--pattern", "random"})), 100);
    expect_failure(fabricctl(run_args({"--cluster", kN300, "--max-cycles", "0"})), 100);
    expect_failure(fabricctl(run_args({"--cluster", kN300, "--bytes", "abc"})), 100);
    expect_failure(fabricctl(run_args({"--cluster", kN300, "--stall-cycles", "0"})), 100);
    expect_failure(fabricctl(run_args({"--cluster", kN300, "--watch", "5"})), 100);  // up only
    const auto help = fabricctl({"fabric", "run", "--help"});
    CHECK(help.code == 0);
    CHECK_THAT(help.out, Contains("--pattern") && Contains("--chips") && Contains("--router-elf"));
}

TEST_CASE("fabricctl fabric: bad input is 101 with the reason", "[cli][fabric]") {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases{
        {{"--cluster", kT3k, "--chips", "0,x"}, "--chips 0,x: 'x' is not a chip number"},
        {{"--cluster", kT3k, "--chips", "0,,1"}, "'' is not a chip number"},
        {{"--cluster", kT3k, "--chips", "0,1,0"}, "chip 0 is listed twice"},
        {{"--cluster", kT3k, "--chips", "0,9"}, "chip 9 is not in cluster"},
        {{"--cluster", kT3k, "--chips", "0"}, "at least 2 chips, got 1"},
        {{"--cluster", kT3k, "--chips", "0,2"},
         "chips 0 and 2 are neighbours in the line (0,2) but not connected"},
        {{"--cluster", kT3k, "--chips", "0,1,2,3", "--topology", "ring"},
         "chips 3 and 0 are neighbours in the ring"},
        {{"--cluster", kT3k},
         "chips 3 and 4 are neighbours in the line (0,1,2,3,4,5,6,7) but not connected"},
        {{"--cluster", kT3k, "--chips", "0,1", "--link", "2"}, "chips 0 and 1 have 2 link(s)"},
        {{"--cluster", kN300, "--bytes", "100"},
         "--bytes 100: must be a non-zero multiple of 16 and at most 7616"},
        {{"--cluster", kN300, "--bytes", "0"}, "--bytes 0"},
        {{"--cluster", kN300, "--bytes", "7632"}, "at most 7616 on wormhole_b0"},
        {{"--cluster", kN300, "--packets", "0"}, "--packets 0: must be 1..1000000"},
        {{"--cluster", kN300, "--router-elf", kTmp + "/no_such_router.elf"}, "no_such_router.elf"},
        {{"--cluster", kN300, "--worker-elf", kTmp + "/no_such_worker.elf"}, "no_such_worker.elf"},
        {{"--cluster", kTmp + "/no_such_cluster.yaml"}, "no_such_cluster.yaml"},
        {{"--cluster", kN300, "--soc", kSoc + "/blackhole_140_arch.yaml"},
         "descriptor is for blackhole but cluster"},
        {{"--cluster", kN300, "--base-fw", kTmp + "/no_such_base.elf"}, "no_such_base.elf"},
        {{"--cluster", kN300, "--stall-router", "0:8"},
         "--stall-router 0:8: expected CHIP:ETH@CYCLES (e.g. 0:8@20000)"},
        {{"--cluster", kN300, "--stall-router", "0:x@5"},
         "--stall-router 0:x@5: expected CHIP:ETH@CYCLES (e.g. 0:8@20000), 'x' is not a number"},
    };
    for (const auto& c : cases) {
        INFO(c.says);
        const auto r = fabricctl(run_args(c.args));
        expect_failure(r, 101);
        CHECK_THAT(r.err, Contains(c.says));
    }
    // The default chip list is named as such.
    CHECK_THAT(fabricctl(run_args({"--cluster", kT3k})).err,
               Contains("the default --chips is 0..7"));
    // --json: the error as a document on stdout too.
    const auto j = fabricctl(run_args({"--cluster", kT3k, "--chips", "0,x", "--json"}));
    CHECK(j.code == 101);
    const auto doc = json::parse(j.out);
    CHECK(doc["ok"] == false);
    CHECK(doc["error"]["category"] == "bad_input");
    CHECK(doc["exit_code"] == 101);
}

TEST_CASE("fabricctl fabric: bad router image is 103", "[cli][fabric]") {
    const auto garbage = write_file("garbage.elf", "not an elf");
    expect_failure(fabricctl(run_args({"--cluster", kN300, "--router-elf", garbage})), 103);
    // An image over the router's L1 block (Wormhole: from 0x18000), or over the routing
    // firmware's region below it (0x11000).
    for (const auto& [at, what] :
         {std::pair{0x18000u, "router L1 block"}, std::pair{0x11000u, "routing firmware region"}}) {
        const auto over = write_file("over.elf", [at = at] {
            const auto b = t::program_elf(t::console_exit_program("", 0), at);
            return std::string(b.begin(), b.end());
        }());
        const auto r =
            fabricctl(run_args({"--cluster", kN300, "--router-elf", over, "--no-base-fw"}));
        expect_failure(r, 103);
        CHECK_THAT(r.err, Contains(what));
    }
}

#ifdef FABRIC_HAVE_SIM

TEST_CASE("fabricctl fabric up: n300 line, both launch methods", "[cli][fabric][sim]") {
    if (!have_fabric_firmware()) return;
    for (const bool base_fw : {true, false}) {
        INFO("base firmware " << base_fw);
        std::vector<std::string> a{"fabric", "up", "--cluster", kN300};
        if (!base_fw) a.push_back("--no-base-fw");
        const auto r = fabricctl(a);
        INFO("stdout: " << r.out);
        INFO("stderr: " << r.err);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Contains("0:east   8     9-6   1:0    master") &&
                              Contains("1:west   0     9-0   0:8"));
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 3);  // header + 2 routers
        CHECK_THAT(r.err, StartsWith("fabricctl: fabric up: line 0,1 (2 routers): handshake "));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

TEST_CASE("fabricctl fabric run: neighbour traffic on a line, JSON", "[cli][fabric][sim]") {
    if (!have_fabric_firmware()) return;
    const auto r = fabricctl(run_args({"--cluster", kT3k, "--chips", "4,5,6", "--packets", "8",
                                       "--bytes", "512", "--json", "-q"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    const auto j = json::parse(r.out);
    CHECK(j["ok"] == true);
    CHECK(j["command"] == "run");
    CHECK(j["topology"] == "line");
    CHECK(j["chips"] == json::array({4, 5, 6}));
    CHECK(j["payload_bytes"] == 4352);
    CHECK(j["sender_slots"] == 12);  // ch0's: the plan gives the workers' channel 4 more on a line
    CHECK(j["receiver_slots"] == 16);
    CHECK(j["deliveries"] == 24);  // 4->5, 5->6, 6->5: 8 packets each
    CHECK(j["data_mismatch_words"] == 0);
    CHECK(j["exit_code"] == 0);
    CHECK(j["problems"].empty());
    REQUIRE(j["routers"].size() == 4);
    uint64_t sent = 0, received = 0, delivered = 0;
    for (const auto& rt : j["routers"]) {
        CHECK(rt["status"] == "terminated");
        CHECK(rt["core_state"] == "exited");
        CHECK(rt["bad_packets"] == 0);
        CHECK(rt["undrained"] == 0);
        CHECK(rt["bytes_sent"] == rt["packets_sent"].get<uint64_t>() * 512);
        sent += rt["packets_sent"].get<uint64_t>();
        received += rt["packets_received"].get<uint64_t>();
        delivered += rt["delivered"].get<uint64_t>();
    }
    CHECK(sent == 24);
    CHECK(received == 24);
    CHECK(delivered == 24);
    // Router 4:east (chip 4 ch 2) sent chip 4's 8 packets; 6:west sent chip 6's 8 back to 5.
    CHECK(j["routers"][0]["chip"] == 4);
    CHECK(j["routers"][0]["dir"] == "east");
    CHECK(j["routers"][0]["sent"] == json::array({8, 0, 0}));
    CHECK(j["routers"][3]["chip"] == 6);
    CHECK(j["routers"][3]["sent"] == json::array({8, 0, 0}));
    REQUIRE(j["workers"].size() == 3);
    CHECK(j["workers"][2]["dir"] == "west");
    CHECK(j["workers"][2]["dests"] == json::array({5}));
    for (const auto& w : j["workers"]) {
        CHECK(w["outcome"] == "exited");
        CHECK(w["exit_status"] == 0);
        CHECK(w["packets_sent"] == 8);
    }
    CHECK(j["traffic_cycles"].get<uint64_t>() > 0);
    CHECK(j["send_cycles"].get<uint64_t>() > 0);
    CHECK(j["send_cycles"].get<uint64_t>() <= j["traffic_cycles"].get<uint64_t>());
    CHECK(j["bytes_per_cycle"].get<double>() > 0.0);
    // The account: a flow per worker and chip it writes, every packet counted at the sink.
    const json& account = j["account"];
    CHECK(account["all_delivered"] == true);
    REQUIRE(account["flows"].size() == 3);
    CHECK(account["flows"][2]["flow"] == "worker chip 6 core 2-1 (west) -> chip 5");
    for (const auto& f : account["flows"]) {
        CHECK(f["sent"] == 8);
        CHECK(f["delivered"] == 8);
        CHECK(f["dropped"] == 0);
        CHECK(f["lost"] == 0);
    }
}

TEST_CASE("fabricctl fabric run: all-to-all on a ring (multicast over the dateline)",
          "[cli][fabric][sim]") {
    if (!have_fabric_firmware()) return;
    const auto r =
        fabricctl(run_args({"--cluster", kT3k, "--topology", "ring", "--chips", "0,1,5,4",
                            "--pattern", "all-to-all", "--packets", "4", "--bytes", "2048"}));
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Contains("fabric run passed: ring 0,1,5,4 (4 chips, 8 routers), 4 "
                               "worker(s) x 4 packets of 2048 B (all-to-all), 48 deliveries "
                               "checked"));
    CHECK_THAT(r.out,
               Contains("dateline") &&
                   Contains("worker chip 0 core 1-1 east -> chips 1,5,4: 4 packets") &&
                   Contains("\n\naccount: 12 flows, 48 sent, 48 delivered, 0 dropped, 0 lost\n"));
    // A ring of two chips: two links between them (n300: 0:8-1:0 east, 1:1-0:9 the wrap).
    const auto two =
        fabricctl(run_args({"--cluster", kN300, "--topology", "ring", "--packets", "4"}));
    INFO("stdout: " << two.out);
    INFO("stderr: " << two.err);
    CHECK(two.code == 0);
    CHECK_THAT(two.out, Contains("1:east   1     1-0   0:9     dateline") &&
                            Contains("0:west   9     1-6   1:1    master dateline"));
    CHECK_THAT(two.err, Contains("fabric run passed: ring 0,1 (2 chips, 4 routers)"));
}

TEST_CASE("fabricctl fabric run: Blackhole", "[cli][fabric][sim]") {
    if (!have_fabric_firmware("blackhole")) return;
    const auto bh = write_file("bh2.yaml",
                               "arch: {0: blackhole, 1: blackhole}\n"
                               "ethernet_connections: [[{chip: 0, chan: 0}, {chip: 1, chan: 1}]]\n"
                               "chips_with_mmio: [{0: 0}]\n");
    const auto r =
        fabricctl(run_args({"--cluster", bh, "--packets", "4", "--bytes", "8192", "--json"}));
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const auto j = json::parse(r.out);
    CHECK(j["arch"] == "blackhole");
    CHECK(j["payload_bytes"] == 8192);
    CHECK(j["base_firmware"].is_null());
    CHECK(j["deliveries"] == 8);
}

TEST_CASE("fabricctl fabric: failures of the fabric are 108 and name the routers",
          "[cli][fabric][sim]") {
    if (!have_fabric_firmware()) return;
    // A budget too small for the handshake.
    const auto small = fabricctl({"fabric", "up", "--cluster", kN300, "--max-cycles", "1000"});
    expect_failure(small, 108);
    CHECK_THAT(small.err,
               Contains("error: fabric bring-up: not handshake_complete within 1000 cycles: 2 of 2 "
                        "routers: chip 0 eth 8 (core 9-6, east): status ") &&
                   Contains("chip 1 eth 0 (core 9-0, west)"));
    // A "router" that just exits.
    const auto bare = t::program_elf(t::console_exit_program("", 5), hal::kWormholeB0.app_fw_base);
    const auto exits = write_file("exits.elf", std::string(bare.begin(), bare.end()));
    const auto r = fabricctl(
        {"fabric", "up", "--cluster", kN300, "--router-elf", exits, "--no-base-fw", "--json"});
    CHECK(r.code == 108);
    const auto j = json::parse(r.out);
    CHECK(j["ok"] == false);
    CHECK(j["error"]["category"] == "fabric");
    CHECK_THAT(j["error"]["message"].get<std::string>(),
               Contains("fabric bring-up (handshake) failed") &&
                   Contains("chip 0 eth 8 (core 9-6, east): status not_started, stage "
                            "not_started, stuck at none, detail 0x00000000, core exited with "
                            "status 5"));
    // A worker kernel that is not the traffic kernel: the run fails its check.
    const auto w =
        fabricctl(run_args({"--cluster", kN300, "--worker-elf", exits, "--packets", "2"}));
    CHECK(w.code == 108);
    CHECK_THAT(w.err, Contains("fabric run failed: worker chip 0 core 1-1 (east) failed: exit 5"));
}

TEST_CASE("fabricctl fabric: a frozen router is named by the health monitor, exit 108",
          "[cli][fabric][sim][health]") {
    if (!have_fabric_firmware()) return;
    // Chip 0's east router (eth 8, core 9-6) freezes 20000 cycles into the traffic.
    const auto r = fabricctl(run_args({"--cluster", kN300, "--packets", "2000", "--stall-router",
                                       "0:8@20000", "--stall-cycles", "100000"}));
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    expect_failure(r, 108);
    CHECK_THAT(r.err, StartsWith("fabricctl: error: fabric: no progress while workers ran ("));
    CHECK_THAT(r.err, Contains("stall window 100000 cycles): 1 of 2 components stuck: router east "
                               "chip 0 eth 8 (chip 0 core 9-6): stalled; status ready_for_traffic, "
                               "stage ready_for_traffic, stuck at none, detail 0x00000000, "
                               "heartbeat ") &&
                          Contains(" unchanged for 100000 cycles, core running at pc 0x"));
    CHECK_THAT(r.err, !Contains("router west chip 1"));  // only the frozen one

    // `up`: the fabric idles under the monitor; --json carries the report as data.
    const auto up = fabricctl({"fabric", "up", "--cluster", kN300, "--stall-router", "1:0@5000",
                               "--stall-cycles", "50000", "--json"});
    INFO("stdout: " << up.out);
    INFO("stderr: " << up.err);
    CHECK(up.code == 108);
    const auto j = json::parse(up.out);
    CHECK(j["ok"] == false);
    CHECK(j["exit_code"] == 108);
    CHECK(j["error"]["category"] == "fabric");
    // When the monitor gives up depends on the routers' last heartbeat before the freeze (their
    // loop's timing), so not the exact cycle.
    CHECK_THAT(
        j["error"]["message"].get<std::string>(),
        StartsWith("fabric: no progress after ") &&
            Contains(" of 105000 cycles of monitoring (stall window 50000 cycles): 1 of 2 "
                     "components stuck: router west chip 1 eth 0 (chip 1 core 9-0): stalled; "
                     "status ready_for_traffic"));
    REQUIRE(j["stuck"].size() == 1);
    const auto& s = j["stuck"][0];
    CHECK(s["chip"] == 1);
    CHECK(s["core"] == "9-0");
    CHECK(s["component"] == "router west chip 1 eth 0");
    CHECK(s["kind"] == "router");
    CHECK(s["reason"] == "stalled");
    CHECK(s["status"] == "ready_for_traffic");
    CHECK(s["stage"] == "ready_for_traffic");
    CHECK(s["stuck_at"] == "none");
    CHECK(s["detail"] == 0);
    CHECK(s["heartbeat"].get<uint64_t>() > 0);
    CHECK(s["unchanged_cycles"] == 50000);
    CHECK(s["core_state"] == "running");
    CHECK(s["pc"].is_number());

    const auto nobody = fabricctl(run_args({"--cluster", kN300, "--stall-router", "1:5@100"}));
    expect_failure(nobody, 101);
    CHECK_THAT(nobody.err, Contains("--stall-router 1:5@100: chip 1 eth 5 is not a router of this "
                                    "fabric (routers: 0:8, 1:0)"));
}

TEST_CASE("fabricctl fabric: a healthy fabric passes the health monitor",
          "[cli][fabric][sim][health]") {
    if (!have_fabric_firmware()) return;
    const auto up = fabricctl(
        {"fabric", "up", "--cluster", kN300, "--watch", "300000", "--stall-cycles", "50000", "-q"});
    INFO("stderr: " << up.err);
    CHECK(up.code == 0);
    CHECK(up.err.empty());
    const auto run = fabricctl(run_args({"--cluster", kN300, "--packets", "64", "--bytes", "7616",
                                         "--stall-cycles", "50000", "-q"}));
    INFO("stderr: " << run.err);
    CHECK(run.code == 0);
    CHECK(run.err.empty());
}

#endif
