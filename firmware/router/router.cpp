// The fabric router (protocol/fabric.h is the contract; README.md beside this file is the
// design). One instance per Ethernet link core. Built twice: fabric_router.elf for lines and rings
// (1D), fabric_router_2d.elf (FABRIC_ROUTER_2D) for meshes and tori, where a packet may be
// forwarded to any of the chip's other routers of its plane and the route is a hop nibble each.
// The image's topology is a policy type (topology.h: LineRing or Mesh); the checks and decisions
// are in the headers beside this file (README.md "Where things are"), this file moves the data.
// Read run() (start_up(), then main_loop()) at the bottom first.
//
//   start-up   read + check RouterConfig, zero the streams and the router's L1 words, handshake
//              with the peer (LinkParams must agree), wait for the host's ready word
//   main loop  non-blocking steps, each iteration: every sender channel (completions, then
//              Ethernet sends; rx_sent announced for up to kAnnounceBatch packets at once), every
//              receiver channel (take up to kTakeBatch packets: deliver and/or forward; then
//              in-order completions, one +n per run), producer credits, graceful-drain
//              bookkeeping; every kPollEvery iterations the heartbeat, the termination word and
//              the ch0 worker connection (L1 words, too slow to touch on every pass)
//   exit       Terminated (immediate or graceful, `undrained` says what was left) or an error
//              status with `stage`, `stuck_at` and `detail`
//
// Nothing waits without a deadline: the main loop only polls (the sender step's waits for TXQ0,
// after an announcement or for a long send's last frame, are at most kAnnounceSpin / kFeedSpin
// reads), and the few inner waits (NoC flush and the last rx_sent announcement at exit) are
// bounded by the config's progress_timeout_us and record where they gave up.
#include <stddef.h>
#include <stdint.h>

#include "classify.h"
#include "config_check.h"
#include "control.h"
#include "fabric/event_log.h"
#include "fabric/l1_words.h"
#include "fabric/status_words.h"
#include "fabric/worker_port.h"
#include "hal/arch.h"
#include "hal/clock.h"
#include "hal/eth.h"
#include "hal/mmio.h"
#include "hal/noc.h"
#include "hal/status.h"
#include "hal/stream.h"
#include "hal/timeouts.h"
#include "hal/wait.h"
#include "handshake.h"
#include "header.h"
#include "link_watch.h"
#include "protocol/fabric.h"
#include "topology.h"

namespace {

using namespace fabric::router;
using fabric::ld;
using fabric::load_struct;
using fabric::st;
using fabric::store_struct;
using fabric::Words;

namespace pf = protocol::fabric;
using hal::Status;
using pf::RouterStatus;
using pf::RouterWait;
using Noc = hal::Noc<hal::kArch>;
using Eth = hal::Eth<hal::kArch>;
using Streams = hal::Streams<hal::kArch>;
constexpr const hal::ArchMap& kA = hal::kArch;

// The image's topology (topology.h): lines and rings, or meshes and tori.
#ifdef FABRIC_ROUTER_2D
using Topology = Mesh;
#else
using Topology = LineRing;
#endif
// Sender channels: 1D ch0 worker, ch1 VC0, ch2 VC1; 2D ch0 worker, ch1 + F VC0 and ch5 + F VC1
// from the router facing F (protocol/fabric.h). A VC1 channel sends into the peer's rx1.
constexpr uint32_t kSenders = Topology::kSenders;
// Other routers of the chip this one forwards into: 1D the downstream, 2D one per direction.
constexpr uint32_t kNeighbours = Topology::kNeighbours;
// The sender channels the main loop unrolls (constant stream IDs and state offsets for each); the
// others share one copy of the steps.
constexpr uint32_t kUnrolledSenders = Topology::kUnrolledSenders;

// The per-packet steps are flattened (the HAL calls inline, their checks of constant options
// fold away, no call saves and restores registers), except in the 2D image
// for Blackhole, which would not fit its 24 KiB application window: there each step is one
// function, called from the (unrolled) main loop. The sender step is inlined in both of the main
// loop's copies (kUnrolledSenders), which GCC would otherwise call.
#if defined(FABRIC_ROUTER_2D) && defined(FABRIC_ARCH_BLACKHOLE)
#define ROUTER_HOT [[gnu::noinline]]
#define ROUTER_HOT_INLINE [[gnu::noinline]]
constexpr bool kSmallImage = true;  // also leaves out optional refinements (completion_step)
#else
#define ROUTER_HOT [[gnu::flatten]]
#define ROUTER_HOT_INLINE [[gnu::flatten, gnu::always_inline]] inline
constexpr bool kSmallImage = false;
#endif
// The out-of-line steps that run at most at the polls (a neighbour's set-up, link health, stall
// timeouts, control, reroute) are ROUTER_COLD: compiled for size, which the Wormhole 2D image
// needs to fit its window. Only functions already out of line: marking a start-up stage that is
// inlined into main cold changes main's code and cost the data path 8 % and more
// (docs/PERFORMANCE.md). The largest that run least (a neighbour's set-up, a reroute order) are
// ROUTER_COLD_WINDOW: placed in the cold window (linker section .text_cold, hal ArchMap::
// router_cold: 2 KiB above the slots on Wormhole).
#define ROUTER_COLD [[gnu::noinline, gnu::cold]]
#define ROUTER_COLD_WINDOW [[gnu::noinline, gnu::cold, gnu::section(".text_cold")]]
// Control (pause, drain, resume: control_step, ~2 KiB) is in every image: the Blackhole routers
// have a 48 KiB window of their own (hal ArchMap::router_fw).
constexpr bool kControl = true;

// Per-channel slot state lives in fixed arrays: a config with more slots is refused.
constexpr uint32_t kMaxSlots = pf::kMaxRouterSlots;
// A packet taken from a receiver channel tags its NoC requests with the channel's next transaction
// ID, in turn: rx0 IDs 0..6 and rx1 7..13, or 0..13 for rx0 alone (a line). Packets that many takes
// apart share an ID, which only makes a flush check conservative. (IDs by slot index instead put
// two packets only 2 apart on one ID where 16 slots wrap, and the older one's completion then
// waited for the newer one's writes: a whole batch later, at 2 KiB.) ID 14 tags the staged
// credit/teardown writes so their staging words can be reused safely.
constexpr uint32_t kTridsPerRx = 7;
constexpr uint32_t kCreditTrid = pf::kNumReceiverChannels * kTridsPerRx;
// ... and 15 the forwards' Pushed +1: not the slot's ID, as only the data must land before the
// slot completes (the +1 follows it on the same NoC and VC anyway), so the request is the same
// every time (a fixed-word stream: one register write per forward).
constexpr uint32_t kPushedTrid = kCreditTrid + 1;
static_assert(kPushedTrid <= hal::noc::kMaxTransactionId);
// Counters are copied to the status block every this many iterations (and when the router goes
// idle, and at exit).
constexpr uint32_t kPublishEvery = pf::kRouterPublishEvery;
// ... and once this many iterations in a row were idle after any activity.
constexpr uint32_t kPublishIdle = 8;
// The heartbeat, the termination word and the ch0 connection block are L1 words (7-cycle loads,
// 5-cycle stores): looked at every this many iterations, not on every pass (an idle pass is a
// handful of register reads, so this is still every few hundred cycles).
constexpr uint32_t kPollEvery = pf::kRouterPollEvery;
// A busy router looks at its link's health every this many polls (an idle one at every poll).
constexpr uint32_t kLinkPollBusy = 8;
constexpr uint32_t kKeepAliveCycles =
    static_cast<uint32_t>(hal::us_to_cycles(kA, pf::kRouterKeepAliveUs));
constexpr uint32_t kPeerSilentCycles =
    static_cast<uint32_t>(hal::us_to_cycles(kA, pf::kRouterPeerSilentUs));
// Data packets sent into one peer receiver channel before their +n on its rx_sent stream. One
// announcement per packet would cost its own Ethernet frame and leave the wire idle while the
// loop comes round to queue the next packet behind it; more than a few delays the receiver.
// (4 was best of 2..8 at 2 KiB: docs/PERFORMANCE.md.)
constexpr uint32_t kAnnounceBatch = 4;
// Polls of TXQ0 (a few cycles each) a sender step makes at most after an announcement, with the
// next packet ready, for the queue to free again: longer than the largest frame takes.
constexpr uint32_t kAnnounceSpin = 48;
// TXQ0 commands (sends, announcements) one sender step issues at most while the queue takes them.
constexpr uint32_t kSendBurst = 4;
// Packets one receiver channel takes per pass (one stream update for all of them).
constexpr uint32_t kTakeBatch = 4;

// The fixed part of the layout (everything before the slots) does not depend on the config.
constexpr pf::RouterLayout kFixed = pf::router_layout(kA, pf::RouterConfig{});
static_assert(kFixed.upstream_credit[1] % 16 == 0 && kFixed.upstream_credit[2] % 16 == 0);
static_assert(kFixed.scratch % 16 == 0);
constexpr uint32_t kControlWord = pf::router_control(kFixed);
constexpr uint32_t kControlReport = pf::router_control_report(kFixed);
// A packet (header + payload, payload_bytes <= max_payload_bytes by check_config) is one NoC
// burst, as a stream request must be (the forward and delivery writes).
static_assert(sizeof(pf::PacketHeader) + pf::max_payload_bytes(kA) <= kA.noc_max_burst_bytes);

// Router-private scratch (RouterLayout::scratch, four 16-B lines). A staged NoC write needs its
// source congruent with its destination mod 16, so a staging line holds its word at the
// destination's offset within the line. Line c (0..2) stages the credit of sender channel c
// (ch1/ch2 credits go to 16-B aligned words: offset 0), line 3 the worker's teardown word; the
// non-posted atomics' old values land in line 1 at +8, which no staged write reads.
constexpr uint32_t kScratchCreditLine = 0;  // + 16 * channel
constexpr uint32_t kScratchTeardownLine = 48;
constexpr uint32_t kScratchAtomicReturn = 16 + 8;
// 2D has more channels than lines: ch3..ch8 share ch2's. Safe, as a staged write waits until every
// earlier one has been read out (fabric::RemoteWords::ready); the lines only keep words apart.
constexpr uint32_t credit_line(uint32_t c) {
    return c < 3 ? c : 2;
}

constexpr uint32_t kIncOne = Streams::encode_delta(1).value;
static_assert(Streams::encode_delta(1).ok());

// Stream IDs by channel, computed rather than read from a table (a constant table lives in L1:
// a 7-cycle load on every use in the loop). The highest ID is checked against the arch here.
constexpr hal::StreamId kPeerDrained = Streams::id<pf::kStreamPeerDrained>();
constexpr hal::StreamId kPeerAlive = Streams::id<pf::kStreamPeerAlive>();
constexpr hal::StreamId kPeerRejoin = Streams::id<pf::kStreamPeerRejoin>();
static_assert((kPollEvery & (kPollEvery - 1)) == 0 && (kLinkPollBusy & (kLinkPollBusy - 1)) == 0);
static_assert(pf::kStreamPeerAlive > pf::kStreamPeerDrained &&
              pf::kStreamPeerDrained + 1 >= pf::kStreamPushed0 + pf::kMaxSenderChannels);
constexpr hal::StreamId stream_id(uint32_t n) {
    return Streams::make_id(n).value;  // n <= kStreamPeerAlive (above), so always ok
}
constexpr hal::StreamId rx_sent_id(uint32_t r) {
    return stream_id(pf::kStreamRxSent0 + r);
}
constexpr hal::StreamId completed_id(uint32_t c) {
    return stream_id(pf::kStreamCompleted0 + c);
}
constexpr hal::StreamId pushed_id(uint32_t c) {
    return stream_id(pf::kStreamPushed0 + c);
}

using pf::BadPacket;
using pf::ConfigCheck;

// Stream deltas here are at most a channel's slot count, always inside the counter's range.
void stream_add(hal::StreamId s, int32_t delta) {
    (void)Streams::add(s, delta);
}

constexpr uint32_t align16(uint32_t v) {
    return (v + 15) & ~15u;
}

// The config as read at start-up and the layout computed from it, in L1 (.bss): the Router itself,
// read on every iteration, lives on the stack in the local data RAM (2-cycle loads instead of
// L1's 7; 2,560 B on Wormhole), with the per-slot words every packet touches (Receiver::src) and
// copies of the few config fields a packet needs (payload_bytes_, slot_bytes_, ...).
pf::RouterConfig g_config;
pf::RouterLayout g_layout;
pf::MeshRouterConfig g_mesh;  // 2D only

// The next slot of a ring of `slots` slots of `bytes` from `base`: index and address, no modulo.
struct SlotCursor {
    uint32_t idx = 0;
    uint32_t addr = 0;
    void advance(uint32_t base, uint32_t slots, uint32_t bytes) {
        if (++idx == slots) {
            idx = 0;
            addr = base;
        } else {
            addr += bytes;
        }
    }
};

// The same by address only, for rings whose index nobody needs (the sender channels', the peer's
// receive areas): one add and compare a slot.
struct RingCursor {
    uint32_t addr = 0;
    void advance(uint32_t base, uint32_t end, uint32_t bytes) {
        addr += bytes;
        if (addr == end) addr = base;
    }
};

// Where a take batch is in a receiver channel, in locals (registers) for the batch rather than
// stack words loaded and stored again for every packet: the next slot (index, address), the next
// transaction ID and the packets taken.
struct TakeState {
    SlotCursor at;
    uint32_t id;
    uint32_t taken;
};

// A byte per slot, in a type of its own: a store through uint8_t (a character type) may alias any
// object, so every field of the router would be loaded again after it.
struct SlotBytes {
    enum class Byte : uint8_t {};
    alignas(4) Byte v[kMaxSlots] = {};
    uint32_t operator[](uint32_t i) const { return static_cast<uint32_t>(v[i]); }
    void set(uint32_t i, uint32_t x) { v[i] = static_cast<Byte>(x); }
    // Every slot's byte to x, a word at a time (start-up: 8 stores, not 32).
    void fill(uint32_t x) {
        static_assert(kMaxSlots % 4 == 0);
        const uint32_t word = (x & 0xFF) * 0x01010101u;
        for (uint32_t i = 0; i < kMaxSlots; i += 4) __builtin_memcpy(&v[i], &word, 4);
    }
};

// Receiver::blocked: the packet must be looked at again as a whole (it waits on several ports),
// or it is to be delivered here and waits for the delivery buffer (looked at again once free).
constexpr uint32_t kRetake = 0xFF;
constexpr uint32_t kWaitsNoc = 0xFE;
static_assert(kSenders < kWaitsNoc);

// NoC command buffers: ordinary requests (credits, the start-up read, the rare send types) share
// buffer 0; the hot paths use prepared requests, each on a buffer of its own so their constant
// registers stay programmed: 1 the forward data, 2 the forward's Pushed +1 (ch1 and ch2
// alternate on a ring: reprogrammed then), 3 the deliveries (writes, and the atomics after them).
constexpr uint32_t kFwdDataBuf = 1;
constexpr uint32_t kFwdPushedBuf = 2;
constexpr uint32_t kDeliverBuf = 3;
// Deliveries go to cores outside the fabric, one of which may stop accepting: on their own buffer
// and VC (a VC's requests leave in launch order), what waits for it holds nothing else, and the
// router looks at the buffer before each delivery rather than wait for it (delivery_ready).
constexpr uint32_t kDeliverVc = 0;
static_assert(kDeliverVc != hal::noc::kDefaultUnicastVc);
// A busy delivery buffer frees within this (a burst leaves in a few hundred cycles) unless its
// destination does not accept: then the packet waits in its slot and the loop goes on.
constexpr uint32_t kDeliveryWaitUs = 2;
// Feeding TXQ0 with packets of kFeedFrames or more frames (1D): the queue frees when a command's
// last frame starts, and the wire idles unless the next command comes within that frame's time
// (~100 cycles at 4 KiB), while a main-loop pass under load can take longer. So after such a send
// the sender step estimates when the queue frees (hal::eth: the link rate, frames of at most
// 1488 B plus 50 B of headers) and, with the next packet ready, waits for it (bounded) from
// kFeedWindow cycles before until kFeedLate after (the figures, and the windows tried, are in
// docs/PERFORMANCE.md). Not at 2 KiB (two frames): the receiving router is the limit there, and
// the wait costs more than it gains. Not in 2D: nine inlined copies would not fit its code window.
constexpr bool kFeedTxq = Topology::kFeedTxq;
constexpr uint32_t kCreditUnroll = Topology::kCreditUnroll;
constexpr uint32_t kFrameBytes = hal::eth::kMaxFramePayload;
constexpr uint32_t kFeedFrames = 3;
constexpr uint32_t wire_cycles(uint32_t frame_bytes) {
    return (frame_bytes + hal::eth::kFrameOverheadBytes) * kA.aiclk_mhz /
           (hal::eth::kLinkMbps / 8);  // bytes/us
}
static_assert(wire_cycles(kFrameBytes) == 123 || kA.aiclk_mhz != 1000);
constexpr uint32_t kFeedWindow = 96;
constexpr uint32_t kFeedLate = 32;  // the estimate's error: register writes on the queue, rounding
constexpr uint32_t kFeedSpin = 48;  // polls (a few cycles each): longer than the window

// A member only some images have (no space in the others).
template <bool, typename T>
struct Only {
    T v{};
    T& get() { return v; }
};
template <typename T>
struct Only<false, T> {
    T& get();  // never defined: named only under `if constexpr` of the same condition
};
// Wormhole 1D: each credit target's inline write is prepared (on kFwdPushedBuf, whose other
// handles are inline writes too: a router forwarding one way and crediting the other reprograms
// it only then), so a credit is the value and the command (~15 cycles, ~65 as a whole inline
// write). Not on Blackhole (staged writes) nor in 2D (nine targets' handles do not fit its stack).
constexpr bool kPreparedCredits =
    Topology::kPrepareCredits && !fabric::RemoteWords<kCreditTrid>::kStaged;
// The prepared request streams (hal/noc.h NocStreamShape): a forward's header + payload, its +1
// on the downstream's Pushed stream (value and transaction ID fixed), a prepared credit, and the
// deliveries (any core; their buffer also takes their atomics, so its constants are checked per
// request; the forward data of a single-neighbour router is alone on its buffer).
using ForwardData =
    hal::NocStream<hal::NocStreamShape{.cmd_buf = kFwdDataBuf, .owns_buffer = kNeighbours == 1}>;
using ForwardPushed =
    hal::NocStream<hal::NocStreamShape{.cmd_buf = kFwdPushedBuf, .word = true, .fixed_word = true}>;
using CreditWrite =
    hal::NocStream<hal::NocStreamShape{.cmd_buf = kFwdPushedBuf, .word = true, .posted = true}>;
using Delivery = hal::NocStream<hal::NocStreamShape{
    .cmd_buf = kDeliverBuf, .any_core = true, .bounded_wait = true}>;
constexpr hal::NocConfig kNocConfig{
    .cmd_bufs = {.write = 0, .read = 0, .write_reg = 0, .atomic = 0},
    .atomic_return_l1_addr = kFixed.scratch + kScratchAtomicReturn,
    .prepared_bufs = 1u << kFwdDataBuf | 1u << kFwdPushedBuf | 1u << kDeliverBuf};

// What a start-up stage returns to go on; a stage that ends the router returns its exit code
// (>= 0: the low byte of the final status).
constexpr int kGoOn = -1;

class Router {
  public:
    int run();

  private:
    // ---- state ----
    struct PeerRx {  // a receiver channel of the peer, as our senders see it
        uint32_t base = 0;
        uint32_t end = 0;  // base + slots * slot_bytes_
        uint32_t slots = 0;
        RingCursor next;            // where the next packet lands
        uint32_t room = 0;          // slots - (sent and not completed)
        uint32_t unannounced = 0;   // sent, its +1 on the peer's rx_sent stream not yet queued
        uint32_t announce_reg = 0;  // that stream's update register (Streams::update_reg_addr)
    };
    struct Sender {  // one of our sender channels
        uint32_t base = 0;
        uint32_t end = 0;        // base + slots * slot_bytes_
        uint32_t slots = 0;      // 0 = unused
        PeerRx* peer = nullptr;  // the peer receiver channel it sends into
        uint32_t sent = 0;       // free-running
        uint32_t completed = 0;  // free-running; also the producer's "freed"
        RingCursor next;         // the slot of packet `sent`
    };
    struct Receiver {  // one of our receiver channels
        uint32_t base = 0;
        uint32_t slots = 0;
        uint32_t taken = 0;         // packets taken (free-running)
        uint32_t done = 0;          // completions sent
        SlotCursor take;            // slot of packet `taken`
        uint32_t complete_idx = 0;  // slot of packet `done`
        uint32_t armed = 0;         // bit per slot: its header's atomic waits for the slot's writes
        // The next packet is a forward that found its port full: 0 no, kRetake look at the whole
        // packet again (a 2D multicast waits on several ports), kWaitsNoc the same once the
        // delivery buffer is free, else the port it waits on.
        uint32_t blocked = 0;
        uint32_t next_id = 0;   // the transaction ID of the next packet taken
        uint32_t first_id = 0;  // its IDs: first_id .. end_id - 1, in turn
        uint32_t end_id = 0;
        SlotBytes src;   // src_channel per slot; 0xFF: no completion to send
        SlotBytes trid;  // the transaction ID of the packet taken into each slot
        // The next packet's ID, recorded for its slot (the completion walk checks it).
        uint32_t take_id(uint32_t idx) {
            const uint32_t id = next_id;
            trid.set(idx, id);
            next_id = id + 1 == end_id ? first_id : id + 1;
            return id;
        }
        TakeState take_state() const { return {take, next_id, taken}; }
        void set_take_state(const TakeState& t) {
            take = t.at;
            next_id = t.id;
            taken = t.taken;
        }
    };
    // A sender channel of another router on this chip that this one forwards into. Port p's
    // freed count comes back in our upstream_credit[p]. 1D: port 1 = the downstream's ch1 (from
    // rx0), port 2 its ch2 (rx1). 2D: port 1 + F / 5 + F = ch(1 + our dir) / ch(5 + our dir) of
    // the router facing F (VC0 / VC1).
    struct Port {
        uint32_t base = 0;
        uint32_t slots = 0;           // 0: no such port (a forward there is a bad packet)
        uint32_t pushed = 0;          // packets written into it
        uint32_t credit = 0;          // its freed count as last read (L1 word)
        uint32_t end = 0;             // base + slots * slot_bytes_
        RingCursor next;              // slot of packet `pushed`
        ForwardData* data = nullptr;  // the forward's header + payload: its router's fwd_data_
        ForwardPushed pushed_inc{};   // +1 on its Pushed stream
    };
    // Where our sender channel c's freed count goes (c >= 1: the router that feeds it).
    struct CreditTarget {
        bool present = false;
        fabric::NocWord word{};
        [[no_unique_address]] Only<kPreparedCredits, CreditWrite>
            write;  // to `word` (ch0: the connected worker's)
    };

    // ---- start-up (each stage returns kGoOn, or the router's exit code) ----
    int start_up();
    int check_config_words();
    int init_channels();
    int handshake();
    int wait_ready();
    int connect_ports();
    ConfigCheck setup_ports();
    ConfigCheck setup_neighbour(uint32_t n, const Neighbour& nb);

    // ---- the main loop and its steps ----
    int main_loop();
    Status sender_step(uint32_t c, uint32_t pushed);
    Status sender_completions(uint32_t c, uint32_t n);
    Status announce(uint32_t rx);
    void sent_frames(uint32_t size);
    bool txq_frees_soon();
    Status receiver_step(uint32_t r, uint32_t landed);
    Status take(uint32_t r, Noc::Batch& batch, TakeState& t);
    Status take_general_from(uint32_t r, TakeState& t);
    Status take_general(uint32_t r);
    Status forward(uint32_t p, uint32_t slot, uint32_t bytes, uint32_t id, Noc::Batch& batch);
    bool port_full(uint32_t p);
    bool delivery_ready();
    bool waits_for(uint32_t p, const Receiver& rx);
    BadPacket stalled_drop();
    void report_drop(uint32_t r, BadPacket why, uint32_t slot);
    bool send_completions(uint32_t src, uint32_t n);
    void complete(Receiver& rx, uint32_t n);
    // The completion path: completion_step<R>() (inline: a run of flushed slots goes back as one
    // +n), its second stage completion_walk<R>() for armed atomics and at termination.
    template <uint32_t R>
    Status completion_step();
    template <uint32_t R>
    Status completion_walk();
    Status completion_walk(uint32_t r);
    template <uint32_t R>
    Status walk(uint32_t any_r);
    Status issue_armed(uint32_t r, uint32_t idx, uint32_t id);
    // What deliver() left to do besides its requests: an atomic that waits for the slot's writes
    // (Armed), or, a scatter's later chunks not issued (its destination stopped accepting), the
    // rest of the packet (CutShort: dropped, reported NotAccepted).
    enum class Issued : uint8_t { All, Armed, CutShort };
    Status deliver(const pf::PacketHeader& h, uint32_t slot, uint32_t trid, Issued& issued);
    Status deliver_other(const pf::PacketHeader& h, uint32_t slot, uint32_t trid, Issued& issued);
    Status credit_step();
    Status connection_step();
    Status prepare_credit(uint32_t c, const fabric::NocWord& to);
    // Someone takes sender channel c's freed count: the connected worker (ch0), or the router
    // that feeds channel c.
    bool credit_target(uint32_t c) const {
        return c == pf::kWorkerChannel ? port_.connected() : credit_to_[c].present;
    }
    void link_step(uint32_t now);
    bool link_down();
    void keep_alive_if_due(uint32_t now);
    void record_link(pf::RouterEventKind kind, uint32_t code);
    void stall_step(uint32_t now);
    void pin_step(uint32_t r, uint32_t now);
    void abandon_pinned(uint32_t r);
    bool noc_stuck() const;
    bool delivery_pinned() const;
    // ---- control (RouterControl: README.md "Control") ----
    uint32_t control_step();
    void reached(uint32_t ctl);
    void set_stall(uint32_t ctl);
    bool link_dead() const { return !link_status_.up() || peer_watch_.silent(); }
    void cut_step();  // kControl only
    void apply_order();
    void reroute_step();
    bool forwards_landed();
    void rerouted_step(uint32_t ctl);
    void rejoin_step();
    void restart_link();
    void uncut();
    uint32_t held();
    void publish_held() { report_store(offsetof(pf::RouterControlReport, held), held()); }
    void report_store(uint32_t offset, uint32_t v) {
        hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(kControlReport + offset), v);
    }
    bool drained() const;
    uint32_t unfinished();
    uint32_t undrained() const;
    int terminate_immediate();
    int finish(uint32_t undrained_packets);

    // ---- status ----
    void set_stage(RouterStatus s);
    void publish();
    int stop(RouterStatus s, RouterWait where, uint32_t detail);
    int stop_hal(Status s, RouterWait where);
    uint32_t* sb(uint32_t offset) const {
        return hal::mmio::l1_ptr<uint32_t>(g_layout.status + offset);
    }
    void sb_store(uint32_t offset, uint32_t v) { hal::mmio::store_shared(sb(offset), v); }
    const uint32_t* term() const { return hal::mmio::l1_ptr<const uint32_t>(g_layout.termination); }
    uint32_t term_value() const { return hal::mmio::load_shared(term()); }
    hal::Deadline progress_deadline() const {
        return hal::Deadline::after_us(kA, g_config.progress_timeout_us);
    }

    Port& port(uint32_t p) { return ports_[p - 1]; }  // p >= 1: ch0 takes no forwards
    const Port& port(uint32_t p) const { return ports_[p - 1]; }

    // Copied from g_config and g_layout once checked (the per-packet steps read them), and the
    // topology's state (its routing, from the config and the ports found).
    TakeLimits limits_;
    uint32_t slot_bytes_ = 0;
    Topology topology_;
    Noc noc_{hal::NocId::Noc0, kNocConfig};
    fabric::EventLog events_{kFixed.events};  // before the slots: the same place for any config
    // Prepared NoC writes (checked and programmed once at start-up, then only what varies per
    // packet): the forwards (fwd_data_ per neighbouring router, Port::pushed_inc) and the
    // delivery writes (any core).
    Delivery deliver_{};
    ForwardData fwd_data_[kNeighbours];
    Sender tx_[kSenders];
    PeerRx peer_rx_[pf::kNumReceiverChannels];
    Receiver rx_[pf::kNumReceiverChannels];
    Port ports_[kSenders - 1];
    CreditTarget credit_to_[kSenders];
    // The ch0 connection block and the words we write into producers' L1 (credits, teardown).
    fabric::WorkerPort port_;
    fabric::RemoteWords<kCreditTrid> words_{noc_, kFixed.scratch};
    uint32_t bad_packets_ = 0;
    uint32_t delivered_ = 0;  // (forwarded: the ports' `pushed` counts, summed in publish())
    uint32_t iterations_ = 0;
    uint32_t credit_dirty_ = 0;  // bit c: sender channel c's freed count has not been sent yet
    // kFeedTxq: wall clock (low word) estimates after a send of several frames: when TXQ0 frees
    // (its last frame starts) and when the wire is done with it.
    struct Wire {
        uint32_t txq_free_at = 0;
        uint32_t end = 0;
    };
    [[no_unique_address]] Only<kFeedTxq, Wire> wire_;
    bool activity_ = false;  // a step moved a packet or a credit in this iteration
    // Link health (link_step): the peer heard, our keep-alives, the link status word.
    PeerWatch peer_watch_{kPeerSilentCycles, 0};  // started again with the main loop
    LinkStatusWatch link_status_{kA.link_status.up};
    uint32_t keep_alive_at_ = 0;  // wall clock (low word) of our last keep-alive
    uint32_t signs_ = 0;          // packets taken and completions, at the last link_step
    uint32_t told_ = 0;           // packets and completions sent, at the last link_step
    // Timeouts (stall_step): per receiver channel, its taken count when its head was last seen
    // blocked and since when; the ports that stalled (bit p; their packets are dropped while
    // they stay full, StallAction::Drop).
    struct Stall {
        uint32_t taken = 0;
        uint32_t since = 0;
        bool reported = false;
    };
    Stall stall_[pf::kNumReceiverChannels];
    // Per receiver channel, its oldest packet not completed while its NoC requests do not flush
    // (done: its count when first seen so, since: when): reported once as NotAccepted; on a cut
    // link it then completes without them (abandon_pinned), and its slot (bit in `abandoned`)
    // is watched until they flush (Accepted).
    struct Pin {
        uint32_t done = 0;
        uint32_t since = 0;
        bool reported = false;
        uint32_t seq = 0;  // the reported packet's
        uint32_t abandoned = 0;
        // Abandoned slots whose atomic waits for their writes (Receiver::armed).
        uint32_t armed = 0;
    };
    Pin pin_[pf::kNumReceiverChannels];
    uint32_t stalled_ports_ = 0;
    uint32_t stall_cycles_ = 0;  // 0: stalls are not looked for
    // A busy router's link health (and control word) every kLinkPollBusy polls; every poll while
    // the control word or state is not Run (control_step).
    uint32_t link_mask_ = kPollEvery * kLinkPollBusy - 1;
    // Control (kControl images only): the RouterControl word as last acted on, the link cut by a
    // drain, per sender channel of the peer the completions sent for its packets
    // (RouterControlReport::taken).
    struct Control {
        uint32_t word = 0;
        uint32_t cut = 0;
        bool reached = true;   // the word's state is reached (and reported)
        uint32_t senders = 0;  // the channels the main loop serves when not paused or cut
        uint32_t receivers = 0;
        bool stall_drop = false;                   // StallAction::Drop (or draining)
        BadPacket stall_why = BadPacket::Timeout;  // what a stalled packet is dropped as
        uint32_t acked[kSenders] = {};
        // Reroute: the host's RerouteOrder applied (the sender channels go over the fallback), or
        // answered in any way (applied or refused).
        bool rerouted = false;
        bool answered = false;
        // Rejoin: our marker is on the link; the link's state started again (RerouteState
        // Rejoined), waiting for the host's Run.
        bool marked = false;
        bool rejoined = false;
    };
    [[no_unique_address]] Only<kControl, Control> ctl_;
};

// ---- status ----------------------------------------------------------------------------------

#define SB_OFF(field) static_cast<uint32_t>(offsetof(pf::RouterStatusBlock, field))

void Router::set_stage(RouterStatus s) {
    fabric::StatusWords(g_layout.status).set_stage(s);
    events_.record(pf::RouterEventKind::State, 0, static_cast<uint32_t>(s), 0);
}

void Router::publish() {
    sb_store(SB_OFF(bad_packets), bad_packets_);
    for (uint32_t c = 0; c < kSenders; ++c) {
        sb_store(SB_OFF(sent) + 4 * c, tx_[c].sent);
        sb_store(SB_OFF(completed) + 4 * c, tx_[c].completed);
        if constexpr (kControl)
            report_store(offsetof(pf::RouterControlReport, taken) + 4 * c, ctl_.get().acked[c]);
    }
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        sb_store(SB_OFF(received) + 4 * r, rx_[r].taken);
    }
    sb_store(SB_OFF(delivered), delivered_);
    uint32_t forwarded = 0;
    for (const Port& q : ports_) forwarded += q.pushed;
    sb_store(SB_OFF(forwarded), forwarded);
    sb_store(SB_OFF(main_loop_iterations), iterations_);
    if constexpr (kControl) publish_held();
}

// Stop with an error or end state. The exit code is the low byte of the status (0 = Terminated).
int Router::stop(RouterStatus s, RouterWait where, uint32_t detail) {
    publish();
    events_.record(pf::RouterEventKind::State, static_cast<uint32_t>(where),
                   static_cast<uint32_t>(s), detail);
    return fabric::StatusWords(g_layout.status).finish(s, where, detail);
}

// A HAL call or bounded wait failed: Timeout for a wait that ran out, Terminated (the host's word
// during a start-up wait) ends the router normally, anything else is a Fault.
int Router::stop_hal(Status s, RouterWait where) {
    if (s == Status::Terminated) {
        return finish(0);
    }
    return stop(s == Status::Timeout ? RouterStatus::Timeout : RouterStatus::Fault, where,
                static_cast<uint32_t>(s));
}

// ---- start-up --------------------------------------------------------------------------------

// Master: repeat our message into the peer's handshake_in until its reply lands in ours.
// Subordinate: wait for the master's message, answer once. Both judge the other (handshake.h) and
// stop with HandshakeMismatch (detail: the HandshakeField) rather than wait for credits that
// cannot come.
int Router::handshake() {
    set_stage(RouterStatus::Handshaking);
    pf::HandshakeMsg out = handshake_msg(g_config, g_layout);
    const hal::Deadline deadline = hal::Deadline::after_us(kA, g_config.handshake_timeout_us);
    pf::HandshakeMsg in{};
    Agreement verdict;
    if (g_config.is_master != 0) {
        store_struct(g_layout.handshake_out, out);
        bool sent_once = false;
        uint64_t next_send = 0;
        while (!read_peer_msg(in, g_layout.handshake_in, 1)) {
            if (term_value() != hal::kKeepRunning) return finish(0);
            if (read_peer_msg(in, g_layout.handshake_in, 0)) {  // a master too: nobody would answer
                return stop(RouterStatus::HandshakeMismatch, RouterWait::None,
                            static_cast<uint32_t>(pf::HandshakeField::BothMasters));
            }
            const uint64_t now = hal::wall_clock();
            if (now >= next_send &&
                Eth::try_send(kTxq, g_layout.handshake_out, g_layout.handshake_in, sizeof out) ==
                    Status::Ok) {
                sent_once = true;
                next_send = now + hal::us_to_cycles(kA, hal::timeouts::kFabricHandshakeResendUs);
            }
            if (deadline.passed_at(now)) {
                return stop(RouterStatus::Timeout,
                            sent_once ? RouterWait::HandshakeReply : RouterWait::HandshakeSend, 0);
            }
        }
        verdict = judge_reply(g_config, g_layout, in);
    } else {
        const Status s = hal::wait_until(
            [&] { return read_peer_msg(in, g_layout.handshake_in, 0); }, deadline, term());
        if (s != Status::Ok) return stop_hal(s, RouterWait::HandshakeSend);
        verdict = judge_peer(g_config, g_layout, in);
        out.agree = verdict.agree ? 1 : 0;
        out.mismatch = verdict.agree ? 0 : static_cast<uint32_t>(verdict.field);
        store_struct(g_layout.handshake_out, out);
        const Status r = Eth::send(kTxq, g_layout.handshake_out, g_layout.handshake_in, sizeof out,
                                   deadline, term());
        if (r != Status::Ok) return stop_hal(r, RouterWait::HandshakeReply);
    }
    sb_store(SB_OFF(peer_chip), in.params.chip_id);
    sb_store(SB_OFF(peer_channel), in.params.eth_channel);
    if (!verdict.agree) {
        return stop(RouterStatus::HandshakeMismatch, RouterWait::None,
                    static_cast<uint32_t>(verdict.field));
    }
    // Where our packets land in the peer (its sender slot counts may differ from ours).
    const uint32_t slot_bytes = slot_bytes_;
    peer_rx_[0].base = in.rx_base;
    peer_rx_[1].base = in.rx_base + g_config.receiver_slots[0] * slot_bytes;
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        peer_rx_[r].slots = g_config.receiver_slots[r];
        peer_rx_[r].end = peer_rx_[r].base + peer_rx_[r].slots * slot_bytes;
        peer_rx_[r].room = peer_rx_[r].slots;
        peer_rx_[r].next.addr = peer_rx_[r].base;
    }
    set_stage(RouterStatus::HandshakeComplete);
    return kGoOn;
}

// Wait for the host's ready word; the termination word ends the router instead.
int Router::wait_ready() {
    // Keep-alives from here on (link_step): the peer, in its main loop already, must not take
    // this wait for silence. The first goes at once.
    keep_alive_at_ = hal::wall_clock_lo() - kKeepAliveCycles;
    const Status s = hal::wait_until(
        [&] {
            keep_alive_if_due(hal::wall_clock_lo());
            return ld(g_layout.ready) == pf::kReadyMagic;
        },
        hal::Deadline::after_us(kA, g_config.ready_timeout_us), term());
    if (s != Status::Ok) return stop_hal(s, RouterWait::ReadyWord);
    return kGoOn;
}

// Neighbour n (nb): our ports nb.port[i] are its channels nb.channel[i] (VC0, VC1), their slot
// layouts read from its config (written by the host before any router started). DownstreamConfig
// if its config does not fit ours. Out of line: its copy of the config stays out of main's frame.
ROUTER_COLD_WINDOW ConfigCheck Router::setup_neighbour(uint32_t n, const Neighbour& nb) {
    const uint32_t x = nb.x(), y = nb.y();
    // Its config's payload_bytes, sender_slots and receiver_slots (48 B from +32) into our (now
    // idle) handshake_out.
    constexpr uint32_t kFrom = offsetof(pf::RouterConfig, payload_bytes);
    static_assert(kFrom % 16 == 0 && offsetof(pf::RouterConfig, receiver_slots) + 8 <= kFrom + 48);
    constexpr ConfigCheck kBad = ConfigCheck::DownstreamConfig;
    Status s = noc_.read({x, y, kFixed.config + kFrom}, g_layout.handshake_out, 48);
    if (s == Status::Ok) s = noc_.read_barrier(progress_deadline(), term());
    if (s != Status::Ok) return kBad;
    pf::RouterConfig dc{};
    dc.payload_bytes = ld(g_layout.handshake_out);
    for (uint32_t i = 0; i < pf::kMaxSenderChannels; ++i)
        dc.sender_slots[i] = ld(g_layout.handshake_out + 4 + 4 * i);
    for (uint32_t i = 0; i < pf::kNumReceiverChannels; ++i) {
        dc.receiver_slots[i] = ld(g_layout.handshake_out + 4 + 4 * pf::kMaxSenderChannels + 4 * i);
    }
    if (dc.payload_bytes != limits_.payload_bytes) return kBad;
    const pf::RouterLayout dl = pf::router_layout(kA, dc);
    // Its slots take our forwards unchecked per packet (take()): its layout must fit its L1.
    if (!dl.fits) return kBad;
    bool any = false;
    for (uint32_t i = 0; i < 2; ++i) {
        Port& q = port(nb.port[i]);
        const uint32_t ch = nb.channel[i];
        if (dc.sender_slots[ch] > kMaxSlots) return kBad;
        q.base = dl.sender_base[ch];
        q.slots = dc.sender_slots[ch];
        q.end = q.base + q.slots * dl.slot_bytes;
        q.next.addr = q.base;
        q.data = &fwd_data_[n];
        if (q.slots == 0) continue;  // nothing may be forwarded there (NoDownstream)
        any = true;
        limits_.present_ports |= 1u << nb.port[i];
        s = noc_.prepare({.dst = {x, y, Streams::update_reg_addr(pushed_id(ch))},
                          .value = kIncOne,
                          .trid = kPushedTrid},
                         q.pushed_inc);
        if (s != Status::Ok) return kBad;
    }
    // One data preparation for both channels (the same core: no reprogramming between them).
    if (!any) return ConfigCheck::None;
    return noc_.prepare({.dst = {x, y, 0}}, fwd_data_[n]) == Status::Ok ? ConfigCheck::None : kBad;
}

// The ports (other routers' channels we forward into) and where our channels' credits go: for
// each neighbour, the credits of the channels it feeds first, then its ports (so on Wormhole 1D
// kFwdPushedBuf is left programmed with a forward's handle, and a router's first forward does not
// reprogram it: ~50 cycles on the packet's path).
ConfigCheck Router::setup_ports() {
    for (uint32_t n = 0; n < kNeighbours; ++n) {
        Neighbour nb;
        if (!Topology::neighbour(n, g_config, g_mesh, nb)) continue;
        for (uint32_t i = 0; i < 2; ++i) {
            const fabric::NocWord to{nb.x(), nb.y(), kFixed.upstream_credit[nb.credit_slot[i]]};
            if (prepare_credit(nb.fed_channel[i], to) != Status::Ok)
                return ConfigCheck::DownstreamConfig;
        }
        if (const ConfigCheck bad = setup_neighbour(n, nb); bad != ConfigCheck::None) return bad;
    }
    topology_.index_ports(limits_.present_ports);
    return ConfigCheck::None;
}

// ---- the data path ---------------------------------------------------------------------------

// n > 0 completions from the peer for channel c (its Completed stream) free our slots and the
// peer's receiver slots. The producer's credit goes at once where that is one prepared write and
// it has somewhere to go, else in credit_step (later in the pass).
[[gnu::always_inline]] inline Status Router::sender_completions(uint32_t c, uint32_t n) {
    Sender& s = tx_[c];
    stream_add(completed_id(c), -static_cast<int32_t>(n));
    activity_ = true;
    s.completed += n;
    s.peer->room += n;
    if (kPreparedCredits && credit_target(c)) {
        return noc_.send(credit_to_[c].write.get(), s.completed, kCreditTrid);
    }
    credit_dirty_ |= 1u << c;
    return Status::Ok;
}

// Send the oldest pushed packets of channel c while the peer's receiver has a free slot and TXQ0
// is free. Their +n on the peer's rx_sent stream follows on the same queue (so it lands after the
// data), for up to kAnnounceBatch packets at once: as soon as nothing more can go now, or when the
// batch is full. Up to kSendBurst commands per call while the queue takes each at once (a small
// packet's one frame goes on the wire at once and frees the queue a cycle later), so its
// announcement or the next packet does not wait for the next pass. `pushed`: the channel's
// Pushed stream as the caller read it (> 0).
ROUTER_HOT_INLINE Status Router::sender_step(uint32_t c, uint32_t pushed) {
    Sender& s = tx_[c];
    PeerRx& p = *s.peer;
    // Working copies, written back once: an MMIO store may alias any uint32_t, so the fields
    // would be loaded again after every register write.
    RingCursor mine = s.next, theirs = p.next;
    const uint32_t room = p.room;
    uint32_t unannounced = p.unannounced;
    uint32_t n = 0;  // sent by this call; Pushed gets one -n at the end
    for (uint32_t k = 0; k < kSendBurst; ++k) {
        if (Eth::is_busy(kTxq)) {
            // Busy with a long data command whose last frame starts soon, and the next packet is
            // here: wait for it (see kFeedTxq).
            if (!kFeedTxq || n >= room || n >= pushed || !txq_frees_soon()) break;
            for (uint32_t i = 0; i < kFeedSpin && Eth::is_busy(kTxq); ++i) {
            }
            if (Eth::is_busy(kTxq)) break;
        }
        // From here the queue is free and nothing goes on it but the one command below, whose
        // arguments are checked ahead: the stream register is a constant's, our slots fit L1
        // (config), the peer's were checked at the handshake (rx_area_ok), and a send is at most
        // one slot. Hence the prechecked calls. (`pushed` still counts the n sent here.)
        const bool ready = n < room && (n < pushed || (pushed = Streams::read(pushed_id(c))) > n);
        if (unannounced != 0 && (!ready || unannounced >= kAnnounceBatch)) {
            // unannounced <= kAnnounceBatch: a valid delta.
            Eth::write_remote_reg_prechecked(kTxq, p.announce_reg,
                                             hal::stream::encode_words_free_delta(unannounced));
            unannounced = 0;
            activity_ = true;
            if (!ready) break;
            // The next packet is ready, and the queue frees once the announcement's frame starts,
            // right after the data still on the wire (at most one frame, ~120 cycles): wait for
            // that here (bounded) rather than a pass, so the wire does not idle between them.
            for (uint32_t i = 0; i < kAnnounceSpin && Eth::is_busy(kTxq); ++i) {
            }
            continue;
        }
        if (!ready) break;
        const uint32_t slot = mine.addr;
        // 2D: a multicast copy that turned into our direction becomes a line multicast along it.
        topology_.before_send(c, slot);
        uint32_t bytes = ld(slot + 4 * kHdrMetaWord) & 0xFFFF;
        if (bytes > limits_.payload_bytes)
            bytes = limits_.payload_bytes;  // the receiver drops it as bad
        hal::mmio::store_shared(
            hal::mmio::l1_ptr<uint8_t>(slot + offsetof(pf::PacketHeader, src_channel)),
            static_cast<uint8_t>(c));
        const uint32_t size = sizeof(pf::PacketHeader) + align16(bytes);
        Eth::send_prechecked(kTxq, slot, theirs.addr, size);
        if (kFeedTxq && size > (kFeedFrames - 1) * kFrameBytes) sent_frames(size);
        ++n;
        ++unannounced;
        mine.advance(s.base, s.end, slot_bytes_);
        theirs.advance(p.base, p.end, slot_bytes_);
    }
    p.unannounced = unannounced;
    if (n == 0) return Status::Ok;
    activity_ = true;
    if (n > kSendBurst) __builtin_unreachable();  // so stream_add's range check folds away
    stream_add(pushed_id(c), -static_cast<int32_t>(n));
    s.sent += n;
    s.next = mine;
    p.next = theirs;
    p.room -= n;
    return Status::Ok;
}

// kFeedTxq: a data command of `size` bytes (kFeedFrames frames or more) just went on TXQ0. Its
// frames start once the wire is done with the previous such command's (the others are short).
[[gnu::always_inline]] inline void Router::sent_frames(uint32_t size) {
    Wire& w = wire_.get();
    const uint32_t now = hal::wall_clock_lo();
    uint32_t start = static_cast<int32_t>(w.end - now) > 0 ? w.end : now;
    for (; size > kFrameBytes; size -= kFrameBytes) start += wire_cycles(kFrameBytes);
    w.txq_free_at = start;
    w.end = start + wire_cycles(size);
}

// kFeedTxq: the last such command's last frame starts within kFeedWindow cycles (or did at most
// kFeedLate ago).
[[gnu::always_inline]] inline bool Router::txq_frees_soon() {
    const uint32_t left = wire_.get().txq_free_at + kFeedLate - hal::wall_clock_lo();
    return left <= kFeedWindow + kFeedLate;
}

// +unannounced on the peer's rx_sent stream of receiver channel `rx`, if TXQ0 takes it now
// (Busy if not).
[[gnu::always_inline]] inline Status Router::announce(uint32_t rx) {
    PeerRx& p = peer_rx_[rx];
    // Checked ahead, as in sender_step: the register is announce_reg, 0 < unannounced <=
    // kAnnounceBatch a valid delta. A busy queue (mostly our own data) costs one read.
    if (Eth::is_busy(kTxq)) return Status::Busy;
    Eth::write_remote_reg_prechecked(kTxq, p.announce_reg,
                                     hal::stream::encode_words_free_delta(p.unannounced));
    p.unannounced = 0;
    activity_ = true;
    return Status::Ok;
}

// Execute the packet's NoC command on this chip. Atomics that must follow flushed writes are
// Issued::Armed: issued by completion_walk (from the header, still in the slot) once the slot is
// flushed.
// The common send type inline; the others out of line (code size: the receive path is inlined
// once per receiver channel).
Status Router::deliver(const pf::PacketHeader& h, uint32_t slot, uint32_t id, Issued& issued) {
    if (static_cast<pf::NocSendType>(h.send_type) == pf::NocSendType::UnicastWrite) [[likely]] {
        // Checked ahead: check_command() (header.h) checked the target as write() would (core, 16-B
        // alignment, so congruent with the slot's payload, range) and a non-zero size.
        const pf::NocTarget& d = h.cmd.write.dst;
        return noc_.send(deliver_, slot + sizeof(pf::PacketHeader), hal::NocXY{d.x, d.y}, d.addr,
                         h.payload_bytes, id);
    }
    return deliver_other(h, slot, id, issued);
}

// The stream writes' arguments are checked ahead: check_command() checked every target as write()
// would (core, range, alignment: 16 B for payload writes, whose sources are 16-B aligned offsets in
// the slot's payload; an inline write's staging word sits at its destination's offset mod 16) and
// sizes (non-zero, within payload_bytes: one burst).
[[gnu::noinline]] Status Router::deliver_other(const pf::PacketHeader& h, uint32_t slot,
                                               uint32_t id, Issued& issued) {
    const uint32_t payload = slot + sizeof(pf::PacketHeader);
    const uint32_t bytes = h.payload_bytes;
    const hal::NocAtomicOpts ao{.vc = kDeliverVc, .trid = id};
    const auto to = [](const pf::NocTarget& t) { return hal::NocAddr{t.x, t.y, t.addr}; };
    const auto xy = [](const pf::NocTarget& t) { return hal::NocXY{t.x, t.y}; };
    switch (static_cast<pf::NocSendType>(h.send_type)) {
        case pf::NocSendType::InlineWrite: {
            // Staged in the slot's payload area (ours until the slot completes): one path on both
            // arches, as Blackhole cannot take inline writes to L1.
            const pf::NocTarget& d = h.cmd.inline_write.dst;
            const uint32_t src = payload + d.addr % 16;
            st(src, h.cmd.inline_write.value);
            return noc_.send(deliver_, src, xy(d), d.addr, 4, id);
        }
        case pf::NocSendType::AtomicInc:
            if (h.cmd.atomic.flush != 0) {
                issued = Issued::Armed;
                return Status::Ok;
            }
            return noc_.atomic_inc_on(deliver_, to(h.cmd.atomic.dst), h.cmd.atomic.value, ao);
        case pf::NocSendType::FusedWriteAtomicInc:
            HAL_TRY(
                noc_.send(deliver_, payload, xy(h.cmd.fused.dst), h.cmd.fused.dst.addr, bytes, id));
            // Its increment waits for the write's flush (armed) when asked to, or when the write
            // does not leave (its destination stopped accepting).
            if (h.cmd.fused.flush != 0 || !delivery_ready()) {
                issued = Issued::Armed;
                return Status::Ok;
            }
            return noc_.atomic_inc_on(deliver_, to(h.cmd.fused.sem), h.cmd.fused.value, ao);
        case pf::NocSendType::ScatterWrite: {
            const pf::ScatterWriteCmd& sc = h.cmd.scatter;
            uint32_t off = 0;
            for (uint32_t i = 0; i < sc.chunk_count; ++i) {
                const uint32_t n = i + 1 < sc.chunk_count ? sc.chunk_bytes[i] : bytes - off;
                if (i != 0 && !delivery_ready()) {  // (the first was checked by the caller)
                    issued = Issued::CutShort;
                    return Status::Ok;
                }
                HAL_TRY(noc_.send(deliver_, payload + off, xy(sc.dst[i]), sc.dst[i].addr, n, id));
                off += n;
            }
            return Status::Ok;
        }
        default:
            return Status::BadArg;  // unreachable: check_command() refused it
    }
}

// Take the `landed` packets of rx r, up to kTakeBatch, in order; one stream update for all of
// them, and their fast-path NoC requests counted once (a Noc::Batch). take() and take_general() say
// Busy for a packet that waits for a port.
ROUTER_HOT Status Router::receiver_step(uint32_t r, uint32_t landed) {
    Receiver& rx = rx_[r];
    uint32_t n = 0;
    if (rx.blocked != 0) {
        // The oldest packet waits for a port: look at its credit word only, not at the header
        // again (three L1 loads and the checks) until there is room.
        if (rx.blocked >= kWaitsNoc) {
            if (rx.blocked == kWaitsNoc && !noc_.ready(deliver_)) return Status::Ok;
            const Status s = take_general(r);
            if (s == Status::Busy) return Status::Ok;
            HAL_TRY(s);
            n = 1;
        } else if (port_full(rx.blocked)) {
            return Status::Ok;
        } else {
            rx.blocked = 0;
        }
    }
    {
        Noc::Batch batch(noc_);  // the fast path's deliveries and forwards
        TakeState t = rx.take_state();
        Status s = Status::Ok;
        for (; n < landed && n < kTakeBatch; ++n) {
            s = take(r, batch, t);
            if (s != Status::Ok) break;
        }
        rx.set_take_state(t);
        if (s != Status::Busy) HAL_TRY(s);
    }
    if (n == 0) return Status::Ok;
    stream_add(rx_sent_id(r), -static_cast<int32_t>(n));
    activity_ = true;
    return Status::Ok;
}

// Port p has no free slot (its credit word re-read from L1 only when the cached count says full).
bool Router::port_full(uint32_t p) {
    Port& q = port(p);
    if (q.pushed - q.credit < q.slots) return false;
    q.credit = ld(kFixed.upstream_credit[p]);
    return q.pushed - q.credit >= q.slots;
}

// The delivery buffer takes a request now or within kDeliveryWaitUs (a burst still leaving);
// otherwise its destination does not accept, and the caller goes on. Once found so, nothing waits
// for it (deliver_.ready_wait_us() 0: the fast path neither) until it is found free again.
[[gnu::noinline]] bool Router::delivery_ready() {
    if (noc_.ready(deliver_)) {
        deliver_.set_ready_wait_us(kDeliveryWaitUs);
        return true;
    }
    if (deliver_.ready_wait_us() == 0) return false;
    const hal::Deadline d = hal::Deadline::after_us(kA, kDeliveryWaitUs);
    if (noc_.wait_ready(deliver_, d) == Status::Ok) return true;
    deliver_.set_ready_wait_us(0);
    return false;
}

// The packet in `slot` of receiver channel r dropped (or the rest of it), `why`: counted, the
// status block's detail, its event with the header's seq.
void Router::report_drop(uint32_t r, BadPacket why, uint32_t slot) {
    ++bad_packets_;
    sb_store(SB_OFF(detail), static_cast<uint32_t>(why));
    events_.record(pf::RouterEventKind::BadPacket, r, static_cast<uint32_t>(why),
                   ld(slot + offsetof(pf::PacketHeader, seq)));
}

// Why a packet for a stalled port is dropped: Timeout, or while draining, the drain's reason.
BadPacket Router::stalled_drop() {
    if constexpr (kControl) return ctl_.get().stall_why;
    return BadPacket::Timeout;
}

// Receiver `rx`'s head packet waits for port p: p's slots are full, or (p = 0) the NoC does not
// take its delivery.
bool Router::waits_for(uint32_t p, const Receiver& rx) {
    if (p == 0) return rx.blocked == kWaitsNoc && !noc_.ready(deliver_);
    return (rx.blocked == kRetake || rx.blocked == p) && port_full(p);
}

// Header + payload of our slot into port p's next slot, then +1 on its Pushed stream (same NoC
// and VC, so it lands after the data). Checked ahead: our slot and the port's are 16-B aligned
// slots of layouts that fit (ours checked at start-up, the port's in setup_neighbour), the size at
// most a slot (payload_bytes checked by check_head; a slot is one NoC burst), the streams prepared
// with checks. Both requests non-posted, counted with the caller's batch.
[[gnu::always_inline]] inline Status Router::forward(uint32_t p, uint32_t slot, uint32_t bytes,
                                                     uint32_t id, Noc::Batch& batch) {
    Port& q = port(p);
    const uint32_t size = sizeof(pf::PacketHeader) + align16(bytes);
    HAL_TRY(batch.send(*q.data, slot, q.next.addr, size, id));
    HAL_TRY(batch.send(q.pushed_inc));
    ++q.pushed;
    q.next.advance(q.base, q.end, slot_bytes_);
    return Status::Ok;
}

// Take the next packet of rx r if (when it goes on) the ports it goes to have a free slot (Busy
// if not): deliver it here and/or forward it, all NoC requests tagged with the slot's trid. Only
// the header words the packet needs are loaded (L1 loads take 7 cycles each).
//
// The two common cases are handled here, on the header words in registers: a plain forward (one
// port) and a UnicastWrite delivered here, when classify() finds nothing wrong; anything else,
// including a packet failing a check, goes to take_general(), which loads what else it needs and
// reports the reason.
Status Router::take(uint32_t r, Noc::Batch& batch, TakeState& t) {
    Receiver& rx = rx_[r];
    const uint32_t idx = t.at.idx;
    const uint32_t slot = t.at.addr;
    const HeaderHead head = read_head(slot);
    // classify()'s first stage: a plain packet that passes every check, or the general path.
    const PlainHop plain = topology_.plain(head, r);
    if (!plain.any() || !plain_passes(topology_, head, slot, limits_))
        return take_general_from(r, t);
    if (const uint32_t out = plain.port; out != 0) {
        if (port_full(out)) {  // try again later, or drop it if that port stalled
            if ((stalled_ports_ >> out & 1) != 0) return take_general_from(r, t);
            rx.blocked = out;
            return Status::Busy;
        }
        const uint32_t id = t.id;
        rx.trid.set(idx, id);
        t.id = id + 1 == rx.end_id ? rx.first_id : id + 1;
        topology_.pass_on_plain(slot, head.route);
        pass_ttl_on(slot, head);
        HAL_TRY(forward(out, slot, head.payload_bytes(), id, batch));
    } else if (head.send_type() == static_cast<uint32_t>(pf::NocSendType::UnicastWrite)) {
        static_assert(offsetof(pf::PacketHeader, cmd.write.dst.addr) == 0 &&
                      offsetof(pf::PacketHeader, cmd.write.dst.x) == 4);
        const uint32_t addr = ld(slot);
        const uint32_t xy = ld(slot + 4);
        const uint32_t bytes = head.payload_bytes();
        if (!unicast_write_ok(addr, xy, bytes)) return take_general_from(r, t);
        // Checked ahead: the target as write() checks it (above), 16-B aligned like the slot's
        // payload, so congruent; the slot is ours. A delivery buffer that stays busy (Timeout:
        // nothing issued) leaves the packet to the general path, which does not wait for it.
        const uint32_t id = t.id;
        rx.trid.set(idx, id);
        t.id = id + 1 == rx.end_id ? rx.first_id : id + 1;
        const Status s = batch.send(deliver_, slot + sizeof(pf::PacketHeader),
                                    hal::NocXY{xy & 0xFF, (xy >> 8) & 0xFF}, addr, bytes, id);
        if (s != Status::Ok) [[unlikely]] {
            if (s != Status::Timeout) return s;
            t.id = id;
            return take_general_from(r, t);
        }
        ++delivered_;
    } else {
        return take_general_from(r, t);
    }
    // (No armed bit to clear: a slot's bit is cleared when its atomic is issued, before the slot
    // completes, so it is clear whenever the slot is taken again.)
    rx.src.set(idx, head.src_channel());
    ++t.taken;
    t.at.advance(rx.base, rx.slots, slot_bytes_);
    return Status::Ok;
}

// take_general() within a take batch: it works on the Receiver, so the batch's state goes back
// there first and is read again after.
[[gnu::always_inline]] inline Status Router::take_general_from(uint32_t r, TakeState& t) {
    rx_[r].set_take_state(t);
    const Status s = take_general(r);
    t = rx_[r].take_state();
    return s;
}

// Every other packet (multicast, the other send types, entry routers, bad headers), out of line:
// the same classify(), then the command's words and checks for a packet delivered here.
[[gnu::noinline]] Status Router::take_general(uint32_t r) {
    Receiver& rx = rx_[r];
    rx.blocked = 0;
    const uint32_t idx = rx.take.idx;
    const uint32_t slot = rx.take.addr;
    const HeaderHead head = read_head(slot);
    const Verdict v = classify(topology_, head, slot, r, limits_);
    Words<pf::PacketHeader> hw;
    hw.w[kHdrMetaWord] = head.meta;
    hw.w[kHdrRouteWord] = head.route;
    hw.w[kHdrMagicWord] = head.magic;
    const pf::PacketHeader& h = hw.s;
    // The command, for a packet delivered here (check_command reads it only then).
    if (v.hop.write && h.send_type < static_cast<uint8_t>(pf::NocSendType::kCount)) {
        const uint32_t words = cmd_words(h.send_type);
        for (uint32_t i = 0; i < words; ++i) hw.w[i] = ld(slot + 4 * i);
    }
    BadPacket why = drop_reason(v, h);
    const uint32_t ports = v.hop.ports;
    const uint32_t bit = 1u << idx;
    rx.armed &= ~bit;
    // Every port it goes to must have room: a copy is never sent to some and not others. A full
    // port that stalled (stall_step, StallAction::Drop) drops it instead.
    for (uint32_t p = 1; p < kSenders && why == BadPacket::None; ++p) {
        if ((ports >> p & 1) == 0 || !port_full(p)) continue;
        if ((stalled_ports_ >> p & 1) != 0) {
            why = stalled_drop();
        } else {  // try again later
            rx.blocked = (ports & (ports - 1)) == 0 ? p : kRetake;
            return Status::Busy;
        }
    }
    // The same for the delivery of a packet for this chip (its stall: bit 0).
    if (v.hop.write && why == BadPacket::None && !delivery_ready()) {
        if ((stalled_ports_ & 1) != 0) {
            why = stalled_drop();
        } else {
            rx.blocked = kWaitsNoc;
            return Status::Busy;
        }
    }
    if (why != BadPacket::None) {
        report_drop(r, why, slot);
        rx.src.set(idx, h.src_channel < kSenders ? h.src_channel : 0xFF);
        (void)rx.take_id(idx);  // no requests: its completion waits for nothing of its own
    } else {
        const uint32_t id = rx.take_id(idx);
        if (v.hop.write) {
            Issued issued = Issued::All;
            HAL_TRY(deliver(h, slot, id, issued));
            if (issued == Issued::Armed) rx.armed |= bit;
            if (issued == Issued::CutShort) report_drop(r, BadPacket::NotAccepted, slot);
            ++delivered_;
        }
        if (ports != 0) {
            topology_.pass_on(slot, v.hop);
            pass_ttl_on(slot, head);
            Noc::Batch batch(noc_);
            for (uint32_t p = 1; p < kSenders; ++p) {
                if ((ports >> p & 1) != 0) HAL_TRY(forward(p, slot, h.payload_bytes, id, batch));
            }
        }
        rx.src.set(idx, h.src_channel);
    }
    ++rx.taken;
    rx.take.advance(rx.base, rx.slots, slot_bytes_);
    return Status::Ok;
}

// Completions go back in order: the oldest unfinished slot, once its NoC requests are flushed,
// gets +1 on the peer's completion stream of its src_channel. Armed atomics (flush) are issued
// while walking forward over flushed slots (every earlier write of the channel is then flushed
// too), up to kCompletionLookahead slots ahead, so several can be in flight; a slot whose atomic
// was just issued completes once that is flushed as well.
constexpr uint32_t kCompletionLookahead = 16;

// 1D: one copy of the walk per receiver channel (its state at constant offsets on the stack);
// 2D: one for both, the channel known at run time (kAnyRx; room in its code window).
constexpr uint32_t kAnyRx = pf::kNumReceiverChannels;
constexpr bool kWalkPerChannel = !Topology::kSharedWalk;
constexpr uint32_t walk_copy(uint32_t r) {
    return kWalkPerChannel ? r : kAnyRx;
}

// The armed atomic of slot `idx` of rx r, out of line: inlined, its registers would make every
// completion_walk call save and restore a dozen more.
// Its target and value are read again from the header (the slot is ours until it completes):
// AtomicInc's dst and value, or FusedWriteAtomicInc's sem and value, 8 B further on.
[[gnu::noinline, gnu::flatten]] Status Router::issue_armed(uint32_t r, uint32_t idx, uint32_t id) {
    static_assert(offsetof(pf::AtomicIncCmd, value) == 8 &&
                  offsetof(pf::FusedWriteAtomicIncCmd, sem) == 8 &&
                  offsetof(pf::FusedWriteAtomicIncCmd, value) == 16 &&
                  offsetof(pf::NocTarget, x) == 4 && offsetof(pf::NocTarget, y) == 5);
    const uint32_t slot = rx_[r].base + idx * slot_bytes_;
    const uint32_t type = (ld(slot + 4 * kHdrMetaWord) >> 16) & 0xFF;
    const uint32_t at = slot + (type == static_cast<uint32_t>(pf::NocSendType::AtomicInc) ? 0 : 8);
    const uint32_t addr = ld(at), xy = ld(at + 4), value = ld(at + 8);
    return noc_.atomic_inc_on(deliver_, {xy & 0xFF, (xy >> 8) & 0xFF, addr}, value,
                              {.vc = kDeliverVc, .trid = id});
}

// The main loop's call, the same in both (its code does not change with the walk's copies).
template <uint32_t R>
[[gnu::noinline]] Status Router::completion_walk() {
    return walk<walk_copy(R)>(R);
}

Status Router::completion_walk(uint32_t r) {
    return r == 0 ? completion_walk<0>() : completion_walk<1>();
}

// A packet pushed into one of our sender channels waits to be sent.
[[gnu::always_inline]] inline bool data_to_send() {
    for (uint32_t c = 0; c < kSenders; ++c) {
        if (Streams::read(pushed_id(c)) != 0) return true;
    }
    return false;
}

// The common case, inline in the main loop (the call alone would cost more than the work): no
// armed atomic in rx R, and a run of flushed slots of one src_channel from the oldest goes back
// as one +n; further runs go on the next passes. Armed atomics take completion_walk().
template <uint32_t R>
[[gnu::always_inline]] inline Status Router::completion_step() {
    Receiver& rx = rx_[R];
    const uint32_t pending = rx.taken - rx.done;
    if (pending == 0) return Status::Ok;
    uint32_t idx = rx.complete_idx;
    if (!noc_.trid_flushed(rx.trid[idx])) return Status::Ok;  // the oldest is not done yet
    if (rx.armed != 0) [[unlikely]]
        return completion_walk<R>();
    if (Eth::is_busy(kTxq)) return Status::Ok;  // the +n could not go now: no walk for nothing
    const uint32_t src = rx.src[idx];
    uint32_t n = 1;
    while (n < pending && n < kCompletionLookahead) {
        if (++idx == rx.slots) idx = 0;
        if (rx.src[idx] != src || !noc_.trid_flushed(rx.trid[idx])) break;
        ++n;
    }
    // While we have data of our own to send, a lone packet waits for the one behind it of the
    // same channel (taken, so its writes flush within the NoC's latency): one +2 instead of two +1
    // halves the completion frames competing with our data for TXQ0, and the peer's completion
    // and credit work. Otherwise at once: nothing to gain, and the producer waits for the slot.
    if (!kSmallImage && n == 1 && pending > 1 && rx.src[idx] == src && data_to_send())
        return Status::Ok;
    // TXQ0 was free above and nothing went on it since; n <= kCompletionLookahead, a valid delta.
    if (src < kSenders) {
        Eth::write_remote_reg_prechecked(kTxq, Streams::update_reg_addr(completed_id(src)),
                                         hal::stream::encode_words_free_delta(n));
        if constexpr (kControl) ctl_.get().acked[src] += n;
    }
    complete(rx, n);
    return Status::Ok;
}

// The walk: every flushed slot from the oldest, up to kCompletionLookahead, issuing armed atomics
// and sending each run of one src_channel as one +n. Receiver channel R, or any_r for kAnyRx.
template <uint32_t R>
ROUTER_HOT Status Router::walk(uint32_t any_r) {
    const uint32_t r = R == kAnyRx ? any_r : R;
    Receiver& rx = rx_[r];
    if (rx.done == rx.taken) return Status::Ok;
    // Consecutive flushed slots of the same src_channel complete with one +n (a run).
    bool in_order = true;  // every slot before this one is complete or in the run
    uint32_t run = 0;
    uint32_t run_src = 0;
    uint32_t idx = rx.complete_idx;
    for (uint32_t n = rx.done, walked = 0; n != rx.taken && walked < kCompletionLookahead;
         ++n, ++walked, idx = idx + 1 == rx.slots ? 0 : idx + 1) {
        const uint32_t id = rx.trid[idx];
        if (!noc_.trid_flushed(id)) break;
        const uint32_t bit = 1u << idx;
        if ((rx.armed & bit) != 0) [[unlikely]] {
            if (!noc_.ready(deliver_)) break;  // the next pass (it never waits for the buffer)
            rx.armed &= ~bit;
            HAL_TRY(issue_armed(r, idx, id));
            in_order = false;
            continue;
        }
        if (!in_order) continue;
        const uint32_t src = rx.src[idx];
        if (run != 0 && src != run_src) {
            if (!send_completions(run_src, run)) {
                in_order = false;
                run = 0;
                continue;
            }
            complete(rx, run);
            run = 0;
        }
        run_src = src;
        ++run;
    }
    if (run != 0 && send_completions(run_src, run)) complete(rx, run);
    return Status::Ok;
}

// +n on the peer's completion stream of sender channel `src` (nothing for 0xFF: a packet whose
// src_channel was bad), if TXQ0 takes it now.
// On a cut link the completions count as sent: the peer's drain decides from Control::acked.
[[gnu::noinline]] bool Router::send_completions(uint32_t src, uint32_t n) {
    if (src >= kSenders) return true;
    bool cut = false;
    if constexpr (kControl) cut = ctl_.get().cut != 0;
    if (!cut && Eth::try_write_remote_reg(kTxq, Streams::update_reg_addr(completed_id(src)),
                                          Streams::encode_delta(static_cast<int32_t>(n)).value) !=
                    Status::Ok) {
        return false;
    }
    if constexpr (kControl) ctl_.get().acked[src] += n;
    return true;
}

void Router::complete(Receiver& rx, uint32_t n) {
    rx.done += n;
    // n <= slots (a run never passes `taken`), so the index wraps at most once: no per-slot loop.
    uint32_t idx = rx.complete_idx + n;
    if (idx >= rx.slots) idx -= rx.slots;
    rx.complete_idx = idx;
    activity_ = true;
}

// Tell producers about freed slots: the connected worker (ch0) its credit word (or, with nobody
// connected, the connection block for the next opener), the router feeding channel c >= 1 its
// upstream_credit word (credit_to_). A write that cannot go now (Blackhole: its staging line still
// being read) is retried on a later iteration.
ROUTER_HOT Status Router::credit_step() {
    // 1D: unrolled (constant offsets per channel); 2D: a loop up to the last dirty channel (nine
    // copies would not fit its code window).
#pragma GCC unroll kCreditUnroll
    for (uint32_t c = 0; c < kSenders; ++c) {
        if ((credit_dirty_ >> c) == 0) break;
        const uint32_t bit = 1u << c;
        if ((credit_dirty_ & bit) == 0) continue;
        const Sender& s = tx_[c];
        if (!credit_target(c)) {
            if (c == pf::kWorkerChannel) port_.record_freed(s.completed);
            credit_dirty_ &= ~bit;
            continue;
        }
        if constexpr (kPreparedCredits) {
            // Prepared for this target: setup_ports, or connection_step when the worker connected.
            HAL_TRY(noc_.send(credit_to_[c].write.get(), s.completed, kCreditTrid));
        } else {
            const fabric::NocWord to =
                c == pf::kWorkerChannel ? port_.credit_word() : credit_to_[c].word;
            const Status st_ = words_.write(to.x, to.y, to.addr, s.completed,
                                            kScratchCreditLine + 16 * credit_line(c));
            if (st_ == Status::Busy) continue;
            HAL_TRY(st_);
        }
        credit_dirty_ &= ~bit;
    }
    return Status::Ok;
}

// The ch0 connection block (fabric::WorkerPort): opens accepted, closes answered.
Status Router::connection_step() {
    fabric::WorkerPort::Event e;
    constexpr uint32_t kBit = 1u << pf::kWorkerChannel;
    bool dirty = (credit_dirty_ & kBit) != 0;
    Status s = port_.poll(words_, tx_[pf::kWorkerChannel].completed, dirty, e);
    credit_dirty_ = dirty ? credit_dirty_ | kBit : credit_dirty_ & ~kBit;
    if (kPreparedCredits && s == Status::Ok && e == fabric::WorkerPort::Event::Opened) {
        s = prepare_credit(pf::kWorkerChannel, port_.credit_word());
    }
    return s;
}

// Channel c's credits go to `to` from now on.
Status Router::prepare_credit(uint32_t c, const fabric::NocWord& to) {
    credit_to_[c].present = true;
    credit_to_[c].word = to;
    if constexpr (kPreparedCredits) {
        return noc_.prepare({.dst = {to.x, to.y, to.addr}}, credit_to_[c].write.get());
    }
    return Status::Ok;
}

// A link health event: it names the peer's end of the link.
ROUTER_COLD void Router::record_link(pf::RouterEventKind kind, uint32_t code) {
    events_.record(kind, g_config.peer_eth_channel, code, g_config.peer_chip_id);
}

// Link health, at the main loop's polls (link_watch.h): what the peer sent since the last poll
// (keep-alives, packets taken, completions) tells whether it is heard, the link status word
// whether the link is up; a change is an event. Our own keep-alive when it is due.
ROUTER_COLD void Router::link_step(uint32_t now) {
    const uint32_t alive = Streams::read(kPeerAlive);
    if (alive != 0) stream_add(kPeerAlive, -static_cast<int32_t>(alive));
    // What the peer sent us (packets we took, completions) and what we sent it (packets,
    // completions): each side's are the other's signs of life.
    uint32_t signs = rx_[0].taken + rx_[1].taken;
    uint32_t told = rx_[0].done + rx_[1].done;
    for (uint32_t c = 0; c < kSenders; ++c) {
        signs += tx_[c].completed;
        told += tx_[c].sent;
    }
    const bool heard = alive != 0 || signs != signs_;
    signs_ = signs;
    // A cut link's peer says nothing over it (a rerouted router's counts move without it).
    bool cut = false;
    if constexpr (kControl) cut = ctl_.get().cut != 0;
    const LinkChange change = cut ? LinkChange::None : peer_watch_.poll(now, heard);
    if (change == LinkChange::PeerSilent) {
        record_link(pf::RouterEventKind::PeerSilent, peer_watch_.quiet_cycles(now));
    } else if (change == LinkChange::PeerHeard) {
        record_link(pf::RouterEventKind::PeerHeard, peer_watch_.silent_for());
    }
    (void)link_down();
    // A keep-alive only when we sent the peer nothing else since the last one: on a link that
    // carries our traffic it would only delay the data (a frame and a TXQ0 command). None on a
    // link we cut: the peer must find it dead too (and cut it), not wait for our completions.
    if (cut) return;
    if (told != told_) {
        told_ = told;
        keep_alive_at_ = now;
    } else {
        keep_alive_if_due(now);
    }
}

// The Ethernet link status word (the base firmware's; the model keeps it current): whether the
// link is down now, a change recorded as an event.
bool Router::link_down() {
    const uint32_t word = ld(kA.link_status.addr);
    if (link_status_.poll(word) != LinkChange::None) {
        record_link(link_status_.up() ? pf::RouterEventKind::LinkUp : pf::RouterEventKind::LinkDown,
                    word);
    }
    return !link_status_.up();
}

// +1 on the peer's PeerAlive stream when kKeepAliveCycles have passed since the last, if TXQ0
// takes it at once (else at a later call).
void Router::keep_alive_if_due(uint32_t now) {
    if (now - keep_alive_at_ >= kKeepAliveCycles &&
        Eth::try_write_remote_reg(kTxq, Streams::update_reg_addr(kPeerAlive), kIncOne) ==
            Status::Ok) {
        keep_alive_at_ = now;
    }
}

// Timeouts (seeds/000 §7.3), at the same polls as link_step: a receiver channel whose head packet
// waits for a full port, with nothing of the channel taken, for stall_timeout_us is stalled:
// reported once (event Stalled); with StallAction::Drop that packet is dropped (bad_packet
// timeout) and so is every later one for that port until it has room again.
ROUTER_COLD void Router::stall_step(uint32_t now) {
    if (stall_cycles_ == 0) return;
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        Receiver& rx = rx_[r];
        Stall& st = stall_[r];
        pin_step(r, now);
        if (rx.blocked == 0 || rx.taken != st.taken) {
            st = {rx.taken, now, false};
            continue;
        }
        if (st.reported || now - st.since < stall_cycles_) continue;
        st.reported = true;
        const uint32_t slot = rx.take.addr;
        const bool noc = waits_for(0, rx);
        events_.record(pf::RouterEventKind::Stalled, r, noc ? pf::kStalledOnNoc : rx.blocked,
                       ld(slot + offsetof(pf::PacketHeader, seq)));
        bool drop = g_config.stall_action == static_cast<uint32_t>(pf::StallAction::Drop);
        if constexpr (kControl) drop = ctl_.get().stall_drop;
        if (!drop) continue;
        // What it waits for stalls (its full ports; 0: the NoC); take_general, at the channel's
        // next pass, drops it.
        for (uint32_t p = 0; p < kSenders; ++p) {
            if (waits_for(p, rx)) stalled_ports_ |= 1u << p;
        }
        rx.blocked = kRetake;
    }
    if ((stalled_ports_ & 1) != 0 && noc_.ready(deliver_)) stalled_ports_ &= ~1u;
    for (uint32_t p = 1; p < kSenders; ++p) {
        if ((stalled_ports_ >> p & 1) != 0 && !port_full(p)) stalled_ports_ &= ~(1u << p);
    }
}

// Receiver channel r's oldest packet not completed, its requests issued and not flushed for
// stall_timeout_us: its destination does not accept them (or not all of them). Its slot stays
// pinned (the NoC may still read it), and so does every later one (completions go in order), so
// it is reported once (NotAccepted: the destination core, its seq) for the host to cut the link;
// and again (Accepted) if it flushes after all.
ROUTER_COLD void Router::pin_step(uint32_t r, uint32_t now) {
    const Receiver& rx = rx_[r];
    Pin& pin = pin_[r];
    for (uint32_t idx = 0; pin.abandoned != 0 && idx < rx.slots; ++idx) {
        const uint32_t bit = 1u << idx;
        if ((pin.abandoned & bit) == 0 || !noc_.trid_flushed(rx.trid[idx])) continue;
        if ((pin.armed & bit) != 0) {  // its writes went: now its atomic, then it is delivered
            if (noc_.ready(deliver_) && issue_armed(r, idx, rx.trid[idx]) == Status::Ok)
                pin.armed &= ~bit;
            continue;
        }
        pin.abandoned &= ~bit;
        events_.record(pf::RouterEventKind::Accepted, r, 0,
                       ld(rx.base + idx * slot_bytes_ + offsetof(pf::PacketHeader, seq)));
    }
    const bool pinned = rx.done != rx.taken && !noc_.trid_flushed(rx.trid[rx.complete_idx]);
    if (pinned && rx.done == pin.done) {
        if (pin.reported || now - pin.since < stall_cycles_) return;
        const uint32_t slot = rx.base + rx.complete_idx * slot_bytes_;
        static_assert(offsetof(pf::PacketHeader, cmd.write.dst.x) == 4 &&
                      offsetof(pf::PacketHeader, cmd.atomic.dst.x) == 4 &&
                      offsetof(pf::PacketHeader, cmd.scatter.dst[0].x) == 4);
        pin.reported = true;
        pin.seq = ld(slot + offsetof(pf::PacketHeader, seq));
        events_.record(pf::RouterEventKind::NotAccepted, r, ld(slot + 4) & 0xFFFF, pin.seq);
        return;
    }
    if (pin.reported) events_.record(pf::RouterEventKind::Accepted, r, 0, pin.seq);
    pin = {rx.done, now, false, 0, pin.abandoned, pin.armed};
}

// A cut link takes no more packets into r's slots: a pinned packet reported NotAccepted
// completes without its requests (the host counts it dropped unless Accepted follows), so the
// ones behind it can. Its slot keeps its header while the link stays cut.
ROUTER_COLD void Router::abandon_pinned(uint32_t r) {
    Receiver& rx = rx_[r];
    Pin& pin = pin_[r];
    if (!pin.reported || rx.done != pin.done || rx.done == rx.taken) return;
    const uint32_t idx = rx.complete_idx;
    if constexpr (kControl) {
        const uint32_t src = rx.src[idx];
        if (src < kSenders) ctl_.get().acked[src] += 1;
    }
    const uint32_t bit = 1u << idx;
    const uint32_t armed = pin.armed | (rx.armed & bit);
    rx.armed &= ~bit;
    complete(rx, 1);
    pin = {rx.done, hal::wall_clock_lo(), false, 0, pin.abandoned | bit, armed};
}

// A delivery does not leave (its buffer busy) or one reported not accepted has not flushed: a
// NoC barrier would wait for it.
bool Router::noc_stuck() const {
    for (const Pin& p : pin_) {
        if (p.reported || p.abandoned != 0) return true;
    }
    return !noc_.ready(deliver_);
}

// A packet reported NotAccepted holds its receiver channel's slots.
bool Router::delivery_pinned() const {
    for (const Pin& p : pin_) {
        if (p.reported) return true;
    }
    return false;
}

// ---- control (README.md "Control") --------------------------------------------------------------

// Stall timeouts for control word `ctl`: as configured (Run); none while paused (a paused
// fabric is not stalled); while draining every packet that waits kRouterDrainHoldUs (or the
// configured time, if shorter) for a port is dropped, as Drained. Each channel's watch starts
// again.
[[gnu::always_inline]] inline void Router::set_stall(uint32_t ctl) {
    const StallRule rule = stall_rule(g_config, ctl);
    if constexpr (kControl) {
        Control& k = ctl_.get();
        k.stall_drop = rule.drop;
        k.stall_why = rule.why;
        for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) stall_[r].taken = rx_[r].taken - 1;
    }
    stall_cycles_ = static_cast<uint32_t>(hal::us_to_cycles(kA, rule.us));
}

// At a poll whose control word, state or cut link is not Run's. Returns the channels the main
// loop serves (`senders` | `receivers` << 16): none while paused or once the link is cut.
//   Pause  the main loop neither takes nor sends; here what was taken completes and the peer's
//          completions are taken (credits, announcements, the connection block, heartbeat and
//          link watch go on in the main loop); reached once nothing taken is unfinished. Leaving
//          it, the MeshRouterConfig is read again (the host may have changed the tables).
//   Drain  stalls drop (set_stall); a dead link is cut (cut_step from then on, whatever the word
//          says), and so is one whose packets a destination does not accept (delivery_pinned:
//          the peer then finds it silent and cuts it too); reached at once, or on a cut link once
//          everything is reported.
ROUTER_COLD uint32_t Router::control_step() {
    constexpr uint32_t kPause = static_cast<uint32_t>(pf::RouterControl::Pause);
    constexpr uint32_t kDrain = static_cast<uint32_t>(pf::RouterControl::Drain);
    constexpr uint32_t kReroute = static_cast<uint32_t>(pf::RouterControl::Reroute);
    Control& k = ctl_.get();
    const uint32_t ctl = control_word(ld(kControlWord));
    if (ctl != k.word) {
        if (k.word == kPause) Topology::read_own_config(g_mesh, kFixed.mesh_config);
        k.word = ctl;
        k.reached = false;
        set_stall(ctl);
    }
    if (cuts_link(ctl, k.cut != 0, link_dead() || delivery_pinned())) {
        k.cut = 1;
        // Reached again once the cut link's packets are settled, so the report's `taken` counts
        // (the host's exactly-once decisions) are published after them.
        k.reached = false;
        report_store(offsetof(pf::RouterControlReport, state), pf::kControlStateSettling);
        report_store(offsetof(pf::RouterControlReport, cut), 1);
        // Packets sent and not announced stay so: the peer must not take them (they are Unacked).
        for (PeerRx& p : peer_rx_) p.unannounced = 0;
    }
    const bool idle = loop_idle(ctl, k.cut != 0);
    if (idle) {
        for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
            if (rx_[r].slots != 0) (void)completion_walk(r);
        }
    }
    if (k.cut != 0) {
        // Cut by a drain, or held for the host's order, or rerouted (a drain drops what is left).
        if (ctl == kDrain || (!k.rerouted && ctl != kReroute)) {
            // (Rerouted: what went to the fallback is the fallback's to deliver or report, once
            // it has landed there.)
            if (!k.rerouted || forwards_landed()) cut_step();
        } else if (!k.answered) {
            apply_order();
        } else if (k.rerouted && ctl != kPause) {
            rerouted_step(ctl);
        }
    } else if (ctl == kPause) {
        for (uint32_t c = 0; c < kSenders; ++c) {
            const uint32_t n = tx_[c].slots != 0 ? Streams::read(completed_id(c)) : 0;
            if (n != 0) (void)sender_completions(c, n);
        }
    }
    link_mask_ = ctl != 0 || k.cut != 0 ? kPollEvery - 1 : kPollEvery * kLinkPollBusy - 1;
    // (After the steps: a link uncut here is served from this pass on.)
    if (!k.reached && !(idle && unfinished() != 0)) reached(ctl);
    return loop_idle(ctl, k.cut != 0) ? 0 : k.senders | k.receivers << 16;
}

// The state of control word `ctl` is reached: counters published, then the state reported.
ROUTER_COLD void Router::reached(uint32_t ctl) {
    ctl_.get().reached = true;
    publish();
    report_store(offsetof(pf::RouterControlReport, state), ctl);
    events_.record(pf::RouterEventKind::State, 0, static_cast<uint32_t>(control_event(ctl)), 0);
}

// A cut link: taken packets complete here (send_completions counts them sent); a packet sent on
// the link and never completed is reported Unacked with its position on its channel, then
// freed; every packet pushed into a sender channel is dropped (Drained) and freed. Each report
// only while the event log has room (the rest at later polls: none is lost).
void Router::cut_step() {
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (rx_[r].slots == 0) continue;
        abandon_pinned(r);
        (void)completion_walk(r);
    }
    for (uint32_t c = 0; c < kSenders; ++c) {
        Sender& s = tx_[c];
        if (s.slots == 0) continue;
        uint32_t pushed = Streams::read(pushed_id(c));
        while ((s.completed != s.sent || pushed != 0) && events_.has_room()) {
            const bool unacked = s.completed != s.sent;
            // The slot of packet `completed`: `sent - completed` slots before `next`.
            const uint32_t slot =
                slot_before(s.base, s.end, s.next.addr, s.sent - s.completed, slot_bytes_);
            const uint32_t seq = ld(slot + offsetof(pf::PacketHeader, seq));
            if (unacked) {
                events_.record(pf::RouterEventKind::Unacked, c, s.completed, seq);
            } else {
                events_.record(pf::RouterEventKind::Unsent, c,
                               static_cast<uint32_t>(BadPacket::Drained), seq);
                s.next.advance(s.base, s.end, slot_bytes_);
                ++s.sent;
                --pushed;
                stream_add(pushed_id(c), -1);
            }
            ++s.completed;
            credit_dirty_ |= 1u << c;
            activity_ = true;
        }
    }
    publish_held();
}

// The host's RerouteOrder, once written: each sender channel's unacked packets the peer took
// complete, the rest are sent again over the fallback, in order, with everything after them.
// What landed here from the peer and was not taken is dropped: the peer sends it again the same
// way. Refused (RerouteState::Refused, nothing changed) without a fallback port for some channel
// or with a count outside a channel's unacked packets.
ROUTER_COLD_WINDOW void Router::apply_order() {
    const uint32_t order = pf::router_reroute_order(g_layout);
    if (ld(order + offsetof(pf::RerouteOrder, magic)) != pf::kRerouteOrderMagic) return;
    Control& k = ctl_.get();
    k.answered = true;
    bool ok = Topology::kReroutes;
    // Checked for every channel first, then applied: a refused order changes nothing.
    for (uint32_t pass = 0; pass < 2; ++pass) {
        for (uint32_t c = 0; c < kSenders && ok; ++c) {
            Sender& s = tx_[c];
            if (s.slots == 0) continue;
            const Resume r = resume_channel(s.completed, s.sent, ld(order + 4 * c));
            ok = r.ok && port(topology_.fallback_port(c)).slots != 0;
            if (pass == 0 || !ok) continue;
            s.next.addr = slot_before(s.base, s.end, s.next.addr, r.resend, slot_bytes_);
            s.completed += r.complete;
            s.sent = s.completed;
            (void)Streams::reset(completed_id(c), 0);
            stream_add(pushed_id(c), static_cast<int32_t>(r.resend));
            credit_dirty_ |= 1u << c;
        }
        if (!ok) {
            report_store(offsetof(pf::RouterControlReport, reroute),
                         static_cast<uint32_t>(pf::RerouteState::Refused));
            return;
        }
    }
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (rx_[r].slots != 0) (void)Streams::reset(rx_sent_id(r), 0);
    }
    k.rerouted = true;
    activity_ = true;
    report_store(offsetof(pf::RouterControlReport, reroute),
                 static_cast<uint32_t>(pf::RerouteState::Applied));
    events_.record(pf::RouterEventKind::State, 0, static_cast<uint32_t>(RouterStatus::Rerouted), 0);
}

// Rerouted: every sender channel's packets go, in order, into the fallback's channel as they are
// (header and payload; the fallback sends them on as its own), while it has room. A slot frees
// once its forward has landed (forwards_landed).
// Rerouted: the forwards into the fallback have all landed (their transaction ID is flushed:
// nothing else of ours uses it on a cut link), and their slots are completed; false while some
// are on their way.
ROUTER_COLD bool Router::forwards_landed() {
    if (!noc_.trid_flushed(kPushedTrid)) return false;
    for (uint32_t c = 0; c < kSenders; ++c) {
        if (tx_[c].sent == tx_[c].completed) continue;
        tx_[c].completed = tx_[c].sent;
        credit_dirty_ |= 1u << c;
        activity_ = true;
    }
    return true;
}

ROUTER_COLD void Router::reroute_step() {
    if constexpr (!Topology::kReroutes) return;  // (never rerouted: apply_order refuses)
    (void)forwards_landed();
    for (uint32_t c = 0; c < kSenders; ++c) {
        Sender& s = tx_[c];
        if (s.slots == 0) continue;
        const uint32_t fb = topology_.fallback_port(c);
        const uint32_t pushed = Streams::read(pushed_id(c));
        uint32_t n = 0;
        Noc::Batch batch(noc_);
        while (n < pushed && !port_full(fb)) {
            const uint32_t slot = s.next.addr;
            topology_.before_send(c, slot);
            uint32_t bytes = ld(slot + 4 * kHdrMetaWord) & 0xFFFF;
            if (bytes > limits_.payload_bytes) bytes = limits_.payload_bytes;
            if (forward(fb, slot, bytes, kPushedTrid, batch) != Status::Ok) break;
            s.next.advance(s.base, s.end, slot_bytes_);
            ++n;
        }
        if (n == 0) continue;
        stream_add(pushed_id(c), -static_cast<int32_t>(n));
        s.sent += n;
        activity_ = true;
    }
}

// A rerouted router: Rejoin takes the link back (rejoin_step); Run once that is done uncuts it;
// otherwise its traffic goes on over the fallback.
ROUTER_COLD void Router::rerouted_step(uint32_t ctl) {
    if constexpr (!Topology::kReroutes) return;  // (never rerouted: apply_order refuses)
    if (ctl == static_cast<uint32_t>(pf::RouterControl::Rejoin)) return rejoin_step();
    if (ctl == static_cast<uint32_t>(pf::RouterControl::Run) && ctl_.get().rejoined) return uncut();
    reroute_step();
}

// Rejoin (the link is up again): nothing more goes to the fallback; once every forward there has
// landed, our marker goes on the link behind all we sent on it before the cut; once the peer's
// has landed (all it sent before the cut with it: the link keeps order and loses nothing) and
// everything taken from it is completed, the link's state starts again (restart_link). Reached
// then (RouterStatus::Rejoined); the host's Run uncuts the link.
void Router::rejoin_step() {
    Control& k = ctl_.get();
    if (k.rejoined || !forwards_landed()) return;
    if (!k.marked) {
        k.marked = Eth::try_write_remote_reg(kTxq, Streams::update_reg_addr(kPeerRejoin),
                                             kIncOne) == Status::Ok;
    }
    uint32_t open = 0;
    for (const Receiver& rx : rx_) open += rx.taken - rx.done;
    if (!rejoin_ready(k.marked, Streams::read(kPeerRejoin), open)) return;
    restart_link();
    k.rejoined = true;
    report_store(offsetof(pf::RouterControlReport, reroute),
                 static_cast<uint32_t>(pf::RerouteState::Rejoined));
}

// The link's state as after the handshake: both ends do this before either sends again, and
// everything each sent before lies behind its marker, so nothing old is counted in the new.
// The free-running counts go on (the host's accounting and a later RerouteOrder use them).
void Router::restart_link() {
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        Receiver& rx = rx_[r];
        rx.take = {0, rx.base};
        rx.complete_idx = 0;
        rx.armed = 0;
        rx.blocked = 0;
        pin_[r] = {};  // (an abandoned packet still not flushed stays counted dropped)
        (void)Streams::reset(rx_sent_id(r), 0);
        PeerRx& p = peer_rx_[r];
        p.next.addr = p.base;
        p.room = p.slots;
        p.unannounced = 0;
    }
#pragma GCC unroll 1
    for (uint32_t c = 0; c < kSenders; ++c) (void)Streams::reset(completed_id(c), 0);
    (void)Streams::reset(kPeerRejoin, 0);
    // A later Reroute waits for a new order.
    st(pf::router_reroute_order(g_layout) + offsetof(pf::RerouteOrder, magic), 0);
}

// Run after Rejoin: the link carries the traffic again, watched as after start-up.
void Router::uncut() {
    Control& k = ctl_.get();
    k.cut = 0;
    k.rerouted = k.answered = k.marked = k.rejoined = false;
    report_store(offsetof(pf::RouterControlReport, cut), 0);
    report_store(offsetof(pf::RouterControlReport, reroute),
                 static_cast<uint32_t>(pf::RerouteState::None));
    peer_watch_ = PeerWatch{kPeerSilentCycles, hal::wall_clock_lo()};
    keep_alive_at_ = hal::wall_clock_lo() - kKeepAliveCycles;
}

// RouterControlReport::held: what this router has not finished. On a cut link the packets it
// still has to decide (pushed, sent and not reported Unacked, taken and not completed; what landed
// from the peer is the peer's to report, as Unacked); otherwise everything undrained.
uint32_t Router::held() {
    uint32_t n = undrained();
    if (ctl_.get().cut == 0) return n;
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (rx_[r].slots != 0) n -= Streams::read(rx_sent_id(r));
    }
    return n;
}

// Nothing pushed and unsent, everything sent completed, nothing landed and untaken, every taken
// packet completed, every forward's Pushed +1 landed.
bool Router::drained() const {
    return undrained() == 0;
}

// What a pause or a drain waits for: packets taken and not completed, and sent packets not
// announced (a cut link: not completed; they are reported Unacked). A rejoin: the link's restart.
uint32_t Router::unfinished() {
    const Control& k = ctl_.get();
    const uint32_t cut = k.cut;
    uint32_t n = k.word == static_cast<uint32_t>(pf::RouterControl::Rejoin) && !k.rejoined;
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        n += rx_[r].taken - rx_[r].done + (cut != 0 ? 0 : peer_rx_[r].unannounced);
    }
    // (Held for a reroute, the sent packets wait for the host's order, which needs this state.)
    const bool holding = k.word == static_cast<uint32_t>(pf::RouterControl::Reroute);
    for (uint32_t c = 0; c < kSenders && cut != 0 && !holding; ++c)
        n += tx_[c].sent - tx_[c].completed;
    return n;
}

uint32_t Router::undrained() const {
    uint32_t n = 0;
    for (uint32_t c = 0; c < kSenders; ++c) {
        if (tx_[c].slots == 0) continue;
        n += Streams::read(pushed_id(c)) + (tx_[c].sent - tx_[c].completed);
    }
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (rx_[r].slots == 0) continue;
        n += Streams::read(rx_sent_id(r)) + (rx_[r].taken - rx_[r].done);
    }
    // A forward whose Pushed +1 has not landed (its core stopped accepting a while): its slot is
    // completed here and not yet seen there, so it would be in nobody's count.
    if (!noc_.trid_flushed(kPushedTrid)) ++n;
    return n;
}

int Router::finish(uint32_t undrained_packets) {
    sb_store(SB_OFF(undrained), undrained_packets);
    return stop(RouterStatus::Terminated, RouterWait::None, 0);
}

// Immediate termination: take nothing new; let the NoC settle (bounded), return the credits of
// what was delivered, tell producers, stop.
int Router::terminate_immediate() {
    RouterWait where = RouterWait::None;
    // Not long for a delivery that does not leave: the host's watch would find the router stuck
    // (what it pins is left undrained).
    const uint32_t settle_us = noc_stuck() ? kDeliveryWaitUs : g_config.progress_timeout_us;
    if (noc_.full_barrier(hal::Deadline::after_us(kA, settle_us)) != Status::Ok)
        where = RouterWait::NocFlush;
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (rx_[r].slots == 0) continue;
        // Armed atomics are dropped (their writes are flushed; the slot completes without them).
        Receiver& rx = rx_[r];
        rx.armed = 0;
        const hal::Deadline d = hal::Deadline::after_us(kA, settle_us);
        while (rx.done != rx.taken && !d.expired()) {
            if (completion_walk(r) != Status::Ok) break;
        }
    }
    // (Not on a cut link: its unfinished packets were reported Unacked and completed there.)
    for (uint32_t c = 0; c < kSenders && ctl_.get().cut == 0; ++c) {
        if (tx_[c].slots == 0) continue;
        if (const uint32_t n = Streams::read(completed_id(c)); n != 0)
            (void)sender_completions(c, n);
    }
    // Packets already sent but not yet announced: announce them (bounded), so the peer can take
    // what is in its slots rather than count it undrained.
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (peer_rx_[r].unannounced == 0) continue;
        if (Eth::wait_idle(kTxq, progress_deadline()) == Status::Ok) (void)announce(r);
    }
    (void)credit_step();
    const uint32_t left = undrained();
    sb_store(SB_OFF(undrained), left);
    publish();
    sb_store(SB_OFF(stuck_at), static_cast<uint32_t>(where));
    sb_store(SB_OFF(status), static_cast<uint32_t>(RouterStatus::Terminated));
    return 0;
}

// ---- the router from start to end -------------------------------------------------------------

// Start-up, then the main loop until the host's termination word or an error ends it.
int Router::run() {
    if (const int rc = start_up(); rc != kGoOn) return rc;
    return main_loop();
}

// Start-up (README.md "Start-up"), stage by stage, each recorded in the status block.
int Router::start_up() {
    if (const int rc = check_config_words(); rc != kGoOn) return rc;
    if (const int rc = init_channels(); rc != kGoOn) return rc;
    if (const int rc = handshake(); rc != kGoOn) return rc;
    if (const int rc = wait_ready(); rc != kGoOn) return rc;
    return connect_ports();
}

// Read and check the config. Status words first, so the host sees this router alive even if the
// config is bad.
int Router::check_config_words() {
    load_struct(g_config, kFixed.config);
    Topology::read_own_config(g_mesh, kFixed.mesh_config);
    g_layout = pf::router_layout(kA, g_config);
    limits_.payload_bytes = g_config.payload_bytes;
    slot_bytes_ = g_layout.slot_bytes;
    for (uint32_t off = 0; off < sizeof(pf::RouterStatusBlock); off += 4) sb_store(off, 0);
    events_.reset();
    set_stage(RouterStatus::Started);
    if (const ConfigCheck bad = check_config<Topology>(g_config, g_layout, g_mesh);
        bad != ConfigCheck::None) {
        return stop(RouterStatus::ConfigInvalid, RouterWait::None, static_cast<uint32_t>(bad));
    }
    set_stage(RouterStatus::ConfigChecked);
    topology_.set_up(g_config, &g_mesh, g_layout.exit_table);
    return kGoOn;
}

// Streams and the words others write into our L1, before the peer can send anything (it can only
// send after our handshake answer) and before any producer is allowed in (ready); then our
// channels' state from the config.
int Router::init_channels() {
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) (void)Streams::reset(rx_sent_id(r), 0);
    for (uint32_t c = 0; c < kSenders; ++c) {
        (void)Streams::reset(completed_id(c), 0);
        (void)Streams::reset(pushed_id(c), 0);
        st(kFixed.upstream_credit[c], 0);
    }
    (void)Streams::reset(kPeerDrained, 0);
    (void)Streams::reset(kPeerAlive, 0);
    (void)Streams::reset(kPeerRejoin, 0);
    port_.reset(g_layout.connection, kScratchCreditLine, kScratchTeardownLine);
    port_.publish_line(pf::line_info(g_config, g_mesh));
    for (uint32_t off = 0; off < 64; off += 4) st(g_layout.handshake_in + off, 0);
    Status s = Eth::set_accept_ahead(kTxq);
    if (s == Status::Ok) s = noc_.init();
    if (s != Status::Ok) return stop_hal(s, RouterWait::None);
    for (uint32_t c = 0; c < kSenders; ++c) {
        tx_[c].base = g_layout.sender_base[c];
        tx_[c].slots = g_config.sender_slots[c];
        tx_[c].end = tx_[c].base + tx_[c].slots * slot_bytes_;
        tx_[c].peer = &peer_rx_[(Topology::is_vc1(c) || g_config.dateline != 0) ? 1 : 0];
        tx_[c].next.addr = tx_[c].base;
    }
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        peer_rx_[r].announce_reg = Streams::update_reg_addr(rx_sent_id(r));
        rx_[r].base = g_layout.receiver_base[r];
        rx_[r].slots = g_config.receiver_slots[r];
        rx_[r].take.addr = rx_[r].base;
        // rx0 alone (no rx1 slots: a line) has both channels' IDs.
        const uint32_t ids =
            g_config.receiver_slots[1] == 0 ? pf::kNumReceiverChannels * kTridsPerRx : kTridsPerRx;
        rx_[r].first_id = r * kTridsPerRx;
        rx_[r].next_id = rx_[r].first_id;
        rx_[r].end_id = rx_[r].first_id + ids;
        rx_[r].trid.fill(rx_[r].first_id);
    }
    set_stage(RouterStatus::StreamsInitialized);
    return kGoOn;
}

// Once the host says ready (every router of the chip configured): the ports into the other
// routers of the chip, and the delivery writes' prepared request.
int Router::connect_ports() {
    if (const ConfigCheck bad = setup_ports(); bad != ConfigCheck::None) {
        return stop(RouterStatus::ConfigInvalid, RouterWait::None, static_cast<uint32_t>(bad));
    }
    const Status s = noc_.prepare({.vc = kDeliverVc, .ready_wait_us = kDeliveryWaitUs}, deliver_);
    if (s != Status::Ok) return stop_hal(s, RouterWait::None);
    set_stage(RouterStatus::ReadyForTraffic);
    return kGoOn;
}

// The main loop (README.md "Main loop"): every pass the steps that have work, every kPollEvery
// passes the L1 words (heartbeat, termination, the worker's connection block), the counters when
// due; while draining, the drain's progress. It ends with the router.
int Router::main_loop() {
    Status s = Status::Ok;
    // Active channels (a bit each), so the loop does not poll streams nothing feeds. The loops
    // below are unrolled over the fixed channel numbers: each stream ID and state offset is then
    // a constant, not an index read from a stack array and multiplied on every pass.
    // (1D: at the end of a line nothing can push into ch1/ch2: two stream reads a pass saved.)
    uint32_t senders = 0;
    for (uint32_t c = 0; c < kSenders; ++c) {
        const bool fed = Topology::fed(c, g_config);
        if (tx_[c].slots != 0 && tx_[c].peer->slots != 0 && fed) senders |= 1u << c;
    }
    uint32_t receivers = 0;
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (rx_[r].slots != 0) receivers |= 1u << r;
    }

    const bool worker_channel = tx_[pf::kWorkerChannel].slots != 0;
    bool draining = false;
    bool told_peer = false;
    uint32_t idle_passes = kPublishIdle;  // consecutive idle iterations, up to kPublishIdle
    hal::Deadline drain_deadline = hal::Deadline::at_cycle(0);
    uint64_t quiet_since = 0;
    uint32_t* heartbeat = sb(SB_OFF(heartbeat));
    keep_alive_at_ = hal::wall_clock_lo();
    set_stall(0);
    if constexpr (kControl) {
        ctl_.get().senders = senders;
        ctl_.get().receivers = receivers;
    }
    for (uint32_t off = 0; kControl && off < sizeof(pf::RouterControlReport); off += 4)
        report_store(off, 0);
    peer_watch_ = PeerWatch(kPeerSilentCycles, keep_alive_at_);
    while (true) {
        ++iterations_;
        // The L1 words (heartbeat, termination, connection block) every kPollEvery passes.
        const bool poll = (iterations_ % kPollEvery) == 0;
        if (poll) {
            hal::mmio::store_shared(heartbeat, iterations_);
            const uint32_t t = term_value();
            if (t == static_cast<uint32_t>(pf::Termination::Immediate))
                return terminate_immediate();
            if (t == static_cast<uint32_t>(pf::Termination::Graceful) && !draining) {
                draining = true;
                drain_deadline = hal::Deadline::after_us(kA, g_config.drain_timeout_us);
                set_stage(RouterStatus::Draining);
            }
            // Link health at the polls of an idle router, and every kLinkPollBusy polls of a busy
            // one (its traffic is the peer's sign of life; a peer that stops soon leaves it
            // idle). Not while draining: a peer that finished first is silent, and rightly so.
            // The control word is read there too (a busy router reacts within 128 passes, a few
            // us; at every poll while the word or the state is not Run: link_mask_): another L1
            // load at every poll cost the data path 1.3 % (docs/PERFORMANCE.md).
            if (!draining && (idle_passes == kPublishIdle || (iterations_ & link_mask_) == 0)) {
                const uint32_t now = hal::wall_clock_lo();
                link_step(now);
                stall_step(now);
                if constexpr (kControl) {
                    if ((ld(kControlWord) | ctl_.get().word | ctl_.get().cut) != 0) {
                        // By value, not by reference: the masks stay in registers in the loop.
                        const uint32_t masks = control_step();
                        senders = masks & 0xFFFF;
                        receivers = masks >> 16;
                    }
                }
            }
        }
        // Each step is called only when its cheap test (a stream register, a field on the stack)
        // says it has work: an idle pass is a few register reads, not a few function calls
        // saving and restoring registers.
        // Completions of taken packets first: small, and a producer waits for each slot, so they
        // go on TXQ0 ahead of our own data (which would hold it for a 4 KiB packet's frames) and
        // ahead of a landed batch's takes (2 KiB: a batch's last packet, not flushed when the
        // batch ended, would otherwise go back only after the next batch).
#pragma GCC unroll 2
        for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
            if ((receivers & (1u << r)) == 0) continue;
            s = r == 0 ? completion_step<0>() : completion_step<1>();
            if (s != Status::Ok) return stop_hal(s, RouterWait::NocCmdBuf);
        }
        // Channel c's completions, then its sends: Ok, or what failed and where.
        struct Failed {
            Status s;
            RouterWait where;
        };
        const auto serve_sender = [this](uint32_t c) __attribute__((always_inline)) {
            if (const uint32_t n = Streams::read(completed_id(c)); n != 0) {
                const Status st = sender_completions(c, n);
                if (st != Status::Ok) return Failed{st, RouterWait::NocCmdBuf};
            }
            // Nothing pushed: nothing to send (unannounced packets go in the announce loop below).
            const uint32_t pushed = Streams::read(pushed_id(c));
            if (pushed == 0) return Failed{Status::Ok, RouterWait::None};
            return Failed{sender_step(c, pushed), RouterWait::EthTxq};
        };
#pragma GCC unroll 9
        for (uint32_t c = 0; c < kUnrolledSenders; ++c) {
            if ((senders & (1u << c)) == 0) continue;
            if (const Failed f = serve_sender(c); f.s != Status::Ok) return stop_hal(f.s, f.where);
        }
        // The rest share one copy, looked at only when one of them is active (a mesh of one mesh
        // has none).
        if ((senders >> kUnrolledSenders) != 0) {
#pragma GCC unroll 1
            for (uint32_t c = kUnrolledSenders; c < kSenders; ++c) {
                if ((senders & (1u << c)) == 0) continue;
                if (const Failed f = serve_sender(c); f.s != Status::Ok)
                    return stop_hal(f.s, f.where);
            }
        }
        // Sent packets no sender step announced (nothing more to send): announce them now.
#pragma GCC unroll 2
        for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
            if (peer_rx_[r].unannounced == 0) continue;
            s = announce(r);
            if (s != Status::Ok && s != Status::Busy) return stop_hal(s, RouterWait::EthTxq);
        }
#pragma GCC unroll 2
        for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
            if ((receivers & (1u << r)) == 0) continue;
            const uint32_t landed = Streams::read(rx_sent_id(r));
            s = landed != 0 ? receiver_step(r, landed) : Status::Ok;
            if (s != Status::Ok) return stop_hal(s, RouterWait::NocCmdBuf);
        }
        s = credit_dirty_ != 0 ? credit_step() : Status::Ok;
        if (s == Status::Ok && worker_channel && poll) s = connection_step();
        if (s != Status::Ok) return stop_hal(s, RouterWait::NocCmdBuf);
        // Counters: every kPublishEvery iterations, busy or not (`held` changes without traffic
        // too: packets pushed or landed that wait for room), and once kPublishIdle iterations in
        // a row were idle after any activity, so a quiescent fabric's status blocks are exact
        // (the host's graceful termination waits for them to balance). Not on the first idle
        // pass: under load a sender sees idle passes between packets, and a publish is ~17 L1
        // stores.
        if (activity_) {
            activity_ = false;
            idle_passes = 0;
        } else if (idle_passes < kPublishIdle && ++idle_passes == kPublishIdle) {
            publish();
        }
        if ((iterations_ % kPublishEvery) == 0) publish();
        if (!draining) continue;

        // Graceful: once quiet for a while, tell the peer; stop when it has said so too and we
        // are still drained, or when the link is down. A drain that does not finish in time still
        // ends Terminated, with what was left in `undrained`.
        const uint64_t now = hal::wall_clock();
        if (!drained()) {
            quiet_since = 0;
        } else {
            if (quiet_since == 0) quiet_since = now;
            const bool quiet =
                now - quiet_since >= hal::us_to_cycles(kA, hal::timeouts::kFabricDrainQuietUs);
            if (!told_peer && quiet &&
                Eth::try_write_remote_reg(kTxq, Streams::update_reg_addr(kPeerDrained), kIncOne) ==
                    Status::Ok) {
                told_peer = true;
            }
            if (told_peer && Streams::read(kPeerDrained) != 0) {
                // Our own last completions/credits must have left: let the TX queue latch.
                (void)Eth::wait_idle(kTxq, progress_deadline());
                return finish(0);
            }
            // A dead link brings no word from the peer (and its TX queue, stuck, may not even
            // take ours): drained and quiet is all we can know.
            if (quiet && link_down()) return finish(0);
        }
        if (drain_deadline.passed_at(now)) {
            sb_store(SB_OFF(stuck_at), static_cast<uint32_t>(RouterWait::Drain));
            (void)credit_step();
            return finish(undrained());
        }
    }
}

}  // namespace

int main() {
    Router router;  // on the stack: local data RAM (see the note above g_config)
    return router.run();
}
