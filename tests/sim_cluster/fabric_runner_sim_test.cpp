// FabricRunner over SimDevice with this build's router firmware (fabric_router.elf): bring-up of
// a line and a ring, what the routers learned in the handshake, termination both ways, and the
// failures the control plane must name: a link that is down, a config the peer disagrees with, a
// config the router rejects. Skipped (with a warning) until the firmware sub-build made the ELF.
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>

#include "cluster.h"
#include "eth/link.h"
#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/sim_device.h"

using Catch::Matchers::Contains;
using fabric::ErrorCategory;
using fabric::FabricDir;
using fabric::FabricRunner;
namespace pf = protocol::fabric;

namespace {

const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kFwDir = FABRIC_FIRMWARE_DIR;

std::optional<fabric::ElfImage> firmware(const std::string& name) {
    const std::string path = kFwDir + "/wormhole_b0/" + name + ".elf";
    if (!std::filesystem::exists(path)) return std::nullopt;
    return fabric::ElfImage::load_file(path);
}

#define REQUIRE_ROUTER(var)                                                       \
    const auto var = firmware("fabric_router");                                   \
    if (!var) {                                                                   \
        WARN("skipped: fabric_router.elf is not built yet (build the firmware)"); \
        return;                                                                   \
    }

const fabric::SocDescriptor& wh_soc() {
    static const auto s = fabric::SocDescriptor::load_file(kSocDir + "/wormhole_b0_80_arch.yaml");
    return s;
}
const fabric::ClusterDescriptor& t3k() {
    static const auto c = fabric::ClusterDescriptor::load_file(kSocDir + "/t3k_cluster.yaml");
    return c;
}

fabric::SimDevice device(std::optional<fabric::ElfImage> base_fw = std::nullopt) {
    fabric::SimDeviceOptions o;
    o.cluster = t3k();
    o.wh_base_firmware = std::move(base_fw);
    return fabric::SimDevice(wh_soc(), hal::Arch::WormholeB0, std::move(o));
}

fabric::FabricPlan plan(pf::Topology t, std::vector<fabric::ChipId> chips,
                        uint32_t handshake_us = 20'000) {
    fabric::FabricOptions o;
    o.topology = t;
    o.chips = std::move(chips);
    o.handshake_timeout_us = handshake_us;
    return fabric::plan_fabric(t3k(), wh_soc(), o);
}

// Replace one router's config (and its layout) in a plan.
void patch(fabric::FabricPlan& p, size_t i, const std::function<void(pf::RouterConfig&)>& f) {
    f(p.routers[i].config);
    p.routers[i].layout = pf::router_layout(hal::kWormholeB0, p.routers[i].config);
}

}  // namespace

TEST_CASE("fabric runner (sim): line and ring come up, learn their peers, terminate",
          "[fabric_runner][sim]") {
    REQUIRE_ROUTER(router);
    const auto base = firmware("erisc_base");
    for (const bool ring : {false, true}) {
        for (const bool with_base : {false, true}) {
            if (with_base && !base) continue;
            INFO((ring ? "ring" : "line") << (with_base ? ", base firmware" : ", bare metal"));
            auto dev = device(with_base ? base : std::nullopt);
            const auto p = ring ? plan(pf::Topology::Ring, {0, 1, 5, 4})
                                : plan(pf::Topology::Line, {0, 1, 2, 3});
            FabricRunner runner(dev, p, *router);
            runner.bring_up(2'000'000);
            CHECK(runner.up());
            CHECK(runner.handshake_cycles() > 0);
            CHECK(runner.ready_cycles() >= runner.handshake_cycles());
            const auto st = runner.status();
            REQUIRE(st.size() == p.routers.size());
            for (size_t i = 0; i < st.size(); ++i) {
                INFO(st[i].describe());
                CHECK(st[i].status_name() == "ready_for_traffic");
                CHECK(st[i].block.peer_chip == p.routers[i].config.peer_chip_id);
                CHECK(st[i].block.peer_channel == p.routers[i].config.peer_eth_channel);
                CHECK(st[i].method == (with_base ? fabric::LaunchMethod::LaunchFlag
                                                 : fabric::LaunchMethod::ResetPc));
                CHECK_FALSE(st[i].core_finished);
            }
            // The main loop runs: heartbeats move.
            dev.step(5'000);
            const auto later = runner.status();
            for (size_t i = 0; i < st.size(); ++i) {
                CHECK(later[i].block.heartbeat != st[i].block.heartbeat);
            }
            runner.check_running();
            const auto fin = ring ? runner.terminate(pf::Termination::Immediate, 1'000'000)
                                  : runner.terminate(pf::Termination::Graceful, 1'000'000);
            for (const auto& s : fin) {
                INFO(s.describe());
                CHECK(s.status_name() == "terminated");
                CHECK(s.core_finished);
                CHECK(s.block.undrained == 0);
            }
        }
    }
}

TEST_CASE("fabric runner (sim): a link that is down is named by both routers",
          "[fabric_runner][sim]") {
    REQUIRE_ROUTER(router);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1, 2}, 50);  // 50 us handshake timeout
    dev.cluster().link(1, 2).set_up(false);                  // chip 1 ch 2 <-> chip 2 ch 4
    FabricRunner runner(dev, p, *router);
    const auto msg =
        fabric::test::expect_error(ErrorCategory::Fabric, [&] { runner.bring_up(1'000'000); });
    INFO(msg);
    CHECK_THAT(msg, Contains("fabric bring-up (handshake) failed") && Contains("2 of 4 routers"));
    CHECK_THAT(msg, Contains("chip 2 eth 4 (core 7-0, west): status timeout, stage handshaking, "
                             "stuck at handshake_"));
    CHECK_THAT(msg, Contains("chip 1 eth 2 (core 8-0, east): status timeout, stage handshaking, "
                             "stuck at handshake_"));
    // The healthy link 0-1 is not named as failed ...
    CHECK_THAT(msg, !Contains("chip 0 eth 2 (core 8-0, east): status timeout"));
    // ... and immediate termination still stops every router that runs.
    const auto fin = runner.terminate(pf::Termination::Immediate, 1'000'000);
    for (const auto& s : fin) CHECK(s.core_finished);
}

TEST_CASE("fabric runner (sim): configs the routers refuse", "[fabric_runner][sim]") {
    REQUIRE_ROUTER(router);
    SECTION("peers disagree on the slot payload: handshake mismatch") {
        auto dev = device();
        auto p = plan(pf::Topology::Line, {0, 1}, 200);
        patch(p, 1, [](pf::RouterConfig& c) { c.payload_bytes = 1024; });
        FabricRunner runner(dev, p, *router);
        const auto msg =
            fabric::test::expect_error(ErrorCategory::Fabric, [&] { runner.bring_up(2'000'000); });
        CHECK_THAT(msg, Contains("status handshake_mismatch"));
    }
    SECTION("a bad magic: config invalid") {
        auto dev = device();
        auto p = plan(pf::Topology::Line, {0, 1}, 200);
        patch(p, 0, [](pf::RouterConfig& c) { c.magic = 0x12345678; });
        FabricRunner runner(dev, p, *router);
        const auto msg =
            fabric::test::expect_error(ErrorCategory::Fabric, [&] { runner.bring_up(2'000'000); });
        CHECK_THAT(msg, Contains("chip 0 eth 2 (core 8-0, east): status config_invalid"));
    }
}
