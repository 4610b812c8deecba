// fabric::ClusterDescriptor: the shipped cluster files (exact chip and link counts, wiring rules)
// and one test per bad input, each a one-line Error(BadDescriptor) naming the field.
#include "fabric/cluster_descriptor.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "expect_error.h"
#include "memory_cap.h"

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
    CHECK_THAT(
        bad(kHead + "ethernet_connections:\n  - [{chip: 0, chan: 8}, {chip: 1, chan: 0}]\n"
                    "  - [{chip: 1, chan: 1}, {chip: 0, chan: 8}]\n"),
        Contains("c.yaml:5: field 'ethernet_connections[1]': chip 0 chan 8 is joined to chip "
                 "1 chan 1 here but to chip 1 chan 0 by ethernet_connections[0]"));
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

namespace {

// A cluster of `chips` chips as tt-umd writes one, without links: what a big file costs.
std::string unlinked_cluster(uint32_t chips) {
    std::string y = "arch:\n";
    for (uint32_t i = 0; i < chips; ++i) y += fmt::format("  {}: wormhole_b0\n", i);
    y += "chips:\n";
    for (uint32_t i = 0; i < chips; ++i)
        y += fmt::format("  {}: [{}, {}, 0, 0]\n", i, i % 8, i / 8);
    y += "ethernet_connections: []\nchips_with_mmio:\n  - 0: 0\nharvesting:\n";
    for (uint32_t i = 0; i < chips; ++i) {
        y += fmt::format("  {}:\n    noc_translation: true\n    harvest_mask: 0\n", i);
    }
    return y;
}

// Shaped like tt-umd's blackhole_P300_both_mmio.yaml and wormhole_N300_pci_bdf.yaml (our values).
const std::string kP300 = R"(arch:
  0: blackhole
  1: blackhole
chips:
  {}
chip_unique_ids:
  1: 9493540800001
  0: 9493540800000
ethernet_connections:
  -
    - chip: 0
      chan: 2
    - chip: 1
      chan: 9
  -
    - chip: 0
      chan: 3
    - chip: 1
      chan: 8
ethernet_connections_to_remote_devices:
  []
chips_with_mmio:
  - 0: 1
  - 1: 0
io_device_type: PCIe
harvesting:
  0:
    noc_translation: true
    harvest_mask: 8320
    dram_harvesting_mask: 0
    eth_harvesting_mask: 288
    pcie_harvesting_mask: 2
    l2cpu_harvesting_mask: 0
  1:
    noc_translation: false
    harvest_mask: 272
    dram_harvesting_mask: 8
    eth_harvesting_mask: 288
    pcie_harvesting_mask: 1
    l2cpu_harvesting_mask: 0
chip_to_boardtype:
  0: p300
  1: p300
chip_to_bus_id:
  0: "0x00c1"
  1: 0x00c2
boards:
  -
    - board_id: 4746770400000
    - board_type: p300
    - chips:
        - 1
        - 0
asic_locations:
  0: 0
  1: 1
chip_pci_bdfs:
  0: 0000:c1:00.0
  1: 0000:c2:00.0
cluster_id: host-17
)";

std::string p300_with(const std::string& line, const std::string& with) {
    std::string s = kP300;
    const auto at = s.find(line);
    REQUIRE(at != std::string::npos);
    s.replace(at, line.size(), with);
    return s;
}

}  // namespace

TEST_CASE("cluster descriptor: every key of tt-umd's files, harvesting and boards",
          "[cluster_descriptor]") {
    const auto d = ClusterDescriptor::parse(kP300, "p300.yaml");
    CHECK(d.arch() == hal::Arch::Blackhole);
    CHECK(d.peer({0, 2}) == EthPortRef{1, 9});
    CHECK(d.peer({1, 8}) == EthPortRef{0, 3});
    CHECK(d.connected_channels(1) == std::vector<uint32_t>{8, 9});
    CHECK(d.harvesting(0) == fabric::ChipHarvesting{true, 8320, 0, 288, 2, 0});
    CHECK(d.harvesting(1) == fabric::ChipHarvesting{false, 272, 8, 288, 1, 0});
    CHECK(d.tensix_harvest_masks() == std::vector<uint32_t>{8320, 272});
    REQUIRE(d.board(1).has_value());
    CHECK(d.board(1)->id == 4746770400000u);
    CHECK(d.board(1)->type == "p300");
    CHECK(d.asic_location(1) == 1u);
    CHECK(d.unique_id(0) == 9493540800000u);
    const auto plain = ClusterDescriptor::parse(kHead + "ethernet_connections: []\n", "c.yaml");
    CHECK_FALSE(plain.harvesting(0).has_value());
    CHECK(plain.tensix_harvest_masks() == std::vector<uint32_t>{0, 0});
    CHECK_FALSE(plain.board(0).has_value());
}

TEST_CASE("cluster descriptor: bad keys, harvesting and boards are refused by name",
          "[cluster_descriptor]") {
    const auto p300_bad = [](const std::string& line, const std::string& with) {
        return t::expect_error(ErrorCategory::BadDescriptor,
                               [&] { ClusterDescriptor::parse(p300_with(line, with), "p.yaml"); });
    };
    CHECK(p300_bad("cluster_id: host-17", "chip_to_tray: {}") ==
          "p.yaml:60: unknown key 'chip_to_tray' (known: cluster_id, arch, chips, "
          "chip_unique_ids, ethernet_connections, ethernet_connections_to_remote_devices, "
          "chips_with_mmio, io_device_type, harvesting, chip_to_boardtype, chip_to_bus_id, "
          "boards, asic_locations, chip_pci_bdfs)");
    CHECK(p300_bad("    harvest_mask: 272", "    harvest_mask: 16384") ==
          "p.yaml:36: field 'harvesting.1.harvest_mask': 0x00004000 has bits beyond the 14 Tensix "
          "columns of blackhole (bits 0..13)");
    CHECK(p300_bad("    pcie_harvesting_mask: 1", "    pcie_harvesting_mask: 4") ==
          "p.yaml:39: field 'harvesting.1.pcie_harvesting_mask': 0x00000004 has bits beyond the 2 "
          "PCIe cores of blackhole (bits 0..1)");
    CHECK(p300_bad("    noc_translation: false\n", "") ==
          "p.yaml:35: field 'harvesting.1.noc_translation': required field is missing");
    CHECK(p300_bad("    noc_translation: false", "    noc_translation: maybe") ==
          "p.yaml:35: field 'harvesting.1.noc_translation': expected true or false, got the "
          "scalar 'maybe'");
    CHECK(p300_bad("    l2cpu_harvesting_mask: 0\nchip_to", "    tensix_mask: 0\nchip_to") ==
          "p.yaml:40: field 'harvesting.1': unknown key 'tensix_mask' (known: noc_translation, "
          "harvest_mask, dram_harvesting_mask, eth_harvesting_mask, pcie_harvesting_mask, "
          "l2cpu_harvesting_mask)");
    CHECK(p300_bad("  1:\n    noc_translation: false", "  0x0:\n    noc_translation: false") ==
          "p.yaml:34: field 'harvesting': chip 0 is listed twice (lines 27 and 34)");
    CHECK(p300_bad("  1: p300\n", "  7: p300\n") ==
          "p.yaml:43: field 'chip_to_boardtype': unknown chip 7 (the descriptor's 'arch' lists "
          "chips 0..1)");
    CHECK(p300_bad("        - 1\n", "        - 1\n        - 0\n") ==
          "p.yaml:54: field 'boards[0]': chip 0 is already listed in boards[0]");
    CHECK(bad("arch: {0: wormhole_b0}\nethernet_connections: []\nchips_with_mmio: []\n"
              "harvesting: {0: {noc_translation: true, harvest_mask: 1024}}\n") ==
          "c.yaml:4: field 'harvesting.0.harvest_mask': 0x00000400 has bits beyond the 10 Tensix "
          "rows of wormhole_b0 (bits 0..9)");
    CHECK(bad("arch: {0: wormhole_b0}\nethernet_connections: []\nchips_with_mmio: []\n"
              "harvesting: {0: {noc_translation: true, harvest_mask: 0, "
              "l2cpu_harvesting_mask: 1}}\n") ==
          "c.yaml:4: field 'harvesting.0.l2cpu_harvesting_mask': 0x00000001 has bits beyond the 0 "
          "L2CPU cores of wormhole_b0");
    CHECK(bad(kHead + "ethernet_connections: [[{chip: 0, chan: 8, speed: 400}, {chip: 1, chan: "
                      "0}]]\n") ==
          "c.yaml:3: field 'ethernet_connections[0][0]': unknown key 'speed' (known: chip, chan)");
    CHECK(bad(kHead + "ethernet_connections:\n  - [{chip: 0, chan: 8}, {chip: 1, chan: 0}]\n"
                      "  - [{chip: 1, chan: 0}, {chip: 0, chan: 8}]\n") ==
          "c.yaml:5: field 'ethernet_connections[1]': chip 1 chan 0 <-> chip 0 chan 8 is listed "
          "again (first as ethernet_connections[0])");
}

TEST_CASE("cluster descriptor: chip count is capped, memory follows what the file connects",
          "[cluster_descriptor]") {
    CHECK(bad(unlinked_cluster(fabric::kMaxClusterChips + 1)) ==
          "c.yaml:2: field 'arch': 1025 chips; a cluster descriptor has at most 1024");
    // The issue's 10,000-chip file (1 MB of YAML): refused, in tens of MB, under a 1 GiB cap.
    const std::string huge = unlinked_cluster(10'000);
    const auto refused =
        t::run_with_memory_cap(1ull << 30, [&] { ClusterDescriptor::parse(huge, "c.yaml"); });
    CHECK(refused.outcome ==
          "error: c.yaml:2: field 'arch': 10000 chips; a cluster descriptor has at most 1024");
    CHECK(refused.growth_bytes() < (100ull << 20));
    // The largest cluster accepted, unlinked: loads in tens of MB.
    const std::string largest = unlinked_cluster(fabric::kMaxClusterChips);
    const auto loaded = t::run_with_memory_cap(1ull << 30, [&] {
        const auto d = ClusterDescriptor::parse(largest, "c.yaml");
        if (d.chip_count() != 1024 || d.eth_coord(1023)->y != 127) throw std::logic_error("wrong");
    });
    CHECK(loaded.outcome == "ok");
    CHECK(loaded.growth_bytes() < (100ull << 20));
}

TEST_CASE("cluster descriptor: lint lists every wiring problem with its line",
          "[cluster_descriptor]") {
    const std::string text =
        "arch: {0: wormhole_b0, 1: wormhole_b0, 2: wormhole_b0}\n"
        "chips_with_mmio: [{0: 0}]\n"
        "ethernet_connections:\n"
        "  - [{chip: 0, chan: 8}, {chip: 1, chan: 0}]\n"   // 4: good
        "  - [{chip: 1, chan: 0}, {chip: 0, chan: 8}]\n"   // 5: duplicate
        "  - [{chip: 0, chan: 8}, {chip: 2, chan: 0}]\n"   // 6: asymmetric
        "  - [{chip: 2, chan: 3}, {chip: 2, chan: 3}]\n"   // 7: same port
        "  - [{chip: 2, chan: 4}, {chip: 2, chan: 5}]\n"   // 8: chip to itself
        "  - [{chip: 3, chan: 1}, {chip: 0, chan: 1}]\n"   // 9: unknown chip
        "  - [{chip: 1, chan: 16}, {chip: 0, chan: 2}]\n"  // 10: channel
        "  - [{chip: 1, chan: 9}, {chip: 2, chan: 1}]\n";  // 11: good
    const auto report = ClusterDescriptor::lint(text, "c.yaml");
    std::vector<std::string> got;
    for (const auto& f : report.findings) {
        got.push_back(fmt::format("{} {} {}: {}", f.line, fabric::cluster_lint_kind_name(f.kind),
                                  f.field, f.message));
    }
    CHECK(got == std::vector<std::string>{
                     "5 duplicate_connection ethernet_connections[1]: chip 1 chan 0 <-> chip 0 "
                     "chan 8 is listed again (first as ethernet_connections[0])",
                     "6 asymmetric_connection ethernet_connections[2]: chip 0 chan 8 is joined to "
                     "chip 2 chan 0 here but to chip 1 chan 0 by ethernet_connections[0]",
                     "7 self_connection ethernet_connections[3]: chip 2 chan 3 is connected to "
                     "itself",
                     "8 self_connection ethernet_connections[4]: chip 2 chan 4 is connected to "
                     "chip 2 chan 5: chip 2 is cabled to itself",
                     "9 unknown_chip ethernet_connections[5][0].chip: unknown chip 3 (the "
                     "descriptor's 'arch' lists chips 0..2)",
                     "10 channel_out_of_range ethernet_connections[6][0].chan: channel 16 is out "
                     "of range for wormhole_b0 (channels 0..15)"});
    CHECK(report.usable.connections().size() == 3);
    CHECK(report.usable.peer({0, 8}) == EthPortRef{1, 0});
    CHECK(report.usable.peer({2, 4}) == EthPortRef{2, 5});
    CHECK(report.usable.peer({1, 9}) == EthPortRef{2, 1});
    // The same file fails parse() at its first problem; a file without problems lints clean.
    CHECK(bad(text) ==
          "c.yaml:5: field 'ethernet_connections[1]': chip 1 chan 0 <-> chip 0 chan "
          "8 is listed again (first as ethernet_connections[0])");
    CHECK(ClusterDescriptor::lint_file(std::string(FABRIC_SOC_DESCRIPTOR_DIR) +
                                       "/galaxy_8x4_cluster.yaml")
              .findings.empty());
    // Anything but wiring still stops the lint.
    CHECK(t::expect_error(ErrorCategory::BadDescriptor,
                          [] { ClusterDescriptor::lint("arch: {0: quasar}\n", "c.yaml"); }) ==
          "c.yaml:1: field 'arch.0': unknown arch 'quasar' (known: wormhole_b0, Wormhole, "
          "blackhole)");
}

TEST_CASE("cluster descriptor: the YAML node count is capped", "[cluster_descriptor]") {
    std::string many = "arch: [";
    for (uint32_t i = 0; i < fabric::kClusterDescriptorInput.max_yaml_nodes; ++i) many += "0,";
    many += "0]\n";
    CHECK(bad(many) ==
          "c.yaml:1:600002: more than 300000 YAML nodes; a cluster descriptor has at most 300000");
}

TEST_CASE("cluster descriptor: lint of the faulty fixtures", "[cluster_descriptor]") {
    const std::string dir = std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/clusters/";
    const auto one = [&](const std::string& file) {
        const auto report = ClusterDescriptor::lint_file(dir + file);
        REQUIRE(report.findings.size() == 1);
        const auto& f = report.findings.front();
        return fmt::format("{} {} {}: {}", f.line, fabric::cluster_lint_kind_name(f.kind), f.field,
                           f.message);
    };
    CHECK(one("t3k_duplicate_cluster.yaml") ==
          "176 duplicate_connection ethernet_connections[20]: chip 5 chan 0 <-> chip 1 chan 8 is "
          "listed again (first as ethernet_connections[6])");
    CHECK(one("t3k_asymmetric_cluster.yaml") ==
          "176 asymmetric_connection ethernet_connections[20]: chip 5 chan 0 is joined to chip 1 "
          "chan 0 here but to chip 1 chan 8 by ethernet_connections[6]");
    CHECK(ClusterDescriptor::lint_file(dir + "t3k_duplicate_cluster.yaml")
              .usable.connections()
              .size() == 20);
}
