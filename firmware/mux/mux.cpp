// The fabric mux (protocol/fabric_mux.h is the contract; README.md beside this file is the
// design and the no-starvation argument). Many clients, one router ch0 connection:
//
//   start-up   read + check MuxConfig, zero streams and connection blocks, wait (bounded) for the
//              router to be ReadyForTraffic, open the router's ch0 with the worker adapter
//   main loop  rounds: every full-size channel once (one packet each), header-only channels by
//              share, the clients' credits, every teardown_check_every rounds the connection
//              blocks, every round the termination word
//   exit       close the router connection (bounded), Terminated with `undrained` (graceful
//              drain that ran out of time, or immediate), or an error with stage/stuck_at/detail
//
// Built twice: fabric_mux, and fabric_mux_unfair (FABRIC_MUX_UNFAIR=1), a test-only copy of the
// old behaviour seeds/001 describes (a channel spins on the router's credit without bound and
// without looking at anything else; graceful termination waits for a full drain). The regression
// in tests/sim/mux_test.cpp must catch it.
#include <stddef.h>
#include <stdint.h>

#include "fabric/status_words.h"
#include "fabric/worker_adapter.h"
#include "fabric/worker_port.h"
#include "hal/arch.h"
#include "hal/clock.h"
#include "hal/mmio.h"
#include "hal/noc.h"
#include "hal/status.h"
#include "hal/stream.h"
#include "hal/wait.h"
#include "protocol/fabric.h"
#include "protocol/fabric_mux.h"

#ifndef FABRIC_MUX_UNFAIR
#define FABRIC_MUX_UNFAIR 0
#endif

namespace {

namespace pf = protocol::fabric;
using hal::Status;
using pf::RouterStatus;
using pf::RouterWait;
using Noc = hal::Noc<hal::kArch>;
using Streams = hal::Streams<hal::kArch>;
constexpr const hal::ArchMap& kA = hal::kArch;
constexpr bool kUnfair = FABRIC_MUX_UNFAIR != 0;

constexpr pf::MuxLayout kFixed = pf::mux_layout(kA, pf::MuxConfig{});
static_assert(kFixed.scratch % 16 == 0 && kFixed.client % 16 == 0);
// Transaction ID of the credit / teardown words to clients (the router connection uses
// FabricConnection::kTrid and its streams' kOddTrid / kHeaderTrid).
constexpr uint32_t kWordsTrid = 2;
static_assert(kWordsTrid != fabric::FabricConnection::kTrid &&
              kWordsTrid != fabric::FabricConnection::kOddTrid &&
              kWordsTrid != fabric::FabricConnection::kHeaderTrid);
// No full-size packet for this long: header-only channels are served freely (2 us, several router
// packet times at any size: a saturated full-size client never leaves its channel empty that long).
constexpr uint64_t kFullIdleCycles = 2'000;
// Packets a lone busy full-size channel may forward per visit, as long as the router has a free
// slot without waiting: it then pays the round's fixed costs once per few packets.
constexpr uint32_t kBurst = 4;
// Counters reach the status block every this many rounds (and at exit).
constexpr uint32_t kPublishEvery = 16;
static_assert(pf::kMuxStreamPushed0 + pf::kMuxMaxChannels <= hal::stream::kNumStreamsTensix);

uint32_t ld(uint32_t addr) {
    return hal::mmio::load_shared(hal::mmio::l1_ptr<const uint32_t>(addr));
}
void st(uint32_t addr, uint32_t value) {
    hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(addr), value);
}

// The host-written config, word by word (a struct copy would be a byte loop in picolibc).
pf::MuxConfig load_config() {
    union {
        pf::MuxConfig c;
        uint32_t w[sizeof(pf::MuxConfig) / 4];
    } u;
    for (uint32_t i = 0; i < sizeof(pf::MuxConfig) / 4; ++i) u.w[i] = ld(kFixed.config + 4 * i);
    return u.c;
}

hal::StreamId pushed_id(uint32_t c) {
    return Streams::make_id(pf::kMuxStreamPushed0 + c).value;
}

// A word that never asks to terminate: the final close of the router connection runs after the
// termination word was seen and must not be cut short by it (it is bounded by its deadline).
const uint32_t kKeepRunningWord = hal::kKeepRunning;

class Mux {
  public:
    explicit Mux(const pf::MuxConfig& c)
        : c_(c),
          l_(pf::mux_layout(kA, c)),
          router_(noc_, c.downstream, {l_.client, l_.client + 16, l_.client + 32}) {}
    int run();

  private:
    struct Channel {
        uint32_t base = 0;
        uint32_t slots = 0;
        uint32_t slot_bytes = 0;
        uint32_t payload_cap = 0;  // 0: header-only
        uint32_t idx = 0;          // slot of the next packet
        uint32_t addr = 0;
        uint32_t freed = 0;  // packets forwarded (or dropped) and read out of their slot
        fabric::WorkerPort port;
    };
    enum class Visit { Empty, Forwarded, Blocked, Failed };

    uint32_t check_config() const;
    int start();
    Visit visit(uint32_t c);
    Status forward(uint32_t c, uint32_t bytes);
    Status settle();
    void drop(uint32_t c, pf::MuxBadPacket why);
    void advance(Channel& ch);
    bool wait_router_slot();
    void round(uint64_t now);
    Status credits();
    Status connections();
    uint32_t undrained(uint32_t& mask) const;
    int finish(uint32_t left, uint32_t mask, RouterWait where);
    int stop(RouterStatus s, RouterWait where, uint32_t detail);

    void sb_store(uint32_t off, uint32_t v) { status_.store(off, v); }
    void set_stage(RouterStatus s) { status_.set_stage(s); }
    void publish();
    const uint32_t* term() const { return hal::mmio::l1_ptr<const uint32_t>(l_.termination); }
    hal::Deadline progress_deadline() const {
        return hal::Deadline::after_us(kA, c_.progress_timeout_us);
    }

    pf::MuxConfig c_;
    pf::MuxLayout l_;
    fabric::StatusWords status_{kFixed.status};
    Noc noc_{hal::NocId::Noc0, fabric::FabricConnection::kNocConfig};
    fabric::FabricConnection router_;
    fabric::RemoteWords<kWordsTrid> words_{noc_, kFixed.scratch};
    Channel ch_[pf::kMuxMaxChannels];
    uint32_t channels_ = 0;
    uint32_t forwarded_[pf::kMuxMaxChannels] = {};
    uint32_t next_full_ = 0;    // the full-size channel a round starts with
    uint32_t next_header_ = 0;  // the header-only channel served next
    uint32_t full_since_header_ = 0;
    uint64_t last_full_ = 0;    // when a full-size packet last went
    uint32_t busy_full_ = 0;    // full-size channels that had a packet in the last round
    uint32_t until_check_ = 1;  // rounds until the next look at the connection blocks
    uint32_t iterations_ = 0;
    uint32_t bad_packets_ = 0;
    uint32_t connects_ = 0;
    uint32_t teardowns_ = 0;
    uint32_t giveups_ = 0;
    uint32_t round_max_cycles_ = 0;
    Status fault_ = Status::Ok;  // a NoC request that failed in a visit (the mux stops)
    uint32_t unread_ = 0;        // 1 + the channel whose last forwarded slot may not be read yet
    uint32_t dirty_ = 0;         // bit per channel whose client has not been told its freed count
};

#define MSB_OFF(field) static_cast<uint32_t>(offsetof(pf::MuxStatusBlock, field))

void Mux::publish() {
    sb_store(MSB_OFF(heartbeat), iterations_);
    sb_store(MSB_OFF(bad_packets), bad_packets_);
    sb_store(MSB_OFF(connects), connects_);
    sb_store(MSB_OFF(teardowns), teardowns_);
    sb_store(MSB_OFF(forward_giveups), giveups_);
    sb_store(MSB_OFF(round_max_cycles), round_max_cycles_);
    for (uint32_t c = 0; c < channels_; ++c) sb_store(MSB_OFF(forwarded) + 4 * c, forwarded_[c]);
    sb_store(MSB_OFF(main_loop_iterations), iterations_);
}

int Mux::stop(RouterStatus s, RouterWait where, uint32_t detail) {
    publish();
    return status_.finish(s, where, detail);
}

uint32_t Mux::check_config() const {
    const auto bad = [](pf::MuxConfigCheck c) { return static_cast<uint32_t>(c); };
    if (c_.magic != pf::kMuxConfigMagic) return bad(pf::MuxConfigCheck::Magic);
    if (c_.version != pf::kProtocolVersion) return bad(pf::MuxConfigCheck::Version);
    const uint32_t n = c_.full_channels + c_.header_channels;
    if (n == 0 || n > pf::kMuxMaxChannels || c_.full_channels > pf::kMuxMaxChannels) {
        return bad(pf::MuxConfigCheck::Channels);
    }
    if ((c_.full_channels != 0 && (c_.full_slots == 0 || c_.full_slots > pf::kMuxMaxSlots)) ||
        (c_.header_channels != 0 && (c_.header_slots == 0 || c_.header_slots > pf::kMuxMaxSlots))) {
        return bad(pf::MuxConfigCheck::Slots);
    }
    const pf::WorkerChannel& d = c_.downstream;
    if (c_.full_channels != 0 && (c_.full_payload_bytes == 0 || c_.full_payload_bytes % 16 != 0 ||
                                  c_.full_payload_bytes > d.payload_bytes)) {
        return bad(pf::MuxConfigCheck::PayloadBytes);
    }
    if (!hal::noc::coord_ok(d.router_x) || !hal::noc::coord_ok(d.router_y) || d.num_slots == 0 ||
        d.slot_bytes < sizeof(pf::PacketHeader) + d.payload_bytes || d.connection % 16 != 0 ||
        c_.router_status_addr % 16 != 0 || c_.router_status_addr == 0) {
        return bad(pf::MuxConfigCheck::Downstream);
    }
    if (c_.ready_timeout_us == 0 || c_.drain_timeout_us == 0 || c_.progress_timeout_us == 0) {
        return bad(pf::MuxConfigCheck::Timeouts);
    }
    if (c_.header_every == 0 || c_.teardown_check_every == 0)
        return bad(pf::MuxConfigCheck::Schedule);
    if (!l_.fits) return bad(pf::MuxConfigCheck::Layout);
    return 0;
}

// Streams and connection blocks, then the router: ReadyForTraffic (its status word read over
// the NoC, bounded by ready_timeout_us), its ch0 opened (Busy while another client holds it:
// retried until the same deadline), its line published to our clients. Returns an exit code, or -1
// to go on.
int Mux::start() {
    channels_ = c_.full_channels + c_.header_channels;
    for (uint32_t c = 0; c < channels_; ++c) {
        Channel& ch = ch_[c];
        const pf::WorkerChannel wc = pf::mux_channel(kA, c_, c, 0, 0);
        ch.base = wc.slots_base;
        ch.slots = wc.num_slots;
        ch.slot_bytes = wc.slot_bytes;
        ch.payload_cap = wc.payload_bytes;
        ch.addr = ch.base;
        (void)Streams::reset(pushed_id(c), 0);
        ch.port.reset(wc.connection, 16 * c, 16 * (pf::kMuxMaxChannels + c));
    }
    for (uint32_t off = 0; off < pf::kMuxClientBytes; off += 4) st(l_.client + off, 0);
    const Status init = noc_.init();
    if (init != Status::Ok)
        return stop(RouterStatus::Fault, RouterWait::None, static_cast<uint32_t>(init));
    set_stage(RouterStatus::StreamsInitialized);

    const hal::Deadline ready_by = hal::Deadline::after_us(kA, c_.ready_timeout_us);
    const uint32_t probe = l_.client + 32;  // the connection's staging: free until it opens
    Status s = hal::wait_until(
        [&] {
            if (noc_.read({c_.downstream.router_x, c_.downstream.router_y, c_.router_status_addr},
                          probe, 16) != Status::Ok ||
                noc_.read_barrier(ready_by, term()) != Status::Ok) {
                return false;
            }
            return ld(probe) == static_cast<uint32_t>(RouterStatus::ReadyForTraffic);
        },
        ready_by, term());
    if (s == Status::Terminated) return finish(0, 0, RouterWait::None);
    if (s != Status::Ok)
        return stop(RouterStatus::Timeout, RouterWait::RouterReady, static_cast<uint32_t>(s));

    while (true) {
        s = router_.open(progress_deadline(), term());
        if (s != Status::Busy) break;
        if (ready_by.expired()) break;
    }
    if (s == Status::Terminated) return finish(0, 0, RouterWait::None);
    if (s != Status::Ok) {
        return stop(
            s == Status::Timeout || s == Status::Busy ? RouterStatus::Timeout : RouterStatus::Fault,
            RouterWait::RouterOpen, static_cast<uint32_t>(s));
    }
    // Our clients send along the router's line: it is theirs too.
    for (uint32_t c = 0; c < channels_; ++c) ch_[c].port.publish_line(router_.line_info());
    set_stage(RouterStatus::ReadyForTraffic);
    return -1;
}

void Mux::advance(Channel& ch) {
    if (++ch.idx == ch.slots) {
        ch.idx = 0;
        ch.addr = ch.base;
    } else {
        ch.addr += ch.slot_bytes;
    }
}

// A refused packet: dropped, its slot returned to the client, the reason in `detail`.
void Mux::drop(uint32_t c, pf::MuxBadPacket why) {
    Channel& ch = ch_[c];
    (void)Streams::add(pushed_id(c), -1);
    advance(ch);
    ++ch.freed;
    dirty_ |= 1u << c;
    ++bad_packets_;
    sb_store(MSB_OFF(detail), static_cast<uint32_t>(why));
}

// The packet in channel c's next slot (`bytes` of header and payload) into the router's next
// slot. The slot is the client's again once the NoC has read it: that is checked when the next
// packet goes (or at the end of the round), so the read overlaps the rest of the loop.
Status Mux::forward(uint32_t c, uint32_t bytes) {
    HAL_TRY(settle());
    Channel& ch = ch_[c];
    HAL_TRY(router_.try_forward(ch.addr, bytes));
    (void)Streams::add(pushed_id(c), -1);
    advance(ch);
    ++forwarded_[c];
    unread_ = c + 1;
    return Status::Ok;
}

// The last forwarded packet's slot, once the NoC has read it (bounded wait), back to its client.
// Only one packet is ever unread, so "every write of the connection sent" means exactly that.
Status Mux::settle() {
    if (unread_ == 0) return Status::Ok;
    if (!router_.writes_sent()) {
        const hal::Deadline d = progress_deadline();
        while (!router_.writes_sent()) {
            if (d.expired()) return Status::Timeout;
        }
    }
    ++ch_[unread_ - 1].freed;
    dirty_ |= 1u << (unread_ - 1);
    unread_ = 0;
    return Status::Ok;
}

// A free router slot within forward_wait_cycles. The fair mux's only wait in the data path:
// short against one router packet time (README), so a congested router delays every other
// channel's service by at most this much per visit.
bool Mux::wait_router_slot() {
    if (router_.has_free_slot()) return true;
    if constexpr (kUnfair) {
        // The old mux: spin until the router has room, seeing nothing else (no teardowns, no
        // termination word, no other channel). Its waypoint says where it spins.
        publish();
        sb_store(MSB_OFF(stuck_at), static_cast<uint32_t>(RouterWait::RouterSlot));
        while (!router_.has_free_slot()) {
        }
        sb_store(MSB_OFF(stuck_at), static_cast<uint32_t>(RouterWait::None));
        return true;
    } else {
        const uint64_t until = hal::wall_clock() + c_.forward_wait_cycles;
        while (hal::wall_clock() < until) {
            if (router_.has_free_slot()) return true;
        }
        ++giveups_;
        return false;
    }
}

// One visit of channel c: forward its oldest packet if it has one and the router takes it.
Mux::Visit Mux::visit(uint32_t c) {
    if (Streams::read(pushed_id(c)) == 0) return Visit::Empty;
    Channel& ch = ch_[c];
    const uint32_t meta = ld(ch.addr + offsetof(pf::PacketHeader, payload_bytes));
    const uint32_t bytes = meta & 0xFFFF;
    // The magic's byte of its word (the TTL and a 2D multicast's branches share it; the mux is not
    // a hop: it leaves the TTL to the routers).
    if ((ld(ch.addr + offsetof(pf::PacketHeader, magic)) & 0xFF) != pf::kHeaderMagic) {
        drop(c, pf::MuxBadPacket::Magic);
        return Visit::Forwarded;
    }
    if (bytes > ch.payload_cap) {
        drop(c, pf::MuxBadPacket::PayloadBytes);
        return Visit::Forwarded;
    }
    if (!wait_router_slot()) return Visit::Blocked;
    const Status s =
        forward(c, static_cast<uint32_t>(sizeof(pf::PacketHeader)) + ((bytes + 15) & ~15u));
    if (s != Status::Ok) {  // a NoC request that cannot be made or read: the mux stops
        fault_ = s;
        return Visit::Failed;
    }
    return Visit::Forwarded;
}

// One round: each full-size channel once, starting with the first one that could not forward
// last time (so the router's freed slots go round the channels in turn); then one header-only
// packet (round robin over those channels) once header_every full-size packets went since the
// last one, or every header-only channel once when no full-size packet has gone for
// kFullIdleCycles. Under contention header-only traffic is thus at most 1 / (header_every + 1) of
// the router's packets, and never waits more than header_every full-size packets.
[[gnu::flatten]] void Mux::round(uint64_t now) {
    uint32_t first_blocked = c_.full_channels;
    uint32_t c = next_full_;
    // Several packets per visit only while at most one full-size channel has traffic: with more,
    // one each keeps the turns exact.
    const uint32_t burst = busy_full_ > 1 ? 1 : kBurst;
    busy_full_ = 0;
    for (uint32_t i = 0; i < c_.full_channels; ++i) {
        Visit v = visit(c);
        if (v != Visit::Empty) ++busy_full_;
        if (v == Visit::Forwarded) {
            // More of this channel's packets while the router has room right now.
            uint32_t n = 1;
            while (n < burst && Streams::read(pushed_id(c)) != 0 && router_.has_free_slot()) {
                v = visit(c);
                if (v != Visit::Forwarded) break;
                ++n;
            }
            full_since_header_ += n;
            last_full_ = now;
        }
        if (v == Visit::Failed) return;
        if (v == Visit::Blocked && first_blocked == c_.full_channels) first_blocked = c;
        if (++c == c_.full_channels) c = 0;
    }
    if (first_blocked != c_.full_channels) next_full_ = first_blocked;
    if (c_.header_channels == 0) return;
    const bool full_idle = now - last_full_ >= kFullIdleCycles;
    if (!full_idle && full_since_header_ < c_.header_every) return;
    for (uint32_t i = 0; i < c_.header_channels; ++i) {
        const uint32_t h = c_.full_channels + next_header_;
        if (++next_header_ == c_.header_channels) next_header_ = 0;
        const Visit v = visit(h);
        if (v == Visit::Forwarded && !full_idle) {
            full_since_header_ = 0;
            return;
        }
        if (v == Visit::Blocked || v == Visit::Failed) return;
    }
    // No header-only channel had anything: the next one to arrive may go at once.
    if (full_since_header_ > c_.header_every) full_since_header_ = c_.header_every;
}

// Clients' credit words, for channels that freed slots since the last time.
[[gnu::flatten]] Status Mux::credits() {
    uint32_t pending = dirty_;
    while (pending != 0) {
        const uint32_t c = static_cast<uint32_t>(__builtin_ctz(pending));
        pending &= pending - 1;
        const Status s = ch_[c].port.send_credit(words_, ch_[c].freed);
        if (s == Status::Busy) continue;
        HAL_TRY(s);
        dirty_ &= ~(1u << c);
    }
    return Status::Ok;
}

// Every channel's connection block: opens accepted, closes answered.
Status Mux::connections() {
    for (uint32_t c = 0; c < channels_; ++c) {
        Channel& ch = ch_[c];
        fabric::WorkerPort::Event e;
        bool dirty = (dirty_ >> c & 1) != 0;
        HAL_TRY(ch.port.poll(words_, ch.freed, dirty, e));
        dirty_ = dirty ? dirty_ | 1u << c : dirty_ & ~(1u << c);
        if (e == fabric::WorkerPort::Event::Opened) ++connects_;
        if (e == fabric::WorkerPort::Event::Closed) ++teardowns_;
    }
    return Status::Ok;
}

uint32_t Mux::undrained(uint32_t& mask) const {
    uint32_t n = 0;
    mask = 0;
    for (uint32_t c = 0; c < channels_; ++c) {
        const uint32_t p = Streams::read(pushed_id(c));
        if (p != 0) mask |= 1u << c;
        n += p;
    }
    return n;
}

// Close the router connection (bounded; what we forwarded stays the router's), then Terminated.
int Mux::finish(uint32_t left, uint32_t mask, RouterWait where) {
    (void)settle();  // the last forwarded slot's credit too
    (void)credits();
    sb_store(MSB_OFF(undrained), left);
    sb_store(MSB_OFF(undrained_channels), mask);
    if (router_.is_open()) {
        const Status s = router_.close(progress_deadline(), &kKeepRunningWord);
        if (s != Status::Ok)
            return stop(RouterStatus::Timeout, RouterWait::RouterClose, static_cast<uint32_t>(s));
    }
    return stop(RouterStatus::Terminated, where, 0);
}

int Mux::run() {
    for (uint32_t off = 0; off < sizeof(pf::MuxStatusBlock); off += 4) sb_store(off, 0);
    set_stage(RouterStatus::Started);
    if (const uint32_t bad = check_config(); bad != 0)
        return stop(RouterStatus::ConfigInvalid, RouterWait::None, bad);
    set_stage(RouterStatus::ConfigChecked);
    if (const int rc = start(); rc >= 0) return rc;

    bool draining = false;
    hal::Deadline drain_by = hal::Deadline::at_cycle(0);
    uint64_t round_start = hal::wall_clock();
    while (true) {
        ++iterations_;
        const uint32_t t = ld(l_.termination);
        if (t == static_cast<uint32_t>(pf::Termination::Immediate)) {
            uint32_t mask = 0;
            const uint32_t left = undrained(mask);
            return finish(left, mask, RouterWait::None);
        }
        if (t == static_cast<uint32_t>(pf::Termination::Graceful) && !draining) {
            draining = true;
            drain_by = hal::Deadline::after_us(kA, c_.drain_timeout_us);
            set_stage(RouterStatus::Draining);
        }
        round(round_start);
        if (fault_ == Status::Ok) fault_ = settle();
        if (fault_ != Status::Ok)
            return stop(RouterStatus::Fault, RouterWait::NocFlush, static_cast<uint32_t>(fault_));
        Status s = credits();
        // (the old mux looked at its connections on every pass, when it was not spinning)
        if (s == Status::Ok && (kUnfair || --until_check_ == 0)) {
            until_check_ = c_.teardown_check_every;
            s = connections();
        }
        if (s != Status::Ok)
            return stop(RouterStatus::Fault, RouterWait::NocCmdBuf, static_cast<uint32_t>(s));
        const uint64_t now = hal::wall_clock();
        const uint32_t took = static_cast<uint32_t>(now - round_start);
        if (took > round_max_cycles_) round_max_cycles_ = took;
        round_start = now;
        if ((iterations_ % kPublishEvery) == 0) publish();
        if (!draining) continue;
        uint32_t mask = 0;
        const uint32_t left = undrained(mask);
        if (left == 0) return finish(0, 0, RouterWait::None);
        if (!kUnfair && drain_by.passed_at(now)) return finish(left, mask, RouterWait::Drain);
    }
}

}  // namespace

int main() {
    Mux mux(load_config());  // on the stack: local data RAM
    return mux.run();
}
