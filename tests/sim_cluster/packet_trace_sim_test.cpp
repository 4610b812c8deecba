// Packet traces of a real run (fabric/packet_trace.h fed by the model, sim_packet_tap.h): a line of
// three t3k chips, all-to-all (each chip multicasts both ways: the middle chip delivers and
// forwards), this build's router and fabric_traffic firmware. The trace's counts per router equal
// the routers' own counters, every packet's flow goes from its worker through the routers to its
// deliveries in cycle order, and the JSON keeps the format's rules; the same on two model threads.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "chrome_trace_check.h"
#include "descriptors.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/fabric_traffic.h"
#include "fabric/packet_trace.h"
#include "fabric/sim_device.h"
#include "fabric/sim_packet_tap.h"
#include "protocol/fabric.h"
#include "sim_fabric.h"

namespace pf = protocol::fabric;
using fabric::TraceEventKind;

namespace {

constexpr uint32_t kPackets = 5;

struct TracedRun {
    fabric::FabricPlan plan;
    fabric::FabricTraffic traffic;
    std::vector<fabric::RouterSnapshot> final;
    fabric::PacketTimeline timeline;
};

TracedRun traced_run(const fabric::ElfImage& router, const fabric::ElfImage& worker,
                     uint32_t threads) {
    fabric::FabricOptions fo;
    fo.topology = pf::Topology::Line;
    fo.chips = {0, 1, 2};
    TracedRun r{
        fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), fabric::test::wh_soc(), fo),
        {},
        {},
        {}};
    fabric::FabricTrafficOptions to;
    to.pattern = fabric::FabricTrafficPattern::AllToAll;
    to.packets = kPackets;
    to.packet_bytes = 512;
    to.count_deliveries = true;
    r.traffic = fabric::plan_fabric_traffic(r.plan, fabric::test::wh_soc(), worker, to);

    fabric::SimDeviceOptions o;
    o.cluster = fabric::test::cluster("t3k_cluster.yaml");
    o.threads = threads;
    fabric::SimDevice dev(fabric::test::wh_soc(), hal::Arch::WormholeB0, std::move(o));
    fabric::PacketTrace trace(r.plan);
    const fabric::PacketTraceTap tap(dev, trace);
    fabric::FabricRunner runner(dev, r.plan, router);
    runner.bring_up(5'000'000);
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 20'000'000;
    const auto run = fabric::run_fabric_traffic(runner, r.traffic, lo);
    for (const auto& w : run.workers) REQUIRE(w.results.packets_sent == kPackets);
    r.final = runner.terminate(pf::Termination::Graceful, 5'000'000);
    r.timeline = trace.timeline();
    return r;
}

// The events reached from `start` along the flows, in the order they are reached.
std::vector<size_t> reached(const fabric::PacketTimeline& t, size_t start) {
    std::multimap<size_t, size_t> next;
    for (const auto& f : t.flows) next.emplace(f.from, f.to);
    std::vector<size_t> out{start};
    for (size_t i = 0; i < out.size(); ++i) {
        const auto [lo, hi] = next.equal_range(out[i]);
        for (auto it = lo; it != hi; ++it) out.push_back(it->second);
    }
    return out;
}

void check_run(const TracedRun& r) {
    const fabric::PacketTimeline& t = r.timeline;
    CHECK(t.left_out == 0);
    REQUIRE(r.final.size() == r.plan.routers.size());
    for (size_t i = 0; i < r.final.size(); ++i) {
        const auto& s = r.final[i];
        INFO(s.describe());
        CHECK(t.routers[i].takes == s.received());
        CHECK(t.routers[i].sends == s.sent());
        CHECK(t.routers[i].forwards == s.block.forwarded);
        CHECK(t.routers[i].deliveries == s.block.delivered);
    }
    // Every packet a worker sent, each followed from its send to all its deliveries: every event
    // of the packet is reached, and only along the hops a packet makes.
    CHECK(t.packets.size() == r.traffic.workers.size() * kPackets);
    std::map<uint64_t, size_t> events_of_packet;
    for (const auto& e : t.events) {
        if (e.packet != 0) ++events_of_packet[e.packet];
    }
    uint64_t deliveries = 0;
    size_t worker_sends = 0;
    for (size_t i = 0; i < t.events.size(); ++i) {
        if (t.events[i].kind != TraceEventKind::WorkerSend) continue;
        ++worker_sends;
        const uint64_t packet = t.events[i].packet;
        const std::vector<size_t> path = reached(t, i);
        CHECK(path.size() == events_of_packet[packet]);
        for (size_t k = 1; k < path.size(); ++k) {
            const auto& e = t.events[path[k]];
            CHECK(e.packet == packet);
            CHECK(t.tracks[e.track].router.has_value());
            if (e.kind == TraceEventKind::Deliver) ++deliveries;
        }
    }
    CHECK(worker_sends == t.packets.size());
    CHECK(deliveries == r.traffic.deliveries());
    // The hops: worker send -> send -> take -> deliver, and take -> forward -> send on; in cycle
    // order; a send's take is on its peer's chip, a forward's send on its own.
    const std::set<std::pair<TraceEventKind, TraceEventKind>> hops{
        {TraceEventKind::WorkerSend, TraceEventKind::Send},
        {TraceEventKind::Send, TraceEventKind::Take},
        {TraceEventKind::Take, TraceEventKind::Deliver},
        {TraceEventKind::Take, TraceEventKind::Forward},
        {TraceEventKind::Forward, TraceEventKind::Send}};
    for (const auto& f : t.flows) {
        const auto& from = t.events[f.from];
        const auto& to = t.events[f.to];
        CHECK(hops.count({from.kind, to.kind}) == 1);
        CHECK(from.cycle <= to.cycle);
        const bool crosses = t.tracks[from.track].chip != t.tracks[to.track].chip;
        CHECK(crosses == (from.kind == TraceEventKind::Send));
    }

    std::ostringstream out;
    fabric::write_chrome_trace(out, t);
    const auto doc = nlohmann::json::parse(out.str());
    CHECK(fabric::test::chrome_trace_problems(doc) == std::vector<std::string>{});
}

}  // namespace

TEST_CASE("packet trace (sim): a 1D all-to-all's hops equal the routers' counters, in flow order",
          "[packet_trace][sim]") {
    const auto router = fabric::test::firmware_elf("fabric_router");
    const auto worker = fabric::test::firmware_elf("fabric_traffic");
    if (!router || !worker) {
        WARN("skipped: the router and fabric_traffic ELFs are not built yet (build the firmware)");
        return;
    }
    const TracedRun one = traced_run(*router, *worker, 1);
    check_run(one);
    // Two partitions record their chips concurrently: the same timeline.
    const TracedRun two = traced_run(*router, *worker, 2);
    check_run(two);
    CHECK(two.timeline.events.size() == one.timeline.events.size());
    CHECK(two.timeline.flows.size() == one.timeline.flows.size());
}
