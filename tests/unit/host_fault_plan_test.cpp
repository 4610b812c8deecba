// Fault specs (fabric/fault_plan.h): every spelling parsed, every bad one refused with its exact
// message, and the checks against a cluster.
#include <catch2/catch.hpp>
#include <vector>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/fault_plan.h"

namespace t = fabric::test;
using fabric::ErrorCategory;
using fabric::FaultKind;
using fabric::FaultSpec;

namespace {

std::string parse_error(const std::string& text) {
    return t::expect_error(ErrorCategory::BadInput, [&] { (void)fabric::parse_fault(text); });
}

std::string check_error(const std::string& text, const std::vector<fabric::ChipId>& modeled) {
    return t::expect_error(ErrorCategory::BadInput, [&] {
        fabric::check_fault(fabric::parse_fault(text), t::cluster("n300_cluster.yaml"), t::wh_soc(),
                            modeled);
    });
}

}  // namespace

TEST_CASE("fault specs: every kind parsed", "[faults]") {
    const FaultSpec down = fabric::parse_fault("link-down:0:8@5000");
    CHECK(down.kind == FaultKind::LinkDown);
    CHECK(down.chip == 0);
    CHECK(down.eth == 8);
    CHECK(down.at == 5000);
    CHECK(down.amount == 0);
    CHECK(down.text == "link-down:0:8@5000");
    const FaultSpec back = fabric::parse_fault("link-down:0:8@5000/40000");
    CHECK(back.kind == FaultKind::LinkDown);
    CHECK(back.at == 5000);
    CHECK(back.amount == 40000);
    const FaultSpec flap = fabric::parse_fault("link-flap:1:0@0/250");
    CHECK(flap.kind == FaultKind::LinkFlap);
    CHECK(flap.chip == 1);
    CHECK(flap.eth == 0);
    CHECK(flap.at == 0);
    CHECK(flap.amount == 250);
    CHECK(fabric::parse_fault("link-drop:0:9@10/1000000").amount == 1'000'000);
    CHECK(fabric::parse_fault("link-drop:0:9@10/0").amount == 0);
    CHECK(fabric::parse_fault("link-delay:0:9@10/300").kind == FaultKind::LinkDelay);
    const FaultSpec stall = fabric::parse_fault("router-stall:3:15@281474976710656/7");
    CHECK(stall.kind == FaultKind::RouterStall);
    CHECK(stall.chip == 3);
    CHECK(stall.eth == 15);
    CHECK(stall.at == fabric::kMaxFaultCycles);
    CHECK(stall.amount == 7);
    CHECK(fabric::fault_kind_name(FaultKind::RouterStall) == "router-stall");
}

TEST_CASE("fault specs: an unknown kind", "[faults]") {
    CHECK(parse_error("link-up:0:8@5") ==
          "fault 'link-up:0:8@5': unknown fault kind 'link-up' (link-down, link-flap, link-drop, "
          "link-delay, router-stall, noc-hold)");
    CHECK(parse_error("") ==
          "fault '': unknown fault kind '' (link-down, link-flap, link-drop, link-delay, "
          "router-stall, noc-hold)");
}

TEST_CASE("fault specs: a missing field", "[faults]") {
    CHECK(parse_error("link-down") ==
          "fault 'link-down': missing CHIP (expected link-down:CHIP:ETH@CYCLE[/CYCLES])");
    CHECK(parse_error("link-down:0@5") ==
          "fault 'link-down:0@5': missing ETH (expected link-down:CHIP:ETH@CYCLE[/CYCLES])");
    CHECK(parse_error("link-down:0:8") ==
          "fault 'link-down:0:8': missing CYCLE (expected link-down:CHIP:ETH@CYCLE[/CYCLES])");
    CHECK(parse_error("link-down:0:") ==
          "fault 'link-down:0:': missing ETH (expected link-down:CHIP:ETH@CYCLE[/CYCLES])");
    CHECK(parse_error("link-down:0:8@") ==
          "fault 'link-down:0:8@': missing CYCLE (expected link-down:CHIP:ETH@CYCLE[/CYCLES])");
    CHECK(parse_error("link-down::8@5") ==
          "fault 'link-down::8@5': missing CHIP (expected link-down:CHIP:ETH@CYCLE[/CYCLES])");
    CHECK(parse_error("link-flap:0:8@5") ==
          "fault 'link-flap:0:8@5': missing PERIOD (expected link-flap:CHIP:ETH@CYCLE/PERIOD)");
    CHECK(parse_error("link-drop:0:8@5/") ==
          "fault 'link-drop:0:8@5/': missing PPM (expected link-drop:CHIP:ETH@CYCLE/PPM)");
    CHECK(parse_error("router-stall:0:8@5") ==
          "fault 'router-stall:0:8@5': missing CYCLES (expected "
          "router-stall:CHIP:ETH@CYCLE/CYCLES)");
    CHECK(parse_error("link-down:0:8@5/") ==
          "fault 'link-down:0:8@5/': missing CYCLES (expected link-down:CHIP:ETH@CYCLE[/CYCLES])");
    CHECK(parse_error("link-down:0:8@5/0") ==
          "fault 'link-down:0:8@5/0': CYCLES must be at least 1");
}

TEST_CASE("fault specs: a field that is not a number", "[faults]") {
    CHECK(parse_error("link-down:x:8@5") == "fault 'link-down:x:8@5': CHIP 'x' is not a number");
    CHECK(parse_error("link-down:0:-8@5") == "fault 'link-down:0:-8@5': ETH '-8' is not a number");
    CHECK(parse_error("link-down:0:8@5k") ==
          "fault 'link-down:0:8@5k': CYCLE '5k' is not a number");
    CHECK(parse_error("link-down:0:8@+5") ==
          "fault 'link-down:0:8@+5': CYCLE '+5' is not a number");
    CHECK(parse_error("link-delay:0:8@5/1e3") ==
          "fault 'link-delay:0:8@5/1e3': CYCLES '1e3' is not a number");
    CHECK(parse_error("link-flap:0:8@5/10/20") ==
          "fault 'link-flap:0:8@5/10/20': PERIOD '10/20' is not a number");
}

TEST_CASE("fault specs: a number out of range", "[faults]") {
    CHECK(parse_error("link-down:4294967296:8@5") ==
          "fault 'link-down:4294967296:8@5': CHIP 4294967296 is out of range (at most "
          "4294967295)");
    CHECK(parse_error("link-down:0:8@99999999999999999999999") ==
          "fault 'link-down:0:8@99999999999999999999999': CYCLE 99999999999999999999999 is out "
          "of range (at most 281474976710656)");
    CHECK(parse_error("link-down:0:8@281474976710657") ==
          "fault 'link-down:0:8@281474976710657': CYCLE 281474976710657 is out of range (at most "
          "281474976710656)");
    CHECK(parse_error("link-delay:0:8@5/4294967296") ==
          "fault 'link-delay:0:8@5/4294967296': CYCLES 4294967296 is out of range (at most "
          "4294967295)");
    CHECK(parse_error("link-drop:0:8@5/1000001") ==
          "fault 'link-drop:0:8@5/1000001': PPM 1000001 is more than 1000000 (every frame)");
}

TEST_CASE("fault specs: a zero period or duration", "[faults]") {
    CHECK(parse_error("link-flap:0:8@5/0") ==
          "fault 'link-flap:0:8@5/0': PERIOD must be at least 1");
    CHECK(parse_error("router-stall:0:8@5/0") ==
          "fault 'router-stall:0:8@5/0': CYCLES must be at least 1");
    CHECK(parse_error("link-delay:0:8@5/0") ==
          "fault 'link-delay:0:8@5/0': CYCLES must be at least 1");
}

TEST_CASE("fault specs: checked against the cluster and the modeled chips", "[faults]") {
    const std::vector<fabric::ChipId> both{0, 1};
    fabric::check_fault(fabric::parse_fault("link-down:0:8@5"), t::cluster("n300_cluster.yaml"),
                        t::wh_soc(), both);
    fabric::check_fault(fabric::parse_fault("router-stall:1:1@5/10"),
                        t::cluster("n300_cluster.yaml"), t::wh_soc(), both);
    CHECK(check_error("link-down:2:8@5", both) ==
          "fault 'link-down:2:8@5': chip 2 does not exist (chips 0..1 in " + t::descriptor_dir() +
              "/n300_cluster.yaml)");
    CHECK(check_error("link-down:0:16@5", both) ==
          "fault 'link-down:0:16@5': chip 0 has no eth channel 16 (channels 0..15)");
    CHECK(check_error("link-down:0:3@5", both) ==
          "fault 'link-down:0:3@5': chip 0 eth 3 has no link in " + t::descriptor_dir() +
              "/n300_cluster.yaml");
    CHECK(check_error("link-drop:1:0@5/10", {0}) ==
          "fault 'link-drop:1:0@5/10': chip 1 is not modeled in this run (modeled: 0)");
    CHECK(check_error("link-delay:0:8@5/10", {0}) ==
          "fault 'link-delay:0:8@5/10': chip 0 eth 8 leads to chip 1, which is not modeled in "
          "this run (modeled: 0)");
}

TEST_CASE("fault specs: an applied fault in words", "[faults]") {
    fabric::AppliedFault f{.kind = FaultKind::LinkDown,
                           .chip = 0,
                           .eth = 8,
                           .core = {},
                           .change = "",
                           .device_cycle = 123456,
                           .traffic_cycle = 5000};
    CHECK(f.describe() == "link-down chip 0 eth 8 at traffic cycle 5000 (device cycle 123456)");
    f.kind = FaultKind::LinkFlap;
    f.change = "up";
    CHECK(f.describe() == "link-flap chip 0 eth 8 up at traffic cycle 5000 (device cycle 123456)");
    f.kind = FaultKind::NocHold;
    f.core = {1, 2};
    f.change = "released";
    CHECK(f.describe() ==
          "noc-hold chip 0 core 1-2 released at traffic cycle 5000 (device cycle 123456)");
}

TEST_CASE("fault specs: noc-hold names a core, not a channel", "[faults]") {
    const FaultSpec hold = fabric::parse_fault("noc-hold:1:1-2@300");
    CHECK(hold.kind == FaultKind::NocHold);
    CHECK(hold.chip == 1);
    CHECK(hold.core == fabric::CoreCoord{1, 2});
    CHECK(hold.at == 300);
    CHECK(hold.amount == 0);
    CHECK(fabric::parse_fault("noc-hold:1:1-2@300/4000").amount == 4000);
    CHECK(parse_error("noc-hold:1:7@300") ==
          "fault 'noc-hold:1:7@300': X-Y '7' is not a core (expected x-y, e.g. 1-1)");
    CHECK(parse_error("noc-hold:1:@300") ==
          "fault 'noc-hold:1:@300': missing X-Y (expected noc-hold:CHIP:X-Y@CYCLE[/CYCLES])");
    CHECK(parse_error("noc-hold:1") ==
          "fault 'noc-hold:1': missing X-Y (expected noc-hold:CHIP:X-Y@CYCLE[/CYCLES])");
    CHECK(parse_error("noc-hold:1:1-1@5/0") ==
          "fault 'noc-hold:1:1-1@5/0': CYCLES must be at least 1");
    const std::vector<fabric::ChipId> both{0, 1};
    fabric::check_fault(hold, t::cluster("n300_cluster.yaml"), t::wh_soc(), both);
    CHECK(check_error("noc-hold:1:40-2@5", both) ==
          "fault 'noc-hold:1:40-2@5': chip 1 has no core 40-2 in " + t::wh_soc().source());
    CHECK(check_error("noc-hold:1:1-2@5", {0}) ==
          "fault 'noc-hold:1:1-2@5': chip 1 is not modeled in this run (modeled: 0)");
}
