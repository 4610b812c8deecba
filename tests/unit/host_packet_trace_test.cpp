// Packet traces (fabric/packet_trace.h) from hand-made observations: one packet's hops over a line
// of three chips, the Chrome trace-event JSON they make checked against the format's rules
// (chrome_trace_check.h, which is itself checked on documents that break them), the cap on kept
// records.
#include <catch2/catch.hpp>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "chrome_trace_check.h"
#include "descriptors.h"
#include "fabric/fabric_plan.h"
#include "fabric/packet_trace.h"
#include "hal/arch_map.h"
#include "hal/encoding.h"
#include "protocol/fabric.h"

namespace pf = protocol::fabric;
using fabric::FabricDir;
using fabric::TraceEventKind;
using nlohmann::json;

namespace {

fabric::FabricPlan line3() {
    fabric::FabricOptions o;
    o.topology = pf::Topology::Line;
    o.chips = {0, 1, 2};
    return fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), fabric::test::wh_soc(),
                               o);
}

std::vector<uint8_t> header(uint32_t seq, uint32_t route) {
    pf::PacketHeader h{};
    h.seq = seq;
    h.route = route;
    h.send_type = static_cast<uint8_t>(pf::NocSendType::UnicastWrite);
    h.payload_bytes = 256;
    h.magic = pf::kHeaderMagic;
    std::vector<uint8_t> b(sizeof h);
    std::memcpy(b.data(), &h, sizeof h);
    return b;
}

uint32_t stream_update(uint32_t stream) {
    return hal::stream::reg_addr(stream,
                                 hal::kWormholeB0.stream.remote_dest_buf_space_available_update);
}

const fabric::CoreCoord kWorker{1, 1};

// The model's view of one packet from chip 0's worker to chip 2's (2 hops), forwarded by chip 1:
// its forward lands before chip 1's take is announced (so the take is placed at the forward).
void one_packet(fabric::PacketTrace& t, const fabric::FabricPlan& p) {
    const auto& r0e = p.router(0, FabricDir::East);
    const auto& r1w = p.router(1, FabricDir::West);
    const auto& r1e = p.router(1, FabricDir::East);
    const auto& r2w = p.router(2, FabricDir::West);
    const auto hdr = header(7, pf::route_unicast(2));
    const auto write = [&](fabric::CoreCoord src, uint64_t src_addr, fabric::CoreCoord dst,
                           uint64_t dst_addr, uint64_t cycle) {
        fabric::TraceNocLanding l;
        l.src = src;
        l.src_addr = src_addr;
        l.dst = dst;
        l.dst_addr = dst_addr;
        l.len = static_cast<uint32_t>(hdr.size());
        l.data = hdr.data();
        l.cycle = cycle;
        return l;
    };
    const auto eth = [&](uint32_t src, uint32_t dest, uint64_t accepted, uint64_t landed) {
        fabric::TraceEthLanding l;
        l.src = src;
        l.dest = dest;
        l.size = static_cast<uint32_t>(hdr.size());
        l.data = hdr.data();
        l.accepted_cycle = accepted;
        l.landed_cycle = landed;
        return l;
    };
    // The worker's push into chip 0's ch0, the send over Ethernet into chip 1's rx0.
    t.noc_landed(0, write(kWorker, 0x30000, r0e.core.core, r0e.layout.sender_base[0], 100));
    t.eth_landed(1, r1w.eth_channel,
                 eth(r0e.layout.sender_base[0], r1w.layout.receiver_base[0], 150, 700));
    // Chip 1: the forward into its east router's ch1 lands, then the take's -1 on RxSent0.
    t.noc_landed(1, write(r1w.core.core, r1w.layout.receiver_base[0], r1e.core.core,
                          r1e.layout.sender_base[1], 760));
    t.stream_store(1, r1w.core.core, stream_update(pf::kStreamRxSent0),
                   hal::stream::encode_words_free_delta(-1), 780);
    t.eth_landed(2, r2w.eth_channel,
                 eth(r1e.layout.sender_base[1], r2w.layout.receiver_base[0], 800, 1350));
    // Chip 2: take, then the delivery of the payload (read from the slot after its header).
    t.stream_store(2, r2w.core.core, stream_update(pf::kStreamRxSent0),
                   hal::stream::encode_words_free_delta(-1), 1400);
    t.noc_landed(2, write(r2w.core.core, r2w.layout.receiver_base[0] + 64, kWorker, 0x40000, 1420));
    // Credits: chip 1's west router completes chip 0's ch0 slot (a register write over Ethernet),
    // chip 1's east router frees its ch1 slot into the west router's upstream_credit[1].
    fabric::TraceEthLanding done;
    done.is_data = false;
    done.dest = stream_update(pf::kStreamCompleted0 + 0);
    done.reg_value = hal::stream::encode_words_free_delta(1);
    done.landed_cycle = 1300;
    t.eth_landed(0, r0e.eth_channel, done);
    fabric::TraceNocLanding credit;
    credit.kind = fabric::TraceNocLanding::Kind::InlineWrite;
    credit.src = r1e.core.core;
    credit.dst = r1w.core.core;
    credit.dst_addr = r1w.layout.upstream_credit[1];
    credit.value = 1;
    credit.cycle = 1900;
    t.noc_landed(1, credit);
    // Not fabric traffic: a worker writing to another worker.
    t.noc_landed(0, write(kWorker, 0x30000, {2, 1}, 0x30000, 120));
}

json to_json(const fabric::PacketTimeline& t) {
    std::ostringstream out;
    fabric::write_chrome_trace(out, t);
    return json::parse(out.str());
}

size_t router_index(const fabric::FabricPlan& p, fabric::ChipId chip, FabricDir dir) {
    return static_cast<size_t>(&p.router(chip, dir) - p.routers.data());
}

}  // namespace

TEST_CASE("packet trace: one packet's hops, worker -> routers -> delivery, as trace events",
          "[packet_trace]") {
    const auto p = line3();
    fabric::PacketTrace trace(p);
    one_packet(trace, p);
    CHECK(trace.records() == 9);
    const fabric::PacketTimeline t = trace.timeline();
    REQUIRE(t.packets.size() == 1);
    CHECK(t.packets[0].seq == 7);

    std::vector<std::pair<TraceEventKind, uint64_t>> hops;
    for (const auto& e : t.events) {
        if (e.packet == 1) hops.emplace_back(e.kind, e.cycle);
    }
    const std::vector<std::pair<TraceEventKind, uint64_t>> expected{
        {TraceEventKind::WorkerSend, 100}, {TraceEventKind::Send, 150},
        {TraceEventKind::Take, 760},       {TraceEventKind::Forward, 760},
        {TraceEventKind::Send, 800},       {TraceEventKind::Take, 1400},
        {TraceEventKind::Deliver, 1420}};
    CHECK(hops == expected);
    REQUIRE(t.flows.size() == 6);
    for (const auto& f : t.flows) CHECK(t.events[f.from].cycle <= t.events[f.to].cycle);

    const auto counts = [&](fabric::ChipId chip, FabricDir dir) {
        const auto& c = t.routers[router_index(p, chip, dir)];
        return std::vector<uint64_t>{c.takes, c.sends, c.forwards, c.deliveries, c.credits};
    };
    CHECK(counts(0, FabricDir::East) == std::vector<uint64_t>{0, 1, 0, 0, 0});
    CHECK(counts(1, FabricDir::West) == std::vector<uint64_t>{1, 0, 1, 0, 1});  // chip 0's ch0
    CHECK(counts(1, FabricDir::East) == std::vector<uint64_t>{0, 1, 0, 0, 1});
    CHECK(counts(2, FabricDir::West) == std::vector<uint64_t>{1, 0, 0, 1, 0});

    const json doc = to_json(t);
    CHECK(fabric::test::chrome_trace_problems(doc).empty());
    CHECK(doc["displayTimeUnit"] == "ns");
    CHECK(doc["otherData"]["left_out"] == 0);
    CHECK(doc["otherData"]["packets"] == 1);
    // The delivery: a slice of one cycle at 1.420 us on chip 2's west router (pid 3).
    const auto& events = doc["traceEvents"];
    const auto deliver = std::find_if(events.begin(), events.end(),
                                      [](const json& e) { return e["name"] == "deliver"; });
    REQUIRE(deliver != events.end());
    CHECK((*deliver)["ph"] == "X");
    CHECK((*deliver)["ts"].get<double>() == Approx(1.42));
    CHECK((*deliver)["dur"].get<double>() == Approx(0.001));
    CHECK((*deliver)["pid"] == 3);
    CHECK((*deliver)["args"]["seq"] == 7);
    CHECK((*deliver)["args"]["to"] == "chip 2 core 1-1 0x40000");
    const auto names = [&](const std::string& meta) {
        std::vector<std::string> out;
        for (const auto& e : events) {
            if (e["ph"] == "M" && e["name"] == meta) out.push_back(e["args"]["name"]);
        }
        return out;
    };
    CHECK(names("process_name") == std::vector<std::string>{"chip 0", "chip 1", "chip 2"});
    CHECK(names("thread_name") == std::vector<std::string>{
                                      "router eth 2 (8-0) east",
                                      "router eth 4 (7-0) west",
                                      "router eth 2 (8-0) east",
                                      "router eth 4 (7-0) west",
                                      "worker 1-1",
                                  });
}

TEST_CASE("packet trace: the cap keeps the first records and counts the rest", "[packet_trace]") {
    const auto p = line3();
    fabric::PacketTrace trace(p, 3);
    one_packet(trace, p);
    CHECK(trace.records() == 3);
    CHECK(trace.left_out() == 6);
    const auto t = trace.timeline();
    CHECK(t.cap_reached_at == 780);
    CHECK(fabric::trace_cap_message(t) ==
          "packet trace: the cap of 3 records was reached at cycle 780; 6 later observations "
          "were left out (packets after it are missing or cut short)");
    const json doc = to_json(t);
    CHECK(fabric::test::chrome_trace_problems(doc).empty());
    CHECK(doc["otherData"]["left_out"] == 6);
    CHECK(doc["otherData"]["cap_reached_at_cycle"] == 780);
    CHECK_THROWS_WITH(fabric::PacketTrace(p, 0),
                      "packet trace: the most records kept must be at least 1");
}

TEST_CASE("chrome trace check: the format's rules, each broken once", "[packet_trace]") {
    const auto meta = R"([
        {"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"chip 0"}},
        {"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"a"}}])"_json;
    const auto with = [&](const std::vector<json>& more) {
        json events = meta;
        for (const auto& e : more) events.push_back(e);
        return json{{"traceEvents", events}};
    };
    const auto slice = [](double ts, double dur, int tid = 1) {
        return json{{"name", "x"}, {"ph", "X"}, {"ts", ts}, {"dur", dur}, {"pid", 1}, {"tid", tid}};
    };
    const auto flow = [](const char* ph, double ts, int id) {
        return json{{"name", "p"}, {"cat", "packet"}, {"ph", ph}, {"ts", ts},
                    {"id", id},    {"pid", 1},        {"tid", 1}};
    };
    using V = std::vector<std::string>;
    CHECK(fabric::test::chrome_trace_problems(
              with({slice(1, 0.001), slice(2, 0.001), flow("s", 1, 5), flow("f", 2, 5)}))
              .empty());
    CHECK(fabric::test::chrome_trace_problems(json::array()) ==
          V{"the document is not an object with a traceEvents array"});
    CHECK(fabric::test::chrome_trace_problems(with({json{{"ph", "X"}, {"name", "x"}}})) ==
          V{"event 2: needs ph, name (strings), pid and tid (integers)"});
    json no_dur = slice(1, 0.001);
    no_dur.erase("dur");
    CHECK(fabric::test::chrome_trace_problems(with({no_dur})) ==
          V{"event 2: X needs a numeric dur >= 0"});
    CHECK(fabric::test::chrome_trace_problems(with({slice(2, 0.001), slice(1, 0.001)})) ==
          V{"event 3: X before the previous slice of its thread"});
    CHECK(fabric::test::chrome_trace_problems(with({slice(1, 2), slice(2, 2)})) ==
          V{"pid 1 tid 1: a slice at 2000 ns overlaps one it starts in"});
    CHECK(fabric::test::chrome_trace_problems(with({slice(1, 0.001), flow("s", 1, 5)})) ==
          V{"flow 5: not one s and one f"});
    CHECK(fabric::test::chrome_trace_problems(
              with({slice(1, 0.001), slice(2, 0.001), flow("s", 2, 5), flow("f", 1, 5)})) ==
          V{"flow 5: f before s"});
    CHECK(fabric::test::chrome_trace_problems(
              with({slice(1, 0.001), flow("s", 1, 5), flow("f", 3, 5)})) ==
          V{"flow 5: an end outside every slice of its thread"});
    CHECK(fabric::test::chrome_trace_problems(with({slice(1, 0.001, 2)})) ==
          V{"pid 1 tid 2 has no thread_name"});
}
