// fabric::ClusterDescriptor: the shipped cluster files (exact chip and link counts, wiring rules)
// and one test per bad input, each a one-line Error(BadDescriptor) naming the field.
#include "fabric/cluster_descriptor.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "expect_error.h"

using Catch::Matchers::Contains;
using fabric::ClusterDescriptor;
using fabric::ErrorCategory;
using fabric::EthPortRef;
namespace t = fabric::test;

namespace {

ClusterDescriptor shipped(const std::string& name) {
    return ClusterDescriptor::load_file(std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/" + name);
}

// Every port used once, both ends valid: what the loader guarantees, checked independently.
void check_ports_unique(const ClusterDescriptor& d) {
    std::set<EthPortRef> seen;
    for (const auto& c : d.connections()) {
        CHECK(seen.insert(c.a).second);
        CHECK(seen.insert(c.b).second);
        CHECK(c.a.chan < fabric::arch_eth_channels(d.arch()));
        CHECK(c.b.chan < fabric::arch_eth_channels(d.arch()));
    }
}

std::string bad(const std::string& yaml) {
    return t::expect_error(ErrorCategory::BadDescriptor,
                           [&] { ClusterDescriptor::parse(yaml, "c.yaml"); });
}

const std::string kHead = "arch: {0: wormhole_b0, 1: wormhole_b0}\nchips_with_mmio: [{0: 0}]\n";

}  // namespace

TEST_CASE("cluster descriptor: n300", "[cluster_descriptor]") {
    const auto d = shipped("n300_cluster.yaml");
    CHECK(d.arch() == hal::Arch::WormholeB0);
    CHECK(d.chip_count() == 2);
    REQUIRE(d.connections().size() == 2);
    CHECK(d.peer({0, 8}) == EthPortRef{1, 0});
    CHECK(d.peer({0, 9}) == EthPortRef{1, 1});
    CHECK(d.peer({1, 1}) == EthPortRef{0, 9});
    CHECK_FALSE(d.peer({0, 0}).has_value());
    CHECK(d.connections()[0].routing_enabled == true);
    CHECK(d.is_mmio(0));
    CHECK_FALSE(d.is_mmio(1));
    CHECK(d.eth_coord(1)->x == 1);
    CHECK(d.connected_channels(0) == std::vector<uint32_t>{8, 9});
}

TEST_CASE("cluster descriptor: t3k is a 2x4 mesh of n300 pairs", "[cluster_descriptor]") {
    const auto d = shipped("t3k_cluster.yaml");
    CHECK(d.chip_count() == 8);
    CHECK(d.connections().size() == 20);
    CHECK(d.mmio_chips().size() == 4);
    check_ports_unique(d);
    // Each board: chip k <-> chip k+4 on two links; rows: neighbours on two links.
    std::map<std::pair<uint32_t, uint32_t>, int> edges;
    for (const auto& c : d.connections())
        ++edges[{std::min(c.a.chip, c.b.chip), std::max(c.a.chip, c.b.chip)}];
    CHECK(edges.size() == 10);
    for (uint32_t k = 0; k < 4; ++k) CHECK(edges[{k, k + 4}] == 2);
    for (uint32_t k = 0; k < 3; ++k) {
        CHECK(edges[{k, k + 1}] == 2);
        CHECK(edges[{k + 4, k + 5}] == 2);
    }
}

TEST_CASE("cluster descriptor: galaxy is an 8x4 mesh with four links per edge",
          "[cluster_descriptor]") {
    const auto d = shipped("galaxy_8x4_cluster.yaml");
    CHECK(d.chip_count() == 32);
    CHECK(d.connections().size() == 208);
    CHECK(d.mmio_chips().size() == 32);
    check_ports_unique(d);
    std::map<std::pair<uint32_t, uint32_t>, int> edges;
    for (const auto& c : d.connections())
        ++edges[{std::min(c.a.chip, c.b.chip), std::max(c.a.chip, c.b.chip)}];
    CHECK(edges.size() == 52);
    for (const auto& [e, n] : edges) {
        INFO(e.first << "-" << e.second);
        CHECK(n == 4);
        const uint32_t ra = e.first / 4, ca = e.first % 4, rb = e.second / 4, cb = e.second % 4;
        CHECK(((ra == rb && cb == ca + 1) || (ca == cb && rb == ra + 1)));
    }
    // Corner chip 0 has only east and south; an inner chip uses all 16 channels.
    CHECK(d.connected_channels(0).size() == 8);
    CHECK(d.connected_channels(5).size() == 16);
}

TEST_CASE("cluster descriptor: tt-umd spellings and optional keys", "[cluster_descriptor]") {
    const auto d = ClusterDescriptor::parse(
        "arch: {0: Wormhole, 1: Wormhole}\n"
        "chips: {0: [0,0,0,0], 1: {}}\n"
        "ethernet_connections: [[{chip: 0, chan: 8}, {chip: 1, chan: 0}]]\n"
        "ethernet_connections_to_remote_devices: []\n"
        "chips_with_mmio: [0: 0]\n"
        "harvesting: {0: {noc_translation: true, harvest_mask: 65}}\n"
        "chip_unique_ids: {0: 12345}\n"
        "io_device_type: PCIe\n"
        "boards: [[{board_id: 7}, {board_type: n300}, {chips: [0, 1]}]]\n",
        "umd.yaml");
    CHECK(d.chip_count() == 2);
    CHECK(d.connections().size() == 1);
    CHECK_FALSE(d.connections()[0].routing_enabled.has_value());
    CHECK(d.is_mmio(0));
    CHECK_FALSE(d.eth_coord(1).has_value());
    const auto bh = ClusterDescriptor::parse(
        "arch: {0: blackhole, 1: blackhole}\nethernet_connections: [[{chip: 0, chan: 13}, {chip: "
        "1, chan: 2}]]\n"
        "chips_with_mmio: [{0: 1}, {1: 0}]\n",
        "p300.yaml");
    CHECK(bh.arch() == hal::Arch::Blackhole);
    CHECK(bh.mmio_chips().size() == 2);
    const auto solo = ClusterDescriptor::unconnected(hal::Arch::Blackhole, 3);
    CHECK(solo.chip_count() == 3);
    CHECK(solo.connections().empty());
}

TEST_CASE("cluster descriptor: each bad input is a one-line error naming the field",
          "[cluster_descriptor]") {
    CHECK_THAT(bad("arch: {0: wormhole_b0\n  ethernet_connections: ["),
               Contains("c.yaml:") && Contains("malformed YAML"));
    CHECK_THAT(bad("- 1\n- 2\n"), Contains("must be a mapping"));
    CHECK_THAT(bad("ethernet_connections: []\nchips_with_mmio: []\n"),
               Contains("field 'arch': required field is missing"));
    CHECK_THAT(bad("arch: {0: wormhole_b0}\nchips_with_mmio: []\n"),
               Contains("field 'ethernet_connections': required field is missing"));
    CHECK_THAT(bad("arch: {0: wormhole_b0}\nethernet_connections: []\n"),
               Contains("field 'chips_with_mmio': required field is missing"));
    CHECK_THAT(bad("arch: {0: quasar}\nethernet_connections: []\nchips_with_mmio: []\n"),
               Contains("field 'arch.0': unknown arch 'quasar'"));
    CHECK_THAT(bad("arch: {0: wormhole_b0, 1: blackhole}\nethernet_connections: "
                   "[]\nchips_with_mmio: []\n"),
               Contains("one arch per cluster"));
    CHECK_THAT(bad("arch: {0: wormhole_b0, 2: wormhole_b0}\nethernet_connections: "
                   "[]\nchips_with_mmio: []\n"),
               Contains("chip ids must be 0..1 without gaps; chip 1 is missing"));
    CHECK_THAT(bad(kHead + "ethernet_connections: [[{chip: 0, chan: 8}, {chip: 2, chan: 0}]]\n"),
               Contains("c.yaml:3: field 'ethernet_connections[0][1].chip': unknown chip 2"));
    CHECK_THAT(
        bad(kHead + "ethernet_connections: [[{chip: 0, chan: 16}, {chip: 1, chan: 0}]]\n"),
        Contains(
            "field 'ethernet_connections[0][0].chan': channel 16 is out of range for wormhole_b0 "
            "(channels 0..15)"));
    CHECK_THAT(bad("arch: {0: blackhole, 1: blackhole}\nchips_with_mmio: []\n"
                   "ethernet_connections: [[{chip: 0, chan: 14}, {chip: 1, chan: 0}]]\n"),
               Contains("channel 14 is out of range for blackhole (channels 0..13)"));
    CHECK_THAT(bad(kHead + "ethernet_connections:\n  - [{chip: 0, chan: 8}, {chip: 1, chan: 0}]\n"
                           "  - [{chip: 1, chan: 1}, {chip: 0, chan: 8}]\n"),
               Contains("field 'ethernet_connections[1][1]': chip 0 chan 8 is already used by "
                        "ethernet_connections[0][0]"));
    CHECK_THAT(bad(kHead + "ethernet_connections: [[{chip: 0, chan: 3}, {chip: 0, chan: 3}]]\n"),
               Contains("chip 0 chan 3 is connected to itself"));
    CHECK_THAT(bad(kHead + "ethernet_connections: [[{chip: 0, chan: 3}]]\n"),
               Contains("field 'ethernet_connections[0]': expected [{chip, chan}, {chip, chan}]"));
    CHECK_THAT(bad(kHead + "ethernet_connections: [[{chip: 0}, {chip: 1, chan: 0}]]\n"),
               Contains("field 'ethernet_connections[0][0].chan': required field is missing"));
    CHECK_THAT(bad(kHead + "ethernet_connections: [[{chip: 0, chan: x}, {chip: 1, chan: 0}]]\n"),
               Contains("expected an unsigned integer, got the scalar 'x'"));
    CHECK_THAT(bad(kHead + "ethernet_connections: [[{chip: 0, chan: 1}, {chip: 1, chan: 0}, "
                           "{routing_enabled: maybe}]]\n"),
               Contains("routing_enabled': expected true or false"));
    CHECK_THAT(bad("arch: {0: wormhole_b0}\nethernet_connections: []\nchips_with_mmio: [{3: 0}]\n"),
               Contains("field 'chips_with_mmio[0]': unknown chip 3"));
    CHECK_THAT(bad("arch: {0: wormhole_b0}\nethernet_connections: []\nchips_with_mmio: []\nchips: "
                   "{0: [1, 2]}\n"),
               Contains("field 'chips.0': expected [x, y, rack, shelf]"));
    CHECK_THAT(t::expect_error(ErrorCategory::BadInput,
                               [] { ClusterDescriptor::load_file("/nonexistent/c.yaml"); }),
               Contains("/nonexistent/c.yaml: cannot open cluster descriptor"));
}
