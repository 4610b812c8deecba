// `fabricctl fault campaign` and what it relies on in the run commands: the faults and the account
// in `fabric run --json` / `mesh run --json` with exact values, every --send-type delivered and
// counted, an iteration replayed from its printed command with the same account and faults, a
// campaign whose checker is given a lost or duplicated packet failing with the replay line, and
// bad options refused with their exact messages.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_expect.h"

using Catch::Matchers::Contains;
namespace t = fabric::test;
using nlohmann::json;
using t::expect_failure;
using t::fabricctl;
using t::have_fabric_firmware;

namespace {

const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kN300 = kSoc + "/n300_cluster.yaml";
const std::string kT3k = kSoc + "/t3k_cluster.yaml";

json parsed(const t::Run& r) {
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    const json j = json::parse(r.out, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    return j;
}

std::vector<std::string> campaign(std::vector<std::string> extra) {
    std::vector<std::string> a{"fault", "campaign", "--descriptors", kSoc};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

// The device cycle of the stderr line "fabricctl: fault: <what> (device cycle N)".
uint64_t logged_device_cycle(const std::string& err, const std::string& what) {
    const std::string head = "fabricctl: fault: " + what + " (device cycle ";
    const size_t at = err.find(head);
    REQUIRE(at != std::string::npos);
    return std::stoull(err.substr(at + head.size()));
}

}  // namespace

TEST_CASE("fabricctl fault campaign: bad options are refused with their message",
          "[cli][campaign]") {
    struct Case {
        std::vector<std::string> args;
        int code;
        std::string message;
    };
    const std::vector<Case> cases{
        {campaign({"--iterations", "0"}), 101, "--iterations 0: must be 1..10000000"},
        {campaign({"--jobs", "0"}), 101, "--jobs 0: must be 1..64"},
        {campaign({"--wall-limit-s", "0"}), 101, "--wall-limit-s 0: must be more than 0"},
        {campaign({"--topology", "n300-line,t3k"}), 101,
         "--topology n300-line,t3k: unknown name 't3k' (n300-line, t3k-line, t3k-ring, t3k-mesh, "
         "spec-4mesh)"},
        {campaign({"--faults", "link-cut"}), 101,
         "--faults link-cut: unknown name 'link-cut' (link-down, link-flap, link-drop, "
         "link-delay, router-stall, noc-hold)"},
        {{"fault", "campaign", "--descriptors", "/no_such_dir"},
         101,
         "/no_such_dir/n300_cluster.yaml: cannot open cluster descriptor: No such file or "
         "directory"},
        {campaign({"--iterations", "x"}), 100, ""},
    };
    for (const Case& c : cases) {
        INFO(c.message);
        const auto r = fabricctl(c.args);
        expect_failure(r, c.code);
        if (!c.message.empty()) CHECK(r.err == "fabricctl: error: " + c.message + "\n");
    }
}

TEST_CASE("fabricctl fabric run / mesh run --send-type: bad values refused", "[cli][campaign]") {
    const auto unknown = fabricctl({"fabric", "run", "--cluster", kN300, "--send-type", "write"});
    expect_failure(unknown, 100);
    CHECK_THAT(unknown.err,
               Contains("unknown send type 'write' (unicast-write, inline-write, atomic-inc, "
                        "fused-write-atomic-inc, scatter-write)"));
    if (!have_fabric_firmware()) return;
    const auto positions = fabricctl(
        {"fabric", "run", "--cluster", kN300, "--send-type", "unicast-write", "--packets", "9"});
    expect_failure(positions, 101);
    CHECK(positions.err ==
          "fabricctl: error: fabric traffic: unicast-write packets are counted by the positions "
          "they land in: 9 packets per flow need as many positions, there are 8\n");
    const auto scatter = fabricctl({"mesh", "run", "--cluster", kT3k, "--send-type",
                                    "scatter-write", "--packets", "2", "--bytes", "16"});
    expect_failure(scatter, 101);
    CHECK(scatter.err ==
          "fabricctl: error: mesh traffic: scatter-write packets of 16 B: at least 32 B (2 chunks "
          "of 16)\n");
}

TEST_CASE("fabricctl fabric run --send-type: every type delivered and counted exactly",
          "[cli][campaign][sim]") {
    if (!have_fabric_firmware()) return;
    for (const char* type : {"unicast-write", "inline-write", "atomic-inc",
                             "fused-write-atomic-inc", "scatter-write"}) {
        INFO(type);
        const auto r = fabricctl({"fabric", "run", "--cluster", kT3k, "--chips", "4,5,6",
                                  "--pattern", "all-to-all", "--send-type", type, "--packets", "5",
                                  "--bytes", "512", "--json"});
        CHECK(r.code == 0);
        const json j = parsed(r);
        CHECK(j["send_type"] == type);
        CHECK(j["data_mismatch_words"] == 0);
        const json& a = j["account"];
        CHECK(a["flows"].size() == 6);  // 4 workers: chip 4 and 6 to 2 chips each, chip 5 to 1
        for (const json& f : a["flows"]) {
            CHECK(f["sent"] == 5);
            CHECK(f["delivered"] == 5);
        }
        CHECK(a["sent"] == 30);
        CHECK(a["delivered"] == 30);
        CHECK(a["dropped"] == 0);
    }
}

TEST_CASE("fabricctl mesh run --send-type: every type delivered and counted exactly",
          "[cli][campaign][sim]") {
    if (!have_fabric_firmware()) return;
    for (const char* type : {"unicast-write", "inline-write", "atomic-inc", "scatter-write"}) {
        INFO(type);
        const auto r = fabricctl({"mesh", "run", "--cluster", kT3k, "--send-type", type,
                                  "--packets", "2", "--bytes", "256", "--json"});
        CHECK(r.code == 0);
        const json j = parsed(r);
        CHECK(j["send_type"] == type);
        CHECK(j["data_mismatch_words"] == 0);
        CHECK(j["account"]["flows"].size() == 56);
        CHECK(j["account"]["sent"] == 112);
        CHECK(j["account"]["delivered"] == 112);
    }
}

TEST_CASE("fabricctl fabric run --json: the faults as written and as applied",
          "[cli][campaign][sim]") {
    if (!have_fabric_firmware()) return;
    const auto r = fabricctl({"fabric", "run", "--cluster", kN300, "--packets", "8", "--fault",
                              "link-delay:0:8@100/300", "--fault", "router-stall:1:0@250/400",
                              "--seed", "17", "--json"});
    CHECK(r.code == 0);
    const json j = parsed(r);
    const uint64_t delay_at =
        logged_device_cycle(r.err, "link-delay chip 0 eth 8 +300 cycles at traffic cycle 100");
    const uint64_t start = delay_at - 100;
    const json applied = json::array({
        {{"fault", "link-delay"},
         {"change", "+300 cycles"},
         {"chip", 0},
         {"eth", 8},
         {"device_cycle", start + 100},
         {"traffic_cycle", 100}},
        {{"fault", "router-stall"},
         {"change", "frozen"},
         {"chip", 1},
         {"eth", 0},
         {"device_cycle", start + 250},
         {"traffic_cycle", 250}},
        {{"fault", "router-stall"},
         {"change", "thawed"},
         {"chip", 1},
         {"eth", 0},
         {"device_cycle", start + 650},
         {"traffic_cycle", 650}},
    });
    CHECK(j["faults"] == json{{"seed", 17},
                              {"specs", {"link-delay:0:8@100/300", "router-stall:1:0@250/400"}},
                              {"applied", applied}});
    CHECK(j["account"]["sent"] == 16);
    CHECK(j["account"]["delivered"] == 16);
    // No --fault: empty lists.
    const json none = parsed(fabricctl({"fabric", "run", "--cluster", kN300, "--json"}));
    CHECK(none["faults"] ==
          json{{"seed", 1}, {"specs", json::array()}, {"applied", json::array()}});
}

TEST_CASE("fabricctl mesh run --json: the faults as applied", "[cli][campaign][sim]") {
    if (!have_fabric_firmware()) return;
    const auto r = fabricctl({"mesh", "run", "--cluster", kT3k, "--packets", "1", "--fault",
                              "link-flap:0:8@50/500", "--json"});
    CHECK(r.code == 0);
    const json j = parsed(r);
    const uint64_t down =
        logged_device_cycle(r.err, "link-flap chip 0 eth 8 down at traffic cycle 50");
    const json& applied = j["faults"]["applied"];
    REQUIRE(applied.size() >= 2);
    CHECK(applied[0] == json{{"fault", "link-flap"},
                             {"change", "down"},
                             {"chip", 0},
                             {"eth", 8},
                             {"device_cycle", down},
                             {"traffic_cycle", 50}});
    CHECK(applied[1] == json{{"fault", "link-flap"},
                             {"change", "up"},
                             {"chip", 0},
                             {"eth", 8},
                             {"device_cycle", down + 500},
                             {"traffic_cycle", 550}});
    CHECK(j["account"]["delivered"] == j["account"]["sent"]);
}

TEST_CASE("fabricctl fault campaign: an iteration replayed from its command gives the same run",
          "[cli][campaign][sim]") {
    if (!have_fabric_firmware()) return;
    // One iteration of each fabric kind: a 1D fabric run and a 2D mesh run.
    for (const char* topology : {"t3k-line", "t3k-mesh"}) {
        INFO(topology);
        const auto c = fabricctl(campaign({"--seed", "11", "--first", "3", "--iterations", "1",
                                           "--topology", topology, "--reports", "--json"}));
        const json j = parsed(c);
        CHECK(c.code == 0);
        REQUIRE(j["iterations"].size() == 1);
        const json& it = j["iterations"][0];
        CHECK(it["index"] == 3);
        CHECK(it["topology"] == topology);
        CHECK(it["passed"] == true);
        std::vector<std::string> args = it["args"];
        std::string replay = "fabricctl";
        for (const std::string& a : args) replay += " " + a;
        CHECK(it["replay"] == replay);  // no argument needs quoting here
        args.push_back("--json");
        const json again = parsed(fabricctl(args));
        CHECK(again["account"] == it["account"]);
        CHECK(again["faults"] == it["faults"]);
        CHECK_FALSE(it["faults"]["applied"].empty());
    }
}

TEST_CASE("fabricctl fault campaign: a lost or duplicated packet fails it with the replay line",
          "[cli][campaign][sim]") {
    if (!have_fabric_firmware()) return;
    for (const char* tamper : {"lose", "duplicate"}) {
        INFO(tamper);
        const std::vector<std::string> args = campaign(
            {"--seed", "4", "--iterations", "2", "--topology", "n300-line", "--tamper", tamper});
        std::vector<std::string> as_json = args;
        as_json.insert(as_json.end(), {"--reports", "--json"});
        const auto j = fabricctl(as_json);
        CHECK(j.code == 108);
        const json doc = parsed(j);
        CHECK(doc["ok"] == false);
        CHECK(doc["summary"]["failed"] == 2);
        REQUIRE(doc["iterations"].size() == 2);
        const auto text = fabricctl(args);
        CHECK(text.code == 108);
        CHECK(text.err == "fabricctl: fault campaign FAILED: seed 4, iterations 0..1, 2 failed\n");
        for (const json& it : doc["iterations"]) {
            // The run itself accounted for every packet; the checker was told one more or less.
            CHECK(it["delivered"].get<uint64_t>() + it["dropped"].get<uint64_t>() ==
                  it["sent"].get<uint64_t>());
            const json& f = it["account"]["flows"][0];
            const uint64_t sent = f["sent"], dropped = f["dropped"];
            const uint64_t told =
                std::string(tamper) == "lose" ? sent - dropped - 1 : sent - dropped + 1;
            CHECK(f["delivered"] == told);
            const std::string failure = "flow " + f["flow"].get<std::string>() + ": sent " +
                                        std::to_string(sent) + ", delivered " +
                                        std::to_string(told) + ", dropped " +
                                        std::to_string(dropped) + " (lost 0, duplicated 0)";
            CHECK(it["failures"] == json::array({failure}));
            const std::string head = "iteration " + std::to_string(it["index"].get<uint64_t>()) +
                                     " failed (seed " + std::to_string(it["seed"].get<uint64_t>()) +
                                     "): " + it["drawn"].get<std::string>() + "\n  " + failure +
                                     "\n  replay: " + it["replay"].get<std::string>() + "\n";
            CHECK_THAT(text.out, Contains(head));
        }
    }
}

TEST_CASE(
    "fabricctl fault campaign --link-returns: links that die and come back, each iteration "
    "passes, and a rerouted link rejoins",
    "[cli][campaign][sim]") {
    if (!have_fabric_firmware()) return;
    const auto c =
        fabricctl(campaign({"--seed", "21", "--iterations", "6", "--topology", "t3k-mesh",
                            "--faults", "link-down", "--link-returns", "--reports", "--json"}));
    CHECK(c.code == 0);
    const json j = parsed(c);
    CHECK(j["ok"] == true);
    CHECK(j["summary"]["failed"] == 0);
    REQUIRE(j["iterations"].size() == 6);
    size_t up = 0;
    for (const json& it : j["iterations"]) {
        CHECK(it["passed"] == true);
        CHECK(it["delivered"] == it["sent"]);  // every dead link rerouted: nothing dropped
        for (const json& f : it["faults"]["applied"]) up += f["change"] == "up" ? 1 : 0;
    }
    CHECK(up > 0);  // some came back while the fabric ran
}

TEST_CASE(
    "fabricctl fault campaign --faults noc-hold: router cores that stop taking NoC writes for a "
    "while are ridden out, sink cores that stop accepting cost what they hold, each packet named",
    "[cli][campaign][sim]") {
    if (!have_fabric_firmware()) return;
    const auto c = fabricctl(campaign({"--seed", "7", "--iterations", "8", "--faults", "noc-hold",
                                       "--reports", "--json", "--jobs", "2"}));
    CHECK(c.code == 0);
    const json j = parsed(c);
    CHECK(j["ok"] == true);
    CHECK(j["summary"]["failed"] == 0);
    REQUIRE(j["iterations"].size() == 8);
    size_t router_holds = 0, sink_holds = 0;
    for (const json& it : j["iterations"]) {
        INFO(it.dump());
        CHECK(it["passed"] == true);
        bool sink = false;
        for (const json& f : it["faults"]["applied"]) {
            CHECK(f["fault"] == "noc-hold");
            if (f["change"] != "") continue;
            // Router cores are eth cores (y 0 or 6 on Wormhole); sinks are worker cores.
            const std::string core = f["core"];
            const bool eth = core.ends_with("-0") || core.ends_with("-6");
            (eth ? router_holds : sink_holds) += 1;
            sink = sink || !eth;
        }
        if (!sink) CHECK(it["delivered"] == it["sent"]);  // below the NoC bound: ridden out
        CHECK(it["account"]["lost"] == 0);
        CHECK(it["account"]["duplicated"] == 0);
    }
    CHECK(router_holds > 0);  // (a hold drawn after the run ended is not applied)
    CHECK(sink_holds > 0);
}
