// Mesh traffic planning (fabric/mesh_traffic.h) without a model: workers and sinks on harvested
// chips (never on a harvested row), sizes refused, every flow's seq word and delivery counter.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <span>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "test_elf.h"

using fabric::ChipId;
using fabric::CoreCoord;
using fabric::MeshFlow;
using fabric::SocDescriptor;
using fabric::test::wh_soc;
namespace pf = protocol::fabric;

namespace {

fabric::MeshPlan t3k_plan() {
    fabric::MeshFabricOptions o;
    o.topology = pf::Topology::Mesh;
    o.planes = {0};
    return fabric::plan_mesh(fabric::test::mesh_graph("t3k_mesh_graph.yaml"),
                             fabric::test::cluster("t3k_cluster.yaml"), wh_soc(), o);
}

// Every device of the t3k mesh (2 x 4) to every other on plane 0.
std::vector<MeshFlow> all_to_all() {
    std::vector<MeshFlow> flows;
    const uint32_t devices = 8;
    for (uint32_t s = 0; s < devices; ++s) {
        for (uint32_t d = 0; d < devices; ++d) {
            if (s != d) flows.push_back({{0, s}, {0, d}, 0});
        }
    }
    return flows;
}

const fabric::ElfImage& traffic_image() {
    static const auto image = fabric::ElfImage::parse(
        fabric::test::program_elf({0x0000006f}, hal::kWormholeB0.app_fw_base), "traffic.elf");
    return image;
}

}  // namespace

TEST_CASE("mesh traffic: no worker or sink on a harvested row", "[mesh][traffic][harvest]") {
    const auto plan = t3k_plan();
    const auto flows = all_to_all();
    const auto plain = fabric::plan_mesh_traffic(plan, wh_soc(), traffic_image(), flows);
    // Unharvested, the first worker of a chip and its sink (worker core 40) sit on rows 1 and 7.
    const ChipId chip0 = plain.workers.front().target.core.chip;
    CHECK(plain.workers.front().target.core.core == CoreCoord{1, 1});
    CHECK(plain.workers.front().sinks.front().core == CoreCoord{1, 7});

    // Harvest row 1 (bit 1) and row 7 (bit 8) of that chip.
    const SocDescriptor harvested = wh_soc().harvested((1u << 1) | (1u << 8));
    const fabric::ChipSocs socs = [&](ChipId c) -> const SocDescriptor& {
        return c == chip0 ? harvested : wh_soc();
    };
    const auto t = fabric::plan_mesh_traffic(plan, socs, traffic_image(), flows);
    REQUIRE(t.workers.size() == plain.workers.size());
    size_t on_chip0 = 0, sinks_on_chip0 = 0;
    for (const auto& w : t.workers) {
        if (w.target.core.chip == chip0) {
            ++on_chip0;
            CHECK(harvested.core_type(w.target.core.core) == fabric::CoreType::Worker);
        }
        for (const auto& sink : w.sinks) {
            if (sink.chip != chip0) continue;
            ++sinks_on_chip0;
            // Worker core 40 of the harvested chip: rows 2, 3, 4, 5, 8 hold cores 0..39.
            CHECK(sink.core == CoreCoord{1, 9});
        }
    }
    CHECK(on_chip0 > 0);
    CHECK(sinks_on_chip0 == 7);  // every other device sends to chip 0
    CHECK(t.workers.front().target.core.core == CoreCoord{1, 2});
    // Other chips keep the unharvested placement.
    for (size_t i = 0; i < t.workers.size(); ++i) {
        if (t.workers[i].target.core.chip != chip0) {
            CHECK(t.workers[i].target.core == plain.workers[i].target.core);
        }
    }
}

TEST_CASE("mesh traffic: sizes that would wrap 32 bits are refused", "[mesh][traffic][bad]") {
    const auto plan = t3k_plan();
    fabric::MeshTrafficOptions o;
    o.packets = 0x10000;
    o.slots = 0x10000;
    o.packet_bytes = 0x10000;
    CHECK(fabric::test::expect_error(fabric::ErrorCategory::BadInput, [&] {
              fabric::plan_mesh_traffic(plan, wh_soc(), traffic_image(), all_to_all(), o);
          }) == "mesh traffic: 65536 slots of 65536 B do not fit in any L1");
}

TEST_CASE("HarvestedSocs: each chip's descriptor as the cluster harvests it",
          "[traffic][harvest]") {
    const auto cluster = fabric::ClusterDescriptor::parse(
        "arch: {0: wormhole_b0, 1: wormhole_b0, 2: wormhole_b0}\n"
        "ethernet_connections: []\nchips_with_mmio: [{0: 0}]\n"
        "harvesting:\n"
        "  1: {noc_translation: true, harvest_mask: 2}\n"
        "  2: {noc_translation: true, harvest_mask: 2}\n",
        "h.yaml");
    const fabric::HarvestedSocs socs(wh_soc(), cluster);
    CHECK(socs.chip_count() == 3);
    CHECK(socs(0).count(fabric::CoreType::Worker) == 80);
    CHECK(socs(1).count(fabric::CoreType::Worker) == 72);
    CHECK(&socs(1) == &socs(2));  // one copy per distinct mask
    CHECK(fabric::test::expect_error(fabric::ErrorCategory::BadInput, [&] { socs(3); }) ==
          "h.yaml: chip 3 does not exist (chips 0..2)");
    CHECK(fabric::test::expect_error(
              fabric::ErrorCategory::BadInput,
              [&] { fabric::HarvestedSocs(fabric::test::bh_soc(), cluster); }) ==
          "h.yaml: cluster is wormhole_b0 but " + fabric::test::descriptor_dir() +
              "/blackhole_140_arch.yaml describes blackhole");
    // Usable wherever a ChipSocs is.
    const fabric::ChipSocs as_function = std::cref(socs);
    CHECK(&as_function(2) == &socs(2));
}

TEST_CASE("mesh traffic: every flow's seq, and with count_deliveries its counter",
          "[mesh][traffic][account]") {
    const auto plan = t3k_plan();
    fabric::MeshTrafficOptions o;
    o.packets = 8;
    o.packet_bytes = 512;
    o.first_flow_id = 7;
    const auto plain = fabric::plan_mesh_traffic(plan, wh_soc(), traffic_image(), all_to_all(), o);
    o.count_deliveries = true;
    const auto t = fabric::plan_mesh_traffic(plan, wh_soc(), traffic_image(), all_to_all(), o);
    CHECK(plain.region_stride() == 4 * 512);
    CHECK(t.region_stride() == 4 * 512 + 16);
    std::map<fabric::CoreLocation, std::vector<uint32_t>> regions;  // per sink core
    for (size_t i = 0; i < t.workers.size(); ++i) {
        const auto& w = t.workers[i];
        CHECK(plain.workers[i].args.send_type ==
              static_cast<uint32_t>(pf::NocSendType::UnicastWrite));
        CHECK(w.args.send_type == static_cast<uint32_t>(pf::NocSendType::FusedWriteAtomicInc));
        for (size_t j = 0; j < w.dests.size(); ++j) {
            const auto& d = w.dests[j];
            INFO("flow " << w.flows[j]);
            CHECK(d.seq_base == protocol::traffic_seq(7 + static_cast<uint32_t>(w.flows[j]), 0));
            CHECK(plain.workers[i].dests[j].seq_base == d.seq_base);
            CHECK(d.sem_x == w.sinks[j].core.x);
            CHECK(d.sem_y == w.sinks[j].core.y);
            CHECK(d.sem_addr == d.addr + 4 * 512);
            CHECK(plain.workers[i].dests[j].sem_addr == 0);
            regions[w.sinks[j]].push_back(d.addr);
        }
    }
    for (auto& [sink, addrs] : regions) {
        std::sort(addrs.begin(), addrs.end());
        for (size_t n = 0; n < addrs.size(); ++n)
            CHECK(addrs[n] == fabric::mesh_sink_base(hal::Arch::WormholeB0) + n * (4 * 512 + 16));
    }
}

TEST_CASE("mesh traffic: plans the seq word cannot number are refused",
          "[mesh][traffic][account][bad]") {
    const auto plan = t3k_plan();
    fabric::MeshTrafficOptions o;
    o.packets = 65537;
    CHECK(
        fabric::test::expect_error(
            fabric::ErrorCategory::BadInput,
            [&] { fabric::plan_mesh_traffic(plan, wh_soc(), traffic_image(), all_to_all(), o); }) ==
        "mesh traffic: 65537 packets per flow: a packet's seq word numbers at most 65536 "
        "per flow");
    o.packets = 4;
    o.first_flow_id = 65500;  // 56 flows: ids 65500 .. 65555
    CHECK(
        fabric::test::expect_error(fabric::ErrorCategory::BadInput, [&] {
            fabric::plan_mesh_traffic(plan, wh_soc(), traffic_image(), all_to_all(), o);
        }) == "mesh traffic: flows 65500 to 65555: a packet's seq word names at most 65536 flows");
    o.first_flow_id = 65536 - 56;  // the last ids fit
    CHECK(
        fabric::plan_mesh_traffic(plan, wh_soc(), traffic_image(), all_to_all(), o).workers.size() >
        0);
}

TEST_CASE("mesh traffic: what each flow sent and its sink counted, for the account",
          "[mesh][traffic][account]") {
    // Round-robin over 3 destinations: 7 packets are 3, 2, 2.
    CHECK(fabric::sent_to_dest(7, 3, 0) == 3);
    CHECK(fabric::sent_to_dest(7, 3, 1) == 2);
    CHECK(fabric::sent_to_dest(7, 3, 2) == 2);
    CHECK(fabric::sent_to_dest(0, 3, 0) == 0);
    const auto plan = t3k_plan();
    fabric::MeshTrafficOptions o;
    o.packets = 4;
    o.first_flow_id = 3;
    const auto t = fabric::plan_mesh_traffic(plan, wh_soc(), traffic_image(), all_to_all(), o);
    // The first worker stopped after 5 of its packets; no outcome for the others (not run).
    const auto& w0 = t.workers[0];
    REQUIRE(w0.flows.size() >= 2);
    std::vector<fabric::MeshWorkerOutcome> outcomes(1);
    outcomes[0].results.packets_sent = 5;
    std::vector<uint32_t> delivered(t.flows.size(), 0);
    delivered[w0.flows[0]] = 2;
    const auto tallies = fabric::mesh_flow_tallies(t, outcomes, delivered);
    REQUIRE(tallies.size() == 56);
    const auto& f0 = tallies[w0.flows[0]];
    CHECK(f0.name == fmt::format("{} -> {} plane 0", t.flows[w0.flows[0]].src.str(),
                                 t.flows[w0.flows[0]].dst.str()));
    CHECK(f0.id == 3 + w0.flows[0]);
    CHECK(f0.sent == fabric::sent_to_dest(5, w0.args.num_dests, 0));
    CHECK(f0.delivered == 2);
    CHECK(tallies[w0.flows[1]].sent == fabric::sent_to_dest(5, w0.args.num_dests, 1));
    CHECK(tallies[t.workers[1].flows[0]].sent == 0);
    CHECK(tallies[0].name == "M0D0 -> M0D1 plane 0");
}

TEST_CASE("mesh traffic: which packets a region's wrong positions held", "[mesh][traffic]") {
    // 10 packets round 4 positions: position 0 ends with packet 8, 1 with 9, 2 with 6, 3 with 7.
    CHECK(fabric::last_packet_at(10, 4, 0) == 8);
    CHECK(fabric::last_packet_at(10, 4, 1) == 9);
    CHECK(fabric::last_packet_at(10, 4, 2) == 6);
    CHECK(fabric::last_packet_at(10, 4, 3) == 7);
    CHECK(fabric::last_packet_at(4, 4, 3) == 3);
    const uint32_t positions[] = {1, 2};
    CHECK(fabric::packets_at(10, 4, positions) == "packets 9, 6");
    CHECK(fabric::packets_at(10, 4, std::span(positions, 1)) == "packet 9");
    // Two positions of 16 B, the second spoilt in its last word.
    std::vector<uint8_t> got(32);
    for (uint32_t p = 0; p < 2; ++p) {
        for (uint32_t w = 0; w < 4; ++w) {
            const uint32_t v = protocol::pattern_word(0x1000 + p, w) ^ (p == 1 && w == 3 ? 1 : 0);
            std::memcpy(got.data() + 16 * p + 4 * w, &v, 4);
        }
    }
    const auto c = fabric::check_pattern(got, 16, 2, 0x1000);
    CHECK(c.bad_words == 1);
    CHECK(c.first_bad == 28);
    CHECK(c.bad_positions == std::vector<uint32_t>{1});
}
