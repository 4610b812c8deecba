// Fault campaigns (fabric/fault_campaign.h): draws fixed by the seed and index, faults only on
// the routers an iteration's fabric has, the command line an iteration runs as, and the verdict
// on hand-made run reports for every promise a run can break.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "fabric/error.h"
#include "fabric/fault_campaign.h"

using fabric::CampaignOptions;
using fabric::CampaignTopology;
using fabric::ChildRun;
using fabric::FaultKind;
using fabric::Iteration;
using nlohmann::json;

namespace {

CampaignOptions options(uint64_t seed = 1) {
    CampaignOptions o;
    o.seed = seed;
    o.descriptor_dir = FABRIC_SOC_DESCRIPTOR_DIR;
    return o;
}

const fabric::CampaignPorts& all_ports() {
    static const fabric::CampaignPorts ports = fabric::campaign_ports(options());
    return ports;
}

// A flow of a run report's account.
json flow(const std::string& name, uint64_t sent, uint64_t delivered, uint64_t dropped,
          uint64_t lost = 0, uint64_t duplicated = 0) {
    return {{"flow", name},
            {"id", 0},
            {"sent", sent},
            {"delivered", delivered},
            {"dropped", dropped},
            {"lost", lost},
            {"duplicated", duplicated},
            {"drops", json::array()}};
}

// A run report with `flows`, as fabric run / mesh run --json gives it (the members the verdict
// reads).
json report(const std::vector<json>& flows, std::vector<std::string> problems = {},
            uint64_t mismatch_words = 0) {
    uint64_t sent = 0, delivered = 0, dropped = 0;
    for (const json& f : flows) {
        sent += f["sent"].get<uint64_t>();
        delivered += f["delivered"].get<uint64_t>();
        dropped += f["dropped"].get<uint64_t>();
    }
    return {{"verdict", "fabric run failed"},
            {"problems", problems},
            {"data_mismatch_words", mismatch_words},
            {"account",
             {{"sent", sent},
              {"delivered", delivered},
              {"dropped", dropped},
              {"unrecorded_events", 0},
              {"stray_drops", json::array()},
              {"flows", flows}}}};
}

ChildRun exited(int code) {
    ChildRun r;
    r.exit_code = code;
    return r;
}

}  // namespace

TEST_CASE("fault campaign: names of the topologies", "[fault_campaign]") {
    for (const char* name : {"n300-line", "t3k-line", "t3k-ring", "t3k-mesh", "spec-4mesh"}) {
        const auto t = fabric::parse_campaign_topology(name);
        REQUIRE(t.has_value());
        CHECK(fabric::campaign_topology_name(*t) == name);
    }
    CHECK_FALSE(fabric::parse_campaign_topology("t3k").has_value());
}

TEST_CASE("fault campaign: an iteration is fixed by the seed and its index", "[fault_campaign]") {
    const CampaignOptions o = options(7);
    for (uint64_t i = 0; i < 50; ++i) {
        const Iteration a = fabric::draw_iteration(o, all_ports(), i);
        const Iteration b = fabric::draw_iteration(o, all_ports(), i);
        CHECK(a.args("d") == b.args("d"));
        CHECK(a.seed == b.seed);
    }
    // Another seed, another campaign.
    size_t same = 0;
    for (uint64_t i = 0; i < 50; ++i) {
        same += fabric::draw_iteration(o, all_ports(), i).args("d") ==
                fabric::draw_iteration(options(8), all_ports(), i).args("d");
    }
    CHECK(same < 5);
}

TEST_CASE("fault campaign: faults hit only routers between the iteration's chips",
          "[fault_campaign]") {
    const CampaignOptions o = options(3);
    std::set<CampaignTopology> seen;
    std::set<FaultKind> kinds;
    for (uint64_t i = 0; i < 400; ++i) {
        const Iteration it = fabric::draw_iteration(o, all_ports(), i);
        seen.insert(it.topology);
        const auto& ports = all_ports().at(it.topology);
        const auto on_chips = [&](fabric::ChipId c) {
            return it.chips.empty() ||
                   std::find(it.chips.begin(), it.chips.end(), c) != it.chips.end();
        };
        REQUIRE(!it.faults.empty());
        REQUIRE(it.faults.size() <= 3);
        for (const fabric::FaultSpec& f : it.faults) {
            kinds.insert(f.kind);
            const auto port = std::find_if(ports.begin(), ports.end(), [&](const auto& p) {
                return p.chip == f.chip && p.eth == f.eth;
            });
            INFO(it.describe());
            REQUIRE(port != ports.end());
            CHECK(on_chips(port->chip));
            CHECK(on_chips(port->peer));
            CHECK(f.at < fabric::campaign_topology_info(it.topology).traffic_window);
        }
        // A flapping link carries frames: its added delay is at most half the flap's period.
        for (const fabric::FaultSpec& flap : it.faults) {
            if (flap.kind != FaultKind::LinkFlap) continue;
            for (const fabric::FaultSpec& delay : it.faults) {
                const bool same = std::any_of(ports.begin(), ports.end(), [&](const auto& p) {
                    return (p.chip == flap.chip && p.eth == flap.eth) &&
                           ((p.chip == delay.chip && p.eth == delay.eth) ||
                            (p.peer == delay.chip && p.peer_eth == delay.eth));
                });
                if (delay.kind == FaultKind::LinkDelay && same)
                    CHECK(delay.amount <= flap.amount / 2);
            }
        }
        CHECK(it.packets >= 1);
        CHECK(it.packets <= fabric::campaign_topology_info(it.topology).max_packets);
    }
    CHECK(seen.size() == fabric::kCampaignTopologies);
    CHECK(kinds == std::set<FaultKind>{FaultKind::LinkFlap, FaultKind::LinkDrop,
                                       FaultKind::LinkDelay, FaultKind::RouterStall,
                                       FaultKind::LinkDown});
}

TEST_CASE("fault campaign: the options narrow the draw", "[fault_campaign]") {
    CampaignOptions o = options(5);
    o.topologies = {CampaignTopology::T3kLine};
    o.kinds = {FaultKind::LinkDown};
    for (uint64_t i = 0; i < 40; ++i) {
        const Iteration it = fabric::draw_iteration(o, all_ports(), i);
        CHECK(it.topology == CampaignTopology::T3kLine);
        CHECK(it.chips.size() >= 3);
        for (const auto& f : it.faults) CHECK(f.kind == FaultKind::LinkDown);
    }
}

TEST_CASE("fault campaign: the command line of an iteration", "[fault_campaign]") {
    Iteration it;
    it.topology = CampaignTopology::T3kRing;
    it.chips = {0, 1, 2, 3, 7, 6, 5, 4};
    it.pattern = "all-to-all";
    it.send_type = "atomic-inc";
    it.packets = 3;
    it.bytes = 512;
    it.faults = {fabric::parse_fault("router-stall:1:0@1200/30000")};
    it.packet_timeout_us = 12;
    it.on_packet_timeout = "drop";
    it.run_seed = 99;
    it.max_cycles = 5'000'000;
    CHECK(it.args("/d") == std::vector<std::string>{"fabric",
                                                    "run",
                                                    "--cluster",
                                                    "/d/t3k_cluster.yaml",
                                                    "--topology",
                                                    "ring",
                                                    "--chips",
                                                    "0,1,2,3,7,6,5,4",
                                                    "--pattern",
                                                    "all-to-all",
                                                    "--send-type",
                                                    "atomic-inc",
                                                    "--packets",
                                                    "3",
                                                    "--bytes",
                                                    "512",
                                                    "--fault",
                                                    "router-stall:1:0@1200/30000",
                                                    "--on-link-down",
                                                    "none",
                                                    "--packet-timeout-us",
                                                    "12",
                                                    "--on-packet-timeout",
                                                    "drop",
                                                    "--seed",
                                                    "99",
                                                    "--max-cycles",
                                                    "5000000"});
    CHECK(it.replay("/my dir") ==
          "fabricctl fabric run --cluster '/my dir/t3k_cluster.yaml' --topology ring --chips "
          "0,1,2,3,7,6,5,4 --pattern all-to-all --send-type atomic-inc --packets 3 --bytes 512 "
          "--fault router-stall:1:0@1200/30000 --on-link-down none --packet-timeout-us 12 "
          "--on-packet-timeout drop "
          "--seed 99 --max-cycles 5000000");
    CHECK(it.describe() ==
          "t3k-ring all-to-all atomic-inc 3 x 512 B; router-stall:1:0@1200/30000; packet timeout "
          "12 us (drop) (seed 99)");
}

TEST_CASE("fault campaign: a run that kept the promise passes", "[fault_campaign]") {
    const json all = report({flow("a", 4, 4, 0), flow("b", 4, 4, 0)});
    const auto v = fabric::judge_iteration(exited(0), &all);
    CHECK(v.passed());
    CHECK(v.figures.sent == 8);
    CHECK(v.figures.delivered == 8);
    // Drops named and accounted for, data missing where they were dropped: exit 108, kept.
    const json drops = report(
        {flow("a", 4, 1, 3), flow("b", 4, 4, 0)},
        {"3 packets dropped by routers in 1 flow (all accounted for)",
         "data from 1-1 on chip 1 (core 1-3 at 0x20000): 768 words differ, first at +0 (packets "
         "1, 2, 3 not there intact)"},
        768);
    CHECK(fabric::judge_iteration(exited(108), &drops).passed());
    // The routers' counters of such a run: its rejections, and deliveries short by the drops.
    json counters = drops;
    counters["problems"].push_back("chip 0 eth 8 rejected 3 packets");
    counters["problems"].push_back("routers delivered 5 packets, expected 8");
    CHECK(fabric::judge_iteration(exited(108), &counters).passed());
    counters["problems"].push_back("routers delivered 4 packets, expected 8");
    CHECK(fabric::judge_iteration(exited(108), &counters).failures ==
          std::vector<std::string>{"routers delivered 4 packets, expected 8"});
}

TEST_CASE("fault campaign: every broken promise is named", "[fault_campaign]") {
    SECTION("a lost packet") {
        const json r = report({flow("0:1 -> 0:2 plane 0", 4, 3, 0, 1)},
                              {"flow 0:1 -> 0:2 plane 0: 1 of 4 packets lost (delivered 3, "
                               "dropped 0)"});
        CHECK(fabric::judge_iteration(exited(108), &r).failures ==
              std::vector<std::string>{
                  "flow 0:1 -> 0:2 plane 0: sent 4, delivered 3, dropped 0 (lost 1, duplicated 0)",
                  "flow 0:1 -> 0:2 plane 0: 1 of 4 packets lost (delivered 3, dropped 0)"});
    }
    SECTION("a duplicate, even one the report itself missed") {
        const json r = report({flow("f", 4, 5, 0)});
        CHECK(fabric::judge_iteration(exited(0), &r).failures ==
              std::vector<std::string>{"flow f: sent 4, delivered 5, dropped 0 (lost 0, "
                                       "duplicated 0)"});
    }
    SECTION("routers that rejected packets nobody reported") {
        const json r = report({flow("f", 4, 4, 0)}, {"chip 0 eth 8 rejected 1 packets",
                                                     "routers delivered 4 packets, expected 4"});
        CHECK(fabric::judge_iteration(exited(108), &r).failures ==
              std::vector<std::string>{"chip 0 eth 8 rejected 1 packets",
                                       "routers delivered 4 packets, expected 4"});
    }
    SECTION("data that differs with nothing dropped") {
        const json r = report({flow("f", 4, 4, 0)}, {}, 12);
        CHECK(fabric::judge_iteration(exited(0), &r).failures ==
              std::vector<std::string>{"12 words differ with nothing dropped"});
    }
    SECTION("event records the routers could not write, and drops of no flow") {
        json r = report({flow("f", 4, 4, 0)});
        r["account"]["unrecorded_events"] = 2;
        r["account"]["stray_drops"] = json::array({json::object()});
        CHECK(fabric::judge_iteration(exited(0), &r).failures ==
              std::vector<std::string>{"2 event records not written: drops may be missing",
                                       "1 dropped packets name no flow"});
    }
    SECTION("the budget exhausted: no bounded end") {
        json r = report({flow("f", 4, 4, 0)});
        r["verdict"] = "fabric run failed: budget";
        CHECK(fabric::judge_iteration(exited(105), &r).failures ==
              std::vector<std::string>{"cycle budget exhausted (the run did not end in bounded "
                                       "time): fabric run failed: budget"});
    }
    SECTION("a kernel's problem") {
        const json r = report({flow("f", 4, 4, 0)}, {"worker chip 0 core 1-1 (east): trapped"});
        CHECK(fabric::judge_iteration(exited(104), &r).failures ==
              std::vector<std::string>{"exit 104: fabric run failed",
                                       "worker chip 0 core 1-1 (east): trapped"});
    }
    SECTION("killed on the wall clock, or no report at all") {
        ChildRun hung = exited(137);
        hung.timed_out = true;
        hung.wall_seconds = 300;
        CHECK(fabric::judge_iteration(hung, nullptr).failures ==
              std::vector<std::string>{"hang: killed after 300.0 s of wall time"});
        ChildRun silent = exited(101);
        silent.err = "fabricctl: something\nfabricctl: bad input\n";
        CHECK(fabric::judge_iteration(silent, nullptr).failures ==
              std::vector<std::string>{"exit 101 without an account: fabricctl: bad input"});
    }
}

TEST_CASE("fault campaign: the summary", "[fault_campaign]") {
    fabric::CampaignSummary s;
    Iteration a;
    a.topology = CampaignTopology::N300Line;
    a.faults = {fabric::parse_fault("link-flap:0:8@10/300"),
                fabric::parse_fault("link-flap:1:0@20/300")};
    Iteration b;
    b.topology = CampaignTopology::T3kMesh;
    b.faults = {fabric::parse_fault("link-delay:0:8@10/300")};
    fabric::IterationVerdict ok;
    ok.figures = {10, 8, 2};
    fabric::IterationVerdict bad;
    bad.failures = {"x"};
    bad.figures = {4, 3, 0};
    s.add(a, ok, 0.5);
    s.add(b, bad, 1.5);
    s.wall_seconds = 1.0;
    CHECK(s.lines() ==
          std::vector<std::string>{
              "campaign: 2 iterations, 1 failed, 2.0 s of runs in 1.0 s (2.00 iterations/s); "
              "packets sent 14, delivered 11, dropped 2",
              "  topology n300-line        1 iterations, 0 failed",
              "  topology t3k-mesh         1 iterations, 1 failed",
              "  fault    link-delay       1 iterations, 1 failed",
              "  fault    link-flap        1 iterations, 0 failed"});
    CHECK(s.json()["by_fault"]["link-flap"]["iterations"] == 1);
}
