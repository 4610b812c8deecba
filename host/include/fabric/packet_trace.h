// Packet traces: a timeline of the packets a fabric moved, in the Chrome trace-event JSON format
// (what ui.perfetto.dev and chrome://tracing open), built from what the model saw happen, not from
// what the host expects.
//
//   fabric::PacketTrace trace(plan);                       // the routers' RouterLayouts
//   auto tap = fabric::attach_packet_trace(sim_device, trace);  // sim_packet_tap.h
//   ... bring up, run traffic, terminate ...
//   const fabric::PacketTimeline t = trace.timeline();
//   fabric::write_chrome_trace(file, t);
//
// Observations (from sim::PacketTap, or from a test) are classified as they come with each
// router's RouterLayout, so only the ones that move a packet are kept:
//   a NoC write of a header (>= 64 B) to the start of a router's sender slot: a push, by a worker
//     (any core that is not a router of the chip, e.g. a worker or a mux) or a forward by the
//     router whose receive slot it was read from;
//   an Ethernet data command landing at the start of a router's receive slot: the peer router's
//     send from its sender slot;
//   a router's store of -n to its receiver channel's RxSent stream: n packets taken, oldest first;
//   a router's NoC write read from one of its receive slots to anything but a sender slot: a
//     delivery (the first one per packet; a scatter's other chunks and a fused write's increment
//     are the same delivery); an atomic from a router: the delivery of the oldest AtomicInc packet
//     it holds for that target;
//   an Ethernet register write landing on a router's Completed[ch] stream: completions returned by
//     its peer; a router's NoC write outside its slots to another router's upstream_credit word or
//     to a worker: a credit returned.
// A packet is followed by the slots it occupies (a push into a sender slot, the send out of it
// into the peer's receive slot, the take, the forward into the next sender slot), so its identity
// is what the model did, and its header (seq, send type, route) is shown on every hop.
//
// Timeline: a process per chip, a thread per router ("take", "send", "forward", "deliver",
// "credit") and per pushing core ("send"); every event is a slice of one cycle (0.001 us at the
// 1 GHz core clock) at the cycle it happened (a send at the cycle its queue took it, with its
// landing cycle in args; a take at its stream update, or at the packet's first delivery or
// forward when that landed first), and a flow ("s"/"f", cat "packet") links each hop to the next:
// worker send -> send -> take -> forward -> send -> take -> deliver.
//
// Memory is bounded: at most `max_records` observations are kept; the first one past the cap ends
// the recording (cap_reached_at) and every later one is counted in left_out().
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "fabric/coord.h"
#include "fabric/fabric_plan.h"

namespace fabric {

// A NoC request that landed at its target (sim::noc::Landed in host terms).
struct TraceNocLanding {
    enum class Kind : uint8_t { Write, InlineWrite, Atomic };
    Kind kind = Kind::Write;
    CoreCoord src;
    uint64_t src_addr = 0;
    CoreCoord dst;
    uint64_t dst_addr = 0;
    uint32_t len = 0;
    const uint8_t* data = nullptr;  // a write's payload
    uint32_t value = 0;             // an inline write's or atomic's value
    uint64_t cycle = 0;
};

// An Ethernet command whose last frame landed in the receiving core (sim::eth::LandedCommand).
struct TraceEthLanding {
    bool is_data = true;  // else a remote register write
    uint32_t src = 0;
    uint32_t dest = 0;
    uint32_t size = 0;
    const uint8_t* data = nullptr;
    uint32_t reg_value = 0;
    uint64_t accepted_cycle = 0;
    uint64_t landed_cycle = 0;
};

enum class TraceEventKind : uint8_t { WorkerSend, Take, Send, Forward, Deliver, Credit };
std::string_view trace_event_name(TraceEventKind k);  // "send", "take", ...

// The header fields a hop shows (protocol/fabric.h PacketHeader).
struct TracePacketHeader {
    uint32_t seq = 0;
    uint32_t route = 0;
    uint16_t payload_bytes = 0;
    uint8_t send_type = 0;
    uint8_t ttl = 0;
};

struct TraceTrack {
    ChipId chip = 0;
    CoreCoord core;
    std::optional<size_t> router;  // index into the plan's routers; none: a pushing core
    std::string name;              // "router eth 8 (9-0) east", "worker 1-1"
};

struct TraceEvent {
    TraceEventKind kind = TraceEventKind::Take;
    uint32_t track = 0;
    uint64_t cycle = 0;
    uint64_t packet = 0;   // 1.. (0: a credit, no packet)
    uint32_t channel = 0;  // send: sender channel; take/deliver/forward: receiver channel
    uint64_t landed = 0;   // send: the cycle it landed in the peer
    uint32_t count = 0;    // credit: completions or the credit word's value
    std::string to;        // forward/deliver/credit: where to ("chip 0 core 1-1 0x20000")
};

struct TraceFlow {
    uint64_t id = 0;
    size_t from = 0;  // event indices
    size_t to = 0;
};

// Per router, the events of each kind (the router's counters: take = received, send = sent,
// forward = forwarded, deliver = delivered).
struct TraceRouterCounts {
    uint64_t takes = 0;
    uint64_t sends = 0;
    uint64_t forwards = 0;
    uint64_t deliveries = 0;
    uint64_t credits = 0;
};

struct PacketTimeline {
    std::vector<TraceTrack> tracks;
    std::vector<TraceEvent> events;  // in cycle order
    std::vector<TraceFlow> flows;
    std::vector<TracePacketHeader> packets;  // packet p is packets[p - 1]
    std::vector<TraceRouterCounts> routers;  // by plan router index
    uint64_t records = 0;
    uint64_t max_records = 0;
    uint64_t left_out = 0;
    std::optional<uint64_t> cap_reached_at;
};

class PacketTrace {
  public:
    static constexpr uint64_t kDefaultMaxRecords = 1'000'000;

    // Error(BadInput) for max_records 0.
    explicit PacketTrace(const FabricPlan& plan, uint64_t max_records = kDefaultMaxRecords);
    ~PacketTrace();
    PacketTrace(const PacketTrace&) = delete;
    PacketTrace& operator=(const PacketTrace&) = delete;

    // Observations on `chip`; calls for different chips may come from different threads, one
    // chip's come in order.
    void noc_landed(ChipId chip, const TraceNocLanding& l);
    void eth_landed(ChipId chip, uint32_t channel, const TraceEthLanding& l);
    void stream_store(ChipId chip, CoreCoord core, uint32_t addr, uint32_t value, uint64_t cycle);

    uint64_t records() const;
    uint64_t left_out() const { return left_out_.load(); }
    // The timeline of everything kept (call while no observation comes).
    PacketTimeline timeline() const;

    struct Record;  // one kept observation (packet_trace.cpp)

  private:
    struct Router;
    const Router* router_at(ChipId chip, CoreCoord core) const;
    uint16_t index_of(const Router& r) const;
    bool push(ChipId chip, const TraceNocLanding& l, const Router& dst, const Router* src);
    void router_request(ChipId chip, const TraceNocLanding& l, const Router& src,
                        const Router* dst);
    void keep(ChipId chip, const Record& r);

    hal::Arch arch_;
    std::vector<Router> routers_;
    std::vector<std::vector<size_t>> routers_of_chip_;  // chip -> router indices
    std::vector<std::vector<Record>> kept_;             // per chip
    uint64_t max_records_;
    std::atomic<uint64_t> count_{0};
    std::atomic<uint64_t> left_out_{0};
    std::atomic<uint64_t> cap_cycle_{UINT64_MAX};
};

// The timeline as a Chrome trace-event JSON document: {"traceEvents": [...], "displayTimeUnit":
// "ns", "otherData": {...}}; ts in microseconds (cycle / 1000, written exactly).
void write_chrome_trace(std::ostream& out, const PacketTimeline& t);

// "packet trace: the cap of N records was reached at cycle C; M later observations were left out"
// (nullopt when nothing was left out).
std::optional<std::string> trace_cap_message(const PacketTimeline& t);

}  // namespace fabric
