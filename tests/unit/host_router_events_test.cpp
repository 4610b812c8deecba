// The host side of the routers' event logs (fabric/router_events.h) without a model: what each
// record says (text and JSON) and the JSON-lines log file. Collection from running routers is in
// tests/sim_cluster/fabric_runner_sim_test.cpp ("router events").
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/fabric_runner.h"
#include "fabric/router_events.h"
#include "hal/status.h"

namespace pf = protocol::fabric;
using fabric::RouterEventRecord;

namespace {

RouterEventRecord event(pf::RouterEventKind kind, uint32_t channel, uint32_t code, uint32_t value) {
    RouterEventRecord r{.router = 1, .collected_cycle = 5000};
    r.event = {.time = 1234,
               .kind = static_cast<uint16_t>(kind),
               .channel = static_cast<uint16_t>(channel),
               .code = code,
               .value = value};
    return r;
}

constexpr auto kState = pf::RouterEventKind::State;
constexpr uint32_t code(pf::RouterStatus s) {
    return static_cast<uint32_t>(s);
}

}  // namespace

TEST_CASE("router events: each record in one line", "[events]") {
    using fabric::describe_event;
    CHECK(describe_event(event(kState, 0, code(pf::RouterStatus::ReadyForTraffic), 0)) ==
          "state ready_for_traffic");
    CHECK(describe_event(event(kState, static_cast<uint32_t>(pf::RouterWait::EthTxq),
                               code(pf::RouterStatus::Fault),
                               static_cast<uint32_t>(hal::Status::Timeout))) ==
          "state fault at eth_txq (hal:timeout)");
    CHECK(describe_event(event(kState, 0, code(pf::RouterStatus::ConfigInvalid),
                               static_cast<uint32_t>(pf::ConfigCheck::Layout))) ==
          "state config_invalid (config:layout)");
    CHECK(describe_event(event(pf::RouterEventKind::BadPacket, 1,
                               static_cast<uint32_t>(pf::BadPacket::RouteTooLong), 42)) ==
          "bad_packet route_too_long on rx1 (seq 42)");
    CHECK(describe_event(event(pf::RouterEventKind::BadPacket, 0,
                               static_cast<uint32_t>(pf::BadPacket::TtlExpired), 0x7702)) ==
          "bad_packet ttl_expired on rx0 (seq 30466)");
    CHECK(describe_event(event(pf::RouterEventKind::PeerSilent, 6, 8123, 1)) ==
          "peer_silent: peer chip 1 eth 6 not heard for 8123 cycles");
    CHECK(describe_event(event(pf::RouterEventKind::PeerHeard, 6, 20000, 1)) ==
          "peer_heard: peer chip 1 eth 6 heard again after 20000 cycles");
    CHECK(describe_event(event(pf::RouterEventKind::LinkDown, 6, 0, 1)) ==
          "link_down: link to peer chip 1 eth 6 (status word 0x00000000)");
    CHECK(describe_event(event(pf::RouterEventKind::LinkUp, 6, 6, 1)) ==
          "link_up: link to peer chip 1 eth 6 (status word 0x00000006)");
    CHECK(describe_event(event(pf::RouterEventKind::Stalled, 0, 1, 77)) ==
          "stalled: the packet at the head of rx0 waits for port 1 (seq 77)");
    CHECK(describe_event(event(pf::RouterEventKind::BadPacket, 0,
                               static_cast<uint32_t>(pf::BadPacket::Timeout), 78)) ==
          "bad_packet timeout on rx0 (seq 78)");
    CHECK(describe_event(RouterEventRecord{.router = 0, .lost = 3}) == "lost 3 events (log full)");
    CHECK(describe_event(RouterEventRecord{.router = 0, .lost = 1}) == "lost 1 event (log full)");
    RouterEventRecord odd = event(kState, 0, 0, 0);
    odd.event.kind = 99;
    CHECK(describe_event(odd) == "unknown(0x00000063) channel 0 code 0x00000000 value 0x00000000");
}

TEST_CASE("router events: JSON by name", "[events]") {
    using nlohmann::json;
    CHECK(fabric::event_json(event(pf::RouterEventKind::BadPacket, 0,
                                   static_cast<uint32_t>(pf::BadPacket::Magic), 7)) ==
          json{{"kind", "bad_packet"},
               {"cycle", 5000},
               {"router_time", 1234},
               {"reason", "magic"},
               {"channel", 0},
               {"seq", 7}});
    CHECK(fabric::event_json(event(kState, static_cast<uint32_t>(pf::RouterWait::Drain),
                                   code(pf::RouterStatus::Timeout), 0)) ==
          json{{"kind", "state"},
               {"cycle", 5000},
               {"router_time", 1234},
               {"status", "timeout"},
               {"where", "drain"}});
    CHECK(fabric::event_json(event(pf::RouterEventKind::PeerSilent, 6, 8123, 1)) ==
          json{{"kind", "peer_silent"},
               {"cycle", 5000},
               {"router_time", 1234},
               {"peer_chip", 1},
               {"peer_eth", 6},
               {"cycles", 8123}});
    CHECK(fabric::event_json(event(pf::RouterEventKind::Stalled, 1, 6, 9)) ==
          json{{"kind", "stalled"},
               {"cycle", 5000},
               {"router_time", 1234},
               {"channel", 1},
               {"port", 6},
               {"seq", 9}});
    CHECK(fabric::event_json(event(pf::RouterEventKind::LinkDown, 6, 0, 1)) ==
          json{{"kind", "link_down"},
               {"cycle", 5000},
               {"router_time", 1234},
               {"peer_chip", 1},
               {"peer_eth", 6},
               {"status_word", 0}});
    CHECK(fabric::event_json(RouterEventRecord{.router = 0, .collected_cycle = 9, .lost = 2}) ==
          json{{"kind", "lost"}, {"cycle", 9}, {"lost", 2}});
}

TEST_CASE("router events: the log file, one JSON line per record", "[events]") {
    fabric::FabricOptions o;
    o.chips = {0, 1};
    const auto plan =
        fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), fabric::test::wh_soc(), o);
    const std::string path = std::string(FABRIC_TEST_TMP_DIR) + "/events.jsonl";
    {
        std::ofstream(path) << "an earlier bring-up\n";
        fabric::EventLogFile log(path);  // a file per bring-up: created anew
        const RouterEventRecord recs[] = {
            event(kState, 0, code(pf::RouterStatus::Started), 0),
            RouterEventRecord{.router = 0, .collected_cycle = 6000, .lost = 4}};
        log.append(recs, plan);
    }
    std::ifstream in(path);
    std::string line;
    std::vector<nlohmann::json> lines;
    while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
    REQUIRE(lines.size() == 2);
    CHECK(lines[0]["router"] == fabric::router_component_name(plan.routers[1]));
    CHECK(lines[0]["chip"] == plan.routers[1].chip);
    CHECK(lines[0]["eth"] == plan.routers[1].eth_channel);
    CHECK(lines[0]["status"] == "started");
    CHECK(lines[0]["text"] == "state started");
    CHECK(lines[1]["text"] == "lost 4 events (log full)");
    CHECK(lines[1]["kind"] == "lost");
    CHECK(lines[1]["router"] == fabric::router_component_name(plan.routers[0]));
    const std::string t = lines[0]["host_time"];
    CHECK(t.size() == 24);  // 2026-11-26T16:30:00.123Z
    CHECK(t.back() == 'Z');
    std::filesystem::remove(path);

    const std::string msg = fabric::test::expect_error(fabric::ErrorCategory::BadInput, [] {
        fabric::EventLogFile("/nonexistent-dir/events.jsonl");
    });
    CHECK(msg == "--events /nonexistent-dir/events.jsonl: cannot create the file");
}
