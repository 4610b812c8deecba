// Clusters built from the shipped cluster descriptors (soc_descriptors/*_cluster.yaml), with data
// moving over every link they declare: the eth_ping_pong kernel runs on both ends of each link at
// once (Master on the first-listed end), so every chip of an n300 (2 chips) and a T3000 (8 chips)
// sends and checks traffic in both directions, in one lockstep run.
#include "fabric/cluster_descriptor.h"

#include <catch2/catch.hpp>

#include "fw_harness.h"

using protocol::KernelRole;
using simfw::Core;
using simfw::Rig;

namespace {

void run_every_link(const std::string& file, uint32_t expect_chips, uint32_t expect_links) {
    const auto desc =
        fabric::ClusterDescriptor::load_file(std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/" + file);
    REQUIRE(desc.chip_count() == expect_chips);
    REQUIRE(desc.connections().size() == expect_links);

    Rig rig(desc);

    protocol::PingPongArgs args{};
    args.iterations = 4;
    args.payload_bytes = 256;
    args.buf_base = rig.l1_base();
    args.timeout_us = 2000;
    std::vector<std::pair<Core, Core>> pairs;
    for (const auto& c : desc.connections()) {
        const Core m = rig.eth(c.a.chip, c.a.chan), s = rig.eth(c.b.chip, c.b.chan);
        rig.launch(m, "eth_ping_pong", KernelRole::Master, args);
        rig.launch(s, "eth_ping_pong", KernelRole::Subordinate, args);
        pairs.emplace_back(m, s);
    }
    const auto report = rig.run(10'000'000);
    REQUIRE(report.done);
    REQUIRE(rig.drain_links());

    const uint32_t slot = args.payload_bytes + sizeof(protocol::EthChannelSync);
    std::vector<bool> chip_seen(desc.chip_count(), false);
    for (const auto& [m, s] : pairs) {
        INFO(m.str() << " <-> " << s.str());
        REQUIRE_KERNEL_PASSED(rig, m);
        REQUIRE_KERNEL_PASSED(rig, s);
        const auto rm = rig.results<protocol::PingPongResults>(m);
        const auto rs = rig.results<protocol::PingPongResults>(s);
        CHECK(rm.iterations_done == args.iterations);
        CHECK(rs.iterations_done == args.iterations);
        CHECK(rm.mismatches == 0);
        CHECK(rs.mismatches == 0);
        // Exactly this pair's protocol crossed its link: hello + pings + FIN one way, ack + pongs
        // back.
        const auto& ab = rig.link(m).stats(sim::eth::Dir::AtoB);
        const auto& ba = rig.link(m).stats(sim::eth::Dir::BtoA);
        CHECK(ab.bytes_delivered + ba.bytes_delivered == 16 + 16 + 16 + 2 * args.iterations * slot);
        chip_seen[m.chip] = chip_seen[s.chip] = true;
    }
    for (uint32_t chip = 0; chip < desc.chip_count(); ++chip) {
        INFO("chip " << chip);
        CHECK(chip_seen[chip]);
    }
}

}  // namespace

TEST_CASE("n300 from its cluster descriptor: ping-pong over both links",
          "[sim][cluster][descriptor]") {
    run_every_link("n300_cluster.yaml", 2, 2);
}

TEST_CASE("T3000 from its cluster descriptor: ping-pong over all 20 links of 8 chips at once",
          "[sim][cluster][descriptor]") {
    run_every_link("t3k_cluster.yaml", 8, 20);
}
