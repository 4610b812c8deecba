// The 1D fabric plan (plan_fabric) over the shipped cluster descriptors: exact router placement
// and configs for a line and rings, hops, worker channels, every bad option; and the protocol's
// route encoding and router L1 layout on both arches.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_plan.h"
#include "fabric/soc_descriptor.h"
#include "protocol/fabric.h"

using Catch::Matchers::Contains;
using fabric::ChipId;
using fabric::ClusterDescriptor;
using fabric::CoreCoord;
using fabric::ErrorCategory;
using fabric::FabricDir;
using fabric::FabricOptions;
using fabric::FabricPlan;
using fabric::plan_fabric;
using fabric::RouterPlacement;
using fabric::SocDescriptor;
using fabric::test::expect_error;
namespace pf = protocol::fabric;

namespace {

using fabric::test::bh_soc;
using fabric::test::wh_soc;
const ClusterDescriptor& t3k() {
    return fabric::test::cluster("t3k_cluster.yaml");
}
const ClusterDescriptor& n300() {
    return fabric::test::cluster("n300_cluster.yaml");
}

FabricOptions opts(pf::Topology t, std::vector<ChipId> chips) {
    FabricOptions o;
    o.topology = t;
    o.chips = std::move(chips);
    return o;
}

std::string bad_plan(const ClusterDescriptor& c, const SocDescriptor& s, const FabricOptions& o) {
    return expect_error(ErrorCategory::BadInput, [&] { (void)plan_fabric(c, s, o); });
}

// Every router's layout: addresses ascending, 16-B aligned, regions non-overlapping, inside the
// router block and the core's L1.
void check_layout(const hal::ArchMap& a, const pf::RouterConfig& c, const pf::RouterLayout& l,
                  uint32_t eth_l1_size) {
    struct Region {
        uint32_t at;
        uint32_t size;
    };
    std::vector<Region> regions{{l.config, sizeof(pf::RouterConfig)},
                                {l.status, sizeof(pf::RouterStatusBlock)},
                                {l.termination, 16},
                                {l.ready, 16},
                                {l.handshake_in, 64},
                                {l.handshake_out, 64},
                                {l.connection, sizeof(pf::WorkerConnectionInfo)}};
    for (uint32_t i = 0; i < pf::kNumSenderChannels; ++i)
        regions.push_back({l.upstream_credit[i], 16});
    regions.push_back({l.scratch, 64});
    for (uint32_t i = 0; i < pf::kNumSenderChannels; ++i) {
        regions.push_back({l.sender_base[i], c.sender_slots[i] * l.slot_bytes});
    }
    for (uint32_t i = 0; i < pf::kNumReceiverChannels; ++i) {
        regions.push_back({l.receiver_base[i], c.receiver_slots[i] * l.slot_bytes});
    }
    CHECK(regions.front().at == pf::router_l1_base(a));
    for (size_t i = 0; i < regions.size(); ++i) {
        INFO("region " << i << " at " << regions[i].at);
        CHECK(regions[i].at % 16 == 0);
        if (i + 1 < regions.size()) CHECK(regions[i].at + regions[i].size <= regions[i + 1].at);
    }
    CHECK(l.end == regions.back().at + regions.back().size);
    CHECK(l.slot_bytes % 16 == 0);
    CHECK(l.slot_bytes >= sizeof(pf::PacketHeader) + c.payload_bytes);
    CHECK(l.sender_base[0] % 64 == 0);
    CHECK(l.fits);
    CHECK(l.end <= pf::router_l1_top(a));
    CHECK(l.end <= eth_l1_size);
    CHECK(pf::router_l1_base(a) >= a.app_fw_base + a.app_fw_size);
    CHECK(pf::router_l1_base(a) >= a.router_fw.end());
    CHECK(pf::router_l1_top(a) <= a.eth_l1_usable_top);
}

void check_common(const FabricPlan& p, const FabricOptions& o, const SocDescriptor& soc) {
    const bool ring = o.topology == pf::Topology::Ring;
    const size_t n = o.chips.size();
    REQUIRE(p.routers.size() == 2 * (ring ? n : n - 1));
    CHECK(p.chips == o.chips);
    CHECK(p.topology == o.topology);
    CHECK(p.arch == soc.arch());
    std::vector<std::pair<ChipId, uint32_t>> ports;
    for (const RouterPlacement& r : p.routers) {
        INFO("router chip " << r.chip << " dir " << fabric::dir_name(r.dir));
        ports.emplace_back(r.chip, r.eth_channel);
        CHECK(r.core.chip == r.chip);
        CHECK(r.core.core == soc.eth_core(r.eth_channel));
        CHECK(o.chips[r.index_in_line] == r.chip);
        const pf::RouterConfig& c = r.config;
        CHECK(c.magic == pf::kRouterConfigMagic);
        CHECK(c.version == pf::kProtocolVersion);
        CHECK(c.topology == static_cast<uint32_t>(o.topology));
        CHECK(c.chip_id == r.chip);
        CHECK(c.eth_channel == r.eth_channel);
        CHECK(c.is_master == (c.chip_id < c.peer_chip_id ? 1u : 0u));
        CHECK(c.payload_bytes == o.payload_bytes);
        CHECK(c.handshake_timeout_us == o.handshake_timeout_us);
        CHECK(c.ready_timeout_us == o.ready_timeout_us);
        CHECK(c.drain_timeout_us == o.drain_timeout_us);
        CHECK(c.progress_timeout_us == o.progress_timeout_us);
        CHECK(c.ring_size == (ring ? n : 0));
        // Automatic slots give the worker channel twice the others' where that fits L1, then what
        // L1 still holds to the forwarded channels: one more slot each would not fit.
        if (o.sender_slots != 0) {
            CHECK(c.sender_slots[0] == c.sender_slots[1]);
        } else {
            CHECK(c.sender_slots[0] <= 2 * c.sender_slots[1]);
            pf::RouterConfig more = c;
            ++more.sender_slots[1];
            if (ring) ++more.sender_slots[2];
            const pf::RouterLayout bigger = pf::router_layout(hal::arch_map(soc.arch()), more);
            CHECK((c.sender_slots[1] == fabric::kMaxRouterSlots || !bigger.fits ||
                   bigger.end > soc.eth_l1_size()));
        }
        CHECK(c.sender_slots[2] == (ring ? c.sender_slots[1] : 0));
        CHECK(c.receiver_slots[1] == (ring ? c.receiver_slots[0] : 0));
        CHECK(c.line_reach == p.line_chips(r).size());
        CHECK(c.stall_timeout_us == o.stall_timeout_us);
        CHECK(c.stall_action == static_cast<uint32_t>(o.stall_action));
        // The peer router exists and points back.
        const FabricDir back = r.dir == FabricDir::East ? FabricDir::West : FabricDir::East;
        const RouterPlacement& peer = p.router(c.peer_chip_id, back);
        CHECK(peer.eth_channel == c.peer_eth_channel);
        CHECK(peer.config.peer_chip_id == r.chip);
        CHECK(peer.config.peer_eth_channel == r.eth_channel);
        CHECK(peer.config.dateline == c.dateline);
        // The peers are connected in the descriptor.
        CHECK(p.chips.size() >= 2);
        check_layout(hal::arch_map(soc.arch()), c, r.layout, soc.eth_l1_size());
        CHECK(r.layout.end == pf::router_layout(hal::arch_map(soc.arch()), c).end);
    }
    std::sort(ports.begin(), ports.end());
    CHECK(std::adjacent_find(ports.begin(), ports.end()) == ports.end());  // one router per port
}

}  // namespace

TEST_CASE("fabric plan: line over t3k row 0", "[fabric_plan]") {
    const FabricOptions o = opts(pf::Topology::Line, {0, 1, 2, 3});
    const FabricPlan p = plan_fabric(t3k(), wh_soc(), o);
    check_common(p, o, wh_soc());

    // Links: chip c channel 2 (east) <-> chip c+1 channel 4 (west); link_index 0.
    const auto& e0 = p.router(0, FabricDir::East);
    CHECK(e0.eth_channel == 2);
    CHECK(e0.core.core == CoreCoord{8, 0});
    CHECK(e0.index_in_line == 0);
    CHECK(e0.config.peer_chip_id == 1);
    CHECK(e0.config.peer_eth_channel == 4);
    CHECK(e0.config.is_master == 1);
    CHECK(e0.config.has_downstream == 0);  // line end
    const auto& w1 = p.router(1, FabricDir::West);
    CHECK(w1.eth_channel == 4);
    CHECK(w1.core.core == CoreCoord{7, 0});
    CHECK(w1.config.is_master == 0);
    CHECK(w1.config.has_downstream == 1);
    CHECK(w1.config.downstream_x == 8);  // chip 1's east router, channel 2
    CHECK(w1.config.downstream_y == 0);
    const auto& e1 = p.router(1, FabricDir::East);
    CHECK(e1.eth_channel == 2);
    CHECK(e1.config.has_downstream == 1);
    CHECK(e1.config.downstream_x == 7);
    CHECK(e1.config.downstream_y == 0);
    CHECK(e1.config.is_master == 1);
    const auto& w3 = p.router(3, FabricDir::West);
    CHECK(w3.config.has_downstream == 0);
    CHECK(w3.index_in_line == 3);
    for (const auto& r : p.routers) {
        CHECK(r.config.dateline == 0);
        // auto: {8, 16} fits a line on WH (from 0x18000, above the routing firmware's region);
        // ch0 takes 4 more towards twice the others', and then nothing is left for ch1
        CHECK(r.config.sender_slots[0] == 12);
        CHECK(r.config.sender_slots[1] == 8);
        CHECK(r.config.receiver_slots[0] == 16);
    }
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)p.router(0, FabricDir::West); }),
               Contains("chip 0 has no west router"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)p.router(3, FabricDir::East); }),
               Contains("chip 3 has no east router"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)p.router(5, FabricDir::East); }),
               Contains("chip 5 is not in the line"));

    CHECK(p.hops(0, 1, FabricDir::East) == 1);
    CHECK(p.hops(0, 3, FabricDir::East) == 3);
    CHECK(p.hops(3, 0, FabricDir::West) == 3);
    CHECK(p.hops(2, 1, FabricDir::West) == 1);
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)p.hops(0, 3, FabricDir::West); }),
               Contains("chip 3 is not reachable from chip 0 going west"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)p.hops(2, 1, FabricDir::East); }),
               Contains("not reachable"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)p.hops(1, 1, FabricDir::East); }),
               Contains("to itself"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)p.hops(1, 7, FabricDir::East); }),
               Contains("chip 7 is not in the line"));

    const pf::WorkerChannel wc = p.worker_channel(1, FabricDir::East);
    CHECK(wc.router_x == 8);
    CHECK(wc.router_y == 0);
    CHECK(wc.slots_base == e1.layout.sender_base[pf::kWorkerChannel]);
    CHECK(wc.num_slots == 12);
    CHECK(wc.slot_bytes == e1.layout.slot_bytes);
    CHECK(wc.slot_bytes == 64 + pf::kDefaultPayloadBytes);
    CHECK(wc.payload_bytes == pf::kDefaultPayloadBytes);
    CHECK(wc.connection == e1.layout.connection);
    CHECK(wc.pushed_stream == pf::kStreamPushed0);
    CHECK_THROWS_AS(p.worker_channel(0, FabricDir::West), fabric::Error);
}

TEST_CASE("fabric plan: second link, explicit slots and payload", "[fabric_plan]") {
    FabricOptions o = opts(pf::Topology::Line, {4, 0});  // down the n300 board of column 0
    o.link_index = 1;
    o.payload_bytes = 1024;
    o.sender_slots = 3;
    o.receiver_slots = 5;
    const FabricPlan p = plan_fabric(t3k(), wh_soc(), o);
    check_common(p, o, wh_soc());
    const auto& e = p.router(4, FabricDir::East);
    CHECK(e.eth_channel == 1);  // chip 4 channels 0, 1 <-> chip 0 channels 8, 9
    CHECK(e.config.peer_eth_channel == 9);
    CHECK(e.config.is_master == 0);
    CHECK(e.config.sender_slots[0] == 3);
    CHECK(e.config.sender_slots[1] == 3);
    CHECK(e.config.receiver_slots[0] == 5);
    CHECK(e.layout.slot_bytes == 64 + 1024);
    const auto& w = p.router(0, FabricDir::West);
    CHECK(w.eth_channel == 9);
    CHECK(w.core.core == CoreCoord{1, 6});
    CHECK(w.config.is_master == 1);
}

TEST_CASE("fabric plan: ring over the t3k perimeter", "[fabric_plan]") {
    const FabricOptions o = opts(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    const FabricPlan p = plan_fabric(t3k(), wh_soc(), o);
    check_common(p, o, wh_soc());
    // The TTL its routes carry: 8 chips, so a route is at most 7 hops and arrives with 1 to spare.
    CHECK(p.ttl() == 8);
    // Dateline: the east router of the last chip (4) and the west router of the first (0),
    // i.e. both ends of the wrap link, and no other router.
    for (const auto& r : p.routers) {
        INFO("chip " << r.chip << " " << fabric::dir_name(r.dir));
        const bool expect =
            (r.chip == 4 && r.dir == FabricDir::East) || (r.chip == 0 && r.dir == FabricDir::West);
        CHECK(r.config.dateline == (expect ? 1u : 0u));
        CHECK(r.config.has_downstream == 1);
        const auto& other =
            p.router(r.chip, r.dir == FabricDir::East ? FabricDir::West : FabricDir::East);
        CHECK(r.config.downstream_x == other.core.core.x);
        CHECK(r.config.downstream_y == other.core.core.y);
        CHECK(r.config.ring_size == 8);
        // auto: {8, 16} does not fit a ring (5 channels) on WH, {4, 8} does, and ch0 8
        CHECK(r.config.sender_slots[2] == 6);  // and the rest of L1: 2 more each for ch1 and ch2
        CHECK(r.config.sender_slots[0] == 8);
        CHECK(r.config.receiver_slots[1] == 8);
    }
    const auto& wrap_e = p.router(4, FabricDir::East);  // chip 4 ch 0 <-> chip 0 ch 8
    CHECK(wrap_e.eth_channel == 0);
    CHECK(wrap_e.core.core == CoreCoord{9, 0});
    CHECK(wrap_e.config.peer_chip_id == 0);
    CHECK(wrap_e.config.peer_eth_channel == 8);
    CHECK(wrap_e.config.is_master == 0);
    CHECK(wrap_e.index_in_line == 7);
    const auto& wrap_w = p.router(0, FabricDir::West);
    CHECK(wrap_w.eth_channel == 8);
    CHECK(wrap_w.core.core == CoreCoord{9, 6});
    CHECK(wrap_w.config.is_master == 1);
    CHECK(wrap_w.config.downstream_x == 8);  // chip 0 east router: channel 2 = 8-0
    CHECK(wrap_w.config.downstream_y == 0);
    const auto& e3 = p.router(3, FabricDir::East);  // chip 3 ch 8 <-> chip 7 ch 0
    CHECK(e3.eth_channel == 8);
    CHECK(e3.config.peer_chip_id == 7);
    CHECK(e3.config.peer_eth_channel == 0);
    const auto& e7 = p.router(7, FabricDir::East);  // chip 7 ch 4 <-> chip 6 ch 2
    CHECK(e7.eth_channel == 4);
    CHECK(e7.config.peer_eth_channel == 2);
    CHECK(e7.config.is_master == 0);

    CHECK(p.hops(0, 4, FabricDir::West) == 1);
    CHECK(p.hops(0, 4, FabricDir::East) == 7);
    CHECK(p.hops(7, 3, FabricDir::East) == 7);
    CHECK(p.hops(7, 3, FabricDir::West) == 1);
    CHECK(p.hops(2, 6, FabricDir::East) == 3);
    CHECK(p.hops(2, 6, FabricDir::West) == 5);
    CHECK_THROWS_AS(p.hops(2, 2, FabricDir::West), fabric::Error);
}

TEST_CASE("fabric plan: ring of two chips uses two links", "[fabric_plan]") {
    const FabricOptions o = opts(pf::Topology::Ring, {0, 1});
    const FabricPlan p = plan_fabric(n300(), wh_soc(), o);
    check_common(p, o, wh_soc());
    // n300: chip 0 channels 8, 9 <-> chip 1 channels 0, 1.
    CHECK(p.router(0, FabricDir::East).eth_channel == 8);
    CHECK(p.router(1, FabricDir::West).eth_channel == 0);
    CHECK(p.router(1, FabricDir::East).eth_channel == 1);
    CHECK(p.router(0, FabricDir::West).eth_channel == 9);
    CHECK(p.router(1, FabricDir::East).config.dateline == 1);
    CHECK(p.router(0, FabricDir::West).config.dateline == 1);
    CHECK(p.router(0, FabricDir::East).config.dateline == 0);
    CHECK(p.router(1, FabricDir::West).config.dateline == 0);
    CHECK(p.hops(0, 1, FabricDir::East) == 1);
    CHECK(p.hops(0, 1, FabricDir::West) == 1);

    FabricOptions o1 = o;
    o1.link_index = 1;
    CHECK_THAT(bad_plan(n300(), wh_soc(), o1), Contains("have 2 link(s)") &&
                                                   Contains("link 2 does not exist") &&
                                                   Contains("link_index + 1"));
}

TEST_CASE("fabric plan: Blackhole line and ring with the largest payload", "[fabric_plan]") {
    const auto bh = ClusterDescriptor::parse(
        "arch: {0: blackhole, 1: blackhole, 2: blackhole}\nethernet_connections: ["
        "[{chip: 0, chan: 0}, {chip: 1, chan: 1}], [{chip: 1, chan: 0}, {chip: 2, chan: 1}], "
        "[{chip: 2, chan: 0}, {chip: 0, chan: 1}]]\nchips_with_mmio: [{0: 0}]\n",
        "bh3.yaml");
    FabricOptions o = opts(pf::Topology::Line, {0, 1, 2});
    o.payload_bytes = pf::max_payload_bytes(hal::kBlackhole);
    const FabricPlan line = plan_fabric(bh, bh_soc(), o);
    check_common(line, o, bh_soc());
    // The router block runs from 0x22000 (above the 48 KiB router window) to 0x6FC00: 20 slots of
    // the largest payload.
    CHECK(line.router(0, FabricDir::East).config.receiver_slots[0] == 8);  // {8, 16} does not fit
    CHECK(line.router(0, FabricDir::East).config.sender_slots[0] == 8);    // ch0 doubled does
    CHECK(line.router(0, FabricDir::East).config.sender_slots[1] == 4);    // and none more for ch1
    CHECK(line.router(0, FabricDir::East).core.core == CoreCoord{1, 1});
    CHECK(line.router(1, FabricDir::West).core.core == CoreCoord{16, 1});
    o.topology = pf::Topology::Ring;
    const FabricPlan ring = plan_fabric(bh, bh_soc(), o);
    check_common(ring, o, bh_soc());
    CHECK(ring.router(0, FabricDir::East).config.sender_slots[1] == 4);  // {2, 4} and 2 more
    CHECK(ring.router(0, FabricDir::East).config.receiver_slots[0] == 4);
    CHECK(ring.router(2, FabricDir::East).config.dateline == 1);
    CHECK(ring.router(0, FabricDir::West).config.dateline == 1);
}

TEST_CASE("fabric plan: every bad option is a one-line BadInput", "[fabric_plan]") {
    const auto line = [](std::vector<ChipId> c) { return opts(pf::Topology::Line, std::move(c)); };
    CHECK_THAT(bad_plan(t3k(), wh_soc(), line({0})), Contains("at least 2 chips, got 1"));
    CHECK_THAT(bad_plan(t3k(), wh_soc(), line({})), Contains("at least 2 chips, got 0"));
    CHECK_THAT(bad_plan(t3k(), wh_soc(), line({0, 1, 0})),
               Contains("chip 0 is listed twice (0,1,0)"));
    CHECK_THAT(bad_plan(t3k(), wh_soc(), line({0, 8})),
               Contains("chip 8 is not in cluster") && Contains("t3k_cluster.yaml"));
    CHECK_THAT(bad_plan(t3k(), wh_soc(), line({0, 2})),
               Contains("chips 0 and 2 are neighbours in the line (0,2) but not connected"));
    CHECK_THAT(bad_plan(t3k(), wh_soc(), opts(pf::Topology::Ring, {0, 1, 2, 3})),
               Contains("chips 3 and 0 are neighbours in the ring"));
    {
        auto o = line({0, 1});
        o.topology = static_cast<pf::Topology>(7);
        CHECK_THAT(bad_plan(t3k(), wh_soc(), o), Contains("unknown topology 7"));
    }
    for (uint32_t payload : {0u, 100u, 7632u, 1u << 31}) {
        auto o = line({0, 1});
        o.payload_bytes = payload;
        CHECK_THAT(bad_plan(t3k(), wh_soc(), o),
                   Contains(fmt::format("payload_bytes {} must be", payload)) &&
                       Contains("at most 7616 on wormhole_b0"));
    }
    {
        auto o = line({0, 1});
        o.sender_slots = 4;
        CHECK_THAT(bad_plan(t3k(), wh_soc(), o), Contains("set both or neither"));
        o.sender_slots = 0;
        o.receiver_slots = 4;
        CHECK_THAT(bad_plan(t3k(), wh_soc(), o), Contains("set both or neither"));
    }
    {
        auto o = line({0, 1});
        o.sender_slots = 30;
        o.receiver_slots = 30;
        CHECK_THAT(
            bad_plan(t3k(), wh_soc(), o),
            Contains("30 sender / 30 receiver slots of 4416 B do not fit L1 on wormhole_b0"));
        o.payload_bytes = 16;  // fits L1, but more than the router's bookkeeping
        for (const auto& [s, r] :
             {std::pair{33u, 4u}, std::pair{4u, 33u}, std::pair{0x10000000u, 1u}}) {
            o.sender_slots = s;
            o.receiver_slots = r;
            CHECK_THAT(bad_plan(t3k(), wh_soc(), o),
                       Contains(fmt::format("{} sender / {} receiver slots: at most 32 per channel",
                                            s, r)));
        }
        o.sender_slots = 32;
        o.receiver_slots = 32;
        CHECK(plan_fabric(t3k(), wh_soc(), o).routers.front().config.receiver_slots[0] == 32);
    }
    {
        auto o = line({0, 1});
        o.link_index = 2;
        CHECK_THAT(bad_plan(t3k(), wh_soc(), o),
                   Contains("chips 0 and 1 have 2 link(s)") && Contains("link 2 does not exist"));
    }
    {
        auto o = line({0, 1});
        o.handshake_timeout_us = 0;
        CHECK_THAT(bad_plan(t3k(), wh_soc(), o), Contains("handshake_timeout_us must be > 0"));
        o.handshake_timeout_us = 1;
        o.progress_timeout_us = 0xFFFFFFFF;
        CHECK_THAT(bad_plan(t3k(), wh_soc(), o),
                   Contains("progress_timeout_us 4294967295 is too long (at most 60000000 us)"));
        o.progress_timeout_us = 1;
        o.stall_timeout_us = 60'000'001;  // 0 is allowed: off
        CHECK_THAT(bad_plan(t3k(), wh_soc(), o),
                   Contains("stall_timeout_us 60000001 is too long (at most 60000000 us)"));
    }
    // A SoC descriptor of another arch than the cluster.
    CHECK_THAT(bad_plan(t3k(), bh_soc(), line({0, 1})),
               Contains("is wormhole_b0 but SoC descriptor") && Contains("is blackhole"));
    // Longer than the 1D route allows.
    {
        const auto& galaxy = fabric::test::cluster("galaxy_8x4_cluster.yaml");
        std::vector<ChipId> chips(18);
        std::iota(chips.begin(), chips.end(), 0u);
        CHECK_THAT(bad_plan(galaxy, wh_soc(), line(chips)),
                   Contains("18 chips in a line: at most 17"));
    }
}

TEST_CASE("fabric plan: a small SoC descriptor: missing channels, no room in L1", "[fabric_plan]") {
    const std::string soc_head = R"(grid:
  x_size: 4
  y_size: 3
arc: [0-2]
pcie: [0-1]
dram: [[0-0], [3-0, 3-1]]
eth: [1-0, 2-0]
functional_workers: [1-1, 2-1, 1-2, 2-2]
router_only: [3-2]
worker_l1_size: 1499136
dram_bank_size: 2147483648
arch_name: wormhole_b0
)";
    const auto tiny = SocDescriptor::parse(soc_head + "eth_l1_size: 73728\n", "tiny.yaml");
    const auto roomy = SocDescriptor::parse(soc_head + "eth_l1_size: 262144\n", "roomy.yaml");
    const auto two = ClusterDescriptor::parse(
        "arch: {0: wormhole_b0, 1: wormhole_b0}\n"
        "ethernet_connections: [[{chip: 0, chan: 0}, {chip: 1, chan: 1}]]\n"
        "chips_with_mmio: [{0: 0}]\n",
        "two.yaml");
    const auto o = opts(pf::Topology::Line, {0, 1});
    CHECK_THAT(bad_plan(two, tiny, o), Contains("does not fit L1 even with 1 sender / 2 receiver"));
    const FabricPlan p = plan_fabric(two, roomy, o);
    CHECK(p.router(0, FabricDir::East).core.core == CoreCoord{1, 0});
    CHECK(p.router(1, FabricDir::West).core.core == CoreCoord{2, 0});
    // t3k uses channel 2 and 4, which the two-channel chip does not have.
    CHECK_THAT(bad_plan(t3k(), roomy, o), Contains("roomy.yaml: eth channel 2 does not exist"));
}

TEST_CASE("fabric protocol: route encoding", "[fabric_plan][protocol]") {
    CHECK(pf::route_unicast(1) == 0b01);
    CHECK(pf::route_unicast(2) == 0b0110);
    CHECK(pf::route_unicast(3) == 0b011010);
    CHECK(pf::route_unicast(16) == 0x6AAAAAAAu);
    CHECK(pf::route_multicast(1, 1) == pf::route_unicast(1));
    CHECK(pf::route_multicast(2, 1) == pf::route_unicast(2));
    CHECK(pf::route_multicast(1, 3) == 0b011111);    // w+f, w+f, w
    CHECK(pf::route_multicast(3, 2) == 0b01111010);  // f, f, w+f, w
    CHECK(pf::route_multicast(1, 16) == 0x7FFFFFFFu);
    // Decoding a route hop by hop visits exactly the chips it names.
    for (uint32_t start = 1; start <= 16; ++start) {
        for (uint32_t range = 1; start + range - 1 <= 16; ++range) {
            uint32_t r = pf::route_multicast(start, range);
            std::vector<uint32_t> written;
            uint32_t hop = 1;
            for (;; ++hop) {
                const auto a = static_cast<pf::HopAction>(r & 3);
                REQUIRE(a != pf::HopAction::Invalid);
                if (a == pf::HopAction::Write || a == pf::HopAction::WriteAndForward) {
                    written.push_back(hop);
                }
                if (a == pf::HopAction::Write) break;
                r >>= 2;
            }
            CHECK(written.size() == range);
            CHECK(written.front() == start);
            CHECK(written.back() == start + range - 1);
        }
    }
    CHECK(pf::route_hops_ok(1));
    CHECK(pf::route_hops_ok(16));
    CHECK_FALSE(pf::route_hops_ok(0));
    CHECK_FALSE(pf::route_hops_ok(17));
    CHECK(pf::route_multicast_ok(16, 1));
    CHECK_FALSE(pf::route_multicast_ok(16, 2));
    CHECK_FALSE(pf::route_multicast_ok(0, 2));
    CHECK_FALSE(pf::route_multicast_ok(1, 0));
}

TEST_CASE("fabric protocol: the router block sits above the router image window",
          "[fabric_plan][protocol]") {
    // Wormhole: above the routing firmware's 28 KiB at ROUTING_FW_RESERVED_BASE 0x11000, which
    // carries the host's remote-chip accesses.
    CHECK(pf::router_l1_base(hal::kWormholeB0) == 0x18000);
    // ... and below the router images' 2 KiB cold window, under the test mailbox at 0x3FBE0.
    CHECK(pf::router_l1_top(hal::kWormholeB0) == 0x3FBE0 - 0x800);
    // Blackhole: the first 4 KiB boundary above the 48 KiB router window [0x15740, 0x21740).
    CHECK(pf::router_l1_base(hal::kBlackhole) == 0x22000);
    CHECK(pf::router_l1_top(hal::kBlackhole) == 0x6FC00);
    CHECK(pf::router_layout(hal::kBlackhole, pf::RouterConfig{}).config == 0x22000);
    CHECK(pf::endpoint_status_addr(hal::kBlackhole) == 0x22000 + sizeof(pf::RouterConfig));
    CHECK(pf::router_block_placed(hal::kWormholeB0));
    CHECK(pf::router_block_placed(hal::kBlackhole));
    // A router window reaching into the test mailbox leaves no block: refused.
    hal::ArchMap bh = hal::kBlackhole;
    bh.router_fw = {.base = 0x60000, .size = 0xFC00};
    CHECK_FALSE(pf::router_block_placed(bh));
}

TEST_CASE("fabric protocol: router layout on both arches", "[fabric_plan][protocol]") {
    for (const hal::ArchMap* a : {&hal::kWormholeB0, &hal::kBlackhole}) {
        INFO(a->name);
        for (uint32_t payload : {16u, 1024u, pf::kDefaultPayloadBytes, pf::max_payload_bytes(*a)}) {
            for (const bool ring : {false, true}) {
                pf::RouterConfig c{};
                c.payload_bytes = payload;
                c.sender_slots[0] = c.sender_slots[1] = 1;
                c.sender_slots[2] = ring ? 1 : 0;
                c.receiver_slots[0] = 2;
                c.receiver_slots[1] = ring ? 2 : 0;
                INFO("payload " << payload << (ring ? " ring" : " line"));
                check_layout(*a, c, pf::router_layout(*a, c), a->eth_l1_size);
                // worker_channel agrees with the layout
                const auto wc = pf::worker_channel(*a, c, 3, 4);
                CHECK(wc.slots_base == pf::router_layout(*a, c).sender_base[0]);
                CHECK(wc.num_slots == 1);
            }
        }
        // Too many slots: fits is false.
        pf::RouterConfig c{};
        c.payload_bytes = pf::max_payload_bytes(*a);
        c.sender_slots[0] = c.sender_slots[1] = c.sender_slots[2] = 8;
        c.receiver_slots[0] = c.receiver_slots[1] = 16;
        CHECK_FALSE(pf::router_layout(*a, c).fits);
    }
}
