// The fabric control plane (FabricRunner) on a fake device whose "routers" follow a script: the
// bring-up, worker, quiescence and termination sequences and every error path, with the exact
// one-line messages naming the routers that failed or lagged.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_runner.h"
#include "fabric/mesh_plan.h"
#include "fabric/soc_descriptor.h"
#include "fake_fabric_device.h"
#include "hal/status.h"
#include "protocol/fabric_mux.h"
#include "test_elf.h"

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using fabric::CoreLocation;
using fabric::CoreRunState;
using fabric::CoreStatus;
using fabric::ErrorCategory;
using fabric::FabricDir;
using fabric::FabricRunner;
using fabric::test::expect_error;
using fabric::test::FakeFabricDevice;
using fabric::test::kDir;
using fabric::test::line_plan;
using fabric::test::Rig;
using fabric::test::router_elf;
using fabric::test::Script;
using fabric::test::wh_soc;
namespace pf = protocol::fabric;
namespace t = fabric::test;

namespace {

std::string fabric_error(const std::function<void()>& f) {
    return expect_error(ErrorCategory::Fabric, f);
}

}  // namespace

TEST_CASE("fabric runner: status names", "[fabric_runner]") {
    using S = pf::RouterStatus;
    CHECK(fabric::router_status_name(0) == "not_started");
    CHECK(fabric::router_status_name(static_cast<uint32_t>(S::HandshakeComplete)) ==
          "handshake_complete");
    CHECK(fabric::router_status_name(static_cast<uint32_t>(S::ReadyForTraffic)) ==
          "ready_for_traffic");
    CHECK(fabric::router_status_name(static_cast<uint32_t>(S::HandshakeMismatch)) ==
          "handshake_mismatch");
    CHECK(fabric::router_status_name(0x12345678) == "unknown(0x12345678)");
    CHECK(fabric::router_wait_name(static_cast<uint32_t>(pf::RouterWait::WorkerTeardown)) ==
          "worker_teardown");
    CHECK(fabric::router_wait_name(static_cast<uint32_t>(pf::RouterWait::RouterSlot)) ==
          "router_slot");
    CHECK(fabric::router_wait_name(static_cast<uint32_t>(pf::RouterWait::RouterReady)) ==
          "router_ready");
    CHECK(fabric::router_wait_name(99) == "unknown(0x00000063)");
    CHECK(fabric::termination_name(1) == "graceful");
    CHECK(fabric::termination_name(2) == "immediate");
    CHECK(fabric::router_status_is_error(static_cast<uint32_t>(S::Timeout)));
    CHECK(fabric::router_status_is_error(static_cast<uint32_t>(S::Fault)));
    CHECK(fabric::router_status_is_error(0xE0000009));
    CHECK_FALSE(fabric::router_status_is_error(static_cast<uint32_t>(S::BadPacket)));
    CHECK_FALSE(fabric::router_status_is_error(static_cast<uint32_t>(S::Draining)));
    CHECK_FALSE(fabric::router_status_is_error(0));
    CHECK(fabric::category_name(ErrorCategory::Fabric) == "fabric");
}

TEST_CASE("fabric runner: the detail word by name", "[fabric_runner]") {
    using S = pf::RouterStatus;
    const auto code = [](auto e) { return static_cast<uint32_t>(e); };
    CHECK(fabric::config_check_name(code(pf::ConfigCheck::MeshConfig)) == "mesh_config");
    CHECK(fabric::config_check_name(99) == "unknown(0x00000063)");
    CHECK(fabric::bad_packet_name(code(pf::BadPacket::RouteTooLong)) == "route_too_long");
    CHECK(fabric::bad_packet_name(7) == "unknown(0x00000007)");
    CHECK(fabric::handshake_field_name(code(pf::HandshakeField::ReceiverSlots1)) ==
          "receiver_slots_1");
    CHECK(fabric::handshake_field_name(10) == "unknown(0x0000000a)");

    CHECK(fabric::router_detail_name(code(S::ConfigInvalid), code(pf::ConfigCheck::PayloadBytes)) ==
          "config:payload_bytes");
    CHECK(fabric::router_detail_name(code(S::ConfigInvalid), 77) == "config:unknown(0x0000004d)");
    CHECK(fabric::router_detail_name(code(S::HandshakeMismatch),
                                     code(pf::HandshakeField::Version)) == "mismatch:version");
    CHECK(fabric::router_detail_name(code(S::HandshakeMismatch),
                                     code(pf::HandshakeField::BothMasters)) ==
          "mismatch:both_masters");
    CHECK(fabric::router_detail_name(code(S::Fault), code(hal::Status::OutOfRange)) ==
          "hal:out-of-range");
    CHECK(fabric::router_detail_name(code(S::Timeout), code(hal::Status::Timeout)) ==
          "hal:timeout");
    CHECK(fabric::router_detail_name(code(S::Timeout), 0) == "0x00000000");  // a wait of its own
    CHECK(fabric::router_detail_name(code(S::Fault), 0x55) == "0x00000055");
    // While it runs (or after it ended) the detail word holds the last bad packet's reason.
    CHECK(fabric::router_detail_name(code(S::ReadyForTraffic), code(pf::BadPacket::Turn)) ==
          "bad_packet:turn");
    CHECK(fabric::router_detail_name(code(S::Terminated), code(pf::BadPacket::Magic)) ==
          "bad_packet:magic");
    CHECK(fabric::router_detail_name(code(S::ReadyForTraffic), 0) == "0x00000000");
    CHECK(fabric::router_detail_name(code(S::ReadyForTraffic), code(pf::BadPacket::TtlExpired)) ==
          "bad_packet:ttl_expired");
    CHECK(fabric::router_detail_name(code(S::ReadyForTraffic), code(pf::BadPacket::Timeout)) ==
          "bad_packet:timeout");
    CHECK(fabric::router_detail_name(code(S::ReadyForTraffic), code(pf::BadPacket::Drained)) ==
          "bad_packet:drained");
    CHECK(fabric::router_detail_name(code(S::ReadyForTraffic), code(pf::BadPacket::Unacked)) ==
          "bad_packet:unacked");
    CHECK(fabric::router_detail_name(code(S::ReadyForTraffic), code(pf::BadPacket::NotAccepted)) ==
          "bad_packet:not_accepted");
    CHECK(fabric::router_detail_name(code(S::ReadyForTraffic), 0x110) == "0x00000110");

    CHECK(fabric::mux_detail_name(code(S::ConfigInvalid), code(pf::MuxConfigCheck::Schedule)) ==
          "config:schedule");
    CHECK(fabric::mux_detail_name(code(S::ReadyForTraffic), code(pf::MuxBadPacket::PayloadBytes)) ==
          "bad_packet:payload_bytes");
    CHECK(fabric::mux_detail_name(code(S::Fault), code(hal::Status::Busy)) == "hal:busy");
    CHECK(fabric::mux_detail_name(code(S::ReadyForTraffic), code(pf::BadPacket::Turn)) ==
          "0x0000010a");
}

TEST_CASE("fabric runner: bring-up, workers, graceful termination", "[fabric_runner]") {
    Rig rig;
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    runner.bring_up(100'000);
    CHECK(runner.up());
    CHECK(runner.handshake_cycles() == 500);
    CHECK(runner.ready_cycles() == 600);
    for (const auto& r : rig.plan.routers) {
        INFO(r.core.str());
        // The config as planned, zeros up to the first slot (the fake wrote the status block).
        std::vector<uint8_t> cfg(sizeof(pf::RouterConfig));
        rig.dev.read(r.core, r.layout.config, cfg);
        CHECK(std::memcmp(cfg.data(), &r.config, sizeof(r.config)) == 0);
        CHECK(rig.dev.read32(r.core, r.layout.ready) == pf::kReadyMagic);
        CHECK(rig.dev.read32(r.core, r.layout.termination) == 0);
        CHECK(rig.dev.read32(r.core, r.layout.connection) == 0);
        CHECK(rig.dev.read32(r.core, hal::common::kErisc0ResetPcReg) == 0x9040);
    }
    // Every router's config block was written in one piece, before any router was released.
    size_t config_writes = 0;
    for (const auto& [c, addr] : rig.dev.writes) {
        if (addr == rig.plan.routers.front().layout.config) ++config_writes;
    }
    CHECK(config_writes == rig.plan.routers.size());

    const auto st = runner.status();
    REQUIRE(st.size() == 4);
    for (const auto& s : st) {
        CHECK(s.status_name() == "ready_for_traffic");
        CHECK(s.run.state == CoreRunState::Running);
        CHECK_FALSE(s.core_finished);
    }
    CHECK(st[0].describe() ==
          "chip 0 eth 2 (core 8-0, east): status ready_for_traffic, stage ready_for_traffic, "
          "stuck at none, detail 0x00000000, core running at pc 0x00009100");
    runner.check_running();

    // Workers: only they are waited for; setup runs after load, before release.
    const CoreLocation w0{0, {1, 1}}, w1{1, {1, 1}};
    rig.dev.worker_run[w0] = 3'000;
    rig.dev.worker_run[w1] = 5'000;
    const auto wimg = router_elf();
    const auto rules = fabric::erisc_placement(hal::kWormholeB0, wh_soc().worker_l1_size());
    const std::vector<fabric::LaunchTarget> workers{{w0, &wimg, rules}, {w1, &wimg, rules}};
    std::vector<CoreLocation> set_up;
    fabric::LaunchOptions lo;
    lo.poll_cycles = 1'000;
    lo.max_cycles = 100'000;
    const auto res = runner.run_workers(workers, lo, [&](const fabric::LaunchTarget& w) {
        CHECK(rig.dev.core_status(w.core).state == CoreRunState::Reset);
        set_up.push_back(w.core);
    });
    CHECK(set_up == std::vector<CoreLocation>{w0, w1});
    REQUIRE(res.size() == 2);
    CHECK(res[0].outcome == fabric::LaunchOutcome::Exited);
    CHECK(res[1].outcome == fabric::LaunchOutcome::Exited);
    CHECK(res[1].cycles == 5'000);
    runner.check_running();

    const auto fin = runner.terminate(pf::Termination::Graceful, 100'000);
    for (const auto& s : fin) {
        CHECK(s.status_name() == "terminated");
        CHECK(s.core_finished);
    }
    for (const auto& r : rig.plan.routers) {
        CHECK(rig.dev.read32(r.core, r.layout.termination) == 1);
    }
    CHECK_THAT(
        expect_error(ErrorCategory::BadInput, [&] { (void)runner.run_workers(workers, lo); }),
        Contains("it was terminated"));
}

TEST_CASE("fabric runner: start starts the routers and waits for nothing", "[fabric_runner]") {
    Rig rig;
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    runner.start();
    CHECK(rig.dev.now == 0);
    CHECK(runner.started());
    CHECK_FALSE(runner.up());
    for (const auto& r : rig.plan.routers) {
        INFO(r.core.str());
        std::vector<uint8_t> cfg(sizeof(pf::RouterConfig));
        rig.dev.read(r.core, r.layout.config, cfg);
        CHECK(std::memcmp(cfg.data(), &r.config, sizeof(r.config)) == 0);
        CHECK(rig.dev.core_status(r.core).state == CoreRunState::Running);
    }
    // The routers handshake on their own; nobody writes the ready word.
    rig.dev.advance(10'000);
    for (const auto& s : runner.status()) {
        INFO(s.describe());
        CHECK(s.status_name() == "handshake_complete");
        CHECK(rig.dev.read32(s.core, rig.plan.routers.front().layout.ready) == 0);
    }
    CHECK(runner.health().empty());
    const auto refused = [&](const std::function<void()>& f) {
        return expect_error(ErrorCategory::BadInput, f);
    };
    CHECK(refused([&] { runner.start(); }) == "fabric: start after bring_up, start or attach");
    CHECK(refused([&] { runner.bring_up(10'000); }) ==
          "fabric: bring_up after bring_up, start or attach");
    CHECK(refused([&] { runner.attach(); }) == "fabric: attach after bring_up, start or attach");
    const auto img = router_elf();
    const auto rules = fabric::erisc_placement(hal::kWormholeB0, wh_soc().worker_l1_size());
    const std::vector<fabric::LaunchTarget> w{{{0, {1, 1}}, &img, rules}};
    CHECK(refused([&] { (void)runner.run_workers(w); }) ==
          "fabric: workers can only run while the fabric is up (bring it up first)");
    for (const auto& s : runner.terminate(pf::Termination::Immediate, 10'000)) {
        CHECK(s.status_name() == "terminated");
        CHECK(s.core_finished);
    }
}

TEST_CASE("fabric runner: a router stuck in the handshake is named", "[fabric_runner]") {
    Rig rig(std::pair{1u, FabricDir::West}, Script::StuckHandshaking);
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 1'000);
    const auto msg = fabric_error([&] { runner.bring_up(20'000); });
    CHECK(msg ==
          "fabric bring-up: not handshake_complete within 20000 cycles: 1 of 4 routers: chip 1 "
          "eth 4 (core 7-0, west): status handshaking, stage handshaking, stuck at none, detail "
          "0x00000000, core running at pc 0x00009100");
    CHECK_FALSE(runner.up());
    // Immediate termination still stops every router.
    const auto fin = runner.terminate(pf::Termination::Immediate, 10'000);
    CHECK(std::all_of(fin.begin(), fin.end(), [](const auto& s) { return s.core_finished; }));
}

TEST_CASE("fabric runner: a router error stops the bring-up at once", "[fabric_runner]") {
    Rig rig(std::pair{2u, FabricDir::West}, Script::HandshakeTimeout);
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    const auto msg = fabric_error([&] { runner.bring_up(1'000'000); });
    CHECK(msg ==
          "fabric bring-up (handshake) failed after 500 cycles: 1 of 4 routers: chip 2 eth 4 "
          "(core 7-0, west): status timeout, stage handshaking, stuck at handshake_reply, detail "
          "hal:timeout, core exited with status 3");
    CHECK(rig.dev.now == 500);  // did not wait for the budget
    // Graceful termination refuses a broken fabric and writes nothing.
    CHECK_THAT(fabric_error([&] { (void)runner.terminate(pf::Termination::Graceful, 10'000); }),
               Contains("cannot terminate gracefully") && Contains("chip 2 eth 4"));
    for (const auto& r : rig.plan.routers) CHECK(rig.dev.read32(r.core, r.layout.termination) == 0);
}

TEST_CASE("fabric runner: a trapped router and a router that never gets ready", "[fabric_runner]") {
    {
        Rig rig(std::pair{0u, FabricDir::East}, Script::Trap);
        FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
        CHECK_THAT(fabric_error([&] { runner.bring_up(100'000); }),
                   Contains("fabric bring-up (handshake) failed after 300 cycles: 4 of 4 routers: "
                            "chip 0 eth 2 (core 8-0, east): status handshaking") &&
                       Contains("chip 2 eth 4 (core 7-0, west): status handshaking") &&
                       Contains("core trapped: illegal instruction (mcause 2) at pc 0x00009abc"));
        CHECK_THAT(
            fabric_error([&] { (void)runner.terminate(pf::Termination::Immediate, 1'000); }),
            Contains("immediate termination did not end cleanly") && Contains("core trapped"));
    }
    {
        Rig rig(std::pair{1u, FabricDir::East}, Script::IgnoreReady);
        FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
        CHECK(fabric_error([&] { runner.bring_up(5'000); }) ==
              "fabric bring-up: not ready_for_traffic within 5000 cycles: 1 of 4 routers: chip 1 "
              "eth 2 (core 8-0, east): status handshake_complete, stage handshake_complete, stuck "
              "at none, detail 0x00000000, core running at pc 0x00009100");
        CHECK(runner.handshake_cycles() == 500);
        CHECK_THAT(fabric_error([&] { runner.check_running(); }),
                   Contains("not every router is ready for traffic: 1 of 4 routers: chip 1 eth 2"));
    }
}

TEST_CASE("fabric runner: termination failures name the routers", "[fabric_runner]") {
    {
        Rig rig(std::pair{1u, FabricDir::West}, Script::IgnoreTermination);
        FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
        runner.bring_up(10'000);
        CHECK(fabric_error([&] { (void)runner.terminate(pf::Termination::Graceful, 3'000); }) ==
              "fabric: graceful termination: still running after 3000 cycles: 1 of 4 routers: chip "
              "1 eth 4 (core 7-0, west): status ready_for_traffic, stage ready_for_traffic, stuck "
              "at none, detail 0x00000000, core running at pc 0x00009100");
    }
    {
        Rig rig(std::pair{0u, FabricDir::East}, Script::InFlight);
        FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
        runner.bring_up(10'000);
        CHECK_THAT(fabric_error([&] { (void)runner.terminate(pf::Termination::Graceful, 3'000); }),
                   Contains("traffic did not quiesce within 3000 cycles (sent 5, received 0; "
                            "nothing terminated): 1 of 4 routers: chip 0 eth 2"));
        for (const auto& r : rig.plan.routers) {
            CHECK(rig.dev.read32(r.core, r.layout.termination) == 0);
        }
        const auto fin = runner.terminate(pf::Termination::Immediate, 3'000);
        CHECK(fin.front().block.sent[0] == 5);
        for (const auto& r : rig.plan.routers) {
            CHECK(rig.dev.read32(r.core, r.layout.termination) == 2);
        }
    }
    {
        Rig rig(std::pair{2u, FabricDir::West}, Script::Undrained);
        FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
        runner.bring_up(10'000);
        CHECK_THAT(fabric_error([&] { (void)runner.terminate(pf::Termination::Graceful, 3'000); }),
                   Contains("graceful termination did not end cleanly, chip 2 eth 4 left 2 "
                            "undrained: 1 of 4 routers: chip 2 eth 4 (core 7-0, west): status "
                            "terminated"));
    }
}

TEST_CASE("fabric runner: bad calls and inputs", "[fabric_runner]") {
    Rig rig;
    // An image over the router block, or over the routing firmware's region below it.
    CHECK_THAT(expect_error(ErrorCategory::BadElf,
                            [&] { FabricRunner r(rig.dev, rig.plan, router_elf(0x18010), 100); }),
               Contains("router L1 block"));
    CHECK_THAT(expect_error(ErrorCategory::BadElf,
                            [&] { FabricRunner r(rig.dev, rig.plan, router_elf(0x11010), 100); }),
               Contains("routing firmware region"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] { FabricRunner r(rig.dev, rig.plan, router_elf(), 0); }),
               Contains("poll interval is 0"));
    {
        auto plan = rig.plan;
        plan.routers[1].chip = 9;
        plan.routers[1].core.chip = 9;
        CHECK_THAT(expect_error(ErrorCategory::BadInput,
                                [&] { FabricRunner r(rig.dev, plan, router_elf(), 100); }),
                   Contains("router on chip 9, but fake fabric has 8 chip(s)"));
    }
    {
        auto plan = rig.plan;
        plan.routers[0].core.core = {1, 1};
        CHECK_THAT(expect_error(ErrorCategory::BadInput,
                                [&] { FabricRunner r(rig.dev, plan, router_elf(), 100); }),
                   Contains("chip 0 core 1-1 is not eth channel 2"));
    }
    {
        auto plan = rig.plan;
        plan.arch = hal::Arch::Blackhole;
        CHECK_THAT(expect_error(ErrorCategory::BadInput,
                                [&] { FabricRunner r(rig.dev, plan, router_elf(), 100); }),
                   Contains("the plan is for blackhole but chip 0 of fake fabric is wormhole_b0"));
        plan.routers.clear();
        CHECK_THAT(expect_error(ErrorCategory::BadInput,
                                [&] { FabricRunner r(rig.dev, plan, router_elf(), 100); }),
                   Contains("the plan has no routers"));
    }
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] { (void)runner.terminate(pf::Termination::Graceful, 100); }),
               Contains("terminate before bring_up"));
    const auto img = router_elf();
    const auto rules = fabric::erisc_placement(hal::kWormholeB0, 262144);
    const std::vector<fabric::LaunchTarget> w{{rig.plan.routers[0].core, &img, rules}};
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)runner.run_workers(w); }),
               Contains("bring it up first"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { runner.bring_up(0); }),
               Contains("bring-up timeout is 0 cycles"));
    runner.bring_up(10'000);
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { runner.bring_up(10'000); }),
               Contains("fabric: bring_up after bring_up, start or attach"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)runner.run_workers(w); }),
               Contains("worker chip 0 core 8-0 is the east router core of chip 0 (eth 2)"));
    {
        fabric::LaunchOptions lo;
        lo.poll_cycles = 0;
        const std::vector<fabric::LaunchTarget> ok{{{0, {1, 1}}, &img, rules}};
        CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)runner.run_workers(ok, lo); }),
                   Contains("poll interval is 0"));
        const std::vector<fabric::LaunchTarget> twice{{{0, {1, 1}}, &img, rules},
                                                      {{0, {1, 1}}, &img, rules}};
        CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)runner.run_workers(twice); }),
                   Contains("chip 0 core 1-1 is given more than one image"));
    }
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] { (void)runner.terminate(pf::Termination::KeepRunning, 100); }),
               Contains("terminate with mode keep_running"));
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] { (void)runner.terminate(pf::Termination::Graceful, 0); }),
               Contains("terminate timeout is 0 cycles"));
}

TEST_CASE("fabric runner: a router that fails while workers run ends the wait", "[fabric_runner]") {
    Rig rig(std::pair{1u, FabricDir::East}, Script::FaultLater);
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    runner.bring_up(10'000);
    const CoreLocation w0{0, {1, 1}};
    rig.dev.worker_run[w0] = 1'000'000;
    const auto img = router_elf();
    const auto rules = fabric::erisc_placement(hal::kWormholeB0, wh_soc().worker_l1_size());
    const std::vector<fabric::LaunchTarget> w{{w0, &img, rules}};
    fabric::LaunchOptions lo;
    lo.poll_cycles = 500;
    lo.max_cycles = 2'000'000;
    try {
        (void)runner.run_workers(w, lo);
        FAIL("no error");
    } catch (const fabric::HealthError& e) {
        CHECK(e.category() == ErrorCategory::Fabric);
        CHECK(std::string(e.what()) ==
              "fabric: a component failed while workers ran (1500 cycles in, stall window 1000000 "
              "cycles): 1 of 4 components stuck: router east chip 1 eth 2 (chip 1 core 8-0): "
              "error; status fault, stage ready_for_traffic, stuck at noc_cmd_buf, detail "
              "hal:bad-arg, heartbeat 2304 unchanged for 0 cycles, core exited with status 3");
        REQUIRE(e.reports().size() == 1);
        CHECK(e.reports()[0].reason == fabric::StuckReason::Error);
    }
    CHECK(rig.dev.now < 10'000);
}

TEST_CASE("fabric runner: a device whose clock does not advance is a device error",
          "[fabric_runner]") {
    Rig rig;
    rig.dev.frozen = true;
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    CHECK_THAT(expect_error(ErrorCategory::Device, [&] { runner.bring_up(10'000); }),
               Contains("fake fabric: the device clock does not advance while the host waits for "
                        "the routers: 4 of 4 routers: chip 0 eth 2"));
}

TEST_CASE("fabric runner: a healthy fabric has no stuck components", "[fabric_runner][health]") {
    Rig rig;
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    runner.set_stall_cycles(2'000);
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)runner.health(); }),
               Contains("health check before bring_up"));
    runner.bring_up(10'000);
    CHECK(runner.health().empty());
    runner.check_health();
    runner.monitor(50'000);  // 25 stall windows: heartbeats keep moving
    CHECK(rig.dev.now == 50'600);
    CHECK(runner.health().empty());
    const auto fin = runner.terminate(pf::Termination::Graceful, 10'000);
    for (const auto& s : fin) CHECK(s.status_name() == "terminated");
    CHECK(runner.health().empty());  // terminated and exited: done, not stuck
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { runner.set_stall_cycles(5); }),
               Contains("before bring_up"));
}

TEST_CASE("fabric runner: a watched mux is named like a router", "[fabric_runner][health]") {
    Rig rig;
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    runner.set_stall_cycles(2'000);
    // A "mux" on chip 0 core 1-1 whose status block (router status values) stands still in
    // ReadyForTraffic; added before bring-up.
    const CoreLocation mux{0, {1, 1}};
    const pf::ComponentStatusHead h{static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic),
                                    static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic),
                                    static_cast<uint32_t>(pf::RouterWait::None), 0, 77};
    std::vector<uint8_t> raw(sizeof(h));
    std::memcpy(raw.data(), &h, sizeof(h));
    rig.dev.write(mux, 0x30000, raw);
    rig.dev.cores[mux].released = true;
    runner.watch({mux, "mux chip 0 core 1-1", 0x30000, fabric::mux_component_kind()});
    runner.bring_up(10'000);
    CHECK(fabric::mux_component_kind().name == "mux");
    CHECK(runner.health().empty());
    CHECK(fabric_error([&] { runner.monitor(10'000); }) ==
          "fabric: no progress after 2000 of 10000 cycles of monitoring (stall window 2000 "
          "cycles): 1 of 5 components stuck: mux chip 0 core 1-1 (chip 0 core 1-1): stalled; "
          "status ready_for_traffic, stage ready_for_traffic, stuck at none, detail 0x00000000, "
          "heartbeat 77 unchanged for 2000 cycles, core running at pc 0x00009100");
}

TEST_CASE("fabric runner: a router whose heartbeat stops is named", "[fabric_runner][health]") {
    Rig rig;
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    runner.set_stall_cycles(5'000);
    runner.bring_up(10'000);
    runner.monitor(1'000);
    // Chip 1's east router (eth 2, core 8-0) hangs: its core stops, its status stays.
    const CoreLocation hung{1, {8, 0}};
    rig.dev.hung.insert(hung);
    const uint32_t beat = rig.dev.block(hung, rig.plan.routers[1].layout).heartbeat;
    CHECK(beat == 16 * 256);  // 256 iterations per 100-cycle step since its release
    try {
        runner.monitor(100'000);
        FAIL("no error");
    } catch (const fabric::HealthError& e) {
        CHECK(std::string(e.what()) ==
              "fabric: no progress after 5000 of 100000 cycles of monitoring (stall window 5000 "
              "cycles): 1 of 4 components stuck: router east chip 1 eth 2 (chip 1 core 8-0): "
              "stalled; status ready_for_traffic, stage ready_for_traffic, stuck at none, detail "
              "0x00000000, heartbeat 4096 unchanged for 5000 cycles, core running at pc "
              "0x00009100");
        REQUIRE(e.reports().size() == 1);
        const auto& r = e.reports()[0];
        CHECK(r.core == hung);
        CHECK(r.component == "router east chip 1 eth 2");
        CHECK(r.kind == "router");
        CHECK(r.reason == fabric::StuckReason::Stalled);
        CHECK(r.status_name == "ready_for_traffic");
        CHECK(r.stage_name == "ready_for_traffic");
        CHECK(r.stuck_at_name == "none");
        CHECK(r.head.heartbeat == 16 * 256);
        CHECK(r.unchanged_cycles == 5'000);
        CHECK(r.at_cycle == rig.dev.now);
        CHECK(r.run.state == CoreRunState::Running);
    }
    // check_health names it too, and so does a termination that waits for it (within one stall
    // window, not the budget); nothing was written for the graceful one.
    CHECK_THAT(fabric_error([&] { runner.check_health(); }),
               StartsWith("fabric: health check (stall window 5000 cycles): 1 of 4 components "
                          "stuck: router east chip 1 eth 2 (chip 1 core 8-0): stalled;"));
    const uint64_t before = rig.dev.now;
    CHECK_THAT(fabric_error([&] { (void)runner.terminate(pf::Termination::Immediate, 1'000'000); }),
               StartsWith("fabric: immediate termination: no progress while waiting for the "
                          "routers to exit (100 cycles in, stall window 5000 cycles): 1 of 4 "
                          "components stuck: router east chip 1 eth 2 (chip 1 core 8-0): stalled; "
                          "status ready_for_traffic"));
    CHECK(rig.dev.now - before == 100);
    // The others did exit.
    for (const auto& s : runner.status()) CHECK(s.core_finished == (s.core != hung));
}

TEST_CASE("fabric runner: a router that hangs while workers run ends the wait",
          "[fabric_runner][health]") {
    Rig rig;
    FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    runner.set_stall_cycles(3'000);
    runner.bring_up(10'000);
    const CoreLocation w0{0, {1, 1}};
    rig.dev.worker_run[w0] = 1'000'000;
    const auto img = router_elf();
    const auto rules = fabric::erisc_placement(hal::kWormholeB0, wh_soc().worker_l1_size());
    const std::vector<fabric::LaunchTarget> w{{w0, &img, rules}};
    fabric::LaunchOptions lo;
    lo.poll_cycles = 500;
    lo.max_cycles = 2'000'000;
    rig.dev.hung.insert({2, {7, 0}});  // chip 2 west (eth 4)
    try {
        (void)runner.run_workers(w, lo);
        FAIL("no error");
    } catch (const fabric::HealthError& e) {
        CHECK(
            std::string(e.what()) ==
            "fabric: no progress while workers ran (3000 cycles in, stall window 3000 cycles): "
            "1 of 4 components stuck: router west chip 2 eth 4 (chip 2 core 7-0): stalled; "
            "status ready_for_traffic, stage ready_for_traffic, stuck at none, detail "
            "0x00000000, heartbeat 1536 unchanged for 3000 cycles, core running at pc 0x00009100");
    }
    CHECK(rig.dev.now == 3'600);
}

TEST_CASE("health monitor: any component kind, every reason", "[health]") {
    // A made-up "mux" kind: status 1 = running (heartbeat), 2 = done, 0xE.. = error.
    fabric::ComponentKind mux;
    mux.name = "mux";
    mux.status_name = [](uint32_t s) { return s == 1 ? "running" : s == 2 ? "done" : "other"; };
    mux.stage_name = [](uint32_t s) { return fmt::format("stage{}", s); };
    mux.stuck_at_name = [](uint32_t s) { return fmt::format("wait{}", s); };
    mux.is_error = [](uint32_t s) { return (s >> 28) == 0xE; };
    mux.beating = [](uint32_t s) { return s == 1; };
    mux.done = [](uint32_t s) { return s == 2; };

    FakeFabricDevice dev;
    const CoreLocation core{0, {1, 1}};
    const uint64_t at = 0x20000;
    const auto put = [&](uint32_t status, uint32_t stage, uint32_t stuck_at, uint32_t detail,
                         uint32_t beat) {
        const pf::ComponentStatusHead h{status, stage, stuck_at, detail, beat};
        std::vector<uint8_t> raw(sizeof(h));
        std::memcpy(raw.data(), &h, sizeof(h));
        dev.write(core, at, raw);
    };
    fabric::HealthMonitor mon(dev, {{core, "mux chip 0 core 1-1", at, mux}}, 1'000);
    CHECK(mon.poll().empty());  // in reset, not started: just loaded
    dev.cores[core].released = true;
    put(1, 3, 0, 0, 10);
    CHECK(mon.poll().empty());
    dev.now = 900;
    CHECK(mon.poll().empty());
    dev.now = 1'000;  // unchanged since the poll at cycle 0: one stall window
    auto r = mon.poll();
    REQUIRE(r.size() == 1);
    CHECK(r[0].describe() ==
          "mux chip 0 core 1-1 (chip 0 core 1-1): stalled; status running, stage stage3, stuck "
          "at wait0, detail 0x00000000, heartbeat 10 unchanged for 1000 cycles, core running at "
          "pc 0x00009100");
    put(1, 3, 0, 0, 11);  // it moved: the window restarts
    CHECK(mon.poll().empty());
    dev.now = 1'999;
    CHECK(mon.poll().empty());
    put(0xE0000007, 3, 5, 0x42, 11);  // error
    r = mon.poll();
    REQUIRE(r.size() == 1);
    CHECK(r[0].reason == fabric::StuckReason::Error);
    CHECK_THAT(r[0].describe(), Contains("): error; status other, stage stage3, stuck at wait5, "
                                         "detail 0x00000042, heartbeat 11 unchanged for 0 cycles"));
    put(1, 3, 0, 0, 12);
    dev.cores[core].exited = true;
    dev.cores[core].exit_status = 9;
    r = mon.poll();
    REQUIRE(r.size() == 1);
    CHECK(r[0].reason == fabric::StuckReason::Stopped);
    CHECK_THAT(r[0].describe(), EndsWith("core exited with status 9"));
    put(2, 3, 0, 0, 12);  // done: exiting is fine
    CHECK(mon.poll().empty());
    dev.cores[core].trapped = true;
    r = mon.poll();
    REQUIRE(r.size() == 1);
    CHECK(r[0].reason == fabric::StuckReason::Trapped);
    CHECK_THAT(r[0].describe(),
               EndsWith("core trapped: illegal instruction (mcause 2) at pc 0x00009abc"));
    CHECK(describe_stuck(r, 3) == "1 of 3 components stuck: " + r[0].describe());

    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { fabric::HealthMonitor m(dev, {}, 0); }),
               Contains("stall window is 0"));
    fabric::ComponentKind half;
    half.name = "half";
    CHECK_THAT(expect_error(ErrorCategory::BadInput,
                            [&] {
                                fabric::HealthMonitor m(dev, {{core, "x", at, half}});
                            }),
               Contains("component 'x' on chip 0 core 1-1 has no complete kind"));
}

TEST_CASE("fabric runner: a 2D plan gets its mesh config and exit table, and mesh names",
          "[fabric_runner][mesh]") {
    static const auto t3k = fabric::ClusterDescriptor::load_file(kDir + "/t3k_cluster.yaml");
    static const auto graph = fabric::MeshGraph::load_file(kDir + "/t3k_mesh_graph.yaml");
    fabric::MeshFabricOptions o;
    o.topology = pf::Topology::Mesh;
    const fabric::MeshPlan mesh = fabric::plan_mesh(graph, t3k, wh_soc(), o);
    const fabric::RouterPlacement& n5 = mesh.router({0, 5}, fabric::MeshDir::N, 0);
    CHECK(fabric::router_component_name(n5) == "router M0D5 N plane 0 (chip 5 eth 0)");
    CHECK(fabric::router_side_name(n5) == "M0D5 N plane 0");
    CHECK(fabric::router_side_name(line_plan().routers.front()) == "east");
    {
        FakeFabricDevice dev;
        for (const auto& r : mesh.fabric.routers) {
            dev.add_router(r, &r == &n5 ? Script::InFlightCh4 : Script::Normal);
        }
        FabricRunner runner(dev, mesh.fabric, router_elf(), 100);
        runner.bring_up(100'000);
        for (const auto& r : mesh.fabric.routers) {
            INFO(r.mesh->port().str());
            std::vector<uint8_t> raw(sizeof(pf::MeshRouterConfig));
            dev.read(r.core, r.layout.mesh_config, raw);
            CHECK(std::memcmp(raw.data(), &r.mesh->config, raw.size()) == 0);
            CHECK(dev.read32(r.core, r.layout.exit_table) == r.mesh->exit_table.at(0));
            CHECK(dev.read32(r.core, r.layout.exit_table + 4) == 0);  // zeros after the table
        }
        const auto st = runner.status();
        const size_t i = static_cast<size_t>(&n5 - mesh.fabric.routers.data());
        CHECK(st[i].describe() ==
              "chip 5 eth 0 (core 9-0, M0D5 N plane 0): status ready_for_traffic, stage "
              "ready_for_traffic, stuck at none, detail 0x00000000, core running at pc "
              "0x00009100");
        // Channel 4 (fed by the chip's W router) is unsettled although the totals balance.
        CHECK_THAT(fabric_error([&] { (void)runner.terminate(pf::Termination::Graceful, 3'000); }),
                   Contains("traffic did not quiesce within 3000 cycles (sent 5, received 5; "
                            "nothing terminated): 1 of 20 routers: chip 5 eth 0 (core 9-0, M0D5 "
                            "N plane 0)"));
    }
    // The spec cluster's exit tables land whole (4 words).
    static const auto spec_c =
        fabric::ClusterDescriptor::load_file(kDir + "/spec_4mesh_3x3_cluster.yaml");
    static const auto spec_g =
        fabric::MeshGraph::load_file(kDir + "/spec_4mesh_3x3_mesh_graph.yaml");
    const fabric::MeshPlan spec = fabric::plan_mesh(spec_g, spec_c, wh_soc(), o);
    struct BigFake : FakeFabricDevice {
        uint32_t chip_count() const override { return 36; }
    } dev;
    for (const auto& r : spec.fabric.routers) dev.add_router(r, Script::Normal);
    FabricRunner runner(dev, spec.fabric, router_elf(), 100);
    runner.bring_up(100'000);
    const auto& r = spec.router({0, 0}, fabric::MeshDir::E, 0);
    REQUIRE(r.mesh->exit_table.size() == 4);
    for (uint32_t m = 0; m < 4; ++m) {
        CHECK(dev.read32(r.core, r.layout.exit_table + 4 * m) == r.mesh->exit_table[m]);
    }
    CHECK(dev.read32(r.core, r.layout.exit_table + 4) != 0);
    runner.terminate(pf::Termination::Graceful, 100'000);
}

TEST_CASE("fabric runner: Blackhole router images go in the router window, below the block",
          "[fabric_runner][placement]") {
    const auto bh = fabric::ClusterDescriptor::load_file(kDir + "/bh_2x2_cluster.yaml");
    const auto soc = fabric::SocDescriptor::load_file(kDir + "/blackhole_140_arch.yaml");
    fabric::FabricOptions o;
    o.chips = {0, 1};
    const fabric::FabricPlan plan = fabric::plan_fabric(bh, soc, o);
    const fabric::RouterPlacement& r = plan.routers.front();
    CHECK(r.layout.config == 0x22000);
    const fabric::PlacementRules rules =
        fabric::router_placement(r, hal::kBlackhole, soc.eth_l1_size());
    auto image = [](uint32_t at, uint32_t bytes) {
        t::TestElf e;
        e.entry = at;
        e.segments.push_back({.paddr = at, .data = std::vector<uint8_t>(bytes, 0x13)});
        return fabric::ElfImage::parse(e.build(), "fabric_router_2d.elf");
    };
    // The whole 48 KiB window [0x15740, 0x21740) loads; a segment running on into the router's
    // block at 0x22000 is refused.
    image(0x15740, 0xC000).check_placement(rules);
    CHECK_THAT(expect_error(ErrorCategory::BadElf,
                            [&] { image(0x15740, 0xC000 + 0x8C0 + 16).check_placement(rules); }),
               Contains("fabric_router_2d.elf: segment 0 [0x00015740, 0x00022010) overlaps the "
                        "reserved region 'router L1 block' [0x00022000, "));
}
