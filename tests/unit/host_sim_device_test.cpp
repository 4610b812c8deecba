// SimDevice over the Verilated tile: memory, reset, console, exit, trap, and the launch helper
// end to end, with hand-encoded RV32I programs (no cross toolchain needed).
#include <catch2/catch.hpp>

#include "expect_error.h"
#include "fabric/launch.h"
#include "fabric/sim_device.h"
#include "memory_cap.h"
#include "test_elf.h"

using Catch::Matchers::Contains;
using fabric::CoreLocation;
using fabric::CoreRunState;
using fabric::ErrorCategory;
using fabric::SimDevice;
using fabric::SocDescriptor;
namespace t = fabric::test;

namespace {

SocDescriptor wh() {
    return SocDescriptor::load_file(std::string(FABRIC_SOC_DESCRIPTOR_DIR) +
                                    "/wormhole_b0_80_arch.yaml");
}
SocDescriptor bh() {
    return SocDescriptor::load_file(std::string(FABRIC_SOC_DESCRIPTOR_DIR) +
                                    "/blackhole_140_arch.yaml");
}

fabric::ElfImage program(const std::vector<uint32_t>& words, uint32_t base) {
    return fabric::ElfImage::parse(t::program_elf(words, base), "test.elf");
}

}  // namespace

TEST_CASE("SimDevice: L1 read/write per core, tiles created on first use", "[simdevice]") {
    SimDevice dev(wh(), hal::Arch::WormholeB0);
    CHECK(dev.tile_count() == 0);
    const CoreLocation eth0{0, {9, 0}};
    const CoreLocation eth1{0, {1, 0}};
    const std::vector<uint8_t> data{1, 2, 3, 4, 5, 6, 7};
    dev.write(eth0, 0x20001, data);
    std::vector<uint8_t> back(7);
    dev.read(eth0, 0x20001, back);
    CHECK(back == data);
    dev.read(eth1, 0x20001, back);  // another core's L1 is separate
    CHECK(back == std::vector<uint8_t>(7, 0));
    CHECK(dev.tile_count() == 2);
    dev.write32(eth0, 0x3FFFC, 0xCAFEF00D);  // last word of the 256 KiB eth L1
    CHECK(dev.read32(eth0, 0x3FFFC) == 0xCAFEF00D);
    // A worker gets the worker L1 size.
    const CoreLocation worker{0, {1, 1}};
    dev.write32(worker, 1499136 - 4, 0x12345678);
    CHECK(dev.read32(worker, 1499136 - 4) == 0x12345678);
}

TEST_CASE("SimDevice: clear errors for unknown cores and addresses", "[simdevice]") {
    SimDevice dev(wh(), hal::Arch::WormholeB0);
    std::vector<uint8_t> b(4);
    CHECK_THAT(t::expect_error(ErrorCategory::BadInput,
                               [&] {
                                   dev.read({0, {10, 0}}, 0, b);
                               }),
               Contains("no core at 10-0"));
    CHECK_THAT(t::expect_error(ErrorCategory::BadInput,
                               [&] {
                                   dev.read({1, {9, 0}}, 0, b);
                               }),
               Contains("chip 1 does not exist"));
    CHECK_THAT(t::expect_error(ErrorCategory::Unsupported,
                               [&] {
                                   dev.read({0, {0, 10}}, 0, b);
                               }),
               Contains("'arc' core"));
    CHECK_THAT(t::expect_error(ErrorCategory::Device,
                               [&] {
                                   dev.read({0, {9, 0}}, 0x40000, b);
                               }),
               Contains("0x00040000") && Contains("chip 0 core 9-0"));
    CHECK_THAT(t::expect_error(ErrorCategory::Device,
                               [&] {
                                   dev.read({0, {9, 0}}, 0x1'0000'0000ull, b);
                               }),
               Contains("32-bit"));
    CHECK_THAT(
        t::expect_error(ErrorCategory::BadInput, [&] { SimDevice(wh(), hal::Arch::Blackhole); }),
        Contains("descriptor is for wormhole_b0"));
}

TEST_CASE("SimDevice: a released core runs, prints and exits with a status", "[simdevice]") {
    SimDevice dev(wh(), hal::Arch::WormholeB0);
    std::string streamed;
    dev.set_console_sink([&](const CoreLocation& c, char ch) {
        CHECK(c == CoreLocation{0, {9, 0}});
        streamed.push_back(ch);
    });
    const CoreLocation core{0, {9, 0}};
    const auto img = program(t::console_exit_program("hello\n", 7), hal::kWormholeB0.app_fw_base);
    const auto r =
        fabric::launch(dev, core, img, fabric::erisc_placement(hal::kWormholeB0, 262144));
    CHECK(r.outcome == fabric::LaunchOutcome::Exited);
    CHECK(r.status.exit_status == 7);
    CHECK(streamed == "hello\n");
    CHECK(dev.console(core) == "hello\n");
    CHECK(r.cycles > 0);
    CHECK(r.cycles < fabric::kDefaultPollCycles);  // stopped when the core exited
    CHECK(dev.cycles() == r.cycles);
}

TEST_CASE("SimDevice: status values above 12 bits survive", "[simdevice]") {
    SimDevice dev(bh(), hal::Arch::Blackhole);
    const CoreLocation core{0, {1, 1}};
    const auto img = program(t::console_exit_program("", 0xABCDE), hal::kBlackhole.app_fw_base);
    const auto r = fabric::launch(dev, core, img, fabric::erisc_placement(hal::kBlackhole, 524288));
    CHECK(r.outcome == fabric::LaunchOutcome::Exited);
    CHECK(r.status.exit_status == 0xABCDE);
}

TEST_CASE("SimDevice: a Blackhole eth core starts in the router window at its reset PC",
          "[simdevice][launch]") {
    SimDevice dev(bh(), hal::Arch::Blackhole);
    const CoreLocation core{0, {1, 1}};
    const uint32_t base = hal::kBlackhole.router_fw.base;
    const auto img = program(t::console_exit_program("router window\n", 9), base);
    CHECK(img.entry() == 0x15740);
    CHECK(dev.launch_method(core) == fabric::LaunchMethod::ResetPc);
    const auto r = fabric::launch(dev, core, img, fabric::erisc_placement(hal::kBlackhole, 524288));
    CHECK(r.outcome == fabric::LaunchOutcome::Exited);
    CHECK(r.status.exit_status == 9);
    CHECK(dev.console(core) == "router window\n");
    CHECK(dev.read32(core, hal::common::kErisc0ResetPcReg) == 0x15740);
}

TEST_CASE("SimDevice: trap reports cause and pc", "[simdevice]") {
    SimDevice dev(wh(), hal::Arch::WormholeB0);
    const CoreLocation core{0, {1, 6}};
    const uint32_t base = hal::kWormholeB0.app_fw_base;
    const auto img = program({t::rv::addi(1, 0, 1), t::rv::kEbreak}, base);
    const auto r =
        fabric::launch(dev, core, img, fabric::erisc_placement(hal::kWormholeB0, 262144));
    REQUIRE(r.outcome == fabric::LaunchOutcome::Trapped);
    CHECK(r.status.trap_cause == 3);
    CHECK(r.status.trap_name == "breakpoint");
    CHECK(r.status.trap_pc == base + 4);
    CHECK(dev.core_status(core).state == CoreRunState::Trapped);
}

TEST_CASE("SimDevice: cycle budget runs out on a spinning core", "[simdevice]") {
    SimDevice dev(wh(), hal::Arch::WormholeB0);
    const CoreLocation core{0, {9, 0}};
    const uint32_t base = hal::kWormholeB0.app_fw_base;
    const auto img = program({t::rv::addi(1, 0, 1), t::rv::kJalSelf}, base);
    fabric::LaunchOptions o;
    o.max_cycles = 30'000;
    const auto r =
        fabric::launch(dev, core, img, fabric::erisc_placement(hal::kWormholeB0, 262144), o);
    CHECK(r.outcome == fabric::LaunchOutcome::Timeout);
    CHECK(r.cycles == 30'000);
    REQUIRE(r.status.pc.has_value());
    CHECK(*r.status.pc == base + 4);
    CHECK(dev.core_status(core).state == CoreRunState::Running);
}

TEST_CASE("SimDevice: untouched cores stay in reset", "[simdevice]") {
    SimDevice dev(wh(), hal::Arch::WormholeB0);
    CHECK(dev.core_status({0, {9, 0}}).state == CoreRunState::Reset);
    dev.advance(100);
    CHECK(dev.core_status({0, {9, 0}}).state == CoreRunState::Reset);
}

TEST_CASE("SimDevice: each chip harvested as the cluster says, a harvested worker is off",
          "[simdevice][harvest]") {
    // Chip 1 harvests Tensix row y = 1 (bit 1), chip 0 nothing.
    fabric::SimDeviceOptions o;
    o.cluster = fabric::ClusterDescriptor::parse(
        "arch: {0: wormhole_b0, 1: wormhole_b0}\n"
        "ethernet_connections: [[{chip: 0, chan: 8}, {chip: 1, chan: 0}]]\n"
        "chips_with_mmio: [{0: 0}]\n"
        "harvesting:\n"
        "  0: {noc_translation: true, harvest_mask: 0}\n"
        "  1: {noc_translation: true, harvest_mask: 2}\n",
        "h.yaml");
    SimDevice dev(wh(), hal::Arch::WormholeB0, o);
    CHECK(dev.soc(0).count(fabric::CoreType::Worker) == 80);
    CHECK(dev.soc(1).count(fabric::CoreType::Worker) == 72);
    CHECK(dev.soc(1).cores(fabric::CoreType::Worker).front() == fabric::CoreCoord{1, 2});
    CHECK(dev.soc(1).tensix_harvest_mask() == 2);
    dev.write32({0, {1, 1}}, 0x1000, 7);  // chip 0's row 1 is there
    CHECK(dev.read32({0, {1, 1}}, 0x1000) == 7);
    dev.write32({1, {1, 2}}, 0x1000, 9);
    CHECK(dev.read32({1, {1, 2}}, 0x1000) == 9);
    CHECK(t::expect_error(ErrorCategory::Device,
                          [&] {
                              dev.write32({1, {4, 1}}, 0x1000, 1);
                          }) ==
          "sim wormhole_b0 (2 chips, 1 Ethernet link): chip 1 core 4-1 is a harvested worker "
          "(Tensix harvest mask 0x00000002 of chip 1): its tile is off");
    std::vector<uint8_t> buf(4);
    CHECK_THROWS_AS(dev.read({1, {9, 1}}, 0, buf), fabric::Error);
    CHECK(dev.tile_count() == 2);  // nothing was modeled for the harvested cores
}

TEST_CASE("SimDevice: only the chips a run models cost memory", "[simdevice][memory]") {
    // 1024 chips (the cap), chip 0 linked to chip 1, nothing else: model chips 0 and 1 only.
    std::string text = "arch:\n";
    for (uint32_t i = 0; i < fabric::kMaxClusterChips; ++i)
        text += fmt::format("  {}: wormhole_b0\n", i);
    text +=
        "ethernet_connections: [[{chip: 0, chan: 8}, {chip: 1, chan: 0}],\n"
        "                       [{chip: 1, chan: 9}, {chip: 1000, chan: 3}]]\n"
        "chips_with_mmio: [{0: 0}]\n";
    const auto cluster = fabric::ClusterDescriptor::parse(text, "big.yaml");
    const auto run = t::run_with_memory_cap(2ull << 30, [&] {
        fabric::SimDeviceOptions o;
        o.cluster = cluster;
        o.modeled_chips = std::vector<fabric::ChipId>{1, 0};
        SimDevice dev(wh(), hal::Arch::WormholeB0, o);
        dev.write32({1, {9, 0}}, 0x20000, 5);
        if (dev.read32({1, {9, 0}}, 0x20000) != 5 || dev.model_chip_index(1) != 1u ||
            dev.model_chip_index(1000).has_value() || dev.chip_count() != 1024) {
            throw std::logic_error("wrong model");
        }
        dev.write32({1000, {9, 0}}, 0x20000, 5);  // not modeled
    });
    CHECK(run.outcome ==
          "error: sim wormhole_b0 (1024 chips, 2 modeled, 2 Ethernet links): chip 1000 is not "
          "modeled in this run");
    CHECK(run.growth_bytes() < (64ull << 20));  // every chip modeled: ~3.6 GB
    fabric::SimDeviceOptions bad;
    bad.cluster = cluster;
    bad.modeled_chips = std::vector<fabric::ChipId>{1024};
    CHECK(t::expect_error(ErrorCategory::BadInput,
                          [&] { SimDevice(wh(), hal::Arch::WormholeB0, bad); }) ==
          "sim wormhole_b0 (1024 chips, 2 Ethernet links): chip 1024 to model does not exist "
          "(chips 0..1023)");
}
