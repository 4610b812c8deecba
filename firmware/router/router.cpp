// The 1D fabric router (protocol/fabric.h is the contract; README.md beside this file is the
// design). One instance per Ethernet link core:
//
//   start-up   read + check RouterConfig, zero the streams and the router's L1 words, handshake
//              with the peer (LinkParams must agree), wait for the host's ready word
//   main loop  non-blocking steps, each iteration: heartbeat, termination word, every sender
//              channel (completions, then one Ethernet send), every receiver channel (take one
//              packet: deliver and/or forward; then in-order completions), producer credits, the
//              ch0 worker connection, graceful-drain bookkeeping
//   exit       Terminated (immediate or graceful, `undrained` says what was left) or an error
//              status with `stage`, `stuck_at` and `detail`
//
// Nothing waits without a deadline: the main loop only polls, and the few inner waits (TX queue
// latch between a data packet and its credit, NoC flush at exit) are bounded by the config's
// progress_timeout_us and record where they gave up.
#include <stddef.h>
#include <stdint.h>

#include "hal/arch.h"
#include "hal/clock.h"
#include "hal/eth.h"
#include "hal/mmio.h"
#include "hal/noc.h"
#include "hal/status.h"
#include "hal/stream.h"
#include "hal/timeouts.h"
#include "hal/wait.h"
#include "protocol/fabric.h"

namespace {

namespace pf = protocol::fabric;
using hal::Status;
using pf::RouterStatus;
using pf::RouterWait;
using Noc = hal::Noc<hal::kArch>;
using Eth = hal::Eth<hal::kArch>;
using Streams = hal::Streams<hal::kArch>;
constexpr const hal::ArchMap& kA = hal::kArch;

// TXQ0: the only queue that carries remote register writes (credits), so data goes there too and
// each credit lands after the data it announces.
constexpr hal::EthTxq kTxq = hal::EthTxq::Q0;

// Per-channel slot state lives in fixed arrays: a config with more slots is refused.
constexpr uint32_t kMaxSlots = 32;
// Receiver slot s of rx r tags its NoC requests with trid r * 7 + s % 7 (slots 7 apart share an
// ID, which only makes a flush check conservative). IDs 14 and 15 stay free: 14 tags the staged
// credit/teardown writes so their staging words can be reused safely.
constexpr uint32_t kTridsPerRx = 7;
constexpr uint32_t kCreditTrid = pf::kNumReceiverChannels * kTridsPerRx;
static_assert(kCreditTrid <= hal::noc::kMaxTransactionId);
// Counters are copied to the status block every this many busy iterations (and when the router
// goes idle, and at exit).
constexpr uint32_t kPublishEvery = 256;

// The fixed part of the layout (everything before the slots) does not depend on the config.
constexpr pf::RouterLayout kFixed = pf::router_layout(kA, pf::RouterConfig{});
static_assert(kFixed.upstream_credit[1] % 16 == 0 && kFixed.upstream_credit[2] % 16 == 0);
static_assert(kFixed.scratch % 16 == 0);

// Router-private scratch (RouterLayout::scratch, four 16-B lines). A staged NoC write needs its
// source congruent with its destination mod 16, so a staging line holds its word at the
// destination's offset within the line. Line c (0..2) stages the credit of sender channel c
// (ch1/ch2 credits go to 16-B aligned words: offset 0), line 3 the worker's teardown word; the
// non-posted atomics' old values land in line 1 at +8, which no staged write reads.
constexpr uint32_t kScratchCreditLine = 0;  // + 16 * channel
constexpr uint32_t kScratchTeardownLine = 48;
constexpr uint32_t kScratchAtomicReturn = 16 + 8;

constexpr uint32_t kIncOne = Streams::encode_delta(1).value;
static_assert(Streams::encode_delta(1).ok());

constexpr hal::StreamId kRxSent[pf::kNumReceiverChannels] = {
    Streams::id<pf::kStreamRxSent0>(), Streams::id<pf::kStreamRxSent0 + 1>()};
constexpr hal::StreamId kCompleted[pf::kNumSenderChannels] = {
    Streams::id<pf::kStreamCompleted0>(), Streams::id<pf::kStreamCompleted0 + 1>(),
    Streams::id<pf::kStreamCompleted0 + 2>()};
constexpr hal::StreamId kPushed[pf::kNumSenderChannels] = {
    Streams::id<pf::kStreamPushed0>(), Streams::id<pf::kStreamPushed0 + 1>(),
    Streams::id<pf::kStreamPushed0 + 2>()};
constexpr hal::StreamId kPeerDrained = Streams::id<pf::kStreamPeerDrained>();

// Why a config was refused (RouterStatusBlock::detail with status ConfigInvalid).
enum class ConfigCheck : uint32_t {
    Magic = 1,
    Version = 2,
    Topology = 3,
    PayloadBytes = 4,
    SenderSlots = 5,
    ReceiverSlots = 6,
    Dateline = 7,
    Downstream = 8,
    Timeouts = 9,
    Layout = 10,
    IsMaster = 11,
    DownstreamConfig = 12,  // the downstream router's config does not match ours (read at ready)
};

// Why a packet was dropped (RouterStatusBlock::detail, last one; status stays as it was).
enum class BadPacket : uint32_t {
    Magic = 0x100,
    SendType = 0x101,
    PayloadBytes = 0x102,
    Route = 0x103,
    Target = 0x104,      // destination coordinates or address range
    Scatter = 0x105,     // chunk count or sizes
    NoDownstream = 0x106,  // a forward on a router without a downstream channel
    SrcChannel = 0x107,  // src_channel is not a sender channel (its credit cannot be returned)
};

// Fields of a PacketHeader word-addressed in L1.
constexpr uint32_t kHdrWords = sizeof(pf::PacketHeader) / 4;
constexpr uint32_t kHdrMetaWord = offsetof(pf::PacketHeader, payload_bytes) / 4;  // bytes|type|src
constexpr uint32_t kHdrRouteWord = offsetof(pf::PacketHeader, route) / 4;
static_assert(offsetof(pf::PacketHeader, payload_bytes) == 40 && offsetof(pf::PacketHeader, send_type) == 42 &&
              offsetof(pf::PacketHeader, src_channel) == 43);

uint32_t ld(uint32_t addr) {
    return hal::mmio::load_shared(hal::mmio::l1_ptr<const uint32_t>(addr));
}
void st(uint32_t addr, uint32_t value) {
    hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(addr), value);
}
// A struct and its words. Copies between L1 and a struct go word by word through the union
// (GCC defines reading the other member): a memcpy would be a call to picolibc's byte loop,
// ~6 instructions per byte (the router reads a 64-B header per packet).
template <typename T>
union Words {
    static_assert(sizeof(T) % 4 == 0);
    T s;
    uint32_t w[sizeof(T) / 4];
};
template <typename T>
void load_struct(T& out, uint32_t addr) {
    Words<T> u;
    for (uint32_t i = 0; i < sizeof(T) / 4; ++i) u.w[i] = ld(addr + 4 * i);
    out = u.s;
}
template <typename T>
void store_struct(uint32_t addr, const T& in) {
    Words<T> u;
    u.s = in;
    for (uint32_t i = 0; i < sizeof(T) / 4; ++i) st(addr + 4 * i, u.w[i]);
}

// Stream deltas here are at most a channel's slot count, always inside the counter's range.
void stream_add(hal::StreamId s, int32_t delta) {
    (void)Streams::add(s, delta);
}

constexpr uint32_t align16(uint32_t v) {
    return (v + 15) & ~15u;
}

// A destination a packet may name: a core coordinate and an L1/MMIO range below the NoC's
// register window of the target (the model and silicon refuse anything above).
bool target_ok(const pf::NocTarget& t, uint32_t bytes, uint32_t align) {
    return hal::noc::coord_ok(t.x) && hal::noc::coord_ok(t.y) && t.addr % align == 0 &&
           static_cast<uint64_t>(t.addr) + bytes <= hal::noc::kMmioStart;
}

struct PendingAtomic {  // an atomic issued once the slot's writes are flushed
    pf::NocTarget dst;
    uint32_t value;
    uint32_t armed;
};

// Per-slot state of the receiver channels. Touched once per packet, so it lives in L1 (.bss);
// the Router itself, read on every iteration, lives on the stack in the local data RAM (2-cycle
// loads instead of L1's 7: the loop reads dozens of its fields per pass).
struct RxSlotState {
    uint8_t src[kMaxSlots];  // src_channel per slot; 0xFF: no completion to send
    PendingAtomic pending[kMaxSlots];
};
RxSlotState g_rx_slots[pf::kNumReceiverChannels];

class Router {
  public:
    int run();

  private:
    // ---- state ----
    struct Sender {  // one of our sender channels
        uint32_t base = 0;
        uint32_t slots = 0;  // 0 = unused
        uint32_t rx = 0;     // the peer receiver channel it sends into
        uint32_t sent = 0;   // free-running
        uint32_t completed = 0;  // free-running; also the producer's "freed"
        bool credit_dirty = false;
    };
    struct PeerRx {  // a receiver channel of the peer, as our senders see it
        uint32_t base = 0;
        uint32_t slots = 0;
        uint32_t next = 0;      // packets sent into it (free-running): next slot = next % slots
        uint32_t inflight = 0;  // sent and not completed
    };
    struct Receiver {  // one of our receiver channels
        uint32_t base = 0;
        uint32_t slots = 0;
        uint32_t taken = 0;  // packets taken (free-running)
        uint32_t done = 0;   // completions sent
    };
    struct Downstream {  // the router on this chip that continues the line
        bool present = false;
        uint32_t x = 0, y = 0;
        uint32_t base[pf::kNumSenderChannels] = {};
        uint32_t slots[pf::kNumSenderChannels] = {};
        uint32_t pushed[pf::kNumSenderChannels] = {};  // packets written into its channel
    };
    struct Worker {  // the ch0 connection
        bool connected = false;
        uint32_t x = 0, y = 0, credit_addr = 0, teardown_addr = 0;
    };

    // ---- start-up ----
    uint32_t check_config() const;
    int handshake();
    bool peer_msg(pf::HandshakeMsg& m, uint32_t is_reply) const;
    pf::LinkParams my_params() const;
    int wait_ready();
    uint32_t setup_downstream();

    // ---- main loop steps ----
    Status sender_step(uint32_t c);
    void sender_completions(uint32_t c);
    Status receiver_step(uint32_t r);
    Status completion_step(uint32_t r);
    Status deliver(const pf::PacketHeader& h, uint32_t slot, uint32_t trid, PendingAtomic& pend);
    uint32_t validate(const pf::PacketHeader& h, uint32_t action, uint32_t fwd_ch) const;
    Status credit_step();
    Status connection_step();
    Status write_remote_word(uint32_t x, uint32_t y, uint32_t addr, uint32_t value, uint32_t line);
    bool drained() const;
    uint32_t undrained() const;
    int terminate_immediate();
    int finish(uint32_t undrained_packets);

    // ---- status ----
    void set_stage(RouterStatus s);
    void publish();
    int stop(RouterStatus s, RouterWait where, uint32_t detail);
    int stop_hal(Status s, RouterWait where);
    uint32_t* sb(uint32_t offset) const { return hal::mmio::l1_ptr<uint32_t>(l_.status + offset); }
    void sb_store(uint32_t offset, uint32_t v) { hal::mmio::store_shared(sb(offset), v); }
    const uint32_t* term() const { return hal::mmio::l1_ptr<const uint32_t>(l_.termination); }
    uint32_t term_value() const { return hal::mmio::load_shared(term()); }
    hal::Deadline progress_deadline() const {
        return hal::Deadline::after_us(kA, c_.progress_timeout_us);
    }
    uint32_t trid(uint32_t r, uint32_t slot) const { return r * kTridsPerRx + slot % kTridsPerRx; }

    pf::RouterConfig c_{};
    pf::RouterLayout l_{};
    Noc noc_{hal::NocId::Noc0, {.atomic_return_l1_addr = kFixed.scratch + kScratchAtomicReturn}};
    Sender tx_[pf::kNumSenderChannels];
    PeerRx peer_rx_[pf::kNumReceiverChannels];
    Receiver rx_[pf::kNumReceiverChannels];
    Downstream ds_;
    Worker worker_;
    uint32_t bad_packets_ = 0;
    uint32_t delivered_ = 0;
    uint32_t forwarded_ = 0;
    uint32_t iterations_ = 0;
    bool activity_ = false;  // a step moved a packet or a credit in this iteration
};

// ---- status ----------------------------------------------------------------------------------

#define SB_OFF(field) static_cast<uint32_t>(offsetof(pf::RouterStatusBlock, field))

void Router::set_stage(RouterStatus s) {
    sb_store(SB_OFF(stage), static_cast<uint32_t>(s));
    sb_store(SB_OFF(status), static_cast<uint32_t>(s));
}

void Router::publish() {
    sb_store(SB_OFF(bad_packets), bad_packets_);
    for (uint32_t c = 0; c < pf::kNumSenderChannels; ++c) {
        sb_store(SB_OFF(sent) + 4 * c, tx_[c].sent);
        sb_store(SB_OFF(completed) + 4 * c, tx_[c].completed);
    }
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        sb_store(SB_OFF(received) + 4 * r, rx_[r].taken);
    }
    sb_store(SB_OFF(delivered), delivered_);
    sb_store(SB_OFF(forwarded), forwarded_);
    sb_store(SB_OFF(main_loop_iterations), iterations_);
}

// Stop with an error or end state. The exit code is the low byte of the status (0 = Terminated).
int Router::stop(RouterStatus s, RouterWait where, uint32_t detail) {
    publish();
    sb_store(SB_OFF(stuck_at), static_cast<uint32_t>(where));
    sb_store(SB_OFF(detail), detail);
    sb_store(SB_OFF(status), static_cast<uint32_t>(s));
    return s == RouterStatus::Terminated ? 0 : static_cast<int>(static_cast<uint32_t>(s) & 0xFF);
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

uint32_t Router::check_config() const {
    const auto bad = [](ConfigCheck c) { return static_cast<uint32_t>(c); };
    if (c_.magic != pf::kRouterConfigMagic) return bad(ConfigCheck::Magic);
    if (c_.version != pf::kProtocolVersion) return bad(ConfigCheck::Version);
    if (c_.topology != static_cast<uint32_t>(pf::Topology::Line) &&
        c_.topology != static_cast<uint32_t>(pf::Topology::Ring)) {
        return bad(ConfigCheck::Topology);
    }
    if (c_.payload_bytes == 0 || c_.payload_bytes % 16 != 0 ||
        c_.payload_bytes > pf::max_payload_bytes(kA)) {
        return bad(ConfigCheck::PayloadBytes);
    }
    for (uint32_t s : c_.sender_slots) {
        if (s > kMaxSlots) return bad(ConfigCheck::SenderSlots);
    }
    if (c_.receiver_slots[0] == 0 || c_.receiver_slots[0] > kMaxSlots ||
        c_.receiver_slots[1] > kMaxSlots) {
        return bad(ConfigCheck::ReceiverSlots);
    }
    // Traffic into rx1 (a dateline link, or ch2) needs an rx1.
    if ((c_.dateline != 0 || c_.sender_slots[2] != 0) && c_.receiver_slots[1] == 0) {
        return bad(ConfigCheck::Dateline);
    }
    if (c_.dateline > 1) return bad(ConfigCheck::Dateline);
    if (c_.has_downstream > 1 || (c_.has_downstream != 0 && (!hal::noc::coord_ok(c_.downstream_x) ||
                                                            !hal::noc::coord_ok(c_.downstream_y)))) {
        return bad(ConfigCheck::Downstream);
    }
    if (c_.handshake_timeout_us == 0 || c_.ready_timeout_us == 0 || c_.drain_timeout_us == 0 ||
        c_.progress_timeout_us == 0) {
        return bad(ConfigCheck::Timeouts);
    }
    if (!l_.fits) return bad(ConfigCheck::Layout);
    if (c_.is_master > 1) return bad(ConfigCheck::IsMaster);
    return 0;
}

pf::LinkParams Router::my_params() const {
    pf::LinkParams p{};
    p.version = c_.version;
    p.topology = c_.topology;
    p.payload_bytes = c_.payload_bytes;
    p.receiver_slots[0] = c_.receiver_slots[0];
    p.receiver_slots[1] = c_.receiver_slots[1];
    p.chip_id = c_.chip_id;
    p.eth_channel = c_.eth_channel;
    p.expect_chip = c_.peer_chip_id;
    return p;
}

// The first LinkParams field (0-based, declaration order) in which the peer disagrees with us,
// or -1. Identity is checked both ways: the peer is who we expect, and it expects us.
int mismatch(const pf::LinkParams& mine, const pf::LinkParams& peer, uint32_t peer_channel) {
    if (peer.version != mine.version) return 0;
    if (peer.topology != mine.topology) return 1;
    if (peer.payload_bytes != mine.payload_bytes) return 2;
    if (peer.receiver_slots[0] != mine.receiver_slots[0]) return 3;
    if (peer.receiver_slots[1] != mine.receiver_slots[1]) return 4;
    if (peer.chip_id != mine.expect_chip) return 5;
    if (peer.eth_channel != peer_channel) return 6;
    if (peer.expect_chip != mine.chip_id) return 7;
    return -1;
}

// HandshakeMismatch detail beyond the LinkParams fields: both ends were configured as master.
constexpr uint32_t kMismatchBothMasters = 8;

uint32_t msg_check(const pf::HandshakeMsg& m) {
    return m.magic ^ m.params.chip_id ^ m.params.payload_bytes;
}

// A whole message from the peer in handshake_in (magic, kind and check word agree).
bool Router::peer_msg(pf::HandshakeMsg& m, uint32_t is_reply) const {
    if (ld(l_.handshake_in) != pf::kHandshakeMagic) {
        return false;
    }
    load_struct(m, l_.handshake_in);
    return m.is_reply == is_reply && m.check == msg_check(m) && m.rx_base != 0;
}

// Master: repeat our message into the peer's handshake_in until its reply lands in ours.
// Subordinate: wait for the master's message, answer once. Both compare LinkParams and stop with
// HandshakeMismatch (detail: the field) rather than wait for credits that cannot come.
int Router::handshake() {
    set_stage(RouterStatus::Handshaking);
    const pf::LinkParams mine = my_params();
    pf::HandshakeMsg out{};
    out.magic = pf::kHandshakeMagic;
    out.is_reply = c_.is_master != 0 ? 0 : 1;
    out.rx_base = l_.receiver_base[0];
    out.params = mine;
    out.check = msg_check(out);
    const hal::Deadline deadline = hal::Deadline::after_us(kA, c_.handshake_timeout_us);
    pf::HandshakeMsg in{};
    int field = -1;
    if (c_.is_master != 0) {
        store_struct(l_.handshake_out, out);
        bool sent_once = false;
        uint64_t next_send = 0;
        while (!peer_msg(in, 1)) {
            if (term_value() != hal::kKeepRunning) return finish(0);
            if (peer_msg(in, 0)) {  // the peer is a master too: nobody would ever answer
                return stop(RouterStatus::HandshakeMismatch, RouterWait::None, kMismatchBothMasters);
            }
            const uint64_t now = hal::wall_clock();
            if (now >= next_send && Eth::try_send(kTxq, l_.handshake_out, l_.handshake_in,
                                                  sizeof out) == Status::Ok) {
                sent_once = true;
                next_send = now + hal::us_to_cycles(kA, hal::timeouts::kFabricHandshakeResendUs);
            }
            if (deadline.passed_at(now)) {
                return stop(RouterStatus::Timeout,
                            sent_once ? RouterWait::HandshakeReply : RouterWait::HandshakeSend, 0);
            }
        }
        field = mismatch(mine, in.params, c_.peer_eth_channel);
        if (field < 0 && in.agree != 1) {
            field = static_cast<int>(in.mismatch);  // the field the subordinate objected to
        }
    } else {
        const Status s = hal::wait_until([&] { return peer_msg(in, 0); }, deadline, term());
        if (s != Status::Ok) return stop_hal(s, RouterWait::HandshakeSend);
        field = mismatch(mine, in.params, c_.peer_eth_channel);
        out.agree = field < 0 ? 1 : 0;
        out.mismatch = field < 0 ? 0 : static_cast<uint32_t>(field);
        store_struct(l_.handshake_out, out);
        const Status r = Eth::send(kTxq, l_.handshake_out, l_.handshake_in, sizeof out, deadline, term());
        if (r != Status::Ok) return stop_hal(r, RouterWait::HandshakeReply);
    }
    sb_store(SB_OFF(peer_chip), in.params.chip_id);
    sb_store(SB_OFF(peer_channel), in.params.eth_channel);
    if (field >= 0) {
        return stop(RouterStatus::HandshakeMismatch, RouterWait::None, static_cast<uint32_t>(field));
    }
    // Where our packets land in the peer (its sender slot counts may differ from ours).
    const uint32_t slot_bytes = l_.slot_bytes;
    peer_rx_[0].base = in.rx_base;
    peer_rx_[1].base = in.rx_base + c_.receiver_slots[0] * slot_bytes;
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) peer_rx_[r].slots = c_.receiver_slots[r];
    set_stage(RouterStatus::HandshakeComplete);
    return -1;
}

// Wait for the host's ready word; the termination word ends the router instead.
int Router::wait_ready() {
    const Status s = hal::wait_until([&] { return ld(l_.ready) == pf::kReadyMagic; },
                                     hal::Deadline::after_us(kA, c_.ready_timeout_us), term());
    if (s != Status::Ok) return stop_hal(s, RouterWait::ReadyWord);
    return -1;
}

// The downstream router's slot layout, from its config (written by the host before any router
// started). Returns a ConfigCheck code, 0 if fine.
uint32_t Router::setup_downstream() {
    ds_.present = c_.has_downstream != 0;
    if (!ds_.present) return 0;
    ds_.x = c_.downstream_x;
    ds_.y = c_.downstream_y;
    // Its config's words 8..15 (payload_bytes .. dateline) into our (now idle) handshake_out.
    constexpr uint32_t kFrom = offsetof(pf::RouterConfig, payload_bytes);
    static_assert(kFrom % 16 == 0);
    Status s = noc_.read({ds_.x, ds_.y, kFixed.config + kFrom}, l_.handshake_out, 32);
    if (s == Status::Ok) s = noc_.read_barrier(progress_deadline(), term());
    if (s != Status::Ok) return static_cast<uint32_t>(ConfigCheck::DownstreamConfig);
    pf::RouterConfig dc{};
    dc.payload_bytes = ld(l_.handshake_out);
    for (uint32_t i = 0; i < pf::kNumSenderChannels; ++i) dc.sender_slots[i] = ld(l_.handshake_out + 4 + 4 * i);
    for (uint32_t i = 0; i < pf::kNumReceiverChannels; ++i) dc.receiver_slots[i] = ld(l_.handshake_out + 16 + 4 * i);
    if (dc.payload_bytes != c_.payload_bytes) return static_cast<uint32_t>(ConfigCheck::DownstreamConfig);
    const pf::RouterLayout dl = pf::router_layout(kA, dc);
    for (uint32_t ch = 1; ch < pf::kNumSenderChannels; ++ch) {
        if (dc.sender_slots[ch] > kMaxSlots) return static_cast<uint32_t>(ConfigCheck::DownstreamConfig);
        ds_.base[ch] = dl.sender_base[ch];
        ds_.slots[ch] = dc.sender_slots[ch];
    }
    return 0;
}

// ---- the data path ---------------------------------------------------------------------------

// Completions from the peer for channel c free our slots and the peer's receiver slots.
void Router::sender_completions(uint32_t c) {
    Sender& s = tx_[c];
    const uint32_t n = Streams::read(kCompleted[c]);
    if (n == 0) return;
    stream_add(kCompleted[c], -static_cast<int32_t>(n));
    activity_ = true;
    s.completed += n;
    peer_rx_[s.rx].inflight -= n;
    s.credit_dirty = true;
}

// Send the oldest pushed packet of channel c if the peer's receiver has a free slot and TXQ0 is
// free: the data packet, then +1 on the peer's rx_sent stream behind it on the same queue.
Status Router::sender_step(uint32_t c) {
    Sender& s = tx_[c];
    sender_completions(c);
    if (Streams::read(kPushed[c]) == 0) return Status::Ok;
    PeerRx& p = peer_rx_[s.rx];
    if (p.inflight >= p.slots || Eth::is_busy(kTxq)) return Status::Ok;
    const uint32_t slot = s.base + (s.sent % s.slots) * l_.slot_bytes;
    const uint32_t meta_addr = slot + 4 * kHdrMetaWord;
    const uint32_t meta = ld(meta_addr);
    uint32_t bytes = meta & 0xFFFF;
    if (bytes > c_.payload_bytes) bytes = c_.payload_bytes;  // the receiver drops it as bad
    st(meta_addr, (meta & 0x00FFFFFF) | (c << 24));           // src_channel
    const uint32_t dst = p.base + (p.next % p.slots) * l_.slot_bytes;
    HAL_TRY(Eth::try_send(kTxq, slot, dst, sizeof(pf::PacketHeader) + align16(bytes)));
    const uint32_t reg = Streams::update_reg_addr(kRxSent[s.rx]);
    Status r = Eth::try_write_remote_reg(kTxq, reg, kIncOne);
    if (r == Status::Busy) r = Eth::write_remote_reg(kTxq, reg, kIncOne, progress_deadline());
    HAL_TRY(r);
    stream_add(kPushed[c], -1);
    activity_ = true;
    ++s.sent;
    ++p.next;
    ++p.inflight;
    return Status::Ok;
}

// The header checks of a packet this router acts on with `action` (forwarding into the
// downstream's channel `fwd_ch`).
uint32_t Router::validate(const pf::PacketHeader& h, uint32_t action, uint32_t fwd_ch) const {
    const auto bad = [](BadPacket b) { return static_cast<uint32_t>(b); };
    if (h.magic != pf::kHeaderMagic) return bad(BadPacket::Magic);
    if (h.src_channel >= pf::kNumSenderChannels) return bad(BadPacket::SrcChannel);
    if (h.send_type >= static_cast<uint8_t>(pf::NocSendType::kCount)) return bad(BadPacket::SendType);
    if (h.payload_bytes > c_.payload_bytes) return bad(BadPacket::PayloadBytes);
    if (action == static_cast<uint32_t>(pf::HopAction::Invalid)) return bad(BadPacket::Route);
    const bool fwd = action == static_cast<uint32_t>(pf::HopAction::Forward) ||
                     action == static_cast<uint32_t>(pf::HopAction::WriteAndForward);
    if (fwd && (h.route >> 2) == 0) return bad(BadPacket::Route);  // forwarded with nothing to do
    if (fwd && (!ds_.present || ds_.slots[fwd_ch] == 0)) return bad(BadPacket::NoDownstream);
    if (action == static_cast<uint32_t>(pf::HopAction::Forward)) return 0;
    const uint32_t bytes = h.payload_bytes;
    switch (static_cast<pf::NocSendType>(h.send_type)) {
        case pf::NocSendType::UnicastWrite:
            return bytes != 0 && target_ok(h.cmd.write.dst, bytes, 16) ? 0 : bad(BadPacket::Target);
        case pf::NocSendType::InlineWrite:
            return target_ok(h.cmd.inline_write.dst, 4, 4) ? 0 : bad(BadPacket::Target);
        case pf::NocSendType::AtomicInc:
            return target_ok(h.cmd.atomic.dst, 4, 4) ? 0 : bad(BadPacket::Target);
        case pf::NocSendType::FusedWriteAtomicInc:
            return bytes != 0 && target_ok(h.cmd.fused.dst, bytes, 16) && target_ok(h.cmd.fused.sem, 4, 4)
                       ? 0
                       : bad(BadPacket::Target);
        case pf::NocSendType::ScatterWrite: {
            const pf::ScatterWriteCmd& sc = h.cmd.scatter;
            if (sc.chunk_count < 2 || sc.chunk_count > pf::kScatterMaxChunks) return bad(BadPacket::Scatter);
            uint32_t sum = 0;
            for (uint32_t i = 0; i + 1 < sc.chunk_count; ++i) {
                // Each chunk starts 16-B aligned in the slot, so every size but the last is a
                // multiple of 16; the last is the rest and must not be empty.
                if (sc.chunk_bytes[i] == 0 || sc.chunk_bytes[i] % 16 != 0) return bad(BadPacket::Scatter);
                if (!target_ok(sc.dst[i], sc.chunk_bytes[i], 16)) return bad(BadPacket::Target);
                sum += sc.chunk_bytes[i];
            }
            if (sum >= bytes) return bad(BadPacket::Scatter);
            return target_ok(sc.dst[sc.chunk_count - 1], bytes - sum, 16) ? 0 : bad(BadPacket::Target);
        }
        default:
            return bad(BadPacket::SendType);
    }
}

// Execute the packet's NoC command on this chip. Atomics that must follow flushed writes are
// armed in `pend` and issued by completion_step once the slot is the oldest and flushed.
Status Router::deliver(const pf::PacketHeader& h, uint32_t slot, uint32_t id, PendingAtomic& pend) {
    const uint32_t payload = slot + sizeof(pf::PacketHeader);
    const uint32_t bytes = h.payload_bytes;
    const hal::NocWriteOpts wo{.trid = id};
    const hal::NocAtomicOpts ao{.trid = id};
    const auto to = [](const pf::NocTarget& t) { return hal::NocAddr{t.x, t.y, t.addr}; };
    switch (static_cast<pf::NocSendType>(h.send_type)) {
        case pf::NocSendType::UnicastWrite:
            return noc_.write(payload, to(h.cmd.write.dst), bytes, wo);
        case pf::NocSendType::InlineWrite: {
            // Staged in the slot's payload area (ours until the slot completes): one path on both
            // arches, as Blackhole cannot take inline writes to L1.
            const pf::NocTarget& d = h.cmd.inline_write.dst;
            const uint32_t src = payload + d.addr % 16;
            st(src, h.cmd.inline_write.value);
            return noc_.write(src, to(d), 4, wo);
        }
        case pf::NocSendType::AtomicInc:
            if (h.cmd.atomic.flush != 0) {
                pend = {h.cmd.atomic.dst, h.cmd.atomic.value, 1};
                return Status::Ok;
            }
            return noc_.atomic_inc(to(h.cmd.atomic.dst), h.cmd.atomic.value, ao);
        case pf::NocSendType::FusedWriteAtomicInc:
            HAL_TRY(noc_.write(payload, to(h.cmd.fused.dst), bytes, wo));
            if (h.cmd.fused.flush != 0) {
                pend = {h.cmd.fused.sem, h.cmd.fused.value, 1};
                return Status::Ok;
            }
            return noc_.atomic_inc(to(h.cmd.fused.sem), h.cmd.fused.value, ao);
        case pf::NocSendType::ScatterWrite: {
            const pf::ScatterWriteCmd& sc = h.cmd.scatter;
            uint32_t off = 0;
            for (uint32_t i = 0; i < sc.chunk_count; ++i) {
                const uint32_t n = i + 1 < sc.chunk_count ? sc.chunk_bytes[i] : bytes - off;
                HAL_TRY(noc_.write(payload + off, to(sc.dst[i]), n, wo));
                off += n;
            }
            return Status::Ok;
        }
        default:
            return Status::BadArg;  // unreachable: validate() refused it
    }
}

// Take the next packet of rx r, if one has landed and (when it goes on) the downstream channel
// has a free slot: deliver it here and/or forward it, all NoC requests tagged with the slot's trid.
Status Router::receiver_step(uint32_t r) {
    Receiver& rx = rx_[r];
    if (Streams::read(kRxSent[r]) == 0) return Status::Ok;
    const uint32_t idx = rx.taken % rx.slots;
    const uint32_t slot = rx.base + idx * l_.slot_bytes;
    Words<pf::PacketHeader> hw;
    for (uint32_t i = 0; i < kHdrWords; ++i) hw.w[i] = ld(slot + 4 * i);
    const pf::PacketHeader& h = hw.s;
    const uint32_t action = h.route & 3;
    // rx0 continues on the downstream's ch1 (VC0), rx1 on its ch2 (VC1).
    const uint32_t ch = r == 0 ? 1 : 2;
    const uint32_t why = validate(h, action, ch);
    const uint32_t id = trid(r, idx);
    RxSlotState& ss = g_rx_slots[r];
    PendingAtomic& pend = ss.pending[idx];
    pend.armed = 0;
    if (why != 0) {
        ++bad_packets_;
        sb_store(SB_OFF(detail), why);
        ss.src[idx] = h.src_channel < pf::kNumSenderChannels ? h.src_channel : 0xFF;
    } else {
        const bool write = action == static_cast<uint32_t>(pf::HopAction::Write) ||
                           action == static_cast<uint32_t>(pf::HopAction::WriteAndForward);
        const bool fwd = action == static_cast<uint32_t>(pf::HopAction::Forward) ||
                         action == static_cast<uint32_t>(pf::HopAction::WriteAndForward);
        if (fwd) {
            const uint32_t credit = ld(kFixed.upstream_credit[ch]);
            if (ds_.pushed[ch] - credit >= ds_.slots[ch]) return Status::Ok;  // try again later
        }
        if (write) {
            HAL_TRY(deliver(h, slot, id, pend));
            ++delivered_;
        }
        if (fwd) {
            st(slot + 4 * kHdrRouteWord, h.route >> 2);
            const uint32_t dst = ds_.base[ch] + (ds_.pushed[ch] % ds_.slots[ch]) * l_.slot_bytes;
            HAL_TRY(noc_.write(slot, {ds_.x, ds_.y, dst}, sizeof(pf::PacketHeader) + align16(h.payload_bytes),
                               {.trid = id}));
            HAL_TRY(noc_.write_inline({ds_.x, ds_.y, Streams::update_reg_addr(kPushed[ch])}, kIncOne,
                                      {.trid = id}));
            ++ds_.pushed[ch];
            ++forwarded_;
        }
        ss.src[idx] = h.src_channel;
    }
    stream_add(kRxSent[r], -1);
    activity_ = true;
    ++rx.taken;
    return Status::Ok;
}

// Completions go back in order: the oldest unfinished slot, once its NoC requests are flushed,
// gets +1 on the peer's completion stream of its src_channel. Armed atomics (flush) are issued
// while walking forward over flushed slots (every earlier write of the channel is then flushed
// too), up to kCompletionLookahead slots ahead, so several can be in flight; a slot whose atomic
// was just issued completes once that is flushed as well.
constexpr uint32_t kCompletionLookahead = 8;

Status Router::completion_step(uint32_t r) {
    Receiver& rx = rx_[r];
    RxSlotState& ss = g_rx_slots[r];
    bool in_order = true;  // every slot before this one is complete
    for (uint32_t n = rx.done, walked = 0; n != rx.taken && walked < kCompletionLookahead; ++n, ++walked) {
        const uint32_t idx = n % rx.slots;
        const uint32_t id = trid(r, idx);
        if (!noc_.trid_flushed(id)) return Status::Ok;
        PendingAtomic& pend = ss.pending[idx];
        if (pend.armed != 0) {
            pend.armed = 0;
            HAL_TRY(noc_.atomic_inc({pend.dst.x, pend.dst.y, pend.dst.addr}, pend.value, {.trid = id}));
            in_order = false;
            continue;
        }
        if (!in_order) continue;
        if (ss.src[idx] < pf::kNumSenderChannels) {
            const Status s = Eth::try_write_remote_reg(kTxq, Streams::update_reg_addr(kCompleted[ss.src[idx]]), kIncOne);
            if (s == Status::Busy) {
                in_order = false;
                continue;
            }
            HAL_TRY(s);
        }
        activity_ = true;
        ++rx.done;
    }
    return Status::Ok;
}

// Write `value` to an L1 word of another core: inline where the arch allows it; on Blackhole
// (inline writes to L1 can hang) from staging line `line` of our scratch, Busy while that line's
// previous write has not been read (the caller retries on a later iteration).
Status Router::write_remote_word(uint32_t x, uint32_t y, uint32_t addr, uint32_t value, uint32_t line) {
    if constexpr (!kA.noc.inline_to_l1_unsafe) {
        (void)line;
        return noc_.write_inline({x, y, addr}, value, {.posted = true, .trid = kCreditTrid});
    } else {
        if (!noc_.trid_writes_sent(kCreditTrid)) return Status::Busy;
        const uint32_t src = l_.scratch + line + addr % 16;
        st(src, value);
        return noc_.write(src, {x, y, addr}, 4, {.posted = true, .trid = kCreditTrid});
    }
}

// Tell producers about freed slots: the connected worker (ch0) its credit word, the upstream
// router (ch1/ch2; it is our downstream too) its upstream_credit word.
Status Router::credit_step() {
    for (uint32_t c = 0; c < pf::kNumSenderChannels; ++c) {
        Sender& s = tx_[c];
        if (!s.credit_dirty) continue;
        Status st_ = Status::Ok;
        if (c == pf::kWorkerChannel) {
            if (!worker_.connected) {
                // No one to tell: the next opener reads `freed` from the connection block.
                st(l_.connection + offsetof(pf::WorkerConnectionInfo, freed), s.completed);
                s.credit_dirty = false;
                continue;
            }
            st_ = write_remote_word(worker_.x, worker_.y, worker_.credit_addr, s.completed, kScratchCreditLine);
        } else {
            if (!ds_.present) {
                s.credit_dirty = false;
                continue;
            }
            st_ = write_remote_word(ds_.x, ds_.y, kFixed.upstream_credit[c], s.completed,
                                    kScratchCreditLine + 16 * c);
        }
        if (st_ == Status::Busy) continue;
        HAL_TRY(st_);
        s.credit_dirty = false;
    }
    return Status::Ok;
}

// The ch0 connection block: a worker that wrote Open gets our freed count; one that asked to
// close gets `freed` recorded for the next opener, state Closed and its teardown word set to 1.
Status Router::connection_step() {
    const uint32_t info = l_.connection;
    const uint32_t state = ld(info + offsetof(pf::WorkerConnectionInfo, state));
    if (state == static_cast<uint32_t>(pf::ConnectionState::Open)) {
        if (worker_.connected) return Status::Ok;
        const uint32_t xy = ld(info + offsetof(pf::WorkerConnectionInfo, worker_xy));
        worker_.x = xy & 0xFFFF;
        worker_.y = xy >> 16;
        worker_.credit_addr = ld(info + offsetof(pf::WorkerConnectionInfo, credit_addr));
        worker_.teardown_addr = ld(info + offsetof(pf::WorkerConnectionInfo, teardown_addr));
        if (worker_.credit_addr % 4 != 0 || worker_.teardown_addr % 4 != 0 ||
            !hal::noc::coord_ok(worker_.x) || !hal::noc::coord_ok(worker_.y)) {
            return Status::Ok;  // not a usable connection: the worker's open never sees credits
        }
        worker_.connected = true;
        tx_[pf::kWorkerChannel].credit_dirty = true;
        return Status::Ok;
    }
    if (state != static_cast<uint32_t>(pf::ConnectionState::CloseRequested)) return Status::Ok;
    // The teardown word is staged on BH: wait (bounded) for the staging line to be free.
    if constexpr (kA.noc.inline_to_l1_unsafe) {
        if (!noc_.trid_writes_sent(kCreditTrid)) return Status::Ok;
    }
    const uint32_t xy = ld(info + offsetof(pf::WorkerConnectionInfo, worker_xy));
    const uint32_t teardown = ld(info + offsetof(pf::WorkerConnectionInfo, teardown_addr));
    // Last credit first (same NoC path, so it lands before the teardown word).
    if (worker_.connected && tx_[pf::kWorkerChannel].credit_dirty) {
        const Status s = write_remote_word(worker_.x, worker_.y, worker_.credit_addr,
                                           tx_[pf::kWorkerChannel].completed, kScratchCreditLine);
        if (s == Status::Busy) return Status::Ok;
        HAL_TRY(s);
        tx_[pf::kWorkerChannel].credit_dirty = false;
    }
    if constexpr (kA.noc.inline_to_l1_unsafe) {
        if (!noc_.trid_writes_sent(kCreditTrid)) return Status::Ok;
    }
    st(info + offsetof(pf::WorkerConnectionInfo, freed), tx_[pf::kWorkerChannel].completed);
    st(info + offsetof(pf::WorkerConnectionInfo, state), static_cast<uint32_t>(pf::ConnectionState::Closed));
    worker_.connected = false;
    if (teardown % 4 != 0 || !hal::noc::coord_ok(xy & 0xFFFF) || !hal::noc::coord_ok(xy >> 16)) {
        return Status::Ok;
    }
    return write_remote_word(xy & 0xFFFF, xy >> 16, teardown, 1, kScratchTeardownLine);
}

// Nothing pushed and unsent, everything sent completed, nothing landed and untaken, every taken
// packet completed.
bool Router::drained() const {
    return undrained() == 0;
}

uint32_t Router::undrained() const {
    uint32_t n = 0;
    for (uint32_t c = 0; c < pf::kNumSenderChannels; ++c) {
        if (tx_[c].slots == 0) continue;
        n += Streams::read(kPushed[c]) + (tx_[c].sent - tx_[c].completed);
    }
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (rx_[r].slots == 0) continue;
        n += Streams::read(kRxSent[r]) + (rx_[r].taken - rx_[r].done);
    }
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
    if (noc_.full_barrier(progress_deadline()) != Status::Ok) where = RouterWait::NocFlush;
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (rx_[r].slots == 0) continue;
        // Armed atomics are dropped (their writes are flushed; the slot completes without them).
        Receiver& rx = rx_[r];
        for (uint32_t i = 0; i < kMaxSlots; ++i) g_rx_slots[r].pending[i].armed = 0;
        const hal::Deadline d = progress_deadline();
        while (rx.done != rx.taken && !d.expired()) {
            if (completion_step(r) != Status::Ok) break;
        }
    }
    for (uint32_t c = 0; c < pf::kNumSenderChannels; ++c) {
        if (tx_[c].slots != 0) sender_completions(c);
    }
    (void)credit_step();
    const uint32_t left = undrained();
    sb_store(SB_OFF(undrained), left);
    publish();
    sb_store(SB_OFF(stuck_at), static_cast<uint32_t>(where));
    sb_store(SB_OFF(status), static_cast<uint32_t>(RouterStatus::Terminated));
    return 0;
}

int Router::run() {
    // Status words first, so the host sees this router alive even if the config is bad.
    load_struct(c_, kFixed.config);
    l_ = pf::router_layout(kA, c_);
    for (uint32_t off = 0; off < sizeof(pf::RouterStatusBlock); off += 4) sb_store(off, 0);
    set_stage(RouterStatus::Started);
    if (const uint32_t bad = check_config(); bad != 0) {
        return stop(RouterStatus::ConfigInvalid, RouterWait::None, bad);
    }
    set_stage(RouterStatus::ConfigChecked);

    // Streams and the words others write into our L1, before the peer can send anything (it can
    // only send after our handshake answer) and before any producer is allowed in (ready).
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) (void)Streams::reset(kRxSent[r], 0);
    for (uint32_t c = 0; c < pf::kNumSenderChannels; ++c) {
        (void)Streams::reset(kCompleted[c], 0);
        (void)Streams::reset(kPushed[c], 0);
        st(kFixed.upstream_credit[c], 0);
    }
    (void)Streams::reset(kPeerDrained, 0);
    for (uint32_t off = 0; off < sizeof(pf::WorkerConnectionInfo); off += 4) st(l_.connection + off, 0);
    for (uint32_t off = 0; off < 64; off += 4) st(l_.handshake_in + off, 0);
    Status s = Eth::set_accept_ahead(kTxq);
    if (s == Status::Ok) s = noc_.init();
    if (s != Status::Ok) return stop_hal(s, RouterWait::None);
    for (uint32_t c = 0; c < pf::kNumSenderChannels; ++c) {
        tx_[c].base = l_.sender_base[c];
        tx_[c].slots = c_.sender_slots[c];
        tx_[c].rx = (c == 2 || c_.dateline != 0) ? 1 : 0;
    }
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        rx_[r].base = l_.receiver_base[r];
        rx_[r].slots = c_.receiver_slots[r];
    }
    set_stage(RouterStatus::StreamsInitialized);

    if (const int rc = handshake(); rc >= 0) return rc;
    if (const int rc = wait_ready(); rc >= 0) return rc;
    if (const uint32_t bad = setup_downstream(); bad != 0) {
        return stop(RouterStatus::ConfigInvalid, RouterWait::None, bad);
    }
    set_stage(RouterStatus::ReadyForTraffic);

    // Active channels, so the loop does not poll streams nothing feeds.
    uint32_t senders[pf::kNumSenderChannels];
    uint32_t num_senders = 0;
    for (uint32_t c = 0; c < pf::kNumSenderChannels; ++c) {
        if (tx_[c].slots != 0 && peer_rx_[tx_[c].rx].slots != 0) senders[num_senders++] = c;
    }
    uint32_t receivers[pf::kNumReceiverChannels];
    uint32_t num_receivers = 0;
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (rx_[r].slots != 0) receivers[num_receivers++] = r;
    }

    const bool worker_channel = tx_[pf::kWorkerChannel].slots != 0;
    bool draining = false;
    bool told_peer = false;
    bool unpublished = false;
    hal::Deadline drain_deadline = hal::Deadline::at_cycle(0);
    uint64_t quiet_since = 0;
    uint32_t* heartbeat = sb(SB_OFF(heartbeat));
    while (true) {
        ++iterations_;
        hal::mmio::store_shared(heartbeat, iterations_);
        const uint32_t t = term_value();
        if (t == static_cast<uint32_t>(pf::Termination::Immediate)) return terminate_immediate();
        if (t == static_cast<uint32_t>(pf::Termination::Graceful) && !draining) {
            draining = true;
            drain_deadline = hal::Deadline::after_us(kA, c_.drain_timeout_us);
            sb_store(SB_OFF(status), static_cast<uint32_t>(RouterStatus::Draining));
            sb_store(SB_OFF(stage), static_cast<uint32_t>(RouterStatus::Draining));
        }
        for (uint32_t i = 0; i < num_senders; ++i) {
            s = sender_step(senders[i]);
            if (s != Status::Ok) return stop_hal(s, RouterWait::EthTxq);
        }
        for (uint32_t i = 0; i < num_receivers; ++i) {
            s = receiver_step(receivers[i]);
            if (s == Status::Ok) s = completion_step(receivers[i]);
            if (s != Status::Ok) return stop_hal(s, RouterWait::NocCmdBuf);
        }
        s = credit_step();
        if (s == Status::Ok && worker_channel) s = connection_step();
        if (s != Status::Ok) return stop_hal(s, RouterWait::NocCmdBuf);
        // Counters: every kPublishEvery iterations under load, and on the first idle iteration
        // after any activity, so a quiescent fabric's status blocks are exact (the host's
        // graceful termination waits for them to balance).
        if (activity_) {
            activity_ = false;
            unpublished = true;
            if ((iterations_ % kPublishEvery) == 0) publish();
        } else if (unpublished) {
            unpublished = false;
            publish();
        }
        if (!draining) continue;

        // Graceful: once quiet for a while, tell the peer; stop when it has said so too and we
        // are still drained. A drain that does not finish in time still ends Terminated, with
        // what was left in `undrained`.
        const uint64_t now = hal::wall_clock();
        if (!drained()) {
            quiet_since = 0;
        } else {
            if (quiet_since == 0) quiet_since = now;
            if (!told_peer && now - quiet_since >= hal::us_to_cycles(kA, hal::timeouts::kFabricDrainQuietUs) &&
                Eth::try_write_remote_reg(kTxq, Streams::update_reg_addr(kPeerDrained), kIncOne) == Status::Ok) {
                told_peer = true;
            }
            if (told_peer && Streams::read(kPeerDrained) != 0) {
                // Our own last completions/credits must have left: let the TX queue latch.
                (void)Eth::wait_idle(kTxq, progress_deadline());
                return finish(0);
            }
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
    Router router;  // on the stack: local data RAM (see RxSlotState)
    return router.run();
}
