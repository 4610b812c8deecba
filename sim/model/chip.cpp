// sim::Chip: tiles, NOCs, stream registers, TX queues and DRAM of one chip, stepped in lockstep.
//
// Hot path: Chip::step. Per cycle it steps the list of running tiles (rebuilt only when a core
// changes state) and the network only while something is in flight. Nothing is allocated per cycle
// and no std::function is called per cycle; the MMIO handler runs only when a core touches a
// register outside its own tile.
#include "chip.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <utility>

namespace sim {

namespace {

std::string hex(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

std::string coord_str(uint32_t x, uint32_t y) {
    return std::to_string(x) + "-" + std::to_string(y);
}

constexpr uint32_t kWholeWord = 0xF;

// What the NOC and an Ethernet peer reach at a core: L1 (plain copies through Tile::write/read,
// which take no simulated time), the stream registers, and single words of the tile's own
// register block (soft reset, reset PCs: how a remote chip's cores are reset and started, as a
// TLB window's NOC write does on silicon). Everything else is refused, so the caller records a
// bus error; this adapter never throws.
class TileEndpoint final : public Endpoint {
  public:
    // One word of the tile's register block; false when nothing answers there.
    using RegisterWord = std::function<bool(uint32_t addr, uint32_t* value, bool write)>;

    TileEndpoint(Tile& tile, StreamRegs& streams, uint32_t l1_size, RegisterWord reg)
        : tile_(tile), streams_(streams), l1_size_(l1_size), reg_(std::move(reg)) {}

    bool write(uint64_t addr, std::span<const uint8_t> bytes) override {
        if (in_l1(addr, bytes.size())) {
            tile_.write(static_cast<uint32_t>(addr), bytes);
            return true;
        }
        if (streams_.contains(addr)) return streams_.write(addr, bytes);
        if (!register_word(addr, bytes.size())) return false;
        uint32_t v;
        std::memcpy(&v, bytes.data(), 4);
        return reg_(static_cast<uint32_t>(addr), &v, true);
    }

    bool read(uint64_t addr, std::span<uint8_t> bytes) override {
        if (in_l1(addr, bytes.size())) {
            tile_.read(static_cast<uint32_t>(addr), bytes);
            return true;
        }
        if (streams_.contains(addr)) return streams_.read(addr, bytes);
        uint32_t v = 0;
        if (!register_word(addr, bytes.size()) || !reg_(static_cast<uint32_t>(addr), &v, false))
            return false;
        std::memcpy(bytes.data(), &v, 4);
        return true;
    }

  private:
    bool in_l1(uint64_t addr, std::size_t size) const {
        return addr <= l1_size_ && size <= l1_size_ - addr;
    }
    static bool register_word(uint64_t addr, std::size_t size) {
        return size == 4 && addr % 4 == 0 && addr >= hal::common::kRiscDebugRegsBase &&
               addr < hal::common::kNocRegsBase;
    }

    Tile& tile_;
    StreamRegs& streams_;
    uint32_t l1_size_;
    RegisterWord reg_;
};

}  // namespace

const char* to_string(CoreKind k) {
    switch (k) {
        case CoreKind::Worker:
            return "worker";
        case CoreKind::Eth:
            return "eth";
        default:
            return "unknown";
    }
}

struct Chip::Slot {
    uint32_t index = 0;
    CoreSpec spec;
    std::unique_ptr<Tile> tile;
    std::unique_ptr<StreamRegs> streams;
    std::unique_ptr<TileEndpoint> endpoint;
    std::unique_ptr<eth::TxQueues> txq;
    noc::Niu* niu = nullptr;
    std::function<void()> txq_hook;
    std::optional<uint32_t> idle_word;
    bool active = false;     // in Chip::active_ (stepped every cycle)
    bool frozen = false;     // fault hook: the core's clock is gated (set_frozen)
    uint64_t parked_at = 0;  // while not active: the chip cycle up to which its clock has run
};

// The network's landings, passed on to the packet tap as this chip's.
class Chip::TapLandings final : public noc::LandingObserver {
  public:
    TapLandings(PacketTap& tap, uint32_t chip) : tap_(tap), chip_(chip) {}
    void landed(const noc::Landed& request) override { tap_.noc_landed(chip_, request); }

  private:
    PacketTap& tap_;
    uint32_t chip_;
};

namespace {
// The grid checked before the network is built from it.
const ChipSpec& checked_grid(const ChipSpec& s) {
    if (s.grid_x < 1 || s.grid_x > 64 || s.grid_y < 1 || s.grid_y > 64) {
        throw std::invalid_argument("sim::Chip " + s.name + ": grid " + std::to_string(s.grid_x) +
                                    "x" + std::to_string(s.grid_y) + " is outside 1..64");
    }
    return s;
}
}  // namespace

Chip::Chip(ChipSpec spec)
    : spec_(std::move(spec)),
      arch_(hal::arch_map(spec_.arch)),
      net_(checked_grid(spec_).grid_x, spec_.grid_y, arch_, spec_.noc) {
    const auto bad = [&](const std::string& what) {
        throw std::invalid_argument("sim::Chip " + spec_.name + ": " + what);
    };
    core_at_.assign(static_cast<std::size_t>(spec_.grid_x) * spec_.grid_y, -1);
    std::vector<bool> dram_at(core_at_.size(), false);
    for (std::size_t i = 0; i < spec_.cores.size(); ++i) {
        const CoreSpec& c = spec_.cores[i];
        if (c.x >= spec_.grid_x || c.y >= spec_.grid_y)
            bad("core " + coord_str(c.x, c.y) + " is outside the grid");
        const std::size_t at = static_cast<std::size_t>(c.y) * spec_.grid_x + c.x;
        if (core_at_[at] >= 0) bad("core " + coord_str(c.x, c.y) + " is listed twice");
        if (c.l1_size == 0 || c.l1_size % 4 != 0) {
            bad("core " + coord_str(c.x, c.y) + " has L1 size " + std::to_string(c.l1_size) +
                " (must be a non-zero multiple of 4)");
        }
        core_at_[at] = static_cast<int32_t>(i);
        eth_channel_of_.push_back(-1);
        if (c.kind == CoreKind::Eth) {
            eth_channel_of_.back() = static_cast<int32_t>(eth_cores_.size());
            eth_cores_.push_back(static_cast<uint32_t>(i));
        }
    }
    for (const auto& chan : spec_.dram_channels) {
        for (const noc::Coord& p : chan) {
            if (p.x >= spec_.grid_x || p.y >= spec_.grid_y)
                bad("DRAM port " + coord_str(p.x, p.y) + " is outside the grid");
            const std::size_t at = static_cast<std::size_t>(p.y) * spec_.grid_x + p.x;
            if (core_at_[at] >= 0 || dram_at[at])
                bad("DRAM port " + coord_str(p.x, p.y) + " is listed twice");
            dram_at[at] = true;
        }
    }
    if (!spec_.dram_channels.empty() && spec_.dram_bank_size == 0)
        bad("DRAM channels need a bank size");
    dram_ = std::make_unique<noc::DramChannels>(net_, spec_.dram_channels, spec_.dram_bank_size);
    slots_.resize(spec_.cores.size());
}

Chip::~Chip() = default;

int32_t Chip::index_of(uint32_t x, uint32_t y) const {
    if (x >= spec_.grid_x || y >= spec_.grid_y) return -1;
    return core_at_[static_cast<std::size_t>(y) * spec_.grid_x + x];
}

const CoreSpec* Chip::core_spec(uint32_t x, uint32_t y) const {
    const int32_t i = index_of(x, y);
    return i < 0 ? nullptr : &spec_.cores[static_cast<std::size_t>(i)];
}

noc::Coord Chip::eth_core(uint32_t channel) const {
    if (channel >= eth_cores_.size()) {
        throw std::out_of_range("sim::Chip " + spec_.name + ": eth channel " +
                                std::to_string(channel) + " does not exist (the chip has " +
                                std::to_string(eth_cores_.size()) + ")");
    }
    const CoreSpec& c = spec_.cores[eth_cores_[channel]];
    return {c.x, c.y};
}

std::optional<uint32_t> Chip::eth_channel(uint32_t x, uint32_t y) const {
    const int32_t i = index_of(x, y);
    if (i < 0 || eth_channel_of_[static_cast<std::size_t>(i)] < 0) return std::nullopt;
    return static_cast<uint32_t>(eth_channel_of_[static_cast<std::size_t>(i)]);
}

Chip::Slot* Chip::find_slot(uint32_t x, uint32_t y) const {
    const int32_t i = index_of(x, y);
    return i < 0 ? nullptr : slots_[static_cast<std::size_t>(i)].get();
}

Tile* Chip::find_tile(uint32_t x, uint32_t y) {
    Slot* s = find_slot(x, y);
    return s ? s->tile.get() : nullptr;
}

const Tile* Chip::find_tile(uint32_t x, uint32_t y) const {
    const Slot* s = find_slot(x, y);
    return s ? s->tile.get() : nullptr;
}

std::vector<noc::Coord> Chip::instantiated_cores() const {
    std::vector<noc::Coord> out;
    for (const auto& s : slots_) {
        if (s) out.push_back({s->spec.x, s->spec.y});
    }
    return out;
}

std::string Chip::where(const Slot& s) const {
    return "sim::Chip " + spec_.name + " core " + coord_str(s.spec.x, s.spec.y);
}

Chip::Slot& Chip::slot(uint32_t x, uint32_t y) {
    const int32_t i = index_of(x, y);
    if (i < 0) {
        throw std::out_of_range("sim::Chip " + spec_.name + ": no core at " + coord_str(x, y) +
                                " (grid " + std::to_string(spec_.grid_x) + "x" +
                                std::to_string(spec_.grid_y) + ")");
    }
    auto& p = slots_[static_cast<std::size_t>(i)];
    if (p) return *p;

    auto s = std::make_unique<Slot>();
    s->index = static_cast<uint32_t>(i);
    s->spec = spec_.cores[static_cast<std::size_t>(i)];
    TileConfig cfg;
    cfg.arch = spec_.arch;
    cfg.l1_size = s->spec.l1_size;
    cfg.ldm_size = arch_.local_data_ram_size;
    cfg.timing = spec_.timing;
    cfg.name = spec_.name + "_x" + std::to_string(x) + "_y" + std::to_string(y);
    s->tile = std::make_unique<Tile>(cfg);
    const bool eth = s->spec.kind == CoreKind::Eth;
    s->streams = std::make_unique<StreamRegs>(
        arch_, eth ? arch_.eth_streams : hal::stream::kNumStreamsTensix);
    Slot* slot = s.get();
    s->endpoint =
        std::make_unique<TileEndpoint>(*s->tile, *s->streams, s->spec.l1_size,
                                       [this, slot](uint32_t addr, uint32_t* value, bool write) {
                                           return tile_register(*slot, addr, value, write);
                                       });
    if (eth) {
        eth::TxQueuesConfig tc;
        tc.l1_size = s->spec.l1_size;
        tc.name = cfg.name;
        s->txq = std::make_unique<eth::TxQueues>(arch_, *s->endpoint, tc);
    }
    sync_network();  // attach at the chip's current cycle
    s->niu = &net_.attach_core(x, y, s->endpoint.get());
    s->parked_at = cycle_;

    Slot* raw = s.get();
    MmioHandler h;
    h.read = [this, raw](uint32_t addr, uint32_t) { return core_mmio_read(*raw, addr); };
    h.write = [this, raw](uint32_t addr, uint32_t data, uint32_t be) {
        return be == kWholeWord && core_mmio_write(*raw, addr, data);
    };
    s->tile->set_mmio_handler(std::move(h));

    p = std::move(s);
    ++tile_count_;
    active_dirty_ = true;
    if (on_created_) on_created_(x, y);
    return *raw;
}

void Chip::create_cores_on_noc_access(bool on) {
    if (!on) return net_.on_missing_endpoint({});
    net_.on_missing_endpoint([this](noc::Coord c) {
        if (index_of(c.x, c.y) >= 0) (void)slot(c.x, c.y);
    });
}

Tile& Chip::tile(uint32_t x, uint32_t y) {
    return *slot(x, y).tile;
}
StreamRegs& Chip::streams(uint32_t x, uint32_t y) {
    return *slot(x, y).streams;
}
noc::Niu& Chip::niu(uint32_t x, uint32_t y) {
    Slot& s = slot(x, y);
    sync_network();
    return *s.niu;
}
Endpoint& Chip::endpoint(uint32_t x, uint32_t y) {
    return *slot(x, y).endpoint;
}

eth::TxQueues* Chip::txq(uint32_t x, uint32_t y) {
    Slot& s = slot(x, y);
    if (s.txq && s.txq_hook) s.txq_hook();
    return s.txq.get();
}

void Chip::on_tile_created(std::function<void(uint32_t, uint32_t)> hook) {
    on_created_ = std::move(hook);
}

void Chip::set_txq_hook(uint32_t x, uint32_t y, std::function<void()> hook) {
    slot(x, y).txq_hook = std::move(hook);
}

void Chip::set_idle_word(uint32_t x, uint32_t y, std::optional<uint32_t> l1_addr) {
    Slot& s = slot(x, y);
    if (l1_addr && (*l1_addr % 4 != 0 || *l1_addr > s.spec.l1_size - 4)) {
        throw std::out_of_range(where(s) + ": idle word " + hex(*l1_addr) +
                                " is not an aligned L1 word");
    }
    s.idle_word = l1_addr;
}

// ---- core MMIO --------------------------------------------------------------------------------

std::optional<uint32_t> Chip::core_mmio_read(Slot& s, uint32_t addr) {
    if (noc::Niu::contains(addr)) return s.niu->mmio_read(addr);
    if (s.streams->contains(addr)) return s.streams->mmio_read(addr);
    if (s.txq && s.txq->decodes(addr)) {
        if (s.txq_hook) s.txq_hook();
        return s.txq->mmio_read(addr);
    }
    return std::nullopt;
}

bool Chip::core_mmio_write(Slot& s, uint32_t addr, uint32_t value) {
    if (noc::Niu::contains(addr)) {
        sync_network();
        net_busy_ = true;  // a launch makes the network busy; the next step finds out
        return s.niu->mmio_write(addr, value);
    }
    if (s.streams->contains(addr)) {
        if (tap_ != nullptr)
            tap_->stream_store(tap_chip_, {s.spec.x, s.spec.y}, addr, value, cycle_);
        return s.streams->mmio_write(addr, value);
    }
    if (s.txq && s.txq->decodes(addr)) {
        if (s.txq_hook) s.txq_hook();
        return s.txq->mmio_write(addr, value);
    }
    return false;
}

void Chip::set_packet_tap(PacketTap* tap, uint32_t chip_id) {
    tap_ = tap;
    tap_chip_ = chip_id;
    tap_landings_ = tap != nullptr ? std::make_unique<TapLandings>(*tap, chip_id) : nullptr;
    net_.observe_landings(tap_landings_.get());
}

// ---- host access -------------------------------------------------------------------------------

void Chip::catch_up(Slot& s) {
    if (!s.active && s.parked_at < cycle_) {
        if (!s.frozen) s.tile->step(cycle_ - s.parked_at);  // a frozen core's clock is gated
        s.parked_at = cycle_;
    }
}

void Chip::set_frozen(uint32_t x, uint32_t y, bool frozen) {
    Slot& s = slot(x, y);
    if (s.frozen == frozen) return;
    catch_up(s);  // parked: up to now as it was; active: nothing to do
    s.frozen = frozen;
    if (frozen) {
        frozen_.push_back(&s);
    } else {
        frozen_.erase(std::find(frozen_.begin(), frozen_.end(), &s));
    }
    if (!frozen && !s.active) s.parked_at = cycle_;  // the frozen cycles are not made up
    active_dirty_ = true;
}

bool Chip::frozen(uint32_t x, uint32_t y) const {
    const Slot* s = find_slot(x, y);
    return s != nullptr && s->frozen;
}

// The tile's own register block (soft reset, reset PCs, wall clock): one tile clock.
bool Chip::tile_register(Slot& s, uint32_t addr, uint32_t* value, bool write) {
    catch_up(s);
    active_dirty_ = true;  // a soft-reset write may have released or stopped the core
    try {
        if (write) {
            s.tile->write32(addr, *value);
        } else {
            *value = s.tile->read32(addr);
        }
        return true;
    } catch (const std::out_of_range&) {
        return false;
    }
}

void Chip::host_word(Slot& s, uint32_t addr, uint32_t* value, bool write) {
    bool ok = false;
    if (noc::Niu::contains(addr) || s.streams->contains(addr) || (s.txq && s.txq->decodes(addr))) {
        if (write) {
            ok = core_mmio_write(s, addr, *value);
        } else {
            const auto v = core_mmio_read(s, addr);
            ok = v.has_value();
            *value = v.value_or(0);
        }
    } else {
        ok = tile_register(s, addr, value, write);
    }
    if (!ok) {
        throw std::out_of_range(where(s) + ": nothing answers a " + (write ? "write" : "read") +
                                " at " + hex(addr));
    }
}

void Chip::write(uint32_t x, uint32_t y, uint32_t addr, std::span<const uint8_t> bytes) {
    Slot& s = slot(x, y);
    if (bytes.empty()) return;
    if (addr <= s.spec.l1_size && bytes.size() <= s.spec.l1_size - addr) {
        s.tile->write(addr, bytes);
        return;
    }
    if (addr % 4 != 0 || bytes.size() % 4 != 0 || addr < s.spec.l1_size ||
        uint64_t{addr} + bytes.size() > (uint64_t{1} << 32)) {
        throw std::out_of_range(where(s) + ": write of " + std::to_string(bytes.size()) +
                                " bytes at " + hex(addr) +
                                " is neither inside L1 nor whole aligned register words");
    }
    for (std::size_t i = 0; i < bytes.size(); i += 4) {
        uint32_t w;
        std::memcpy(&w, bytes.data() + i, 4);
        host_word(s, addr + static_cast<uint32_t>(i), &w, true);
    }
}

void Chip::read(uint32_t x, uint32_t y, uint32_t addr, std::span<uint8_t> bytes) {
    Slot& s = slot(x, y);
    if (bytes.empty()) return;
    if (addr <= s.spec.l1_size && bytes.size() <= s.spec.l1_size - addr) {
        s.tile->read(addr, bytes);
        return;
    }
    if (addr % 4 != 0 || bytes.size() % 4 != 0 || addr < s.spec.l1_size ||
        uint64_t{addr} + bytes.size() > (uint64_t{1} << 32)) {
        throw std::out_of_range(where(s) + ": read of " + std::to_string(bytes.size()) +
                                " bytes at " + hex(addr) +
                                " is neither inside L1 nor whole aligned register words");
    }
    for (std::size_t i = 0; i < bytes.size(); i += 4) {
        uint32_t w = 0;
        host_word(s, addr + static_cast<uint32_t>(i), &w, false);
        std::memcpy(bytes.data() + i, &w, 4);
    }
}

void Chip::write32(uint32_t x, uint32_t y, uint32_t addr, uint32_t value) {
    uint8_t b[4];
    std::memcpy(b, &value, 4);
    write(x, y, addr, b);
}

uint32_t Chip::read32(uint32_t x, uint32_t y, uint32_t addr) {
    uint8_t b[4];
    read(x, y, addr, b);
    uint32_t v;
    std::memcpy(&v, b, 4);
    return v;
}

// ---- time --------------------------------------------------------------------------------------

void Chip::sync_network() {
    // The network is stepped only while busy, and everything that enters it syncs first, so when
    // its clock lags the chip's it is idle: catch its clock up (error stamps, statistics) in O(1).
    if (net_.cycle() < cycle_) net_.advance_idle(cycle_ - net_.cycle());
}

noc::Network& Chip::network() {
    sync_network();
    return net_;
}

void Chip::rebuild_active() {
    active_.clear();
    for (auto& p : slots_) {
        if (!p) continue;
        if (p->tile->state() == RunState::Running && !p->frozen) {
            if (!p->active) {
                catch_up(*p);
                p->active = true;
            }
            active_.push_back(p.get());
        } else if (p->active) {
            p->active = false;
            p->parked_at = cycle_;
        }
    }
    active_dirty_ = false;
}

void Chip::step(uint64_t cycles) {
    for (uint64_t i = 0; i < cycles; ++i) {
        if (active_dirty_) rebuild_active();
        if (active_.empty() && !net_busy_) {
            cycle_ += cycles - i;  // nothing can change until the host touches the chip again
            return;
        }
        for (Slot* s : active_) {
            s->tile->step(1);
            if (s->tile->state() != RunState::Running) active_dirty_ = true;
        }
        if (net_busy_) {
            sync_network();
            net_.step();
            net_busy_ = !net_.idle();
        }
        ++cycle_;
    }
}

bool Chip::slot_busy(const Slot& s) const {
    if (s.tile->state() != RunState::Running) return false;
    if (!s.idle_word) return true;
    uint8_t b[4];
    s.tile->read(*s.idle_word, b);
    return (b[0] | b[1] | b[2] | b[3]) != 0;
}

bool Chip::busy() const {
    for (const Slot* s : frozen_) {  // parked, but still running
        if (slot_busy(*s)) return true;
    }
    if (active_dirty_) {
        for (const auto& p : slots_) {
            if (p && slot_busy(*p)) return true;
        }
        return false;
    }
    for (const Slot* s : active_) {
        if (slot_busy(*s)) return true;
    }
    return false;
}

bool Chip::core_busy(uint32_t x, uint32_t y) const {
    const Slot* s = find_slot(x, y);
    return s != nullptr && slot_busy(*s);
}

}  // namespace sim
