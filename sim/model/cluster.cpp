// sim::Cluster: chips and Ethernet links on one clock.
//
// Links are stepped lazily: each keeps the first cycle at which it has something to do
// (eth::Link::next_event_cycle) and is only stepped from then on. Any access to one of its TX
// queues first brings it up to the current cycle (Link::run skips idle cycles exactly) and makes it
// step in the current cycle, so a command written at cycle c is accepted at c exactly as if the
// link had been stepped every cycle.
#include "cluster.h"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <thread>
#include <utility>

#include "protocol/erisc_base_fw.h"
#include "protocol/erisc_remote_access.h"

namespace sim {

namespace bfw = protocol::base_fw;
namespace ra = protocol::remote_access;

namespace {

std::string hex(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

std::string port_str(uint32_t chip, uint32_t chan) {
    return "chip " + std::to_string(chip) + " eth channel " + std::to_string(chan);
}

}  // namespace

// The threads of partitions 1..N-1: they wait at a barrier for a round, step their partition and
// meet again at the barrier; the caller's thread steps partition 0 meanwhile.
//
// Wall time is measured for ThreadMeetings only (how long rounds take, how long a thread waits for
// the slowest); nothing simulated depends on it.
class Cluster::Workers {
  public:
    explicit Workers(uint32_t partitions)
        : sync_(partitions), waited_(partitions, 0.0), job_cpu_(partitions, 0.0) {
        for (uint32_t i = 1; i < partitions; ++i) threads_.emplace_back([this, i] { serve(i); });
    }
    ~Workers() {
        stop_ = true;
        sync_.arrive_and_wait();
        for (auto& t : threads_) t.join();
    }
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;

    // job(i) for every partition i, in parallel; returns when all are done.
    void run(const std::function<void(uint32_t)>& job) {
        const auto start = Clock::now();
        job_ = &job;
        sync_.arrive_and_wait();
        timed_job(0);
        finish(0);
        round_seconds_ += seconds_since(start);
        // The round's critical path: its slowest job, in CPU time (what it would take on idle
        // cores, whatever else the machine runs).
        double slowest = 0;
        for (double c : job_cpu_) {
            cpu_seconds_ += c;
            slowest = std::max(slowest, c);
        }
        critical_cpu_seconds_ += slowest;
    }

    // CPU seconds of all jobs, and of the slowest job of each round summed over rounds:
    // cpu / critical is the speed-up the partitions allow on as many idle cores.
    double cpu_seconds() const { return cpu_seconds_; }
    double critical_cpu_seconds() const { return critical_cpu_seconds_; }

    // Seconds spent in rounds, and waited at their ends by all threads together.
    double round_seconds() const { return round_seconds_; }
    double waited_seconds() const {
        double sum = 0;
        for (double w : waited_) sum += w;
        return sum;
    }

  private:
    using Clock = std::chrono::steady_clock;
    static double seconds_since(Clock::time_point t) {
        return std::chrono::duration<double>(Clock::now() - t).count();
    }

    void serve(uint32_t i) {
        while (true) {
            sync_.arrive_and_wait();
            if (stop_) return;
            timed_job(i);
            finish(i);
        }
    }

    static double thread_cpu_seconds() {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
    }

    void timed_job(uint32_t i) {
        const double cpu0 = thread_cpu_seconds();
        (*job_)(i);
        job_cpu_[i] = thread_cpu_seconds() - cpu0;  // each thread its own slot
    }

    // Partition i's job is done: wait for the others.
    void finish(uint32_t i) {
        const auto done = Clock::now();
        sync_.arrive_and_wait();
        waited_[i] += seconds_since(done);  // each thread its own slot
    }

    std::barrier<> sync_;
    std::vector<double> waited_;
    std::vector<double> job_cpu_;  // of the current round, per partition
    double round_seconds_ = 0;
    double cpu_seconds_ = 0;
    double critical_cpu_seconds_ = 0;
    const std::function<void(uint32_t)>* job_ = nullptr;
    bool stop_ = false;  // written before the barrier the threads pass next
    std::vector<std::thread> threads_;
};

Cluster::ThreadMeetings Cluster::thread_meetings() const {
    ThreadMeetings m{static_cast<uint32_t>(parts_.size()), windows_, rounds_};
    if (workers_) {
        m.round_seconds = workers_->round_seconds();
        m.waited_seconds = workers_->waited_seconds();
        m.cpu_seconds = workers_->cpu_seconds();
        m.critical_cpu_seconds = workers_->critical_cpu_seconds();
    }
    return m;
}

uint8_t Cluster::LinkSlot::sides_in(uint32_t p) const {
    uint8_t sides = 0;
    if (partition[0] == p) sides |= eth::Link::kSideA;
    if (partition[1] == p) sides |= eth::Link::kSideB;
    return sides;
}

std::string CoreReport::describe() const {
    std::string s = "chip " + std::to_string(chip) + " core " + std::to_string(core.x) + "-" +
                    std::to_string(core.y);
    if (eth_channel) s += " (eth " + std::to_string(*eth_channel) + ")";
    s += ": ";
    switch (state) {
        case RunState::Reset:
            return s + "held in reset";
        case RunState::Running:
            if (base_firmware && !busy) return s + "base firmware idle at pc " + hex(pc);
            return s + "running at pc " + hex(pc);
        case RunState::Exited:
            return s + "exited with status " + std::to_string(exit_code);
        case RunState::Trapped:
            return s + "trapped: " + trap_cause_name(trap.cause) + " (mcause " +
                   std::to_string(trap.cause) + ") at pc " + hex(trap.pc) + ", tval " +
                   hex(trap.tval);
        default:
            return s + "unknown state";
    }
}

std::vector<CoreReport> RunReport::stuck() const {
    std::vector<CoreReport> out;
    for (const auto& c : cores) {
        if (c.busy) out.push_back(c);
    }
    return out;
}

Cluster::Cluster(std::vector<ChipSpec> chips, ClusterOptions options)
    : options_(std::move(options)) {
    if (chips.empty())
        throw std::invalid_argument("sim::Cluster: a cluster needs at least one chip");
    for (const auto& s : chips) {
        if (s.arch != chips.front().arch) {
            throw std::invalid_argument("sim::Cluster: chips of different arches (" +
                                        std::string(hal::arch_map(chips.front().arch).name) +
                                        " and " + hal::arch_map(s.arch).name +
                                        ") cannot be linked");
        }
    }
    if (options_.wh_base_firmware) {
        const BootImage& img = *options_.wh_base_firmware;
        for (const auto& seg : img.segments) {
            if (seg.addr < bfw::kImageBase || seg.addr > bfw::kImageEnd ||
                seg.bytes.size() > bfw::kImageEnd - seg.addr) {
                throw std::invalid_argument(
                    "sim::Cluster: base firmware segment at " + hex(seg.addr) + " (" +
                    std::to_string(seg.bytes.size()) +
                    " bytes) is outside the base firmware region [0, " + hex(bfw::kImageEnd) + ")");
            }
        }
        if (img.entry >= bfw::kImageEnd) {
            throw std::invalid_argument("sim::Cluster: base firmware entry " + hex(img.entry) +
                                        " is outside the base firmware region");
        }
    }
    for (uint32_t i = 0; i < chips.size(); ++i) {
        if (chips[i].name == ChipSpec{}.name) chips[i].name = "chip" + std::to_string(i);
        chips_.push_back(std::make_unique<Chip>(std::move(chips[i])));
        booted_.emplace_back(chips_.back()->eth_channels(), false);
        chips_.back()->on_tile_created(
            [this, i](uint32_t x, uint32_t y) { tile_created(i, x, y); });
    }
    partition_chips();
}

void Cluster::partition_chips() {
    if (options_.threads == 0)
        throw std::invalid_argument("sim::Cluster: threads must be at least 1");
    const auto n = static_cast<uint32_t>(chips_.size());
    const uint32_t count = std::min(options_.threads, n);
    parts_.resize(count);
    for (uint32_t p = 0; p < count; ++p) parts_[p].index = p;
    // Consecutive chips, as even as the count allows (8 over 3: 3, 3, 2).
    for (uint32_t c = 0; c < n; ++c) {
        const uint32_t p = static_cast<uint32_t>(uint64_t{c} * count / n);
        partition_of_.push_back(p);
        parts_[p].chips.push_back(c);
    }
    if (count == 1) return;
    const uint32_t latency =
        options_.link.value_or(eth::LinkConfig::for_arch(chips_.front()->arch())).latency_cycles;
    if (latency == 0) {
        throw std::invalid_argument(
            "sim::Cluster: " + std::to_string(options_.threads) +
            " threads need links of at least 1 cycle of latency (the window the partitions run "
            "alone), got 0");
    }
    window_ = latency;
    workers_ = std::make_unique<Workers>(count);
}

Cluster::~Cluster() = default;

Chip& Cluster::chip(uint32_t id) {
    if (id >= chips_.size()) {
        throw std::out_of_range("sim::Cluster: chip " + std::to_string(id) +
                                " does not exist (the cluster has " +
                                std::to_string(chips_.size()) + ")");
    }
    return *chips_[id];
}

bool Cluster::base_firmware_on(uint32_t chip) const {
    return options_.wh_base_firmware.has_value() &&
           chips_[chip]->spec().arch == hal::Arch::WormholeB0;
}

// ---- connections -------------------------------------------------------------------------------

void Cluster::connect(uint32_t chip_a, uint32_t chan_a, uint32_t chip_b, uint32_t chan_b) {
    for (const auto& [c, ch] : {std::pair{chip_a, chan_a}, std::pair{chip_b, chan_b}}) {
        if (c >= chips_.size()) {
            throw std::invalid_argument("sim::Cluster::connect: chip " + std::to_string(c) +
                                        " does not exist (the cluster has " +
                                        std::to_string(chips_.size()) + ")");
        }
        if (ch >= chips_[c]->eth_channels()) {
            throw std::invalid_argument("sim::Cluster::connect: " + port_str(c, ch) +
                                        " does not exist (the chip has " +
                                        std::to_string(chips_[c]->eth_channels()) + " channels)");
        }
        if (link_of_.count({c, ch}) != 0) {
            throw std::invalid_argument("sim::Cluster::connect: " + port_str(c, ch) +
                                        " is already connected");
        }
    }
    const EthPort a{chip_a, chan_a};
    const EthPort b{chip_b, chan_b};
    if (a == b)
        throw std::invalid_argument("sim::Cluster::connect: " + port_str(chip_a, chan_a) +
                                    " joined to itself");
    const auto index = static_cast<uint32_t>(links_.size());
    links_.push_back(LinkSlot{a, b, nullptr, nullptr, {0, 0}});
    link_of_[a] = index;
    link_of_[b] = index;
    // Ports whose cores already run: build the link now and tell their base firmware.
    for (const EthPort& p : {a, b}) {
        const noc::Coord c = chips_[p.chip]->eth_core(p.channel);
        if (chips_[p.chip]->instantiated(c.x, c.y)) build_link(index);
    }
    for (const EthPort& p : {a, b}) {
        publish_training(p.chip, p.channel);
        publish_link_status(p.chip, p.channel);
    }
}

std::optional<EthPort> Cluster::peer(uint32_t chip, uint32_t channel) const {
    const auto it = link_of_.find({chip, channel});
    if (it == link_of_.end()) return std::nullopt;
    const LinkSlot& l = links_[it->second];
    return l.a == EthPort{chip, channel} ? l.b : l.a;
}

void Cluster::tile_created(uint32_t chip, uint32_t x, uint32_t y) {
    if (const auto channel = chips_[chip]->eth_channel(x, y)) {
        if (base_firmware_on(chip)) boot_base_firmware(chip, x, y, *channel);
        const auto it = link_of_.find({chip, *channel});
        if (it != link_of_.end()) build_link(it->second);
        publish_link_status(chip, *channel);
    }
    if (user_created_) user_created_(chip, x, y);
}

void Cluster::on_tile_created(std::function<void(uint32_t, uint32_t, uint32_t)> hook) {
    user_created_ = std::move(hook);
}

bool Cluster::runs_base_firmware(uint32_t chip, uint32_t channel) const {
    return chip < booted_.size() && channel < booted_[chip].size() && booted_[chip][channel];
}

void Cluster::build_link(uint32_t index) {
    if (links_[index].link) return;
    const EthPort a = links_[index].a;
    const EthPort b = links_[index].b;
    Chip& ca = *chips_[a.chip];
    Chip& cb = *chips_[b.chip];
    const noc::Coord pa = ca.eth_core(a.channel);
    const noc::Coord pb = cb.eth_core(b.channel);
    // Instantiating one side runs tile_created for it, which comes back here: build once.
    ca.tile(pa.x, pa.y);
    cb.tile(pb.x, pb.y);
    if (links_[index].link) return;

    const eth::LinkConfig cfg = options_.link.value_or(eth::LinkConfig::for_arch(ca.arch()));
    auto link = std::make_unique<eth::Link>(
        cfg, eth::LinkSide{*ca.txq(pa.x, pa.y), cb.endpoint(pb.x, pb.y)},
        eth::LinkSide{*cb.txq(pb.x, pb.y), ca.endpoint(pa.x, pa.y)});
    link->run(cycle_);  // nothing is scheduled yet: only brings its clock to the cluster's
    LinkSlot& l = links_[index];
    l.link = std::move(link);
    l.next[0] = l.next[1] = cycle_;
    l.partition[0] = partition_of_[a.chip];
    l.partition[1] = partition_of_[b.chip];
    l.link->set_split(l.split());
    built_.push_back(index);
    parts_[l.partition[0]].links.push_back(index);
    if (l.split()) parts_[l.partition[1]].links.push_back(index);
    // A TXQ access on one side's core brings the sides its partition steps to that partition's
    // cycle (the thread running it is the only one touching them) and makes them step now.
    auto hook = [this, index](uint32_t side) {
        LinkSlot& s = links_[index];
        const uint32_t p = s.partition[side];
        const uint8_t sides = s.sides_in(p);
        sync_link(s, sides, parts_[p].cycle);
        s.next_of(sides) = std::min(s.next_of(sides), parts_[p].cycle);
    };
    ca.set_txq_hook(pa.x, pa.y, [hook] { hook(0); });
    cb.set_txq_hook(pb.x, pb.y, [hook] { hook(1); });
    l.link->on_state_change([this, a, b](bool) {
        publish_link_status(a.chip, a.channel);
        publish_link_status(b.chip, b.channel);
    });
    tap_link(l);
}

// A link's landed commands, passed on to the packet tap as the receiving port's.
class Cluster::TapLink final : public eth::LandingObserver {
  public:
    TapLink(PacketTap& tap, EthPort a, EthPort b) : tap_(tap), a_(a), b_(b) {}
    void landed(const eth::LandedCommand& c) override {
        const EthPort& to = c.dir == eth::Dir::AtoB ? b_ : a_;
        tap_.eth_landed(to.chip, to.channel, c);
    }

  private:
    PacketTap& tap_;
    EthPort a_;
    EthPort b_;
};

void Cluster::tap_link(LinkSlot& l) {
    l.tap = tap_ != nullptr ? std::make_shared<TapLink>(*tap_, l.a, l.b) : nullptr;
    l.link->observe_landings(l.tap.get());
}

void Cluster::set_packet_tap(PacketTap* tap) {
    tap_ = tap;
    for (uint32_t c = 0; c < chip_count(); ++c) chips_[c]->set_packet_tap(tap, c);
    for (const uint32_t index : built_) tap_link(links_[index]);
}

eth::Link& Cluster::link(uint32_t chip, uint32_t channel) {
    const auto it = link_of_.find({chip, channel});
    if (it == link_of_.end()) {
        throw std::out_of_range("sim::Cluster::link: " + port_str(chip, channel) +
                                " is not connected");
    }
    build_link(it->second);
    LinkSlot& l = links_[it->second];
    sync_link(l, eth::Link::kSideA, cycle_);
    sync_link(l, eth::Link::kSideB, cycle_);
    for (uint64_t& next : l.next) next = std::min(next, cycle_);  // faults may change: re-evaluate
    return *l.link;
}

// ---- base firmware -----------------------------------------------------------------------------

namespace {
// A chip's Ethernet coordinates as training reports them (0x0000YYXX): the model numbers chips
// along x, 64 to a row.
uint32_t eth_coord(uint32_t chip) {
    return ra::pack_coord(chip % 64, chip / 64);
}
}  // namespace

void Cluster::publish_training(uint32_t chip, uint32_t channel) {
    if (!booted_[chip][channel]) return;
    Chip& c = *chips_[chip];
    const noc::Coord at = c.eth_core(channel);
    const auto p = peer(chip, channel);
    c.write32(at.x, at.y, bfw::kTrainStatus, p ? bfw::kTrainStatusOk : bfw::kTrainStatusFail);
    c.write32(at.x, at.y, bfw::kLinkError,
              p ? bfw::kLinkErrorNone : bfw::kLinkErrorPortNotPopulated);
    c.write32(at.x, at.y, bfw::kLocalEthId, channel);
    c.write32(at.x, at.y, bfw::results_word(bfw::kResultsLocalAsicIdWord), chip);
    c.write32(at.x, at.y, bfw::results_word(bfw::kResultsRemoteAsicIdWord), p ? p->chip : 0);
    c.write32(at.x, at.y, bfw::results_word(bfw::kResultsRemoteEthIdWord), p ? p->channel : 0);
    c.write32(at.x, at.y, bfw::results_word(ra::kResultsLocalCoordWord), eth_coord(chip));
    c.write32(at.x, at.y, bfw::results_word(ra::kResultsRemoteCoordWord),
              p ? eth_coord(p->chip) : 0);
}

bool Cluster::port_up(uint32_t chip, uint32_t channel) const {
    const auto it = link_of_.find({chip, channel});
    if (it == link_of_.end()) return false;
    const LinkSlot& l = links_[it->second];
    return !l.link || l.link->up();
}

void Cluster::publish_link_status(uint32_t chip, uint32_t channel) {
    Chip& c = *chips_[chip];
    const noc::Coord at = c.eth_core(channel);
    const hal::EthLinkStatus& word = c.arch().link_status;
    // A core modeled with less L1 than the word's address (small test chips) has no such word.
    if (!c.instantiated(at.x, at.y) || c.core_spec(at.x, at.y)->l1_size < word.addr + 4) return;
    const bool up = port_up(chip, channel);
    c.write32(at.x, at.y, word.addr, up ? word.up : word.down);
    if (runs_base_firmware(chip, channel)) {
        c.write32(at.x, at.y, bfw::kTrainStatus, up ? bfw::kTrainStatusOk : bfw::kTrainStatusFail);
    }
}

void Cluster::boot_base_firmware(uint32_t chip, uint32_t x, uint32_t y, uint32_t channel) {
    namespace hc = hal::common;
    Chip& c = *chips_[chip];
    const BootImage& img = *options_.wh_base_firmware;
    for (const auto& seg : img.segments) c.write(x, y, seg.addr, seg.bytes);
    booted_[chip][channel] = true;
    publish_training(chip, channel);
    c.write32(x, y, hc::kErisc0ResetPcReg, img.entry);
    c.write32(x, y, hc::kSoftResetReg, hc::kSoftResetAllRiscs & ~hc::kSoftResetErisc0);
    c.set_idle_word(x, y, bfw::kLaunchAppFlag);
}

// ---- time --------------------------------------------------------------------------------------

void Cluster::sync_link(LinkSlot& l, uint8_t sides, uint64_t cycle) {
    if (!l.split()) sides = eth::Link::kBothSides;  // one partition steps both sides together
    const uint64_t at = l.link->cycle(sides);
    if (at < cycle) l.link->run(sides, cycle - at);
}

void Cluster::sync_links() {
    for (uint32_t i : built_) {
        sync_link(links_[i], eth::Link::kSideA, cycle_);
        sync_link(links_[i], eth::Link::kSideB, cycle_);
    }
}

void Cluster::wake_links() {
    for (uint32_t i : built_) {
        for (uint64_t& next : links_[i].next) next = std::min(next, cycle_);  // faults may differ
    }
}

void Cluster::exchange_links() {
    for (uint32_t i : built_) {
        LinkSlot& l = links_[i];
        if (!l.split()) continue;
        const uint8_t received = l.link->exchange();
        for (uint8_t side : {eth::Link::kSideA, eth::Link::kSideB}) {
            if ((received & side) == 0) continue;
            uint64_t& next = l.next_of(side);
            next = std::min(next, l.link->next_event_cycle(side));
        }
    }
}

bool Cluster::partition_busy(const Partition& p) const {
    for (uint32_t c : p.chips) {
        if (chips_[c]->busy()) return true;
    }
    return false;
}

bool Cluster::partition_quiet(const Partition& p) const {
    for (uint32_t c : p.chips) {
        if (!chips_[c]->quiescent()) return false;
    }
    return true;
}

uint64_t Cluster::others_busy_until(const Partition& p, uint64_t c) const {
    for (;; ++c) {
        bool known_busy = false;
        for (const Partition& q : parts_) {
            if (&q != &p && c < q.known_until && q.busy_at[c - window_start_] != 0) {
                known_busy = true;
                break;
            }
        }
        if (!known_busy) return c;
    }
}

void Cluster::step_links(Partition& p) {
    for (uint32_t i : p.links) {
        LinkSlot& l = links_[i];
        const uint8_t sides = l.split() ? l.sides_in(p.index) : eth::Link::kBothSides;
        uint64_t& next = l.next_of(sides);
        if (p.cycle >= next) {
            sync_link(l, sides, p.cycle);
            l.link->step(sides);
            next = options_.lazy_links ? l.link->next_event_cycle(sides) : p.cycle + 1;
        }
    }
}

uint64_t Cluster::busy_limit(Partition& p, uint64_t end, uint64_t& may_run_until) {
    const bool busy = partition_busy(p);
    if (!workers_) return busy ? p.cycle + 1 : p.cycle;  // alone: not busy is the cluster's stop
    p.busy_at[p.cycle - window_start_] = busy ? 1 : 0;
    if (busy) return p.cycle + 1;
    if (may_run_until <= p.cycle) may_run_until = others_busy_until(p, p.cycle);
    return std::min(end, may_run_until);  // p.cycle: the others have not said yet, wait here
}

bool Cluster::skip_quiet(Partition& p, uint64_t limit) {
    if (!partition_quiet(p)) return false;
    uint64_t next = UINT64_MAX;
    for (uint32_t i : p.links) {
        LinkSlot& l = links_[i];
        next = std::min(next, l.next_of(l.split() ? l.sides_in(p.index) : eth::Link::kBothSides));
    }
    const uint64_t skip = std::min(limit, std::max(next, p.cycle)) - p.cycle;
    if (skip == 0) return false;
    for (uint32_t c : p.chips) chips_[c]->step(skip);
    p.cycle += skip;
    return true;
}

void Cluster::run_partition(Partition& p, uint64_t end, bool only_while_busy) {
    uint64_t may_run_until = p.cycle;  // others are known busy before this cycle
    while (p.cycle < end) {
        const uint64_t limit = only_while_busy ? busy_limit(p, end, may_run_until) : end;
        if (limit == p.cycle) return;  // stop or wait here
        if (skip_quiet(p, limit)) continue;
        for (uint32_t c : p.chips) chips_[c]->step(1);
        step_links(p);
        ++p.cycle;
    }
}

void Cluster::run_partitions(uint64_t end, bool only_while_busy) {
    if (!workers_) {
        run_partition(parts_.front(), end, only_while_busy);
        return;
    }
    const std::function<void(uint32_t)> job = [&](uint32_t i) {
        try {
            run_partition(parts_[i], end, only_while_busy);
        } catch (...) {
            parts_[i].error = std::current_exception();
        }
    };
    workers_->run(job);
    for (Partition& p : parts_) {
        if (p.error) std::rethrow_exception(std::exchange(p.error, nullptr));
    }
}

bool Cluster::run_window(uint64_t end, bool only_while_busy) {
    window_start_ = cycle_;
    for (Partition& p : parts_) {
        if (only_while_busy && workers_) p.busy_at.assign(end - cycle_, 0);
        p.known_until = cycle_;
    }
    bool stopped = false;
    ++windows_;
    while (true) {
        ++rounds_;
        run_partitions(end, only_while_busy);
        // A partition short of the end waits at a cycle where it is not busy; when all wait at
        // the same cycle, nothing is busy there: the cluster stops at it.
        const uint64_t first = parts_.front().cycle;
        bool all_at_end = true;
        bool all_at_first = true;
        for (const Partition& p : parts_) {
            all_at_end = all_at_end && p.cycle == end;
            all_at_first = all_at_first && p.cycle == first;
        }
        if (all_at_end) break;
        if (all_at_first) {
            stopped = true;
            break;
        }
        for (Partition& p : parts_) p.known_until = p.cycle;
    }
    cycle_ = parts_.front().cycle;
    if (workers_) exchange_links();
    return stopped;
}

uint64_t Cluster::advance(uint64_t cycles, bool only_while_busy) {
    wake_links();
    const uint64_t start = cycle_;
    const uint64_t end = cycles > UINT64_MAX - start ? UINT64_MAX : start + cycles;
    while (cycle_ < end) {
        const uint64_t window_end = end - cycle_ > window_ ? cycle_ + window_ : end;
        if (run_window(window_end, only_while_busy)) break;
    }
    sync_links();
    if (workers_) exchange_links();  // the host may look at either side before the next run
    return cycle_ - start;
}

void Cluster::step(uint64_t cycles) {
    (void)advance(cycles, false);
}

bool Cluster::busy() const {
    for (const auto& c : chips_) {
        if (c->busy()) return true;
    }
    return false;
}

uint64_t Cluster::run_while_busy(uint64_t max_cycles) {
    return advance(max_cycles, true);
}

RunReport Cluster::run_until_done(uint64_t max_cycles) {
    RunReport r;
    r.cycles = run_while_busy(max_cycles);
    r.done = !busy();
    r.cores = report();
    return r;
}

CoreReport Cluster::report(uint32_t chip, uint32_t x, uint32_t y) {
    Chip& c = this->chip(chip);
    const Tile* t = c.find_tile(x, y);
    if (t == nullptr) {
        throw std::out_of_range("sim::Cluster::report: chip " + std::to_string(chip) + " core " +
                                std::to_string(x) + "-" + std::to_string(y) +
                                " is not instantiated");
    }
    CoreReport r;
    r.chip = chip;
    r.core = {x, y};
    r.kind = c.core_spec(x, y)->kind;
    r.eth_channel = c.eth_channel(x, y);
    r.state = t->state();
    r.pc = t->pc();
    if (r.state == RunState::Exited) r.exit_code = t->exit_code();
    if (r.state == RunState::Trapped) {
        r.trap = t->trap();
        r.pc = r.trap.pc;
    }
    r.base_firmware = r.eth_channel && booted_[chip][*r.eth_channel];
    r.busy = c.core_busy(x, y);
    return r;
}

std::vector<CoreReport> Cluster::report() {
    std::vector<CoreReport> out;
    for (uint32_t ci = 0; ci < chips_.size(); ++ci) {
        for (const noc::Coord& at : chips_[ci]->instantiated_cores()) {
            if (chips_[ci]->find_tile(at.x, at.y)->state() == RunState::Reset) continue;
            out.push_back(report(ci, at.x, at.y));
        }
    }
    return out;
}

}  // namespace sim
