#include "fabric/packet_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <ostream>
#include <tuple>

#include "fabric/error.h"
#include "hal/arch_map.h"
#include "hal/encoding.h"
#include "protocol/fabric.h"

namespace fabric {

namespace pf = protocol::fabric;

namespace {

constexpr uint16_t kNoRouter = std::numeric_limits<uint16_t>::max();
constexpr size_t kNoEvent = std::numeric_limits<size_t>::max();

enum class RecordKind : uint8_t { Push, Landed, Take, Deliver, Atomic, Completion, CreditWrite };

// A slot of a router's channel: which channel and which slot of it.
struct SlotRef {
    uint8_t channel = 0;
    uint16_t slot = 0;
};

// The stream delta a *_SPACE_AVAILABLE_UPDATE write carries, sign-extended from its 17 bits.
int32_t stream_delta(uint32_t value) {
    const uint32_t d = hal::stream::words_free_delta_of(value);
    const uint32_t sign = 1u << (hal::stream::kWordsFreeBits - 1);
    return static_cast<int32_t>(d ^ sign) - static_cast<int32_t>(sign);
}

TracePacketHeader header_of(const uint8_t* bytes) {
    pf::PacketHeader h;
    std::memcpy(&h, bytes, sizeof h);
    return {h.seq, h.route, h.payload_bytes, h.send_type, h.ttl};
}

// The atomic target of an AtomicInc header (what the router's atomic for it is matched on).
pf::NocTarget atomic_target_of(const uint8_t* bytes) {
    pf::PacketHeader h;
    std::memcpy(&h, bytes, sizeof h);
    return h.cmd.atomic.dst;
}

// A write's first word (a credit written from a staging word), 0 for a shorter one.
uint32_t first_word(const TraceNocLanding& l) {
    uint32_t w = 0;
    if (l.data != nullptr && l.len >= 4) std::memcpy(&w, l.data, 4);
    return w;
}

std::string_view send_type_name(uint8_t t) {
    switch (static_cast<pf::NocSendType>(t)) {
        case pf::NocSendType::UnicastWrite:
            return "unicast-write";
        case pf::NocSendType::InlineWrite:
            return "inline-write";
        case pf::NocSendType::AtomicInc:
            return "atomic-inc";
        case pf::NocSendType::FusedWriteAtomicInc:
            return "fused-write-atomic-inc";
        case pf::NocSendType::ScatterWrite:
            return "scatter-write";
        default:
            return "unknown";
    }
}

// A cycle as microseconds at the 1 GHz core clock, written exactly ("12.345").
std::string micros(uint64_t cycle) {
    return fmt::format("{}.{:03}", cycle / 1000, cycle % 1000);
}

}  // namespace

struct PacketTrace::Record {
    uint64_t cycle = 0;
    uint64_t start = 0;  // Landed: the cycle the sender's queue took the command
    TracePacketHeader header;
    uint32_t addr = 0;   // Deliver, Atomic, CreditWrite: the destination address; Landed: the
                         // AtomicInc target's address
    uint32_t count = 0;  // Take, Completion: packets; CreditWrite: the value written
    uint16_t router = 0;
    uint16_t from = kNoRouter;  // Push: the forwarding router (none: a pushing core); Landed: the
                                // sender
    uint16_t slot = 0;
    uint16_t from_slot = 0;
    RecordKind kind = RecordKind::Push;
    uint8_t channel = 0;
    uint8_t from_channel = 0;
    uint8_t x = 0;  // Push from a core: its core; Deliver, Atomic, CreditWrite: the destination
    uint8_t y = 0;  // core; Landed: the AtomicInc target's core
};

// The memory bound of --trace-max-records (host/README.md says 56 B a record).
static_assert(sizeof(PacketTrace::Record) <= 56);

struct PacketTrace::Router {
    ChipId chip = 0;
    CoreCoord core;
    uint32_t eth_channel = 0;
    pf::RouterConfig config{};
    pf::RouterLayout layout{};
    uint16_t peer = kNoRouter;
    std::string name;

    // The slot of channel c whose first byte is at `addr` (a header's place).
    std::optional<SlotRef> sender_slot_at(uint64_t addr) const {
        for (uint32_t c = 0; c < pf::kMaxSenderChannels; ++c) {
            const auto s = slot_of(layout.sender_base[c], config.sender_slots[c], addr);
            if (s && s->second) return SlotRef{static_cast<uint8_t>(c), s->first};
        }
        return std::nullopt;
    }
    // The slot of a sender channel holding `addr`.
    std::optional<SlotRef> sender_slot_holding(uint64_t addr) const {
        for (uint32_t c = 0; c < pf::kMaxSenderChannels; ++c) {
            const auto s = slot_of(layout.sender_base[c], config.sender_slots[c], addr);
            if (s) return SlotRef{static_cast<uint8_t>(c), s->first};
        }
        return std::nullopt;
    }
    // The slot of a receiver channel holding `addr`; `at_start`: only its first byte.
    std::optional<SlotRef> rx_slot_holding(uint64_t addr, bool at_start = false) const {
        for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
            const auto s = slot_of(layout.receiver_base[r], config.receiver_slots[r], addr);
            if (s && (s->second || !at_start)) return SlotRef{static_cast<uint8_t>(r), s->first};
        }
        return std::nullopt;
    }
    bool is_upstream_credit(uint64_t addr) const {
        const uint64_t first = layout.upstream_credit[0];
        return addr >= first && addr < first + 16ull * pf::kMaxSenderChannels;
    }

  private:
    // (slot index, whether addr is its first byte) of a ring of `slots` slots from `base`.
    std::optional<std::pair<uint16_t, bool>> slot_of(uint32_t base, uint32_t slots,
                                                     uint64_t addr) const {
        if (addr < base || addr >= base + uint64_t{slots} * layout.slot_bytes) return std::nullopt;
        const uint64_t off = addr - base;
        return std::pair{static_cast<uint16_t>(off / layout.slot_bytes),
                         off % layout.slot_bytes == 0};
    }
};

std::string_view trace_event_name(TraceEventKind k) {
    switch (k) {
        case TraceEventKind::WorkerSend:
            return "send";
        case TraceEventKind::Take:
            return "take";
        case TraceEventKind::Send:
            return "send";
        case TraceEventKind::Forward:
            return "forward";
        case TraceEventKind::Deliver:
            return "deliver";
        case TraceEventKind::Credit:
            return "credit";
        default:
            return "unknown";
    }
}

PacketTrace::PacketTrace(const FabricPlan& plan, uint64_t max_records)
    : arch_(plan.arch), max_records_(max_records) {
    if (max_records == 0) {
        fail(ErrorCategory::BadInput, "packet trace: the most records kept must be at least 1");
    }
    ChipId last_chip = 0;
    for (const auto& p : plan.routers) last_chip = std::max(last_chip, p.chip);
    routers_of_chip_.resize(last_chip + 1);
    kept_.resize(last_chip + 1);
    for (const auto& p : plan.routers) {
        Router r;
        r.chip = p.chip;
        r.core = p.core.core;
        r.eth_channel = p.eth_channel;
        r.config = p.config;
        r.layout = p.layout;
        r.name = p.mesh ? fmt::format("router eth {} ({}) {} plane {}", p.eth_channel,
                                      p.core.core.str(), dir_letter(p.mesh->dir), p.mesh->plane)
                        : fmt::format("router eth {} ({}) {}", p.eth_channel, p.core.core.str(),
                                      dir_name(p.dir));
        routers_of_chip_[p.chip].push_back(routers_.size());
        routers_.push_back(std::move(r));
    }
    for (Router& r : routers_) {
        for (size_t i = 0; i < routers_.size(); ++i) {
            if (routers_[i].chip == r.config.peer_chip_id &&
                routers_[i].eth_channel == r.config.peer_eth_channel) {
                r.peer = static_cast<uint16_t>(i);
            }
        }
    }
}

PacketTrace::~PacketTrace() = default;

const PacketTrace::Router* PacketTrace::router_at(ChipId chip, CoreCoord core) const {
    if (chip >= routers_of_chip_.size()) return nullptr;
    for (const size_t i : routers_of_chip_[chip]) {
        if (routers_[i].core == core) return &routers_[i];
    }
    return nullptr;
}

void PacketTrace::keep(ChipId chip, const Record& r) {
    if (count_.fetch_add(1) >= max_records_) {
        count_.fetch_sub(1);
        left_out_.fetch_add(1);
        uint64_t first = cap_cycle_.load();
        while (r.cycle < first && !cap_cycle_.compare_exchange_weak(first, r.cycle)) {
        }
        return;
    }
    kept_[chip].push_back(r);
}

uint64_t PacketTrace::records() const {
    return count_.load();
}

uint16_t PacketTrace::index_of(const Router& r) const {
    return static_cast<uint16_t>(&r - routers_.data());
}

void PacketTrace::noc_landed(ChipId chip, const TraceNocLanding& l) {
    const Router* dst = router_at(chip, l.dst);
    const Router* src = router_at(chip, l.src);
    if (dst != nullptr && push(chip, l, *dst, src)) return;
    if (src != nullptr) router_request(chip, l, *src, dst);
}

// A header written to the start of one of `dst`'s sender slots: by a worker (any core that is not
// a router), or forwarded by the router `src` from its receive slot.
bool PacketTrace::push(ChipId chip, const TraceNocLanding& l, const Router& dst,
                       const Router* src) {
    if (l.kind != TraceNocLanding::Kind::Write || l.len < sizeof(pf::PacketHeader) ||
        l.data == nullptr) {
        return false;
    }
    const auto into = dst.sender_slot_at(l.dst_addr);
    if (!into) return false;
    Record rec;
    rec.kind = RecordKind::Push;
    rec.cycle = l.cycle;
    rec.router = index_of(dst);
    rec.channel = into->channel;
    rec.slot = into->slot;
    rec.header = header_of(l.data);
    rec.x = static_cast<uint8_t>(l.src.x);
    rec.y = static_cast<uint8_t>(l.src.y);
    if (const auto from = src != nullptr ? src->rx_slot_holding(l.src_addr) : std::nullopt) {
        rec.from = index_of(*src);
        rec.from_channel = from->channel;
        rec.from_slot = from->slot;
    }
    keep(chip, rec);
    return true;
}

// Any other request of router `src`: an atomic, a delivery read from its receive slot, a credit
// word written outside its slots (the upstream router's or a connected worker's; `dst` is the
// target when it is a router). Stream updates (a forward's Pushed +1) are not kept.
void PacketTrace::router_request(ChipId chip, const TraceNocLanding& l, const Router& src,
                                 const Router* dst) {
    Record rec;
    rec.cycle = l.cycle;
    rec.router = index_of(src);
    rec.x = static_cast<uint8_t>(l.dst.x);
    rec.y = static_cast<uint8_t>(l.dst.y);
    rec.addr = static_cast<uint32_t>(l.dst_addr);
    const auto from =
        l.kind == TraceNocLanding::Kind::Write ? src.rx_slot_holding(l.src_addr) : std::nullopt;
    if (l.kind == TraceNocLanding::Kind::Atomic) {
        rec.kind = RecordKind::Atomic;
    } else if (l.dst_addr >= hal::noc::kMmioStart) {
        return;
    } else if (from) {
        rec.kind = RecordKind::Deliver;
        rec.channel = from->channel;
        rec.slot = from->slot;
    } else if (dst == nullptr || dst->is_upstream_credit(l.dst_addr)) {
        rec.kind = RecordKind::CreditWrite;
        rec.count = l.kind == TraceNocLanding::Kind::InlineWrite ? l.value : first_word(l);
    } else {
        return;
    }
    keep(chip, rec);
}

void PacketTrace::eth_landed(ChipId chip, uint32_t channel, const TraceEthLanding& l) {
    if (chip >= routers_of_chip_.size()) return;
    const Router* to = nullptr;
    for (const size_t i : routers_of_chip_[chip]) {
        if (routers_[i].eth_channel == channel) to = &routers_[i];
    }
    if (to == nullptr || to->peer == kNoRouter) return;
    const Router& from = routers_[to->peer];
    Record rec;
    rec.cycle = l.landed_cycle;
    rec.router = index_of(*to);
    rec.from = to->peer;
    if (!l.is_data) {
        // Completions for our sender channel c: +n on its Completed stream, from the peer.
        const hal::ArchMap& a = hal::arch_map(arch_);
        for (uint32_t c = 0; c < pf::kMaxSenderChannels; ++c) {
            if (l.dest == hal::stream::reg_addr(pf::kStreamCompleted0 + c,
                                                a.stream.remote_dest_buf_space_available_update)) {
                rec.kind = RecordKind::Completion;
                rec.channel = static_cast<uint8_t>(c);
                rec.count = static_cast<uint32_t>(stream_delta(l.reg_value));
                keep(chip, rec);
                return;
            }
        }
        return;
    }
    const auto into = to->rx_slot_holding(l.dest, true);
    const auto out_of = from.sender_slot_holding(l.src);
    if (!into || !out_of || l.size < sizeof(pf::PacketHeader) || l.data == nullptr) return;
    rec.kind = RecordKind::Landed;
    rec.start = l.accepted_cycle;
    rec.channel = into->channel;
    rec.slot = into->slot;
    rec.from_channel = out_of->channel;
    rec.from_slot = out_of->slot;
    rec.header = header_of(l.data);
    if (rec.header.send_type == static_cast<uint8_t>(pf::NocSendType::AtomicInc)) {
        const pf::NocTarget t = atomic_target_of(l.data);
        rec.addr = t.addr;
        rec.x = t.x;
        rec.y = t.y;
    }
    keep(chip, rec);
}

void PacketTrace::stream_store(ChipId chip, CoreCoord core, uint32_t addr, uint32_t value,
                               uint64_t cycle) {
    const Router* r = router_at(chip, core);
    if (r == nullptr) return;
    const hal::ArchMap& a = hal::arch_map(arch_);
    for (uint32_t rx = 0; rx < pf::kNumReceiverChannels; ++rx) {
        if (addr != hal::stream::reg_addr(pf::kStreamRxSent0 + rx,
                                          a.stream.remote_dest_buf_space_available_update)) {
            continue;
        }
        const int32_t delta = stream_delta(value);
        if (delta >= 0) return;  // a reset or an increment is not a take
        Record rec;
        rec.kind = RecordKind::Take;
        rec.cycle = cycle;
        rec.router = index_of(*r);
        rec.channel = static_cast<uint8_t>(rx);
        rec.count = static_cast<uint32_t>(-delta);
        keep(chip, rec);
        return;
    }
}

// ---- the timeline ---------------------------------------------------------------------------

namespace {

// Replays the kept records in cycle order, following each packet through the slots it occupies.
class TimelineBuilder {
  public:
    TimelineBuilder(PacketTimeline& t, size_t routers) : t_(t) { t_.routers.resize(routers); }

    using Record = PacketTrace::Record;

    void replay(const Record& r) {
        switch (r.kind) {
            case RecordKind::Push:
                push(r);
                break;
            case RecordKind::Landed:
                landed(r);
                break;
            case RecordKind::Take:
                take(r);
                break;
            case RecordKind::Deliver:
                deliver(r, key(r.router, r.channel, r.slot));
                break;
            case RecordKind::Atomic:
                atomic(r);
                break;
            case RecordKind::Completion:
                completion(r);
                break;
            case RecordKind::CreditWrite:
                credit(r.router, r.cycle, r.count, where(r));
                break;
            default:
                break;
        }
    }

    std::function<std::string(uint16_t)> router_name;
    std::function<ChipId(uint16_t)> router_chip;
    std::function<uint16_t(uint16_t)> peer_of;
    std::function<uint32_t(ChipId, CoreCoord)> worker_track;

  private:
    struct SenderSlot {
        uint64_t packet = 0;
        size_t last_event = kNoEvent;
    };
    struct RxSlot {
        uint64_t packet = 0;
        size_t send_event = kNoEvent;
        size_t take_event = kNoEvent;
        bool delivered = false;
    };
    struct PendingAtomic {
        uint64_t slot_key = 0;
        uint64_t packet = 0;
        uint32_t addr = 0;
        uint8_t x = 0;
        uint8_t y = 0;
    };

    static uint64_t key(uint16_t router, uint8_t channel, uint16_t slot) {
        return (uint64_t{router} << 32) | (uint64_t{channel} << 16) | slot;
    }
    std::string where(const Record& r) const {
        return fmt::format("chip {} core {}-{} {:#x}", router_chip(r.router), r.x, r.y, r.addr);
    }

    static TraceEvent event(TraceEventKind kind, uint32_t track, uint64_t cycle, uint64_t packet) {
        TraceEvent e;
        e.kind = kind;
        e.track = track;
        e.cycle = cycle;
        e.packet = packet;
        return e;
    }
    size_t add(TraceEvent e) {
        t_.events.push_back(std::move(e));
        return t_.events.size() - 1;
    }
    void flow(size_t from, size_t to) {
        if (from == kNoEvent || to == kNoEvent) return;
        t_.flows.push_back({t_.flows.size() + 1, from, to});
    }
    uint64_t new_packet(const TracePacketHeader& h) {
        t_.packets.push_back(h);
        return t_.packets.size();
    }

    void push(const Record& r) {
        SenderSlot& into = sender_[key(r.router, r.channel, r.slot)];
        if (r.from == kNoRouter) {
            const uint64_t p = new_packet(r.header);
            const ChipId chip = router_chip(r.router);
            TraceEvent e =
                event(TraceEventKind::WorkerSend, worker_track(chip, {r.x, r.y}), r.cycle, p);
            e.channel = r.channel;
            e.to = router_name(r.router);
            into = {p, add(std::move(e))};
            return;
        }
        RxSlot& from = rx_[key(r.from, r.from_channel, r.from_slot)];
        if (from.packet == 0) from.packet = new_packet(r.header);
        taken(r.from, r.from_channel, from, r.cycle);
        TraceEvent e = event(TraceEventKind::Forward, r.from, r.cycle, from.packet);
        e.channel = r.from_channel;
        e.to = fmt::format("{} ch{}", router_name(r.router), r.channel);
        const size_t ev = add(std::move(e));
        ++t_.routers[r.from].forwards;
        flow(from.take_event, ev);
        into = {from.packet, ev};
    }

    void landed(const Record& r) {
        SenderSlot& out = sender_[key(r.from, r.from_channel, r.from_slot)];
        if (out.packet == 0) out.packet = new_packet(r.header);
        TraceEvent e = event(TraceEventKind::Send, r.from, r.start, out.packet);
        e.channel = r.from_channel;
        e.landed = r.cycle;
        e.to = fmt::format("{} rx{}", router_name(r.router), r.channel);
        const size_t ev = add(std::move(e));
        ++t_.routers[r.from].sends;
        flow(out.last_event, ev);
        const uint64_t k = key(r.router, r.channel, r.slot);
        rx_[k] = {out.packet, ev, kNoEvent, false};
        fifo_[key(r.router, r.channel, 0)].push_back(k);
        if (r.header.send_type == static_cast<uint8_t>(pf::NocSendType::AtomicInc)) {
            atomics_[r.router].push_back({k, out.packet, r.addr, r.x, r.y});
        }
    }

    // The packet in `slot` is taken at `cycle` unless it was already (its first delivery or
    // forward landed before its batch's stream update).
    void taken(uint16_t router, uint8_t rx, RxSlot& slot, uint64_t cycle) {
        if (slot.take_event != kNoEvent) return;
        TraceEvent e = event(TraceEventKind::Take, router, cycle, slot.packet);
        e.channel = rx;
        slot.take_event = add(std::move(e));
        ++t_.routers[router].takes;
        flow(slot.send_event, slot.take_event);
    }

    void take(const Record& r) {
        std::deque<uint64_t>& landed = fifo_[key(r.router, r.channel, 0)];
        for (uint32_t i = 0; i < r.count && !landed.empty(); ++i) {
            taken(r.router, r.channel, rx_[landed.front()], r.cycle);
            landed.pop_front();
        }
    }

    void deliver(const Record& r, uint64_t slot_key) {
        RxSlot& slot = rx_[slot_key];
        if (slot.delivered) return;  // a scatter's later chunk
        slot.delivered = true;
        taken(r.router, r.channel, slot, r.cycle);
        TraceEvent e = event(TraceEventKind::Deliver, r.router, r.cycle, slot.packet);
        e.channel = static_cast<uint32_t>((slot_key >> 16) & 0xFF);
        e.to = where(r);
        const size_t ev = add(std::move(e));
        ++t_.routers[r.router].deliveries;
        flow(slot.take_event, ev);
    }

    // A router's atomic: the delivery of its oldest AtomicInc packet for that target (the
    // increment of a fused write is part of the write's delivery).
    void atomic(const Record& r) {
        auto& pending = atomics_[r.router];
        const auto it = std::find_if(pending.begin(), pending.end(), [&](const PendingAtomic& a) {
            return a.addr == r.addr && a.x == r.x && a.y == r.y;
        });
        if (it == pending.end()) return;
        const uint64_t k = it->slot_key;
        const bool same = rx_[k].packet == it->packet;
        pending.erase(it);
        if (!same) return;
        Record d = r;
        d.channel = static_cast<uint8_t>((k >> 16) & 0xFF);
        deliver(d, k);
    }

    // Completions for r.router's sender channel: returned by its peer.
    void completion(const Record& r) {
        const uint16_t by = peer_of(r.router) != kNoRouter ? peer_of(r.router) : r.router;
        credit(by, r.cycle, r.count, fmt::format("{} ch{}", router_name(r.router), r.channel));
    }

    void credit(uint16_t router, uint64_t cycle, uint32_t count, std::string to) {
        TraceEvent e = event(TraceEventKind::Credit, router, cycle, 0);
        e.count = count;
        e.to = std::move(to);
        add(std::move(e));
        ++t_.routers[router].credits;
    }

    PacketTimeline& t_;
    std::map<uint64_t, SenderSlot> sender_;
    std::map<uint64_t, RxSlot> rx_;
    std::map<uint64_t, std::deque<uint64_t>> fifo_;  // per (router, rx): landed, oldest first
    std::map<uint16_t, std::vector<PendingAtomic>> atomics_;
};

// Events in cycle order (stable), the flows' ends renumbered to match.
void sort_events(PacketTimeline& t) {
    std::vector<size_t> order(t.events.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return t.events[a].cycle < t.events[b].cycle; });
    std::vector<size_t> position(order.size());
    std::vector<TraceEvent> sorted;
    sorted.reserve(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
        position[order[i]] = i;
        sorted.push_back(std::move(t.events[order[i]]));
    }
    t.events = std::move(sorted);
    for (TraceFlow& f : t.flows) {
        f.from = position[f.from];
        f.to = position[f.to];
    }
}

}  // namespace

PacketTimeline PacketTrace::timeline() const {
    PacketTimeline t;
    t.records = records();
    t.max_records = max_records_;
    t.left_out = left_out();
    if (t.left_out != 0) t.cap_reached_at = cap_cycle_.load();
    for (const Router& r : routers_)
        t.tracks.push_back({r.chip, r.core, &r - routers_.data(), r.name});

    std::vector<const Record*> all;
    for (const auto& chip : kept_) {
        for (const Record& r : chip) all.push_back(&r);
    }
    // Stable: one chip's records keep their order within a cycle.
    std::stable_sort(all.begin(), all.end(),
                     [](const Record* a, const Record* b) { return a->cycle < b->cycle; });

    TimelineBuilder b(t, routers_.size());
    b.router_name = [&](uint16_t i) {
        return fmt::format("chip {} {}", routers_[i].chip, routers_[i].name);
    };
    b.router_chip = [&](uint16_t i) { return routers_[i].chip; };
    b.peer_of = [&](uint16_t i) { return routers_[i].peer; };
    std::map<std::pair<ChipId, CoreCoord>, uint32_t> workers;
    b.worker_track = [&](ChipId chip, CoreCoord core) {
        const auto [it, added] =
            workers.try_emplace({chip, core}, static_cast<uint32_t>(t.tracks.size()));
        if (added) t.tracks.push_back({chip, core, std::nullopt, "worker " + core.str()});
        return it->second;
    };
    for (const Record* r : all) b.replay(*r);
    sort_events(t);
    return t;
}

// ---- Chrome trace-event JSON ------------------------------------------------------------------

namespace {

// JSON string contents (our names are ASCII; quotes and backslashes escaped all the same).
std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

uint32_t pid_of(const TraceTrack& tr) {
    return tr.chip + 1;  // pid 0 is special to some viewers
}

std::string event_args(const PacketTimeline& t, const TraceEvent& e) {
    std::string args = fmt::format("\"cycle\":{}", e.cycle);
    if (e.packet != 0) {
        const TracePacketHeader& h = t.packets[e.packet - 1];
        args += fmt::format(",\"packet\":{},\"seq\":{},\"send_type\":{},\"route\":\"{:#x}\"",
                            e.packet, h.seq, quoted(send_type_name(h.send_type)), h.route);
    }
    switch (e.kind) {
        case TraceEventKind::Send:
            args += fmt::format(",\"channel\":{},\"landed_cycle\":{},\"wire_cycles\":{}", e.channel,
                                e.landed, e.landed - e.cycle);
            break;
        case TraceEventKind::Take:
        case TraceEventKind::Deliver:
        case TraceEventKind::Forward:
            args += fmt::format(",\"rx\":{}", e.channel);
            break;
        case TraceEventKind::Credit:
            args += fmt::format(",\"count\":{}", e.count);
            break;
        default:
            break;
    }
    if (!e.to.empty()) args += ",\"to\":" + quoted(e.to);
    return "{" + args + "}";
}

void write_metadata(std::ostream& out, const PacketTimeline& t, bool& first) {
    const auto emit = [&](const std::string& line) {
        out << (first ? "\n" : ",\n") << line;
        first = false;
    };
    std::map<ChipId, bool> chips;
    for (const TraceTrack& tr : t.tracks) chips[tr.chip] = true;
    for (const auto& [chip, _] : chips) {
        emit(fmt::format(
            R"({{"name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":"chip {}"}}}})",
            chip + 1, chip));
        emit(fmt::format(
            R"({{"name":"process_sort_index","ph":"M","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
            chip + 1, chip));
    }
    for (size_t i = 0; i < t.tracks.size(); ++i) {
        const TraceTrack& tr = t.tracks[i];
        emit(fmt::format(
            R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":{}}}}})",
            pid_of(tr), i + 1, quoted(tr.name)));
        emit(fmt::format(
            R"({{"name":"thread_sort_index","ph":"M","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
            pid_of(tr), i + 1, i));
    }
}

}  // namespace

void write_chrome_trace(std::ostream& out, const PacketTimeline& t) {
    out << "{\"traceEvents\":[";
    bool first = true;
    write_metadata(out, t, first);
    const auto emit = [&](const std::string& line) {
        out << (first ? "\n" : ",\n") << line;
        first = false;
    };
    // Flows start and end at the cycle of the slices they bind to; written after the slices.
    for (const TraceEvent& e : t.events) {
        const TraceTrack& tr = t.tracks[e.track];
        emit(fmt::format(
            R"({{"name":"{}","cat":"{}","ph":"X","ts":{},"dur":0.001,"pid":{},"tid":{},"args":{}}})",
            trace_event_name(e.kind), tr.router ? "router" : "worker", micros(e.cycle), pid_of(tr),
            e.track + 1, event_args(t, e)));
    }
    for (const TraceFlow& f : t.flows) {
        const TraceEvent& from = t.events[f.from];
        const TraceEvent& to = t.events[f.to];
        emit(fmt::format(
            R"({{"name":"packet","cat":"packet","ph":"s","id":{},"ts":{},"pid":{},"tid":{}}})",
            f.id, micros(from.cycle), pid_of(t.tracks[from.track]), from.track + 1));
        emit(fmt::format(
            R"({{"name":"packet","cat":"packet","ph":"f","bp":"e","id":{},"ts":{},"pid":{},"tid":{}}})",
            f.id, micros(to.cycle), pid_of(t.tracks[to.track]), to.track + 1));
    }
    out << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{"
        << fmt::format(
               "\"clock\":\"1 GHz core clock: 1 cycle = 0.001 us\",\"packets\":{},\"records\":{},"
               "\"max_records\":{},\"left_out\":{},\"cap_reached_at_cycle\":{}",
               t.packets.size(), t.records, t.max_records, t.left_out,
               t.cap_reached_at ? std::to_string(*t.cap_reached_at) : "null")
        << "}}\n";
}

std::optional<std::string> trace_cap_message(const PacketTimeline& t) {
    if (t.left_out == 0) return std::nullopt;
    return fmt::format(
        "packet trace: the cap of {} records was reached at cycle {}; {} later observations were "
        "left out (packets after it are missing or cut short)",
        t.max_records, t.cap_reached_at.value_or(0), t.left_out);
}

}  // namespace fabric
