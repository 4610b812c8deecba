// fabricctl as a process: every bad input gives its documented exit code and a one-line message
// on stderr with the key words; results on stdout (JSON parsed and checked).

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_expect.h"
#include "hal/arch_map.h"
#include "run_process.h"
#include "test_elf.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace t = fabric::test;
using fabric::test::expect_failure;

using fabric::test::fabricctl;
using fabric::test::write_file;

namespace {

const std::string kTmp = FABRIC_TEST_TMP_DIR;
const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kWhSoc = kSoc + "/wormhole_b0_80_arch.yaml";
const std::string kBhSoc = kSoc + "/blackhole_140_arch.yaml";

using t::Run;

// An image that fits a Wormhole ERISC: prints `text`, exits with `status`.
std::string wh_program(const std::string& text, uint32_t status) {
    return write_file("prog.elf", t::program_elf(t::console_exit_program(text, status),
                                                 hal::kWormholeB0.app_fw_base));
}

}  // namespace

// ---- usage (100)
// ---------------------------------------------------------------------------------

TEST_CASE("fabricctl: no command is a usage error", "[cli]") {
    const auto r = fabricctl({});
    expect_failure(r, 100);
    CHECK_THAT(r.err, Contains("subcommand"));
}

TEST_CASE("fabricctl: --help prints usage and the exit codes", "[cli]") {
    const auto r = fabricctl({"--help"});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("soc") && Contains("sim") && Contains("Exit codes"));
}

TEST_CASE("fabricctl sim run: unknown arch", "[cli]") {
    const auto r = fabricctl({"sim", "run", "--arch", "quasar", "--core", "0", "fw.elf"});
    expect_failure(r, 100);
    CHECK_THAT(r.err, Contains("--arch") && Contains("unknown arch 'quasar'"));
}

TEST_CASE("fabricctl sim run: missing firmware, unknown option, zero cycle budget", "[cli]") {
    auto r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "0"});
    expect_failure(r, 100);
    CHECK_THAT(r.err, Contains("firmware"));
    r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "0", "--bogus", "fw.elf"});
    expect_failure(r, 100);
    CHECK_THAT(r.err, Contains("--bogus"));
    r = fabricctl(
        {"sim", "run", "--arch", "wormhole_b0", "--core", "0", "--max-cycles", "0", "fw.elf"});
    expect_failure(r, 100);
    CHECK_THAT(r.err, Contains("--max-cycles"));
}

// ---- bad input (101)
// -----------------------------------------------------------------------------

TEST_CASE("fabricctl sim run: unknown core", "[cli]") {
    const std::string fw = wh_program("", 0);
    auto r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "16", fw});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("--core 16") && Contains("eth channel 16 does not exist") &&
                          Contains("0..15"));
    r = fabricctl({"sim", "run", "--arch", "blackhole", "--core", "14", fw});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("eth channel 14 does not exist") && Contains("0..13"));
    r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "20-20", fw});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("no core at 20-20"));
    r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "1-1", fw});
    expect_failure(r, 101);
    CHECK_THAT(r.err,
               Contains("1-1") && Contains("functional_workers") && Contains("not an eth core"));
    r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "eth0", fw});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("--core eth0") && Contains("not an eth channel number"));
}

TEST_CASE("fabricctl sim run: descriptor of another arch", "[cli]") {
    const auto r = fabricctl(
        {"sim", "run", "--arch", "blackhole", "--soc", kWhSoc, "--core", "0", wh_program("", 0)});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("descriptor is for wormhole_b0 but --arch is blackhole"));
}

TEST_CASE("fabricctl: files that do not exist", "[cli]") {
    auto r =
        fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "0", "/nonexistent/fw.elf"});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("/nonexistent/fw.elf") && Contains("cannot open"));
    r = fabricctl({"soc", "show", "/nonexistent/soc.yaml"});
    expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("/nonexistent/soc.yaml") && Contains("cannot open"));
}

TEST_CASE("fabricctl: a directory or a device file as an input is bad input (101)", "[cli]") {
    auto r = fabricctl({"soc", "show", "/dev/zero"});
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: /dev/zero: not a regular file (a character device); a SoC "
          "descriptor must be a file\n");
    r = fabricctl({"soc", "show", kTmp});
    expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: " + kTmp +
                       ": not a regular file (a directory); a SoC descriptor must be a file\n");
    r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "0", "/dev/zero"});
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: /dev/zero: not a regular file (a character device); a "
          "firmware image must be a file\n");
    r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--cluster", kTmp, "--no-base-fw",
                   "--core", "0", wh_program("", 0)});
    expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: " + kTmp +
                       ": not a regular file (a directory); a cluster descriptor must be a file\n");
}

TEST_CASE("fabricctl: control characters from a file never reach the terminal raw", "[cli]") {
    const std::string soc =
        write_file("ctl.yaml", "arch_name: \"wormhole_b0\\x1b]0;owned\\x07\\x1b[2J\"\n");
    const auto r = fabricctl({"soc", "show", soc});
    expect_failure(r, 102);
    CHECK(r.err ==
          "fabricctl: error: " + soc +
              ":1: field 'arch_name': unknown arch 'wormhole_b0\\x1b]0;owned\\x07\\x1b[2J' "
              "(known: WORMHOLE_B0, wormhole_b0, BLACKHOLE, blackhole)\n");
    const auto raw = fabricctl({"soc", "show", write_file("raw.yaml", "arch_name: x\x1b[31m\n")});
    expect_failure(raw, 102);
    CHECK_THAT(raw.err, Contains(":1:13: control character U+001B"));
    CHECK(raw.err.find('\x1b') == std::string::npos);
}

// ---- bad descriptor (102)
// ------------------------------------------------------------------------

TEST_CASE("fabricctl: malformed YAML descriptor", "[cli]") {
    const std::string soc = write_file("bad.yaml", "grid: {x_size: 10, y_size: [12\narc: [0-10]\n");
    auto r = fabricctl({"soc", "show", soc});
    expect_failure(r, 102);
    CHECK_THAT(r.err, Contains(soc) && Contains("malformed YAML"));
    r = fabricctl(
        {"sim", "run", "--arch", "wormhole_b0", "--soc", soc, "--core", "0", wh_program("", 0)});
    expect_failure(r, 102);
    CHECK_THAT(r.err, Contains("malformed YAML"));
}

TEST_CASE("fabricctl soc show: descriptor breaking the schema", "[cli]") {
    std::string text = t::slurp(kWhSoc);
    SECTION("missing field") {
        const auto at = text.find("eth_l1_size:");
        REQUIRE(at != std::string::npos);
        text.erase(at, std::string("eth_l1_size:\n  262144\n").size());
        const auto r = fabricctl({"soc", "show", write_file("soc.yaml", text)});
        expect_failure(r, 102);
        CHECK_THAT(r.err, Contains("field 'eth_l1_size'") && Contains("missing"));
    }
    SECTION("a misspelt key is unknown") {
        const auto at = text.find("eth_l1_size:");
        REQUIRE(at != std::string::npos);
        text.replace(at, std::string("eth_l1_size:").size(), "eth_l1_bytes:");
        const auto r = fabricctl({"soc", "show", write_file("soc.yaml", text)});
        expect_failure(r, 102);
        CHECK_THAT(r.err, Contains(":54: unknown key 'eth_l1_bytes' (known: grid, arc,"));
    }
    SECTION("unknown arch") {
        const auto at = text.find("arch_name: WORMHOLE_B0");
        REQUIRE(at != std::string::npos);
        text.replace(at, std::string("arch_name: WORMHOLE_B0").size(), "arch_name: GRAYSKULL");
        const auto r = fabricctl({"soc", "show", write_file("soc.yaml", text)});
        expect_failure(r, 102);
        CHECK_THAT(r.err, Contains("field 'arch_name'") && Contains("unknown arch 'GRAYSKULL'"));
    }
    SECTION("coordinate outside the grid") {
        const auto at = text.find("9-6,");
        REQUIRE(at != std::string::npos);
        text.replace(at, 3, "9-12");
        const auto r = fabricctl({"soc", "show", write_file("soc.yaml", text)});
        expect_failure(r, 102);
        CHECK_THAT(r.err, Contains("field 'eth[8]'") && Contains("9-12 is outside the 10x12 grid"));
    }
}

// ---- bad ELF (103)
// -------------------------------------------------------------------------------

TEST_CASE("fabricctl sim run: bad ELF files", "[cli]") {
    auto run = [](const std::string& fw) {
        return fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "0", fw});
    };
    SECTION("not an ELF") {
        const auto r = run(write_file("text.elf", std::string("just text\n")));
        expect_failure(r, 103);
        CHECK_THAT(r.err, Contains("not an ELF file"));
    }
    SECTION("64-bit") {
        t::TestElf e;
        e.elf_class = 2;
        e.entry = 0x9040;
        e.segments.push_back({.paddr = 0x9040, .data = t::words_to_bytes({t::rv::kEbreak})});
        const auto r = run(write_file("elf64.elf", e.build()));
        expect_failure(r, 103);
        CHECK_THAT(r.err, Contains("64-bit ELF"));
    }
    SECTION("wrong machine") {
        t::TestElf e;
        e.machine = 40;  // ARM
        e.entry = 0x9040;
        e.segments.push_back({.paddr = 0x9040, .data = t::words_to_bytes({t::rv::kEbreak})});
        const auto r = run(write_file("arm.elf", e.build()));
        expect_failure(r, 103);
        CHECK_THAT(r.err, Contains("machine 40 is not RISC-V"));
    }
    SECTION("segment outside L1") {
        const std::string fw =
            write_file("high.elf", t::program_elf(t::console_exit_program("", 0), 0x40000));
        const auto r = run(fw);
        expect_failure(r, 103);
        CHECK_THAT(r.err, Contains(fw + ": segment 0 [0x00040000, ") &&
                              Contains("lies outside the loadable L1 range [0x00009040, "
                                       "0x0003ffe0) of wormhole_b0 eth core"));
    }
    SECTION("Blackhole image on Wormhole: below the Wormhole firmware base") {
        const std::string fw = write_file(
            "bh.elf", t::program_elf(t::console_exit_program("", 0), hal::kBlackhole.app_fw_base));
        const auto r = run(fw);
        expect_failure(r, 103);
        CHECK_THAT(r.err, Contains("segment 0 [0x00003330, ") && Contains("lies outside"));
    }
}

// ---- soc show
// ------------------------------------------------------------------------------------

TEST_CASE("fabricctl soc show --json", "[cli]") {
    auto r = fabricctl({"soc", "show", kWhSoc, "--json"});
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == true);
    CHECK(j["arch"] == "wormhole_b0");
    CHECK(j["grid"]["x_size"] == 10);
    CHECK(j["grid"]["y_size"] == 12);
    CHECK(j["counts"]["eth"] == 16);
    CHECK(j["counts"]["functional_workers"] == 80);
    CHECK(j["counts"]["dram"] == 18);
    CHECK(j["dram_channels"].size() == 6);
    CHECK(j["worker_l1_size"] == 1499136);
    CHECK(j["eth_l1_size"] == 262144);
    CHECK(j["dram_bank_size"] == 2147483648ull);
    REQUIRE(j["eth_channels"].size() == 16);
    CHECK(j["eth_channels"][0]["core"] == "9-0");
    CHECK(j["eth_channels"][15]["core"] == "4-6");
    CHECK(j["eth_channels"][15]["channel"] == 15);

    r = fabricctl({"soc", "show", kBhSoc, "--json"});
    REQUIRE(r.code == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j["arch"] == "blackhole");
    CHECK(j["counts"]["eth"] == 14);
    CHECK(j["counts"]["functional_workers"] == 140);
    CHECK(j["eth_l1_size"] == 524288);
    CHECK(j["eth_channels"][13]["x"] == 10);
    CHECK(j["eth_channels"][13]["y"] == 1);
}

TEST_CASE("fabricctl soc show --json: errors are a JSON document too", "[cli]") {
    const auto r = fabricctl({"soc", "show", write_file("bad.yaml", "[1, 2"), "--json"});
    CHECK(r.code == 102);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == false);
    CHECK(j["exit_code"] == 102);
    CHECK(j["error"]["category"] == "bad_descriptor");
    CHECK_THAT(j["error"]["message"].get<std::string>(), Contains("malformed YAML"));
}

TEST_CASE("fabricctl soc show: text summary", "[cli]") {
    const auto r = fabricctl({"soc", "show", kBhSoc});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("blackhole") && Contains("17 x 12") &&
                          Contains("functional_workers 140") && Contains("eth 14") &&
                          Contains("0:1-1 1:16-1"));
}

// ---- sim run
// -------------------------------------------------------------------------------------

#ifdef FABRIC_HAVE_SIM

TEST_CASE("fabricctl sim run: console to stdout, firmware status as exit code", "[cli][sim]") {
    const auto r = fabricctl(
        {"sim", "run", "--arch", "wormhole_b0", "--core", "0", wh_program("hi from erisc\n", 7)});
    CHECK(r.code == 7);
    CHECK(r.out == "hi from erisc\n");
    CHECK_THAT(r.err, Contains("chip 0 core 9-0 (eth 0) exited with status 7 after"));
}

TEST_CASE("fabricctl sim run: --quiet success prints only the console", "[cli][sim]") {
    const auto r = fabricctl(
        {"sim", "run", "--arch", "wormhole_b0", "--core", "9-6", "-q", wh_program("ok\n", 0)});
    CHECK(r.code == 0);
    CHECK(r.out == "ok\n");
    CHECK(r.err.empty());
}

TEST_CASE("fabricctl sim run: firmware status >= 64 maps to 64", "[cli][sim]") {
    const auto r =
        fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "3", wh_program("", 200)});
    CHECK(r.code == 64);
    CHECK_THAT(r.err, Contains("exited with status 200") && Contains("exit code 64"));
}

TEST_CASE("fabricctl sim run: trap", "[cli][sim]") {
    const uint32_t base = hal::kWormholeB0.app_fw_base;
    const std::string fw = write_file(
        "trap.elf",
        t::program_elf({t::rv::addi(1, 0, 1), t::rv::addi(1, 1, 1), t::rv::kEbreak}, base));
    const auto r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "0", fw});
    expect_failure(r, 104);
    CHECK_THAT(r.err, Contains("firmware trapped on chip 0 core 9-0 (eth 0): breakpoint (mcause "
                               "3) at pc 0x00009048"));
}

TEST_CASE("fabricctl sim run: cycle budget exhausted", "[cli][sim]") {
    const uint32_t base = hal::kWormholeB0.app_fw_base;
    const std::string fw =
        write_file("spin.elf", t::program_elf({t::rv::addi(1, 0, 1), t::rv::kJalSelf}, base));
    const auto r = fabricctl(
        {"sim", "run", "--arch", "wormhole_b0", "--core", "0", "--max-cycles", "20000", fw});
    expect_failure(r, 105);
    CHECK_THAT(r.err, Contains("cycle budget of 20000 cycles exhausted") &&
                          Contains("still running at pc 0x00009044"));
}

TEST_CASE("fabricctl sim run --json on Blackhole", "[cli][sim]") {
    const std::string fw = write_file(
        "bh.elf", t::program_elf(t::console_exit_program("bh\n", 5), hal::kBlackhole.app_fw_base));
    const auto r = fabricctl({"sim", "run", "--arch", "blackhole", "--core", "16-1", "--json", fw});
    CHECK(r.code == 5);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["outcome"] == "exited");
    CHECK(j["exit_status"] == 5);
    CHECK(j["exit_code"] == 5);
    CHECK(j["console"] == "bh\n");
    CHECK(j["core"]["eth_channel"] == 1);
    CHECK(j["core"]["x"] == 16);
    CHECK(j["arch"] == "blackhole");
    CHECK(j["cycles"].get<uint64_t>() > 0);
}

TEST_CASE("fabricctl sim run --trace writes an FST file", "[cli][sim]") {
    const std::string fst = t::temp_path(kTmp, "run", ".fst");
    const auto r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "0", "--trace", fst,
                              "-q", wh_program("t\n", 0)});
    if (r.code == 107) {
        WARN("model built without tracing: " << r.err);
        return;
    }
    CHECK(r.code == 0);
    CHECK(std::filesystem::file_size(fst) > 0);
    std::filesystem::remove(fst);
}

TEST_CASE("fabricctl sim run: the demo firmware from the firmware build", "[cli][sim][firmware]") {
    for (const std::string arch : {"wormhole_b0", "blackhole"}) {
        const std::string fw = std::string(FABRIC_FIRMWARE_DIR) + "/" + arch + "/hello.elf";
        if (!std::filesystem::exists(fw)) {
            WARN("skipped: " << fw << " is not built yet");
            continue;
        }
        const auto r = fabricctl({"sim", "run", "--arch", arch, "--core", "0", fw});
        INFO("stdout: " << r.out);
        INFO("stderr: " << r.err);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Contains("hello from the " + arch) && Contains("(correct)"));
        CHECK_THAT(r.err, !Contains("warning"));
    }
    // A Wormhole image fits Blackhole's larger L1 window, but not at its firmware base: warned.
    const std::string wh_fw = std::string(FABRIC_FIRMWARE_DIR) + "/wormhole_b0/hello.elf";
    if (std::filesystem::exists(wh_fw)) {
        const auto r = fabricctl({"sim", "run", "--arch", "blackhole", "--core", "0", "-q", wh_fw});
        CHECK_THAT(r.err, Contains("warning: " + wh_fw +
                                   ": entry 0x00009040 is neither the blackhole firmware base "
                                   "0x00003330 nor its router base 0x00015740; was it built for "
                                   "another arch?"));
    }
}

#else

TEST_CASE("fabricctl sim run without the simulator is unsupported", "[cli]") {
    const auto r =
        fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "0", wh_program("", 0)});
    expect_failure(r, 107);
    CHECK_THAT(r.err, Contains("built without the simulator"));
}

#endif
