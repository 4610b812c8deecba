// PcieDevice: Device over tt-kmd TLB windows. The system calls are behind KmdPort; everything else
// (which window, its configuration, splitting, reset, launch, discovery) is here, once.
#include "fabric/pcie_device.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "fabric/error.h"
#include "fabric/exit_mailbox.h"
#include "hal/arch_map.h"
#include "protocol/erisc_base_fw.h"
#include "protocol/erisc_remote_access.h"

namespace fabric {

namespace {

namespace hc = hal::common;
namespace bfw = protocol::base_fw;
namespace ra = protocol::remote_access;

// Core-local register space reachable through a window (host-and-pcie §2.3): 0xFFB00000 and up.
constexpr uint64_t kRegisterSpaceBase = hc::kLocalDataRamBase;
constexpr uint64_t kCoreSpaceEnd = uint64_t{1} << 32;

// The model's run-state words (sim/model/pcie_tlb.h, kSimStatus*; pinned there by
// sim_kmd_port.cpp). Only read when the port says it has them.
constexpr uint32_t kSimStatusBase = hal::simctrl::kBase + 0x100;
constexpr uint32_t kSimStatusWords = 6;  // run state, exit code, pc, trap cause, trap pc, trap tval

// Blackhole base-firmware mailbox (host-and-pcie §2.4): 4 x 16 B at 0x7D000, HOST is slot 0.
constexpr uint32_t kBhMailboxHost = 0x7D000;
constexpr uint32_t kBhMailboxCall = 0xCA110000;
constexpr uint32_t kBhMailboxDone = 0xD0E50000;
constexpr uint32_t kBhMailboxStatusMask = 0xFFFF0000;
constexpr uint32_t kBhMsgReleaseCore = 0x2;

// Timeouts (device cycles), each bounded and named:
// - the WH base firmware beats once per 1,000 cycles while idle (erisc_base_fw.h); 50 periods cover
//   a core that was released a moment ago and has not reached its idle loop yet.
constexpr uint64_t kHeartbeatPollCycles = bfw::kHeartbeatPeriodCycles;
constexpr uint32_t kHeartbeatPolls = 50;
// - the BH base firmware services its mailbox between link-maintenance slices; 1 ms of AICLK
//   (1.35 M cycles) is far above a healthy reply and short enough to report a dead core quickly.
constexpr uint64_t kMailboxPollCycles = 10'000;
constexpr uint32_t kMailboxPolls = 135;

std::string errno_text(int rc) {
    return std::strerror(rc < 0 ? -rc : rc);
}

std::string bdf_text(uint16_t domain, uint16_t bdf) {
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bdf >> 8, (bdf >> 3) & 0x1F, bdf & 0x7);
}

const char* trap_name(uint32_t cause) {
    switch (cause) {
        case 0:
            return "instruction address misaligned";
        case 1:
            return "instruction access fault";
        case 2:
            return "illegal instruction";
        case 3:
            return "breakpoint";
        case 4:
            return "load address misaligned";
        case 5:
            return "load access fault";
        case 6:
            return "store address misaligned";
        case 7:
            return "store access fault";
        case 11:
            return "environment call";
        default:
            return "unknown trap";
    }
}

}  // namespace

std::vector<DiscoveredDevice> discover_devices(KmdPort& port) {
    std::vector<DiscoveredDevice> out;
    for (const uint32_t n : port.list_devices()) {
        DiscoveredDevice d;
        d.ordinal = n;
        d.path = fmt::format("{}/{}", kmd::kDeviceDir, n);
        try {
            auto f = port.open(n);
            d.path = f->path();
            kmd::GetDeviceInfo info{};
            info.in.output_size_bytes = sizeof(info.out);
            if (const int rc = f->ioctl(kmd::kGetDeviceInfo, &info); rc != 0) {
                d.error = fmt::format("GET_DEVICE_INFO failed: {}", errno_text(rc));
            } else {
                d.vendor_id = info.out.vendor_id;
                d.device_id = info.out.device_id;
                d.arch = kmd::arch_of_device_id(info.out.device_id);
                d.bdf = bdf_text(info.out.pci_domain, info.out.bus_dev_fn);
            }
            kmd::GetDriverInfo drv{};
            drv.in.output_size_bytes = sizeof(drv.out);
            if (f->ioctl(kmd::kGetDriverInfo, &drv) == 0) {
                d.driver_api = drv.out.driver_version;
                d.driver_version =
                    fmt::format("{}.{}.{}", drv.out.driver_version_major,
                                drv.out.driver_version_minor, drv.out.driver_version_patch);
            }
        } catch (const Error& e) {
            d.error = e.what();
        }
        out.push_back(std::move(d));
    }
    return out;
}

struct PcieDevice::Window {
    uint32_t id = 0;
    std::unique_ptr<KmdMapping> uc;  // registers: 32-bit accesses
    std::unique_ptr<KmdMapping> wc;  // bulk copies
    bool configured = false;
    CoreCoord core;
    uint64_t base = 0;
    uint64_t last_use = 0;
};

struct PcieDevice::RemoteChip {
    uint32_t asic_id = 0;
    uint32_t coord = 0;                  // Ethernet coordinates (0x0000YYXX)
    std::vector<CoreLocation> gateways;  // eth cores of PCIe-attached chips linked to it
    std::unique_ptr<RemoteAccess> access;
};

struct PcieDevice::ChipPort {
    uint32_t ordinal = 0;
    std::unique_ptr<KmdFile> file;
    std::vector<std::unique_ptr<Window>> windows;
    bool exhausted = false;  // the driver had no more windows of our size
};

PcieDevice::PcieDevice(std::shared_ptr<KmdPort> port, SocDescriptor soc, PcieDeviceOptions options)
    : port_(std::move(port)), soc_(std::move(soc)), options_(std::move(options)) {
    if (!port_) fail(ErrorCategory::Internal, "PcieDevice: no KMD port");
    const hal::Arch arch = soc_.arch();
    window_size_ = options_.window_size != 0 ? options_.window_size : 2 * kmd::kMiB;
    if (kmd::window_class(kmd::tlb_geometry(arch), window_size_) == nullptr ||
        window_size_ > 16 * kmd::kMiB) {
        fail(ErrorCategory::BadInput,
             "pcie: {} has no {} KiB TLB window to use (Wormhole: 1024, 2048, 16384; Blackhole: "
             "2048)",
             arch_name(arch), window_size_ / 1024);
    }
    if (options_.windows_per_chip == 0)
        fail(ErrorCategory::BadInput, "pcie: windows_per_chip must be at least 1");
    clock_mhz_ =
        options_.clock_mhz != 0 ? options_.clock_mhz : (arch == hal::Arch::Blackhole ? 1350 : 1000);

    std::vector<DiscoveredDevice> all = discover_devices(*port_);
    if (options_.ordinals) {
        for (const uint32_t n : *options_.ordinals) {
            const auto it = std::find_if(all.begin(), all.end(),
                                         [&](const DiscoveredDevice& d) { return d.ordinal == n; });
            if (it == all.end()) {
                fail(ErrorCategory::BadInput, "pcie: device {}/{} does not exist ({} present)",
                     port_->description(), n, all.size());
            }
            devices_.push_back(*it);
        }
    } else {
        devices_ = std::move(all);
    }
    if (devices_.empty()) {
        fail(ErrorCategory::Device,
             "pcie: no Tenstorrent device found under {} (is the tt-kmd driver loaded and a card "
             "present?)",
             port_->description());
    }
    for (const auto& d : devices_) {
        if (!d.error.empty()) fail(ErrorCategory::Device, "pcie: {}: {}", d.path, d.error);
        if (d.vendor_id != kmd::kPciVendorId || !d.arch) {
            fail(ErrorCategory::Device,
                 "pcie: {} is a {} device (vendor {:#06x} device {:#06x}); only "
                 "Wormhole and Blackhole are supported",
                 d.path, kmd::device_id_name(d.device_id), d.vendor_id, d.device_id);
        }
        if (*d.arch != arch) {
            fail(ErrorCategory::Device, "pcie: {} is {} but the SoC descriptor {} is {}", d.path,
                 arch_name(*d.arch), soc_.source(), arch_name(arch));
        }
        if (d.driver_api != 0 && d.driver_api < kmd::kDriverApiVersion) {
            fail(ErrorCategory::Device, "pcie: {}: driver API {} is older than the required {}",
                 d.path, d.driver_api, kmd::kDriverApiVersion);
        }
    }
    for (const auto& d : devices_) {
        auto cp = std::make_unique<ChipPort>();
        cp->ordinal = d.ordinal;
        cp->file = port_->open(d.ordinal);
        chips_.push_back(std::move(cp));
    }
    if (options_.discover_links && arch == hal::Arch::WormholeB0) {
        discover_links();
    } else {
        std::string y = "arch: {";
        for (size_t i = 0; i < chips_.size(); ++i)
            y += fmt::format("{}{}: {}", i ? ", " : "", i, arch_name(arch));
        y += "}\nethernet_connections: []\nchips_with_mmio:\n";
        for (size_t i = 0; i < chips_.size(); ++i)
            y += fmt::format("  - {}: {}\n", i, chips_[i]->ordinal);
        cluster_ = ClusterDescriptor::parse(y, "pcie discovery");
    }
}

PcieDevice::~PcieDevice() {
    for (auto& cp : chips_) {
        for (auto& w : cp->windows) {
            w->uc.reset();
            w->wc.reset();
            kmd::FreeTlb f{};
            f.in.id = w->id;
            (void)cp->file->ioctl(kmd::kFreeTlb, &f);  // the driver frees them at close anyway
        }
    }
}

std::string PcieDevice::description() const {
    const uint32_t n = chip_count();
    std::string s = fmt::format("pcie {} ({} chip{}", arch_name(soc_.arch()), n, n == 1 ? "" : "s");
    if (!remote_.empty()) s += fmt::format(", {} remote", remote_.size());
    return s + ") via " + port_->description();
}

uint32_t PcieDevice::chip_count() const {
    return static_cast<uint32_t>(chips_.size() + remote_.size());
}

const SocDescriptor& PcieDevice::soc(ChipId chip) const {
    if (chip >= chip_count()) {
        fail(ErrorCategory::BadInput, "{}: chip {} does not exist (chips 0..{})", description(),
             chip, chip_count() - 1);
    }
    return soc_;
}

bool PcieDevice::check_core(const CoreLocation& core) const {
    const SocDescriptor& d = soc(core.chip);
    const auto type = d.core_type(core.core);
    if (!type) {
        fail(ErrorCategory::BadInput, "{}: no core at {} on chip {} (grid {}x{}, {})",
             description(), core.core.str(), core.chip, d.grid_x(), d.grid_y(), d.source());
    }
    if (*type != CoreType::Eth && *type != CoreType::Worker) {
        fail(ErrorCategory::Unsupported,
             "{}: {} is a '{}' core; only worker and eth cores are "
             "addressed through this backend",
             description(), core.str(), core_type_name(*type));
    }
    return !is_remote(core);
}

PcieDevice::ChipPort& PcieDevice::mmio_chip(const CoreLocation& core) {
    if (!check_core(core)) {
        fail(ErrorCategory::Unsupported,
             "{}: chip {} is not PCIe-attached (reached over Ethernet only) and this access has "
             "no remote path",
             description(), core.chip);
    }
    return *chips_[core.chip];
}

// The gateway for an access to a remote chip, chosen again when the last one got busy (an
// application launched on it): a gateway whose base firmware is idle serves at once; one running
// an application only when that yields to it.
RemoteAccess& PcieDevice::remote(const CoreLocation& core) {
    RemoteChip& r = *remote_[core.chip - chips_.size()];
    const auto booted = [&](const CoreLocation& g) {
        return read32(g, bfw::kStatusBlock + offsetof(bfw::StatusBlock, magic)) ==
               bfw::kStatusMagic;
    };
    const auto idle = [&](const CoreLocation& g) {
        uint32_t w[2];  // magic, state: one read
        static_assert(offsetof(bfw::StatusBlock, state) == 4);
        read(g, bfw::kStatusBlock, std::span(reinterpret_cast<uint8_t*>(w), sizeof w));
        return w[0] == bfw::kStatusMagic && w[1] == static_cast<uint32_t>(bfw::State::Idle);
    };
    if (r.access && idle(r.access->gateway())) return *r.access;
    // A base firmware that has not finished booting would clear a command queued now.
    for (uint32_t i = 0;
         i < kHeartbeatPolls && std::none_of(r.gateways.begin(), r.gateways.end(), booted); ++i) {
        port_->step(kHeartbeatPollCycles, clock_mhz_);
    }
    const auto it = std::find_if(r.gateways.begin(), r.gateways.end(), idle);
    const CoreLocation gateway = it != r.gateways.end() ? *it : r.gateways.front();
    if (r.access && r.access->gateway() == gateway) return *r.access;
    r.access = std::make_unique<RemoteAccess>(
        *this, gateway, r.coord, fmt::format("{}: chip {}", description(), core.chip),
        [this](uint64_t cycles) { port_->step(cycles, clock_mhz_); });
    return *r.access;
}

// LOCK_CTL on the gateway's chip, lock index = its eth channel. True when the lock is ours (or
// the driver has no locks: tt-kmd before LOCK_CTL).
bool PcieDevice::lock_gateway(const CoreLocation& gateway, uint32_t flags) {
    kmd::LockCtl l{};
    l.in.output_size_bytes = sizeof(l.out);
    l.in.flags = flags;
    l.in.index = static_cast<uint8_t>(*soc_.eth_channel(gateway.core));
    const int rc = chips_[gateway.chip]->file->ioctl(kmd::kLockCtl, &l);
    if (rc == -ENOTTY) return true;
    if (rc != 0) {
        fail(ErrorCategory::Device, "{}: LOCK_CTL on {} failed: {}", description(), gateway.str(),
             errno_text(rc));
    }
    return l.out.value == 1;
}

template <typename F>
void PcieDevice::with_remote(const CoreLocation& core, F&& f) {
    RemoteAccess& access = remote(core);
    const CoreLocation gateway = access.gateway();
    for (uint64_t waited = 0; !lock_gateway(gateway, kmd::kLockAcquire);
         waited += kRemotePollCycles) {
        if (waited >= kRemoteTimeoutCycles) {
            fail(ErrorCategory::Timeout,
                 "{}: chip {}: another process held the lock of the gateway {} for {} cycles",
                 description(), core.chip, gateway.str(), kRemoteTimeoutCycles);
        }
        port_->step(kRemotePollCycles, clock_mhz_);
    }
    try {
        f(access);
    } catch (...) {
        (void)lock_gateway(gateway, kmd::kLockRelease);
        throw;
    }
    (void)lock_gateway(gateway, kmd::kLockRelease);
}

void PcieDevice::check_range(const CoreLocation& core, uint64_t addr, size_t len) const {
    const uint64_t l1 = soc_.l1_size(core.core);
    if (addr <= l1 && len <= l1 - addr) return;
    if (addr >= kRegisterSpaceBase && addr < kCoreSpaceEnd && len <= kCoreSpaceEnd - addr) {
        if (addr % 4 != 0 || len % 4 != 0) {
            fail(ErrorCategory::BadInput,
                 "{}: {}: register access of {} bytes at {} must be whole aligned 32-bit words",
                 description(), core.str(), len, hex32(addr));
        }
        return;
    }
    fail(ErrorCategory::Device,
         "{}: {}: {} bytes at {} are outside its L1 ({} bytes) and the core-local registers "
         "({}..0xffffffff)",
         description(), core.str(), len, hex32(addr), l1, hex32(kRegisterSpaceBase));
}

PcieDevice::Window& PcieDevice::window_for(ChipPort& cp, const CoreLocation& core, uint64_t base) {
    ++use_clock_;
    for (auto& w : cp.windows) {
        if (w->configured && w->core == core.core && w->base == base) {
            w->last_use = use_clock_;
            return *w;
        }
    }
    Window* pick = nullptr;
    if (cp.windows.size() < options_.windows_per_chip && !cp.exhausted) {
        kmd::AllocateTlb a{};
        a.in.size = window_size_;
        const int rc = cp.file->ioctl(kmd::kAllocateTlb, &a);
        if (rc == -ENOMEM || rc == -EBUSY) {
            cp.exhausted = true;
            if (cp.windows.empty()) {
                fail(ErrorCategory::Device,
                     "{}: no free {} KiB TLB window on {} (another process may hold them all)",
                     description(), window_size_ / 1024, cp.file->path());
            }
        } else if (rc != 0) {
            fail(ErrorCategory::Device, "{}: ALLOCATE_TLB of {} KiB on {} failed: {}",
                 description(), window_size_ / 1024, cp.file->path(), errno_text(rc));
        } else {
            auto w = std::make_unique<Window>();
            w->id = a.out.id;
            int err = 0;
            w->uc = cp.file->map(a.out.mmap_offset_uc, window_size_, err);
            if (w->uc) w->wc = cp.file->map(a.out.mmap_offset_wc, window_size_, err);
            if (!w->uc || !w->wc) {
                w->uc.reset();
                kmd::FreeTlb f{};
                f.in.id = a.out.id;
                (void)cp.file->ioctl(kmd::kFreeTlb, &f);
                fail(ErrorCategory::Device, "{}: mmap of TLB window {} on {} failed: {}",
                     description(), a.out.id, cp.file->path(), std::strerror(err));
            }
            cp.windows.push_back(std::move(w));
            pick = cp.windows.back().get();
        }
    }
    if (pick == nullptr) {
        pick =
            std::min_element(cp.windows.begin(), cp.windows.end(),
                             [](const auto& a, const auto& b) { return a->last_use < b->last_use; })
                ->get();
    }
    kmd::ConfigureTlb c{};
    c.in.id = pick->id;
    c.in.config.addr = base;
    c.in.config.x_end = static_cast<uint16_t>(core.core.x);
    c.in.config.y_end = static_cast<uint16_t>(core.core.y);
    c.in.config.noc = 0;
    c.in.config.mcast = 0;
    c.in.config.ordering = kmd::kOrderingStrict;
    c.in.config.static_vc = soc_.arch() == hal::Arch::WormholeB0 ? 1 : 0;  // as UMD does
    pick->configured = false;
    if (const int rc = cp.file->ioctl(kmd::kConfigureTlb, &c); rc != 0) {
        fail(ErrorCategory::Device, "{}: CONFIGURE_TLB of window {} for {} at {} failed: {}",
             description(), pick->id, core.str(), hex32(base), errno_text(rc));
    }
    ++configures_;
    pick->configured = true;
    pick->core = core.core;
    pick->base = base;
    pick->last_use = use_clock_;
    return *pick;
}

template <typename F>
void PcieDevice::for_each_chunk(const CoreLocation& core, uint64_t addr, size_t len, F&& f) {
    ChipPort& cp = mmio_chip(core);
    size_t done = 0;
    while (done < len) {
        const uint64_t at = addr + done;
        const uint64_t base = at & ~(window_size_ - 1);
        const size_t n =
            static_cast<size_t>(std::min<uint64_t>(len - done, base + window_size_ - at));
        Window& w = window_for(cp, core, base);
        f(w, at - base, done, n);
        done += n;
    }
}

void PcieDevice::write(const CoreLocation& core, uint64_t addr, std::span<const uint8_t> data) {
    const bool mmio = check_core(core);
    check_range(core, addr, data.size());
    if (!mmio) return with_remote(core, [&](RemoteAccess& r) { r.write(core.core, addr, data); });
    const bool regs = addr >= kRegisterSpaceBase;
    for_each_chunk(core, addr, data.size(), [&](Window& w, uint64_t off, size_t from, size_t n) {
        (regs ? w.uc : w.wc)->write(off, data.subspan(from, n));
        w.wc->flush();
    });
}

void PcieDevice::read(const CoreLocation& core, uint64_t addr, std::span<uint8_t> data) {
    const bool mmio = check_core(core);
    check_range(core, addr, data.size());
    if (!mmio) return with_remote(core, [&](RemoteAccess& r) { r.read(core.core, addr, data); });
    const bool regs = addr >= kRegisterSpaceBase;
    for_each_chunk(core, addr, data.size(), [&](Window& w, uint64_t off, size_t from, size_t n) {
        (regs ? w.uc : w.wc)->read(off, data.subspan(from, n));
    });
}

void PcieDevice::write32(const CoreLocation& core, uint64_t addr, uint32_t value) {
    const bool mmio = check_core(core);
    if (addr % 4 != 0) {
        fail(ErrorCategory::BadInput, "{}: {}: 32-bit write at unaligned address {}", description(),
             core.str(), hex32(addr));
    }
    check_range(core, addr, 4);
    if (!mmio) return write(core, addr, std::span(reinterpret_cast<const uint8_t*>(&value), 4));
    for_each_chunk(core, addr, 4,
                   [&](Window& w, uint64_t off, size_t, size_t) { w.uc->write32(off, value); });
}

uint32_t PcieDevice::read32(const CoreLocation& core, uint64_t addr) {
    const bool mmio = check_core(core);
    if (addr % 4 != 0) {
        fail(ErrorCategory::BadInput, "{}: {}: 32-bit read at unaligned address {}", description(),
             core.str(), hex32(addr));
    }
    check_range(core, addr, 4);
    uint32_t v = 0;
    if (!mmio) {
        read(core, addr, std::span(reinterpret_cast<uint8_t*>(&v), 4));
        return v;
    }
    for_each_chunk(core, addr, 4,
                   [&](Window& w, uint64_t off, size_t, size_t) { v = w.uc->read32(off); });
    return v;
}

uint64_t PcieDevice::advance(uint64_t cycles) {
    return port_->advance(cycles, clock_mhz_);
}

uint64_t PcieDevice::cycles() const {
    return port_->cycles(clock_mhz_);
}

CoreStatus PcieDevice::core_status(const CoreLocation& core) {
    CoreStatus s;
    if (!port_->has_sim_control() || is_remote(core)) {
        // Silicon: the soft-reset bit; beyond it, the firmware's exit mailbox (running or exited
        // with its code) when the firmware has set one up.
        const uint32_t sr = read32(core, hc::kSoftResetReg);
        if (sr & hc::kSoftResetErisc0) {
            s.state = CoreRunState::Reset;
            return s;
        }
        return exit_mailbox_core_status(read_exit_mailbox_header(*this, core)).value_or(s);
    }
    // The model: its run-state words answer without clocking the tile (a register read would
    // clock it once), so a run polled through PcieDevice takes exactly the cycles it takes
    // through SimDevice.
    // The model's run-state words, read through a window like any other word (no range check:
    // they are outside L1 and the silicon register space on purpose).
    uint32_t w[kSimStatusWords];
    for_each_chunk(
        core, kSimStatusBase, sizeof w, [&](Window& win, uint64_t off, size_t from, size_t n) {
            win.uc->read(off, std::span<uint8_t>(reinterpret_cast<uint8_t*>(w) + from, n));
        });
    s.pc = w[2];
    switch (w[0]) {  // sim::RunState: 0 reset, 1 running, 2 exited, 3 trapped
        case 0:
            s.state = CoreRunState::Reset;
            break;
        case 1:
            s.state = CoreRunState::Running;
            break;
        case 2:
            s.state = CoreRunState::Exited;
            s.exit_status = w[1];
            break;
        case 3:
            s.state = CoreRunState::Trapped;
            s.trap_cause = w[3];
            s.trap_name = trap_name(w[3]);
            s.trap_pc = w[4];
            s.trap_tval = w[5];
            s.pc = w[4];
            break;
        default:
            s.state = CoreRunState::Unknown;
            break;
    }
    return s;
}

LaunchMethod PcieDevice::launch_method(const CoreLocation& core) {
    check_core(core);
    if (soc_.arch() != hal::Arch::WormholeB0 || !soc_.eth_channel(core.core))
        return LaunchMethod::ResetPc;
    // Held in reset: bare metal. (The model's run-state word answers without clocking the tile,
    // which a soft-reset register read would; silicon reads the register.)
    if (core_status(core).state == CoreRunState::Reset) return LaunchMethod::ResetPc;
    // Out of reset: base firmware if its heartbeat signature shows within a few periods.
    for (uint32_t i = 0; i <= kHeartbeatPolls; ++i) {
        if ((read32(core, bfw::kHeartbeat) & bfw::kHeartbeatSignatureMask) ==
            bfw::kHeartbeatSignature)
            return LaunchMethod::LaunchFlag;
        if (i < kHeartbeatPolls) port_->step(kHeartbeatPollCycles, clock_mhz_);
    }
    return LaunchMethod::ResetPc;
}

void PcieDevice::bh_release_core(const CoreLocation& core, uint32_t l1_addr) {
    check_core(core);
    if (soc_.arch() != hal::Arch::Blackhole || !soc_.eth_channel(core.core)) {
        fail(ErrorCategory::Unsupported,
             "{}: {}: the base-firmware mailbox exists on Blackhole eth "
             "cores only",
             description(), core.str());
    }
    write32(core, kBhMailboxHost + 4, l1_addr);  // arg0: where ERISC0 starts
    write32(core, kBhMailboxHost + 8, 0);
    write32(core, kBhMailboxHost + 12, 0);
    write32(core, kBhMailboxHost, kBhMailboxCall | kBhMsgReleaseCore);
    for (uint32_t i = 0; i < kMailboxPolls; ++i) {
        const uint32_t v = read32(core, kBhMailboxHost);
        if ((v & kBhMailboxStatusMask) == kBhMailboxDone) return;
        port_->step(kMailboxPollCycles, clock_mhz_);
    }
    fail(ErrorCategory::Timeout,
         "{}: {}: no base firmware answered RELEASE_CORE in the mailbox at {} within {} cycles (is "
         "the Blackhole ETH base firmware running on this core?)",
         description(), core.str(), hex32(kBhMailboxHost), kMailboxPolls * kMailboxPollCycles);
}

void PcieDevice::discover_links() {
    // WH base firmware link results (host-and-pcie §2.4, §4.2): for every eth core out of reset
    // with trained link: local asic id, remote asic id and remote channel.
    struct Seen {
        ChipId chip;
        uint32_t chan;
        uint32_t remote_id;
        uint32_t remote_chan;
        uint32_t remote_coord;
    };
    std::vector<Seen> seen;
    std::vector<std::optional<uint32_t>> local_id(chips_.size());
    for (ChipId c = 0; c < chips_.size(); ++c) {
        for (uint32_t ch = 0; ch < soc_.eth_channels(); ++ch) {
            const CoreLocation core{c, soc_.eth_core(ch)};
            if (read32(core, hc::kSoftResetReg) & hc::kSoftResetErisc0) continue;  // disabled
            if (read32(core, bfw::kTrainStatus) != bfw::kTrainStatusOk) continue;
            const uint32_t mine = read32(core, bfw::results_word(bfw::kResultsLocalAsicIdWord));
            if (!local_id[c]) local_id[c] = mine;
            seen.push_back({c, ch, read32(core, bfw::results_word(bfw::kResultsRemoteAsicIdWord)),
                            read32(core, bfw::results_word(bfw::kResultsRemoteEthIdWord)),
                            read32(core, bfw::results_word(ra::kResultsRemoteCoordWord))});
        }
    }
    std::map<uint32_t, ChipId> id_of;  // asic id -> chip id
    for (ChipId c = 0; c < chips_.size(); ++c) {
        if (local_id[c]) id_of.emplace(*local_id[c], c);
    }
    std::set<uint32_t> remote;
    for (const auto& s : seen) {
        if (!id_of.count(s.remote_id)) remote.insert(s.remote_id);
    }
    ChipId next = static_cast<ChipId>(chips_.size());
    for (const uint32_t r : remote) {
        id_of.emplace(r, next++);
        remote_.push_back(std::make_unique<RemoteChip>());
        remote_.back()->asic_id = r;
    }
    for (const auto& s : seen) {
        const ChipId id = id_of.at(s.remote_id);
        if (id < chips_.size()) continue;
        RemoteChip& r = *remote_[id - chips_.size()];
        r.coord = s.remote_coord;
        r.gateways.push_back({s.chip, soc_.eth_core(s.chan)});
    }

    std::set<std::pair<std::pair<ChipId, uint32_t>, std::pair<ChipId, uint32_t>>> links;
    for (const auto& s : seen) {
        auto a = std::make_pair(s.chip, s.chan);
        auto b = std::make_pair(id_of.at(s.remote_id), s.remote_chan);
        if (b < a) std::swap(a, b);
        links.insert({a, b});
    }
    std::string y = "arch: {";
    for (ChipId i = 0; i < chip_count(); ++i)
        y += fmt::format("{}{}: {}", i ? ", " : "", i, arch_name(soc_.arch()));
    y += "}\nethernet_connections:";
    if (links.empty()) y += " []";
    y += "\n";
    for (const auto& [a, b] : links) {
        y += fmt::format("  - [{{chip: {}, chan: {}}}, {{chip: {}, chan: {}}}]\n", a.first,
                         a.second, b.first, b.second);
    }
    y += "chips_with_mmio:\n";
    for (size_t i = 0; i < chips_.size(); ++i)
        y += fmt::format("  - {}: {}\n", i, chips_[i]->ordinal);
    cluster_ = ClusterDescriptor::parse(y, "pcie discovery");
}

}  // namespace fabric
