// PcieDevice (fabric/pcie_device.h) over the simulated tt-kmd driver (fabric/sim_kmd_port.h): the
// TLB-window code that drives silicon, run against the model's PCIe tile (sim/model/pcie_tlb.h).
// Also the ABI itself (ioctl numbers, TLB register encodings checked bit by bit against the
// reference tables and against the model's independent decoder) and the real driver's port on
// this machine. Tests tagged [hardware] need /dev/tenstorrent and say why they skip without it.
#include "fabric/pcie_device.h"

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "cluster_test_util.h"
#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/exit_mailbox.h"
#include "fabric/kmd_abi.h"
#include "fabric/kmd_port.h"
#include "fabric/launch.h"
#include "fabric/remote_access.h"
#include "fabric/sim_device.h"
#include "fabric/sim_kmd_port.h"
#include "pcie_tlb.h"
#include "protocol/erisc_base_fw.h"
#include "protocol/erisc_remote_access.h"
#include "protocol/exit_mailbox.h"
#include "test_elf.h"

using Catch::Matchers::Contains;
using fabric::CoreLocation;
using fabric::ErrorCategory;
namespace kmd = fabric::kmd;
namespace ft = fabric::test;
namespace hc = hal::common;
namespace bfw = protocol::base_fw;

namespace {

const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kFwDir = FABRIC_FIRMWARE_DIR;

fabric::SocDescriptor soc_of(hal::Arch arch) {
    return fabric::SocDescriptor::load_file(kSocDir + (arch == hal::Arch::Blackhole
                                                           ? "/blackhole_140_arch.yaml"
                                                           : "/wormhole_b0_80_arch.yaml"));
}

std::shared_ptr<fabric::SimDevice> model(hal::Arch arch, uint32_t chips = 1) {
    return std::make_shared<fabric::SimDevice>(soc_of(arch), arch, chips);
}

struct Rig {
    std::shared_ptr<fabric::SimDevice> sim;
    std::shared_ptr<fabric::SimKmdPort> port;
    std::unique_ptr<fabric::PcieDevice> dev;
};

Rig rig(hal::Arch arch, fabric::PcieDeviceOptions o = {}, uint32_t chips = 1) {
    Rig r;
    r.sim = model(arch, chips);
    r.port = std::make_shared<fabric::SimKmdPort>(r.sim);
    r.dev = std::make_unique<fabric::PcieDevice>(r.port, soc_of(arch), std::move(o));
    return r;
}

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
    std::vector<uint8_t> v(n);
    std::mt19937 g(seed);
    for (auto& b : v) b = static_cast<uint8_t>(g());
    return v;
}

std::optional<fabric::ElfImage> firmware(hal::Arch arch, const std::string& name) {
    const std::string path =
        kFwDir + (arch == hal::Arch::Blackhole ? "/blackhole/" : "/wormhole_b0/") + name;
    if (!std::filesystem::exists(path)) return std::nullopt;
    return fabric::ElfImage::load_file(path);
}

uint64_t bits(const std::vector<uint32_t>& words, uint32_t lo, uint32_t n) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t b = lo + i;
        v |= uint64_t{(words[b / 32] >> (b % 32)) & 1u} << i;
    }
    return v;
}

kmd::NocTlbConfig unicast(uint64_t addr, uint16_t x, uint16_t y) {
    kmd::NocTlbConfig c{};
    c.addr = addr;
    c.x_end = x;
    c.y_end = y;
    c.ordering = kmd::kOrderingStrict;
    return c;
}

// A 2 MiB window allocated on `f` and mapped uncached or write-combined.
struct Window {
    uint32_t id = 0;
    std::unique_ptr<fabric::KmdMapping> map;
};
Window window_2m(fabric::KmdFile& f, bool write_combined) {
    kmd::AllocateTlb a{};
    a.in.size = 2 * kmd::kMiB;
    REQUIRE(f.ioctl(kmd::kAllocateTlb, &a) == 0);
    int err = 0;
    Window w{a.out.id, f.map(write_combined ? a.out.mmap_offset_wc : a.out.mmap_offset_uc,
                             2 * kmd::kMiB, err)};
    REQUIRE(w.map);
    return w;
}

}  // namespace

// ---- the ABI
// -------------------------------------------------------------------------------------

TEST_CASE("kmd ABI: ioctl numbers, names and device ids", "[pcie][kmd]") {
    CHECK(kmd::kGetDeviceInfo == 0xFA00);
    CHECK(kmd::kGetDriverInfo == 0xFA05);
    CHECK(kmd::kAllocateTlb == 0xFA0B);
    CHECK(kmd::kFreeTlb == 0xFA0C);
    CHECK(kmd::kConfigureTlb == 0xFA0D);
    CHECK(kmd::kExportTlbDmabuf == 0xFA10);
    CHECK(kmd::ioctl_name(kmd::kConfigureTlb) == "CONFIGURE_TLB");
    CHECK(kmd::ioctl_name(0xFA77) == "unknown");
    CHECK(kmd::arch_of_device_id(0x401E) == hal::Arch::WormholeB0);
    CHECK(kmd::arch_of_device_id(0xB140) == hal::Arch::Blackhole);
    CHECK_FALSE(kmd::arch_of_device_id(0xFACA).has_value());
}

TEST_CASE("kmd ABI: window geometry per arch", "[pcie][kmd]") {
    const auto& wh = kmd::tlb_geometry(hal::Arch::WormholeB0);
    CHECK(wh.total == 186);
    CHECK(kmd::class_of_index(wh, 155).size == kmd::kMiB);
    CHECK(kmd::class_of_index(wh, 156).bar_offset == 0x9C00000);
    CHECK(kmd::class_of_index(wh, 166).bar_offset == 0xB000000);
    CHECK(kmd::class_of_index(wh, 185).size == 16 * kmd::kMiB);
    CHECK(wh.kmd_reserved == 185);
    const auto& bh = kmd::tlb_geometry(hal::Arch::Blackhole);
    CHECK(bh.total == 210);
    CHECK(bh.config_stride == 12);
    CHECK(kmd::class_of_index(bh, 201).size == 2 * kmd::kMiB);
    CHECK(kmd::class_of_index(bh, 202).size == 4 * kmd::kGiB);
    CHECK(kmd::window_class(bh, kmd::kMiB) == nullptr);
}

TEST_CASE("kmd ABI: Wormhole TLB encodings put every field where the reference says",
          "[pcie][kmd]") {
    kmd::NocTlbConfig c{};
    c.x_end = 0x2A;
    c.y_end = 0x15;
    c.x_start = 0x33;
    c.y_start = 0x0C;
    c.noc = 1;
    c.mcast = 1;
    c.ordering = 2;
    c.linked = 1;
    c.static_vc = 1;
    struct Case {
        uint64_t size;
        uint32_t at;  // where x_end starts (36 - log2 size)
    };
    for (const Case k : {Case{kmd::kMiB, 16}, Case{2 * kmd::kMiB, 15}, Case{16 * kmd::kMiB, 12}}) {
        c.addr = 0xA'BC00'0000 & ~(k.size - 1);
        const auto w = kmd::encode_tlb(hal::Arch::WormholeB0, k.size, c);
        INFO("window " << k.size);
        REQUIRE(w.size() == 2);
        CHECK(bits(w, 0, k.at) == c.addr / k.size);
        CHECK(bits(w, k.at + 0, 6) == 0x2A);
        CHECK(bits(w, k.at + 6, 6) == 0x15);
        CHECK(bits(w, k.at + 12, 6) == 0x33);
        CHECK(bits(w, k.at + 18, 6) == 0x0C);
        CHECK(bits(w, k.at + 24, 1) == 1);  // noc
        CHECK(bits(w, k.at + 25, 1) == 1);  // mcast
        CHECK(bits(w, k.at + 26, 2) == 2);  // ordering
        CHECK(bits(w, k.at + 28, 1) == 1);  // linked
        CHECK(bits(w, k.at + 29, 1) == 1);  // static vc
        CHECK(bits(w, k.at + 30, 64 - k.at - 30) == 0);
    }
    // The reference's absolute positions for 1 MiB windows: y_start at 34, noc at 40, linked at 44.
    const auto w1 = kmd::encode_tlb(hal::Arch::WormholeB0, kmd::kMiB, c);
    CHECK(bits(w1, 34, 6) == 0x0C);
    CHECK(bits(w1, 40, 1) == 1);
    CHECK(bits(w1, 44, 1) == 1);
}

TEST_CASE("kmd ABI: Blackhole TLB encodings put every field where the reference says",
          "[pcie][kmd]") {
    kmd::NocTlbConfig c{};
    c.x_end = 0x11;
    c.y_end = 0x2B;
    c.x_start = 0x05;
    c.y_start = 0x3F;
    c.noc = 1;
    c.mcast = 1;
    c.ordering = 3;
    c.linked = 1;
    c.static_vc = 5;
    c.addr = 0x7'0000'0000'0000ull;
    auto w = kmd::encode_tlb(hal::Arch::Blackhole, 2 * kmd::kMiB, c);
    REQUIRE(w.size() == 3);
    CHECK(bits(w, 0, 43) == c.addr >> 21);
    CHECK(bits(w, 43, 6) == 0x11);
    CHECK(bits(w, 49, 6) == 0x2B);
    CHECK(bits(w, 55, 6) == 0x05);
    CHECK(bits(w, 61, 6) == 0x3F);
    CHECK(bits(w, 67, 2) == 1);
    CHECK(bits(w, 69, 1) == 1);
    CHECK(bits(w, 70, 2) == 3);
    CHECK(bits(w, 72, 1) == 1);
    CHECK(bits(w, 73, 1) == 1);  // use_static_vc
    CHECK(bits(w, 74, 1) == 0);  // stream_header
    CHECK(bits(w, 75, 3) == 5);
    CHECK(bits(w, 78, 18) == 0);
    c.addr = 0x3'0000'0000ull;
    w = kmd::encode_tlb(hal::Arch::Blackhole, 4 * kmd::kGiB, c);
    CHECK(bits(w, 0, 32) == 3);
    CHECK(bits(w, 32, 6) == 0x11);
    CHECK(bits(w, 38, 6) == 0x2B);
    CHECK(bits(w, 44, 6) == 0x05);
    CHECK(bits(w, 50, 6) == 0x3F);
    CHECK(bits(w, 56, 2) == 1);
    CHECK(bits(w, 58, 1) == 1);
    CHECK(bits(w, 59, 2) == 3);
    CHECK(bits(w, 61, 1) == 1);
    CHECK(bits(w, 62, 1) == 1);
    CHECK(bits(w, 64, 3) == 5);
}

TEST_CASE("kmd ABI: the driver's checks on a TLB configuration", "[pcie][kmd]") {
    const auto wh = hal::Arch::WormholeB0, bh = hal::Arch::Blackhole;
    CHECK_FALSE(kmd::check_tlb_config(wh, 2 * kmd::kMiB, unicast(0x200000, 9, 0)));
    CHECK_THAT(*kmd::check_tlb_config(wh, 2 * kmd::kMiB, unicast(0x100000, 9, 0)),
               Contains("not aligned"));
    CHECK_THAT(*kmd::check_tlb_config(wh, 3 * kmd::kMiB, unicast(0, 9, 0)),
               Contains("no TLB window"));
    CHECK_THAT(*kmd::check_tlb_config(wh, 2 * kmd::kMiB, unicast(uint64_t{1} << 36, 9, 0)),
               Contains("36-bit"));
    CHECK_THAT(*kmd::check_tlb_config(wh, 2 * kmd::kMiB, unicast(0, 64, 0)), Contains("6-bit"));
    auto c = unicast(0, 1, 1);
    c.noc = 2;
    CHECK_THAT(*kmd::check_tlb_config(bh, 2 * kmd::kMiB, c), Contains("NOC 2"));
    c = unicast(0, 1, 1);
    c.ordering = kmd::kOrderingPostedStrict;
    CHECK_FALSE(kmd::check_tlb_config(bh, 2 * kmd::kMiB, c));
    CHECK_THAT(*kmd::check_tlb_config(wh, 2 * kmd::kMiB, c), Contains("Blackhole unicast only"));
}

TEST_CASE("kmd ABI: the host's encoder and the model's decoder agree on every window class",
          "[pcie][kmd][sim]") {
    for (const auto arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
        auto sim = model(arch);
        fabric::SimKmdPort port(sim);
        sim::PcieTlb& tlb = port.pcie_tlb(0);
        const auto& g = kmd::tlb_geometry(arch);
        REQUIRE(tlb.window_count() == g.total);
        REQUIRE(tlb.config_stride() == g.config_stride);
        std::mt19937_64 rng(7);
        for (const auto& cls : g.classes) {
            for (int n = 0; n < 50; ++n) {
                const uint32_t index = cls.first + static_cast<uint32_t>(rng() % cls.count);
                REQUIRE(tlb.window(index).size == cls.size);
                REQUIRE(tlb.window(index).bar_offset ==
                        cls.bar_offset + (index - cls.first) * cls.size);
                kmd::NocTlbConfig c{};
                const uint64_t limit =
                    arch == hal::Arch::WormholeB0 ? (uint64_t{1} << 36) : (uint64_t{1} << 48);
                c.addr = (rng() % limit) & ~(cls.size - 1);
                c.x_end = static_cast<uint16_t>(rng() % 64);
                c.y_end = static_cast<uint16_t>(rng() % 64);
                c.x_start = static_cast<uint16_t>(rng() % 64);
                c.y_start = static_cast<uint16_t>(rng() % 64);
                c.noc = static_cast<uint8_t>(rng() % 2);
                c.mcast = static_cast<uint8_t>(rng() % 2);
                c.ordering = static_cast<uint8_t>(rng() % 3);
                c.linked = static_cast<uint8_t>(rng() % 2);
                c.static_vc =
                    static_cast<uint8_t>(arch == hal::Arch::WormholeB0 ? rng() % 2 : rng() % 8);
                const auto words = kmd::encode_tlb(arch, cls.size, c);
                for (size_t k = 0; k < words.size(); ++k)
                    REQUIRE(tlb.bar0_write32(
                        sim::PcieTlb::kConfigBase + index * g.config_stride + 4 * k, words[k]));
                const auto d = tlb.config(index);
                INFO("arch " << static_cast<int>(arch) << " window " << index);
                CHECK(d.addr == c.addr);
                CHECK(d.x_end == c.x_end);
                CHECK(d.y_end == c.y_end);
                CHECK(d.x_start == c.x_start);
                CHECK(d.y_start == c.y_start);
                CHECK(d.noc == c.noc);
                CHECK(d.mcast == (c.mcast != 0));
                CHECK(d.ordering == c.ordering);
                CHECK(d.linked == (c.linked != 0));
                CHECK(d.static_vc == c.static_vc);
            }
        }
    }
}

// ---- the simulated driver's ABI behaviour
// --------------------------------------------------------

TEST_CASE("sim kmd: device info, driver info and discovery", "[pcie][sim]") {
    auto sim = model(hal::Arch::Blackhole, 2);
    fabric::SimKmdPort port(sim);
    CHECK(port.list_devices() == std::vector<uint32_t>{0, 1});
    auto f = port.open(1);
    kmd::GetDeviceInfo info{};
    info.in.output_size_bytes = sizeof(info.out);
    REQUIRE(f->ioctl(kmd::kGetDeviceInfo, &info) == 0);
    CHECK(info.out.vendor_id == kmd::kPciVendorId);
    CHECK(info.out.device_id == kmd::kDeviceIdBlackhole);
    CHECK(info.out.output_size_bytes == sizeof(info.out));
    // A short output size gets only that many bytes, the rest cleared.
    kmd::GetDeviceInfo short_info{};
    std::memset(&short_info.out, 0xFF, sizeof short_info.out);
    short_info.in.output_size_bytes = 8;
    REQUIRE(f->ioctl(kmd::kGetDeviceInfo, &short_info) == 0);
    CHECK(short_info.out.device_id == kmd::kDeviceIdBlackhole);
    CHECK(short_info.out.bus_dev_fn == 0);
    CHECK(f->ioctl(kmd::kPinPages, &info) == -ENOTTY);
    const auto devs = fabric::discover_devices(port);
    REQUIRE(devs.size() == 2);
    CHECK(devs[0].arch == hal::Arch::Blackhole);
    CHECK(devs[1].bdf == "0000:02:00.0");
    CHECK(devs[0].driver_api == 2);
    CHECK(devs[0].error.empty());
    CHECK_THROWS_AS(port.open(2), fabric::Error);
}

TEST_CASE("sim kmd: TLB allocation, ownership, exhaustion and bad configurations", "[pcie][sim]") {
    auto sim = model(hal::Arch::WormholeB0);
    fabric::SimKmdPort port(sim);
    auto f = port.open(0);
    auto g = port.open(0);
    kmd::AllocateTlb a{};
    a.in.size = 3 * kmd::kMiB;
    CHECK(f->ioctl(kmd::kAllocateTlb, &a) == -EINVAL);  // not exactly a window size
    a.in.size = 16 * kmd::kMiB;
    std::vector<uint32_t> ids;
    while (f->ioctl(kmd::kAllocateTlb, &a) == 0) ids.push_back(a.out.id);
    CHECK(ids.size() == 19);  // 20 windows of 16 MiB, the driver keeps the last
    CHECK(std::find(ids.begin(), ids.end(), 185u) == ids.end());
    CHECK(f->ioctl(kmd::kAllocateTlb, &a) == -ENOMEM);
    kmd::FreeTlb fr{};
    fr.in.id = ids[0];
    CHECK(g->ioctl(kmd::kFreeTlb, &fr) == -EINVAL);  // another file's window
    kmd::ConfigureTlb c{};
    c.in.id = ids[0];
    c.in.config = unicast(0, 9, 0);
    CHECK(g->ioctl(kmd::kConfigureTlb, &c) == -EINVAL);
    int err = 0;
    a.in.size = 16 * kmd::kMiB;
    CHECK(g->map((uint64_t{kmd::kMmapTlbUc} << 36) + 0xB000000, 16 * kmd::kMiB, err) == nullptr);
    CHECK(err == EINVAL);
    c.in.config = unicast(0x100000, 9, 0);  // not aligned to 16 MiB
    CHECK(f->ioctl(kmd::kConfigureTlb, &c) == -EINVAL);
    c.in.config = unicast(0, 9, 70);
    CHECK(f->ioctl(kmd::kConfigureTlb, &c) == -EINVAL);
    CHECK(port.configure_calls() == 0);
    CHECK(f->ioctl(kmd::kFreeTlb, &fr) == 0);
    CHECK(port.windows_in_use(0) == 18);
    f.reset();  // closing the file frees its windows
    CHECK(port.windows_in_use(0) == 0);
}

TEST_CASE("sim kmd: a window aimed at a core the model does not have faults, nothing written",
          "[pcie][sim]") {
    auto sim = model(hal::Arch::WormholeB0);
    fabric::SimKmdPort port(sim);
    auto f = port.open(0);
    const Window w = window_2m(*f, false);
    const auto& m = w.map;
    kmd::ConfigureTlb c{};
    c.in.id = w.id;
    c.in.config = unicast(0, 0, 0);  // a DRAM port: not a modelled core
    REQUIRE(f->ioctl(kmd::kConfigureTlb, &c) == 0);
    const auto msg = ft::expect_error(ErrorCategory::Device, [&] { m->write32(0x100, 1); });
    CHECK_THAT(msg, Contains("no modelled core at 0-0"));
    // The raw register reads back the encoding the driver wrote.
    const auto cfg = port.pcie_tlb(0).config(w.id);
    CHECK(cfg.x_end == 0);
    CHECK(cfg.ordering == kmd::kOrderingStrict);
    // Through NOC1 the mirrored coordinate of eth core 9-0 is 0-11 (10x12 grid).
    c.in.config = unicast(0, 0, 11);
    c.in.config.noc = 1;
    REQUIRE(f->ioctl(kmd::kConfigureTlb, &c) == 0);
    m->write32(0x20000, 0xC0FFEE);
    CHECK(sim->read32({0, {9, 0}}, 0x20000) == 0xC0FFEE);
    // BAR0: the config registers and the windows through it.
    int err = 0;
    auto bar = f->map(0, kmd::kBar0Size, err);
    REQUIRE(bar);
    const uint64_t reg = kmd::kTlbConfigBase + w.id * 8;
    const auto words = kmd::encode_tlb(hal::Arch::WormholeB0, 2 * kmd::kMiB, c.in.config);
    CHECK(bar->read32(reg) == words[0]);
    CHECK(bar->read32(reg + 4) == words[1]);
    const uint64_t win = kmd::tlb_geometry(hal::Arch::WormholeB0).classes[1].bar_offset +
                         (w.id - 156) * 2 * kmd::kMiB;
    CHECK(bar->read32(win + 0x20000) == 0xC0FFEE);
}

// ---- PcieDevice over the simulated driver
// ---------------------------------------------------------

TEST_CASE("PcieDevice (sim): L1 read/write of every size and alignment, window crossings included",
          "[pcie][sim]") {
    struct Arch {
        hal::Arch arch;
        uint64_t window;
    };
    for (const Arch k :
         {Arch{hal::Arch::WormholeB0, kmd::kMiB}, Arch{hal::Arch::WormholeB0, 2 * kmd::kMiB},
          Arch{hal::Arch::Blackhole, 2 * kmd::kMiB}}) {
        fabric::PcieDeviceOptions o;
        o.window_size = k.window;
        auto r = rig(k.arch, o);
        const auto soc = soc_of(k.arch);
        const CoreLocation worker{0, soc.cores(fabric::CoreType::Worker).front()};
        const CoreLocation eth{0, soc.eth_core(0)};
        INFO("arch " << static_cast<int>(k.arch) << " window " << k.window);
        uint32_t seed = 1;
        for (const CoreLocation& core : {worker, eth}) {
            const uint64_t l1 = soc.l1_size(core.core);
            std::vector<uint64_t> starts = {0, 1, 2, 3, 4, 5, 0x1000 - 1, l1 - 64, l1 - 7};
            if (l1 > k.window) {
                for (uint64_t d : {1, 2, 3, 4, 5, 16}) starts.push_back(k.window - d);
            }
            for (const uint64_t start : starts) {
                for (const size_t len : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{5},
                                         size_t{7}, size_t{8}, size_t{33}, size_t{4099}}) {
                    if (start + len > l1) continue;
                    INFO(core.str() << " start " << start << " len " << len);
                    // Surrounding bytes known, then the write, then both views compared.
                    const uint64_t lo = start >= 8 ? start - 8 : 0;
                    const uint64_t hi = std::min<uint64_t>(l1, start + len + 8);
                    const auto before = pattern(hi - lo, seed++);
                    r.sim->write(core, lo, before);
                    const auto data = pattern(len, seed++);
                    r.dev->write(core, start, data);
                    std::vector<uint8_t> via_model(hi - lo);
                    r.sim->read(core, lo, via_model);
                    auto expect = before;
                    std::copy(data.begin(), data.end(), expect.begin() + (start - lo));
                    REQUIRE(via_model == expect);
                    std::vector<uint8_t> back(len);
                    r.dev->read(core, start, back);
                    REQUIRE(back == data);
                }
            }
        }
        // A 64 KiB block across the first window edge (or the whole eth L1 on one window).
        const uint64_t at = std::min<uint64_t>(k.window, soc.l1_size(worker.core)) - 0x8000 + 3;
        const auto big = pattern(0x10000 - 8, 99);
        if (at + big.size() <= soc.l1_size(worker.core)) {
            r.dev->write(worker, at, big);
            std::vector<uint8_t> m(big.size());
            r.sim->read(worker, at, m);
            CHECK(m == big);
        }
        CHECK(r.dev->read32(worker, 0x100) == r.sim->read32(worker, 0x100));
    }
}

TEST_CASE("PcieDevice (sim): a window is reused while it fits and reprogrammed when it does not",
          "[pcie][sim]") {
    fabric::PcieDeviceOptions o;
    o.window_size = kmd::kMiB;
    o.windows_per_chip = 2;
    auto r = rig(hal::Arch::WormholeB0, o);
    const CoreLocation w{0, {1, 1}};
    const uint64_t c0 = r.dev->tlb_configures();
    r.dev->write32(w, 0x100, 1);
    r.dev->write32(w, 0x200, 2);
    (void)r.dev->read32(w, 0x300);
    CHECK(r.dev->tlb_configures() == c0 + 1);  // one window covers [0, 1 MiB)
    r.dev->write32(w, 0x100000, 3);            // the second MiB: a second window
    CHECK(r.dev->tlb_configures() == c0 + 2);
    r.dev->write32(w, 0x104, 4);  // still mapped
    CHECK(r.dev->tlb_configures() == c0 + 2);
    r.dev->write32({0, {2, 1}}, 0, 5);  // a third target: the least recently used is reprogrammed
    CHECK(r.dev->tlb_configures() == c0 + 3);
    r.dev->write32(w, 0x108, 6);  // [0, 1 MiB) of 1-1 was kept (used last)
    CHECK(r.dev->tlb_configures() == c0 + 3);
    CHECK(r.port->windows_in_use(0) == 2);
    CHECK(r.sim->read32(w, 0x100) == 1);
    CHECK(r.sim->read32(w, 0x100000) == 3);
    CHECK(r.sim->read32({0, {2, 1}}, 0) == 5);
    // An access across the edge needs both halves.
    std::vector<uint8_t> b = pattern(64, 5);
    r.dev->write(w, 0x100000 - 32, b);
    std::vector<uint8_t> m(64);
    r.sim->read(w, 0x100000 - 32, m);
    CHECK(m == b);
}

TEST_CASE("PcieDevice (sim): many cores, every worker and eth core of a chip", "[pcie][sim]") {
    for (const auto arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
        fabric::PcieDeviceOptions o;
        o.discover_links = false;
        auto r = rig(arch, o, 2);
        const auto soc = soc_of(arch);
        std::vector<CoreLocation> cores;
        for (uint32_t chip = 0; chip < 2; ++chip) {
            for (const auto t : {fabric::CoreType::Worker, fabric::CoreType::Eth})
                for (const auto& c : soc.cores(t)) cores.push_back({chip, c});
        }
        INFO("arch " << static_cast<int>(arch) << ", " << cores.size() << " cores");
        CHECK(r.dev->chip_count() == 2);
        for (size_t i = 0; i < cores.size(); ++i)
            r.dev->write(cores[i], 0x8000 + 4 * (i % 7), pattern(256, static_cast<uint32_t>(i)));
        for (size_t i = 0; i < cores.size(); ++i) {
            std::vector<uint8_t> m(256), p(256);
            r.sim->read(cores[i], 0x8000 + 4 * (i % 7), m);
            r.dev->read(cores[i], 0x8000 + 4 * (i % 7), p);
            REQUIRE(m == pattern(256, static_cast<uint32_t>(i)));
            REQUIRE(p == m);
        }
    }
}

TEST_CASE("PcieDevice (sim): bad input is refused with a clear error and nothing is written",
          "[pcie][sim]") {
    auto r = rig(hal::Arch::WormholeB0);
    auto& d = *r.dev;
    const CoreLocation w{0, {1, 1}};
    const uint32_t l1 = soc_of(hal::Arch::WormholeB0).worker_l1_size();
    std::vector<uint8_t> zeros(64, 0), buf(64, 0xAB);
    CHECK_THAT(ft::expect_error(ErrorCategory::BadInput,
                                [&] {
                                    d.write({0, {20, 20}}, 0, buf);
                                }),
               Contains("no core at 20-20"));
    CHECK_THAT(ft::expect_error(ErrorCategory::Unsupported,
                                [&] {
                                    d.write({0, {0, 0}}, 0, buf);
                                }),
               Contains("'dram' core"));
    CHECK_THAT(ft::expect_error(ErrorCategory::BadInput,
                                [&] {
                                    d.write({5, {1, 1}}, 0, buf);
                                }),
               Contains("chip 5 does not exist"));
    // Across the end of L1: refused before anything is written.
    CHECK_THAT(ft::expect_error(ErrorCategory::Device, [&] { d.write(w, l1 - 32, buf); }),
               Contains("outside its L1"));
    std::vector<uint8_t> tail(32);
    r.sim->read(w, l1 - 32, tail);
    CHECK(tail == std::vector<uint8_t>(32, 0));
    CHECK_THAT(ft::expect_error(ErrorCategory::Device, [&] { d.read(w, 0x800000, buf); }),
               Contains("outside its L1"));
    CHECK_THAT(ft::expect_error(ErrorCategory::BadInput, [&] { d.write32(w, 0x102, 1); }),
               Contains("unaligned"));
    CHECK_THAT(
        ft::expect_error(ErrorCategory::BadInput,
                         [&] { d.write(w, hc::kSoftResetReg + 1, std::vector<uint8_t>(4)); }),
        Contains("whole aligned 32-bit words"));
    // A register the tile does not decode: the model's refusal comes back as a device error.
    CHECK_THAT(ft::expect_error(ErrorCategory::Device, [&] { d.write32(w, 0xFFEF0000, 1); }),
               Contains("faulted"));
    // Window sizes the arch does not have.
    fabric::PcieDeviceOptions o;
    o.window_size = kmd::kMiB;
    auto sim = model(hal::Arch::Blackhole);
    CHECK_THAT(ft::expect_error(ErrorCategory::BadInput,
                                [&] {
                                    fabric::PcieDevice(std::make_shared<fabric::SimKmdPort>(sim),
                                                       soc_of(hal::Arch::Blackhole), o);
                                }),
               Contains("no 1024 KiB TLB window"));
    // A device of the other arch than the descriptor.
    CHECK_THAT(ft::expect_error(ErrorCategory::Device,
                                [&] {
                                    fabric::PcieDevice(std::make_shared<fabric::SimKmdPort>(sim),
                                                       soc_of(hal::Arch::WormholeB0));
                                }),
               Contains("is blackhole but the SoC descriptor"));
    // Asking for a device node that is not there.
    fabric::PcieDeviceOptions o2;
    o2.ordinals = std::vector<uint32_t>{3};
    CHECK_THAT(ft::expect_error(ErrorCategory::BadInput,
                                [&] {
                                    fabric::PcieDevice(std::make_shared<fabric::SimKmdPort>(sim),
                                                       soc_of(hal::Arch::Blackhole), o2);
                                }),
               Contains("does not exist"));
}

TEST_CASE("PcieDevice (sim): soft reset through the window", "[pcie][sim]") {
    for (const auto arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
        auto r = rig(arch);
        const CoreLocation e{0, soc_of(arch).eth_core(1)};
        CHECK(r.dev->read32(e, hc::kSoftResetReg) == hc::kSoftResetAllRiscs);
        CHECK(r.dev->core_status(e).state == fabric::CoreRunState::Reset);
        r.dev->deassert_risc_reset(e, hc::kSoftResetErisc1);
        CHECK(r.sim->read32(e, hc::kSoftResetReg) ==
              (hc::kSoftResetAllRiscs & ~hc::kSoftResetErisc1));
        r.dev->assert_risc_reset(e, hc::kSoftResetErisc1);
        CHECK(r.sim->read32(e, hc::kSoftResetReg) == hc::kSoftResetAllRiscs);
        r.dev->write32(e, hc::kErisc0ResetPcReg, 0x9040);
        CHECK(r.sim->read32(e, hc::kErisc0ResetPcReg) == 0x9040);
        CHECK(r.dev->launch_method(e) == fabric::LaunchMethod::ResetPc);
    }
}

TEST_CASE("PcieDevice (sim): hello.elf launched bare metal exits 0, same L1 as through SimDevice",
          "[pcie][sim][launch]") {
    for (const auto arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
        const auto elf = firmware(arch, "hello.elf");
        if (!elf) {
            WARN("skipped: hello.elf is not built yet (build the firmware)");
            return;
        }
        INFO("arch " << static_cast<int>(arch));
        const auto soc = soc_of(arch);
        const auto rules = fabric::erisc_placement(hal::arch_map(arch), soc.eth_l1_size());
        const CoreLocation core{0, soc.eth_core(2)};
        fabric::PcieDeviceOptions o;
        o.discover_links = false;
        auto r = rig(arch, o);
        fabric::SimDevice direct(soc, arch, 1);

        const fabric::LaunchTarget tp{core, &*elf, rules};
        const auto mp = fabric::load_many(*r.dev, std::span(&tp, 1));
        const auto md = fabric::load_many(direct, std::span(&tp, 1));
        std::vector<uint8_t> l1p(soc.eth_l1_size()), l1d(soc.eth_l1_size());
        r.sim->read(core, 0, l1p);
        direct.read(core, 0, l1d);
        CHECK(l1p == l1d);
        // (A register read clocks the tile once in the model: read it on both sides.)
        CHECK(r.sim->read32(core, hc::kErisc0ResetPcReg) == elf->entry());
        CHECK(direct.read32(core, hc::kErisc0ResetPcReg) == elf->entry());

        fabric::start_many(*r.dev, std::span(&tp, 1), mp);
        fabric::start_many(direct, std::span(&tp, 1), md);
        const auto rp = fabric::wait_many(*r.dev, std::span(&tp, 1), mp).front();
        const auto rd = fabric::wait_many(direct, std::span(&tp, 1), md).front();
        CHECK(rp.method == fabric::LaunchMethod::ResetPc);
        REQUIRE(rp.outcome == fabric::LaunchOutcome::Exited);
        CHECK(rp.status.exit_status == 0);
        CHECK(rd.outcome == fabric::LaunchOutcome::Exited);
        CHECK(rp.cycles == rd.cycles);  // the same accesses in the same order: the same run
        CHECK_THAT(r.sim->console(core), Contains("sum of the first 100 primes = 24133 (correct)"));
        r.sim->read(core, 0, l1p);
        direct.read(core, 0, l1d);
        CHECK(l1p == l1d);
        CHECK(r.dev->core_status(core).state == fabric::CoreRunState::Exited);
    }
}

TEST_CASE("PcieDevice (sim): a trapping kernel is reported as trapped with its cause",
          "[pcie][sim][launch]") {
    const auto arch = hal::Arch::WormholeB0;
    const auto soc = soc_of(arch);
    // An illegal instruction at the firmware base.
    const auto img = fabric::ElfImage::parse(ft::program_elf({0x00000000u}, 0x9040), "trap.elf");
    fabric::PcieDeviceOptions o;
    o.discover_links = false;
    auto r = rig(arch, o);
    const CoreLocation core{0, soc.eth_core(0)};
    const auto res = fabric::launch(*r.dev, core, img,
                                    fabric::erisc_placement(hal::kWormholeB0, soc.eth_l1_size()));
    REQUIRE(res.outcome == fabric::LaunchOutcome::Trapped);
    CHECK(res.status.trap_cause == 2);
    CHECK(res.status.trap_name == "illegal instruction");
    CHECK(res.status.trap_pc == 0x9040);
}

// The console console_lines.elf (firmware/demo) prints: 40 numbered lines.
std::string console_lines_text() {
    std::string s;
    for (int line = 1; line <= 40; ++line) s += fmt::format("console line {:02} of 40: ok\n", line);
    return s;
}

TEST_CASE("PcieDevice without the sim-control block: exit code and console through the mailbox",
          "[pcie][sim][launch][exit_mailbox]") {
    for (const auto arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
        const auto lines = firmware(arch, "console_lines.elf");
        const auto hello = firmware(arch, "hello.elf");
        if (!lines || !hello) {
            WARN("skipped: console_lines.elf / hello.elf are not built yet (build the firmware)");
            return;
        }
        INFO("arch " << fabric::arch_name(arch));
        const auto soc = soc_of(arch);
        const auto rules = fabric::erisc_placement(hal::arch_map(arch), soc.eth_l1_size());
        auto sim = model(arch);
        // As silicon: no run-state words, so the device knows a core's end from its mailbox only.
        auto port = std::make_shared<fabric::SimKmdPort>(sim, /*sim_control=*/false);
        fabric::PcieDeviceOptions o;
        o.discover_links = false;
        fabric::PcieDevice dev(port, soc, o);
        const CoreLocation core{0, soc.eth_core(1)};

        const auto r = fabric::launch(dev, core, *lines, rules);
        REQUIRE(r.outcome == fabric::LaunchOutcome::Exited);
        CHECK(r.status.exit_status == 42);
        CHECK(r.mailbox.header.state == fabric::ExitMailboxState::Exited);
        CHECK(r.mailbox.header.exit_code == 42);
        // The model's own console (its sim-control block) has every byte; the ring the last 512.
        const std::string all = console_lines_text();
        REQUIRE(all.size() == 1040);
        CHECK(sim->console(core) == all);
        CHECK(r.mailbox.header.written == 1040);
        CHECK(r.mailbox.console == all.substr(1040 - protocol::kConsoleRingBytes));
        CHECK(r.mailbox.console_lost == 1040 - protocol::kConsoleRingBytes);
        const auto st = dev.core_status(core);
        CHECK(st.state == fabric::CoreRunState::Exited);
        CHECK(st.exit_status == 42);

        // The next run on the same core: the old report is cleared, the new one read whole.
        const auto h = fabric::launch(dev, core, *hello, rules);
        REQUIRE(h.outcome == fabric::LaunchOutcome::Exited);
        CHECK(h.status.exit_status == 0);
        CHECK(h.mailbox.console_lost == 0);
        CHECK(h.mailbox.console == sim->console(core).substr(all.size()));
        CHECK_THAT(h.mailbox.console, Contains("sum of the first 100 primes = 24133 (correct)"));
    }
}

TEST_CASE(
    "PcieDevice without the sim-control block: a firmware without the runtime is not seen "
    "to end",
    "[pcie][sim][launch][exit_mailbox]") {
    // A hand-made image that writes the sim-control block only: the model halts it, but a device
    // without that block sees neither an exit nor a mailbox, as on silicon. (The model's clock
    // then stops, which the launch reports; silicon's would run on to the cycle budget.)
    const auto arch = hal::Arch::WormholeB0;
    const auto soc = soc_of(arch);
    const auto img = fabric::ElfImage::parse(
        ft::program_elf(ft::console_exit_program("no mailbox\n", 5), 0x9040), "bare.elf");
    auto sim = model(arch);
    fabric::PcieDeviceOptions o;
    o.discover_links = false;
    fabric::PcieDevice dev(std::make_shared<fabric::SimKmdPort>(sim, false), soc, o);
    const CoreLocation core{0, soc.eth_core(0)};
    CHECK(ft::expect_error(ErrorCategory::Device,
                           [&] {
                               fabric::launch(
                                   dev, core, img,
                                   fabric::erisc_placement(hal::kWormholeB0, soc.eth_l1_size()));
                           }) ==
          "pcie wormhole_b0 (1 chip) via simulated /dev/tenstorrent over sim wormhole_b0 (1 "
          "chip): chip 0 core 9-0 has not ended (state unknown) but the device clock does "
          "not advance");
    CHECK(sim->console(core) == "no mailbox\n");  // it did run
    const auto box = fabric::read_exit_mailbox(dev, core);
    CHECK(box.header.state == fabric::ExitMailboxState::NotSetUp);
    CHECK(box.console.empty());
    CHECK(dev.core_status(core).state == fabric::CoreRunState::Unknown);
}

TEST_CASE("PcieDevice (sim): a Blackhole image in the router window starts at its reset PC",
          "[pcie][sim][launch]") {
    const auto arch = hal::Arch::Blackhole;
    const auto soc = soc_of(arch);
    const uint32_t base = hal::kBlackhole.router_fw.base;
    const auto img = fabric::ElfImage::parse(
        ft::program_elf(ft::console_exit_program("router window\n", 11), base), "router.elf");
    fabric::PcieDeviceOptions o;
    o.discover_links = false;
    auto r = rig(arch, o);
    const CoreLocation core{0, soc.eth_core(1)};
    const auto res = fabric::launch(*r.dev, core, img,
                                    fabric::erisc_placement(hal::kBlackhole, soc.eth_l1_size()));
    CHECK(res.method == fabric::LaunchMethod::ResetPc);
    REQUIRE(res.outcome == fabric::LaunchOutcome::Exited);
    CHECK(res.status.exit_status == 11);
    CHECK(r.sim->console(core) == "router window\n");
    CHECK(r.sim->read32(core, hc::kErisc0ResetPcReg) == 0x15740);
}

// An n300 in the model with the Wormhole base firmware: chip 0 PCIe-attached, chip 1 behind it.
struct N300 {
    fabric::SocDescriptor soc = soc_of(hal::Arch::WormholeB0);
    std::shared_ptr<fabric::SimDevice> sim;
    std::shared_ptr<fabric::SimKmdPort> port;
};
std::optional<N300> n300_with_base_firmware() {
    const auto fw = firmware(hal::Arch::WormholeB0, "erisc_base.elf");
    if (!fw) return std::nullopt;
    N300 n;
    fabric::SimDeviceOptions so;
    so.cluster = fabric::ClusterDescriptor::load_file(kSocDir + "/n300_cluster.yaml");
    so.wh_base_firmware = *fw;
    n.sim = std::make_shared<fabric::SimDevice>(n.soc, hal::Arch::WormholeB0, std::move(so));
    n.port = std::make_shared<fabric::SimKmdPort>(n.sim);
    return n;
}

TEST_CASE("PcieDevice (sim): n300 with base firmware: discovery, launch flag",
          "[pcie][sim][launch]") {
    auto n = n300_with_base_firmware();
    if (!n) {
        WARN("skipped: erisc_base.elf is not built yet (build the firmware)");
        return;
    }
    const auto& soc = n->soc;
    CHECK(n->port->list_devices() == std::vector<uint32_t>{0});  // only chip 0 is PCIe-attached
    fabric::PcieDevice dev(n->port, soc);
    const auto& cd = dev.cluster_descriptor();
    CHECK(dev.chip_count() == 2);
    CHECK(cd.chip_count() == 2);
    CHECK(cd.is_mmio(0));
    CHECK_FALSE(cd.is_mmio(1));
    REQUIRE(cd.connections().size() == 2);
    CHECK(cd.peer({0, 8}) == fabric::EthPortRef{1, 0});
    CHECK(cd.peer({0, 9}) == fabric::EthPortRef{1, 1});
    CHECK_THAT(dev.description(), Contains("1 remote"));

    // The launch flag path: an app that stores a word and returns 42 to the base firmware.
    const CoreLocation c{0, soc.eth_core(0)};
    CHECK(dev.launch_method(c) == fabric::LaunchMethod::LaunchFlag);
    simtest::Asm a(bfw::kAppBase);
    a.store(0x20000, 0x5EED).ret(42);
    const auto img =
        fabric::ElfImage::parse(ft::program_elf(a.program().words(), a.base()), "app.elf");
    const auto res =
        fabric::launch(dev, c, img, fabric::erisc_placement(hal::kWormholeB0, soc.eth_l1_size()));
    CHECK(res.method == fabric::LaunchMethod::LaunchFlag);
    REQUIRE(res.outcome == fabric::LaunchOutcome::Exited);
    CHECK(res.returned_to_base_firmware);
    CHECK(res.status.exit_status == 42);
    CHECK(n->sim->read32(c, 0x20000) == 0x5EED);
    CHECK(dev.read32(c, bfw::kLaunchAppFlag) == 0);
}

TEST_CASE("PcieDevice (sim): the n300's remote chip through the gateway's routing-firmware queues",
          "[pcie][sim][remote]") {
    auto n = n300_with_base_firmware();
    if (!n) {
        WARN("skipped: erisc_base.elf is not built yet (build the firmware)");
        return;
    }
    fabric::PcieDevice dev(n->port, n->soc);
    REQUIRE(dev.chip_count() == 2);
    const CoreLocation worker{1, {3, 5}};
    const CoreLocation eth{1, n->soc.eth_core(1)};

    // The remote eth core's base firmware beats: read over the link.
    CHECK((dev.read32(eth, bfw::kHeartbeat) & bfw::kHeartbeatSignatureMask) ==
          bfw::kHeartbeatSignature);

    // A worker nothing has touched yet: there, as on silicon (the model creates it on the NoC's
    // first access to it).
    const CoreLocation fresh{1, {4, 5}};
    REQUIRE_FALSE(n->sim->cluster().chip(1).instantiated(4, 5));
    const auto first = pattern(64, 99);
    dev.write(fresh, 0x1000, first);
    std::vector<uint8_t> landed(first.size());
    n->sim->read(fresh, 0x1000, landed);
    CHECK(landed == first);

    // Every length 1..40 at 8 alignments: blocks, words and read-modify-written edges; the bytes
    // around stay as they were.
    uint32_t seed = 7;
    for (uint64_t off = 0; off < 8; ++off) {
        for (size_t len = 1; len <= 40; len += (len < 12 ? 1 : 7)) {
            const uint64_t start = 0x20000 + 64 * off + off;
            const auto before = pattern(len + 16, seed++);
            n->sim->write(worker, start - 8, before);
            const auto data = pattern(len, seed++);
            dev.write(worker, start, data);
            std::vector<uint8_t> m(before.size());
            n->sim->read(worker, start - 8, m);
            auto expect = before;
            std::copy(data.begin(), data.end(), expect.begin() + 8);
            INFO("offset " << off << " len " << len);
            REQUIRE(m == expect);
            std::vector<uint8_t> back(len);
            dev.read(worker, start, back);
            REQUIRE(back == data);
        }
    }
    // A large transfer: several 1 KiB blocks and an unaligned tail, to a worker and an eth core.
    for (const CoreLocation& core : {worker, eth}) {
        const auto big = pattern(5000 + 6, seed++);
        dev.write(core, 0x30000, big);
        std::vector<uint8_t> m(big.size());
        n->sim->read(core, 0x30000, m);
        CHECK(m == big);
        std::vector<uint8_t> back(big.size());
        dev.read(core, 0x30000, back);
        CHECK(back == big);
    }
    // Each access held the gateway's LOCK_CTL lock (index: its eth channel) and let it go.
    {
        auto other = n->port->open(0);
        fabric::kmd::LockCtl l{};
        l.in.output_size_bytes = sizeof(l.out);
        l.in.flags = fabric::kmd::kLockAcquire;
        l.in.index = 8;  // the gateway chip 0 eth 8, the first idle one
        REQUIRE(other->ioctl(fabric::kmd::kLockCtl, &l) == 0);
        CHECK(l.out.value == 1);
    }  // closed: released
    // Register words: the soft reset and reset PC of a remote core.
    dev.write32(worker, hc::kErisc0ResetPcReg, 0x1234);
    CHECK(n->sim->read32(worker, hc::kErisc0ResetPcReg) == 0x1234);
    CHECK(dev.read32(worker, hc::kSoftResetReg) == hc::kSoftResetAllRiscs);
    CHECK(dev.core_status(worker).state == fabric::CoreRunState::Reset);
}

TEST_CASE("PcieDevice (sim): hello.elf on the n300's remote chip, loaded and run through the link",
          "[pcie][sim][remote][launch]") {
    auto n = n300_with_base_firmware();
    const auto elf = firmware(hal::Arch::WormholeB0, "hello.elf");
    if (!n || !elf) {
        WARN("skipped: erisc_base.elf / hello.elf are not built yet (build the firmware)");
        return;
    }
    fabric::PcieDevice dev(n->port, n->soc);
    const CoreLocation core{1, n->soc.eth_core(2)};
    const auto rules = fabric::erisc_placement(hal::kWormholeB0, n->soc.eth_l1_size());
    const auto res = fabric::launch(dev, core, *elf, rules);
    REQUIRE(res.outcome == fabric::LaunchOutcome::Exited);
    CHECK(res.status.exit_status == 0);
    CHECK_THAT(n->sim->console(core), Contains("sum of the first 100 primes = 24133 (correct)"));
}

TEST_CASE("RemoteAccess: an unreachable chip and a gateway without base firmware are named",
          "[pcie][sim][remote]") {
    namespace ra = protocol::remote_access;
    auto n = n300_with_base_firmware();
    if (!n) {
        WARN("skipped: erisc_base.elf is not built yet (build the firmware)");
        return;
    }
    fabric::PcieDevice dev(n->port, n->soc);
    const auto step = [&](uint64_t c) { n->port->step(c, 1000); };
    const CoreLocation gateway{0, n->soc.eth_core(8)};
    step(20'000);  // the gateway's base firmware boots (and sets up its queues)
    // Chip (5, 0) is neither the gateway's chip nor its link peer: every access fails, named.
    fabric::RemoteAccess far(dev, gateway, ra::pack_coord(5, 0), "chip 5", step);
    const uint32_t errors = dev.read32(gateway, ra::counter_addr(ra::kErrors));
    std::vector<uint8_t> word(4);
    CHECK_THAT(ft::expect_error(ErrorCategory::Device,
                                [&] {
                                    far.read({3, 5}, 0x20000, word);
                                }),
               Contains("destination unreachable"));
    CHECK_THAT(ft::expect_error(ErrorCategory::Device,
                                [&] {
                                    far.write({3, 5}, 0x20000, word);
                                }),
               Contains("destination unreachable"));
    CHECK(dev.read32(gateway, ra::counter_addr(ra::kErrors)) == errors + 2);
    // The gateway's own chip (0, 0) is served there (on a PCIe-attached chip of the model a core
    // exists once the host has touched it).
    fabric::RemoteAccess own(dev, gateway, ra::pack_coord(0, 0), "chip 0", step);
    n->sim->write({0, {3, 5}}, 0x20000, std::vector<uint8_t>(100, 0));
    const auto data = pattern(100, 3);
    own.write({3, 5}, 0x20000, data);
    std::vector<uint8_t> m(data.size());
    n->sim->read({0, {3, 5}}, 0x20000, m);
    CHECK(m == data);

    // A core without base firmware takes nothing from its queue: a bounded timeout, named.
    const CoreLocation bare{0, n->soc.eth_core(5)};
    fabric::RemoteAccess none(dev, bare, ra::pack_coord(1, 0), "chip 1", step, 20'000);
    dev.write32(bare, hc::kSoftResetReg, hc::kSoftResetAllRiscs);  // hold it in reset
    for (uint32_t a = ra::kRequestQueue; a < ra::kResponseQueue + sizeof(ra::CmdQueue); a += 4)
        dev.write32(bare, a, 0);
    CHECK_THAT(ft::expect_error(ErrorCategory::Timeout,
                                [&] {
                                    none.read({3, 5}, 0x20000, word);
                                }),
               Contains("not answering"));
}

TEST_CASE("PcieDevice (sim): the Blackhole base-firmware mailbox times out when nothing answers",
          "[pcie][sim]") {
    auto r = rig(hal::Arch::Blackhole);
    const auto soc = soc_of(hal::Arch::Blackhole);
    const CoreLocation e{0, soc.eth_core(0)};
    // arg0: where ERISC0 is to start, here the router window (hal ArchMap::router_fw).
    const uint32_t router_base = hal::kBlackhole.router_fw.base;
    CHECK_THAT(
        ft::expect_error(ErrorCategory::Timeout, [&] { r.dev->bh_release_core(e, router_base); }),
        Contains("RELEASE_CORE"));
    CHECK(r.sim->read32(e, 0x7D000) == 0xCA110002);  // the request was posted
    CHECK(r.sim->read32(e, 0x7D004) == 0x15740);
    auto w = rig(hal::Arch::WormholeB0);
    ft::expect_error(ErrorCategory::Unsupported, [&] {
        w.dev->bh_release_core({0, {9, 0}}, 0x9040);
    });
}

// ---- the real driver
// ------------------------------------------------------------------------------

TEST_CASE("LinuxKmdPort: an absent device directory lists nothing and PcieDevice says so",
          "[pcie]") {
    auto port =
        std::make_shared<fabric::LinuxKmdPort>(std::string(FABRIC_TEST_TMP_DIR) + "/no-such-dir");
    CHECK(port->list_devices().empty());
    CHECK(fabric::discover_devices(*port).empty());
    CHECK_THAT(ft::expect_error(ErrorCategory::Device,
                                [&] { fabric::PcieDevice(port, soc_of(hal::Arch::WormholeB0)); }),
               Contains("no Tenstorrent device found"));
    CHECK_THAT(ft::expect_error(ErrorCategory::Device, [&] { (void)port->open(0); }),
               Contains("cannot open"));
    // A directory with a non-device entry: still nothing.
    const std::string dir = std::string(FABRIC_TEST_TMP_DIR) + "/fake-tenstorrent";
    std::filesystem::create_directories(dir + "/by-id");
    CHECK(fabric::LinuxKmdPort(dir).list_devices().empty());
}

TEST_CASE("silicon: discovery and an L1 round trip through a TLB window", "[pcie][hardware]") {
    auto port = std::make_shared<fabric::LinuxKmdPort>();
    if (port->list_devices().empty()) {
        WARN("skipped: no /dev/tenstorrent device on this machine");
        return;
    }
    const auto devs = fabric::discover_devices(*port);
    REQUIRE_FALSE(devs.empty());
    for (const auto& d : devs) {
        INFO(d.path << ": " << d.error);
        CHECK(d.error.empty());
        CHECK(d.vendor_id == kmd::kPciVendorId);
    }
    REQUIRE(devs[0].arch.has_value());
    const auto arch = *devs[0].arch;
    fabric::PcieDeviceOptions o;
    o.ordinals = std::vector<uint32_t>{devs[0].ordinal};
    o.discover_links = false;
    fabric::PcieDevice dev(port, soc_of(arch), o);
    const auto soc = soc_of(arch);
    // A worker's L1 scratch area well above anything firmware uses at rest.
    const CoreLocation w{0, soc.cores(fabric::CoreType::Worker).front()};
    const uint64_t at = soc.worker_l1_size() - 0x10000;
    const auto data = pattern(4096 + 3, 11);
    dev.write(w, at + 1, data);
    std::vector<uint8_t> back(data.size());
    dev.read(w, at + 1, back);
    CHECK(back == data);
}

TEST_CASE("LinuxKmdPort on a plain file: ioctls refused, the 32-bit MMIO copy is byte exact",
          "[pcie]") {
    // A regular file stands in for a device node: ioctl(2) fails (ENOTTY) and mmap(2) works, so
    // the real mapping code (whole-word accesses with read-modify-write at the edges) runs.
    const std::string dir = std::string(FABRIC_TEST_TMP_DIR) + "/plain-file-dev";
    std::filesystem::create_directories(dir);
    const std::string node = dir + "/0";
    {
        std::vector<char> zeros(8192, 0);
        FILE* f = std::fopen(node.c_str(), "wb");
        REQUIRE(f != nullptr);
        REQUIRE(std::fwrite(zeros.data(), 1, zeros.size(), f) == zeros.size());
        std::fclose(f);
    }
    auto port = std::make_shared<fabric::LinuxKmdPort>(dir);
    CHECK(port->list_devices() == std::vector<uint32_t>{0});
    const auto devs = fabric::discover_devices(*port);
    REQUIRE(devs.size() == 1);
    CHECK_THAT(devs[0].error, Contains("GET_DEVICE_INFO failed"));
    CHECK_THAT(ft::expect_error(ErrorCategory::Device,
                                [&] { fabric::PcieDevice(port, soc_of(hal::Arch::WormholeB0)); }),
               Contains("GET_DEVICE_INFO failed"));
    auto file = port->open(0);
    kmd::AllocateTlb a{};
    a.in.size = 2 * kmd::kMiB;
    CHECK(file->ioctl(kmd::kAllocateTlb, &a) == -ENOTTY);
    int err = 0;
    auto m = file->map(0, 8192, err);
    REQUIRE(m);
    for (const uint64_t start : {0, 1, 2, 3, 5, 4093}) {
        for (const size_t len : {size_t{1}, size_t{2}, size_t{3}, size_t{6}, size_t{9}}) {
            std::vector<uint8_t> before =
                pattern(len + 16, static_cast<uint32_t>(start * 31 + len));
            const uint64_t lo = start >= 8 ? start - 8 : 0;
            m->write(lo, before);
            const auto data = pattern(len, static_cast<uint32_t>(len));
            m->write(start, data);
            std::vector<uint8_t> all(before.size());
            m->read(lo, all);
            auto expect = before;
            std::copy(data.begin(), data.end(), expect.begin() + (start - lo));
            INFO("start " << start << " len " << len);
            CHECK(all == expect);
        }
    }
    m->write32(0x100, 0xDEADBEEF);
    CHECK(m->read32(0x100) == 0xDEADBEEF);
    CHECK_THROWS_AS(m->read32(8190), fabric::Error);  // leaves the mapping
}

TEST_CASE("sim kmd: a multicast window writes every modelled core of its rectangle",
          "[pcie][sim]") {
    auto sim = model(hal::Arch::WormholeB0);
    fabric::SimKmdPort port(sim);
    auto f = port.open(0);
    const Window w = window_2m(*f, true);
    const auto& m = w.map;
    kmd::ConfigureTlb c{};
    c.in.id = w.id;
    c.in.config = unicast(0, 4, 3);  // rectangle 1-1 .. 4-3 (x 1..4, y 1..3: 12 workers)
    c.in.config.x_start = 1;
    c.in.config.y_start = 1;
    c.in.config.mcast = 1;
    REQUIRE(f->ioctl(kmd::kConfigureTlb, &c) == 0);
    m->write32(0x4000, 0x600D);
    for (uint32_t y = 1; y <= 3; ++y)
        for (uint32_t x = 1; x <= 4; ++x) CHECK(sim->read32({0, {x, y}}, 0x4000) == 0x600D);
    CHECK(sim->read32({0, {6, 1}}, 0x4000) == 0);       // outside the rectangle
    CHECK_THROWS_AS(m->read32(0x4000), fabric::Error);  // a multicast window cannot be read
}

namespace {

// A driver that refuses one ioctl with a chosen errno, in front of the simulated one.
class RefusingFile final : public fabric::KmdFile {
  public:
    RefusingFile(std::unique_ptr<fabric::KmdFile> inner, unsigned long request, int err)
        : inner_(std::move(inner)), request_(request), err_(err) {}
    const std::string& path() const override { return inner_->path(); }
    int ioctl(unsigned long request, void* arg) override {
        return request == request_ ? -err_ : inner_->ioctl(request, arg);
    }
    std::unique_ptr<fabric::KmdMapping> map(uint64_t offset, uint64_t size, int& error) override {
        return inner_->map(offset, size, error);
    }

  private:
    std::unique_ptr<fabric::KmdFile> inner_;
    unsigned long request_;
    int err_;
};

class RefusingPort final : public fabric::KmdPort {
  public:
    RefusingPort(std::shared_ptr<fabric::KmdPort> inner, unsigned long request, int err)
        : inner_(std::move(inner)), request_(request), err_(err) {}
    std::string description() const override { return inner_->description(); }
    std::vector<uint32_t> list_devices() override { return inner_->list_devices(); }
    std::unique_ptr<fabric::KmdFile> open(uint32_t n) override {
        return std::make_unique<RefusingFile>(inner_->open(n), request_, err_);
    }
    uint64_t advance(uint64_t c, uint32_t mhz) override { return inner_->advance(c, mhz); }
    uint64_t cycles(uint32_t mhz) const override { return inner_->cycles(mhz); }
    bool has_sim_control() const override { return inner_->has_sim_control(); }

  private:
    std::shared_ptr<fabric::KmdPort> inner_;
    unsigned long request_;
    int err_;
};

}  // namespace

TEST_CASE("PcieDevice (sim): driver refusals become clear device errors, nothing written",
          "[pcie][sim]") {
    const auto soc = soc_of(hal::Arch::WormholeB0);
    auto sim = model(hal::Arch::WormholeB0);
    const CoreLocation w{0, {1, 1}};
    const std::vector<uint8_t> data(16, 0x5A);
    fabric::PcieDeviceOptions o;
    o.discover_links = false;  // no accesses before the one under test
    {
        auto port = std::make_shared<RefusingPort>(std::make_shared<fabric::SimKmdPort>(sim),
                                                   kmd::kConfigureTlb, EINVAL);
        fabric::PcieDevice dev(port, soc, o);
        CHECK_THAT(ft::expect_error(ErrorCategory::Device, [&] { dev.write(w, 0x1000, data); }),
                   Contains("CONFIGURE_TLB of window"));
        CHECK(sim->read32(w, 0x1000) == 0);
    }
    {
        auto port = std::make_shared<RefusingPort>(std::make_shared<fabric::SimKmdPort>(sim),
                                                   kmd::kAllocateTlb, ENOMEM);
        fabric::PcieDevice dev(port, soc, o);
        CHECK_THAT(ft::expect_error(ErrorCategory::Device, [&] { dev.write(w, 0x1000, data); }),
                   Contains("no free 2048 KiB TLB window"));
        CHECK(sim->read32(w, 0x1000) == 0);
    }
    {
        auto port = std::make_shared<RefusingPort>(std::make_shared<fabric::SimKmdPort>(sim),
                                                   kmd::kGetDeviceInfo, EIO);
        CHECK_THAT(ft::expect_error(ErrorCategory::Device, [&] { fabric::PcieDevice(port, soc); }),
                   Contains("GET_DEVICE_INFO failed: Input/output error"));
    }
}

TEST_CASE("PcieDevice (sim): every length 1..40 at every alignment across a window edge",
          "[pcie][sim]") {
    fabric::PcieDeviceOptions o;
    o.window_size = kmd::kMiB;
    o.windows_per_chip = 1;  // every crossing reprograms the one window
    o.discover_links = false;
    auto r = rig(hal::Arch::WormholeB0, o);
    const CoreLocation w{0, {3, 5}};
    uint32_t seed = 1000;
    for (uint64_t off = 0; off < 8; ++off) {
        for (size_t len = 1; len <= 40; ++len) {
            const uint64_t start = kmd::kMiB - 20 + off;
            const auto before = pattern(len + 16, seed++);
            r.sim->write(w, start - 8, before);
            const auto data = pattern(len, seed++);
            r.dev->write(w, start, data);
            std::vector<uint8_t> m(before.size());
            r.sim->read(w, start - 8, m);
            auto expect = before;
            std::copy(data.begin(), data.end(), expect.begin() + 8);
            INFO("offset " << off << " len " << len);
            REQUIRE(m == expect);
            std::vector<uint8_t> back(len);
            r.dev->read(w, start, back);
            REQUIRE(back == data);
        }
    }
    // Register words through read()/write() (the UC path): the reset PC, and the two wall-clock
    // words in one access.
    const std::vector<uint8_t> pc_bytes = {0x34, 0x12, 0, 0};
    r.dev->write(w, hc::kErisc0ResetPcReg, pc_bytes);
    std::vector<uint8_t> pc(4);
    r.dev->read(w, hc::kErisc0ResetPcReg, pc);
    CHECK(pc == pc_bytes);
    CHECK(r.sim->read32(w, hc::kErisc0ResetPcReg) == 0x1234);
    std::vector<uint8_t> clock(8);
    r.dev->read(w, hc::kWallClockLo, clock);
    uint32_t hi;
    std::memcpy(&hi, clock.data() + 4, 4);
    CHECK(hi == 0);  // a few cycles since the tile was created
}
