// --fault on `fabricctl fabric run` and `mesh run`: faults the model applies during the traffic,
// each logged as it happens ("fabricctl: fault: ..."), the fabric coping with the ones it can
// (delay, a short stall, dropped frames resent by the link's Go-Back-N), bad specs refused with
// their exact message, and no faults on chips behind tt-kmd.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_expect.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace t = fabric::test;
using t::expect_failure;
using t::fabricctl;
using t::have_fabric_firmware;

namespace {

const std::string kTmp = FABRIC_TEST_TMP_DIR;
const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kN300 = kSoc + "/n300_cluster.yaml";
const std::string kT3k = kSoc + "/t3k_cluster.yaml";

// `fabric run` on the n300 line with `extra`.
std::vector<std::string> n300_run(std::vector<std::string> extra) {
    std::vector<std::string> a{"fabric", "run", "--cluster", kN300};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

// `mesh run` on the t3k with planes 0 and 1, all-to-all fused 2 KiB writes with atomic increments
// (each counted at its sink), JSON out; `extra` adds the packets and the faults.
std::vector<std::string> t3k_two_planes(std::vector<std::string> extra) {
    std::vector<std::string> a{"mesh",         "run",
                               "--cluster",    kT3k,
                               "--mesh-graph", kSoc + "/t3k_mesh_graph.yaml",
                               "--planes",     "0,1",
                               "--send-type",  "fused-write-atomic-inc",
                               "--bytes",      "2048",
                               "--json",       "-q"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}
// ... 8 packets per flow, plane 1's link chip 6 eth 3 <-> chip 7 eth 5 down for good at 5,000.
std::vector<std::string> t3k_link_down(std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--packets", "8", "--fault", "link-down:6:3@5000"});
    return t3k_two_planes(std::move(extra));
}
const std::string kRerouted6to7 =
    "link chip 6 chan 3 <-> chip 7 chan 5 failed: rerouted over chip 6 chan 2 <-> chip 7 chan 4 "
    "(plane 0's routers)";

// `mesh run` with planes 0 and 1 on `cluster` / `graph` (under the descriptor directory), one
// fused write with an atomic increment per flow, `fault` injected, JSON out (`extra` adds more).
nlohmann::json two_planes_one_packet(const std::string& cluster, const std::string& graph,
                                     const std::string& fault,
                                     std::vector<std::string> extra = {}) {
    std::vector<std::string> a{"mesh",         "run",
                               "--cluster",    kSoc + "/" + cluster,
                               "--mesh-graph", kSoc + "/" + graph,
                               "--planes",     "0,1",
                               "--packets",    "1",
                               "--bytes",      "2048",
                               "--send-type",  "fused-write-atomic-inc",
                               "--fault",      fault,
                               "--json",       "-q"};
    a.insert(a.end(), extra.begin(), extra.end());
    const auto r = fabricctl(a);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}
// Every one of `sent` packets delivered exactly once.
void check_all_once(const nlohmann::json& account, uint64_t sent) {
    CHECK(account["sent"] == sent);
    CHECK(account["delivered"] == sent);
    CHECK(account["dropped"] == 0);
    CHECK(account["lost"] == 0);
    CHECK(account["duplicated"] == 0);
}
// Per sender channel, what the router on (chip, eth) completed (JSON "routers").
nlohmann::json completed_by(const nlohmann::json& run, int chip, int eth) {
    for (const auto& router : run["routers"])
        if (router["chip"] == chip && router["eth_channel"] == eth) return router["completed"];
    return nlohmann::json();
}

// One "fault: ..." line of stderr that applied a change: what it says before " (device cycle N)",
// and N.
struct FaultLine {
    std::string what;
    uint64_t device_cycle = 0;
};

std::vector<FaultLine> fault_lines(const std::string& err) {
    const std::string prefix = "fabricctl: fault: ";
    const std::string cycle = " (device cycle ";
    std::vector<FaultLine> out;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) {
        const size_t at = line.rfind(cycle);
        if (line.rfind(prefix, 0) != 0 || at == std::string::npos) continue;
        REQUIRE(line.back() == ')');
        const std::string digits =
            line.substr(at + cycle.size(), line.size() - 1 - at - cycle.size());
        out.push_back({line.substr(prefix.size(), at - prefix.size()), std::stoull(digits)});
    }
    return out;
}

}  // namespace

TEST_CASE("fabricctl --fault: a bad spec is refused with its message, exit 101", "[cli][faults]") {
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<Case> cases{
        {n300_run({"--fault", "link-cut:0:8@10"}),
         "fault 'link-cut:0:8@10': unknown fault kind 'link-cut' (link-down, link-flap, "
         "link-drop, link-delay, router-stall, noc-hold)"},
        {n300_run({"--fault", "link-delay:0:8@10"}),
         "fault 'link-delay:0:8@10': missing CYCLES (expected link-delay:CHIP:ETH@CYCLE/CYCLES)"},
        {n300_run({"--fault", "link-down:0:8@soon"}),
         "fault 'link-down:0:8@soon': CYCLE 'soon' is not a number"},
        {n300_run({"--fault", "link-flap:0:8@10/0"}),
         "fault 'link-flap:0:8@10/0': PERIOD must be at least 1"},
        {n300_run({"--fault", "link-delay:0:8@10/5", "--fault", "link-drop:0:8@10/2000000"}),
         "fault 'link-drop:0:8@10/2000000': PPM 2000000 is more than 1000000 (every frame)"},
        {{"mesh", "run", "--cluster", kT3k, "--fault", "link-down:0:8@99999999999999999999"},
         "fault 'link-down:0:8@99999999999999999999': CYCLE 99999999999999999999 is out of range "
         "(at most 281474976710656)"},
    };
    for (const Case& c : cases) {
        INFO(c.message);
        const auto r = fabricctl(c.args);
        expect_failure(r, 101);
        CHECK(r.err == "fabricctl: error: " + c.message + "\n");
    }
}

TEST_CASE("fabricctl --fault: a port the model does not have is refused, exit 101",
          "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    const auto nolink = fabricctl(n300_run({"--fault", "link-down:0:3@10"}));
    expect_failure(nolink, 101);
    CHECK(nolink.err == "fabricctl: error: fault 'link-down:0:3@10': chip 0 eth 3 has no link in " +
                            kN300 + "\n");
    const auto nochip = fabricctl(n300_run({"--fault", "router-stall:2:0@10/5"}));
    expect_failure(nochip, 101);
    CHECK(nochip.err ==
          "fabricctl: error: fault 'router-stall:2:0@10/5': chip 2 does not exist "
          "(chips 0..1 in " +
              kN300 + ")\n");
}

TEST_CASE("fabricctl mesh run --fault: refused on chips behind tt-kmd, exit 101", "[cli][faults]") {
    const auto r = fabricctl({"mesh", "run", "--cluster", kT3k, "--target", "pcie", "--dir",
                              kTmp + "/no_such_dev_dir", "--fault", "link-down:0:8@10"});
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: --fault link-down:0:8@10: faults are injected into the model only, "
          "not into chips behind tt-kmd: use --target sim\n");
}

TEST_CASE("fabricctl fabric run --fault: extra link delay and a short router stall, it passes",
          "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    const std::string events = kTmp + "/faults_events.jsonl";
    const auto r =
        fabricctl(n300_run({"--packets", "200", "--fault", "link-delay:0:8@2000/300", "--fault",
                            "router-stall:1:0@4000/3000", "--events", events}));
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const std::vector<FaultLine> lines = fault_lines(r.err);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].what == "link-delay chip 0 eth 8 +300 cycles at traffic cycle 2000");
    CHECK(lines[1].what == "router-stall chip 1 eth 0 frozen at traffic cycle 4000");
    CHECK(lines[2].what == "router-stall chip 1 eth 0 thawed at traffic cycle 7000");
    // One start of traffic for all of them: device cycle - traffic cycle is the same.
    CHECK(lines[1].device_cycle - lines[0].device_cycle == 2000);
    CHECK(lines[2].device_cycle - lines[1].device_cycle == 3000);
    CHECK_THAT(r.err, Contains("fabricctl: fabric run passed: line 0,1"));
    // The same changes are host records of the event log, beside the routers' own.
    std::ifstream in(events);
    std::vector<nlohmann::json> host;
    for (std::string line; std::getline(in, line);) {
        const auto j = nlohmann::json::parse(line);
        if (j["router"] == "host") host.push_back(j);
    }
    REQUIRE(host.size() == 3);
    CHECK(host[1]["kind"] == "fault");
    CHECK(host[1]["fault"] == "router-stall");
    CHECK(host[1]["change"] == "frozen");
    CHECK(host[1]["chip"] == 1);
    CHECK(host[1]["eth"] == 0);
    CHECK(host[1]["traffic_cycle"] == 4000);
    CHECK(host[1]["cycle"] == lines[1].device_cycle);
    CHECK(host[1]["text"] == "fault: " + lines[1].what + " (device cycle " +
                                 std::to_string(lines[1].device_cycle) + ")");
    // `mesh events` prints them like the routers' records.
    const auto printed = fabricctl({"mesh", "events", events});
    CHECK(printed.code == 0);
    CHECK_THAT(printed.out, Contains(" host: fault: router-stall chip 1 eth 0 thawed at traffic "
                                     "cycle 7000 (device cycle "));
}

TEST_CASE("fabricctl fabric run --fault: frames dropped at 1000 ppm are resent, it passes",
          "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    const auto run = [] {
        return fabricctl(n300_run({"--packets", "400", "--bytes", "4096", "--seed", "5", "--fault",
                                   "link-drop:0:8@0/1000"}));
    };
    const auto r = run();
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const std::vector<FaultLine> lines = fault_lines(r.err);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].what == "link-drop chip 0 eth 8 1000 ppm at traffic cycle 0");
    // What the drops did, from the link's statistics: some frames were lost and resent.
    const std::string effect = "fabricctl: fault: link-drop chip 0 eth 8: ";
    const size_t at = r.err.find(effect);
    REQUIRE(at != std::string::npos);
    const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
    const uint64_t dropped = std::stoull(line.substr(effect.size()));
    CHECK(dropped > 0);
    CHECK_THAT(line, Contains(" frames dropped, ") && Contains(" resent (seed 5)"));
    CHECK_THAT(r.err, Contains("fabricctl: fabric run passed: line 0,1"));
    // The same seed, the same drops, to the cycle.
    const auto again = run();
    CHECK(again.code == 0);
    CHECK(again.err == r.err);
}

TEST_CASE("fabricctl fabric run --fault: a flapping link, down and up every period, it passes",
          "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    const auto r = fabricctl(n300_run({"--packets", "100", "--fault", "link-flap:0:8@1000/2000"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const std::vector<FaultLine> lines = fault_lines(r.err);
    REQUIRE(lines.size() >= 4);
    for (size_t i = 0; i < lines.size(); ++i) {
        INFO("line " << i);
        CHECK(lines[i].what == "link-flap chip 0 eth 8 " + std::string(i % 2 == 0 ? "down" : "up") +
                                   " at traffic cycle " + std::to_string(1000 + 2000 * i));
        if (i > 0) CHECK(lines[i].device_cycle - lines[i - 1].device_cycle == 2000);
    }
    CHECK_THAT(r.err, Contains("fabricctl: fabric run passed: line 0,1"));
}

TEST_CASE(
    "fabricctl fabric run --fault: a link down for good is drained after its grace, every "
    "packet named",
    "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    // The default reaction (--on-link-down drain-after-grace): the link stays down 50 us, the host
    // drains both ends, what was on it is dropped and named; long before the workers' send
    // timeout (half the budget) would end the run.
    const auto r = fabricctl(n300_run({"--packets", "200", "--max-cycles", "2000000", "--fault",
                                       "link-down:0:8@1000", "--json"}));
    CHECK(r.code == 108);
    const std::vector<FaultLine> lines = fault_lines(r.err);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].what == "link-down chip 0 eth 8 at traffic cycle 1000");
    const auto j = nlohmann::json::parse(r.out);
    const auto& a = j["account"];
    CHECK(a["sent"] == 400);
    CHECK(a["delivered"].get<uint64_t>() + a["dropped"].get<uint64_t>() == 400);
    CHECK(a["dropped"].get<uint64_t>() > 0);
    CHECK(a["lost"] == 0);
    CHECK(a["duplicated"] == 0);
    CHECK(j["device_cycles"].get<uint64_t>() < 1'000'000);
    CHECK_THAT(j["verdict"].get<std::string>(),
               Contains("packets dropped by routers in 2 flows (all accounted for)"));
    // With --on-link-down none nothing reroutes yet: the workers' send timeout ends the run.
    const auto none = fabricctl(n300_run({"--packets", "200", "--max-cycles", "2000000", "--fault",
                                          "link-down:0:8@1000", "--on-link-down", "none"}));
    CHECK(none.code == 108);
    CHECK_THAT(none.err, Contains("fabricctl: fabric run failed: "));
}

TEST_CASE(
    "fabricctl fabric run --fault: a destination that stops accepting for 20 us holds its "
    "writes back, then every byte lands once, it passes",
    "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    // Chip 1's receiving core 3-1 takes nothing from traffic cycle 2,000 to 22,000: chip 0's
    // packets to it back up in chip 1's NoC and router, then all land, byte for byte.
    const auto r =
        fabricctl(n300_run({"--packets", "100", "--fault", "noc-hold:1:3-1@2000/20000", "--json"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const std::vector<FaultLine> lines = fault_lines(r.err);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].what == "noc-hold chip 1 core 3-1 at traffic cycle 2000");
    CHECK(lines[1].what == "noc-hold chip 1 core 3-1 released at traffic cycle 22000");
    CHECK(lines[1].device_cycle - lines[0].device_cycle == 20000);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["account"]["sent"] == 200);
    CHECK(j["account"]["delivered"] == 200);
    CHECK(j["account"]["dropped"] == 0);
    const auto& applied = j["faults"]["applied"];
    REQUIRE(applied.size() == 2);
    CHECK(applied[0]["fault"] == "noc-hold");
    CHECK(applied[0]["core"] == "3-1");
    CHECK(applied[0]["change"] == "");
    CHECK(applied[1]["change"] == "released");
    CHECK_FALSE(applied[0].contains("eth"));
}

// The kinds and packets of a run's `not_accepted` / `accepted` events, in order ("not_accepted 0").
std::vector<std::string> acceptance_events(const std::string& events) {
    std::vector<std::string> out;
    std::ifstream in(events);
    std::string line;
    while (std::getline(in, line)) {
        const auto e = nlohmann::json::parse(line);
        const std::string kind = e["kind"];
        if (kind == "not_accepted" || kind == "accepted")
            out.push_back(kind + " " + std::to_string(e["seq"].get<uint32_t>()));
    }
    return out;
}

const std::string kHeldCore = "chip 1 core 3-1 does not accept deliveries from chip 1 eth 0";

// `fabric run` on the n300 with chip 1's sink core held from traffic cycle 1,000 (`hold`: for
// good, or "/CYCLES"), 100 fused 1 KiB writes a direction, a 10 us packet timeout, the events to
// `events` (emptied first), JSON out.
t::Run held_sink(const std::string& hold, const std::string& events,
                 const std::vector<std::string>& extra = {}) {
    std::filesystem::remove(events);
    std::vector<std::string> args{"--packets",
                                  "100",
                                  "--fault",
                                  "noc-hold:1:3-1@1000" + hold,
                                  "--packet-timeout-us",
                                  "10",
                                  "--max-cycles",
                                  "3000000",
                                  "--json",
                                  "--events",
                                  events};
    args.insert(args.end(), extra.begin(), extra.end());
    return fabricctl(n300_run(args));
}

// Every packet of `account` delivered once or dropped with its identity.
void check_each_once(const nlohmann::json& account, uint64_t sent) {
    CHECK(account["sent"] == sent);
    CHECK(account["delivered"].get<uint64_t>() + account["dropped"].get<uint64_t>() == sent);
    CHECK(account["lost"] == 0);
    CHECK(account["duplicated"] == 0);
}

TEST_CASE(
    "fabricctl fabric run --fault: a destination that never accepts again: its deliveries are "
    "reported not accepted, their link drained, every packet delivered once or named dropped",
    "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    // Chip 1's sink core stops accepting before the first packet comes. The receiving router's
    // first deliveries are issued and never flush (not_accepted, 10 us on), the ones behind them
    // cannot be issued; the host drains the link (cut at chip 1: its slots are pinned; chip 0
    // finds its peer silent and cuts it too), which names what each end held.
    const std::string events = kTmp + "/not_accepted_events.jsonl";
    const auto r = held_sink("", events);
    INFO("stderr: " << r.err);
    CHECK(r.code == 108);
    const auto j = nlohmann::json::parse(r.out);
    check_each_once(j["account"], 200);
    CHECK(j["links"] == nlohmann::json::array({kHeldCore + ": its link drained"}));
    // Chip 0's flow to the held core: nothing delivered, its first packets named not accepted.
    const auto& to_chip1 = j["account"]["flows"][0];
    CHECK(to_chip1["delivered"] == 0);
    CHECK(to_chip1["dropped"] == 100);
    bool named = false;
    for (const auto& d : to_chip1["drops"]) {
        if (d["reason"] != "not_accepted") continue;
        named = true;
        CHECK(d["chip"] == 1);
        CHECK(d["eth"] == 0);
        CHECK(d["packets"] == nlohmann::json::array({0, 1}));
    }
    CHECK(named);
    CHECK(acceptance_events(events) ==
          std::vector<std::string>{"not_accepted 0", "not_accepted 1"});
    // Chip 0's side, a receiver that never returns its credits: its worker finished (every slot
    // freed by the cut), the packets it had sent and those it still held each named there.
    for (const auto& w : j["workers"]) {
        CHECK(w["outcome"] == "exited");
        CHECK(w["exit_status"] == 0);
        CHECK(w["packets_sent"] == 100);
    }
    size_t at_chip0 = 0;
    for (const auto& d : to_chip1["drops"]) {
        if (d["chip"] != 0) continue;
        CHECK(d["eth"] == 8);
        CHECK((d["reason"] == "unacked" || d["reason"] == "drained"));
        at_chip0 += d["packets"].size();
    }
    CHECK(at_chip0 == 98);
}

TEST_CASE(
    "fabricctl fabric run --fault: a destination that accepts again after its link was drained: "
    "the deliveries reported not accepted go after all and count as delivered, once",
    "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    // Held 60 us: long enough for both pinned deliveries to be reported and the link cut; once
    // released, the abandoned slots' writes (and the increment the second one still owed, issued
    // then) land, and each is reported accepted.
    const std::string events = kTmp + "/accepted_events.jsonl";
    const auto r = held_sink("/60000", events);
    INFO("stderr: " << r.err);
    CHECK(r.code == 108);
    const auto j = nlohmann::json::parse(r.out);
    check_each_once(j["account"], 200);
    CHECK(j["account"]["flows"][0]["delivered"] == 2);
    for (const auto& d : j["account"]["flows"][0]["drops"]) CHECK(d["reason"] != "not_accepted");
    CHECK(acceptance_events(events) ==
          std::vector<std::string>{"not_accepted 0", "not_accepted 1", "accepted 0", "accepted 1"});
}

TEST_CASE(
    "fabricctl fabric run --fault: a destination held shorter than the packet timeout costs "
    "nothing, held longer with --on-packet-timeout hold it is reported, then accepted",
    "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    const std::string events = kTmp + "/held_events.jsonl";
    struct Case {
        std::string hold;
        std::vector<std::string> extra;
        std::vector<std::string> reported;
    };
    for (const Case& c :
         {Case{"/20000", {}, {}},
          Case{"/60000", {"--on-packet-timeout", "hold"}, {"not_accepted 0", "accepted 0"}}}) {
        const auto r = held_sink(c.hold, events, c.extra);
        INFO(c.hold << " stderr: " << r.err);
        CHECK(r.code == 0);
        check_all_once(nlohmann::json::parse(r.out)["account"], 200);
        CHECK(nlohmann::json::parse(r.out)["links"].empty());
        CHECK(acceptance_events(events) == c.reported);
    }
}

TEST_CASE(
    "fabricctl fabric run --fault: a destination that never accepts, with no packet timeout: "
    "the router goes on, the run ends in bounded time naming what is missing",
    "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    // Nothing times the deliveries out, so nothing is dropped: the sender's worker ends on its own
    // send timeout and the packets it sent are lost, by count. The router is never stuck in a
    // NoC request (deliveries are on their own command buffer and VC, never waited on).
    const auto r = fabricctl(n300_run(
        {"--packets", "100", "--fault", "noc-hold:1:3-1@1000", "--max-cycles", "3000000"}));
    CHECK(r.code == 108);
    CHECK_THAT(r.err, Contains("worker chip 0 core 1-1 (east) failed"));
    CHECK_THAT(r.err, Contains("flow worker chip 0 core 1-1 (east) -> chip 1: 12 of 12 packets "
                               "lost (delivered 0, dropped 0)"));
    CHECK_THAT(r.err, !Contains("components stuck"));
}

TEST_CASE(
    "fabricctl fabric run --fault: a router core held just after a forward into it: the forward's "
    "Pushed +1 is waited for, not lost at termination",
    "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    // Campaign seed 23 iteration 399 (--faults ...,noc-hold): chip 1's east router is held 28
    // cycles after chip 1's west router forwarded chip 6's second packet into it. The data landed
    // (the slot completed), its +1 on the Pushed stream did not: neither router counted the
    // packet, the fabric looked quiet and was ended, and 3 deliveries were lost. A router now
    // counts its forwards' +1s not yet landed as undrained.
    const auto r = fabricctl({"fabric",         "run",
                              "--cluster",      kT3k,
                              "--topology",     "line",
                              "--chips",        "6,5,4,0,1,2,3,7",
                              "--pattern",      "all-to-all",
                              "--send-type",    "atomic-inc",
                              "--packets",      "2",
                              "--bytes",        "2048",
                              "--fault",        "noc-hold:1:8-0@12334/81770",
                              "--on-link-down", "none",
                              "--seed",         "459272",
                              "--max-cycles",   "4000000",
                              "--json"});
    INFO("stderr: " << r.err);
    CHECK(r.code == 0);
    check_all_once(nlohmann::json::parse(r.out)["account"], 112);
}

TEST_CASE(
    "fabricctl fabric run --fault: a flapping link then down for good (campaign seed 5 iteration "
    "74,001): every packet delivered once or named dropped",
    "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    // Campaign seed 5 iteration 74,001: the flap brought the link up again and again, so chip 0
    // reached Drain on a live link, moved packets, and cut it only later. Until its packets are
    // settled after the cut its report says so (not Drain), so the host does not decide from the
    // counts it published before the cut: chip 1's packet 4 to chip 0 was once reported unacked
    // and delivered too. The routers' timing has moved since (at 72f076d these faults 59 cycles
    // later met the same moment; after the next change no nearby flap did: the flap's windows
    // now let every packet through or the drain cuts early); what must hold whatever the timing:
    const auto r = fabricctl(n300_run({"--topology",     "line",
                                       "--chips",        "0,1",
                                       "--pattern",      "neighbour",
                                       "--send-type",    "fused-write-atomic-inc",
                                       "--packets",      "5",
                                       "--bytes",        "256",
                                       "--fault",        "link-flap:1:0@4941/3508",
                                       "--fault",        "link-down:1:0@5106",
                                       "--on-link-down", "drain",
                                       "--seed",         "872162",
                                       "--max-cycles",   "3000000",
                                       "--json"}));
    INFO("stderr: " << r.err);
    CHECK((r.code == 0 || r.code == 108));
    const auto j = nlohmann::json::parse(r.out);
    const auto& a = j["account"];
    CHECK(a["sent"] == 10);
    CHECK(a["delivered"].get<uint64_t>() + a["dropped"].get<uint64_t>() == 10);
    CHECK(a["lost"] == 0);
    CHECK(a["duplicated"] == 0);
}

TEST_CASE(
    "fabricctl mesh run --fault: a link down for good on a t3k mesh with two planes is rerouted "
    "over the other plane's link, every atomic applied once",
    "[cli][faults][reroute][sim]") {
    if (!have_fabric_firmware()) return;
    // Plane 1's link between chips 6 and 7 dies under all-to-all traffic of fused writes with
    // atomic increments (counted at each sink: a packet applied twice would count twice). After
    // the default grace both ends hold what they sent on it, get the other's counts, send the
    // rest again over plane 0's routers between the same chips, and traffic goes on.
    const std::string events = kTmp + "/reroute_events.jsonl";
    std::filesystem::remove(events);
    const auto r = fabricctl(t3k_link_down({"--events", events}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    check_all_once(j["account"], 896);
    CHECK(j["links"] == nlohmann::json::array({kRerouted6to7}));
    CHECK_THAT(j["verdict"].get<std::string>(), Contains(kRerouted6to7));
    // Both ends held, then rerouted; nothing dropped, no other link touched.
    std::ifstream in(events);
    std::vector<std::string> states;
    std::string line;
    while (std::getline(in, line)) {
        const auto e = nlohmann::json::parse(line);
        if (e["kind"] == "bad_packet" || e["kind"] == "unacked" || e["kind"] == "unsent")
            FAIL("a packet was dropped: " << line);
        if (e["kind"] != "state") continue;
        const std::string st = e["status"];
        if (st == "reroute_held" || st == "rerouted" || st == "drained") {
            states.push_back(st + " " + std::to_string(e["chip"].get<int>()) + ":" +
                             std::to_string(e["eth"].get<int>()));
        }
    }
    std::sort(states.begin(), states.end());
    CHECK(states == std::vector<std::string>{"reroute_held 6:3", "reroute_held 7:5", "rerouted 6:3",
                                             "rerouted 7:5"});
}

TEST_CASE(
    "fabricctl mesh run --fault: a rerouted link that comes back gets its traffic back, twice, "
    "every atomic applied once",
    "[cli][faults][reroute][sim]") {
    if (!have_fabric_firmware()) return;
    const std::string back =
        "link chip 6 chan 3 <-> chip 7 chan 5 up again: its traffic returned to it";
    // Plane 1's link between chips 6 and 7 is down from traffic cycle 5,000 to 100,000: rerouted
    // over plane 0's after the grace, then, 20 us after both ends saw it up, rejoined: both ends
    // exchange markers over it, start its state again and take their traffic back.
    const std::string events = kTmp + "/rejoin_events.jsonl";
    std::filesystem::remove(events);
    const std::vector<std::string> back_at_100k{"--fault", "link-down:6:3@5000/95000"};
    const auto with = [&](std::vector<std::string> extra) {
        extra.insert(extra.begin(), back_at_100k.begin(), back_at_100k.end());
        return t3k_two_planes(std::move(extra));
    };
    const auto r = fabricctl(with({"--packets", "8", "--events", events}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["account"]["delivered"] == 896);
    CHECK(j["account"]["lost"] == 0);
    CHECK(j["account"]["duplicated"] == 0);
    CHECK(j["links"] == nlohmann::json::array({kRerouted6to7, back}));
    // Nothing left cut: the fabric ends with a graceful termination (sent and received balance).
    CHECK_THAT(j["verdict"].get<std::string>(), Contains("terminated gracefully"));
    std::ifstream in(events);
    std::vector<std::string> states;
    for (std::string line; std::getline(in, line);) {
        const auto e = nlohmann::json::parse(line);
        if (e["kind"] == "bad_packet" || e["kind"] == "unacked" || e["kind"] == "unsent")
            FAIL("a packet was dropped: " << line);
        if (e["kind"] != "state" || e["chip"] != 6 || e["eth"] != 3) continue;
        const std::string st = e["status"];
        if (states.empty() && st != "reroute_held") continue;  // (its start-up)
        states.push_back(st);
    }
    CHECK(states == std::vector<std::string>{"reroute_held", "rerouted", "rejoined",
                                             "ready_for_traffic", "draining", "terminated"});
    // Down again once back, and back again (drained at the first report: no grace), with longer
    // traffic: the second RerouteOrder counts what the fallback carried the first time.
    const auto r2 = fabricctl(with(
        {"--packets", "16", "--fault", "link-down:6:3@140000/60000", "--on-link-down", "drain"}));
    INFO("stderr: " << r2.err);
    REQUIRE(r2.code == 0);
    const auto j2 = nlohmann::json::parse(r2.out);
    CHECK(j2["account"]["delivered"] == 1792);
    CHECK(j2["account"]["lost"] == 0);
    CHECK(j2["account"]["duplicated"] == 0);
    CHECK(j2["links"] == nlohmann::json::array({kRerouted6to7, back, kRerouted6to7, back}));
    // --rejoin-after-us 0: it stays on its fallback (the fabric ends with the link cut).
    const auto r3 = fabricctl(with({"--packets", "8", "--rejoin-after-us", "0"}));
    INFO("stderr: " << r3.err);
    REQUIRE(r3.code == 0);
    const auto j3 = nlohmann::json::parse(r3.out);
    CHECK(j3["account"]["delivered"] == 896);
    CHECK(j3["links"] == nlohmann::json::array({kRerouted6to7}));
    CHECK_THAT(j3["verdict"].get<std::string>(), Contains("a link was cut"));
    // --no-reroute: drained instead, each packet that needed it dropped and named.
    const auto r4 = fabricctl(with({"--packets", "8", "--no-reroute"}));
    INFO("stderr: " << r4.err);
    CHECK(r4.code == 108);
    const auto j4 = nlohmann::json::parse(r4.out);
    CHECK(j4["account"]["lost"] == 0);
    CHECK(j4["account"]["dropped"].get<uint64_t>() > 0);
    CHECK(j4["links"] ==
          nlohmann::json::array({kRerouted6to7 + ": rerouting is off: drained instead"}));
}

TEST_CASE(
    "fabricctl mesh run --fault: a link down for good on the 6U Galaxy cabled as a torus is "
    "rerouted over the other plane's, its VC1 packets on the fallback's VC1, every atomic once",
    "[cli][faults][reroute][sim]") {
    if (!have_fabric_firmware()) return;
    // Our 6U torus fixture (four links per neighbour pair, chip ids in PCI bus order), planes 0
    // and 1: plane 1's link chip 0 chan 13 <-> chip 4 chan 1 (row 7, columns 0 and 1, right
    // after the row's wrap) dies at traffic cycle 5,000, one fused write with an atomic
    // increment per flow. Packets that crossed the wrap (the dateline) go on VC1: those go into
    // the fallback's VC1 channel, the others into its VC0 channel.
    const auto j = two_planes_one_packet("clusters/galaxy_6u_torus_cluster.yaml",
                                         "galaxy_8x4_torus_xy_mesh_graph.yaml",
                                         "link-down:0:13@5000", {"--topology", "torus"});
    check_all_once(j["account"], 1984);
    CHECK(j["links"] ==
          nlohmann::json::array({"link chip 0 chan 13 <-> chip 4 chan 1 failed: rerouted over chip "
                                 "0 chan 12 <-> chip 4 chan 0 (plane 0's routers)"}));
    // The fallback, plane 0's E router of chip 0: besides its own ch0 and ch8, 16 packets on ch2
    // (VC0 from its own side: the failed router's) and 8 on ch6 (VC1 from its own side). The
    // failed router's ch0 and ch8 completed all theirs, before the cut or through the fallback;
    // its ch2 and ch6 took nothing (its twin never fell back on it).
    CHECK(completed_by(j, 0, 12) == nlohmann::json::array({16, 0, 16, 0, 0, 0, 8, 0, 8}));
    CHECK(completed_by(j, 0, 13) == nlohmann::json::array({16, 0, 0, 0, 0, 0, 0, 0, 8}));
}

TEST_CASE(
    "fabricctl mesh run --fault: a link down for good inside one of the spec's 4 meshes is "
    "rerouted over the other plane's, every atomic once",
    "[cli][faults][reroute][sim]") {
    if (!have_fabric_firmware()) return;
    // The spec's four 3 x 3 meshes, planes 0 and 1: plane 1's link M0D4 E (chip 4 chan 9 <->
    // chip 5 chan 13) dies. Its routers carry VC1 (traffic from other meshes), so the fallback
    // has a VC1 channel for it as well as a VC0 one: the order is taken, nothing is dropped.
    const auto j = two_planes_one_packet("spec_4mesh_3x3_cluster.yaml",
                                         "spec_4mesh_3x3_mesh_graph.yaml", "link-down:4:9@5000");
    check_all_once(j["account"], 2520);
    CHECK(j["links"] ==
          nlohmann::json::array({"link chip 4 chan 9 <-> chip 5 chan 13 failed: rerouted over chip "
                                 "4 chan 8 <-> chip 5 chan 12 (plane 0's routers)"}));
    CHECK(completed_by(j, 4, 8) == nlohmann::json::array({21, 0, 42, 0, 21, 0, 0, 0, 0}));
}

TEST_CASE(
    "fabricctl mesh run --reliability: the fallback link dies too, relaxed drains its ends, strict "
    "stops the fabric, every packet accounted for",
    "[cli][faults][reroute][sim]") {
    if (!have_fabric_firmware()) return;
    // Chip 6's E link on plane 1 dies and is rerouted over plane 0's; then plane 0's dies too: no
    // link between chips 6 and 7 is left.
    const std::string none =
        "link chip 7 chan 4 <-> chip 6 chan 2 failed and no other link "
        "between chip 7 and chip 6 works: ";
    for (const std::string mode : {"relaxed", "strict"}) {
        INFO(mode);
        const auto r =
            fabricctl(t3k_link_down({"--fault", "link-down:6:2@40000", "--reliability", mode}));
        INFO("stderr: " << r.err);
        CHECK(r.code == 108);  // packets that needed the link are dropped, each named
        const auto j = nlohmann::json::parse(r.out);
        const auto& a = j["account"];
        CHECK(a["sent"] == 896);
        CHECK(a["delivered"].get<uint64_t>() + a["dropped"].get<uint64_t>() == 896);
        CHECK(a["dropped"].get<uint64_t>() > 0);
        CHECK(a["lost"] == 0);
        CHECK(a["duplicated"] == 0);
        const std::string second =
            none + (mode == "relaxed" ? "relaxed: removed from the routing tables; packets that "
                                        "need it are dropped and reported"
                                      : "strict: the fabric stops");
        CHECK(j["links"] == nlohmann::json::array({kRerouted6to7, second}));
    }
    const auto bad = fabricctl({"mesh", "run", "--cluster", kT3k, "--reliability", "lax"});
    expect_failure(bad, 100);
    CHECK_THAT(bad.err, Contains("--reliability: lax not in {relaxed,strict}"));
}

TEST_CASE("fabricctl mesh run --fault: extra delay and a router stall on an n300 mesh, it passes",
          "[cli][faults][sim]") {
    if (!have_fabric_firmware()) return;
    const auto r = fabricctl({"mesh", "run", "--cluster", kN300, "--mesh-graph",
                              kSoc + "/n300_mesh_graph.yaml", "--packets", "50", "--fault",
                              "link-delay:1:0@500/200", "--fault", "router-stall:0:8@800/1500",
                              "--json", "-q"});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["ok"] == true);
    const std::vector<FaultLine> lines = fault_lines(r.err);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].what == "link-delay chip 1 eth 0 +200 cycles at traffic cycle 500");
    CHECK(lines[1].what == "router-stall chip 0 eth 8 frozen at traffic cycle 800");
    CHECK(lines[2].what == "router-stall chip 0 eth 8 thawed at traffic cycle 2300");
    CHECK(lines[2].device_cycle - lines[0].device_cycle == 1800);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 3);  // -q: the faults only
}

TEST_CASE(
    "fabricctl fabric run --packet-timeout-us: a router stalled past the timeout, its "
    "packets dropped and named (drop) or delivered late (hold)",
    "[cli][faults][timeout][sim]") {
    if (!have_fabric_firmware()) return;
    // Chip 1's east router (eth 2) stops for 300,000 cycles: chip 1's west router, forwarding
    // chip 0's multicast on to chip 2, finds it full for longer than 20 us.
    const std::vector<std::string> args{"fabric",
                                        "run",
                                        "--cluster",
                                        kT3k,
                                        "--chips",
                                        "0,1,2",
                                        "--pattern",
                                        "all-to-all",
                                        "--packets",
                                        "40",
                                        "--bytes",
                                        "256",
                                        "--fault",
                                        "router-stall:1:2@2000/300000",
                                        "--packet-timeout-us",
                                        "20"};
    const auto dropped = fabricctl(args);
    INFO("stdout: " << dropped.out);
    INFO("stderr: " << dropped.err);
    CHECK(dropped.code == 108);  // dropped packets fail the run, every one accounted for
    CHECK_THAT(dropped.out,
               Contains("worker chip 0 core 1-1 (east) -> chip 2       40         8      32      "
                        "0          0  timeout at chip 1 eth 4: 32 packets") &&
                   Contains("account: 6 flows, 240 sent, 176 delivered, 64 dropped, 0 lost"));
    CHECK_THAT(dropped.err,
               Contains("64 packets dropped by routers in 2 flows (all accounted for)"));

    std::vector<std::string> hold = args;
    const std::string events = kTmp + "/packet_timeout_hold.jsonl";
    hold.insert(hold.end(), {"--on-packet-timeout", "hold", "--events", events});
    const auto held = fabricctl(hold);
    INFO("stdout: " << held.out);
    INFO("stderr: " << held.err);
    CHECK(held.code == 0);
    CHECK_THAT(held.out, Contains("account: 6 flows, 240 sent, 240 delivered, 0 dropped, 0 lost"));
    const auto printed = fabricctl({"mesh", "events", events});
    CHECK_THAT(printed.out, Contains("router west chip 1 eth 4: stalled: the packet at the head of "
                                     "rx0 waits for port 1 (seq "));
    // The stopped router's peer names it, though it stopped 2000 cycles into the traffic, before
    // its first keep-alive of the main loop (the handshake and the ready wait's keep-alives count).
    CHECK_THAT(printed.out,
               Contains("router west chip 2 eth 4: peer_silent: peer chip 1 eth 2 not heard for "));
    CHECK_THAT(
        printed.out,
        Contains("router west chip 2 eth 4: peer_heard: peer chip 1 eth 2 heard again after "));
}
