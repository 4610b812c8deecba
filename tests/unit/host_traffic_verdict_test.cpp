// The verdict on fabric traffic (fabric/traffic_verdict.h): a kernel's timeout from the budget,
// every problem a kernel can have with its exact line, which failure weighs most, the routers'
// counters that balance and those that do not, termination (graceful, immediate after a problem,
// a failed immediate termination as one more problem) on the scripted routers of
// fake_fabric_device.h, and the packets delivered so far.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "expect_error.h"
#include "fabric/fabric_runner.h"
#include "fabric/traffic_verdict.h"
#include "fake_fabric_device.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"

using fabric::LaunchOutcome;
using fabric::MeshWorkerOutcome;
using fabric::RouterSnapshot;
using fabric::TrafficFailure;
using fabric::test::Rig;
using fabric::test::router_elf;
using fabric::test::Script;
namespace pf = protocol::fabric;

namespace {

using Snaps = std::vector<RouterSnapshot>;

// A kernel that exited 0 with its mailbox Done after sending `packets`.
MeshWorkerOutcome passed_kernel(uint32_t packets) {
    MeshWorkerOutcome o;
    o.launch.outcome = LaunchOutcome::Exited;
    o.launch.cycles = 5'000;
    o.status = static_cast<uint32_t>(protocol::TestStatus::Done);
    o.results.packets_sent = packets;
    return o;
}

MeshWorkerOutcome ended(LaunchOutcome how) {
    MeshWorkerOutcome o = passed_kernel(16);
    o.launch.outcome = how;
    return o;
}

// A router's snapshot with these counters (sent and received spread over two channels).
RouterSnapshot router(uint32_t chip, uint32_t eth, uint32_t sent, uint32_t received,
                      uint32_t delivered, uint32_t bad_packets = 0) {
    RouterSnapshot s;
    s.chip = chip;
    s.eth_channel = eth;
    s.block.sent[0] = sent / 2;
    s.block.sent[1] = sent - sent / 2;
    s.block.received[0] = received;
    s.block.delivered = delivered;
    s.block.bad_packets = bad_packets;
    return s;
}

}  // namespace

TEST_CASE("traffic verdict: a kernel's timeout is half the budget, 1 us to 20 ms",
          "[traffic_verdict]") {
    using hal::Arch;
    // Wormhole runs at 1000 MHz, Blackhole at 1350 MHz.
    CHECK(fabric::traffic_timeout_us(20'000, Arch::WormholeB0) == 10);
    CHECK(fabric::traffic_timeout_us(39'999'000, Arch::WormholeB0) == 19'999);
    CHECK(fabric::traffic_timeout_us(40'000'000, Arch::WormholeB0) == 20'000);
    CHECK(fabric::traffic_timeout_us(50'000'000, Arch::WormholeB0) == 20'000);  // the default
    CHECK(fabric::traffic_timeout_us(UINT64_MAX, Arch::WormholeB0) == 20'000);
    CHECK(fabric::traffic_timeout_us(27'000, Arch::Blackhole) == 10);
    CHECK(fabric::traffic_timeout_us(50'000'000, Arch::Blackhole) == 18'518);
    // Never 0, which would give a kernel no time to wait at all.
    CHECK(fabric::traffic_timeout_us(3'999, Arch::WormholeB0) == 1);
    CHECK(fabric::traffic_timeout_us(0, Arch::WormholeB0) == 1);
    CHECK(fabric::traffic_timeout_us(0, Arch::Blackhole) == 1);
}

TEST_CASE("traffic verdict: every problem a kernel can have, one exact line", "[traffic_verdict]") {
    const std::string name = "worker chip 0 core 1-1 (east)";
    CHECK_FALSE(fabric::traffic_problem(name, passed_kernel(16), 16));

    MeshWorkerOutcome trapped = ended(LaunchOutcome::Trapped);
    trapped.launch.status.trap_name = "illegal instruction";
    trapped.launch.status.trap_pc = 0x9abc;
    CHECK(fabric::traffic_problem(name, trapped, 16) ==
          "worker chip 0 core 1-1 (east) trapped: illegal instruction at pc 0x00009abc");

    MeshWorkerOutcome running = ended(LaunchOutcome::Timeout);
    running.launch.cycles = 20'000;
    CHECK(fabric::traffic_problem(name, running, 16) ==
          "worker chip 0 core 1-1 (east) still running after 20000 cycles");

    MeshWorkerOutcome failed = passed_kernel(3);
    failed.launch.status.exit_status = 4;
    failed.status = protocol::test_status_failed(protocol::TestFail::Stuck);
    failed.stuck_at = 0x12;
    failed.results.failure = {.code = 4, .hal_status = 2, .step = 7, .detail = 99};
    CHECK(fabric::traffic_problem(name, failed, 16) ==
          "worker chip 0 core 1-1 (east) failed: exit 4, code 4, step 7, detail 99, hal status 2, "
          "stuck at 0x00000012, packets sent 3");

    // Exit 0 is not enough: the mailbox must say Done.
    MeshWorkerOutcome not_done = passed_kernel(16);
    not_done.status = static_cast<uint32_t>(protocol::TestStatus::Running);
    CHECK(fabric::traffic_problem(name, not_done, 16) ==
          "worker chip 0 core 1-1 (east) failed: exit 0, code 0, step 0, detail 0, hal status 0, "
          "stuck at 0x00000000, packets sent 16");

    CHECK(fabric::traffic_problem(name, passed_kernel(15), 16) ==
          "worker chip 0 core 1-1 (east) sent 15 packets, expected 16");
    CHECK(fabric::traffic_problem(name, passed_kernel(17), 16) ==
          "worker chip 0 core 1-1 (east) sent 17 packets, expected 16");
}

TEST_CASE("traffic verdict: a trap weighs most, then a timeout, then the fabric",
          "[traffic_verdict]") {
    using O = LaunchOutcome;
    const auto failure = [](std::vector<MeshWorkerOutcome> outcomes) {
        return fabric::traffic_failure(outcomes);
    };
    CHECK(failure({}) == TrafficFailure::Fabric);  // no kernel ran: routers, data, counters
    CHECK(failure({ended(O::Exited), ended(O::Exited)}) == TrafficFailure::Fabric);
    CHECK(failure({ended(O::Exited), ended(O::Timeout)}) == TrafficFailure::Timeout);
    CHECK(failure({ended(O::Timeout), ended(O::Trapped), ended(O::Exited)}) ==
          TrafficFailure::Trapped);
    CHECK(failure({ended(O::Trapped)}) == TrafficFailure::Trapped);
}

TEST_CASE("traffic verdict: router counters that balance, and those that do not",
          "[traffic_verdict]") {
    std::vector<std::string> problems;
    // Two routers of a link: each one's sends received by the other, 24 delivered in all.
    fabric::check_router_counters(Snaps{router(0, 8, 10, 6, 12), router(1, 0, 6, 10, 12)}, 24,
                                  problems);
    CHECK(problems.empty());
    fabric::check_router_counters({}, 0, problems);
    CHECK(problems.empty());

    problems = {"an earlier problem"};
    fabric::check_router_counters(Snaps{router(0, 8, 10, 5, 12, 3), router(1, 0, 6, 10, 11, 1)}, 24,
                                  problems);
    CHECK(problems == std::vector<std::string>{"an earlier problem",
                                               "chip 0 eth 8 rejected 3 packets",
                                               "chip 1 eth 0 rejected 1 packets",
                                               "routers sent 16 packets but received 15",
                                               "routers delivered 23 packets, expected 24"});

    // Balanced in total though not per router (packets forwarded through a third): fine.
    problems.clear();
    fabric::check_router_counters(
        Snaps{router(0, 8, 4, 0, 0), router(1, 0, 4, 4, 4), router(2, 0, 0, 4, 4)}, 8, problems);
    CHECK(problems.empty());
    fabric::check_router_counters(Snaps{router(0, 8, 4, 4, 0)}, 8, problems);
    CHECK(problems == std::vector<std::string>{"routers delivered 0 packets, expected 8"});

    // A link a drain cut at one end only (the other ended first): both ends are left out. Chip 1
    // eth 2 sent 8 that chip 2 eth 4 received; chip 1 eth 2 also counts 4 it dropped as sent.
    problems.clear();
    Snaps cut{router(0, 8, 6, 0, 0), router(1, 0, 0, 6, 6), router(1, 2, 12, 0, 0),
              router(2, 4, 0, 8, 8)};
    cut[0].block.peer_chip = 1;
    cut[1].block.peer_chip = 0;
    cut[1].block.peer_channel = 8;
    cut[2].block.peer_chip = 2;
    cut[2].block.peer_channel = 4;
    cut[2].control.cut = 1;
    cut[3].block.peer_chip = 1;
    cut[3].block.peer_channel = 2;
    fabric::check_router_counters(cut, 14, problems);
    CHECK(problems.empty());
    cut[2].control.cut = 0;  // not cut: 18 sent, 14 received
    fabric::check_router_counters(cut, 14, problems);
    CHECK(problems == std::vector<std::string>{"routers sent 18 packets but received 14"});
}

TEST_CASE("traffic verdict: terminate gracefully, or immediately after a problem",
          "[traffic_verdict]") {
    SECTION("no problem: graceful, every router terminated") {
        Rig rig;
        fabric::FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
        runner.bring_up(100'000);
        std::vector<std::string> problems;
        const auto last = fabric::terminate_fabric(runner, 100'000, problems);
        CHECK(problems.empty());
        REQUIRE(last.size() == 4);
        for (const auto& s : last) CHECK(s.status_name() == "terminated");
        for (const auto& r : rig.plan.routers) {
            CHECK(rig.dev.read32(r.core, r.layout.termination) ==
                  static_cast<uint32_t>(pf::Termination::Graceful));
        }
    }
    SECTION("a problem: immediate, and the snapshot from before the stop") {
        Rig rig;
        fabric::FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
        runner.bring_up(100'000);
        std::vector<std::string> problems{"worker chip 0 core 1-1 (east) sent 3 packets"};
        const auto last = fabric::terminate_fabric(runner, 100'000, problems);
        CHECK(problems == std::vector<std::string>{"worker chip 0 core 1-1 (east) sent 3 packets"});
        REQUIRE(last.size() == 4);
        for (const auto& s : last) CHECK(s.status_name() == "ready_for_traffic");
        for (const auto& r : rig.plan.routers) {
            CHECK(rig.dev.read32(r.core, r.layout.termination) ==
                  static_cast<uint32_t>(pf::Termination::Immediate));
        }
        CHECK(runner.status().front().status_name() == "terminated");
    }
    SECTION("an immediate termination that fails is one more problem") {
        Rig rig(std::pair{1u, fabric::FabricDir::West}, Script::IgnoreTermination);
        fabric::FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
        runner.bring_up(100'000);
        std::vector<std::string> problems{"data from 0:0 to 0:1 on plane 0: 4 words differ"};
        const auto last = fabric::terminate_fabric(runner, 3'000, problems);
        CHECK(last.size() == 4);
        CHECK(problems ==
              std::vector<std::string>{
                  "data from 0:0 to 0:1 on plane 0: 4 words differ",
                  "fabric: immediate termination: still running after 3000 cycles: 1 of 4 "
                  "routers: chip 1 eth 4 (core 7-0, west): status ready_for_traffic, stage "
                  "ready_for_traffic, stuck at none, detail 0x00000000, core running at pc "
                  "0x00009100"});
    }
    SECTION("a graceful termination that fails throws, as the runner does") {
        Rig rig(std::pair{1u, fabric::FabricDir::West}, Script::IgnoreTermination);
        fabric::FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
        runner.bring_up(100'000);
        std::vector<std::string> problems;
        CHECK_THAT(fabric::test::expect_error(
                       fabric::ErrorCategory::Fabric,
                       [&] { (void)fabric::terminate_fabric(runner, 3'000, problems); }),
                   Catch::Matchers::StartsWith(
                       "fabric: graceful termination: still running after 3000 cycles: 1 of 4 "
                       "routers: chip 1 eth 4"));
        CHECK(problems.empty());
    }
}

TEST_CASE("traffic verdict: packets delivered so far, from every router's status block",
          "[traffic_verdict]") {
    Rig rig;
    fabric::FabricRunner runner(rig.dev, rig.plan, router_elf(), 100);
    runner.bring_up(100'000);
    CHECK(fabric::delivered_so_far(runner) == 0);
    uint32_t delivered = 5;
    for (const auto& r : rig.plan.routers) {
        pf::RouterStatusBlock b = rig.dev.block(r.core, r.layout);
        b.delivered = delivered;
        rig.dev.put(r.core, r.layout, b);
        delivered += 10;
    }
    CHECK(fabric::delivered_so_far(runner) == 5 + 15 + 25 + 35);
}
