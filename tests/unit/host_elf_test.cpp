// ELF32 loader: a good image in full, then each way an image can be malformed or misplaced.
#include <catch2/catch.hpp>
#include <fstream>

#include "expect_error.h"
#include "fabric/elf.h"
#include "test_elf.h"

using Catch::Matchers::Contains;
using fabric::ElfImage;
using fabric::ErrorCategory;
using fabric::test::expect_error;
using fabric::test::TestElf;
using fabric::test::TestSegment;
namespace t = fabric::test;

namespace {

constexpr uint32_t kBase = 0x9040;  // Wormhole app firmware base

// code at 0x9040 (16 bytes), data 0x9100 with 8 file bytes + 24 bytes bss.
TestElf good_elf() {
    TestElf e;
    e.entry = kBase + 4;
    e.segments.push_back({.paddr = kBase, .data = t::words_to_bytes({1, 2, 3, 4})});
    e.segments.push_back({.paddr = 0x9100,
                          .data = {0xAA, 0xBB, 0xCC, 0xDD, 1, 2, 3, 4},
                          .memsz = 32,
                          .flags = t::kPfR | t::kPfW});
    e.symbols = {{"_start", kBase}, {"main", kBase + 4}, {"status_word", 0x9100}};
    return e;
}

std::string bad(const std::vector<uint8_t>& bytes) {
    return expect_error(ErrorCategory::BadElf, [&] { ElfImage::parse(bytes, "firmware.elf"); });
}

std::string misplaced(const TestElf& e, const fabric::PlacementRules& rules) {
    const auto img = ElfImage::parse(e.build(), "firmware.elf");
    return expect_error(ErrorCategory::BadElf, [&] { img.check_placement(rules); });
}

const fabric::PlacementRules kWhEth = fabric::erisc_placement(hal::kWormholeB0, 262144);

}  // namespace

TEST_CASE("good ELF: entry, segments with zero-filled bss, symbols", "[elf]") {
    const auto img = ElfImage::parse(good_elf().build(), "firmware.elf");
    CHECK(img.entry() == kBase + 4);
    REQUIRE(img.segments().size() == 2);
    const auto& code = img.segments()[0];
    CHECK(code.index == 0);
    CHECK(code.address == kBase);
    CHECK(code.executable);
    CHECK(code.bytes == t::words_to_bytes({1, 2, 3, 4}));
    const auto& data = img.segments()[1];
    CHECK(data.index == 1);
    CHECK(data.address == 0x9100);
    CHECK_FALSE(data.executable);
    CHECK(data.writable);
    CHECK(data.file_size == 8);
    REQUIRE(data.bytes.size() == 32);
    CHECK(std::vector<uint8_t>(data.bytes.begin(), data.bytes.begin() + 8) ==
          std::vector<uint8_t>{0xAA, 0xBB, 0xCC, 0xDD, 1, 2, 3, 4});
    for (size_t i = 8; i < 32; ++i) CHECK(data.bytes[i] == 0);
    CHECK(img.symbol("main") == kBase + 4u);
    CHECK(img.symbol("status_word") == 0x9100u);
    CHECK_FALSE(img.symbol("nope").has_value());
    img.check_placement(kWhEth);  // fits
}

TEST_CASE("ERISC placement ranges come from the arch map", "[elf]") {
    REQUIRE(kWhEth.loadable.size() == 1);
    CHECK(kWhEth.loadable[0].begin == 0x9040);
    CHECK(kWhEth.loadable[0].end == 0x3FFE0);
    CHECK(kWhEth.target == "wormhole_b0 eth core");
    const auto bh = fabric::erisc_placement(hal::kBlackhole, 524288);
    CHECK(bh.loadable[0].begin == 0x3330);
    CHECK(bh.loadable[0].end == 0x70000);
    // A descriptor with a smaller L1 than the arch map lowers the top.
    CHECK(fabric::erisc_placement(hal::kBlackhole, 262144).loadable[0].end == 262144);
}

TEST_CASE("bad ELF: not an ELF file", "[elf][bad]") {
    CHECK(bad({'#', '!', '/', 'b', 'i', 'n'}) ==
          "firmware.elf: not an ELF file (no \\x7fELF magic)");
    CHECK_THAT(bad({}), Contains("not an ELF file"));
}

TEST_CASE("bad ELF: 64-bit", "[elf][bad]") {
    auto e = good_elf();
    e.elf_class = 2;
    CHECK_THAT(bad(e.build()), Contains("firmware.elf: 64-bit ELF"));
}

TEST_CASE("bad ELF: wrong machine", "[elf][bad]") {
    auto e = good_elf();
    e.machine = 62;  // x86-64
    CHECK(bad(e.build()) == "firmware.elf: machine 62 is not RISC-V (EM_RISCV = 243)");
}

TEST_CASE("bad ELF: big-endian, not an executable, odd header sizes", "[elf][bad]") {
    auto e = good_elf();
    e.data = 2;
    CHECK_THAT(bad(e.build()), Contains("big-endian"));
    e = good_elf();
    e.type = 1;
    CHECK_THAT(bad(e.build()), Contains("ET_REL") && Contains("not ET_EXEC"));
    e = good_elf();
    e.phentsize = 56;
    CHECK_THAT(bad(e.build()), Contains("e_phentsize is 56"));
    e = good_elf();
    e.ehsize = 64;
    CHECK_THAT(bad(e.build()), Contains("e_ehsize is 64"));
}

TEST_CASE("bad ELF: truncated header", "[elf][bad]") {
    auto bytes = good_elf().build();
    bytes.resize(30);
    CHECK(bad(bytes) == "firmware.elf: truncated ELF header (30 bytes, an ELF32 header needs 52)");
}

TEST_CASE("bad ELF: truncated program header table", "[elf][bad]") {
    auto bytes = good_elf().build();
    bytes.resize(52 + 40);  // one and a bit program headers
    CHECK_THAT(bad(bytes), Contains("program header table") && Contains("past the end"));
}

TEST_CASE("bad ELF: truncated segment", "[elf][bad]") {
    auto e = good_elf();
    e.segments[1].filesz = 4096;  // claims more file bytes than exist
    e.segments[1].memsz = 4096;
    CHECK_THAT(bad(e.build()), Contains("firmware.elf: segment 1: file range") &&
                                   Contains("runs past the end of the file"));
}

TEST_CASE("bad ELF: memsz smaller than filesz", "[elf][bad]") {
    auto e = good_elf();
    e.segments[1].memsz = 4;
    CHECK(bad(e.build()) == "firmware.elf: segment 1: memsz 4 is smaller than filesz 8");
}

TEST_CASE("bad ELF: no loadable segment", "[elf][bad]") {
    auto e = good_elf();
    for (auto& s : e.segments) s.type = 4;  // PT_NOTE
    CHECK_THAT(bad(e.build()), Contains("no loadable (PT_LOAD) segment"));
}

TEST_CASE("bad ELF: segment outside L1", "[elf][bad]") {
    auto e = good_elf();
    e.segments[1].paddr = 0x40000;
    e.segments[1].data.assign(0x100, 0);
    e.segments[1].memsz = 0;
    CHECK(misplaced(e, kWhEth) ==
          "firmware.elf: segment 1 [0x00040000, 0x00040100) lies outside the loadable L1 range "
          "[0x00009040, 0x0003ffe0) of wormhole_b0 eth core");
    // Straddling the top, and below the firmware base, are outside too.
    e = good_elf();
    e.segments[1].paddr = 0x3FFE0 - 8;
    CHECK_THAT(misplaced(e, kWhEth), Contains("segment 1 [0x0003ffd8, 0x0003fff8) lies outside"));
    e = good_elf();
    e.segments[0].paddr = 0x9000;
    e.entry = 0x9000;
    CHECK_THAT(misplaced(e, kWhEth), Contains("segment 0 [0x00009000, 0x00009010) lies outside"));
}

TEST_CASE("bad ELF: segment over a reserved region", "[elf][bad]") {
    fabric::PlacementRules rules = kWhEth;
    rules.reserved.push_back({0x9100, 0x9104, "status word"});
    CHECK(misplaced(good_elf(), rules) ==
          "firmware.elf: segment 1 [0x00009100, 0x00009120) overlaps the reserved region "
          "'status word' [0x00009100, 0x00009104) of wormhole_b0 eth core");
}

TEST_CASE("bad ELF: overlapping segments", "[elf][bad]") {
    auto e = good_elf();
    e.segments[1].paddr = kBase + 8;
    CHECK(bad(e.build()) ==
          "firmware.elf: segment 1 [0x00009048, 0x00009068) overlaps segment 0 [0x00009040, "
          "0x00009050)");
}

TEST_CASE("bad ELF: entry outside code", "[elf][bad]") {
    auto e = good_elf();
    e.entry = 0x9104;  // inside the data segment, which is not executable
    CHECK(bad(e.build()) ==
          "firmware.elf: entry point 0x00009104 is not inside a loaded executable segment");
    e.entry = 0x20000;  // inside nothing
    CHECK_THAT(bad(e.build()), Contains("entry point 0x00020000"));
    e.entry = kBase + 16;  // one past the end of the code
    CHECK_THAT(bad(e.build()), Contains("entry point 0x00009050"));
}

TEST_CASE("ELF file that cannot be read is bad input", "[elf][bad]") {
    CHECK_THAT(
        expect_error(ErrorCategory::BadInput, [] { ElfImage::load_file("/nonexistent/fw.elf"); }),
        Contains("/nonexistent/fw.elf: cannot open"));
}

TEST_CASE("ELF round trip through a file", "[elf]") {
    const std::string path = std::string(FABRIC_TEST_TMP_DIR) + "/roundtrip.elf";
    const auto bytes = good_elf().build();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    const auto img = ElfImage::load_file(path);
    CHECK(img.name() == path);
    CHECK(img.segments().size() == 2);
}

TEST_CASE("bss-only segment: no file bytes needed, even with an offset past the end", "[elf]") {
    auto e = good_elf();
    e.segments[1].data.clear();
    e.segments[1].memsz = 64;
    e.segments[1].offset = 0x100000;
    const auto img = ElfImage::parse(e.build(), "firmware.elf");
    REQUIRE(img.segments().size() == 2);
    CHECK(img.segments()[1].bytes == std::vector<uint8_t>(64, 0));
}

TEST_CASE("corrupted images are rejected with BadElf, never crash", "[elf][bad]") {
    const auto good = good_elf().build();
    uint32_t rng = 12345;  // deterministic xorshift
    auto next = [&] {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        return rng;
    };
    int rejected = 0;
    for (int i = 0; i < 5000; ++i) {
        auto bytes = good;
        const int edits = 1 + static_cast<int>(next() % 4);
        for (int k = 0; k < edits; ++k) {
            // Mostly the headers (ELF header, program headers), sometimes anywhere.
            const size_t span = next() % 4 ? 52 + 64 : bytes.size();
            bytes[next() % span] = static_cast<uint8_t>(next());
        }
        if (next() % 8 == 0) bytes.resize(next() % bytes.size());
        try {
            ElfImage::parse(bytes, "fuzz.elf");
        } catch (const fabric::Error& e) {
            CHECK(e.category() == ErrorCategory::BadElf);
            ++rejected;
        }
    }
    CHECK(rejected > 1000);
}

TEST_CASE("bad ELF: a segment too large for any core is refused before allocation", "[elf][bad]") {
    auto e = good_elf();
    e.segments[1].memsz = 0xFFFFFFF0u - 0x9100u;
    CHECK_THAT(bad(e.build()), Contains("segment 1: memsz") && Contains("2 MiB"));
}
