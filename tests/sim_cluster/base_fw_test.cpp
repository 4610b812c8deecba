// The Wormhole base firmware (firmware/base) in the model, through SimDevice and launch(): boot
// from PC 0, heartbeat, link status from the cluster's connections, the launch flag, the
// context-switch entry, apps that return and apps that exit; and a two-chip exchange over an
// Ethernet link with base firmware on both ends. Skipped (with a warning) until the firmware
// sub-build has produced erisc_base.elf.
#include <catch2/catch.hpp>
#include <filesystem>

#include "cluster_test_util.h"
#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/launch.h"
#include "fabric/sim_device.h"
#include "hal/encoding.h"
#include "protocol/erisc_base_fw.h"
#include "protocol/erisc_remote_access.h"
#include "test_elf.h"

using Catch::Matchers::Contains;
using fabric::CoreLocation;
using simtest::Asm;
namespace bfw = protocol::base_fw;
namespace ft = fabric::test;

namespace {

const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;

std::optional<fabric::ElfImage> base_fw() {
    const std::string path = std::string(FABRIC_FIRMWARE_DIR) + "/wormhole_b0/erisc_base.elf";
    if (!std::filesystem::exists(path)) return std::nullopt;
    return fabric::ElfImage::load_file(path);
}

#define REQUIRE_BASE_FW(var)                                                   \
    const auto var = base_fw();                                                \
    if (!var) {                                                                \
        WARN("skipped: erisc_base.elf is not built yet (build the firmware)"); \
        return;                                                                \
    }

fabric::SocDescriptor wh_soc() {
    return fabric::SocDescriptor::load_file(kSocDir + "/wormhole_b0_80_arch.yaml");
}

fabric::SimDevice n300(const fabric::ElfImage& fw) {
    fabric::SimDeviceOptions o;
    o.cluster = fabric::ClusterDescriptor::load_file(kSocDir + "/n300_cluster.yaml");
    o.wh_base_firmware = fw;
    return fabric::SimDevice(wh_soc(), hal::Arch::WormholeB0, std::move(o));
}

CoreLocation eth(const fabric::SimDevice& d, uint32_t chip, uint32_t chan) {
    return {chip, d.soc(chip).eth_core(chan)};
}

fabric::ElfImage app(Asm& a, const std::string& name = "app.elf") {
    return fabric::ElfImage::parse(ft::program_elf(a.program().words(), a.base()), name);
}

const auto kRules = fabric::erisc_placement(hal::kWormholeB0, hal::kWormholeB0.eth_l1_size);

uint32_t status_word(fabric::SimDevice& d, const CoreLocation& c, size_t offset) {
    return d.read32(c, bfw::kStatusBlock + static_cast<uint32_t>(offset));
}

}  // namespace

TEST_CASE("base firmware: boots from PC 0, beats, publishes its status and the jump table",
          "[base_fw]") {
    REQUIRE_BASE_FW(fw);
    auto dev = n300(*fw);
    const CoreLocation c = eth(dev, 0, 8);
    CHECK(dev.launch_method(c) == fabric::LaunchMethod::LaunchFlag);
    CHECK(dev.core_status(c).state == fabric::CoreRunState::Running);
    CHECK(dev.advance(10'000) == 0);  // an idle base firmware is not "busy"
    dev.step(20'000);
    const uint32_t hb1 = dev.read32(c, bfw::kHeartbeat);
    CHECK((hb1 & bfw::kHeartbeatSignatureMask) == bfw::kHeartbeatSignature);
    CHECK((hb1 & 0xFFFF) >= 15);  // one beat per 1000-cycle wait slice
    dev.step(10'000);
    const uint32_t hb2 = dev.read32(c, bfw::kHeartbeat);
    CHECK((hb2 & bfw::kHeartbeatSignatureMask) == bfw::kHeartbeatSignature);
    CHECK((hb2 & 0xFFFF) - (hb1 & 0xFFFF) >= 9);
    CHECK((hb2 & 0xFFFF) - (hb1 & 0xFFFF) <= 10);
    CHECK(status_word(dev, c, offsetof(bfw::StatusBlock, magic)) == bfw::kStatusMagic);
    CHECK(status_word(dev, c, offsetof(bfw::StatusBlock, state)) ==
          static_cast<uint32_t>(bfw::State::Idle));
    CHECK(status_word(dev, c, offsetof(bfw::StatusBlock, app_launches)) == 0);
    REQUIRE(fw->symbol("base_fw_context_switch").has_value());
    CHECK(dev.read32(c, bfw::kContextSwitchPtr) == *fw->symbol("base_fw_context_switch"));
    CHECK(dev.read32(c, bfw::kLaunchAppFlag) == 0);
    // The PC is inside the base firmware's code.
    const auto pc = dev.core_status(c).pc;
    REQUIRE(pc.has_value());
    CHECK(*pc >= bfw::kCodeBase);
    CHECK(*pc < bfw::kDataBase);
}

TEST_CASE("base firmware: link status follows the cluster's connections", "[base_fw]") {
    REQUIRE_BASE_FW(fw);
    auto dev = n300(*fw);
    const CoreLocation up = eth(dev, 0, 9), down = eth(dev, 0, 3), peer = eth(dev, 1, 1);
    dev.tile(up);
    dev.tile(down);
    CHECK(dev.cluster().chip(1).instantiated(peer.core.x, peer.core.y));  // the link's other end
    dev.step(5'000);
    CHECK(dev.read32(up, bfw::kLinkStatus) == bfw::kLinkStatusUp);
    CHECK(dev.read32(up, bfw::kTrainStatus) == bfw::kTrainStatusOk);
    CHECK(dev.read32(up, bfw::kLinkError) == bfw::kLinkErrorNone);
    CHECK(dev.read32(up, bfw::kLocalEthId) == 9);
    CHECK(dev.read32(up, bfw::results_word(bfw::kResultsRemoteAsicIdWord)) == 1);
    CHECK(dev.read32(up, bfw::results_word(bfw::kResultsRemoteEthIdWord)) == 1);
    CHECK(dev.read32(peer, bfw::kLinkStatus) == bfw::kLinkStatusUp);
    CHECK(dev.read32(peer, bfw::results_word(bfw::kResultsRemoteEthIdWord)) == 9);
    CHECK(dev.read32(peer, bfw::results_word(bfw::kResultsLocalAsicIdWord)) == 1);
    CHECK(dev.read32(down, bfw::kLinkStatus) == bfw::kLinkStatusDown);
    CHECK(dev.read32(down, bfw::kTrainStatus) == bfw::kTrainStatusFail);
    CHECK(dev.read32(down, bfw::kLinkError) == bfw::kLinkErrorPortNotPopulated);
    // Training results the base firmware re-reads every heartbeat period: a retrained link comes
    // up.
    dev.write32(down, bfw::kTrainStatus, bfw::kTrainStatusOk);
    dev.step(2'000);
    CHECK(dev.read32(down, bfw::kLinkStatus) == bfw::kLinkStatusUp);
}

TEST_CASE("base firmware: a link that goes down stays down in its status word, then comes back",
          "[base_fw]") {
    REQUIRE_BASE_FW(fw);
    auto dev = n300(*fw);
    const CoreLocation end = eth(dev, 0, 9), peer = eth(dev, 1, 1);
    dev.tile(end);
    dev.step(5'000);
    dev.cluster().link(0, 9).set_up(false);
    // The base firmware republishes the word every heartbeat period from the training status,
    // which the model keeps in step with the link.
    dev.step(5'000);
    CHECK(dev.read32(end, bfw::kLinkStatus) == bfw::kLinkStatusDown);
    CHECK(dev.read32(peer, bfw::kLinkStatus) == bfw::kLinkStatusDown);
    CHECK(dev.read32(end, bfw::kTrainStatus) == bfw::kTrainStatusFail);
    dev.cluster().link(1, 1).set_up(true);
    dev.step(5'000);
    CHECK(dev.read32(end, bfw::kLinkStatus) == bfw::kLinkStatusUp);
    CHECK(dev.read32(peer, bfw::kLinkStatus) == bfw::kLinkStatusUp);
    CHECK(dev.read32(end, bfw::kTrainStatus) == bfw::kTrainStatusOk);
}

TEST_CASE("base firmware: the launch flag starts the app, an app that returns clears it",
          "[base_fw]") {
    REQUIRE_BASE_FW(fw);
    auto dev = n300(*fw);
    const CoreLocation c = eth(dev, 0, 0);
    dev.step(3'000);  // the base firmware is idle, polling the flag
    for (uint32_t run = 1; run <= 2; ++run) {
        Asm a(bfw::kAppBase);
        a.store(0x20000, 0xA0A0 + run).ret(40 + run);
        const auto img = app(a);
        const auto r = fabric::launch(dev, c, img, kRules);
        INFO("run " << run);
        CHECK(r.method == fabric::LaunchMethod::LaunchFlag);
        CHECK(r.outcome == fabric::LaunchOutcome::Exited);
        CHECK(r.returned_to_base_firmware);
        CHECK(r.status.exit_status == 40 + run);
        CHECK(r.cycles > 0);
        // Seen within one poll of the flag, after the base firmware's quiet period for remote
        // access, done in a few instructions.
        CHECK(r.cycles < protocol::remote_access::kQuietBeforeAppCycles + 1500);
        CHECK(dev.read32(c, 0x20000) == 0xA0A0 + run);
        CHECK(dev.read32(c, bfw::kLaunchAppFlag) == 0);
        CHECK(status_word(dev, c, offsetof(bfw::StatusBlock, app_launches)) == run);
        CHECK(status_word(dev, c, offsetof(bfw::StatusBlock, app_returns)) == run);
        CHECK(status_word(dev, c, offsetof(bfw::StatusBlock, state)) ==
              static_cast<uint32_t>(bfw::State::Idle));
        CHECK(dev.core_status(c).state == fabric::CoreRunState::Running);  // supervising again
    }
    const uint32_t hb = dev.read32(c, bfw::kHeartbeat);
    dev.step(5'000);
    CHECK(dev.read32(c, bfw::kHeartbeat) > hb);
}

TEST_CASE("base firmware: an app yields through the jump table", "[base_fw]") {
    REQUIRE_BASE_FW(fw);
    auto dev = n300(*fw);
    const CoreLocation c = eth(dev, 1, 0);
    Asm a(bfw::kAppBase);
    auto& p = a.program();
    p.emit(::rv::addi(::rv::sp, ::rv::sp, -16)).emit(::rv::sw(::rv::ra, ::rv::sp, 12));
    for (int i = 0; i < 3; ++i) {
        p.li(::rv::t0, bfw::kContextSwitchPtr)
            .emit(::rv::lw(::rv::t0, ::rv::t0, 0))
            .emit(::rv::jalr(::rv::ra, ::rv::t0, 0));
    }
    p.emit(::rv::lw(::rv::ra, ::rv::sp, 12)).emit(::rv::addi(::rv::sp, ::rv::sp, 16));
    a.ret(7);
    const uint32_t hb = dev.read32(c, bfw::kHeartbeat);
    const auto r = fabric::launch(dev, c, app(a), kRules);
    CHECK(r.outcome == fabric::LaunchOutcome::Exited);
    CHECK(r.status.exit_status == 7);
    CHECK(status_word(dev, c, offsetof(bfw::StatusBlock, yields)) == 3);
    CHECK((dev.read32(c, bfw::kHeartbeat) & 0xFFFF) >= (hb & 0xFFFF) + 3);
}

TEST_CASE("base firmware: a crt0-style app that exits through sim-control ends the core's run",
          "[base_fw]") {
    REQUIRE_BASE_FW(fw);
    auto dev = n300(*fw);
    const CoreLocation c = eth(dev, 0, 8);
    const auto img = fabric::ElfImage::parse(
        ft::program_elf(ft::console_exit_program("hi\n", 3), bfw::kAppBase), "x.elf");
    const auto r = fabric::launch(dev, c, img, kRules);
    CHECK(r.method == fabric::LaunchMethod::LaunchFlag);
    CHECK(r.outcome == fabric::LaunchOutcome::Exited);
    CHECK_FALSE(r.returned_to_base_firmware);
    CHECK(r.status.exit_status == 3);
    CHECK(dev.console(c) == "hi\n");
    // The demo firmware (built with the real crt0) runs the same way under the base firmware.
    const std::string hello = std::string(FABRIC_FIRMWARE_DIR) + "/wormhole_b0/hello.elf";
    if (std::filesystem::exists(hello)) {
        const CoreLocation d = eth(dev, 0, 1);
        const auto h = fabric::launch(dev, d, fabric::ElfImage::load_file(hello), kRules);
        CHECK(h.outcome == fabric::LaunchOutcome::Exited);
        CHECK(h.status.exit_status == 0);
        CHECK_THAT(dev.console(d), Contains("hello from the wormhole_b0"));
    }
}

TEST_CASE("base firmware: launch refuses a misplaced entry and a busy core", "[base_fw]") {
    REQUIRE_BASE_FW(fw);
    auto dev = n300(*fw);
    const CoreLocation c = eth(dev, 0, 8);
    ft::TestElf e;
    e.entry = bfw::kAppBase + 4;
    e.segments.push_back({.paddr = bfw::kAppBase, .data = ft::words_to_bytes({0x13, 0x13})});
    const auto off = fabric::ElfImage::parse(e.build(), "off.elf");
    CHECK_THAT(ft::expect_error(fabric::ErrorCategory::BadElf,
                                [&] { fabric::launch(dev, c, off, kRules); }),
               Contains("entry 0x00009044 is not the firmware base 0x00009040"));
    dev.write32(c, bfw::kLaunchAppFlag, 1);
    dev.step(100);
    Asm a(bfw::kAppBase);
    a.ret(0);
    CHECK_THAT(ft::expect_error(fabric::ErrorCategory::Device,
                                [&] { fabric::launch(dev, c, app(a), kRules); }),
               Contains("an application is still running on chip 0 core"));
    // A base firmware image outside its region is refused when the device is built.
    ft::TestElf big;
    big.entry = 0x8F00;
    big.segments.push_back({.paddr = 0x8F00, .data = std::vector<uint8_t>(0x200, 0)});
    fabric::SimDeviceOptions o;
    o.wh_base_firmware = fabric::ElfImage::parse(big.build(), "big.elf");
    CHECK_THAT(
        ft::expect_error(fabric::ErrorCategory::BadElf,
                         [&] { fabric::SimDevice(wh_soc(), hal::Arch::WormholeB0, std::move(o)); }),
        Contains("base firmware region"));
}

TEST_CASE("base firmware: Blackhole and runs without the image launch through the reset PC",
          "[base_fw]") {
    REQUIRE_BASE_FW(fw);
    fabric::SimDeviceOptions o;
    o.wh_base_firmware = *fw;
    fabric::SimDevice bh(fabric::SocDescriptor::load_file(kSocDir + "/blackhole_140_arch.yaml"),
                         hal::Arch::Blackhole, std::move(o));
    CHECK_FALSE(bh.has_base_firmware());
    CHECK(bh.launch_method({0, {1, 1}}) == fabric::LaunchMethod::ResetPc);
    CHECK(bh.core_status({0, {1, 1}}).state == fabric::CoreRunState::Reset);
    fabric::SimDevice plain(wh_soc(), hal::Arch::WormholeB0);
    CHECK(plain.launch_method({0, {9, 0}}) == fabric::LaunchMethod::ResetPc);
}

namespace {

struct Exchange {
    std::vector<fabric::LaunchResult> results;
    uint64_t cycles = 0;
    std::vector<uint8_t> got0, got1;
};

// n300: chip 0 chan 8 <-> chip 1 chan 0, base firmware on both. Each app sends 1 KiB to the other
// over TXQ0, waits for the other's data (its last word), and returns 0.
Exchange exchange(const fabric::ElfImage& fw) {
    namespace he = hal::eth;
    const hal::ArchMap& a = hal::kWormholeB0;
    auto dev = n300(fw);
    const CoreLocation c0 = eth(dev, 0, 8), c1 = eth(dev, 1, 0);
    std::vector<fabric::ElfImage> imgs;
    for (uint32_t side = 0; side < 2; ++side) {
        const CoreLocation me = side == 0 ? c0 : c1;
        std::vector<uint8_t> data(1024);
        for (uint32_t i = 0; i < data.size(); ++i)
            data[i] = static_cast<uint8_t>(i * 3 + side * 101 + 1);
        dev.write(me, 0x20000, data);
        Asm p(bfw::kAppBase);
        p.store(he::txq_reg(0, he::kTxqTransferStartAddr), 0x20000)
            .store(he::txq_reg(0, he::kTxqTransferSizeBytes), 1024)
            .store(he::txq_reg(0, he::kTxqDestAddr), 0x30000)
            .store(he::txq_reg(0, he::kTxqCmd), he::kCmdDataPacket)
            .wait_eq(he::txq_reg(0, a.eth.txq_busy_reg), 0, a.eth.txq_busy_mask);
        // The peer's data is the pattern with seed 1 - side; wait for its last word.
        uint32_t last = 0;
        for (int i = 0; i < 4; ++i)
            last |=
                static_cast<uint32_t>(static_cast<uint8_t>((1020 + i) * 3 + (1 - side) * 101 + 1))
                << (8 * i);
        p.wait_eq(0x30000 + 1020, last).ret(0);
        imgs.push_back(app(p, side == 0 ? "a.elf" : "b.elf"));
    }
    std::vector<fabric::LaunchTarget> targets{{c0, &imgs[0], kRules}, {c1, &imgs[1], kRules}};
    Exchange out;
    out.results = fabric::launch_many(dev, targets);
    out.cycles = dev.cycles();
    out.got0.resize(1024);
    out.got1.resize(1024);
    dev.read(c0, 0x30000, out.got0);
    dev.read(c1, 0x30000, out.got1);
    return out;
}

}  // namespace

TEST_CASE("base firmware: two chips exchange data over Ethernet, deterministically",
          "[base_fw][eth]") {
    REQUIRE_BASE_FW(fw);
    const Exchange x = exchange(*fw);
    REQUIRE(x.results.size() == 2);
    for (const auto& r : x.results) {
        CHECK(r.outcome == fabric::LaunchOutcome::Exited);
        CHECK(r.returned_to_base_firmware);
        CHECK(r.status.exit_status == 0);
    }
    for (uint32_t i = 0; i < 1024; ++i) {
        INFO(i);
        REQUIRE(x.got0[i] == static_cast<uint8_t>(i * 3 + 101 + 1));
        REQUIRE(x.got1[i] == static_cast<uint8_t>(i * 3 + 1));
    }
    const Exchange y = exchange(*fw);
    CHECK(y.cycles == x.cycles);
    CHECK(y.results[0].cycles == x.results[0].cycles);
    CHECK(y.got0 == x.got0);
}
