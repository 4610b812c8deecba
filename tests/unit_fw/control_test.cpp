// The router's control decisions (firmware/router/control.h): the control word as acted on, the
// stall rule under each word, when a drain cuts the link, when the main loop idles, the state
// each word reports, and a cut link's oldest unfinished slot.
#include "control.h"

#include <catch2/catch.hpp>

namespace {

namespace pf = protocol::fabric;
using namespace fabric::router;

constexpr uint32_t kRun = static_cast<uint32_t>(pf::RouterControl::Run);
constexpr uint32_t kPause = static_cast<uint32_t>(pf::RouterControl::Pause);
constexpr uint32_t kDrain = static_cast<uint32_t>(pf::RouterControl::Drain);
constexpr uint32_t kReroute = static_cast<uint32_t>(pf::RouterControl::Reroute);
constexpr uint32_t kRejoin = static_cast<uint32_t>(pf::RouterControl::Rejoin);

pf::RouterConfig with_stall(uint32_t us, pf::StallAction action) {
    pf::RouterConfig c{};
    c.stall_timeout_us = us;
    c.stall_action = static_cast<uint32_t>(action);
    return c;
}

}  // namespace

TEST_CASE("control: a word that is not a RouterControl is Run", "[router][control]") {
    CHECK(control_word(kRun) == kRun);
    CHECK(control_word(kPause) == kPause);
    CHECK(control_word(kDrain) == kDrain);
    CHECK(control_word(kReroute) == kReroute);
    CHECK(control_word(kRejoin) == kRejoin);
    CHECK(control_word(5) == kRun);
    CHECK(control_word(0xFFFFFFFF) == kRun);
}

TEST_CASE("control: stalls as configured running, none paused, dropped as drained draining",
          "[router][control]") {
    const auto off = with_stall(0, pf::StallAction::Drop);
    const auto hold = with_stall(50, pf::StallAction::Hold);
    const auto quick = with_stall(5, pf::StallAction::Drop);
    // Run: the config's rule.
    CHECK(stall_rule(off, kRun).us == 0);
    CHECK(stall_rule(hold, kRun).us == 50);
    CHECK_FALSE(stall_rule(hold, kRun).drop);
    CHECK(stall_rule(quick, kRun).drop);
    CHECK(stall_rule(quick, kRun).why == pf::BadPacket::Timeout);
    // Pause: nothing is stalled, whatever the config.
    CHECK(stall_rule(quick, kPause).us == 0);
    CHECK(stall_rule(hold, kPause).us == 0);
    // Drain: dropped as Drained after the drain's hold time, or the config's if shorter.
    for (const auto& c : {off, hold}) {
        const StallRule r = stall_rule(c, kDrain);
        CHECK(r.us == pf::kRouterDrainHoldUs);
        CHECK(r.drop);
        CHECK(r.why == pf::BadPacket::Drained);
    }
    CHECK(stall_rule(quick, kDrain).us == 5);
    CHECK(stall_rule(quick, kDrain).why == pf::BadPacket::Drained);
}

TEST_CASE("control: a drain cuts a dead link, a reroute any link, once", "[router][control]") {
    CHECK(cuts_link(kDrain, false, true));
    CHECK(cuts_link(kReroute, false, true));
    CHECK(cuts_link(kReroute, false, false));  // dead at the other end: cut here too
    CHECK_FALSE(cuts_link(kReroute, true, true));
    CHECK_FALSE(cuts_link(kDrain, true, true));    // cut already
    CHECK_FALSE(cuts_link(kDrain, false, false));  // the link lives: drain moves what it can
    CHECK_FALSE(cuts_link(kPause, false, true));
    CHECK_FALSE(cuts_link(kRun, false, true));
}

TEST_CASE("control: the main loop idles while paused and once the link is cut",
          "[router][control]") {
    CHECK_FALSE(loop_idle(kRun, false));
    CHECK(loop_idle(kPause, false));
    CHECK_FALSE(loop_idle(kDrain, false));
    CHECK(loop_idle(kDrain, true));
    CHECK(loop_idle(kRun, true));  // a cut link stays cut after Run
}

TEST_CASE("control: the state each word reports", "[router][control]") {
    CHECK(control_event(kRun) == pf::RouterStatus::ReadyForTraffic);
    CHECK(control_event(kPause) == pf::RouterStatus::Paused);
    CHECK(control_event(kDrain) == pf::RouterStatus::Drained);
    CHECK(control_event(kReroute) == pf::RouterStatus::RerouteHeld);
    CHECK(control_event(kRejoin) == pf::RouterStatus::Rejoined);
}

TEST_CASE("control: a reroute order's count splits a channel's unacked packets",
          "[router][control]") {
    // Completed 10, sent 14: packets 10..13 unacked.
    CHECK(resume_channel(10, 14, 10).ok);
    CHECK(resume_channel(10, 14, 10).complete == 0);
    CHECK(resume_channel(10, 14, 10).resend == 4);
    CHECK(resume_channel(10, 14, 12).complete == 2);
    CHECK(resume_channel(10, 14, 12).resend == 2);
    CHECK(resume_channel(10, 14, 14).complete == 4);
    CHECK(resume_channel(10, 14, 14).resend == 0);
    CHECK_FALSE(resume_channel(10, 14, 15).ok);  // the peer took more than was sent
    CHECK_FALSE(resume_channel(10, 14, 9).ok);   // less than it completed
    // Free-running counters across the wrap.
    const Resume w = resume_channel(0xFFFFFFFE, 2, 1);
    CHECK(w.ok);
    CHECK(w.complete == 3);
    CHECK(w.resend == 1);
}

TEST_CASE("control: a cut link's oldest unfinished slot, back around the ring",
          "[router][control]") {
    // 4 slots of 0x100 from 0x1000.
    constexpr uint32_t base = 0x1000, end = 0x1400, bytes = 0x100;
    CHECK(slot_before(base, end, 0x1300, 0, bytes) == 0x1300);
    CHECK(slot_before(base, end, 0x1300, 2, bytes) == 0x1100);
    CHECK(slot_before(base, end, 0x1300, 3, bytes) == 0x1000);
    CHECK(slot_before(base, end, 0x1100, 2, bytes) == 0x1300);  // wraps
    CHECK(slot_before(base, end, 0x1000, 4, bytes) == 0x1000);  // the whole ring
}

TEST_CASE("control: a rerouted link starts again only once both ends' old traffic has landed",
          "[router][control]") {
    // Our marker sent, the peer's landed, nothing taken unfinished.
    CHECK(rejoin_ready(true, 1, 0));
    CHECK_FALSE(rejoin_ready(false, 1, 0));  // our marker not on the link yet
    CHECK_FALSE(rejoin_ready(true, 0, 0));   // the peer's marker not here yet
    CHECK_FALSE(rejoin_ready(true, 1, 2));   // two packets taken and not completed
}
