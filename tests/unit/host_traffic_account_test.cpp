// Per-flow accounting of traffic (fabric/traffic_account.h) on hand-made tallies and drops: sent,
// delivered, dropped by whom, lost and duplicated, exactly; the problem lines and the JSON. The
// same account over real routers is in tests/sim_cluster/mesh_sim_test.cpp ("account").
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "descriptors.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/traffic_account.h"
#include "protocol/test_kernels.h"

namespace pf = protocol::fabric;
using fabric::DropLog;
using fabric::FlowTally;
using fabric::PacketDrop;
using protocol::traffic_seq;

namespace {

constexpr uint32_t reason(pf::BadPacket b) {
    return static_cast<uint32_t>(b);
}

PacketDrop drop(fabric::ChipId chip, uint32_t eth, pf::BadPacket why, uint32_t flow,
                uint32_t index) {
    return {chip, eth, reason(why), 0, traffic_seq(flow, index), std::nullopt};
}

}  // namespace

TEST_CASE("traffic seq: flow in the high bits, packet index in the low bits", "[account]") {
    CHECK(traffic_seq(3, 5) == 0x00030005u);
    CHECK(protocol::traffic_seq_flow(0xFFFF0001u) == 0xFFFFu);
    CHECK(protocol::traffic_seq_index(0xFFFF0001u) == 1u);
    CHECK(protocol::kTrafficSeqMaxFlows == 65536u);
    CHECK(protocol::kTrafficSeqMaxPackets == 65536u);
}

TEST_CASE("traffic account: every packet delivered", "[account]") {
    const std::vector<FlowTally> flows{{"0:0 -> 0:1 plane 0", 0, 16, 16, {}},
                                       {"0:1 -> 0:0 plane 0", 1, 16, 16, {}}};
    const auto a = fabric::account_traffic(flows, DropLog{});
    CHECK(a.all_delivered());
    CHECK(a.accounted());
    CHECK(a.flows_not_delivered() == 0);
    CHECK(a.sent == 32);
    CHECK(a.delivered == 32);
    std::vector<std::string> problems;
    fabric::account_problems(a, problems);
    CHECK(problems.empty());
    CHECK(fabric::account_totals(a) ==
          "account: 2 flows, 32 sent, 32 delivered, 0 dropped, 0 lost");
    CHECK(fabric::account_table(a) ==
          std::vector<std::string>{"account: 2 flows, 32 sent, 32 delivered, 0 dropped, 0 lost"});
}

TEST_CASE("traffic account: drops named by flow, reason and router, the rest lost", "[account]") {
    const std::vector<FlowTally> flows{{"A", 0, 8, 8, {}},   // all delivered
                                       {"B", 1, 8, 5, {}},   // 3 dropped: accounted
                                       {"C", 2, 8, 4, {}}};  // 1 dropped, 3 lost
    DropLog log;
    log.drops = {drop(1, 8, pf::BadPacket::Route, 1, 0), drop(1, 8, pf::BadPacket::Route, 1, 2),
                 drop(2, 0, pf::BadPacket::PayloadBytes, 1, 7),
                 drop(3, 9, pf::BadPacket::Turn, 2, 4)};
    const auto a = fabric::account_traffic(flows, log);
    REQUIRE(a.flows.size() == 3);
    CHECK(a.flows[0].all_delivered());
    CHECK(a.flows[1].dropped == 3);
    CHECK(a.flows[1].lost == 0);
    REQUIRE(a.flows[1].drops.size() == 2);
    CHECK(a.flows[1].drops[0].chip == 1);
    CHECK(a.flows[1].drops[0].eth_channel == 8);
    CHECK(a.flows[1].drops[0].packets == std::vector<uint32_t>{0, 2});
    CHECK(fabric::describe_drops(a.flows[1]) ==
          "route at chip 1 eth 8: 2 packets (0, 2); payload_bytes at chip 2 eth 0: 1 packet (7)");
    CHECK(a.flows[2].dropped == 1);
    CHECK(a.flows[2].lost == 3);
    CHECK(a.sent == 24);
    CHECK(a.delivered == 17);
    CHECK(a.dropped == 4);
    CHECK(a.lost == 3);
    CHECK(!a.all_delivered());
    CHECK(!a.accounted());
    CHECK(a.flows_not_delivered() == 2);
    std::vector<std::string> problems;
    fabric::account_problems(a, problems);
    CHECK(problems ==
          std::vector<std::string>{"flow C: 3 of 8 packets lost (delivered 4, dropped 1)",
                                   "4 packets dropped by routers in 2 flows (see above)"});
    CHECK(fabric::account_totals(a) ==
          "account: 3 flows, 24 sent, 17 delivered, 4 dropped, 3 lost");
    CHECK(
        fabric::account_table(a) ==
        std::vector<std::string>{
            "flow     sent delivered dropped   lost duplicated  drops",
            "B           8         5       3      0          0  route at chip 1 eth 8: 2 packets "
            "(0, 2); payload_bytes at chip 2 eth 0: 1 packet (7)",
            "C           8         4       1      3          0  turn at chip 3 eth 9: 1 packet (4)",
            "account: 3 flows, 24 sent, 17 delivered, 4 dropped, 3 lost"});
}

TEST_CASE("traffic account: drops all accounted for, duplicates, strays, unrecorded records",
          "[account]") {
    SECTION("dropped but accounted") {
        const std::vector<FlowTally> flows{{"B", 1, 4, 2, {}}};
        DropLog log;
        log.drops = {drop(0, 1, pf::BadPacket::Route, 1, 1),
                     drop(0, 1, pf::BadPacket::Route, 1, 3)};
        const auto a = fabric::account_traffic(flows, log);
        CHECK(a.accounted());
        CHECK(!a.all_delivered());
        std::vector<std::string> problems;
        fabric::account_problems(a, problems);
        CHECK(problems == std::vector<std::string>{
                              "2 packets dropped by routers in 1 flow (all accounted for)"});
    }
    SECTION("more delivered and dropped than sent: a duplicate") {
        const std::vector<FlowTally> flows{{"D", 4, 4, 4, {}}};
        DropLog log;
        log.drops = {drop(5, 2, pf::BadPacket::Magic, 4, 0)};
        const auto a = fabric::account_traffic(flows, log);
        CHECK(a.flows[0].duplicated == 1);
        CHECK(a.flows[0].lost == 0);
        CHECK(!a.accounted());
        std::vector<std::string> problems;
        fabric::account_problems(a, problems);
        CHECK(problems == std::vector<std::string>{
                              "flow D: 1 packets duplicated (sent 4, delivered 4, dropped 1)",
                              "1 packet dropped by routers in 1 flow (see above)"});
        CHECK(fabric::account_totals(a) ==
              "account: 1 flows, 4 sent, 4 delivered, 1 dropped, 0 lost, 1 duplicated");
    }
    SECTION("a drop naming no flow, records the routers could not write") {
        const std::vector<FlowTally> flows{{"A", 0, 2, 2, {}}};
        DropLog log;
        log.drops = {drop(6, 3, pf::BadPacket::Target, 9, 1)};
        log.unrecorded = 5;
        const auto a = fabric::account_traffic(flows, log);
        REQUIRE(a.strays.size() == 1);
        CHECK(a.dropped == 0);
        CHECK(!a.accounted());
        std::vector<std::string> problems;
        fabric::account_problems(a, problems);
        CHECK(problems ==
              std::vector<std::string>{
                  "5 event records not written (router log full): drops may be missing from the "
                  "account",
                  "1 dropped packet name no flow of this run (first: seq 0x00090001, target at "
                  "chip 6 eth 3)"});
    }
}

TEST_CASE("traffic account: 1D multicast, a drop counts for the chips past the router",
          "[account]") {
    // One worker (flow id 0) multicasting to chips 1, 2, 3: a flow per chip.
    const std::vector<FlowTally> flows{{"chip 0 -> chip 1", 0, 4, 4, {1}},
                                       {"chip 0 -> chip 2", 0, 4, 3, {1, 2}},
                                       {"chip 0 -> chip 3", 0, 4, 3, {1, 2, 3}}};
    DropLog log;
    log.drops = {drop(2, 4, pf::BadPacket::Route, 0, 3)};  // chip 2's router dropped packet 3
    const auto a = fabric::account_traffic(flows, log);
    CHECK(a.flows[0].dropped == 0);  // it had landed on chip 1
    CHECK(a.flows[1].dropped == 1);
    CHECK(a.flows[1].lost == 0);
    CHECK(a.flows[2].dropped == 1);  // it never reached chip 3 either
    CHECK(a.flows[2].lost == 0);
    CHECK(a.accounted());
    CHECK(a.dropped == 2);  // per flow: two destinations missed it
}

TEST_CASE("traffic account: a drop by a router off the flow's way is a stray", "[account]") {
    const std::vector<FlowTally> flows{{"chip 0 -> chip 1", 0, 4, 3, {1}}};
    DropLog log;
    log.drops = {drop(5, 4, pf::BadPacket::Route, 0, 3)};
    const auto a = fabric::account_traffic(flows, log);
    CHECK(a.strays.size() == 1);
    CHECK(a.flows[0].lost == 1);
}

TEST_CASE("traffic account: drops from event records, with the router that dropped them",
          "[account]") {
    fabric::FabricOptions o;
    o.chips = {0, 1};
    const auto plan =
        fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), fabric::test::wh_soc(), o);
    fabric::RouterEventRecord bad{.router = 1};
    bad.event = {.time = 10,
                 .kind = static_cast<uint16_t>(pf::RouterEventKind::BadPacket),
                 .channel = 0,
                 .code = reason(pf::BadPacket::Route),
                 .value = traffic_seq(2, 9)};
    fabric::RouterEventRecord state{.router = 0};
    state.event.kind = static_cast<uint16_t>(pf::RouterEventKind::State);
    const fabric::RouterEventRecord lost{.router = 0, .lost = 3};
    DropLog log;
    const fabric::RouterEventRecord recs[] = {state, bad, lost};
    log.add(recs, plan);
    REQUIRE(log.drops.size() == 1);
    CHECK(log.drops[0].chip == plan.routers[1].chip);
    CHECK(log.drops[0].eth_channel == plan.routers[1].eth_channel);
    CHECK(log.drops[0].reason == reason(pf::BadPacket::Route));
    CHECK(log.drops[0].seq == 0x00020009u);
    CHECK(log.unrecorded == 3);
}

TEST_CASE(
    "traffic account: a delivery not accepted is a drop unless accepted after all, and only for "
    "the flow that ends on its chip",
    "[account]") {
    fabric::FabricOptions o;
    o.chips = {0, 1};
    const auto plan =
        fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), fabric::test::wh_soc(), o);
    const auto record = [](size_t router, pf::RouterEventKind kind, uint32_t code, uint32_t seq) {
        fabric::RouterEventRecord r{.router = router};
        r.event = {.time = 10,
                   .kind = static_cast<uint16_t>(kind),
                   .channel = 0,
                   .code = code,
                   .value = seq};
        return r;
    };
    // Router 1 (chip 1) could not deliver flow 0's packets 4 and 5 to core 3-1; packet 5 went
    // after all.
    const fabric::RouterEventRecord recs[] = {
        record(1, pf::RouterEventKind::NotAccepted, 3 | 1 << 8, traffic_seq(0, 4)),
        record(1, pf::RouterEventKind::NotAccepted, 3 | 1 << 8, traffic_seq(0, 5)),
        record(0, pf::RouterEventKind::Accepted, 0, traffic_seq(0, 5)),  // another router's
        record(1, pf::RouterEventKind::Accepted, 0, traffic_seq(0, 5))};
    DropLog log;
    log.add(recs, plan);
    CHECK(log.drops.empty());
    REQUIRE(log.not_accepted.size() == 1);
    CHECK(log.not_accepted[0].chip == plan.routers[1].chip);
    CHECK(log.not_accepted[0].seq == traffic_seq(0, 4));
    CHECK(log.not_accepted[0].reason == reason(pf::BadPacket::NotAccepted));
    // A 1D multicast from chip 0 to chips 1 and 2: packet 4 went on to chip 2 from chip 1.
    const fabric::ChipId c1 = plan.routers[1].chip;
    const std::vector<FlowTally> flows{{"chip 0 -> chip 1", 0, 8, 7, {c1}},
                                       {"chip 0 -> chip 2", 0, 8, 8, {c1, 7}}};
    const auto a = fabric::account_traffic(flows, log);
    CHECK(a.flows[0].dropped == 1);
    CHECK(a.flows[0].lost == 0);
    CHECK(a.flows[1].dropped == 0);
    CHECK(a.flows[1].duplicated == 0);
    CHECK(a.accounted());
    CHECK(fabric::describe_drops(a.flows[0]) ==
          fmt::format("not_accepted at chip {} eth {}: 1 packet (4)", c1,
                      plan.routers[1].eth_channel));
    // The sink counted it after all (it landed after the fabric ended): delivered, not dropped;
    // a definite drop still counts as one.
    const std::vector<FlowTally> late{{"chip 0 -> chip 1", 0, 8, 8, {c1}}};
    const auto b = fabric::account_traffic(late, log);
    CHECK(b.flows[0].dropped == 0);
    CHECK(b.flows[0].landed_late == 1);
    CHECK(b.flows[0].duplicated == 0);
    CHECK(b.accounted());
    DropLog both = log;
    both.drops.push_back(drop(c1, 0, pf::BadPacket::Route, 0, 6));
    const auto c = fabric::account_traffic(late, both);
    CHECK(c.flows[0].landed_late == 1);
    CHECK(c.flows[0].dropped == 1);
    CHECK(c.flows[0].duplicated == 1);  // the route drop and 8 delivered: one too many
}

TEST_CASE("traffic account: JSON", "[account]") {
    const std::vector<FlowTally> flows{{"B", 1, 3, 1, {}}};
    DropLog log;
    log.drops = {drop(1, 8, pf::BadPacket::Route, 1, 0), drop(1, 8, pf::BadPacket::Route, 1, 2)};
    const auto j = fabric::account_json(fabric::account_traffic(flows, log));
    CHECK(j == nlohmann::json::parse(R"({
        "sent": 3, "delivered": 1, "dropped": 2, "lost": 0, "duplicated": 0,
        "all_delivered": false, "accounted": true, "unrecorded_events": 0, "stray_drops": [],
        "flows": [{"flow": "B", "id": 1, "sent": 3, "delivered": 1, "dropped": 2, "lost": 0,
                   "duplicated": 0, "landed_late": 0,
                   "drops": [{"reason": "route", "chip": 1, "eth": 8, "packets": [0, 2]}]}]})"));
}

TEST_CASE("traffic account: a long run of drops lists the first 8 packets", "[account]") {
    const std::vector<FlowTally> flows{{"E", 0, 12, 0, {}}};
    DropLog log;
    for (uint32_t i = 0; i < 12; ++i) log.drops.push_back(drop(0, 8, pf::BadPacket::Route, 0, i));
    const auto a = fabric::account_traffic(flows, log);
    CHECK(fabric::describe_drops(a.flows[0]) ==
          "route at chip 0 eth 8: 12 packets (0, 1, 2, 3, 4, 5, 6, 7 and 4 more)");
}

TEST_CASE("traffic account: a thousand flows losing packets stay a few problem lines",
          "[account]") {
    std::vector<FlowTally> flows;
    for (uint32_t k = 0; k < 1000; ++k) flows.push_back({fmt::format("F{}", k), k, 4, 3, {}});
    const auto a = fabric::account_traffic(flows, DropLog{});
    CHECK(a.lost == 1000);
    std::vector<std::string> problems;
    fabric::account_problems(a, problems);
    REQUIRE(problems.size() == 9);
    CHECK(problems[0] == "flow F0: 1 of 4 packets lost (delivered 3, dropped 0)");
    CHECK(problems[7] == "flow F7: 1 of 4 packets lost (delivered 3, dropped 0)");
    CHECK(problems[8] == "992 more flows with 992 packets lost (see the account)");
    CHECK(fabric::account_table(a).size() == 1002);  // the header, every flow, the totals
}

TEST_CASE(
    "traffic account: a cut link's unacked packets decided by the peer's count, counted "
    "from the peer's chip on",
    "[account][control]") {
    // Chip 1 eth 2 (peer: chip 2) had sent flow 0's packets 10 and 11 on channel 5 at link
    // positions 40 and 41, and flow 1's packet 3 on channel 0 at position 7, none completed.
    DropLog log;
    log.unacked = {{1, 2, 2, 5, 40, traffic_seq(0, 10)},
                   {1, 2, 2, 5, 41, traffic_seq(0, 11)},
                   {1, 2, 2, 0, 7, traffic_seq(1, 3)}};
    // Chip 2 took 41 packets from channel 5 (positions 0..40); nobody can say for channel 0.
    log.resolve_unacked([](const fabric::UnackedPacket& u) -> std::optional<uint32_t> {
        if (u.sender_channel == 5) return 41;
        return std::nullopt;
    });
    REQUIRE(log.drops.size() == 1);
    const PacketDrop& d = log.drops[0];
    CHECK(d.chip == 1);
    CHECK(d.eth_channel == 2);
    CHECK(d.reason == reason(pf::BadPacket::Unacked));
    CHECK(d.rx_channel == 5);
    CHECK(d.seq == traffic_seq(0, 11));
    CHECK(d.short_of == std::optional<fabric::ChipId>(2));
    // The undecided one stays (the account counts it lost).
    REQUIRE(log.unacked.size() == 1);
    CHECK(log.unacked[0].seq == traffic_seq(1, 3));

    // Flow 0 is a multicast from chip 0 to chips 1 and 2: packet 11 reached chip 1 (delivered
    // there) and not chip 2, so the drop is chip 2's flow's only.
    const std::vector<FlowTally> flows{{"0 -> 1", 0, 12, 12, {1}}, {"0 -> 2", 0, 12, 11, {1, 2}}};
    const auto a = fabric::account_traffic(flows, log);
    CHECK(a.flows[0].all_delivered());
    CHECK(a.flows[1].dropped == 1);
    CHECK(a.flows[1].lost == 0);
    CHECK(a.accounted());
    CHECK(fabric::describe_drops(a.flows[1]) == "unacked at chip 1 eth 2: 1 packet (11)");
}

TEST_CASE("traffic account: the peer's count wraps with the free-running counters", "[account]") {
    DropLog log;
    log.unacked = {{0, 8, 1, 0, 0xFFFFFFFE, traffic_seq(0, 1)}, {0, 8, 1, 0, 1, traffic_seq(0, 2)}};
    // The peer took positions up to 0: 0xFFFFFFFE was taken, 1 was not.
    log.resolve_unacked([](const fabric::UnackedPacket&) { return std::optional<uint32_t>(1); });
    REQUIRE(log.drops.size() == 1);
    CHECK(log.drops[0].seq == traffic_seq(0, 2));
}

TEST_CASE(
    "traffic account: unacked packets decided by a peer that cut the link or terminated, not by "
    "one still running",
    "[account][control]") {
    // n300 line: chip 0 eth 8 <-> chip 1 eth 0. Chip 0 sent packets at positions 5 and 6 of
    // channel 1 and never heard back; chip 1 took 6 packets from that channel (positions 0..5).
    fabric::FabricOptions o;
    o.topology = pf::Topology::Line;
    o.chips = {0, 1};
    const fabric::FabricPlan plan =
        fabric::plan_fabric(fabric::test::cluster("n300_cluster.yaml"), fabric::test::wh_soc(), o);
    REQUIRE(plan.routers.size() == 2);
    std::vector<fabric::RouterSnapshot> routers(2);
    for (size_t i = 0; i < 2; ++i) {
        routers[i].chip = plan.routers[i].chip;
        routers[i].eth_channel = plan.routers[i].eth_channel;
    }
    const size_t peer = plan.routers[0].chip == 1 ? 0 : 1;
    const size_t sender = 1 - peer;
    routers[peer].control.taken[1] = 6;
    const fabric::UnackedPacket u5{
        routers[sender].chip, routers[sender].eth_channel, routers[peer].chip, 1, 5,
        traffic_seq(0, 5)};
    fabric::UnackedPacket u6 = u5;
    u6.position = 6;
    u6.seq = traffic_seq(0, 6);
    const auto decide = [&](const std::vector<fabric::RouterSnapshot>& now) {
        DropLog log;
        log.unacked = {u5, u6};
        log.resolve_unacked(fabric::taken_by_peers(plan, now));
        return log;
    };
    // Still running: its count may grow, nothing is decided.
    routers[peer].block.status = static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic);
    CHECK(decide(routers).unacked.size() == 2);
    // Terminated (its core finished): final. Position 5 was taken, 6 dropped.
    routers[peer].block.status = static_cast<uint32_t>(pf::RouterStatus::Terminated);
    routers[peer].core_finished = true;
    const DropLog ended = decide(routers);
    CHECK(ended.unacked.empty());
    REQUIRE(ended.drops.size() == 1);
    CHECK(ended.drops[0].seq == traffic_seq(0, 6));
    CHECK(ended.drops[0].reason == reason(pf::BadPacket::Unacked));
    // Running but with the link cut: final too.
    routers[peer].block.status = static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic);
    routers[peer].core_finished = false;
    routers[peer].control.cut = 1;
    const DropLog cut = decide(routers);
    CHECK(cut.unacked.empty());
    REQUIRE(cut.drops.size() == 1);
    CHECK(cut.drops[0].seq == traffic_seq(0, 6));
}
