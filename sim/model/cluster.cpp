// sim::Cluster: chips and Ethernet links on one clock.
//
// Links are stepped lazily: each keeps the first cycle at which it has something to do
// (eth::Link::next_event_cycle) and is only stepped from then on. Any access to one of its TX
// queues first brings it up to the current cycle (Link::run skips idle cycles exactly) and makes it
// step in the current cycle, so a command written at cycle c is accepted at c exactly as if the
// link had been stepped every cycle.
#include "cluster.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "protocol/erisc_base_fw.h"

namespace sim {

namespace bfw = protocol::base_fw;

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
    links_.push_back(LinkSlot{a, b, nullptr, 0});
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
    l.next = cycle_;
    built_.push_back(index);
    auto hook = [this, index] {
        LinkSlot& s = links_[index];
        sync_link(s);
        s.next = std::min(s.next, cycle_);
    };
    ca.set_txq_hook(pa.x, pa.y, hook);
    cb.set_txq_hook(pb.x, pb.y, hook);
    l.link->on_state_change([this, a, b](bool) {
        publish_link_status(a.chip, a.channel);
        publish_link_status(b.chip, b.channel);
    });
}

eth::Link& Cluster::link(uint32_t chip, uint32_t channel) {
    const auto it = link_of_.find({chip, channel});
    if (it == link_of_.end()) {
        throw std::out_of_range("sim::Cluster::link: " + port_str(chip, channel) +
                                " is not connected");
    }
    build_link(it->second);
    LinkSlot& l = links_[it->second];
    sync_link(l);
    l.next = std::min(l.next, cycle_);  // the caller may change its faults: re-evaluate
    return *l.link;
}

// ---- base firmware -----------------------------------------------------------------------------

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

void Cluster::sync_link(LinkSlot& l) {
    if (l.link->cycle() < cycle_) l.link->run(cycle_ - l.link->cycle());
}

void Cluster::sync_links() {
    for (uint32_t i : built_) sync_link(links_[i]);
}

void Cluster::run_cycles(uint64_t cycles) {
    uint64_t done = 0;
    while (done < cycles) {
        // Nothing running and nothing in flight on any NOC: jump to the next link event.
        bool quiet = true;
        for (const auto& c : chips_) {
            if (!c->quiescent()) {
                quiet = false;
                break;
            }
        }
        if (quiet) {
            uint64_t next = UINT64_MAX;
            for (uint32_t i : built_) next = std::min(next, links_[i].next);
            const uint64_t skip = std::min(cycles - done, next > cycle_ ? next - cycle_ : 0);
            if (skip > 0) {
                for (auto& c : chips_) c->step(skip);
                cycle_ += skip;
                done += skip;
                continue;
            }
        }
        for (auto& c : chips_) c->step(1);
        for (uint32_t i : built_) {
            LinkSlot& l = links_[i];
            if (cycle_ >= l.next) {
                sync_link(l);
                l.link->step();
                l.next = options_.lazy_links ? l.link->next_event_cycle() : cycle_ + 1;
            }
        }
        ++cycle_;
        ++done;
    }
}

void Cluster::step(uint64_t cycles) {
    for (uint32_t i : built_)
        links_[i].next = std::min(links_[i].next, cycle_);  // faults may have changed
    run_cycles(cycles);
    sync_links();
}

bool Cluster::busy() const {
    for (const auto& c : chips_) {
        if (c->busy()) return true;
    }
    return false;
}

uint64_t Cluster::run_while_busy(uint64_t max_cycles) {
    for (uint32_t i : built_) links_[i].next = std::min(links_[i].next, cycle_);
    const uint64_t start = cycle_;
    while (cycle_ - start < max_cycles && busy()) run_cycles(1);
    sync_links();
    return cycle_ - start;
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
