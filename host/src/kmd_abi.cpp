#include "fabric/kmd_abi.h"

#include <fmt/format.h>

#include "fabric/error.h"

namespace fabric::kmd {

std::optional<hal::Arch> arch_of_device_id(uint16_t device_id) {
    switch (device_id) {
        case kDeviceIdWormhole:
            return hal::Arch::WormholeB0;
        case kDeviceIdBlackhole:
            return hal::Arch::Blackhole;
        default:
            return std::nullopt;
    }
}

std::string_view device_id_name(uint16_t device_id) {
    switch (device_id) {
        case kDeviceIdWormhole:
            return "wormhole";
        case kDeviceIdBlackhole:
            return "blackhole";
        case kDeviceIdGrayskull:
            return "grayskull";
        default:
            return "unknown";
    }
}

std::string_view ioctl_name(unsigned long request) {
    switch (request) {
        case kGetDeviceInfo:
            return "GET_DEVICE_INFO";
        case kGetHarvesting:
            return "GET_HARVESTING";
        case kQueryMappings:
            return "QUERY_MAPPINGS";
        case kAllocateDmaBuf:
            return "ALLOCATE_DMA_BUF";
        case kFreeDmaBuf:
            return "FREE_DMA_BUF";
        case kGetDriverInfo:
            return "GET_DRIVER_INFO";
        case kResetDevice:
            return "RESET_DEVICE";
        case kPinPages:
            return "PIN_PAGES";
        case kLockCtl:
            return "LOCK_CTL";
        case kMapPeerBar:
            return "MAP_PEER_BAR";
        case kUnpinPages:
            return "UNPIN_PAGES";
        case kAllocateTlb:
            return "ALLOCATE_TLB";
        case kFreeTlb:
            return "FREE_TLB";
        case kConfigureTlb:
            return "CONFIGURE_TLB";
        case kSetNocCleanup:
            return "SET_NOC_CLEANUP";
        case kSetPowerState:
            return "SET_POWER_STATE";
        case kExportTlbDmabuf:
            return "EXPORT_TLB_DMABUF";
        default:
            return "unknown";
    }
}

namespace {

TlbGeometry make_geometry(hal::Arch arch) {
    TlbGeometry g;
    g.arch = arch;
    g.config_base = kTlbConfigBase;
    g.bar0_size = kBar0Size;
    switch (arch) {
        case hal::Arch::WormholeB0:
            g.classes = {{1 * kMiB, 156, 0, 0x0, 0},
                         {2 * kMiB, 10, 156, 0x9C00000, 0},
                         {16 * kMiB, 20, 166, 0xB000000, 0}};
            g.total = 186;
            g.kmd_reserved = 185;
            g.config_stride = 8;
            g.config_entries = 186;
            break;
        case hal::Arch::Blackhole:
            g.classes = {{2 * kMiB, 202, 0, 0x0, 0}, {4 * kGiB, 8, 202, 0x0, 4}};
            g.total = 210;
            g.kmd_reserved = 201;
            g.config_stride = 12;
            g.config_entries = 210;
            break;
        default:
            fail(ErrorCategory::Internal, "kmd: no TLB geometry for arch {}",
                 static_cast<int>(arch));
    }
    return g;
}

// Field positions of the non-address part, relative to where it starts.
struct Fields {
    uint32_t addr_bits;   // bits of (addr >> shift) kept in the register
    uint32_t shift;       // log2(window size)
    uint32_t noc_bits;    // WH 1, BH 2
    uint32_t nonaddr_at;  // first bit after the address field
};

Fields fields(hal::Arch arch, uint64_t window_size) {
    uint32_t shift = 0;
    while ((uint64_t{1} << shift) < window_size) ++shift;
    if (arch == hal::Arch::WormholeB0) return {36 - shift, shift, 1, 36 - shift};
    // Blackhole: 2 MiB windows keep 43 address bits, 4 GiB windows 32.
    const uint32_t bits = shift == 21 ? 43 : 32;
    return {bits, shift, 2, bits};
}

}  // namespace

const TlbGeometry& tlb_geometry(hal::Arch arch) {
    static const TlbGeometry wh = make_geometry(hal::Arch::WormholeB0);
    static const TlbGeometry bh = make_geometry(hal::Arch::Blackhole);
    return arch == hal::Arch::Blackhole ? bh : wh;
}

const TlbWindowClass* window_class(const TlbGeometry& g, uint64_t size) {
    for (const auto& c : g.classes) {
        if (c.size == size) return &c;
    }
    return nullptr;
}

const TlbWindowClass& class_of_index(const TlbGeometry& g, uint32_t index) {
    for (const auto& c : g.classes) {
        if (index >= c.first && index < c.first + c.count) return c;
    }
    fail(ErrorCategory::Internal, "kmd: TLB window {} does not exist ({} windows)", index, g.total);
}

std::vector<uint32_t> encode_tlb(hal::Arch arch, uint64_t window_size, const NocTlbConfig& c) {
    const Fields f = fields(arch, window_size);
    __extension__ typedef unsigned __int128 u128;
    const u128 addr_mask = (u128{1} << f.addr_bits) - 1;
    u128 v = u128{c.addr >> f.shift} & addr_mask;
    uint32_t at = f.nonaddr_at;
    const auto put = [&](uint64_t value, uint32_t bits) {
        v |= (u128{value} & ((u128{1} << bits) - 1)) << at;
        at += bits;
    };
    put(c.x_end, 6);
    put(c.y_end, 6);
    put(c.x_start, 6);
    put(c.y_start, 6);
    put(c.noc, f.noc_bits);
    put(c.mcast, 1);
    put(c.ordering, 2);
    put(c.linked, 1);
    if (arch == hal::Arch::WormholeB0) {
        put(c.static_vc != 0, 1);  // WH: one static-VC bit after `linked`
    } else {
        put(c.static_vc != 0, 1);  // use_static_vc
        put(0, 1);                 // stream_header
        put(c.static_vc, 3);       // static_vc
    }
    const uint32_t words = tlb_geometry(arch).config_stride / 4;
    std::vector<uint32_t> out(words);
    for (uint32_t i = 0; i < words; ++i) out[i] = static_cast<uint32_t>(v >> (32 * i));
    return out;
}

std::optional<std::string> check_tlb_config(hal::Arch arch, uint64_t window_size,
                                            const NocTlbConfig& c) {
    const TlbGeometry& g = tlb_geometry(arch);
    if (window_class(g, window_size) == nullptr)
        return fmt::format("{} has no TLB window of {} bytes",
                           arch == hal::Arch::Blackhole ? "blackhole" : "wormhole", window_size);
    if (c.addr % window_size != 0)
        return fmt::format("address {} is not aligned to the {} KiB window", hex32(c.addr),
                           window_size / 1024);
    if (arch == hal::Arch::WormholeB0 && c.addr >= (uint64_t{1} << 36))
        return fmt::format("address {} is beyond the 36-bit Wormhole NOC address space",
                           hex32(c.addr));
    if (c.x_end >= 64 || c.y_end >= 64 || c.x_start >= 64 || c.y_start >= 64)
        return fmt::format("coordinates ({},{})..({},{}) are beyond the 6-bit NOC fields",
                           c.x_start, c.y_start, c.x_end, c.y_end);
    if (c.noc > 1) return fmt::format("NOC {} does not exist (0 or 1)", c.noc);
    if (c.mcast > 1 || c.linked > 1) return std::string("mcast and linked are single bits");
    if (c.ordering > kOrderingPostedStrict)
        return fmt::format("ordering {} is not one of 0..3", c.ordering);
    if (c.ordering == kOrderingPostedStrict && (arch != hal::Arch::Blackhole || c.mcast))
        return std::string("posted-strict ordering exists for Blackhole unicast only");
    if (c.static_vc > 7) return fmt::format("static VC {} is beyond 3 bits", c.static_vc);
    return std::nullopt;
}

}  // namespace fabric::kmd
