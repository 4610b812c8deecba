// fabricctl devices / pcie run end to end (host/fabricctl/devices_cmd.h, pcie_run_cmd.h): discovery
// on this machine (no /dev/tenstorrent: nothing found, exit 0), --target pcie without a device
// (exit 106), and the same commands through the simulated driver.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_process.h"

using Catch::Matchers::Contains;
using fabric::test::run_process;

namespace {

const std::string kFabricctl = FABRICCTL;
const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kFwDir = FABRIC_FIRMWARE_DIR;
const std::string kTmp = FABRIC_TEST_TMP_DIR;

fabric::test::Run fabricctl(const std::vector<std::string>& args) {
    return run_process(kFabricctl, args, kTmp);
}

}  // namespace

TEST_CASE("fabricctl devices: nothing found is not an error", "[pcie][cli]") {
    const std::string empty = kTmp + "/empty-dev-dir";
    std::filesystem::create_directories(empty);
    auto r = fabricctl({"devices", "--dir", empty});
    CHECK(r.code == 0);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("no Tenstorrent device found under " + empty));
    r = fabricctl({"devices", "--dir", empty, "--json"});
    CHECK(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == true);
    CHECK(j["devices"].empty());
}

TEST_CASE("fabricctl pcie run --target pcie without a device: a clear device error",
          "[pcie][cli]") {
    const std::string empty = kTmp + "/empty-dev-dir";
    std::filesystem::create_directories(empty);
    auto r = fabricctl({"pcie", "run", "--dir", empty, "--core", "0", "fw.elf"});
    CHECK(r.code == 106);
    CHECK_THAT(r.err, Contains("no Tenstorrent device found under " + empty));
    r = fabricctl({"pcie", "run", "--target", "sim", "--core", "0", "fw.elf"});
    CHECK(r.code == 101);
    CHECK_THAT(r.err, Contains("--target sim needs --arch"));
    r = fabricctl({"pcie", "run", "--target", "nope", "--core", "0", "fw.elf"});
    CHECK(r.code == 100);
}

TEST_CASE("fabricctl devices --sim and pcie run --target sim go through the simulated driver",
          "[pcie][cli][sim]") {
    auto r = fabricctl({"devices", "--sim", "blackhole", "--links"});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("/dev/tenstorrent/0 (sim)  blackhole  pci 0000:01:00.0"));
    CHECK_THAT(r.out, Contains("links    none"));
    const std::string base = kFwDir + "/wormhole_b0/erisc_base.elf";
    const std::string hello_bh = kFwDir + "/blackhole/hello.elf";
    if (!std::filesystem::exists(base) || !std::filesystem::exists(hello_bh)) {
        WARN("skipped the rest: firmware is not built yet");
        return;
    }
    r = fabricctl({"devices", "--sim", "wormhole_b0", "--cluster", kSocDir + "/n300_cluster.yaml",
                   "--links", "--json"});
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["cluster"]["chips"] == 2);
    CHECK(j["cluster"]["ethernet_connections"].size() == 2);
    CHECK(j["devices"].size() == 1);
    r = fabricctl(
        {"pcie", "run", "--target", "sim", "--arch", "blackhole", "--core", "3", hello_bh});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("sum of the first 100 primes = 24133 (correct)"));
    CHECK_THAT(r.err, Contains("exited with status 0"));
}
