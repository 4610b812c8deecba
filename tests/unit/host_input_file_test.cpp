// The bounded reader every loader uses (fabric/input_file.h), the text checks, the escaping of
// error messages, and the YAML shape checks (duplicate keys, second documents, depth, node caps)
// as the SoC descriptor loader reports them. Every message exact.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/input_file.h"
#include "fabric/mesh_graph.h"
#include "fabric/soc_descriptor.h"

using fabric::ErrorCategory;
using fabric::kSocDescriptorInput;
using fabric::SocDescriptor;
using fabric::test::expect_error;

namespace {

const std::string kTmp = FABRIC_TEST_TMP_DIR;

std::string write_file(const std::string& name, const std::string& bytes) {
    const std::string path = kTmp + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

std::string read_error(const std::string& path) {
    return expect_error(ErrorCategory::BadInput,
                        [&] { fabric::read_input_file(path, kSocDescriptorInput); });
}

std::string soc_error(const std::string& yaml) {
    return expect_error(ErrorCategory::BadDescriptor,
                        [&] { SocDescriptor::parse(yaml, "s.yaml"); });
}

}  // namespace

TEST_CASE("input files: a regular file is read whole", "[input]") {
    const std::string path = write_file("small.txt", "arch: x\n");
    CHECK(fabric::read_input_file(path, kSocDescriptorInput) == "arch: x\n");
    CHECK(fabric::read_text_file(path, kSocDescriptorInput) == "arch: x\n");
}

TEST_CASE("input files: what is not a regular file is bad input", "[input][bad]") {
    CHECK(read_error("/dev/zero") ==
          "/dev/zero: not a regular file (a character device); a SoC descriptor must be a file");
    CHECK(read_error(kTmp) ==
          kTmp + ": not a regular file (a directory); a SoC descriptor must be a file");
    const std::string fifo = kTmp + "/input.fifo";
    ::unlink(fifo.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(read_error(fifo) ==
          fifo + ": not a regular file (a FIFO); a SoC descriptor must be a file");
    CHECK(read_error("/nonexistent/s.yaml") ==
          "/nonexistent/s.yaml: cannot open SoC descriptor: No such file or directory");
}

TEST_CASE("input files: a file over its kind's limit is refused before it is read",
          "[input][bad]") {
    const std::string path =
        write_file("big.yaml", std::string(kSocDescriptorInput.max_bytes + 1, '#'));
    CHECK(read_error(path) ==
          path + ": file is 262145 bytes; a SoC descriptor is at most 262144 bytes");
    CHECK(fabric::read_input_file(write_file("limit.yaml", std::string(262144, '#')),
                                  kSocDescriptorInput)
              .size() == 262144);
}

TEST_CASE("input files: every loader reads through the bounded reader", "[input][bad]") {
    CHECK(expect_error(ErrorCategory::BadInput, [] { SocDescriptor::load_file("/dev/zero"); }) ==
          "/dev/zero: not a regular file (a character device); a SoC descriptor must be a file");
    CHECK(expect_error(ErrorCategory::BadInput,
                       [] { fabric::ClusterDescriptor::load_file("/dev/zero"); }) ==
          "/dev/zero: not a regular file (a character device); a cluster descriptor must be a "
          "file");
    CHECK(expect_error(ErrorCategory::BadInput, [] { fabric::ElfImage::load_file(kTmp); }) ==
          kTmp + ": not a regular file (a directory); a firmware image must be a file");
    const std::string big_elf =
        write_file("big.elf", std::string(fabric::kElfInput.max_bytes + 1, '\0'));
    CHECK(expect_error(ErrorCategory::BadInput, [&] { fabric::ElfImage::load_file(big_elf); }) ==
          big_elf + ": file is 16777217 bytes; a firmware image is at most 16777216 bytes");
}

TEST_CASE("text checks: NUL, invalid UTF-8 and control characters are refused", "[input][bad]") {
    const auto text_error = [](const std::string& text) {
        return expect_error(ErrorCategory::BadDescriptor,
                            [&] { fabric::check_text(text, "t.yaml"); });
    };
    CHECK(text_error(std::string("a: 1\nb: \0", 9)) ==
          "t.yaml:2:4: NUL byte: a descriptor is text, not binary");
    CHECK(text_error("a: 1\n\xff\xfe") == "t.yaml:2:1: byte \\xff is not UTF-8 text");
    CHECK(text_error("a: \xc0\xaf") == "t.yaml:1:4: byte \\xc0 is not UTF-8 text");  // overlong
    CHECK(text_error("a: 1\nwor\x1b[31mker: 1\n") ==
          "t.yaml:2:4: control character U+001B (a descriptor has none but tab and line ends)");
    CHECK(text_error("a: \xc2\x9b") ==
          "t.yaml:1:4: control character U+009B (a descriptor has none but tab and line ends)");
    CHECK_NOTHROW(
        fabric::check_text("\xef\xbb\xbf"
                           "a: caf\xc3\xa9\r\n\tb: 1\n",
                           "t.yaml"));
}

TEST_CASE("error messages: control characters and invalid UTF-8 are escaped", "[input]") {
    CHECK(fabric::escape_control("plain text: caf\xc3\xa9") == "plain text: caf\xc3\xa9");
    CHECK(fabric::escape_control("a\x1b[31mred\nnext\r") == "a\\x1b[31mred\\x0anext\\x0d");
    CHECK(fabric::escape_control("c1 \xc2\x9b del \x7f bad \xff") ==
          "c1 \\xc2\\x9b del \\x7f bad \\xff");
    CHECK(fabric::escape_control("rtl \xe2\x80\xae") == "rtl \\xe2\\x80\\xae");
    const fabric::Error e(ErrorCategory::BadInput, "name 'a\x1b]0;title\x07'");
    CHECK(std::string(e.what()) == "name 'a\\x1b]0;title\\x07'");
    // A double-quoted YAML scalar can carry an escape sequence into a value: it stays escaped.
    CHECK(soc_error("arch_name: \"wormhole\\x1b[2J\"\n") ==
          "s.yaml:1: field 'arch_name': unknown arch 'wormhole\\x1b[2J' (known: WORMHOLE_B0, "
          "wormhole_b0, BLACKHOLE, blackhole)");
}

TEST_CASE("YAML: duplicate keys are refused with both lines", "[input][bad]") {
    CHECK(soc_error("arch_name: wormhole_b0\ngrid: {x_size: 4}\narch_name: blackhole\n") ==
          "s.yaml:3:1: duplicate key 'arch_name' (lines 1 and 3)");
    CHECK(soc_error("grid:\n  x_size: 4\n  y_size: 3\n  x_size: 5\n") ==
          "s.yaml:4:3: duplicate key 'x_size' in 'grid' (lines 2 and 4)");
    CHECK(soc_error("dram: [[0-0], {a: 1, a: 2}]\n") ==
          "s.yaml:1:22: duplicate key 'a' in 'dram[1]' (lines 1 and 1)");
}

TEST_CASE("YAML: text after the document is refused", "[input][bad]") {
    CHECK(soc_error("arch_name: wormhole_b0\n---\narch_name: blackhole\n") ==
          "s.yaml:2:1: text after the end of the document (a second YAML document); a SoC "
          "descriptor is one document");
    CHECK(soc_error("[1, 2] junk\n") ==
          "s.yaml:1:8: text after the end of the document (a second YAML document); a SoC "
          "descriptor is one document");
    CHECK(soc_error("arch_name: wormhole_b0\n...\njunk\n") ==
          "s.yaml:3:1: text after the end of the document (a second YAML document); a SoC "
          "descriptor is one document");
}

TEST_CASE("YAML: nesting is bounded, however deep the input", "[input][bad]") {
    for (const size_t depth : {33u, 1000u, 100000u}) {
        INFO("depth " << depth);
        CHECK(soc_error("a: " + std::string(depth, '[') + std::string(depth, ']') + "\n") ==
              "s.yaml:1:35: YAML nested deeper than 32 levels");
    }
    CHECK(soc_error("arch_name: wormhole_b0\na: " + std::string(31, '[') + std::string(31, ']') +
                    "\n") ==
          "s.yaml:2: unknown key 'a' (known: grid, arc, pcie, dram, harvested_dram, eth, "
          "harvested_eth, functional_workers, harvested_workers, router_only, security, l2cpu, "
          "noc0_x_to_noc1_x, noc0_y_to_noc1_y, worker_l1_size, dram_bank_size, eth_l1_size, "
          "arch_name, features, dram_preferred_eth_endpoint, dram_preferred_worker_endpoint, "
          "dram_address_offsets)");
}

TEST_CASE("YAML: the number of nodes is bounded by the input kind", "[input][bad]") {
    std::string many = "a: [";
    for (uint32_t i = 0; i < kSocDescriptorInput.max_yaml_nodes; ++i) many += "0,";
    many += "0]\n";
    CHECK(soc_error(many) ==
          "s.yaml:1:39999: more than 20000 YAML nodes; a SoC descriptor has at most 20000");
}

TEST_CASE("YAML: long values are cut short in messages", "[input][bad]") {
    CHECK(soc_error("arch_name: " + std::string(200, 'x') + "\n") ==
          "s.yaml:1: field 'arch_name': unknown arch '" + std::string(60, 'x') +
              "...' (known: WORMHOLE_B0, wormhole_b0, BLACKHOLE, blackhole)");
}

TEST_CASE("mesh graph: a mesh whose size overflows 32 bits is refused, not wrapped",
          "[input][bad]") {
    // 65536 x 65536 = 2^32 devices: 0 in 32-bit arithmetic. Needs the mesh graph loader that
    // checks sizes in 64 bits (MeshGraph, the mesh graph descriptor work of issue 16).
    const std::string yaml =
        "ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 2, E: 2, S: 2, W: 2}}\n"
        "Board: [{name: Huge, type: Mesh, topology: [65536, 65536]}]\n"
        "Mesh: [{id: 0, board: Huge, device_topology: [65536, 65536], host_topology: [1, 1], "
        "host_ranks: [[0]]}]\n"
        "Graph: []\n";
    CHECK_THAT(expect_error(ErrorCategory::BadDescriptor,
                            [&] { fabric::MeshGraph::parse(yaml, "huge_mesh_graph.yaml"); }),
               Catch::Matchers::Contains("a mesh has at most 256 devices"));
}
