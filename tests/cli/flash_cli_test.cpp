// `fabricctl flash` as a process: firmware onto selected eth cores of selected chips in the model
// (every core's outcome), JSON, and the exit codes of bad selections, a bad ELF and a missing
// PCIe device.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_expect.h"
#include "run_process.h"

using Catch::Matchers::Contains;
namespace t = fabric::test;
using fabric::test::expect_failure;

using fabric::test::fabricctl;

namespace {

const std::string kTmp = FABRIC_TEST_TMP_DIR;
const std::string kN300 = std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/n300_cluster.yaml";
const std::string kHello = std::string(FABRIC_FIRMWARE_DIR) + "/wormhole_b0/hello.elf";

}  // namespace

#ifdef FABRIC_HAVE_SIM
TEST_CASE("fabricctl flash: hello on eth 0 and 1 of both n300 chips", "[cli][flash]") {
    const auto r =
        fabricctl({"flash", "--cluster", kN300, "--chips", "0,1", "--eth", "0,1", kHello});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    // WH eth cores boot our base firmware in the model: the app is started by the launch flag.
    for (const char* line : {"chip 0 eth 0  (core 9-0): launch_flag, exited with status 0 after",
                             "chip 0 eth 1  (core 1-0): launch_flag, exited with status 0",
                             "chip 1 eth 0  (core 9-0): launch_flag, exited with status 0",
                             "chip 1 eth 1  (core 1-0): launch_flag, exited with status 0"}) {
        CHECK_THAT(r.out, Contains(line));
    }
    // Under each core's line, what its firmware printed (its exit mailbox): two lines each.
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 4 * 3);
    const std::string console =
        "    | hello from the wormhole_b0 Ethernet RISC-V core (firmware at 0x09040, 256 KiB L1)\n"
        "    | sum of the first 100 primes = 24133 (correct), ";
    size_t n = 0;
    for (size_t at = r.out.find(console); at != std::string::npos; at = r.out.find(console, at + 1))
        ++n;
    CHECK(n == 4);
    CHECK_THAT(r.err,
               Contains("fabricctl: flashed " + kHello + " onto 4 eth cores of sim wormhole_b0"));
}

TEST_CASE("fabricctl flash --json: bare metal, every eth core of chip 1", "[cli][flash]") {
    const auto r = fabricctl({"flash", "--cluster", kN300, "--no-base-fw", "--chips", "1", "--eth",
                              "all", "--json", kHello});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == true);
    CHECK(j["exit_code"] == 0);
    REQUIRE(j["cores"].size() == 16);
    for (const auto& c : j["cores"]) {
        CHECK(c["chip"] == 1);
        CHECK(c["launch"] == "reset_pc");
        CHECK(c["outcome"] == "exited");
        CHECK(c["exit_status"] == 0);
        CHECK_THAT(c["console"].get<std::string>(),
                   Contains("sum of the first 100 primes = 24133 (correct)"));
        CHECK(c["console_lost"] == 0);
    }
    CHECK(j["cores"][15]["eth"] == 15);
}

TEST_CASE("fabricctl flash: bad selections and images are refused before anything runs",
          "[cli][flash]") {
    const std::string bad_elf = kTmp + "/flash_not_an_elf.elf";
    std::ofstream(bad_elf) << "not an ELF";
    struct Case {
        std::vector<std::string> args;
        int code;
        const char* says;
    };
    const std::vector<Case> cases = {
        {{"flash", "--cluster", kN300, "--eth", "16", kHello},
         101,
         "--eth: channel 16 is not on a wormhole_b0 chip (0..15)"},
        {{"flash", "--cluster", kN300, "--eth", "0,x", kHello},
         101,
         "--eth 0,x: 'x' is not a channel number"},
        {{"flash", "--cluster", kN300, "--chips", "2", "--eth", "0", kHello},
         101,
         "--chips: chip 2 is not on"},
        {{"flash", "--cluster", kN300, "--eth", "0", bad_elf}, 103, ""},
        {{"flash", "--eth", "0", kHello}, 101, "--target sim needs --cluster"},
        {{"flash", "--cluster", kN300, kHello}, 101, "give the cores: --eth, --workers or both"},
        {{"flash", "--cluster", kN300, "--workers", "1-1,0-0", kHello},
         101,
         "--workers: 0-0 is not a worker core x-y of"},
        {{"flash", "--target", "pcie", "--cluster", kN300, "--eth", "0", kHello},
         101,
         "describe a model of the command's own: use them with --target sim and no sim server"},
    };
    for (const Case& c : cases) {
        INFO(c.args.back() << " " << c.says);
        const auto r = fabricctl(c.args);
        expect_failure(r, c.code);
        CHECK_THAT(r.err, Contains(c.says));
    }
}
#endif

TEST_CASE("fabricctl flash --target pcie without a device: exit 106, nothing else",
          "[cli][flash]") {
    const auto r = fabricctl(
        {"flash", "--target", "pcie", "--dir", kTmp + "/no_such_dev_dir", "--eth", "0", kHello});
    expect_failure(r, 106);
    CHECK_THAT(r.err, Contains("no Tenstorrent device found under " + kTmp + "/no_such_dev_dir"));
}
