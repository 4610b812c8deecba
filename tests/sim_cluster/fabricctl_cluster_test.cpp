// `fabricctl sim run --cluster` as a process: firmware on cores of several chips, consoles prefixed
// by chip and core, the worst outcome as the exit code, --json with every core, bad --load specs.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hal/arch_map.h"
#include "run_process.h"
#include "test_elf.h"

using Catch::Matchers::Contains;
namespace ft = fabric::test;

namespace {

const std::string kTmp = FABRIC_TEST_TMP_DIR;
const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kN300 = kSoc + "/n300_cluster.yaml";

using ft::Run;

std::string temp_path(const std::string& stem, const std::string& ext) {
    return ft::temp_path(kTmp, stem, ext);
}

Run fabricctl(const std::vector<std::string>& args) {
    return ft::run_process(FABRICCTL, args, kTmp);
}

std::string program(const std::string& text, uint32_t status) {
    const std::string path = temp_path("prog", ".elf");
    const auto bytes =
        ft::program_elf(ft::console_exit_program(text, status), hal::kWormholeB0.app_fw_base);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path;
}

std::string write_text(const std::string& text) {
    const std::string path = temp_path("cluster", ".yaml");
    std::ofstream(path) << text;
    return path;
}

bool have_base_fw() {
    return std::filesystem::exists(std::string(FABRIC_FIRMWARE_DIR) +
                                   "/wormhole_b0/erisc_base.elf");
}

}  // namespace

TEST_CASE("fabricctl sim run --cluster: firmware on two chips, consoles prefixed by chip and core",
          "[cli][cluster]") {
    if (!have_base_fw()) {
        WARN("skipped: erisc_base.elf is not built yet");
        return;
    }
    const auto r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--cluster", kN300, "--load",
                              "0:8=" + program("from chip 0\nsecond line", 0), "--load",
                              "1:9-0=" + program("from chip 1\n", 0)});
    INFO(r.err);
    CHECK(r.code == 0);
    // Chip 0 channel 8 is core 9-6 on the Wormhole descriptor.
    CHECK(r.out == "[0:9-6] from chip 0\n[1:9-0] from chip 1\n[0:9-6] second line\n");
    CHECK_THAT(r.err,
               Contains("firmware on chip 0 core 9-6 (eth 8) exited with status 0 after") &&
                   Contains("firmware on chip 1 core 9-0 (eth 0) exited with status 0 after"));
}

TEST_CASE("fabricctl sim run --cluster: a failing core makes the run fail", "[cli][cluster]") {
    if (!have_base_fw()) {
        WARN("skipped: erisc_base.elf is not built yet");
        return;
    }
    auto r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--cluster", kN300, "-q", "--load",
                        "0:8=" + program("ok\n", 0), "--load", "1:0=" + program("bad\n", 5)});
    CHECK(r.code == 5);
    CHECK_THAT(r.err, Contains("chip 1 core 9-0 (eth 0) exited with status 5") &&
                          !Contains("chip 0 core"));
    // A trap anywhere wins over a firmware status.
    const std::string trap = temp_path("trap", ".elf");
    const auto bytes =
        ft::program_elf({ft::rv::addi(1, 0, 1), ft::rv::kEbreak}, hal::kWormholeB0.app_fw_base);
    std::ofstream(trap, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    r = fabricctl({"sim", "run", "--arch", "wormhole_b0", "--cluster", kN300, "--load",
                   "0:8=" + program("", 3), "--load", "1:1=" + trap});
    CHECK(r.code == 104);
    CHECK_THAT(r.err, Contains("firmware trapped on chip 1 core 1-0 (eth 1): breakpoint"));
}

TEST_CASE("fabricctl sim run --cluster --json lists every core", "[cli][cluster]") {
    if (!have_base_fw()) {
        WARN("skipped: erisc_base.elf is not built yet");
        return;
    }
    const auto r =
        fabricctl({"sim", "run", "--arch", "wormhole_b0", "--cluster", kN300, "--json", "--load",
                   "0:9=" + program("a\n", 0), "--load", "1:1=" + program("b\n", 2)});
    CHECK(r.code == 2);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == false);
    CHECK(j["exit_code"] == 2);
    CHECK(j["cluster"] == kN300);
    REQUIRE(j["cores"].size() == 2);
    CHECK(j["cores"][0]["core"]["chip"] == 0);
    CHECK(j["cores"][0]["core"]["eth_channel"] == 9);
    CHECK(j["cores"][0]["launch"] == "launch_flag");
    CHECK(j["cores"][0]["console"] == "a\n");
    CHECK(j["cores"][1]["exit_status"] == 2);
    CHECK(j["cores"][1]["outcome"] == "exited");
}

TEST_CASE("fabricctl sim run --cluster --no-base-fw starts cores bare metal", "[cli][cluster]") {
    const auto r =
        fabricctl({"sim", "run", "--arch", "wormhole_b0", "--cluster", kSoc + "/t3k_cluster.yaml",
                   "--no-base-fw", "--json", "--load", "7:0=" + program("x\n", 0)});
    CHECK(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["cores"][0]["launch"] == "reset_pc");
    CHECK(j["cores"][0]["console"] == "x\n");
    CHECK(j["base_firmware"].is_null());
}

TEST_CASE("fabricctl sim run: bad --load and --cluster inputs", "[cli][cluster]") {
    const std::string fw = program("", 0);
    auto fails = [](const Run& r, int code, const std::string& text) {
        INFO(r.err);
        CHECK(r.code == code);
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_THAT(r.err, Contains(text));
    };
    fails(fabricctl({"sim", "run", "--arch", "wormhole_b0", "--load", "8" + fw}), 101,
          "expected [chip:]core=firmware.elf");
    fails(fabricctl({"sim", "run", "--arch", "wormhole_b0", "--load", "x:8=" + fw}), 101,
          "'x' is not a chip number");
    fails(fabricctl({"sim", "run", "--arch", "wormhole_b0", "--cluster", kN300, "--no-base-fw",
                     "--load", "2:8=" + fw}),
          101, "chip 2 does not exist (the cluster has 2 chips: 0..1)");
    fails(fabricctl({"sim", "run", "--arch", "wormhole_b0", "--load", "0:1-1=" + fw}), 101,
          "core 1-1 is a 'functional_workers' core, not an eth core");
    fails(fabricctl(
              {"sim", "run", "--arch", "wormhole_b0", "--core", "9-0", fw, "--load", "0=" + fw}),
          101, "chip 0 core 9-0 already gets");
    fails(fabricctl({"sim", "run", "--arch", "blackhole", "--cluster", kN300, "--load", "0=" + fw}),
          101, "cluster is wormhole_b0 but --arch is blackhole");
    fails(fabricctl({"sim", "run", "--arch", "wormhole_b0", "--cluster",
                     write_text("arch: {0: wormhole_b0}\n"), "--load", "0=" + fw}),
          102, "field 'ethernet_connections': required field is missing");
    fails(fabricctl({"sim", "run", "--arch", "wormhole_b0", "--base-fw", fw, "--no-base-fw",
                     "--load", "0=" + fw}),
          100, "--no-base-fw");
    fails(fabricctl({"sim", "run", "--arch", "wormhole_b0"}), 100, "nothing to run");
    fails(fabricctl({"sim", "run", "--arch", "wormhole_b0", fw}), 100,
          "a firmware file needs --core");
    // A base firmware image that does not fit its region.
    fails(fabricctl({"sim", "run", "--arch", "wormhole_b0", "--base-fw", fw, "--load", "0=" + fw}),
          103, "base firmware region");
}
