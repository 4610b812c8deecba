// ELF32 RISC-V executables: parsing with full bounds checks, and placement checks against the
// memory map of the core they are loaded onto. The loader never trusts a header field: every
// offset, size and address is checked before use, and every failure is an Error(BadElf) naming the
// file and the offending segment or field.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/arch_map.h"

namespace fabric {

// [begin, end) in a core's address space, with a name for messages.
struct AddressRange {
    uint64_t begin = 0;
    uint64_t end = 0;
    std::string name;

    bool contains(uint64_t b, uint64_t e) const { return b >= begin && e <= end; }
    bool overlaps(uint64_t b, uint64_t e) const { return b < end && begin < e; }
};

// Where an image may be loaded on one kind of core.
struct PlacementRules {
    std::string target;                  // "wormhole_b0 eth core": used in messages
    std::vector<AddressRange> loadable;  // every segment must lie inside one of these
    std::vector<AddressRange> reserved;  // and must not overlap any of these
};

// Placement for application firmware on an ERISC: L1 from the arch's app firmware base up to the
// first byte firmware may not use (the smaller of the arch's usable top and the descriptor's L1
// size); the launch flag word and the exit/console mailbox (protocol/exit_mailbox.h) are reserved.
PlacementRules erisc_placement(const hal::ArchMap& arch, uint32_t eth_l1_size);

// Placement for the Wormhole active-eth base firmware (firmware/base/): L1 [0, 0x9000), not over
// the heartbeat word (0x1C) or the platform status words ([0x1000, 0x2000)) that link training and
// the base firmware write at run time (firmware/include/protocol/erisc_base_fw.h).
PlacementRules base_firmware_placement();

struct ElfSegment {
    uint32_t index = 0;      // program header index (as readelf -l numbers them)
    uint32_t address = 0;    // load (physical) address
    uint32_t vaddr = 0;      // run (virtual) address
    uint32_t file_size = 0;  // bytes taken from the file; the rest of `bytes` is zero (bss)
    bool executable = false;
    bool writable = false;
    std::vector<uint8_t> bytes;  // memsz bytes

    uint64_t end() const { return uint64_t{address} + bytes.size(); }
};

struct ElfSymbol {
    std::string name;
    uint32_t value = 0;
    uint32_t size = 0;
};

class ElfImage {
  public:
    // Parse and validate: magic, ELF32, little-endian, EM_RISCV, ET_EXEC, header sizes, program
    // headers and segment file ranges inside the file, memsz >= filesz, no two loadable segments
    // overlapping, entry point inside a loaded executable segment. `name` prefixes messages.
    static ElfImage parse(std::span<const uint8_t> bytes, const std::string& name);
    // Read and parse a file. Error(BadInput) if it cannot be read.
    static ElfImage load_file(const std::string& path);

    const std::string& name() const { return name_; }
    uint32_t entry() const { return entry_; }
    const std::vector<ElfSegment>& segments() const { return segments_; }  // PT_LOAD, memsz > 0
    const std::vector<ElfSymbol>& symbols() const { return symbols_; }     // from .symtab, if any
    std::optional<uint32_t> symbol(std::string_view name) const;

    // Throws Error(BadElf) if a segment lies outside every loadable range or overlaps a reserved
    // one.
    void check_placement(const PlacementRules& rules) const;

  private:
    std::string name_;
    uint32_t entry_ = 0;
    std::vector<ElfSegment> segments_;
    std::vector<ElfSymbol> symbols_;
};

}  // namespace fabric
