// Router control from the CLI (protocol/fabric.h RouterControl): `--on-link-down drain` of the run
// commands (a link down for good: both ends drained, every packet delivered or named, exit 108
// "all accounted for"), and `mesh pause|drain|resume` in the model (the routers' states as they
// stood, the traffic completing exactly after a pause).
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_expect.h"

using Catch::Matchers::Contains;
namespace t = fabric::test;
using t::fabricctl;
using t::have_fabric_firmware;

namespace {

const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kN300 = kSoc + "/n300_cluster.yaml";
const std::string kN300Mesh = kSoc + "/n300_mesh_graph.yaml";

// `mesh VERB` on the n300 mesh with `extra`.
std::vector<std::string> n300_mesh(const std::string& verb, std::vector<std::string> extra) {
    std::vector<std::string> a{"mesh", verb, "--cluster", kN300, "--mesh-graph", kN300Mesh};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

}  // namespace

TEST_CASE(
    "fabricctl fabric run --on-link-down drain: a link down for good under traffic, every "
    "packet delivered or named, exit 108",
    "[cli][control][sim]") {
    if (!have_fabric_firmware()) return;
    const auto r = fabricctl({"fabric", "run", "--cluster", kN300, "--packets", "400", "--fault",
                              "link-down:0:8@30000", "--on-link-down", "drain"});
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    CHECK(r.code == 108);
    // Chip 0's first 20 packets and chip 1's first 13 were delivered; the rest were dropped,
    // each named (chip 0's packet 20 was on the link when it died, at this timing: unacked).
    CHECK_THAT(r.out,
               Contains("worker chip 0 core 1-1 (east) -> chip 1      400        20     380      "
                        "0          0  drained at chip 0 eth 8: 379 packets (21, 22, 23, 24, 25, "
                        "26, 27, 28 and 371 more); unacked at chip 0 eth 8: 1 packet (20)") &&
                   Contains("worker chip 1 core 2-1 (west) -> chip 0      400        13     387  "
                            "    0          0  drained at chip 1 eth 0: 387 packets (13, 14, 15, "
                            "16, 17, 18, 19, 20 and 379 more)") &&
                   Contains("account: 2 flows, 800 sent, 33 delivered, 767 dropped, 0 lost"));
    CHECK_THAT(r.err, Contains("fabricctl: fabric run failed: 767 packets dropped by routers in 2 "
                               "flows (all accounted for)"));
    // Without the reaction the same fault ends only at the workers' timeout (faults_cli_test).
}

TEST_CASE(
    "fabricctl fabric run --on-link-down drain: a ring link dies after the traffic, during "
    "termination, its unacked packets decided by the peer's final count",
    "[cli][control][sim]") {
    if (!have_fabric_firmware()) return;
    // The wrap link 4 -> 0 dies as the fabric drains (traffic cycle 12,000: the traffic is over):
    // the host drains its ends from terminate, after the traffic's own resolution ran. Chip 4 had
    // sent six packets on ch1 that were never acknowledged; chip 0 had taken five of them (chip
    // 7's packet 0 never arrived). (Its name once held a ';', which cut its ctest filter: it ran
    // nothing while its fault cycle, 9,761, drifted with the routers' timing to mid-traffic.)
    const auto r = fabricctl({"fabric",         "run",
                              "--cluster",      kSoc + "/t3k_cluster.yaml",
                              "--topology",     "ring",
                              "--chips",        "0,1,2,3,7,6,5,4",
                              "--pattern",      "all-to-all",
                              "--send-type",    "inline-write",
                              "--packets",      "4",
                              "--bytes",        "256",
                              "--fault",        "link-down:0:8@12000",
                              "--on-link-down", "drain"});
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    CHECK(r.code == 108);
    CHECK_THAT(r.out,
               Contains("worker chip 7 core 1-1 (east) -> chip 0        4         0       4 "
                        "     0          0  drained at chip 4 eth 0: 3 packets (1, 2, 3); "
                        "unacked at chip 4 eth 0: 1 packet (0)") &&
                   Contains("account: 56 flows, 224 sent, 184 delivered, 40 dropped, 0 lost"));
    CHECK_THAT(r.err, Contains("40 packets dropped by routers in 10 flows (all accounted for)"));
}

TEST_CASE(
    "fabricctl mesh pause|resume: the routers held still mid-traffic, then every byte "
    "delivered, exit 0",
    "[cli][control][sim]") {
    if (!have_fabric_firmware()) return;
    for (const std::string verb : {"pause", "resume"}) {
        const auto r = fabricctl(
            n300_mesh(verb, {"--packets", "200", "--at", "20000", "--for", "30000", "--json"}));
        INFO("stderr: " << r.err);
        REQUIRE(r.code == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["ok"] == true);
        CHECK(j["command"] == verb);
        CHECK(j["account"]["lost"] == 0);
        CHECK(j["account"]["dropped"] == 0);
        REQUIRE(j["control"].size() == j["routers"].size());
        uint64_t delivered = 0;
        for (const auto& c : j["control"]) {
            INFO(c.dump());
            CHECK(c["state"] == "pause");
            CHECK(c["cut"] == false);
            delivered += c["delivered"].get<uint64_t>();
        }
        // Mid-traffic: some delivered, not all.
        CHECK(delivered > 0);
        CHECK(delivered < j["deliveries"].get<uint64_t>());
        CHECK_THAT(r.err, Contains("fabricctl: mesh " + verb + " passed: 1 mesh, 2 chips"));
    }
    // The text names every router's state.
    const auto text = fabricctl(n300_mesh("pause", {"--packets", "200", "--at", "20000"}));
    CHECK(text.code == 0);
    CHECK_THAT(text.out, Contains("routers at traffic cycle 39999 (paused at 20000, resumed at "
                                  "40000):\nrouter M0D0 E plane 0 (chip 0 eth ") &&
                             Contains("): pause; sent "));
}

TEST_CASE("fabricctl mesh drain: a link down drained at both ends, every packet named, exit 108",
          "[cli][control][sim]") {
    if (!have_fabric_firmware()) return;
    const auto r = fabricctl(n300_mesh("drain", {"--packets", "200", "--at", "20000", "--fault",
                                                 "link-down:0:8@25000", "--json"}));
    INFO("stderr: " << r.err);
    CHECK(r.code == 108);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["account"]["lost"] == 0);
    CHECK(j["account"]["duplicated"] == 0);
    CHECK(j["account"]["dropped"].get<uint64_t>() > 0);
    bool cut = false;
    for (const auto& c : j["control"]) cut = cut || c["cut"] == true;
    CHECK(cut);
    CHECK_THAT(r.err, Contains("(all accounted for)"));
}
