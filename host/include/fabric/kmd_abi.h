// The tt-kmd userspace ABI (/dev/tenstorrent/<N>): ioctl numbers, argument structs, mmap resource
// ids, window geometry of the PCIe TLBs and the TLB register encodings of Wormhole B0 and
// Blackhole. Written from the facts in reference/host-and-pcie.md §1.1-1.6 and §2.1 (no driver
// header is copied); every struct layout is pinned with static_asserts so a change is a compile
// error.
//
// Two users: PcieDevice (host/src/pcie_device.cpp) fills these structs for the real driver and for
// the simulated one alike; the simulated driver (SimKmdPort) parses them as the kernel would and
// encodes TLB registers with encode_tlb() below, which the model's PCIe tile decodes on its own
// (sim/model/pcie_tlb.cpp), so the two encodings check each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hal/arch_map.h"

namespace fabric::kmd {

// ---- device nodes and ids (§1.1)
// -----------------------------------------------------------------
inline constexpr const char* kDeviceDir = "/dev/tenstorrent";
inline constexpr uint16_t kPciVendorId = 0x1E52;
inline constexpr uint16_t kDeviceIdGrayskull = 0xFACA;
inline constexpr uint16_t kDeviceIdWormhole = 0x401E;
inline constexpr uint16_t kDeviceIdBlackhole = 0xB140;
inline constexpr uint32_t kDriverApiVersion = 2;  // TENSTORRENT_DRIVER_VERSION

// The arch of a PCI device id, or nullopt for one this project does not drive (Grayskull, other).
std::optional<hal::Arch> arch_of_device_id(uint16_t device_id);
std::string_view device_id_name(
    uint16_t device_id);  // "wormhole", "blackhole", "grayskull", "unknown"

// ---- ioctl numbers (§1.3): _IO(0xFA, n), no size encoded
// -------------------------------------------
inline constexpr unsigned long kIoctlMagic = 0xFA;
constexpr unsigned long ioctl_number(unsigned n) {
    return (kIoctlMagic << 8) | n;  // _IO(type, nr) = (type << _IOC_TYPESHIFT) | nr, dir 0, size 0
}
inline constexpr unsigned long kGetDeviceInfo = ioctl_number(0);
inline constexpr unsigned long kGetHarvesting = ioctl_number(1);  // legacy, not implemented
inline constexpr unsigned long kQueryMappings = ioctl_number(2);
inline constexpr unsigned long kAllocateDmaBuf = ioctl_number(3);
inline constexpr unsigned long kFreeDmaBuf = ioctl_number(4);
inline constexpr unsigned long kGetDriverInfo = ioctl_number(5);
inline constexpr unsigned long kResetDevice = ioctl_number(6);
inline constexpr unsigned long kPinPages = ioctl_number(7);
inline constexpr unsigned long kLockCtl = ioctl_number(8);
inline constexpr unsigned long kMapPeerBar = ioctl_number(9);
inline constexpr unsigned long kUnpinPages = ioctl_number(10);
inline constexpr unsigned long kAllocateTlb = ioctl_number(11);
inline constexpr unsigned long kFreeTlb = ioctl_number(12);
inline constexpr unsigned long kConfigureTlb = ioctl_number(13);
inline constexpr unsigned long kSetNocCleanup = ioctl_number(14);
inline constexpr unsigned long kSetPowerState = ioctl_number(15);
inline constexpr unsigned long kExportTlbDmabuf = ioctl_number(16);
static_assert(kGetDeviceInfo == 0xFA00 && kConfigureTlb == 0xFA0D);

std::string_view ioctl_name(unsigned long request);  // "CONFIGURE_TLB", "unknown"

// ---- argument structs (§1.4)
// ---------------------------------------------------------------------
struct GetDeviceInfoIn {
    uint32_t output_size_bytes;
};
struct GetDeviceInfoOut {
    uint32_t output_size_bytes;
    uint16_t vendor_id;
    uint16_t device_id;
    uint16_t subsystem_vendor_id;
    uint16_t subsystem_id;
    uint16_t bus_dev_fn;  // [2:0] function, [7:3] device, [15:8] bus
    uint16_t max_dma_buf_size_log2;
    uint16_t pci_domain;  // since KMD 1.23
    uint16_t reserved;
};
struct GetDeviceInfo {
    GetDeviceInfoIn in;
    GetDeviceInfoOut out;
};
static_assert(sizeof(GetDeviceInfoIn) == 4 && sizeof(GetDeviceInfoOut) == 20);
static_assert(offsetof(GetDeviceInfoOut, device_id) == 6 &&
              offsetof(GetDeviceInfoOut, bus_dev_fn) == 12 &&
              offsetof(GetDeviceInfoOut, pci_domain) == 16);
static_assert(offsetof(GetDeviceInfo, out) == 4 && sizeof(GetDeviceInfo) == 24);

struct GetDriverInfoIn {
    uint32_t output_size_bytes;
};
struct GetDriverInfoOut {
    uint32_t output_size_bytes;
    uint32_t driver_version;  // API version (2)
    uint8_t driver_version_major;
    uint8_t driver_version_minor;
    uint8_t driver_version_patch;
    uint8_t reserved;
};
struct GetDriverInfo {
    GetDriverInfoIn in;
    GetDriverInfoOut out;
};
static_assert(sizeof(GetDriverInfoOut) == 12 &&
              offsetof(GetDriverInfoOut, driver_version_major) == 8);
static_assert(sizeof(GetDriverInfo) == 16);

// QUERY_MAPPINGS: `in` followed by output_mapping_count Mapping records.
enum MappingId : uint32_t {
    kMappingUnused = 0,
    kMappingResource0Uc = 1,  // BAR0
    kMappingResource0Wc = 2,
    kMappingResource1Uc = 3,  // BAR2
    kMappingResource1Wc = 4,
    kMappingResource2Uc = 5,  // BAR4
    kMappingResource2Wc = 6,
};
struct QueryMappingsIn {
    uint32_t output_mapping_count;
    uint32_t reserved;
};
struct Mapping {
    uint32_t mapping_id;
    uint32_t reserved;
    uint64_t mapping_base;  // mmap offset
    uint64_t mapping_size;
};
static_assert(sizeof(QueryMappingsIn) == 8 && sizeof(Mapping) == 24 &&
              offsetof(Mapping, mapping_base) == 8);

struct ResetDeviceIn {
    uint32_t output_size_bytes;
    uint32_t flags;
};
struct ResetDeviceOut {
    uint32_t output_size_bytes;
    uint32_t result;  // 0 = ok
};
enum ResetFlags : uint32_t {
    kResetRestoreState = 0,
    kResetPcieLink = 1,
    kResetConfigWrite = 2,
    kResetUser = 3,
    kResetAsic = 4,
    kResetAsicDmc = 5,
    kResetPost = 6,
};
static_assert(sizeof(ResetDeviceIn) == 8 && sizeof(ResetDeviceOut) == 8);

struct LockCtlIn {
    uint32_t output_size_bytes;
    uint32_t flags;  // 0 acquire, 1 release, 2 test, 3 acquire blocking
    uint8_t index;   // < 64; 0..15 conventionally ERISC cores
    uint8_t reserved[3];
};
struct LockCtlOut {
    uint8_t value;
    uint8_t reserved[3];
};
static_assert(sizeof(LockCtlIn) == 12 && sizeof(LockCtlOut) == 4);
struct LockCtl {
    LockCtlIn in;
    LockCtlOut out;
};
enum LockCtlFlags : uint32_t {
    kLockAcquire = 0,  // out.value 1: this file holds it now; 0: another file does
    kLockRelease = 1,  // out.value 1: this file held it and let it go
    kLockTest = 2,     // out.value 1: this file holds it
    kLockAcquireBlocking = 3,
};
inline constexpr uint32_t kLockCount = 64;

struct AllocateTlbIn {
    uint64_t size;  // exactly one of the arch's window sizes
    uint64_t reserved;
};
struct AllocateTlbOut {
    uint32_t id;
    uint32_t reserved0;
    uint64_t mmap_offset_uc;
    uint64_t mmap_offset_wc;
    uint64_t reserved1;
};
struct AllocateTlb {
    AllocateTlbIn in;
    AllocateTlbOut out;
};
static_assert(sizeof(AllocateTlbIn) == 16 && sizeof(AllocateTlbOut) == 32);
static_assert(offsetof(AllocateTlbOut, mmap_offset_uc) == 8 &&
              offsetof(AllocateTlbOut, mmap_offset_wc) == 16);
static_assert(offsetof(AllocateTlb, out) == 16 && sizeof(AllocateTlb) == 48);

struct FreeTlbIn {
    uint32_t id;
};
struct FreeTlb {
    FreeTlbIn in;
};
static_assert(sizeof(FreeTlb) == 4);

// Ordering of a TLB's NOC requests.
enum TlbOrdering : uint8_t {
    kOrderingRelaxed = 0,
    kOrderingStrict = 1,  // full AXI ordering: registers
    kOrderingPosted = 2,
    kOrderingPostedStrict = 3,  // BH unicast only
};

struct NocTlbConfig {
    uint64_t addr;  // NOC-local address, aligned to the window size
    uint16_t x_end;
    uint16_t y_end;
    uint16_t x_start;  // multicast rectangle start; 0 for unicast
    uint16_t y_start;
    uint8_t noc;  // 0 or 1
    uint8_t mcast;
    uint8_t ordering;  // TlbOrdering
    uint8_t linked;
    uint8_t static_vc;
    uint8_t reserved0[3];
    uint32_t reserved1[2];
};
static_assert(sizeof(NocTlbConfig) == 32);
static_assert(offsetof(NocTlbConfig, x_end) == 8 && offsetof(NocTlbConfig, y_start) == 14 &&
              offsetof(NocTlbConfig, noc) == 16 && offsetof(NocTlbConfig, static_vc) == 20 &&
              offsetof(NocTlbConfig, reserved1) == 24);

struct ConfigureTlbIn {
    uint32_t id;
    uint32_t reserved;
    NocTlbConfig config;
};
struct ConfigureTlbOut {
    uint64_t reserved;
};
struct ConfigureTlb {
    ConfigureTlbIn in;
    ConfigureTlbOut out;
};
static_assert(sizeof(ConfigureTlbIn) == 40 && offsetof(ConfigureTlbIn, config) == 8);
static_assert(sizeof(ConfigureTlb) == 48);

struct SetNocCleanup {
    uint32_t argsz;
    uint32_t flags;
    uint8_t enabled;
    uint8_t x;
    uint8_t y;
    uint8_t noc;
    uint32_t reserved;
    uint64_t addr;  // 4-byte aligned
    uint64_t data;  // low 32 bits written when the fd closes
};
static_assert(sizeof(SetNocCleanup) == 32 && offsetof(SetNocCleanup, addr) == 16);

// ---- mmap offsets the driver hands out (§1.4, "internal, query instead")
// ------------------------- Not ABI: a client asks QUERY_MAPPINGS / ALLOCATE_TLB. The simulated
// driver uses the same scheme.
inline constexpr uint64_t kMmapResourceShift = 36;
enum MmapRegion : uint64_t {
    kMmapRes0Uc = 0,
    kMmapRes0Wc = 1,
    kMmapRes1Uc = 2,
    kMmapRes1Wc = 3,
    kMmapRes2Uc = 4,
    kMmapRes2Wc = 5,
    kMmapTlbUc = 6,
    kMmapTlbWc = 7,
};

// ---- BAR layout and TLB windows (§1.6)
// -----------------------------------------------------------
struct TlbWindowClass {
    uint64_t size;        // bytes of one window
    uint32_t count;       // windows of this size
    uint32_t first;       // index of the first one
    uint64_t bar_offset;  // of the first window (BAR0; BH 4 GiB windows: BAR4)
    uint32_t bar;         // 0 or 4
};

struct TlbGeometry {
    hal::Arch arch;
    std::vector<TlbWindowClass> classes;
    uint32_t total = 0;           // windows in all classes
    uint32_t kmd_reserved = 0;    // the window index the driver keeps for itself
    uint64_t config_base = 0;     // BAR0 offset of the TLB config registers
    uint32_t config_stride = 0;   // bytes per window's config (WH 8, BH 12)
    uint32_t config_entries = 0;  // config entries (WH 186, BH 210)
    uint64_t bar0_size = 0;
};

// Wormhole: 156 x 1 MiB at 0, 10 x 2 MiB at 0x9C00000, 20 x 16 MiB at 0xB000000; config regs at
// 0x1FC00000, 8 B each; the driver keeps index 185. Blackhole: 202 x 2 MiB at BAR0 0 (driver keeps
// 201) and up to 8 x 4 GiB in BAR4; config regs at 0x1FC00000, 12 B each, 210 entries.
const TlbGeometry& tlb_geometry(hal::Arch arch);
// The class of a window size, or nullptr if the arch has no window of that size.
const TlbWindowClass* window_class(const TlbGeometry& g, uint64_t size);
const TlbWindowClass& class_of_index(const TlbGeometry& g, uint32_t index);

inline constexpr uint64_t kMiB = 1024 * 1024;
inline constexpr uint64_t kGiB = 1024 * kMiB;
inline constexpr uint64_t kBar0Size = 512 * kMiB;
inline constexpr uint64_t kTlbConfigBase = 0x1FC00000;

// ---- TLB register encodings (§2.1)
// --------------------------------------------------------------- The register value a window's
// config becomes: WH one 64-bit value (two u32 words), BH 96 bits (three u32 words). `words` gets
// config_stride / 4 words, little end first. Does not validate: the caller (the driver) checks
// alignment and ranges first.
std::vector<uint32_t> encode_tlb(hal::Arch arch, uint64_t window_size, const NocTlbConfig& config);

// What the driver checks before programming a window; nullopt if fine, else why not ("address
// 0x1234 is not aligned to the 2 MiB window"). NOC-local address limit: WH 36 bits, BH 64 bits
// (the 2 MiB BH field holds 43 bits of addr >> 21).
std::optional<std::string> check_tlb_config(hal::Arch arch, uint64_t window_size,
                                            const NocTlbConfig& config);

}  // namespace fabric::kmd
