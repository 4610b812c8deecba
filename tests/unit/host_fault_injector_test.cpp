// Timed actions of SimDevice and the FaultInjector over it (fabric/fault_plan.h): every fault
// changes the model exactly at its cycle, whatever steps the caller takes, and is logged.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cluster.h"  // sim::Cluster (sim/model)
#include "descriptors.h"
#include "expect_error.h"
#include "fabric/fault_plan.h"
#include "fabric/sim_device.h"

namespace t = fabric::test;
using fabric::SimDevice;

namespace {

SimDevice n300() {
    fabric::SimDeviceOptions o;
    o.cluster = t::cluster("n300_cluster.yaml");
    return SimDevice(t::wh_soc(), hal::Arch::WormholeB0, o);
}

// Steps of an awkward size, so that no action falls on a step boundary by luck.
void step_in_pieces(SimDevice& dev, uint64_t total) {
    const uint64_t end = dev.cycles() + total;
    while (dev.cycles() < end) dev.step(std::min<uint64_t>(37, end - dev.cycles()));
}

std::vector<std::string> described(const std::vector<fabric::AppliedFault>& log) {
    std::vector<std::string> out;
    for (const auto& f : log) out.push_back(f.describe());
    return out;
}

}  // namespace

TEST_CASE("SimDevice: timed actions run at their cycle, in order, and may schedule more",
          "[simdevice][faults]") {
    SimDevice dev = n300();
    std::vector<std::string> seen;
    const auto note = [&](const std::string& what) {
        return [&, what] { seen.push_back(what + "@" + std::to_string(dev.cycles())); };
    };
    dev.at_cycle(50, note("b"));
    dev.at_cycle(20, note("a"));
    dev.at_cycle(50, [&] {
        seen.push_back("c@" + std::to_string(dev.cycles()));
        dev.at_cycle(50, note("d"));  // due now: runs before the clock moves on
        dev.at_cycle(90, note("e"));
    });
    CHECK(dev.next_action_cycle() == 20);
    step_in_pieces(dev, 100);
    CHECK(seen == std::vector<std::string>{"a@20", "b@50", "c@50", "d@50", "e@90"});
    CHECK_FALSE(dev.next_action_cycle().has_value());
    dev.at_cycle(10, note("late"));  // a cycle already passed: at once
    CHECK(seen.back() == "late@100");
}

TEST_CASE("fault injector: every kind applied at its traffic cycle and logged",
          "[simdevice][faults]") {
    SimDevice dev = n300();
    dev.step(1000);
    std::vector<fabric::FaultSpec> specs;
    for (const char* s : {"link-drop:1:0@0/500000", "link-delay:1:0@10/300",
                          "router-stall:1:1@20/40", "link-flap:0:9@50/30", "link-down:0:8@100"}) {
        specs.push_back(fabric::parse_fault(s));
    }
    fabric::FaultInjector faults(dev, specs, 7);
    std::vector<std::string> live;
    faults.on_applied([&](const fabric::AppliedFault& f) { live.push_back(f.describe()); });
    const fabric::CoreLocation stalled{1, t::wh_soc().eth_core(1)};

    step_in_pieces(dev, 200);  // not armed: nothing happens
    CHECK(faults.log().empty());
    faults.arm(1200);
    CHECK(faults.traffic_start() == 1200);
    step_in_pieces(dev, 30);
    CHECK(dev.core_frozen(stalled));
    faults.arm(5000);  // a later round of traffic does not restart the clock
    step_in_pieces(dev, 160);
    CHECK_FALSE(dev.core_frozen(stalled));
    CHECK_FALSE(dev.cluster().link(0, 8).up());
    CHECK_FALSE(dev.cluster().link(0, 9).up());  // down again at 1370
    CHECK(described(faults.log()) ==
          std::vector<std::string>{
              "link-drop chip 1 eth 0 500000 ppm at traffic cycle 0 (device cycle 1200)",
              "link-delay chip 1 eth 0 +300 cycles at traffic cycle 10 (device cycle 1210)",
              "router-stall chip 1 eth 1 frozen at traffic cycle 20 (device cycle 1220)",
              "link-flap chip 0 eth 9 down at traffic cycle 50 (device cycle 1250)",
              "router-stall chip 1 eth 1 thawed at traffic cycle 60 (device cycle 1260)",
              "link-flap chip 0 eth 9 up at traffic cycle 80 (device cycle 1280)",
              "link-down chip 0 eth 8 at traffic cycle 100 (device cycle 1300)",
              "link-flap chip 0 eth 9 down at traffic cycle 110 (device cycle 1310)",
              "link-flap chip 0 eth 9 up at traffic cycle 140 (device cycle 1340)",
              "link-flap chip 0 eth 9 down at traffic cycle 170 (device cycle 1370)",
          });
    CHECK(live == described(faults.log()));
}

TEST_CASE("fault injector: a spec that does not fit the model is refused", "[simdevice][faults]") {
    fabric::SimDeviceOptions o;
    o.cluster = t::cluster("n300_cluster.yaml");
    o.modeled_chips = std::vector<fabric::ChipId>{0};
    SimDevice dev(t::wh_soc(), hal::Arch::WormholeB0, o);
    CHECK(t::expect_error(fabric::ErrorCategory::BadInput, [&] {
              fabric::FaultInjector(dev, {fabric::parse_fault("router-stall:1:0@5/5")}, 1);
          }) == "fault 'router-stall:1:0@5/5': chip 1 is not modeled in this run (modeled: 0)");
}
