#include "fabric/sim_device.h"

#include <algorithm>
#include <stdexcept>

#include "fabric/error.h"
#include "sim/model/cluster.h"
#include "sim/model/tile.h"

namespace fabric {

namespace {

// The model's view of one chip: the host's SoC descriptor as a plain spec (sim/ does not parse
// YAML). Eth cores first, in channel order (the model's channel numbering), then the workers.
sim::ChipSpec chip_spec(const SocDescriptor& d, ChipId chip) {
    sim::ChipSpec s;
    s.arch = d.arch();
    s.grid_x = d.grid_x();
    s.grid_y = d.grid_y();
    s.name = fmt::format("chip{}", chip);
    for (const CoreCoord& c : d.cores(CoreType::Eth)) {
        s.cores.push_back({c.x, c.y, sim::CoreKind::Eth, d.eth_l1_size()});
    }
    for (const CoreCoord& c : d.cores(CoreType::Worker)) {
        s.cores.push_back({c.x, c.y, sim::CoreKind::Worker, d.worker_l1_size()});
    }
    for (const auto& chan : d.dram_channels()) {
        std::vector<sim::noc::Coord> ports;
        for (const CoreCoord& p : chan) ports.push_back({p.x, p.y});
        s.dram_channels.push_back(std::move(ports));
    }
    s.dram_bank_size = d.dram_bank_size();
    return s;
}

sim::BootImage boot_image(const ElfImage& elf) {
    sim::BootImage img;
    img.entry = elf.entry();
    for (const auto& seg : elf.segments()) img.segments.push_back({seg.address, seg.bytes});
    return img;
}

SimDeviceOptions chips_only(hal::Arch arch, uint32_t chips) {
    if (chips == 0) fail(ErrorCategory::BadInput, "sim: a device needs at least one chip");
    SimDeviceOptions o;
    o.cluster = ClusterDescriptor::unconnected(arch, chips);
    return o;
}

}  // namespace

SimDevice::SimDevice(SocDescriptor soc, hal::Arch arch, uint32_t chips)
    : SimDevice(std::move(soc), arch, chips_only(arch, chips)) {}

SimDevice::SimDevice(SocDescriptor soc, hal::Arch arch, SimDeviceOptions options)
    : soc_(std::move(soc)),
      arch_(arch),
      cluster_desc_(options.cluster ? std::move(*options.cluster)
                                    : ClusterDescriptor::unconnected(arch, 1)) {
    if (soc_.arch() != arch_) {
        fail(ErrorCategory::BadInput, "{}: descriptor is for {} but the device was asked for {}",
             soc_.source(), arch_name(soc_.arch()), arch_name(arch_));
    }
    if (cluster_desc_.arch() != arch_) {
        fail(ErrorCategory::BadInput, "{}: cluster is {} but the device was asked for {}",
             cluster_desc_.source(), arch_name(cluster_desc_.arch()), arch_name(arch_));
    }
    chip_socs_.emplace(soc_, cluster_desc_);
    for (const auto& c : cluster_desc_.connections()) {
        for (const EthPortRef& p : {c.a, c.b}) {
            if (p.chan >= soc_.eth_channels()) {
                fail(ErrorCategory::BadInput,
                     "{}: {} connects eth channel {}, but {} has {} eth channels",
                     cluster_desc_.source(), p.str(), p.chan, soc_.source(), soc_.eth_channels());
            }
        }
    }
    sim::ClusterOptions co;
    co.threads = options.threads;
    if (options.wh_base_firmware && arch_ == hal::Arch::WormholeB0) {
        options.wh_base_firmware->check_placement(base_firmware_placement());
        co.wh_base_firmware = boot_image(*options.wh_base_firmware);
        base_fw_ = true;
    }
    choose_modeled_chips(options.modeled_chips);
    std::vector<sim::ChipSpec> specs;
    for (const ChipId c : modeled_) specs.push_back(chip_spec(SimDevice::soc(c), c));
    try {
        cluster_ = std::make_unique<sim::Cluster>(std::move(specs), std::move(co));
        for (const auto& c : cluster_desc_.connections()) {
            const auto a = model_index_[c.a.chip];
            const auto b = model_index_[c.b.chip];
            if (a && b) cluster_->connect(*a, c.a.chan, *b, c.b.chan);
        }
    } catch (const std::invalid_argument& e) {
        fail(ErrorCategory::BadInput, "{}: cannot build the model: {}", description(), e.what());
    }
    cluster_->on_tile_created([this](uint32_t model_chip, uint32_t x, uint32_t y) {
        tile_created(CoreLocation{modeled_[model_chip], {x, y}});
    });
}

SimDevice::~SimDevice() = default;

void SimDevice::choose_modeled_chips(const std::optional<std::vector<ChipId>>& chips) {
    const uint32_t n = cluster_desc_.chip_count();
    model_index_.assign(n, std::nullopt);
    if (!chips) {
        for (ChipId c = 0; c < n; ++c) modeled_.push_back(c);
    } else {
        if (chips->empty()) fail(ErrorCategory::BadInput, "{}: no chip to model", description());
        for (const ChipId c : *chips) {
            if (c >= n) {
                fail(ErrorCategory::BadInput, "{}: chip {} to model does not exist (chips 0..{})",
                     description(), c, n - 1);
            }
            if (!model_index_[c]) {
                model_index_[c] = 0;  // numbered below, in chip order
                modeled_.push_back(c);
            }
        }
        std::sort(modeled_.begin(), modeled_.end());
    }
    for (uint32_t i = 0; i < modeled_.size(); ++i) model_index_[modeled_[i]] = i;
}

std::optional<uint32_t> SimDevice::model_chip_index(ChipId chip) const {
    return chip < model_index_.size() ? model_index_[chip] : std::nullopt;
}

sim::Chip& SimDevice::model_chip(ChipId chip) const {
    const auto index = model_chip_index(chip);
    if (!index) {
        fail(ErrorCategory::BadInput, "{}: chip {} is not modeled in this run", description(),
             chip);
    }
    return cluster_->chip(*index);
}

std::string SimDevice::description() const {
    const uint32_t n = cluster_desc_.chip_count();
    const size_t links = cluster_desc_.connections().size();
    std::string s = fmt::format("sim {} ({} chip{}", arch_name(arch_), n, n == 1 ? "" : "s");
    if (!modeled_.empty() && modeled_.size() < n) s += fmt::format(", {} modeled", modeled_.size());
    if (links > 0) s += fmt::format(", {} Ethernet link{}", links, links == 1 ? "" : "s");
    return s + ")";
}

uint32_t SimDevice::chip_count() const {
    return cluster_desc_.chip_count();
}

const SocDescriptor& SimDevice::soc(ChipId chip) const {
    if (chip >= chip_count()) {
        fail(ErrorCategory::BadInput, "{}: chip {} does not exist (chips 0..{})", description(),
             chip, chip_count() - 1);
    }
    return (*chip_socs_)(chip);
}

void SimDevice::check_core(const CoreLocation& core) const {
    const SocDescriptor& d = soc(core.chip);
    const auto type = d.core_type(core.core);
    if (!type) {
        fail(ErrorCategory::BadInput, "{}: no core at {} on chip {} (grid {}x{}, {})",
             description(), core.core.str(), core.chip, d.grid_x(), d.grid_y(), d.source());
    }
    if (*type == CoreType::HarvestedWorker) {
        fail(ErrorCategory::Device,
             "{}: {} is a harvested worker (Tensix harvest mask {} of chip {}): its tile is off",
             description(), core.str(), hex32(d.tensix_harvest_mask()), core.chip);
    }
    if (*type != CoreType::Eth && *type != CoreType::Worker) {
        fail(ErrorCategory::Unsupported, "{}: {} is a '{}' core, which the model does not simulate",
             description(), core.str(), core_type_name(*type));
    }
    (void)model_chip(core.chip);  // a chip left out of the model is not there to touch
}

void SimDevice::tile_created(const CoreLocation& core) {
    std::string* buf = &consoles_[core];
    model_chip(core.chip).tile(core.core.x, core.core.y).on_console([this, buf, core](char ch) {
        buf->push_back(ch);  // this core's own buffer: only its partition's thread writes it
        if (!sink_) return;
        const std::lock_guard<std::mutex> lock(sink_mutex_);
        sink_(core, ch);
    });
}

sim::Tile& SimDevice::tile(const CoreLocation& core) {
    check_core(core);
    try {
        return model_chip(core.chip).tile(core.core.x, core.core.y);
    } catch (const std::exception& e) {
        fail(ErrorCategory::Device, "{}: cannot model {}: {}", description(), core.str(), e.what());
    }
}

size_t SimDevice::tile_count() const {
    size_t n = 0;
    for (uint32_t i = 0; i < modeled_.size(); ++i) n += cluster_->chip(i).tile_count();
    return n;
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
    tile(core);
    sim::Chip& chip = model_chip(core.chip);
    model_access(*this, core, addr, data.size(), "write",
                 [&] { chip.write(core.core.x, core.core.y, a, data); });
}

void SimDevice::read(const CoreLocation& core, uint64_t addr, std::span<uint8_t> data) {
    const uint32_t a = addr32(core, addr, data.size());
    tile(core);
    sim::Chip& chip = model_chip(core.chip);
    model_access(*this, core, addr, data.size(), "read",
                 [&] { chip.read(core.core.x, core.core.y, a, data); });
}

void SimDevice::write32(const CoreLocation& core, uint64_t addr, uint32_t value) {
    const uint32_t a = addr32(core, addr, 4);
    tile(core);
    sim::Chip& chip = model_chip(core.chip);
    model_access(*this, core, addr, 4, "write",
                 [&] { chip.write32(core.core.x, core.core.y, a, value); });
}

uint32_t SimDevice::read32(const CoreLocation& core, uint64_t addr) {
    const uint32_t a = addr32(core, addr, 4);
    tile(core);
    sim::Chip& chip = model_chip(core.chip);
    return model_access(*this, core, addr, 4, "read",
                        [&] { return chip.read32(core.core.x, core.core.y, a); });
}

uint64_t SimDevice::advance(uint64_t cycles) {
    return run_scheduled(cycles, true);
}

void SimDevice::step(uint64_t cycles) {
    (void)run_scheduled(cycles, false);
}

uint64_t SimDevice::run_scheduled(uint64_t cycles, bool only_while_busy) {
    uint64_t ran = 0;
    while (true) {
        apply_due_actions();
        uint64_t chunk = cycles - ran;
        if (const auto next = next_action_cycle()) chunk = std::min(chunk, *next - this->cycles());
        if (chunk == 0) break;
        const uint64_t r = only_while_busy ? cluster_->run_while_busy(chunk) : chunk;
        if (!only_while_busy) cluster_->step(chunk);
        ran += r;
        if (r < chunk || ran >= cycles) break;  // nothing busy any more, or done
    }
    apply_due_actions();
    return ran;
}

void SimDevice::at_cycle(uint64_t at_cycle, std::function<void()> action) {
    schedule_.emplace(at_cycle, TimedAction{std::nullopt, std::move(action)});
    apply_due_actions();
}

std::optional<uint64_t> SimDevice::next_action_cycle() const {
    if (schedule_.empty()) return std::nullopt;
    return schedule_.begin()->first;
}

void SimDevice::apply_due_actions() {
    if (applying_) return;  // an action scheduling another: the loop below picks it up
    applying_ = true;
    try {
        while (!schedule_.empty() && schedule_.begin()->first <= cycles()) {
            auto node = schedule_.extract(schedule_.begin());
            node.mapped().apply();
        }
    } catch (...) {
        applying_ = false;
        throw;
    }
    applying_ = false;
}

void SimDevice::cancel_pending_freeze(const CoreLocation& core) {
    std::erase_if(schedule_, [&](const auto& entry) { return entry.second.freezes == core; });
}

void SimDevice::freeze_core(const CoreLocation& core, std::optional<uint64_t> at_cycle) {
    tile(core);
    cancel_pending_freeze(core);
    const auto freeze = [this, core] {
        model_chip(core.chip).set_frozen(core.core.x, core.core.y, true);
    };
    schedule_.emplace(at_cycle.value_or(cycles()), TimedAction{core, freeze});
    apply_due_actions();
}

void SimDevice::thaw_core(const CoreLocation& core) {
    tile(core);
    cancel_pending_freeze(core);
    model_chip(core.chip).set_frozen(core.core.x, core.core.y, false);
}

void SimDevice::hold_noc_ejection(const CoreLocation& core, bool hold) {
    if (!model_chip(core.chip).network().hold_ejection(core.core.x, core.core.y, hold)) {
        fail(ErrorCategory::BadInput, "sim: {} is outside the chip's grid", core.str());
    }
}

bool SimDevice::core_frozen(const CoreLocation& core) {
    tile(core);
    return model_chip(core.chip).frozen(core.core.x, core.core.y);
}

uint64_t SimDevice::cycles() const {
    return cluster_->cycle();
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

void SimDevice::power_on_as_device() {
    for (ChipId c = 0; c < chip_count(); ++c) {
        const auto m = model_chip_index(c);
        if (m && !cluster_desc_.is_mmio(c)) cluster_->chip(*m).create_cores_on_noc_access(true);
    }
    if (!base_fw_) return;
    for (const auto& conn : cluster_desc_.connections()) {
        for (const EthPortRef& p : {conn.a, conn.b}) {
            if (model_chip_index(p.chip)) tile({p.chip, soc(p.chip).eth_core(p.chan)});
        }
    }
}

LaunchMethod SimDevice::launch_method(const CoreLocation& core) {
    tile(core);  // a WH eth core boots its base firmware when it is first used
    const auto channel = soc(core.chip).eth_channel(core.core);
    if (channel && cluster_->runs_base_firmware(*model_chip_index(core.chip), *channel))
        return LaunchMethod::LaunchFlag;
    return LaunchMethod::ResetPc;
}

void SimDevice::set_console_sink(std::function<void(const CoreLocation&, char)> sink) {
    sink_ = std::move(sink);
}

std::string SimDevice::console(const CoreLocation& core) const {
    const auto it = consoles_.find(core);
    return it == consoles_.end() ? std::string() : it->second;
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
