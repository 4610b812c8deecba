// SimKmdPort: a tt-kmd driver over the model. The ioctl handlers mirror what the kernel driver does
// with each request (host-and-pcie §1.3-1.4): copy in, check, act, copy out min(output_size, ...).
#include "fabric/sim_kmd_port.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

#include "fabric/error.h"
#include "fabric/kmd_abi.h"
#include "fabric/sim_device.h"
#include "sim/model/cluster.h"
#include "sim/model/pcie_tlb.h"

namespace fabric {

struct SimKmdPort::Node {
    uint32_t ordinal = 0;
    ChipId chip = 0;
    std::unique_ptr<sim::PcieTlb> tlb;
    std::map<uint32_t, const void*> owner;  // allocated window -> the open file that holds it
    std::array<const void*, kmd::kLockCount> lock_holder{};  // LOCK_CTL: the file holding each
};

namespace {

constexpr uint64_t kRegionMask = (uint64_t{1} << kmd::kMmapResourceShift) - 1;

uint64_t tlb_mmap_offset(const sim::PcieTlb::Window& w, kmd::MmapRegion region) {
    // BAR4 windows (Blackhole 4 GiB) sit after the 512 MiB of BAR0 in the driver's TLB space.
    const uint64_t at = w.bar == 4 ? kmd::kBar0Size + w.bar_offset : w.bar_offset;
    return (uint64_t{region} << kmd::kMmapResourceShift) + at;
}

// One TLB window mapped into the process: accesses go to the model's PCIe tile.
class SimTlbMapping final : public KmdMapping {
  public:
    SimTlbMapping(sim::PcieTlb& tlb, uint32_t index, uint64_t size, std::string what)
        : tlb_(tlb), index_(index), size_(size), what_(std::move(what)) {}
    uint64_t size() const override { return size_; }
    void write(uint64_t offset, std::span<const uint8_t> bytes) override {
        check(offset, bytes.size());
        guard("write", offset, bytes.size(), [&] { tlb_.write(index_, offset, bytes); });
    }
    void read(uint64_t offset, std::span<uint8_t> bytes) override {
        check(offset, bytes.size());
        guard("read", offset, bytes.size(), [&] { tlb_.read(index_, offset, bytes); });
    }
    void write32(uint64_t offset, uint32_t value) override {
        uint8_t b[4];
        std::memcpy(b, &value, 4);
        write(offset, b);
    }
    uint32_t read32(uint64_t offset) override {
        uint8_t b[4];
        read(offset, b);
        uint32_t v;
        std::memcpy(&v, b, 4);
        return v;
    }

  private:
    void check(uint64_t offset, uint64_t len) const {
        if (offset > size_ || len > size_ - offset) {
            fail(ErrorCategory::Internal, "{}: access of {} bytes at {} leaves the {}-byte mapping",
                 what_, len, hex32(offset), size_);
        }
    }
    template <typename F>
    void guard(const char* op, uint64_t offset, uint64_t len, F&& f) {
        try {
            f();
        } catch (const std::out_of_range& e) {
            // Silicon: a bus error (SIGBUS) or a NOC hang reading all-ones.
            fail(ErrorCategory::Device, "{}: {} of {} bytes at window offset {} faulted: {}", what_,
                 op, len, hex32(offset), e.what());
        }
    }

    sim::PcieTlb& tlb_;
    uint32_t index_;
    uint64_t size_;
    std::string what_;
};

// BAR0 mapped whole (or in part): the TLB config registers, and the BAR0 windows.
class SimBar0Mapping final : public KmdMapping {
  public:
    SimBar0Mapping(sim::PcieTlb& tlb, uint64_t base, uint64_t size, std::string what)
        : tlb_(tlb), base_(base), size_(size), what_(std::move(what)) {}
    uint64_t size() const override { return size_; }
    void write(uint64_t offset, std::span<const uint8_t> bytes) override {
        for (size_t i = 0; i < bytes.size(); i += 4) {
            uint32_t v = 0;
            std::memcpy(&v, bytes.data() + i, std::min<size_t>(4, bytes.size() - i));
            write32(offset + i, v);
        }
    }
    void read(uint64_t offset, std::span<uint8_t> bytes) override {
        for (size_t i = 0; i < bytes.size(); i += 4) {
            const uint32_t v = read32(offset + i);
            std::memcpy(bytes.data() + i, &v, std::min<size_t>(4, bytes.size() - i));
        }
    }
    void write32(uint64_t offset, uint32_t value) override {
        const uint64_t at = base_ + offset;
        if (tlb_.bar0_write32(at, value)) return;
        uint8_t b[4];
        std::memcpy(b, &value, 4);
        window_access(at, [&](uint32_t i, uint64_t off) { tlb_.write(i, off, b); });
    }
    uint32_t read32(uint64_t offset) override {
        const uint64_t at = base_ + offset;
        if (const auto v = tlb_.bar0_read32(at)) return *v;
        uint8_t b[4];
        window_access(at, [&](uint32_t i, uint64_t off) { tlb_.read(i, off, b); });
        uint32_t v;
        std::memcpy(&v, b, 4);
        return v;
    }

  private:
    template <typename F>
    void window_access(uint64_t at, F&& f) {
        for (uint32_t i = 0; i < tlb_.window_count(); ++i) {
            const auto& w = tlb_.window(i);
            if (w.bar == 0 && at >= w.bar_offset && at + 4 <= w.bar_offset + w.size) {
                try {
                    f(i, at - w.bar_offset);
                } catch (const std::out_of_range& e) {
                    fail(ErrorCategory::Device, "{}: BAR0 access at {} faulted: {}", what_,
                         hex32(at), e.what());
                }
                return;
            }
        }
        fail(ErrorCategory::Device, "{}: nothing answers at BAR0 offset {}", what_, hex32(at));
    }

    sim::PcieTlb& tlb_;
    uint64_t base_;
    uint64_t size_;
    std::string what_;
};

}  // namespace

// One open file of the simulated driver.
class SimKmdFile final : public KmdFile {
  public:
    SimKmdFile(SimKmdPort& port, SimKmdPort::Node& node, std::string path)
        : port_(port), node_(node), path_(std::move(path)) {}
    ~SimKmdFile() override {
        // The driver releases a file's windows and locks when it is closed.
        for (auto it = node_.owner.begin(); it != node_.owner.end();) {
            it = it->second == this ? node_.owner.erase(it) : std::next(it);
        }
        for (const void*& holder : node_.lock_holder) {
            if (holder == this) holder = nullptr;
        }
    }
    const std::string& path() const override { return path_; }

    int ioctl(unsigned long request, void* arg) override {
        if (arg == nullptr) return -EFAULT;
        switch (request) {
            case kmd::kGetDeviceInfo:
                return get_device_info(*static_cast<kmd::GetDeviceInfo*>(arg));
            case kmd::kGetDriverInfo:
                return get_driver_info(*static_cast<kmd::GetDriverInfo*>(arg));
            case kmd::kQueryMappings:
                return query_mappings(static_cast<uint8_t*>(arg));
            case kmd::kAllocateTlb:
                return allocate_tlb(*static_cast<kmd::AllocateTlb*>(arg));
            case kmd::kFreeTlb:
                return free_tlb(*static_cast<kmd::FreeTlb*>(arg));
            case kmd::kConfigureTlb:
                return configure_tlb(*static_cast<kmd::ConfigureTlb*>(arg));
            case kmd::kLockCtl:
                return lock_ctl(*static_cast<kmd::LockCtl*>(arg));
            default:
                return -ENOTTY;  // not simulated (DMA, pinning, reset, power)
        }
    }

    std::unique_ptr<KmdMapping> map(uint64_t offset, uint64_t size, int& error) override {
        error = 0;
        const uint64_t region = offset >> kmd::kMmapResourceShift;
        const uint64_t at = offset & kRegionMask;
        sim::PcieTlb& tlb = *node_.tlb;
        if (size == 0) {
            error = EINVAL;
            return nullptr;
        }
        if (region == kmd::kMmapTlbUc || region == kmd::kMmapTlbWc) {
            for (const auto& [index, owner] : node_.owner) {
                const auto& w = tlb.window(index);
                if (owner == this && tlb_mmap_offset(w, kmd::kMmapTlbUc) %
                                             (uint64_t{1} << kmd::kMmapResourceShift) ==
                                         at) {
                    if (size > w.size) break;
                    return std::make_unique<SimTlbMapping>(
                        tlb, index, size, fmt::format("{} TLB window {}", path_, index));
                }
            }
            error = EINVAL;  // not a window this file allocated
            return nullptr;
        }
        if (region == kmd::kMmapRes0Uc || region == kmd::kMmapRes0Wc) {
            if (at > kmd::kBar0Size || size > kmd::kBar0Size - at) {
                error = EINVAL;
                return nullptr;
            }
            return std::make_unique<SimBar0Mapping>(tlb, at, size, path_ + " BAR0");
        }
        error = EINVAL;
        return nullptr;
    }

  private:
    // One of the device's locks (tt-kmd's LOCK_CTL: e.g. one per eth core for remote access),
    // held by at most one open file; never blocking here (a blocking acquire is refused, as the
    // single-threaded server cannot wait).
    int lock_ctl(kmd::LockCtl& l) {
        if (l.in.index >= kmd::kLockCount) return -EINVAL;
        const void*& holder = node_.lock_holder[l.in.index];
        switch (l.in.flags) {
            case kmd::kLockAcquire:
                if (holder == nullptr) holder = this;
                l.out.value = holder == this ? 1 : 0;
                return 0;
            case kmd::kLockRelease:
                l.out.value = holder == this ? 1 : 0;
                if (holder == this) holder = nullptr;
                return 0;
            case kmd::kLockTest:
                l.out.value = holder == this ? 1 : 0;
                return 0;
            default:
                return -EINVAL;
        }
    }

    template <typename Out>
    static void copy_out(Out& dst, const Out& src, uint32_t output_size) {
        // The driver clears the output, then copies min(output_size_bytes, sizeof(out)) bytes.
        Out tmp{};
        std::memcpy(&tmp, &src, std::min<size_t>(output_size, sizeof(Out)));
        dst = tmp;
    }

    int get_device_info(kmd::GetDeviceInfo& a) {
        const hal::Arch arch = port_.model().soc(node_.chip).arch();
        kmd::GetDeviceInfoOut o{};
        o.output_size_bytes = sizeof(o);
        o.vendor_id = kmd::kPciVendorId;
        o.device_id =
            arch == hal::Arch::Blackhole ? kmd::kDeviceIdBlackhole : kmd::kDeviceIdWormhole;
        o.subsystem_vendor_id = kmd::kPciVendorId;
        o.subsystem_id = 0;
        o.bus_dev_fn =
            static_cast<uint16_t>((node_.ordinal + 1) << 8);  // bus ordinal+1, dev 0, fn 0
        o.max_dma_buf_size_log2 = 28;
        o.pci_domain = 0;
        copy_out(a.out, o, a.in.output_size_bytes);
        return 0;
    }

    int get_driver_info(kmd::GetDriverInfo& a) {
        kmd::GetDriverInfoOut o{};
        o.output_size_bytes = sizeof(o);
        o.driver_version = kmd::kDriverApiVersion;
        o.driver_version_major = 2;
        o.driver_version_minor = 0;
        o.driver_version_patch = 0;
        copy_out(a.out, o, a.in.output_size_bytes);
        return 0;
    }

    int query_mappings(uint8_t* arg) {
        kmd::QueryMappingsIn in;
        std::memcpy(&in, arg, sizeof in);
        const kmd::Mapping all[] = {
            {kmd::kMappingResource0Uc, 0, uint64_t{kmd::kMmapRes0Uc} << kmd::kMmapResourceShift,
             kmd::kBar0Size},
            {kmd::kMappingResource0Wc, 0, uint64_t{kmd::kMmapRes0Wc} << kmd::kMmapResourceShift,
             kmd::kBar0Size},
        };
        for (uint32_t i = 0; i < in.output_mapping_count; ++i) {
            kmd::Mapping m{};
            if (i < std::size(all)) m = all[i];
            std::memcpy(arg + sizeof in + i * sizeof(kmd::Mapping), &m, sizeof m);
        }
        return 0;
    }

    int allocate_tlb(kmd::AllocateTlb& a) {
        const hal::Arch arch = node_.tlb->arch();
        const kmd::TlbGeometry& g = kmd::tlb_geometry(arch);
        const kmd::TlbWindowClass* c = kmd::window_class(g, a.in.size);
        if (c == nullptr) return -EINVAL;  // the size must be exactly a window size
        for (uint32_t i = c->first; i < c->first + c->count; ++i) {
            if (i == g.kmd_reserved || node_.owner.count(i)) continue;
            node_.owner[i] = this;
            kmd::AllocateTlbOut o{};
            o.id = i;
            o.mmap_offset_uc = tlb_mmap_offset(node_.tlb->window(i), kmd::kMmapTlbUc);
            o.mmap_offset_wc = tlb_mmap_offset(node_.tlb->window(i), kmd::kMmapTlbWc);
            a.out = o;
            return 0;
        }
        return -ENOMEM;
    }

    int free_tlb(const kmd::FreeTlb& a) {
        const auto it = node_.owner.find(a.in.id);
        if (it == node_.owner.end() || it->second != this) return -EINVAL;
        node_.owner.erase(it);
        return 0;
    }

    int configure_tlb(kmd::ConfigureTlb& a) {
        const auto it = node_.owner.find(a.in.id);
        if (it == node_.owner.end() || it->second != this) return -EINVAL;
        const hal::Arch arch = node_.tlb->arch();
        const uint64_t size = node_.tlb->window(a.in.id).size;
        if (kmd::check_tlb_config(arch, size, a.in.config)) return -EINVAL;
        const std::vector<uint32_t> words = kmd::encode_tlb(arch, size, a.in.config);
        const uint64_t reg =
            sim::PcieTlb::kConfigBase + uint64_t{a.in.id} * node_.tlb->config_stride();
        for (size_t k = 0; k < words.size(); ++k) node_.tlb->bar0_write32(reg + 4 * k, words[k]);
        a.out = kmd::ConfigureTlbOut{};
        ++port_.configure_calls_;
        return 0;
    }

    SimKmdPort& port_;
    SimKmdPort::Node& node_;
    std::string path_;
};

SimKmdPort::SimKmdPort(std::shared_ptr<SimDevice> model, bool sim_control)
    : model_(std::move(model)), sim_control_(sim_control) {
    if (!model_) fail(ErrorCategory::Internal, "SimKmdPort: no model");
    model_->power_on_as_device();
    const ClusterDescriptor& cd = model_->cluster_descriptor();
    std::map<uint32_t, ChipId> by_ordinal;
    for (const auto& [chip, pci] : cd.mmio_chips()) by_ordinal[pci] = chip;
    for (const auto& [ordinal, chip] : by_ordinal) {
        auto n = std::make_unique<Node>();
        n->ordinal = ordinal;
        n->chip = chip;
        n->tlb = std::make_unique<sim::PcieTlb>(model_->cluster().chip(chip));
        nodes_.push_back(std::move(n));
    }
}

SimKmdPort::~SimKmdPort() = default;

std::string SimKmdPort::description() const {
    return "simulated /dev/tenstorrent over " + model_->description();
}

std::vector<uint32_t> SimKmdPort::list_devices() {
    std::vector<uint32_t> out;
    for (const auto& n : nodes_) out.push_back(n->ordinal);
    return out;
}

SimKmdPort::Node& SimKmdPort::node(uint32_t ordinal) {
    for (auto& n : nodes_) {
        if (n->ordinal == ordinal) return *n;
    }
    fail(ErrorCategory::Device,
         "cannot open /dev/tenstorrent/{} (simulated): No such file or directory", ordinal);
}

const SimKmdPort::Node& SimKmdPort::node(uint32_t ordinal) const {
    return const_cast<SimKmdPort*>(this)->node(ordinal);
}

std::unique_ptr<KmdFile> SimKmdPort::open(uint32_t ordinal) {
    Node& n = node(ordinal);
    return std::make_unique<SimKmdFile>(*this, n,
                                        fmt::format("/dev/tenstorrent/{} (sim)", ordinal));
}

uint64_t SimKmdPort::advance(uint64_t cycles, uint32_t) {
    return model_->advance(cycles);
}

uint64_t SimKmdPort::step(uint64_t cycles, uint32_t) {
    model_->step(cycles);
    return cycles;
}

uint64_t SimKmdPort::cycles(uint32_t) const {
    return model_->cycles();
}

sim::PcieTlb& SimKmdPort::pcie_tlb(uint32_t ordinal) {
    return *node(ordinal).tlb;
}

uint32_t SimKmdPort::windows_in_use(uint32_t ordinal) const {
    return static_cast<uint32_t>(node(ordinal).owner.size());
}

}  // namespace fabric
