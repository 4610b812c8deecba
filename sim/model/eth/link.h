// One Ethernet link between two ERISC cores, cycle-counted, in TT-link mode: each side's TX queues
// (TxQueues) send frames that land in the other side's memory (its L1, or its registers for a
// remote register write).
//
// Model (README.md has the derivations):
//   - each direction is one serial wire of `link_mbps` at the core clock `clock_mhz`
//     (Wormhole: 100 Gb/s at 1 GHz = 12.5 B/cycle); time is kept in exact integer ticks;
//   - a command is split into frames of at most MAX_PKT_SIZE_BYTES payload, rounded down to whole
//     16-B words (1500 -> 1488); each frame costs
//     payload + frame_overhead_bytes on the wire (default 50 B, seeds/002);
//   - the queues of a side share the wire, one frame at a time, round robin between the queues
//     that have a frame ready; within a queue frames go strictly in order;
//   - a frame lands in the peer `latency_cycles` after its last byte left (default 500, seeds/002);
//   - TT-link Go-Back-N per queue: 8-bit sequence numbers, so at most `window_frames` (255)
//     unacknowledged frames; the receiver acknowledges in-order frames, discards out-of-sequence
//     ones and answers the first one after a gap with a NAK; the sender goes back to the NAKed
//     frame when the NAK arrives (one latency later), or to its oldest unacknowledged frame when
//     that frame has waited `retransmit_timeout_cycles` for an acknowledgement. ACK/NAK travel
//     back with the link latency and take no wire bandwidth (they ride in the reverse
//     direction's sequence-update fields);
//   - faults: link down/up, extra delay per direction, dropped frames (by index or at a seeded
//     rate). Nothing above layer 2 is ever lost: every byte lands, in order, exactly once.
//
// Time: cycle() counts completed step() calls. A command whose CMD write happens at cycle c
// (between steps) may start on the wire at c; an event at tick t is processed by step floor(t / U)
// (U = ticks_per_cycle()) and is visible once cycle() == floor(t / U) + 1.
//
// Sides (parallel simulation): every event belongs to the side whose core it touches. Side A owns
// its wire starts, its retransmit timeouts, the ACK/NAKs coming back to it and the arrival of B's
// frames (into A's memory); side B the mirror image. What one side does at cycle t reaches the
// other no earlier than t + latency_cycles, so the sides may be stepped on their own (step(kSideA)
// on one thread, step(kSideB) on another) up to latency_cycles apart. In split mode the frames,
// ACK/NAKs and refused-destination errors a side produces for the other wait in an outbox until
// exchange(), which the owner calls while neither side runs. Stepping both sides together
// (step(), kBothSides) is the unsplit link and gives the same results.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <vector>

#include "endpoint.h"
#include "eth_types.h"
#include "hal/arch_map.h"
#include "txq.h"

namespace sim::eth {

struct LinkConfig {
    uint32_t link_mbps = hal::eth::kLinkMbps;  // raw rate per direction, Mb/s (100 Gb/s)
    uint32_t clock_mhz = 1000;                 // core clock the model is stepped at (WH aiclk)
    uint32_t latency_cycles = 500;  // last byte out -> frame lands in the peer (seeds/002)
    // On-wire bytes per frame besides the payload (hal::eth::kFrameOverheadBytes: seeds/002 "50+
    // B"; FEC bytes unspecified, not counted).
    uint32_t frame_overhead_bytes = hal::eth::kFrameOverheadBytes;
    uint32_t window_frames = (1u << hal::eth::kTtLinkSeqBits) - 1;  // Go-Back-N window
    // The oldest unacknowledged frame is resent this long after its last (re)transmission or the
    // last acknowledgement progress. Must exceed the round trip (2 x latency + one frame time).
    uint32_t retransmit_timeout_cycles = 2000;
    // Keep a Completion per command (long runs may turn this off or drain take_completions()).
    bool record_completions = true;

    // Defaults for an arch: its core clock; the Wormhole link rate (the Blackhole rate is not
    // among the facts the project has verified).
    static LinkConfig for_arch(const hal::ArchMap& arch);
};

// A command whose last frame has landed in the receiving side's memory, for an observer (e.g. a
// packet trace): direction `dir` (Dir A->B or B->A), a data command's whole captured bytes (the
// sender's L1 at acceptance) or a register write's value. Valid only during the call.
struct LandedCommand {
    Dir dir = Dir::AtoB;
    CommandKind kind = CommandKind::Data;
    uint32_t src = 0;   // data: the sender's L1 address
    uint32_t dest = 0;  // the receiver's address (L1, or the register)
    const uint8_t* data = nullptr;
    uint32_t size = 0;  // data: bytes
    uint32_t reg_value = 0;
    uint64_t accepted_cycle = 0;  // the sender's queue took the command
    uint64_t landed_cycle = 0;    // visible in the receiver from this cycle (Completion::cycle)
};
class LandingObserver {
  public:
    virtual ~LandingObserver() = default;
    // Called by the side that receives (its thread, in parallel simulation).
    virtual void landed(const LandedCommand& command) = 0;
};

// One side of the link: the TX queues of a core and the endpoint its frames land in (the PEER
// core's L1 and registers).
struct LinkSide {
    TxQueues& txq;
    Endpoint& peer;
};

struct LinkStats {
    uint64_t frames_sent = 0;           // frames put on the wire, retransmissions included
    uint64_t frames_retransmitted = 0;  // of which resends (Go-Back-N)
    uint64_t frames_dropped = 0;        // corrupted on the wire by a fault (sent, never accepted)
    uint64_t frames_discarded = 0;      // arrived intact but out of sequence or duplicate
    uint64_t frames_delivered = 0;      // accepted in order and written into the peer
    uint64_t bytes_delivered = 0;       // payload bytes of data frames written into the peer
    uint64_t reg_writes_delivered = 0;  // remote register writes performed on the peer
    uint64_t commands_completed = 0;
    uint64_t wire_bytes = 0;   // bytes serialized, overhead and resends included
    uint64_t busy_cycles = 0;  // cycles in which the wire serialized anything
    Tick busy_ticks = 0;       // exact wire occupancy
    uint64_t naks = 0;         // NAKs sent by the receiver
    uint64_t timeouts = 0;     // sender retransmit timeouts that went back
    uint64_t go_backs = 0;     // go-backs performed (NAK or timeout)
};

class Link {
  public:
    // Throws std::invalid_argument for a zero rate/clock, a window outside [1, 255], a TxQueues
    // already on another link, or the same TxQueues on both sides.
    Link(const LinkConfig& cfg, LinkSide a, LinkSide b);
    ~Link();
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;

    // Sides to step (a mask): A, B, or both (see "Sides" above).
    static constexpr uint8_t kSideA = 1;
    static constexpr uint8_t kSideB = 2;
    static constexpr uint8_t kBothSides = kSideA | kSideB;

    // Advance one core cycle / n cycles (run() skips idle stretches; same result as n step()s).
    // Stepping both sides needs them at the same cycle (std::logic_error otherwise).
    void step(uint8_t sides = kBothSides);
    void run(uint64_t cycles) { run(kBothSides, cycles); }
    void run(uint8_t sides, uint64_t cycles);
    // Side A's cycle: the link's cycle whenever both sides are stepped together.
    uint64_t cycle() const { return cycle_[0]; }
    uint64_t cycle(uint8_t sides) const;
    // The first cycle whose step() has something to do (>= cycle()), or UINT64_MAX when nothing is
    // scheduled. A caller may skip to it; register writes to a TxQueues can only make it earlier.
    uint64_t next_event_cycle() const { return next_event_cycle(kBothSides); }
    uint64_t next_event_cycle(uint8_t sides) const;

    // Split mode (see "Sides"): what crosses from one side to the other is held until exchange().
    void set_split(bool split) { split_ = split; }
    bool split() const { return split_; }
    // Hand the held frames, ACK/NAKs and errors to the other side (neither side may be running).
    // The sides that received something (a mask; 0 for none).
    uint8_t exchange();

    // Nothing left to do: no frame waiting, on the wire, unacknowledged, and no ACK/NAK pending.
    bool idle() const;
    // Link::set_up and the other fault hooks act at cycle(): call them with both sides there.

    const LinkConfig& config() const { return cfg_; }
    // Exact timing units: one cycle is ticks_per_cycle() ticks, one wire byte ticks_per_byte().
    Tick ticks_per_cycle() const { return ticks_per_cycle_; }
    Tick ticks_per_byte() const { return ticks_per_byte_; }

    // ---- faults -------------------------------------------------------------------------------
    // Link down: no new frame starts in either direction (frames already on the wire still land);
    // acknowledgements wait; retransmit timers are frozen. Up: everything resumes from this
    // cycle, each timer from the time it had run when the link went down. Nothing is lost.
    void set_up(bool up);
    bool up() const { return up_; }
    // Called after set_up changed the state (not for a call that changes nothing), e.g. so the
    // owner can update the link status word the firmware on both ends reads.
    void on_state_change(std::function<void(bool up)> hook) { state_hook_ = std::move(hook); }
    // Extra propagation delay for frames (and the ACK/NAKs going the same way) started from now.
    void set_extra_delay(Dir d, uint32_t cycles);
    void set_extra_delay(uint32_t cycles);  // both directions
    // Corrupt the n-th frame put on the wire in direction d (0-based, resends counted).
    void drop_frame(Dir d, uint64_t n);
    // Corrupt each frame in direction d with probability per_million / 1e6 (seeded, reproducible).
    void set_drop_rate(Dir d, uint32_t per_million, uint64_t seed);

    // ---- observation --------------------------------------------------------------------------
    // Every command that lands from now on goes to `observer` (nullptr: none, the default; one
    // pointer test per landed frame when off). The observer must outlive the link or be reset.
    void observe_landings(LandingObserver* observer) { observer_ = observer; }
    const LinkStats& stats(Dir d) const { return dirs_[dir_index(d)].stats; }
    // Commands whose last frame has landed, in landing order (kept unless
    // LinkConfig::record_completions is false; take_completions() hands them over and clears).
    const std::vector<Completion>& completions(Dir d) const {
        return dirs_[dir_index(d)].completions;
    }
    std::vector<Completion> take_completions(Dir d);
    // Frames the receiver of queue q in direction d expects next (its RX sequence number).
    uint64_t rx_expected_seq(Dir d, uint32_t q) const {
        return dirs_[dir_index(d)].rxq.at(q).expected;
    }

  private:
    struct InFlight {
        Tick arrival = 0;
        uint32_t queue = 0;
        uint64_t epoch = 0;
        bool dropped = false;
        TxQueues::Frame frame;
    };
    struct Ctrl {  // receiver of a direction -> its sender
        Tick arrival = 0;
        uint32_t queue = 0;
        bool nak = false;
        uint64_t seq = 0;    // ACK: next expected (all below received); NAK: the missing frame
        uint64_t epoch = 0;  // NAK: epoch of the out-of-sequence frame that revealed the gap
    };
    struct RxQueue {
        uint64_t expected = 0;
        bool nak_outstanding = false;
    };
    struct Direction {
        TxQueues* tx = nullptr;
        Endpoint* rx_mem = nullptr;
        Tick wire_free = 0;
        Tick last_arrival = 0;
        Tick last_ctrl_arrival = 0;
        uint32_t rr = 0;  // next queue to serve first
        std::deque<InFlight> inflight;
        std::deque<Ctrl> ctrl;
        std::vector<Ctrl> ctrl_held;  // generated while the link was down
        std::vector<RxQueue> rxq;
        uint32_t extra_delay = 0;
        std::set<uint64_t> drop_set;
        uint32_t drop_ppm = 0;
        uint64_t rng = 0;
        uint64_t tx_index = 0;
        uint64_t next_uncounted_cycle = 0;
        LinkStats stats;
        std::vector<Completion> completions;
        // Split mode: produced in this window, for the other side (see exchange()).
        std::vector<InFlight> inflight_out;  // by the sender, for the receiver
        std::vector<Ctrl> ctrl_out;          // by the receiver, for the sender
        std::vector<TxqError> errors_out;    // by the receiver, for the sender's TxQueues
    };

    enum class EventKind : uint8_t { Ctrl = 0, Arrival = 1, Timeout = 2, WireStart = 3, None = 4 };
    struct Event {
        Tick time = 0;
        EventKind kind = EventKind::None;
        uint32_t dir = 0;
        uint32_t queue = 0;
    };

    // The side whose core an event touches (see "Sides").
    static uint32_t owner(EventKind k, uint32_t dir);
    static bool includes(uint8_t sides, uint32_t side);  // side 0 = A, 1 = B
    Event next_event(Tick limit, uint8_t sides) const;
    // The events of direction d's sender (side d): incoming ACK/NAKs, timeouts, the next wire
    // start, each passed to consider(tick, kind, dir, queue).
    template <typename Consider>
    void sender_events(uint32_t d, Consider& consider) const;
    void begin_cycle(uint32_t side);
    void end_cycle(uint32_t side);
    bool frame_eligible(const TxQueues::Queue& q) const;
    Tick frame_ready(const TxQueues::Queue& q) const;
    void process_ctrl(uint32_t d);
    void process_arrival(uint32_t d);
    void report_landing(uint32_t d, const TxQueues::Frame& f, uint64_t landed_cycle) const;
    void process_timeout(uint32_t d, uint32_t q);
    void start_frame(uint32_t d, Tick at);
    void send_ctrl(uint32_t d, Ctrl c);
    void launch_ctrl(uint32_t d, Ctrl c, Tick at);
    void go_back(TxQueues::Queue& q, Tick at);
    // Coming up: release the acknowledgements held while down and let the retransmit timers run on.
    void resume();
    bool draw_drop(Direction& dir);

    LinkConfig cfg_;
    Tick ticks_per_cycle_ = 1;
    Tick ticks_per_byte_ = 1;
    Direction dirs_[2];
    uint64_t cycle_[2] = {0, 0};  // per side
    Tick t_cur_[2] = {0, 0};      // per side: the tick of its event being processed
    bool split_ = false;
    bool up_ = true;
    Tick down_since_ = 0;  // when the link last went down (timers are frozen from then)
    std::function<void(bool)> state_hook_;
    LandingObserver* observer_ = nullptr;
};

}  // namespace sim::eth
