// SoC descriptor loader: the shipped descriptors exactly, and one test per kind of bad input.
#include <catch2/catch.hpp>
#include <string>

#include "expect_error.h"
#include "fabric/soc_descriptor.h"

using Catch::Matchers::Contains;
using fabric::CoreCoord;
using fabric::CoreType;
using fabric::ErrorCategory;
using fabric::SocDescriptor;
using fabric::test::expect_error;

namespace {

const std::string kDir = FABRIC_SOC_DESCRIPTOR_DIR;

// Every grid position of a shipped descriptor belongs to exactly one listed core.
void check_grid_fully_described(const SocDescriptor& d) {
    size_t listed = 0;
    for (auto t : {CoreType::Worker, CoreType::Eth, CoreType::Dram, CoreType::Pcie, CoreType::Arc,
                   CoreType::RouterOnly, CoreType::Security, CoreType::L2cpu}) {
        listed += d.count(t);
    }
    CHECK(listed == size_t{d.grid_x()} * d.grid_y());
    for (uint32_t x = 0; x < d.grid_x(); ++x) {
        for (uint32_t y = 0; y < d.grid_y(); ++y) {
            INFO("core " << x << "-" << y);
            CHECK(d.core_type({x, y}).has_value());
        }
    }
}

// A small valid descriptor; tests break one line of it at a time.
const std::string kSmall = R"(grid:
  x_size: 4
  y_size: 3
arc: [0-2]
pcie: [0-1]
dram: [[0-0], [3-0, 3-1]]
eth: [1-0, 2-0]
functional_workers: [1-1, 2-1, 1-2, 2-2]
router_only: [3-2]
worker_l1_size: 1499136
eth_l1_size: 262144
dram_bank_size: 2147483648
arch_name: wormhole_b0
)";

std::string replace_in(std::string s, const std::string& line, const std::string& with) {
    const auto at = s.find(line);
    REQUIRE(at != std::string::npos);
    s.replace(at, line.size(), with);
    return s;
}

std::string replace(const std::string& line, const std::string& with) {
    return replace_in(kSmall, line, with);
}

std::string bad(ErrorCategory cat, const std::string& yaml) {
    return expect_error(cat, [&] { SocDescriptor::parse(yaml, "board.yaml"); });
}

}  // namespace

TEST_CASE("Wormhole B0 descriptor: counts, coordinates, channels, L1 sizes", "[soc]") {
    const auto d = SocDescriptor::load_file(kDir + "/wormhole_b0_80_arch.yaml");
    CHECK(d.arch() == hal::Arch::WormholeB0);
    CHECK(d.grid_x() == 10);
    CHECK(d.grid_y() == 12);
    CHECK(d.count(CoreType::Eth) == 16);
    CHECK(d.count(CoreType::Worker) == 80);
    CHECK(d.count(CoreType::Dram) == 18);
    CHECK(d.dram_channels().size() == 6);
    CHECK(d.count(CoreType::Arc) == 1);
    CHECK(d.count(CoreType::Pcie) == 1);
    CHECK(d.count(CoreType::RouterOnly) == 4);
    CHECK(d.worker_l1_size() == 1499136);
    CHECK(d.eth_l1_size() == 262144);
    CHECK(d.dram_bank_size() == 2147483648ull);

    CHECK(d.eth_core(0) == CoreCoord{9, 0});
    CHECK(d.eth_core(1) == CoreCoord{1, 0});
    CHECK(d.eth_core(7) == CoreCoord{4, 0});
    CHECK(d.eth_core(8) == CoreCoord{9, 6});
    CHECK(d.eth_core(15) == CoreCoord{4, 6});
    CHECK(d.eth_channel({1, 6}) == 9u);
    CHECK_FALSE(d.eth_channel({1, 1}).has_value());

    CHECK(d.core_type({0, 10}) == CoreType::Arc);
    CHECK(d.core_type({0, 3}) == CoreType::Pcie);
    CHECK(d.core_type({1, 1}) == CoreType::Worker);
    CHECK(d.core_type({9, 11}) == CoreType::Worker);
    CHECK(d.core_type({5, 0}) == CoreType::Dram);
    CHECK(d.core_type({0, 9}) == CoreType::RouterOnly);
    CHECK_FALSE(d.core_type({5, 12}).has_value());  // outside the grid
    CHECK(d.dram_channels()[3] == std::vector<CoreCoord>{{5, 2}, {5, 9}, {5, 10}});

    CHECK(d.l1_size({9, 0}) == 262144);
    CHECK(d.l1_size({6, 7}) == 1499136);
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                d.l1_size({0, 10});
                            }),
               Contains("0-10") && Contains("arc") && Contains("no L1"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { d.eth_core(16); }),
               Contains("eth channel 16 does not exist"));
    check_grid_fully_described(d);
}

TEST_CASE("Blackhole descriptor: counts, coordinates, channels, L1 sizes", "[soc]") {
    const auto d = SocDescriptor::load_file(kDir + "/blackhole_140_arch.yaml");
    CHECK(d.arch() == hal::Arch::Blackhole);
    CHECK(d.grid_x() == 17);
    CHECK(d.grid_y() == 12);
    CHECK(d.count(CoreType::Eth) == 14);
    CHECK(d.count(CoreType::Worker) == 140);
    CHECK(d.count(CoreType::Dram) == 24);
    CHECK(d.dram_channels().size() == 8);
    CHECK(d.count(CoreType::Pcie) == 2);
    CHECK(d.count(CoreType::RouterOnly) == 18);
    CHECK(d.count(CoreType::Security) == 1);
    CHECK(d.count(CoreType::L2cpu) == 4);
    CHECK(d.worker_l1_size() == 1572864);
    CHECK(d.eth_l1_size() == 524288);
    CHECK(d.dram_bank_size() == 4294967296ull);

    CHECK(d.eth_core(0) == CoreCoord{1, 1});
    CHECK(d.eth_core(1) == CoreCoord{16, 1});
    CHECK(d.eth_core(13) == CoreCoord{10, 1});
    CHECK(d.eth_channel({7, 1}) == 12u);
    CHECK(d.core_type({8, 0}) == CoreType::Arc);
    CHECK(d.core_type({11, 0}) == CoreType::Pcie);
    CHECK(d.core_type({8, 2}) == CoreType::Security);
    CHECK(d.core_type({8, 9}) == CoreType::L2cpu);
    CHECK(d.core_type({16, 11}) == CoreType::Worker);
    CHECK(d.core_type({8, 11}) == CoreType::RouterOnly);
    CHECK(d.dram_channels()[4] == std::vector<CoreCoord>{{9, 0}, {9, 1}, {9, 11}});
    CHECK(d.l1_size({1, 1}) == 524288);
    CHECK(d.l1_size({10, 2}) == 1572864);
    check_grid_fully_described(d);
}

TEST_CASE("arch names: both spellings of both arches, nothing else", "[soc]") {
    CHECK(fabric::parse_arch("WORMHOLE_B0") == hal::Arch::WormholeB0);
    CHECK(fabric::parse_arch("wormhole_b0") == hal::Arch::WormholeB0);
    CHECK(fabric::parse_arch("BLACKHOLE") == hal::Arch::Blackhole);
    CHECK(fabric::parse_arch("blackhole") == hal::Arch::Blackhole);
    CHECK_FALSE(fabric::parse_arch("QUASAR").has_value());
    CHECK_FALSE(fabric::parse_arch("Wormhole").has_value());
}

TEST_CASE("core coordinates: only 'x-y' with decimal numbers", "[soc]") {
    CHECK(fabric::parse_core_coord("9-0") == CoreCoord{9, 0});
    CHECK(fabric::parse_core_coord("16-11") == CoreCoord{16, 11});
    for (const char* s : {"", "9", "9-", "-0", "9_0", "a-b", "9-0-1", "+9-0", "9--0", " 9-0"}) {
        INFO("'" << s << "'");
        CHECK_FALSE(fabric::parse_core_coord(s).has_value());
    }
}

TEST_CASE("the small test descriptor is valid", "[soc]") {
    const auto d = SocDescriptor::parse(kSmall, "board.yaml");
    CHECK(d.count(CoreType::Eth) == 2);
    CHECK(d.dram_channels().size() == 2);
    CHECK(d.eth_core(1) == CoreCoord{2, 0});
}

TEST_CASE("bad descriptor: malformed YAML", "[soc][bad]") {
    const auto msg =
        bad(ErrorCategory::BadDescriptor, replace("eth: [1-0, 2-0]", "eth: [1-0, 2-0"));
    CHECK_THAT(msg, Contains("board.yaml:") && Contains("malformed YAML"));
}

TEST_CASE("bad descriptor: document is not a mapping", "[soc][bad]") {
    CHECK_THAT(bad(ErrorCategory::BadDescriptor, "- 1\n- 2\n"),
               Contains("board.yaml") && Contains("must be a mapping"));
    CHECK_THAT(bad(ErrorCategory::BadDescriptor, ""), Contains("must be a mapping"));
}

TEST_CASE("bad descriptor: missing field", "[soc][bad]") {
    CHECK(bad(ErrorCategory::BadDescriptor, replace("eth_l1_size: 262144\n", "")) ==
          "board.yaml: field 'eth_l1_size': required field is missing");
    CHECK_THAT(bad(ErrorCategory::BadDescriptor, replace("eth: [1-0, 2-0]\n", "")),
               Contains("field 'eth'") && Contains("missing"));
    CHECK_THAT(bad(ErrorCategory::BadDescriptor, replace("  y_size: 3\n", "")),
               Contains("board.yaml:2:") && Contains("field 'grid.y_size'") && Contains("missing"));
}

TEST_CASE("bad descriptor: wrong-typed field", "[soc][bad]") {
    CHECK(bad(ErrorCategory::BadDescriptor,
              replace("worker_l1_size: 1499136", "worker_l1_size: [1499136]")) ==
          "board.yaml:10: field 'worker_l1_size': expected an unsigned integer, got a list");
    CHECK_THAT(bad(ErrorCategory::BadDescriptor,
                   replace("worker_l1_size: 1499136", "worker_l1_size: big")),
               Contains("field 'worker_l1_size'") && Contains("'big'"));
    CHECK_THAT(
        bad(ErrorCategory::BadDescriptor, replace("worker_l1_size: 1499136", "worker_l1_size: -4")),
        Contains("field 'worker_l1_size'") && Contains("unsigned integer"));
    CHECK_THAT(bad(ErrorCategory::BadDescriptor, replace("eth: [1-0, 2-0]", "eth: 1-0")),
               Contains("board.yaml:7: field 'eth'") && Contains("expected a list"));
    CHECK_THAT(bad(ErrorCategory::BadDescriptor,
                   replace("arch_name: wormhole_b0", "arch_name: [wormhole_b0]")),
               Contains("field 'arch_name'") && Contains("expected a string"));
    CHECK_THAT(bad(ErrorCategory::BadDescriptor, replace("eth: [1-0, 2-0]", "eth: [1-0, [2-0]]")),
               Contains("field 'eth[1]'") && Contains("got a list"));
    CHECK_THAT(bad(ErrorCategory::BadDescriptor,
                   replace("eth_l1_size: 262144", "eth_l1_size: 4294967296")),
               Contains("field 'eth_l1_size'") && Contains("32 bits"));
}

TEST_CASE("bad descriptor: bad coordinate string", "[soc][bad]") {
    CHECK(bad(ErrorCategory::BadDescriptor, replace("eth: [1-0, 2-0]", "eth: [1-0, 2_0]")) ==
          "board.yaml:7: field 'eth[1]': '2_0' is not an 'x-y' core coordinate");
    CHECK_THAT(bad(ErrorCategory::BadDescriptor,
                   replace("dram: [[0-0], [3-0, 3-1]]", "dram: [[0-0], [3-0, x-1]]")),
               Contains("field 'dram[1][1]'") && Contains("'x-1'"));
}

TEST_CASE("bad descriptor: coordinate outside the grid", "[soc][bad]") {
    CHECK(bad(ErrorCategory::BadDescriptor, replace("router_only: [3-2]", "router_only: [4-2]")) ==
          "board.yaml:9: field 'router_only[0]': core 4-2 is outside the 4x3 grid");
    CHECK_THAT(
        bad(ErrorCategory::BadDescriptor, replace("functional_workers: [1-1, 2-1, 1-2, 2-2]",
                                                  "functional_workers: [1-1, 2-1, 1-2, 2-3]")),
        Contains("field 'functional_workers[3]'") && Contains("2-3 is outside"));
    CHECK_THAT(bad(ErrorCategory::BadDescriptor, replace("  x_size: 4", "  x_size: 0")),
               Contains("field 'grid.x_size'") && Contains("grid size"));
}

TEST_CASE("bad descriptor: the same coordinate listed twice", "[soc][bad]") {
    CHECK(bad(ErrorCategory::BadDescriptor, replace("eth: [1-0, 2-0]", "eth: [1-0, 1-1]")) ==
          "board.yaml:8: field 'functional_workers[0]': core 1-1 is already listed as 'eth[1]'");
    CHECK_THAT(bad(ErrorCategory::BadDescriptor, replace("eth: [1-0, 2-0]", "eth: [1-0, 1-0]")),
               Contains("field 'eth[1]'") && Contains("already listed as 'eth[0]'"));
}

TEST_CASE("bad descriptor: unknown arch", "[soc][bad]") {
    CHECK(
        bad(ErrorCategory::BadDescriptor, replace("arch_name: wormhole_b0", "arch_name: QUASAR")) ==
        "board.yaml:13: field 'arch_name': unknown arch 'QUASAR' (known: WORMHOLE_B0, "
        "wormhole_b0, BLACKHOLE, blackhole)");
}

TEST_CASE("bad descriptor: file that cannot be read is bad input", "[soc][bad]") {
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [] { SocDescriptor::load_file("/nonexistent/board.yaml"); }),
               Contains("/nonexistent/board.yaml") && Contains("cannot open"));
}

TEST_CASE("bad descriptor: sizes of 0 or 2^32-1 and sizes beyond the arch", "[soc][bad]") {
    const auto size_error = [](const std::string& line, const std::string& with) {
        return bad(ErrorCategory::BadDescriptor, replace(line, with));
    };
    CHECK(size_error("worker_l1_size: 1499136", "worker_l1_size: 0") ==
          "board.yaml:10: field 'worker_l1_size': 0 is not an L1 size of wormhole_b0 (a multiple "
          "of 4 in 4..1572864 bytes)");
    CHECK(size_error("worker_l1_size: 1499136", "worker_l1_size: 4294967295") ==
          "board.yaml:10: field 'worker_l1_size': 4294967295 is not an L1 size of wormhole_b0 (a "
          "multiple of 4 in 4..1572864 bytes)");
    CHECK(size_error("worker_l1_size: 1499136", "worker_l1_size: 1499137") ==
          "board.yaml:10: field 'worker_l1_size': 1499137 is not an L1 size of wormhole_b0 (a "
          "multiple of 4 in 4..1572864 bytes)");
    CHECK(size_error("eth_l1_size: 262144", "eth_l1_size: 0") ==
          "board.yaml:11: field 'eth_l1_size': 0 is not an L1 size of wormhole_b0 (a multiple of "
          "4 in 4..262144 bytes)");
    CHECK(size_error("eth_l1_size: 262144", "eth_l1_size: 524288") ==
          "board.yaml:11: field 'eth_l1_size': 524288 is not an L1 size of wormhole_b0 (a "
          "multiple of 4 in 4..262144 bytes)");
    CHECK(size_error("eth_l1_size: 262144", "eth_l1_size: 4294967295") ==
          "board.yaml:11: field 'eth_l1_size': 4294967295 is not an L1 size of wormhole_b0 (a "
          "multiple of 4 in 4..262144 bytes)");
    CHECK(size_error("dram_bank_size: 2147483648", "dram_bank_size: 0") ==
          "board.yaml:12: field 'dram_bank_size': 0 is not a DRAM bank size in 1..68719476736 "
          "bytes");
    CHECK(size_error("dram_bank_size: 2147483648", "dram_bank_size: 18446744073709551615") ==
          "board.yaml:12: field 'dram_bank_size': 18446744073709551615 is not a DRAM bank size in "
          "1..68719476736 bytes");
    CHECK(size_error("dram_bank_size: 2147483648", "dram_bank_size: 18446744073709551616") ==
          "board.yaml:12: field 'dram_bank_size': expected an unsigned integer, got the scalar "
          "'18446744073709551616'");
    CHECK(size_error("  x_size: 4", "  x_size: 4294967295") ==
          "board.yaml:2: field 'grid.x_size': 4294967295 is not a grid size in 1..64");
    // Blackhole's ERISC L1 is 512 KiB.
    const std::string bh = replace("arch_name: wormhole_b0", "arch_name: blackhole");
    CHECK(SocDescriptor::parse(replace_in(bh, "eth_l1_size: 262144", "eth_l1_size: 524288"),
                               "board.yaml")
              .eth_l1_size() == 524288);
}

TEST_CASE("bad descriptor: unknown keys are refused by name", "[soc][bad]") {
    CHECK(bad(ErrorCategory::BadDescriptor, kSmall + "dram_views: []\n") ==
          "board.yaml:14: unknown key 'dram_views' (known: grid, arc, pcie, dram, harvested_dram, "
          "eth, harvested_eth, functional_workers, harvested_workers, router_only, security, "
          "l2cpu, noc0_x_to_noc1_x, noc0_y_to_noc1_y, worker_l1_size, dram_bank_size, "
          "eth_l1_size, arch_name, features, dram_preferred_eth_endpoint, "
          "dram_preferred_worker_endpoint, dram_address_offsets)");
    CHECK(bad(ErrorCategory::BadDescriptor, replace("  y_size: 3", "  y_size: 3\n  z_size: 1")) ==
          "board.yaml:4: field 'grid': unknown key 'z_size' (known: x_size, y_size)");
}

TEST_CASE("every key of tt-umd's and tt-metal's published SoC descriptors loads", "[soc]") {
    // Shaped like tt-umd tests/soc_descs/serialized.yaml and blackhole_140_arch.yaml, and
    // tt-metal's soc_descriptors (the dram_* views): our own small grid.
    const std::string all_keys =
        replace("functional_workers: [1-1, 2-1, 1-2, 2-2]", "functional_workers: [1-1, 2-1, 1-2]") +
        "harvested_dram: []\n"
        "harvested_eth: []\n"
        "harvested_workers: [2-2]\n"
        "security: []\n"
        "l2cpu: []\n"
        "noc0_x_to_noc1_x: [3, 2, 1, 0]\n"
        "noc0_y_to_noc1_y: [2, 1, 0]\n"
        "dram_preferred_eth_endpoint: [0-0, 3-0]\n"
        "dram_preferred_worker_endpoint: [0-0, 3-1]\n"
        "dram_address_offsets: [0, 0]\n"
        "features:\n"
        "  noc: {translation_id_enabled: true}\n"
        "  unpacker: {version: 2, "
        "inline_srca_trans_without_srca_trans_instr: true}\n"
        "  math: {dst_size_alignment: 32768}\n"
        "  packer: {version: 2}\n"
        "  overlay: {version: 2}\n";
    const auto d = SocDescriptor::parse(all_keys, "board.yaml");
    CHECK(d.cores(CoreType::HarvestedWorker) == std::vector<CoreCoord>{{2, 2}});
    CHECK(d.core_type({2, 2}) == CoreType::HarvestedWorker);
    CHECK(d.count(CoreType::Worker) == 3);
    CHECK(bad(ErrorCategory::BadDescriptor, kSmall + "noc0_x_to_noc1_x: [3, 2, 1, 4]\n") ==
          "board.yaml:14: field 'noc0_x_to_noc1_x[3]': 4 is outside the grid (0..3)");
}

TEST_CASE("harvesting: Wormhole rows and Blackhole columns become harvested workers", "[soc]") {
    const auto wh = SocDescriptor::load_file(kDir + "/wormhole_b0_80_arch.yaml");
    // Bit 1 is row y = 1, the row the first workers are on.
    const auto h = wh.harvested(0x2);
    CHECK(h.tensix_harvest_mask() == 0x2);
    CHECK(h.count(CoreType::Worker) == 72);
    CHECK(h.cores(CoreType::HarvestedWorker) ==
          std::vector<CoreCoord>{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {6, 1}, {7, 1}, {8, 1}, {9, 1}});
    CHECK(h.cores(CoreType::Worker).front() == CoreCoord{1, 2});
    CHECK(h.core_type({4, 1}) == CoreType::HarvestedWorker);
    CHECK(expect_error(ErrorCategory::BadInput,
                       [&] {
                           h.l1_size({4, 1});
                       }) ==
          kDir + "/wormhole_b0_80_arch.yaml: core 4-1 is a 'harvested_workers' core and has no L1");
    // tt-umd's n300 example: harvest_mask 65 = bits 0 and 6 = rows 11 and 8.
    const auto n300 = wh.harvested(65);
    CHECK(n300.count(CoreType::Worker) == 64);
    for (const CoreCoord& c : n300.cores(CoreType::HarvestedWorker)) CHECK((c.y == 11 || c.y == 8));
    CHECK(wh.harvested(0).cores(CoreType::Worker) == wh.cores(CoreType::Worker));
    CHECK(expect_error(ErrorCategory::BadInput, [&] { wh.harvested(0x400); }) ==
          kDir +
              "/wormhole_b0_80_arch.yaml: Tensix harvest mask 0x00000400 has bits beyond the "
              "10 harvestable rows of wormhole_b0 (bits 0..9)");

    const auto bh = SocDescriptor::load_file(kDir + "/blackhole_140_arch.yaml");
    // tt-umd's P300 example: harvest_mask 8320 = bits 7 and 13 = columns 13 and 10.
    const auto p300 = bh.harvested(8320);
    CHECK(p300.count(CoreType::Worker) == 120);
    CHECK(p300.count(CoreType::HarvestedWorker) == 20);
    for (const CoreCoord& c : p300.cores(CoreType::HarvestedWorker))
        CHECK((c.x == 13 || c.x == 10));
    CHECK(bh.harvested(1).core_type({1, 2}) == CoreType::HarvestedWorker);
    CHECK(expect_error(ErrorCategory::BadInput, [&] { bh.harvested(1u << 14); }) ==
          kDir +
              "/blackhole_140_arch.yaml: Tensix harvest mask 0x00004000 has bits beyond the "
              "14 harvestable columns of blackhole (bits 0..13)");
}
