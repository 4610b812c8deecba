// The router's link health state machines (firmware/router/link_watch.h) on made-up clocks: when
// a silent peer is reported, once, and when it is heard again; the link status word's changes.
#include "link_watch.h"

#include <catch2/catch.hpp>

namespace {

using fabric::router::LinkChange;
using fabric::router::LinkStatusWatch;
using fabric::router::PeerWatch;

}  // namespace

TEST_CASE("peer watch: silent once after the bound, heard again once", "[router][link]") {
    PeerWatch w(8000, 100);
    // From the start (the handshake was the peer's first sign): silent 8000 cycles after it.
    CHECK(w.poll(8099, false) == LinkChange::None);
    CHECK(w.poll(8100, false) == LinkChange::PeerSilent);
    w = PeerWatch(8000, 100);
    // Signs of life keep it quiet however long the run.
    CHECK(w.poll(5000, true) == LinkChange::None);
    CHECK(w.poll(12000, true) == LinkChange::None);
    // No new sign: silent once 8000 cycles have passed since the last one (at 12000).
    CHECK(w.poll(19999, false) == LinkChange::None);
    CHECK_FALSE(w.silent());
    CHECK(w.poll(20000, false) == LinkChange::PeerSilent);
    CHECK(w.silent());
    CHECK(w.quiet_cycles(20000) == 8000);
    CHECK(w.poll(50000, false) == LinkChange::None);  // reported once
    // Heard again: once, with how long it had been silent.
    CHECK(w.poll(61000, true) == LinkChange::PeerHeard);
    CHECK(w.silent_for() == 49000);
    CHECK_FALSE(w.silent());
    CHECK(w.poll(62000, true) == LinkChange::None);
    CHECK(w.poll(70000, false) == LinkChange::PeerSilent);
}

TEST_CASE("peer watch: the wall clock's low word wraps", "[router][link]") {
    PeerWatch w(8000, 0);
    CHECK(w.poll(0xFFFFF000u, true) == LinkChange::None);
    CHECK(w.poll(0x00000F3Fu, false) == LinkChange::None);  // 7999 cycles later
    CHECK(w.poll(0x00000F40u, false) == LinkChange::PeerSilent);
}

TEST_CASE("link status word: each change reported once", "[router][link]") {
    LinkStatusWatch w(6);
    CHECK(w.up());
    CHECK(w.poll(6) == LinkChange::None);
    CHECK(w.poll(0) == LinkChange::Down);
    CHECK_FALSE(w.up());
    CHECK(w.poll(3) == LinkChange::None);  // still not up
    CHECK(w.poll(6) == LinkChange::Up);
    CHECK(w.poll(6) == LinkChange::None);
}
