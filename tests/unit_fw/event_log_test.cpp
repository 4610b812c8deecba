// fabric::EventLog (firmware/include/fabric/event_log.h) on the fake L1: records land in the ring
// whole, in order, with the router's clock; a full log (the host has not consumed) counts what it
// could not write and never waits; the host's `consumed` makes room again.

#include "fabric/event_log.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "router_fixtures.h"

namespace {

using fw_test::FakeCore;
namespace pf = protocol::fabric;
using Kind = pf::RouterEventKind;

constexpr uint32_t kBase = 0x12000;  // any 16-B aligned L1 block

pf::RouterEventLog read_log(FakeCore& core) {
    pf::RouterEventLog log;
    std::memcpy(&log, core.fake.l1_base() + kBase, sizeof log);
    return log;
}

}  // namespace

TEST_CASE("event log: records in order with the router's clock, then the counters", "[events]") {
    FakeCore core;
    core.fake.use_wall_clock(5000, 3);
    fabric::EventLog log(kBase);
    std::memset(core.fake.l1_base() + kBase, 0xA5, sizeof(pf::RouterEventLog));  // stale words
    log.reset();
    pf::RouterEventLog l = read_log(core);
    CHECK(l.written == 0);
    CHECK(l.dropped == 0);
    CHECK(l.consumed == 0);
    CHECK(l.capacity == pf::kRouterEventRecords);

    log.record(Kind::State, 0, static_cast<uint32_t>(pf::RouterStatus::Started), 0);
    log.record(Kind::BadPacket, 1, static_cast<uint32_t>(pf::BadPacket::Magic), 0x77);
    l = read_log(core);
    CHECK(l.written == 2);
    CHECK(l.records[0].kind == static_cast<uint16_t>(Kind::State));
    CHECK(l.records[0].channel == 0);
    CHECK(l.records[0].code == static_cast<uint32_t>(pf::RouterStatus::Started));
    CHECK(l.records[1].kind == static_cast<uint16_t>(Kind::BadPacket));
    CHECK(l.records[1].channel == 1);
    CHECK(l.records[1].code == static_cast<uint32_t>(pf::BadPacket::Magic));
    CHECK(l.records[1].value == 0x77);
    CHECK(l.records[1].time > l.records[0].time);  // the clock moved between them
}

TEST_CASE("event log: full, it counts what it could not write, consumed makes room", "[events]") {
    FakeCore core;
    fabric::EventLog log(kBase);
    log.reset();
    const uint32_t n = pf::kRouterEventRecords;
    for (uint32_t i = 0; i < n + 5; ++i) log.record(Kind::BadPacket, 0, 0x100, i);
    pf::RouterEventLog l = read_log(core);
    CHECK(l.written == n);
    CHECK(l.dropped == 5);
    CHECK(l.records[n - 1].value == n - 1);  // the oldest kept, the newest not written

    // The host read 3: three more fit, in the ring's next places (wrapping to the start).
    const uint32_t consumed = 3;
    std::memcpy(core.fake.l1_base() + kBase + offsetof(pf::RouterEventLog, consumed), &consumed, 4);
    for (uint32_t i = 0; i < 4; ++i) log.record(Kind::BadPacket, 0, 0x101, 100 + i);
    l = read_log(core);
    CHECK(l.written == n + 3);
    CHECK(l.dropped == 6);
    CHECK(l.records[0].value == 100);
    CHECK(l.records[2].value == 102);
    CHECK(l.records[3].value == 3);  // untouched
}
