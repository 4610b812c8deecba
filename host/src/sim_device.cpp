#include "fabric/sim_device.h"

#include <algorithm>
#include <stdexcept>

#include "fabric/error.h"
#include "sim/model/tile.h"

namespace fabric {

struct SimDevice::TileSlot {
    std::unique_ptr<sim::Tile> tile;
    std::string console;
};

SimDevice::SimDevice(SocDescriptor soc, hal::Arch arch, uint32_t chips)
    : soc_(std::move(soc)), arch_(arch), chips_(chips) {
    if (soc_.arch() != arch_) {
        fail(ErrorCategory::BadInput, "{}: descriptor is for {} but the device was asked for {}",
             soc_.source(), arch_name(soc_.arch()), arch_name(arch_));
    }
    if (chips_ == 0) fail(ErrorCategory::BadInput, "sim: a device needs at least one chip");
}

SimDevice::~SimDevice() = default;

std::string SimDevice::description() const {
    return fmt::format("sim {} ({} chip{})", arch_name(arch_), chips_, chips_ == 1 ? "" : "s");
}

const SocDescriptor& SimDevice::soc(ChipId chip) const {
    if (chip >= chips_) {
        fail(ErrorCategory::BadInput, "{}: chip {} does not exist (chips 0..{})", description(),
             chip, chips_ - 1);
    }
    return soc_;
}

SimDevice::TileSlot& SimDevice::slot(const CoreLocation& core) {
    if (auto it = tiles_.find(core); it != tiles_.end()) return *it->second;

    const SocDescriptor& d = soc(core.chip);
    const auto type = d.core_type(core.core);
    if (!type) {
        fail(ErrorCategory::BadInput, "{}: no core at {} on chip {} (grid {}x{}, {})",
             description(), core.core.str(), core.chip, d.grid_x(), d.grid_y(), d.source());
    }
    if (*type != CoreType::Eth && *type != CoreType::Worker) {
        fail(ErrorCategory::Unsupported, "{}: {} is a '{}' core, which the model does not simulate",
             description(), core.str(), core_type_name(*type));
    }
    const hal::ArchMap& map = hal::arch_map(arch_);
    sim::TileConfig cfg;
    cfg.arch = arch_;
    cfg.l1_size = d.l1_size(core.core);
    cfg.ldm_size = map.local_data_ram_size;
    cfg.name = fmt::format("chip{}_x{}_y{}", core.chip, core.core.x, core.core.y);

    auto s = std::make_unique<TileSlot>();
    try {
        s->tile = std::make_unique<sim::Tile>(cfg);
    } catch (const std::exception& e) {
        fail(ErrorCategory::Device, "{}: cannot model {}: {}", description(), core.str(), e.what());
    }
    TileSlot* raw = s.get();
    s->tile->on_console([this, raw, core](char ch) {
        raw->console.push_back(ch);
        if (sink_) sink_(core, ch);
    });
    return *tiles_.emplace(core, std::move(s)).first->second;
}

sim::Tile& SimDevice::tile(const CoreLocation& core) {
    return *slot(core).tile;
}

uint32_t SimDevice::addr32(const CoreLocation& core, uint64_t addr, size_t len) const {
    if (addr + len > (uint64_t{1} << 32)) {
        fail(ErrorCategory::Device,
             "{}: {}: address {} (+{} bytes) is beyond the 32-bit core space", description(),
             core.str(), hex32(addr), len);
    }
    return static_cast<uint32_t>(addr);
}

// The model reports unmapped addresses with std::out_of_range; say which core and address.
template <typename F>
static auto model_access(const SimDevice& dev, const CoreLocation& core, uint64_t addr, size_t len,
                         const char* what, F&& f) {
    try {
        return f();
    } catch (const std::out_of_range& e) {
        fail(ErrorCategory::Device, "{}: {} of {} bytes at {} on {} failed: {}", dev.description(),
             what, len, hex32(addr), core.str(), e.what());
    }
}

void SimDevice::write(const CoreLocation& core, uint64_t addr, std::span<const uint8_t> data) {
    const uint32_t a = addr32(core, addr, data.size());
    auto& t = tile(core);
    model_access(*this, core, addr, data.size(), "write", [&] { t.write(a, data); });
}

void SimDevice::read(const CoreLocation& core, uint64_t addr, std::span<uint8_t> data) {
    const uint32_t a = addr32(core, addr, data.size());
    auto& t = tile(core);
    model_access(*this, core, addr, data.size(), "read", [&] { t.read(a, data); });
}

void SimDevice::write32(const CoreLocation& core, uint64_t addr, uint32_t value) {
    const uint32_t a = addr32(core, addr, 4);
    auto& t = tile(core);
    model_access(*this, core, addr, 4, "write", [&] { t.write32(a, value); });
}

uint32_t SimDevice::read32(const CoreLocation& core, uint64_t addr) {
    const uint32_t a = addr32(core, addr, 4);
    auto& t = tile(core);
    return model_access(*this, core, addr, 4, "read", [&] { return t.read32(a); });
}

uint64_t SimDevice::advance(uint64_t cycles) {
    uint64_t ran_max = 0;
    bool any_running = false;
    for (auto& [loc, s] : tiles_) {
        ran_max = std::max(ran_max, s->tile->step(cycles));
        any_running = any_running || s->tile->state() == sim::RunState::Running;
    }
    const uint64_t passed = any_running ? cycles : ran_max;
    cycles_ += passed;
    return passed;
}

CoreStatus SimDevice::core_status(const CoreLocation& core) {
    const sim::Tile& t = tile(core);
    CoreStatus s;
    s.pc = t.pc();
    switch (t.state()) {
        case sim::RunState::Reset:
            s.state = CoreRunState::Reset;
            break;
        case sim::RunState::Running:
            s.state = CoreRunState::Running;
            break;
        case sim::RunState::Exited:
            s.state = CoreRunState::Exited;
            s.exit_status = t.exit_code();
            break;
        case sim::RunState::Trapped: {
            s.state = CoreRunState::Trapped;
            const sim::TrapInfo trap = t.trap();
            s.trap_cause = trap.cause;
            s.trap_name = sim::trap_cause_name(trap.cause);
            s.trap_pc = trap.pc;
            s.trap_tval = trap.tval;
            s.pc = trap.pc;
            break;
        }
        default:
            s.state = CoreRunState::Unknown;
            break;
    }
    return s;
}

void SimDevice::set_console_sink(std::function<void(const CoreLocation&, char)> sink) {
    sink_ = std::move(sink);
}

std::string SimDevice::console(const CoreLocation& core) const {
    const auto it = tiles_.find(core);
    return it == tiles_.end() ? std::string() : it->second->console;
}

void SimDevice::trace_to(const CoreLocation& core, const std::string& fst_path) {
    if (!sim::Tile::tracing_available()) {
        fail(ErrorCategory::Unsupported, "{}: the model was built without tracing (SIM_RTL_TRACE)",
             description());
    }
    auto& t = tile(core);
    try {
        t.trace_to(fst_path);
    } catch (const std::exception& e) {
        fail(ErrorCategory::BadInput, "{}: cannot trace {} to {}: {}", description(), core.str(),
             fst_path, e.what());
    }
}

}  // namespace fabric
