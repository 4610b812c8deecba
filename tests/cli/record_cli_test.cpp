// `fabricctl mesh run --record`, `mesh replay` and `mesh snapshot` as processes (seeds/000
// §7.5.1): a t3k run recorded and replayed with every flow's account equal; a run with a link cut
// mid-traffic replayed with the same drops, packet by packet; a record whose account was altered
// named flow by flow; bad records refused with their field; the snapshot of a t3k with both
// planes, exact in its chips, links, routes and buffers.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_expect.h"
#include "run_process.h"

using Catch::Matchers::Contains;
using fabric::test::expect_failure;
using fabric::test::fabricctl;
using fabric::test::have_fabric_firmware;
using fabric::test::write_file;
using nlohmann::json;

namespace {

const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;

std::vector<std::string> t3k_run(std::vector<std::string> extra) {
    std::vector<std::string> a{"mesh",         "run",
                               "--mesh-graph", kSoc + "/t3k_mesh_graph.yaml",
                               "--cluster",    kSoc + "/t3k_cluster.yaml"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

json read_json(const std::string& path) {
    std::ifstream in(path);
    return json::parse(in);
}

std::string tmp(const std::string& name) {
    return fabric::test::temp_path(FABRIC_TEST_TMP_DIR, name);
}

}  // namespace

TEST_CASE("fabricctl mesh run --record, mesh replay: the same account, flow by flow",
          "[cli][record][sim]") {
    if (!have_fabric_firmware()) return;
    const std::string rec = tmp("t3k_record.json");
    auto r = fabricctl(t3k_run({"--packets", "4", "--record", rec, "-q"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const json record = read_json(rec);
    CHECK(record["format"] == "erisc-fabric traffic record");
    CHECK(record["version"] == 1);
    CHECK(record["mesh_graph"]["path"] == kSoc + "/t3k_mesh_graph.yaml");
    CHECK_THAT(record["cluster"]["text"].get<std::string>(), Contains("ethernet_connections"));
    CHECK(record["packets"] == 4);
    CHECK(record["bytes"] == 1024);
    REQUIRE(record["flows"].size() == 56);  // 8 x 7 on plane 0
    for (const json& f : record["flows"]) {
        CHECK(f["sent"] == 4);
        CHECK(f["delivered"] == 4);
        CHECK(f["dropped"] == 0);
    }
    CHECK(record["flows"][0]["name"] == "M0D0 -> M0D1 plane 0");

    r = fabricctl({"mesh", "replay", rec});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("replay: every flow's account (sent, delivered, dropped by whom) "
                               "equals the record's (56 flows)\n"));
    CHECK_THAT(r.err, Contains("fabricctl: mesh replay passed: 1 mesh, 8 chips, 20 routers"));
    CHECK_THAT(r.err, Contains("; every flow's account as recorded\n"));
}

TEST_CASE("fabricctl mesh replay: a link cut mid-traffic gives the same drops again",
          "[cli][record][sim][faults]") {
    if (!have_fabric_firmware()) return;
    const std::string rec = tmp("t3k_cut_record.json");
    auto r = fabricctl(t3k_run({"--packets", "8", "--fault", "link-down:0:2@3000", "--on-link-down",
                                "drain", "--record", rec, "--json", "-q"}));
    REQUIRE(r.code == 108);  // packets dropped: the run fails, and says which
    const json run = json::parse(r.out);
    const json record = read_json(rec);
    CHECK(record["faults"] == json::array({"link-down:0:2@3000"}));
    CHECK(record["on_link_down"] == "drain");
    CHECK(record["reliability"] == "relaxed");
    uint64_t dropped = 0;
    for (const json& f : record["flows"]) dropped += f["dropped"].get<uint64_t>();
    CHECK(dropped == run["account"]["dropped"]);
    CHECK(dropped > 0);

    r = fabricctl({"mesh", "replay", rec, "--json", "-q"});
    CHECK(r.code == 108);
    const json replay = json::parse(r.out);
    CHECK(replay["replay"]["same_account"] == true);
    CHECK(replay["replay"]["differences"].empty());
    CHECK(replay["account"]["flows"] == run["account"]["flows"]);  // every drop, packet by packet
}

TEST_CASE("fabricctl mesh replay: an account that differs is named flow by flow",
          "[cli][record][sim]") {
    if (!have_fabric_firmware()) return;
    const std::string rec = tmp("t3k_altered_record.json");
    auto r = fabricctl(t3k_run({"--packets", "2", "--record", rec, "-q"}));
    REQUIRE(r.code == 0);
    json record = read_json(rec);
    record["flows"][0]["delivered"] = 1;
    record["flows"][3]["dropped"] = 1;
    record["flows"][3]["drops"] = json::array(
        {{{"chip", 1}, {"eth_channel", 2}, {"reason", 5}, {"packets", json::array({0})}}});
    record["flows"].erase(record["flows"].begin() + 5);
    const std::string altered = write_file("t3k_altered.json", record.dump());
    r = fabricctl({"mesh", "replay", altered});
    CHECK(r.code == 108);
    CHECK_THAT(r.out,
               Contains("replay: 3 flows differ from the record\n"
                        "  replay: flow M0D0 -> M0D1 plane 0: delivered 2, recorded 1 (sent "
                        "2 / 2, dropped 0 / 0)\n"
                        "  replay: flow M0D0 -> M0D4 plane 0: delivered 2, recorded 2 (sent "
                        "2 / 2, dropped 0 / 1)\n"
                        "  replay: flow M0D0 -> M0D6 plane 0 (id 5) is not in the record\n"));
    CHECK_THAT(r.err, Contains("fabricctl: mesh replay failed: replay: flow M0D0 -> M0D1 plane 0: "
                               "delivered 2, recorded 1"));
    // A reliability mode that is not one.
    record = read_json(rec);
    record["reliability"] = "lax";
    const std::string lax = write_file("t3k_lax.json", record.dump());
    r = fabricctl({"mesh", "replay", lax});
    expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: reliability 'lax': use relaxed or strict\n");
}

TEST_CASE("fabricctl mesh replay: bad records", "[cli][record]") {
    const std::string missing = tmp("no_such_record.json");
    auto r = fabricctl({"mesh", "replay", missing});
    expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: record " + missing + ": No such file or directory\n");
    const std::string not_json = write_file("not_json.json", "{\"format\": ");
    r = fabricctl({"mesh", "replay", not_json});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains(not_json + ": not JSON ("));
    const std::string other = write_file("other.json", R"({"format": "something else"})");
    r = fabricctl({"mesh", "replay", other});
    expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: " + other + ": format: not a traffic record\n");
    json bad{{"format", "erisc-fabric traffic record"}, {"version", 2}};
    const std::string v2 = write_file("v2.json", bad.dump());
    r = fabricctl({"mesh", "replay", v2});
    expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: " + v2 + ": version: only version 1 is read\n");
    bad["version"] = 1;
    bad["mesh_graph"] = nullptr;
    bad["cluster"] = {{"path", "c.yaml"}};
    const std::string no_text = write_file("no_text.json", bad.dump());
    r = fabricctl({"mesh", "replay", no_text});
    expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: " + no_text + ": cluster.text: missing\n");
}

TEST_CASE("fabricctl mesh replay: a field of the wrong type or out of range is named",
          "[cli][record]") {
    // A record as `mesh run --record` writes it (no flows: refused before anything runs).
    const json good{{"format", "erisc-fabric traffic record"},
                    {"version", 1},
                    {"mesh_graph", nullptr},
                    {"cluster", {{"path", "c.yaml"}, {"text", "chips: {}"}}},
                    {"soc", nullptr},
                    {"pins", json::array()},
                    {"topology", "mesh"},
                    {"planes", "0"},
                    {"payload", 2048},
                    {"slots", ""},
                    {"stall_cycles", 1000000},
                    {"packet_timeout_us", 0},
                    {"packet_timeout_action", "drop"},
                    {"packets", 4},
                    {"bytes", 1024},
                    {"send_type", "unicast-write"},
                    {"faults", json::array()},
                    {"fault_seed", 1},
                    {"on_link_down", "drain-after-grace"},
                    {"reliability", "relaxed"},
                    {"reroute", true},
                    {"rejoin_after_us", 20},
                    {"flows", json::array()}};
    struct Case {
        std::string key;
        json value;
        std::string why;
    };
    const std::vector<Case> cases{
        {"reroute", 1, "reroute: not true or false"},
        {"reroute", "yes", "reroute: not true or false"},
        {"rejoin_after_us", true, "rejoin_after_us: not an integer 0..4294967295"},
        {"rejoin_after_us", -5, "rejoin_after_us: not an integer 0..4294967295"},
        {"rejoin_after_us", 20.5, "rejoin_after_us: not an integer 0..4294967295"},
        {"rejoin_after_us", 4294967296, "rejoin_after_us: not an integer 0..4294967295"},
        {"packets", "4", "packets: not an integer 0..4294967295"},
        {"fault_seed", -1, "fault_seed: not an integer 0..18446744073709551615"},
        {"send_type", 3, "send_type: not a string"},
        {"faults", "link-down:0:8@5", "faults: not a list"},
    };
    for (const Case& c : cases) {
        INFO(c.key << " = " << c.value.dump());
        json bad = good;
        bad[c.key] = c.value;
        const std::string file = write_file("typed_" + c.key + ".json", bad.dump());
        const auto r = fabricctl({"mesh", "replay", file});
        expect_failure(r, 101);
        CHECK(r.err == "fabricctl: error: " + file + ": " + c.why + "\n");
    }
}

TEST_CASE("fabricctl mesh snapshot: a t3k with both planes, chips, links, routes and buffers",
          "[cli][snapshot][sim]") {
    if (!have_fabric_firmware()) return;
    const std::string out = tmp("t3k_snapshot.json");
    auto r = fabricctl({"mesh", "snapshot", "--mesh-graph", kSoc + "/t3k_mesh_graph.yaml",
                        "--cluster", kSoc + "/t3k_cluster.yaml", "--planes", "0,1", "-o", out});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("snapshot written to " + out +
                               ": 8 chips, 20 Ethernet connections, 40 routers\n"));
    const json s = read_json(out);
    CHECK(s["format"] == "erisc-fabric snapshot");
    CHECK(s["cluster"]["arch"] == "wormhole_b0");
    REQUIRE(s["cluster"]["chips"].size() == 8);
    CHECK(s["cluster"]["chips"][0]["mmio"] == true);
    CHECK(s["cluster"]["chips"][4]["mmio"] == false);
    for (const json& e : s["cluster"]["ethernet_connections"]) CHECK(e["fabric_link"] == "up");
    CHECK(s["mapping"]["meshes"][0]["rows"] == 2);
    CHECK(s["mapping"]["meshes"][0]["cols"] == 4);
    REQUIRE(s["routing"].size() == 8);
    CHECK(s["routing"][0]["node"] == "M0D0");
    CHECK(s["routing"][0]["l0"]["M0D7"] == "EEES");
    CHECK(s["routing"][7]["l0"]["M0D0"] == "WWWN");
    REQUIRE(s["routers"].size() == 40);
    for (const json& rt : s["routers"]) {
        CHECK(rt["status"] == "ready_for_traffic");  // read while running, before termination
        CHECK(rt["exit_table"] == json::array({0}));
        const json& b = rt["buffers"];
        CHECK(b["held"] == 0);
        CHECK(b["reroute"] == "none");
        REQUIRE(b["receivers"].size() == 1);
        CHECK(b["receivers"][0]["slots"] == 14);
        for (const json& ch : b["senders"]) {
            // The fallback's channel (ch1 + the router's own side, two planes): one slot.
            const std::string sides = "NESW";
            const int own = 1 + static_cast<int>(sides.find(rt["dir"].get<std::string>()));
            CHECK(ch["slots"] == (ch["channel"] == own ? 1 : 7));
            CHECK(ch["sent"] == ch["taken_by_peer"]);
            CHECK(ch["on_link_or_waiting"] == 0);
            CHECK(ch["being_delivered"] == 0);
        }
    }
}
