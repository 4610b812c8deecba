// Traffic on a 1D fabric (fabric/fabric_traffic.h): which workers send where, with which route,
// into which region, for each pattern on a line and a ring; workers off harvested rows; every bad
// option refused. No model needed (the traffic itself runs in tests/cli/fabricctl_fabric_test.cpp).
#include <catch2/catch.hpp>
#include <cstring>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/fabric_traffic.h"
#include "test_elf.h"

using fabric::ChipId;
using fabric::CoreCoord;
using fabric::FabricDir;
using fabric::FabricTrafficPattern;
using fabric::test::wh_soc;
namespace pf = protocol::fabric;

namespace {

fabric::FabricPlan t3k_plan(pf::Topology topology, std::vector<ChipId> chips) {
    fabric::FabricOptions o;
    o.topology = topology;
    o.chips = std::move(chips);
    return fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), wh_soc(), o);
}

const fabric::ElfImage& traffic_image() {
    static const auto image = fabric::ElfImage::parse(
        fabric::test::program_elf({0x0000006f}, hal::kWormholeB0.app_fw_base), "traffic.elf");
    return image;
}

fabric::FabricTraffic plan(const fabric::FabricPlan& p, FabricTrafficPattern pattern,
                           uint32_t packets = 16, uint32_t bytes = 1024) {
    fabric::FabricTrafficOptions o;
    o.pattern = pattern;
    o.packets = packets;
    o.packet_bytes = bytes;
    o.timeout_us = 1234;
    return fabric::plan_fabric_traffic(p, wh_soc(), traffic_image(), o);
}

// (chip, core, direction, destination chips, route) of every worker.
struct Expected {
    ChipId chip;
    CoreCoord core;
    FabricDir dir;
    std::vector<ChipId> dests;
    uint32_t route;
};

void check_workers(const fabric::FabricPlan& p, const fabric::FabricTraffic& t,
                   const std::vector<Expected>& expected) {
    REQUIRE(t.workers.size() == expected.size());
    for (size_t k = 0; k < expected.size(); ++k) {
        const auto& w = t.workers[k];
        const auto& e = expected[k];
        INFO("worker " << k);
        CHECK(w.target.core == fabric::CoreLocation{e.chip, e.core});
        CHECK(w.target.image == &traffic_image());
        CHECK(w.dir == e.dir);
        CHECK(w.dests == e.dests);
        CHECK(w.dest.route == e.route);
        CHECK(w.dest.x == 3);  // the sink: the third worker core, 3-1
        CHECK(w.dest.y == 1);
        CHECK(w.dest.addr == 0x40000 + k * t.region_bytes());
        CHECK(w.dest.seed == 0x1000 * (k + 1));
        const auto channel = p.worker_channel(e.chip, e.dir);
        CHECK(std::memcmp(&w.args.channel, &channel, sizeof channel) == 0);
        CHECK(w.args.num_dests == 1);
        CHECK(w.args.dests_addr == 0x18000);
        CHECK(w.args.conn_l1 == 0x18300);
        CHECK(w.args.src_addr == 0x18400);
        CHECK(w.args.timeout_us == 1234);
    }
}

}  // namespace

TEST_CASE("fabric traffic: the worker L1 and the sinks", "[fabric_traffic]") {
    const auto l1 = fabric::fabric_traffic_l1(hal::Arch::WormholeB0);
    CHECK(l1.dests == 0x18000);
    CHECK(l1.conn == 0x18300);
    CHECK(l1.src == 0x18400);
    CHECK(l1.src_end == 0x3FBE0);
    CHECK(fabric::fabric_sink_base(hal::Arch::WormholeB0) == 0x40000);
    CHECK(fabric::fabric_traffic_l1(hal::Arch::Blackhole).dests == 0x16000);
    CHECK(fabric::fabric_traffic_pattern_name(FabricTrafficPattern::AllToAll) == "all-to-all");
    CHECK(fabric::parse_fabric_traffic_pattern("neighbour") == FabricTrafficPattern::Neighbour);
    CHECK_FALSE(fabric::parse_fabric_traffic_pattern("all"));
}

TEST_CASE("fabric traffic: neighbour on a line, the last chip sends west", "[fabric_traffic]") {
    const auto p = t3k_plan(pf::Topology::Line, {0, 1, 2, 3});
    const auto t = plan(p, FabricTrafficPattern::Neighbour, 16, 1024);
    CHECK(t.slots == 8);
    CHECK(t.region_bytes() == 8 * 1024);
    CHECK(t.sink == CoreCoord{3, 1});
    CHECK(t.deliveries() == 4 * 16);
    const uint32_t one = pf::route_unicast(1);
    check_workers(p, t,
                  {{0, {1, 1}, FabricDir::East, {1}, one},
                   {1, {1, 1}, FabricDir::East, {2}, one},
                   {2, {1, 1}, FabricDir::East, {3}, one},
                   {3, {2, 1}, FabricDir::West, {2}, one}});
    for (const auto& w : t.workers) {
        CHECK(w.args.packet_count == 16);
        CHECK(w.args.packet_bytes == 1024);
        CHECK(w.args.dest_slots == 8);
    }
    CHECK(t.workers[3].name == "worker chip 3 core 2-1 (west)");
}

TEST_CASE("fabric traffic: all-to-all on a line multicasts both ways", "[fabric_traffic]") {
    const auto p = t3k_plan(pf::Topology::Line, {0, 1, 2});
    const auto t = plan(p, FabricTrafficPattern::AllToAll, 4, 2048);
    CHECK(t.slots == 4);  // fewer packets than kFabricTrafficMaxSlots
    check_workers(p, t,
                  {{0, {1, 1}, FabricDir::East, {1, 2}, pf::route_multicast(1, 2)},
                   {1, {1, 1}, FabricDir::East, {2}, pf::route_unicast(1)},
                   {1, {2, 1}, FabricDir::West, {0}, pf::route_unicast(1)},
                   {2, {2, 1}, FabricDir::West, {1, 0}, pf::route_multicast(1, 2)}});
    CHECK(t.deliveries() == 4 * (2 + 1 + 1 + 2));
}

TEST_CASE("fabric traffic: all-to-all on a ring goes east around it", "[fabric_traffic]") {
    const auto p = t3k_plan(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    const auto t = plan(p, FabricTrafficPattern::AllToAll, 2, 512);
    REQUIRE(t.workers.size() == 8);
    CHECK(t.workers[4].target.core.chip == 7);
    CHECK(t.workers[4].dests == std::vector<ChipId>{6, 5, 4, 0, 1, 2, 3});
    CHECK(t.workers[4].dest.route == pf::route_multicast(1, 7));
    const auto n = plan(p, FabricTrafficPattern::Neighbour, 2, 512);
    CHECK(n.workers.back().dir == FabricDir::East);  // a ring has no end
    CHECK(n.workers.back().dests == std::vector<ChipId>{0});
}

TEST_CASE("fabric traffic: workers only where no chip of the line is harvested",
          "[fabric_traffic][harvest]") {
    const auto p = t3k_plan(pf::Topology::Line, {0, 1});
    const fabric::SocDescriptor harvested = wh_soc().harvested(1u << 1);  // row 1 of chip 1
    const fabric::ChipSocs socs = [&](ChipId c) -> const fabric::SocDescriptor& {
        return c == 1 ? harvested : wh_soc();
    };
    const auto t = fabric::plan_fabric_traffic(p, socs, traffic_image(), {});
    for (const auto& w : t.workers) CHECK(w.target.core.core.y != 1);
    CHECK(t.sink.y != 1);
}

TEST_CASE("fabric traffic: bad options are refused", "[fabric_traffic]") {
    using fabric::test::expect_error;
    const auto p = t3k_plan(pf::Topology::Line, {0, 1});
    const auto bad = [&](uint32_t packets, uint32_t bytes) {
        return expect_error(fabric::ErrorCategory::BadInput, [&] {
            (void)plan(p, FabricTrafficPattern::Neighbour, packets, bytes);
        });
    };
    CHECK(bad(16, 100) ==
          "fabric traffic: packets of 100 B: must be a non-zero multiple of 16 and at most the "
          "routers' payload of 4352 B");
    CHECK(bad(16, 0).find("packets of 0 B") != std::string::npos);
    CHECK(bad(0, 1024) == "fabric traffic: 0 packets per worker");
}

TEST_CASE("fabric traffic: each worker's seq, its counters and its flows for the account",
          "[fabric_traffic][account]") {
    const auto p = t3k_plan(pf::Topology::Line, {0, 1, 2, 3});
    fabric::FabricTrafficOptions o;
    o.pattern = FabricTrafficPattern::AllToAll;
    o.packets = 16;
    o.count_deliveries = true;
    const auto t = fabric::plan_fabric_traffic(p, wh_soc(), traffic_image(), o);
    CHECK(t.region_stride() == 8 * 1024 + 16);
    REQUIRE(t.workers.size() == 6);
    for (size_t k = 0; k < t.workers.size(); ++k) {
        const auto& w = t.workers[k];
        INFO("worker " << k);
        CHECK(w.dest.seq_base == protocol::traffic_seq(static_cast<uint32_t>(k), 0));
        CHECK(w.dest.addr == 0x40000 + k * (8 * 1024 + 16));
        CHECK(w.dest.sem_addr == w.dest.addr + 8 * 1024);
        CHECK(w.dest.sem_x == 3);
        CHECK(w.dest.sem_y == 1);
        CHECK(w.args.send_type == static_cast<uint32_t>(pf::NocSendType::FusedWriteAtomicInc));
    }
    // Worker 0 (chip 0 east) writes chips 1, 2, 3: a flow each, the drops on the way counted.
    std::vector<fabric::MeshWorkerOutcome> outcomes(t.workers.size());
    for (auto& out : outcomes) out.results.packets_sent = 16;
    std::vector<std::vector<uint32_t>> delivered;
    for (const auto& w : t.workers) delivered.emplace_back(w.dests.size(), 16);
    delivered[0][2] = 11;
    const auto tallies = fabric::fabric_flow_tallies(t, outcomes, delivered);
    REQUIRE(tallies.size() == 12);  // 3 + 2 + 1 east, 1 + 2 + 3 west
    CHECK(tallies[0].name == "worker chip 0 core 1-1 (east) -> chip 1");
    CHECK(tallies[2].name == "worker chip 0 core 1-1 (east) -> chip 3");
    CHECK(tallies[2].id == 0);
    CHECK(tallies[2].sent == 16);
    CHECK(tallies[2].delivered == 11);
    CHECK(tallies[0].drop_chips == std::vector<ChipId>{1});
    CHECK(tallies[2].drop_chips == std::vector<ChipId>{1, 2, 3});
    CHECK(tallies[3].id == 1);
}

TEST_CASE("fabric traffic: more packets than the seq word numbers are refused",
          "[fabric_traffic][account]") {
    const auto p = t3k_plan(pf::Topology::Line, {0, 1});
    CHECK(fabric::test::expect_error(
              fabric::ErrorCategory::BadInput,
              [&] { (void)plan(p, FabricTrafficPattern::Neighbour, 65537, 1024); }) ==
          "fabric traffic: 65537 packets per worker: a packet's seq word numbers at most "
          "65536");
}
