// prometheus_text (telemetry.h): the exact document for a 1D and a 2D router, a link that is up,
// one that is down and one whose status word reads neither value.
#include <catch2/catch.hpp>
#include <string>

#include "fabric/telemetry.h"

namespace pf = protocol::fabric;

namespace {

fabric::RouterSnapshot router(fabric::ChipId chip, uint32_t channel, uint32_t peer_chip,
                              uint32_t peer_channel) {
    fabric::RouterSnapshot r;
    r.chip = chip;
    r.eth_channel = channel;
    r.block.status = static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic);
    r.block.peer_chip = peer_chip;
    r.block.peer_channel = peer_channel;
    return r;
}

}  // namespace

TEST_CASE("telemetry: every router's counters as Prometheus text", "[telemetry]") {
    fabric::TelemetrySample s;
    auto a = router(0, 8, 1, 0);
    a.block.heartbeat = 1200;
    a.block.sent[0] = 10;
    a.block.sent[1] = 5;
    a.block.completed[0] = 10;
    a.block.completed[1] = 4;
    a.block.received[0] = 7;
    a.block.delivered = 7;
    a.block.forwarded = 3;
    a.block.bad_packets = 2;
    auto b = router(4, 2, 5, 4);
    b.mesh = fabric::MeshPort{{0, 4}, fabric::MeshDir::E, 1};
    b.block.status = static_cast<uint32_t>(pf::RouterStatus::Terminated);
    auto c = router(9, 3, 8, 1);
    s.routers = {a, b, c};
    s.link_up = {true, false, std::nullopt};
    s.device_cycles = 123456;
    const std::string la = R"({chip="0",channel="8",peer_chip="1",peer_channel="0"})";
    const std::string lb =
        R"({chip="4",channel="2",peer_chip="5",peer_channel="4",port="M0D4 E plane 1"})";
    const std::string lc = R"({chip="9",channel="3",peer_chip="8",peer_channel="1"})";
    const auto block = [&](const std::string& name, const std::string& type,
                           const std::string& help, const std::string& va, const std::string& vb,
                           const std::string& vc) {
        std::string t = "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
        if (!va.empty()) t += name + la + " " + va + "\n";
        if (!vb.empty()) t += name + lb + " " + vb + "\n";
        if (!vc.empty()) t += name + lc + " " + vc + "\n";
        return t;
    };
    const std::string expected =
        block("tt_fabric_link_up", "gauge",
              "1 while the Ethernet link status word says the link is up, 0 while it says down",
              "1", "0", "") +
        block("tt_fabric_router_ready", "gauge",
              "1 while the router runs its main loop (status ready_for_traffic)", "1", "0", "1") +
        block("tt_fabric_router_heartbeat", "counter", "Main loop polls of the router", "1200", "0",
              "0") +
        block("tt_fabric_tx_packets_total", "counter", "Packets the router sent over its link",
              "15", "0", "0") +
        block("tt_fabric_tx_completed_packets_total", "counter",
              "Packets the peer completed (took and finished) of those sent", "14", "0", "0") +
        block("tt_fabric_rx_packets_total", "counter", "Packets the router took off its link", "7",
              "0", "0") +
        block("tt_fabric_delivered_packets_total", "counter",
              "Packets the router delivered on its own chip (NoC commands executed)", "7", "0",
              "0") +
        block("tt_fabric_forwarded_packets_total", "counter",
              "Packet copies the router forwarded to other routers of its chip", "3", "0", "0") +
        block("tt_fabric_dropped_packets_total", "counter",
              "Packets the router dropped and reported (bad header, TTL, timeout)", "2", "0", "0") +
        "# HELP tt_fabric_device_cycles The device clock when the routers were read\n"
        "# TYPE tt_fabric_device_cycles counter\ntt_fabric_device_cycles 123456\n";
    CHECK(fabric::prometheus_text(s) == expected);
}
