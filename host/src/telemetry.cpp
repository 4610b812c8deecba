// Router counters as Prometheus text (telemetry.h).
#include "fabric/telemetry.h"

#include <fmt/format.h>

#include <functional>

#include "hal/arch_map.h"

namespace fabric {

namespace {

struct Metric {
    const char* name;
    const char* type;  // "counter" or "gauge"
    const char* help;
    std::function<std::optional<uint64_t>(const TelemetrySample&, size_t)> value;
};

uint64_t field(const TelemetrySample& s, size_t i,
               uint32_t protocol::fabric::RouterStatusBlock::*f) {
    return s.routers[i].block.*f;
}

const std::vector<Metric>& metrics() {
    using Block = protocol::fabric::RouterStatusBlock;
    static const std::vector<Metric> all{
        {"tt_fabric_link_up", "gauge",
         "1 while the Ethernet link status word says the link is up, 0 while it says down",
         [](const TelemetrySample& s, size_t i) -> std::optional<uint64_t> {
             if (!s.link_up[i]) return std::nullopt;
             return *s.link_up[i] ? 1 : 0;
         }},
        {"tt_fabric_router_ready", "gauge",
         "1 while the router runs its main loop (status ready_for_traffic)",
         [](const TelemetrySample& s, size_t i) -> std::optional<uint64_t> {
             return s.routers[i].block.status ==
                    static_cast<uint32_t>(protocol::fabric::RouterStatus::ReadyForTraffic);
         }},
        {"tt_fabric_router_heartbeat", "counter", "Main loop polls of the router",
         [](const TelemetrySample& s, size_t i) -> std::optional<uint64_t> {
             return field(s, i, &Block::heartbeat);
         }},
        {"tt_fabric_tx_packets_total", "counter", "Packets the router sent over its link",
         [](const TelemetrySample& s, size_t i) -> std::optional<uint64_t> {
             return s.routers[i].sent();
         }},
        {"tt_fabric_tx_completed_packets_total", "counter",
         "Packets the peer completed (took and finished) of those sent",
         [](const TelemetrySample& s, size_t i) -> std::optional<uint64_t> {
             return s.routers[i].completed();
         }},
        {"tt_fabric_rx_packets_total", "counter", "Packets the router took off its link",
         [](const TelemetrySample& s, size_t i) -> std::optional<uint64_t> {
             return s.routers[i].received();
         }},
        {"tt_fabric_delivered_packets_total", "counter",
         "Packets the router delivered on its own chip (NoC commands executed)",
         [](const TelemetrySample& s, size_t i) -> std::optional<uint64_t> {
             return field(s, i, &Block::delivered);
         }},
        {"tt_fabric_forwarded_packets_total", "counter",
         "Packet copies the router forwarded to other routers of its chip",
         [](const TelemetrySample& s, size_t i) -> std::optional<uint64_t> {
             return field(s, i, &Block::forwarded);
         }},
        {"tt_fabric_dropped_packets_total", "counter",
         "Packets the router dropped and reported (bad header, TTL, timeout)",
         [](const TelemetrySample& s, size_t i) -> std::optional<uint64_t> {
             return field(s, i, &Block::bad_packets);
         }},
    };
    return all;
}

std::string labels(const RouterSnapshot& r) {
    std::string l = fmt::format(R"(chip="{}",channel="{}",peer_chip="{}",peer_channel="{}")",
                                r.chip, r.eth_channel, r.block.peer_chip, r.block.peer_channel);
    if (r.mesh) l += fmt::format(R"(,port="{}")", r.mesh->str());
    return l;
}

}  // namespace

TelemetrySample read_telemetry(FabricRunner& runner) {
    TelemetrySample s;
    s.routers = runner.status();
    const hal::EthLinkStatus& word = hal::arch_map(runner.plan().arch).link_status;
    for (const RouterSnapshot& r : s.routers) {
        const uint32_t v = runner.device().read32(r.core, word.addr);
        s.link_up.push_back(v == word.up     ? std::optional<bool>(true)
                            : v == word.down ? std::optional<bool>(false)
                                             : std::nullopt);
    }
    s.device_cycles = runner.device().cycles();
    return s;
}

std::string prometheus_text(const TelemetrySample& sample) {
    std::string out;
    for (const Metric& m : metrics()) {
        out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", m.name, m.help, m.name, m.type);
        for (size_t i = 0; i < sample.routers.size(); ++i) {
            if (const auto v = m.value(sample, i)) {
                out += fmt::format("{}{{{}}} {}\n", m.name, labels(sample.routers[i]), *v);
            }
        }
    }
    out += fmt::format(
        "# HELP tt_fabric_device_cycles The device clock when the routers were read\n"
        "# TYPE tt_fabric_device_cycles counter\ntt_fabric_device_cycles {}\n",
        sample.device_cycles);
    return out;
}

}  // namespace fabric
