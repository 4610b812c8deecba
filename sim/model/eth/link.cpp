#include "link.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>

namespace sim::eth {

namespace {

constexpr Tick kNever = std::numeric_limits<Tick>::max();

// splitmix64: a small, well-mixed, portable generator (std distributions are not reproducible
// across standard libraries, so the drop decision uses plain integer arithmetic on this).
uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace

LinkConfig LinkConfig::for_arch(const hal::ArchMap& arch) {
    LinkConfig c;
    c.clock_mhz = arch.aiclk_mhz;
    return c;
}

Link::Link(const LinkConfig& cfg, LinkSide a, LinkSide b) : cfg_(cfg) {
    if (cfg_.link_mbps == 0 || cfg_.clock_mhz == 0) {
        throw std::invalid_argument("eth::Link: link_mbps and clock_mhz must be non-zero");
    }
    const uint32_t max_window = (1u << hal::eth::kTtLinkSeqBits) - 1;
    if (cfg_.window_frames == 0 || cfg_.window_frames > max_window) {
        throw std::invalid_argument(
            "eth::Link: window_frames must be in [1, " + std::to_string(max_window) +
            "] (8-bit TT-link sequence numbers), got " + std::to_string(cfg_.window_frames));
    }
    if (cfg_.retransmit_timeout_cycles == 0) {
        throw std::invalid_argument("eth::Link: retransmit_timeout_cycles must be non-zero");
    }
    if (&a.txq == &b.txq) {
        throw std::invalid_argument("eth::Link: both sides are the same TxQueues (" + a.txq.name() +
                                    ")");
    }
    for (TxQueues* t : {&a.txq, &b.txq}) {
        if (t->link_ != nullptr) {
            throw std::invalid_argument("eth::Link: TxQueues " + t->name() +
                                        " is already on a link");
        }
    }
    // Bytes per cycle = link_mbps / (8 * clock_mhz), kept as an exact fraction num/den: one tick is
    // 1/num of a cycle, one wire byte is den ticks.
    const uint64_t bits_num = cfg_.link_mbps;
    const uint64_t bits_den = 8ull * cfg_.clock_mhz;
    const uint64_t g = std::gcd(bits_num, bits_den);
    ticks_per_cycle_ = bits_num / g;
    ticks_per_byte_ = bits_den / g;

    const LinkSide sides[2] = {a, b};
    for (uint32_t d = 0; d < 2; ++d) {
        Direction& dir = dirs_[d];
        dir.tx = &sides[d].txq;
        dir.rx_mem = &sides[d].peer;
        dir.rxq.resize(dir.tx->num_queues());
        dir.tx->link_ = this;
        dir.tx->ticks_per_cycle_ = ticks_per_cycle_;
        dir.tx->now_ = 0;
    }
}

Link::~Link() {
    for (Direction& dir : dirs_) {
        dir.tx->link_ = nullptr;
    }
}

// ---- faults
// --------------------------------------------------------------------------------------

void Link::set_up(bool up) {
    if (up == up_) {
        return;
    }
    up_ = up;
    if (up_) {
        resume();
    } else {
        down_since_ = cycle_[0] * ticks_per_cycle_;
    }
    if (state_hook_) {
        state_hook_(up_);
    }
}

void Link::resume() {
    const Tick now = cycle_[0] * ticks_per_cycle_;
    for (uint32_t d = 0; d < 2; ++d) {
        Direction& dir = dirs_[d];
        std::vector<Ctrl> held;
        held.swap(dir.ctrl_held);
        for (const Ctrl& c : held) {
            launch_ctrl(d, c, now);
        }
        // A timer counts up time only: what it had run before the link went down carries on
        // (restarting it would never let a timeout longer than an up window fire).
        for (TxQueues::Queue& q : dir.tx->queues_) {
            if (q.timer_armed) {
                const Tick ran = q.timer_start < down_since_ ? down_since_ - q.timer_start : 0;
                q.timer_start = now - ran;
            }
        }
    }
}

std::vector<Completion> Link::take_completions(Dir d) {
    std::vector<Completion> out;
    out.swap(dirs_[dir_index(d)].completions);
    return out;
}

void Link::set_extra_delay(Dir d, uint32_t cycles) {
    dirs_[dir_index(d)].extra_delay = cycles;
}

void Link::set_extra_delay(uint32_t cycles) {
    for (Dir d : kDirs) {
        set_extra_delay(d, cycles);
    }
}

void Link::drop_frame(Dir d, uint64_t n) {
    dirs_[dir_index(d)].drop_set.insert(n);
}

void Link::set_drop_rate(Dir d, uint32_t per_million, uint64_t seed) {
    Direction& dir = dirs_[dir_index(d)];
    dir.drop_ppm = std::min<uint32_t>(per_million, 1'000'000);
    dir.rng = seed;
}

bool Link::draw_drop(Direction& dir) {
    const uint64_t index = dir.tx_index++;
    bool drop = dir.drop_set.count(index) != 0;
    if (dir.drop_ppm != 0) {
        drop = (splitmix64(dir.rng) % 1'000'000) < dir.drop_ppm || drop;
    }
    return drop;
}

// ---- simulation
// ----------------------------------------------------------------------------------

bool Link::idle() const {
    for (const Direction& dir : dirs_) {
        if (!dir.inflight.empty() || !dir.ctrl.empty() || !dir.ctrl_held.empty() ||
            !dir.inflight_out.empty() || !dir.ctrl_out.empty()) {
            return false;
        }
        for (const TxQueues::Queue& q : dir.tx->queues_) {
            if (!q.frames.empty()) {
                return false;
            }
        }
    }
    return true;
}

bool Link::frame_eligible(const TxQueues::Queue& q) const {
    return q.next < q.frames.size() && q.frames[q.next].seq - q.base_seq < cfg_.window_frames;
}

Tick Link::frame_ready(const TxQueues::Queue& q) const {
    return std::max(q.frames[q.next].ready, q.resume_at);
}

bool Link::includes(uint8_t sides, uint32_t side) {
    return (sides & (1u << side)) != 0;
}

uint32_t Link::owner(EventKind k, uint32_t dir) {
    return k == EventKind::Arrival ? 1 - dir : dir;  // frames land at the far side
}

Link::Event Link::next_event(Tick limit, uint8_t sides) const {
    Event best;
    auto consider = [&](Tick t, EventKind k, uint32_t d, uint32_t q) {
        t = std::max(t, t_cur_[owner(k, d)]);
        if (t >= limit) {
            return;
        }
        // Earliest first; at the same tick: ACK/NAK, then arrivals, timeouts, wire starts
        // (an acknowledgement that opens the window lets a frame start at that same tick).
        if (best.kind == EventKind::None ||
            std::tie(t, k, d, q) < std::tie(best.time, best.kind, best.dir, best.queue)) {
            best = Event{t, k, d, q};
        }
    };
    // Only the state of the sides asked for is read: the other side may be running on another
    // thread (its sender queues, its receivers' in-flight frames).
    for (uint32_t d = 0; d < 2; ++d) {
        const Direction& dir = dirs_[d];
        if (includes(sides, 1 - d) && !dir.inflight.empty()) {
            consider(dir.inflight.front().arrival, EventKind::Arrival, d, 0);
        }
        if (includes(sides, d)) sender_events(d, consider);
    }
    return best;
}

template <typename Consider>
void Link::sender_events(uint32_t d, Consider& consider) const {
    const Direction& dir = dirs_[d];
    if (!dir.ctrl.empty()) {
        consider(dir.ctrl.front().arrival, EventKind::Ctrl, d, 0);
    }
    if (!up_) {
        return;
    }
    const Tick timeout = Tick{cfg_.retransmit_timeout_cycles} * ticks_per_cycle_;
    Tick ready = kNever;
    for (uint32_t qi = 0; qi < dir.tx->queues_.size(); ++qi) {
        const TxQueues::Queue& q = dir.tx->queues_[qi];
        if (q.timer_armed && q.base_seq < q.high_seq) {
            consider(q.timer_start + timeout, EventKind::Timeout, d, qi);
        }
        if (frame_eligible(q)) {
            ready = std::min(ready, frame_ready(q));
        }
    }
    if (ready != kNever) {
        consider(std::max(ready, dir.wire_free), EventKind::WireStart, d, 0);
    }
}

void Link::begin_cycle(uint32_t side) {
    t_cur_[side] = std::max(t_cur_[side], cycle_[side] * ticks_per_cycle_);
    dirs_[side].tx->now_ = cycle_[side];
}

void Link::end_cycle(uint32_t side) {
    ++cycle_[side];
    dirs_[side].tx->now_ = cycle_[side];
}

uint64_t Link::cycle(uint8_t sides) const {
    if (sides == kBothSides && cycle_[0] != cycle_[1]) {
        throw std::logic_error("eth::Link: sides stepped together are at cycles " +
                               std::to_string(cycle_[0]) + " and " + std::to_string(cycle_[1]));
    }
    return (sides & kSideA) != 0 ? cycle_[0] : cycle_[1];
}

void Link::step(uint8_t sides) {
    const Tick limit = (cycle(sides) + 1) * ticks_per_cycle_;
    for (uint32_t side = 0; side < 2; ++side) {
        if (includes(sides, side)) begin_cycle(side);
    }
    while (true) {
        const Event e = next_event(limit, sides);
        if (e.kind == EventKind::None) {
            break;
        }
        t_cur_[owner(e.kind, e.dir)] = e.time;
        switch (e.kind) {
            case EventKind::Ctrl:
                process_ctrl(e.dir);
                break;
            case EventKind::Arrival:
                process_arrival(e.dir);
                break;
            case EventKind::Timeout:
                process_timeout(e.dir, e.queue);
                break;
            case EventKind::WireStart:
                start_frame(e.dir, e.time);
                break;
            default:
                throw std::logic_error("eth::Link: unknown event kind");
        }
    }
    for (uint32_t side = 0; side < 2; ++side) {
        if (includes(sides, side)) end_cycle(side);
    }
}

uint64_t Link::next_event_cycle(uint8_t sides) const {
    const Event e = next_event(kNever, sides);
    if (e.kind == EventKind::None) {
        return kNever;
    }
    return std::max(e.time / ticks_per_cycle_, cycle_[owner(e.kind, e.dir)]);
}

void Link::run(uint8_t sides, uint64_t cycles) {
    const uint64_t target = cycle(sides) + cycles;
    while (cycle(sides) < target) {
        // Cycles in which nothing happens are skipped in one go: step() would only count them.
        const uint64_t next = next_event_cycle(sides);
        if (next > cycle(sides)) {
            for (uint32_t side = 0; side < 2; ++side) {
                if (!includes(sides, side)) continue;
                cycle_[side] = std::min(next, target);
                dirs_[side].tx->now_ = cycle_[side];
            }
            continue;
        }
        step(sides);
    }
}

uint8_t Link::exchange() {
    uint8_t received = 0;
    for (uint32_t d = 0; d < 2; ++d) {
        Direction& dir = dirs_[d];
        if (!dir.inflight_out.empty()) received |= static_cast<uint8_t>(1u << (1 - d));
        if (!dir.ctrl_out.empty() || !dir.errors_out.empty()) {
            received |= static_cast<uint8_t>(1u << d);
        }
        // Both lists are in arrival order and every held item arrives after every item already
        // handed over (arrival times only grow), so appending keeps the queues ordered.
        for (InFlight& in : dir.inflight_out) dir.inflight.push_back(std::move(in));
        dir.inflight_out.clear();
        for (const Ctrl& c : dir.ctrl_out) dir.ctrl.push_back(c);
        dir.ctrl_out.clear();
        for (const TxqError& e : dir.errors_out) dir.tx->insert_error(e);
        dir.errors_out.clear();
    }
    return received;
}

void Link::start_frame(uint32_t d, Tick at) {
    Direction& dir = dirs_[d];
    TxQueues& tx = *dir.tx;
    const uint32_t nq = static_cast<uint32_t>(tx.queues_.size());
    uint32_t qi = nq;
    for (uint32_t i = 0; i < nq; ++i) {
        const uint32_t cand = (dir.rr + i) % nq;
        const TxQueues::Queue& q = tx.queues_[cand];
        if (frame_eligible(q) && frame_ready(q) <= at) {
            qi = cand;
            break;
        }
    }
    if (qi == nq) {
        throw std::logic_error("eth::Link: wire start with no eligible frame");
    }
    dir.rr = (qi + 1) % nq;
    TxQueues::Queue& q = tx.queues_[qi];
    TxQueues::Frame& f = q.frames[q.next++];

    if (f.seq >= q.high_seq) {
        q.high_seq = f.seq + 1;
        if (q.busy && f.seq == q.busy_last_seq) {
            q.busy = false;  // the command's data has been read out: the queue takes the next one
            ++q.counters.commands_read_out;
        }
    } else {
        ++dir.stats.frames_retransmitted;
        ++q.counters.frames_resent;
    }
    ++f.tx_count;
    ++q.counters.frames_started;
    q.counters.words_sent +=
        (f.wire_payload + hal::eth::kDataAlignment - 1) / hal::eth::kDataAlignment;

    if (f.kind == CommandKind::Data && tx.cfg_.check_source_reuse) {
        std::vector<uint8_t> now(f.len);
        if (!tx.l1_.read(f.src, now) ||
            std::memcmp(now.data(), f.data->data() + f.offset, f.len) != 0) {
            tx.error_at(cycle_[d] + 1, qi, ErrorKind::SourceModified, f.src, f.len);
        }
    }

    const uint64_t wire = uint64_t{f.wire_payload} + cfg_.frame_overhead_bytes;
    const Tick end = at + wire * ticks_per_byte_;
    dir.wire_free = end;
    dir.stats.frames_sent += 1;
    dir.stats.wire_bytes += wire;
    dir.stats.busy_ticks += end - at;
    const uint64_t first_cycle = std::max(at / ticks_per_cycle_, dir.next_uncounted_cycle);
    const uint64_t last_cycle = (end - 1) / ticks_per_cycle_;
    if (last_cycle >= first_cycle) {
        dir.stats.busy_cycles += last_cycle - first_cycle + 1;
        dir.next_uncounted_cycle = last_cycle + 1;
    }

    InFlight in;
    in.arrival =
        std::max(end + Tick{cfg_.latency_cycles + uint64_t{dir.extra_delay}} * ticks_per_cycle_,
                 dir.last_arrival);
    dir.last_arrival = in.arrival;
    in.queue = qi;
    in.epoch = q.epoch;
    in.dropped = draw_drop(dir);
    if (in.dropped) {
        ++dir.stats.frames_dropped;
    }
    in.frame = f;
    if (split_) {
        dir.inflight_out.push_back(std::move(in));
    } else {
        dir.inflight.push_back(std::move(in));
    }

    if (!q.timer_armed) {
        q.timer_armed = true;
        q.timer_start = at;
    }
}

void Link::process_arrival(uint32_t d) {
    Direction& dir = dirs_[d];
    InFlight in = std::move(dir.inflight.front());
    dir.inflight.pop_front();
    if (in.dropped) {
        return;  // failed its CRC: the receiver never sees it
    }
    RxQueue& rx = dir.rxq[in.queue];
    const TxQueues::Frame& f = in.frame;
    if (f.seq > rx.expected) {
        // A gap: an earlier frame was lost. Go-Back-N discards everything until it comes; the first
        // out-of-sequence frame after the gap triggers one NAK.
        ++dir.stats.frames_discarded;
        if (!rx.nak_outstanding) {
            rx.nak_outstanding = true;
            ++dir.stats.naks;
            send_ctrl(d, Ctrl{0, in.queue, true, rx.expected, in.epoch});
        }
        return;
    }
    if (f.seq < rx.expected) {
        ++dir.stats.frames_discarded;  // a duplicate (resent after a timeout): acknowledge again
        send_ctrl(d, Ctrl{0, in.queue, false, rx.expected, 0});
        return;
    }
    // In sequence: deliver.
    bool ok;
    if (f.kind == CommandKind::Data) {
        ok = dir.rx_mem->write(f.dest, std::span<const uint8_t>(f.data->data() + f.offset, f.len));
        dir.stats.bytes_delivered += f.len;
    } else {
        const uint8_t le[4] = {
            static_cast<uint8_t>(f.reg_value), static_cast<uint8_t>(f.reg_value >> 8),
            static_cast<uint8_t>(f.reg_value >> 16), static_cast<uint8_t>(f.reg_value >> 24)};
        ok = dir.rx_mem->write(f.dest, le);
        ++dir.stats.reg_writes_delivered;
    }
    const uint64_t now = cycle_[1 - d];  // the receiving side's cycle
    if (!ok) {
        const TxqError refused{now + 1, in.queue, ErrorKind::DestRefused, f.dest, f.len};
        if (split_) {
            dir.errors_out.push_back(refused);  // the sender's TxQueues are the other side's
        } else {
            dir.tx->insert_error(refused);
        }
    }
    ++dir.stats.frames_delivered;
    ++rx.expected;
    rx.nak_outstanding = false;
    send_ctrl(d, Ctrl{0, in.queue, false, rx.expected, 0});
    if (f.last_of_command) {
        ++dir.stats.commands_completed;
        if (observer_ != nullptr && ok) report_landing(d, f, now + 1);
        if (!cfg_.record_completions) {
            return;
        }
        dir.completions.push_back(
            Completion{now + 1, in.queue, f.command_id, f.kind, f.dest - f.offset, f.cmd_size});
    }
}

void Link::report_landing(uint32_t d, const TxQueues::Frame& f, uint64_t landed_cycle) const {
    LandedCommand c;
    c.dir = d == 0 ? Dir::AtoB : Dir::BtoA;
    c.kind = f.kind;
    c.dest = f.dest - f.offset;
    c.size = f.cmd_size;
    c.accepted_cycle = static_cast<uint64_t>(f.ready / ticks_per_cycle_);
    c.landed_cycle = landed_cycle;
    if (f.kind == CommandKind::Data) {
        c.src = f.src - f.offset;
        c.data = f.data->data();
    } else {
        c.reg_value = f.reg_value;
    }
    observer_->landed(c);
}

void Link::send_ctrl(uint32_t d, Ctrl c) {
    if (!up_) {
        dirs_[d].ctrl_held.push_back(c);
        return;
    }
    launch_ctrl(d, c, t_cur_[1 - d]);  // by the receiver of direction d
}

void Link::launch_ctrl(uint32_t d, Ctrl c, Tick at) {
    Direction& dir = dirs_[d];
    // ACK/NAK travel from this direction's receiver back to its sender: the reverse way.
    const uint64_t delay = uint64_t{cfg_.latency_cycles} + dirs_[1 - d].extra_delay;
    c.arrival = std::max(at + delay * ticks_per_cycle_, dir.last_ctrl_arrival);
    dir.last_ctrl_arrival = c.arrival;
    if (split_) {
        dir.ctrl_out.push_back(c);
    } else {
        dir.ctrl.push_back(c);
    }
}

void Link::process_ctrl(uint32_t d) {
    Direction& dir = dirs_[d];
    const Ctrl c = dir.ctrl.front();
    dir.ctrl.pop_front();
    TxQueues::Queue& q = dir.tx->queues_[c.queue];
    // Cumulative acknowledgement: everything below c.seq has landed (also true of a NAK).
    if (c.seq > q.base_seq) {
        const uint64_t n = c.seq - q.base_seq;
        q.frames.erase(q.frames.begin(), q.frames.begin() + static_cast<std::ptrdiff_t>(n));
        q.base_seq = c.seq;
        q.next = q.next > n ? q.next - n : 0;
        if (q.base_seq < q.high_seq) {
            q.timer_start = t_cur_[d];
        } else {
            q.timer_armed = false;
        }
    }
    // A NAK sent about a frame of an earlier epoch is stale: the sender has gone back since.
    if (c.nak && c.epoch == q.epoch && q.base_seq < q.high_seq) {
        go_back(q, t_cur_[d]);
        ++dir.stats.go_backs;
    }
}

void Link::process_timeout(uint32_t d, uint32_t qi) {
    Direction& dir = dirs_[d];
    go_back(dir.tx->queues_[qi], t_cur_[d]);
    ++dir.stats.timeouts;
    ++dir.stats.go_backs;
}

void Link::go_back(TxQueues::Queue& q, Tick at) {
    q.next = 0;
    ++q.epoch;
    q.resume_at = at;
    q.timer_armed = true;
    q.timer_start = at;
}

}  // namespace sim::eth
