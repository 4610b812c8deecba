#include "fabric/elf.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "fabric/error.h"
#include "fabric/input_file.h"
#include "protocol/erisc_base_fw.h"
#include "protocol/erisc_remote_access.h"
#include "protocol/exit_mailbox.h"

namespace fabric {
namespace {

// ELF constants (System V gABI; RISC-V psABI for EM_RISCV).
constexpr uint8_t kElfClass32 = 1;
constexpr uint8_t kElfClass64 = 2;
constexpr uint8_t kElfDataLsb = 1;
constexpr uint8_t kElfVersionCurrent = 1;
constexpr uint16_t kEtExec = 2;
constexpr uint16_t kEmRiscv = 243;
constexpr uint32_t kEhdrSize = 52;
constexpr uint32_t kPhdrSize = 32;
constexpr uint32_t kShdrSize = 40;
constexpr uint32_t kSymSize = 16;
constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPfX = 1;
constexpr uint32_t kPfW = 2;
constexpr uint32_t kShtSymtab = 2;
constexpr uint16_t kPnXnum = 0xFFFF;

// Largest image the loader accepts (sum of all segments' memory sizes). The biggest L1 on either
// arch is 1.5 MiB, so 2 MiB rejects nothing loadable, while a corrupt memsz (up to 4 GiB) is
// refused before anything is allocated for it.
constexpr uint64_t kMaxImageBytes = 2u << 20;

const char* type_name(uint16_t t) {
    switch (t) {
        case 0:
            return "ET_NONE";
        case 1:
            return "ET_REL (an object file, not linked)";
        case 2:
            return "ET_EXEC";
        case 3:
            return "ET_DYN (position independent)";
        case 4:
            return "ET_CORE";
        default:
            return "unknown";
    }
}

std::string range_str(uint64_t b, uint64_t e) {
    return fmt::format("[{}, {})", hex32(b), hex32(e));
}

// Little-endian field reader over the whole file; callers check bounds first.
struct Reader {
    std::span<const uint8_t> b;
    uint16_t u16(uint64_t off) const { return static_cast<uint16_t>(b[off] | (b[off + 1] << 8)); }
    uint32_t u32(uint64_t off) const {
        return uint32_t{b[off]} | (uint32_t{b[off + 1]} << 8) | (uint32_t{b[off + 2]} << 16) |
               (uint32_t{b[off + 3]} << 24);
    }
};

// Two segments whose load ranges overlap, the one with the higher program header index first; in
// O(n log n) (an image may have 65534 program headers).
std::optional<std::pair<const ElfSegment*, const ElfSegment*>> first_overlap(
    const std::vector<ElfSegment>& segments) {
    std::vector<const ElfSegment*> by_address;
    for (const auto& s : segments) by_address.push_back(&s);
    std::sort(by_address.begin(), by_address.end(), [](const ElfSegment* a, const ElfSegment* b) {
        return std::pair(a->address, a->index) < std::pair(b->address, b->index);
    });
    const ElfSegment* reaching_furthest = nullptr;
    for (const ElfSegment* s : by_address) {
        if (reaching_furthest && s->address < reaching_furthest->end()) {
            if (s->index > reaching_furthest->index) return std::pair(s, reaching_furthest);
            return std::pair(reaching_furthest, s);
        }
        if (!reaching_furthest || s->end() > reaching_furthest->end()) reaching_furthest = s;
    }
    return std::nullopt;
}

}  // namespace

PlacementRules erisc_placement(const hal::ArchMap& arch, uint32_t eth_l1_size) {
    PlacementRules r;
    r.target = fmt::format("{} eth core", arch.name);
    const uint32_t top = std::min(arch.eth_l1_usable_top, eth_l1_size);
    r.loadable.push_back({arch.app_fw_base, top, "L1 range"});
    r.reserved.push_back({arch.launch_app_flag, arch.launch_app_flag + 4u, "launch_app_flag"});
    const uint32_t mailbox = protocol::exit_mailbox_addr(arch);
    r.reserved.push_back(
        {mailbox, mailbox + uint32_t{sizeof(protocol::ExitMailbox)}, "exit mailbox"});
    if (arch.arch == hal::Arch::WormholeB0) {
        namespace ra = protocol::remote_access;
        r.reserved.push_back(
            {ra::kReservedBase, ra::kReservedEnd, "routing firmware region (remote access)"});
    }
    return r;
}

PlacementRules base_firmware_placement() {
    namespace bfw = protocol::base_fw;
    PlacementRules r;
    r.target = "wormhole_b0 base firmware region";
    r.loadable.push_back({bfw::kImageBase, bfw::kImageEnd, "base firmware region"});
    r.reserved.push_back({bfw::kHeartbeat, bfw::kHeartbeat + 4u, "heartbeat word"});
    r.reserved.push_back({bfw::kPlatformBase, bfw::kPlatformEnd, "platform status words"});
    return r;
}

ElfImage ElfImage::parse(std::span<const uint8_t> bytes, const std::string& name) {
    const uint64_t size = bytes.size();
    const Reader r{bytes};
    auto bad = [&](const std::string& what) {
        throw Error(ErrorCategory::BadElf, name + ": " + what);
    };

    if (size < 4 || std::memcmp(bytes.data(),
                                "\x7f"
                                "ELF",
                                4) != 0) {
        bad("not an ELF file (no \\x7fELF magic)");
    }
    if (size < kEhdrSize) {
        bad(fmt::format("truncated ELF header ({} bytes, an ELF32 header needs {})", size,
                        kEhdrSize));
    }
    if (bytes[4] == kElfClass64) bad("64-bit ELF (ELFCLASS64); expected a 32-bit RV32 image");
    if (bytes[4] != kElfClass32) bad(fmt::format("unknown ELF class {}", bytes[4]));
    if (bytes[5] != kElfDataLsb) bad("big-endian ELF; expected little-endian");
    if (bytes[6] != kElfVersionCurrent) bad(fmt::format("unknown ELF version {}", bytes[6]));

    const uint16_t type = r.u16(16);
    const uint16_t machine = r.u16(18);
    const uint32_t entry = r.u32(24);
    const uint32_t phoff = r.u32(28);
    const uint32_t shoff = r.u32(32);
    const uint16_t ehsize = r.u16(40);
    const uint16_t phentsize = r.u16(42);
    const uint16_t phnum = r.u16(44);
    const uint16_t shentsize = r.u16(46);
    const uint16_t shnum = r.u16(48);

    if (machine != kEmRiscv) {
        bad(fmt::format("machine {} is not RISC-V (EM_RISCV = {})", machine, kEmRiscv));
    }
    if (type != kEtExec) {
        bad(fmt::format("type {} is not ET_EXEC (a linked executable)", type_name(type)));
    }
    if (ehsize != kEhdrSize) {
        bad(fmt::format("e_ehsize is {}, expected {}", ehsize, kEhdrSize));
    }
    if (phnum == 0) bad("no program headers (e_phnum = 0)");
    if (phnum == kPnXnum) bad("extended program header numbering is not supported");
    if (phentsize != kPhdrSize) {
        bad(fmt::format("e_phentsize is {}, expected {}", phentsize, kPhdrSize));
    }
    if (uint64_t{phoff} + uint64_t{phnum} * kPhdrSize > size) {
        bad(
            fmt::format("program header table [{}, {}) runs past the end of the file ({} "
                        "bytes)",
                        hex32(phoff), hex32(uint64_t{phoff} + uint64_t{phnum} * kPhdrSize), size));
    }

    ElfImage img;
    img.name_ = name;
    img.entry_ = entry;
    uint64_t image_bytes = 0;
    for (uint32_t i = 0; i < phnum; ++i) {
        const uint64_t ph = phoff + uint64_t{i} * kPhdrSize;
        if (r.u32(ph) != kPtLoad) continue;
        const uint32_t offset = r.u32(ph + 4);
        const uint32_t vaddr = r.u32(ph + 8);
        const uint32_t paddr = r.u32(ph + 12);
        const uint32_t filesz = r.u32(ph + 16);
        const uint32_t memsz = r.u32(ph + 20);
        const uint32_t flags = r.u32(ph + 24);
        if (memsz < filesz) {
            bad(fmt::format("segment {}: memsz {} is smaller than filesz {}", i, memsz, filesz));
        }
        if (filesz > 0 && uint64_t{offset} + filesz > size) {
            bad(
                fmt::format("segment {}: file range {} runs past the end of the file ({} "
                            "bytes)",
                            i, range_str(offset, uint64_t{offset} + filesz), size));
        }
        if (uint64_t{paddr} + memsz > (uint64_t{1} << 32) ||
            uint64_t{vaddr} + memsz > (uint64_t{1} << 32)) {
            bad(fmt::format("segment {}: address range wraps past 4 GiB", i));
        }
        if (memsz == 0) continue;
        image_bytes += memsz;
        if (image_bytes > kMaxImageBytes) {
            bad(
                fmt::format("segment {}: memsz {} takes the image past {} MiB, more than any core "
                            "can hold",
                            i, memsz, kMaxImageBytes >> 20));
        }
        ElfSegment s;
        s.index = i;
        s.address = paddr;
        s.vaddr = vaddr;
        s.file_size = filesz;
        s.executable = (flags & kPfX) != 0;
        s.writable = (flags & kPfW) != 0;
        s.bytes.assign(memsz, 0);
        if (filesz > 0) std::copy_n(bytes.begin() + offset, filesz, s.bytes.begin());
        img.segments_.push_back(std::move(s));
    }
    if (img.segments_.empty()) bad("no loadable (PT_LOAD) segment with memory size > 0");

    if (const auto pair = first_overlap(img.segments_)) {
        const auto& [later, earlier] = *pair;
        bad(fmt::format("segment {} {} overlaps segment {} {}", later->index,
                        range_str(later->address, later->end()), earlier->index,
                        range_str(earlier->address, earlier->end())));
    }

    const bool entry_ok = std::any_of(img.segments_.begin(), img.segments_.end(), [&](auto& s) {
        return s.executable && entry >= s.vaddr &&
               uint64_t{entry} < uint64_t{s.vaddr} + s.bytes.size();
    });
    if (!entry_ok) {
        bad(fmt::format("entry point {} is not inside a loaded executable segment", hex32(entry)));
    }

    // Symbols (optional: a stripped image simply has none).
    if (shoff != 0 && shnum != 0) {
        if (shentsize != kShdrSize) {
            bad(fmt::format("e_shentsize is {}, expected {}", shentsize, kShdrSize));
        }
        if (uint64_t{shoff} + uint64_t{shnum} * kShdrSize > size) {
            bad(fmt::format("section header table runs past the end of the file ({} bytes)", size));
        }
        std::optional<uint32_t> symtab;
        for (uint32_t i = 0; i < shnum; ++i) {
            const uint64_t sh = shoff + uint64_t{i} * kShdrSize;
            if (r.u32(sh + 4) != kShtSymtab) continue;
            // The gABI allows one; each could otherwise name the whole file again.
            if (symtab) bad(fmt::format("sections {} and {} are both symbol tables", *symtab, i));
            symtab = i;
            const uint32_t sym_off = r.u32(sh + 16);
            const uint32_t sym_size = r.u32(sh + 20);
            const uint32_t link = r.u32(sh + 24);
            if (uint64_t{sym_off} + sym_size > size) {
                bad(fmt::format("section {} (.symtab) runs past the end of the file", i));
            }
            if (link >= shnum) {
                bad(fmt::format("section {} (.symtab) links to missing section {}", i, link));
            }
            const uint64_t strsh = shoff + uint64_t{link} * kShdrSize;
            const uint32_t str_off = r.u32(strsh + 16);
            const uint32_t str_size = r.u32(strsh + 20);
            if (uint64_t{str_off} + str_size > size) {
                bad(fmt::format("section {} (string table) runs past the end of the file", link));
            }
            const auto strtab = bytes.subspan(str_off, str_size);
            for (uint32_t k = 1; k < sym_size / kSymSize; ++k) {  // entry 0 is the null symbol
                const uint64_t sym = sym_off + uint64_t{k} * kSymSize;
                const uint32_t name_off = r.u32(sym);
                if (name_off == 0) continue;
                if (name_off >= strtab.size()) {
                    bad(fmt::format("symbol {} names offset {} outside the string table", k,
                                    name_off));
                }
                const auto rest = strtab.subspan(name_off);
                const auto nul = std::find(rest.begin(), rest.end(), uint8_t{0});
                if (nul == rest.end()) {
                    bad(fmt::format("symbol {} name is not NUL-terminated", k));
                }
                img.symbols_.push_back(
                    {std::string(rest.begin(), nul), r.u32(sym + 4), r.u32(sym + 8)});
            }
        }
    }
    return img;
}

ElfImage ElfImage::load_file(const std::string& path) {
    const std::string bytes = read_input_file(path, kElfInput);
    return parse({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, path);
}

std::optional<uint32_t> ElfImage::symbol(std::string_view name) const {
    for (const auto& s : symbols_) {
        if (s.name == name) return s.value;
    }
    return std::nullopt;
}

void ElfImage::check_placement(const PlacementRules& rules) const {
    for (const auto& s : segments_) {
        const bool inside = std::any_of(rules.loadable.begin(), rules.loadable.end(),
                                        [&](auto& r) { return r.contains(s.address, s.end()); });
        if (!inside) {
            if (rules.loadable.size() == 1) {
                const auto& l = rules.loadable.front();
                fail(ErrorCategory::BadElf,
                     "{}: segment {} {} lies outside the loadable {} {} of {}", name_, s.index,
                     range_str(s.address, s.end()), l.name, range_str(l.begin, l.end),
                     rules.target);
            }
            std::string ranges;
            for (const auto& l : rules.loadable) {
                ranges += fmt::format("{}{} {}", ranges.empty() ? "" : ", ", l.name,
                                      range_str(l.begin, l.end));
            }
            fail(ErrorCategory::BadElf,
                 "{}: segment {} {} lies outside every loadable range of {} ({})", name_, s.index,
                 range_str(s.address, s.end()), rules.target, ranges.empty() ? "none" : ranges);
        }
        for (const auto& rr : rules.reserved) {
            if (rr.overlaps(s.address, s.end())) {
                fail(ErrorCategory::BadElf,
                     "{}: segment {} {} overlaps the reserved region '{}' {} of {}", name_, s.index,
                     range_str(s.address, s.end()), rr.name, range_str(rr.begin, rr.end),
                     rules.target);
            }
        }
    }
}

}  // namespace fabric
