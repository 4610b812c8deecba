// A tiny ELF32 writer for tests, so ELF loader and launch tests need no cross toolchain, plus
// hand-encoded RV32I instructions for programs the simulator can run. Every header field can be
// overridden to produce exactly the malformed image a test wants.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace fabric::test {

inline constexpr uint32_t kPfX = 1, kPfW = 2, kPfR = 4;

struct TestSegment {
    uint32_t paddr = 0;
    std::vector<uint8_t> data;  // file bytes
    uint32_t memsz = 0;         // 0: data.size()
    uint32_t flags = kPfR | kPfX;
    uint32_t type = 1;    // PT_LOAD
    int64_t vaddr = -1;   // -1: same as paddr
    int64_t offset = -1;  // -1: where the writer puts the data
    int64_t filesz = -1;  // -1: data.size()
};

struct TestElf {
    uint8_t elf_class = 1;   // ELFCLASS32
    uint8_t data = 1;        // little-endian
    uint16_t type = 2;       // ET_EXEC
    uint16_t machine = 243;  // EM_RISCV
    uint32_t entry = 0;
    uint16_t ehsize = 52;
    uint16_t phentsize = 32;
    std::vector<TestSegment> segments;
    std::vector<std::pair<std::string, uint32_t>> symbols;  // written to .symtab/.strtab

    std::vector<uint8_t> build() const {
        // ELF header and program headers at their full size at once: growing a 52-byte vector
        // with resize() trips GCC 12's -O3 -Warray-bounds (a false positive in the inlined copy).
        const uint32_t phoff = 52;
        std::vector<uint8_t> out(phoff + 32 * segments.size(), 0);
        std::vector<uint32_t> offsets;
        for (const auto& s : segments) {
            align(out, 4);
            offsets.push_back(static_cast<uint32_t>(out.size()));
            out.insert(out.end(), s.data.begin(), s.data.end());
        }
        uint32_t shoff = 0;
        uint16_t shnum = 0;
        uint16_t shstrndx = 0;
        if (!symbols.empty()) {
            // One string table holds the symbol and the section names.
            std::string strtab(1, '\0');
            const uint32_t symtab_name = static_cast<uint32_t>(strtab.size());
            strtab += ".symtab";
            strtab.push_back('\0');
            const uint32_t strtab_name = static_cast<uint32_t>(strtab.size());
            strtab += ".strtab";
            strtab.push_back('\0');
            std::vector<uint8_t> symtab(16, 0);  // null symbol
            for (const auto& [name, value] : symbols) {
                std::vector<uint8_t> sym(16, 0);
                put32(sym, 0, static_cast<uint32_t>(strtab.size()));
                put32(sym, 4, value);
                sym[12] = 0x12;  // STB_GLOBAL, STT_FUNC
                put16(sym, 14, 1);
                symtab.insert(symtab.end(), sym.begin(), sym.end());
                strtab += name;
                strtab.push_back('\0');
            }
            align(out, 4);
            const uint32_t symoff = static_cast<uint32_t>(out.size());
            out.insert(out.end(), symtab.begin(), symtab.end());
            const uint32_t stroff = static_cast<uint32_t>(out.size());
            out.insert(out.end(), strtab.begin(), strtab.end());
            align(out, 4);
            shoff = static_cast<uint32_t>(out.size());
            shnum = 3;
            shstrndx = 2;
            out.resize(out.size() + 3 * 40, 0);
            put32(out, shoff + 40 + 0, symtab_name);
            put32(out, shoff + 80 + 0, strtab_name);
            // [1] .symtab: type 2, offset, size, link 2, entsize 16
            put32(out, shoff + 40 + 4, 2);
            put32(out, shoff + 40 + 16, symoff);
            put32(out, shoff + 40 + 20, static_cast<uint32_t>(symtab.size()));
            put32(out, shoff + 40 + 24, 2);
            put32(out, shoff + 40 + 28, 1);  // sh_info: first global symbol
            put32(out, shoff + 40 + 36, 16);
            // [2] .strtab: type 3
            put32(out, shoff + 80 + 4, 3);
            put32(out, shoff + 80 + 16, stroff);
            put32(out, shoff + 80 + 20, static_cast<uint32_t>(strtab.size()));
        }
        const uint8_t ident[] = {0x7f, 'E', 'L', 'F', elf_class, data, 1, 0};
        std::memcpy(out.data(), ident, sizeof ident);
        put16(out, 16, type);
        put16(out, 18, machine);
        put32(out, 20, 1);
        put32(out, 24, entry);
        put32(out, 28, phoff);
        put32(out, 32, shoff);
        put16(out, 40, ehsize);
        put16(out, 42, phentsize);
        put16(out, 44, static_cast<uint16_t>(segments.size()));
        put16(out, 46, shnum ? 40 : 0);
        put16(out, 48, shnum);
        put16(out, 50, shstrndx);
        for (size_t i = 0; i < segments.size(); ++i) {
            const auto& s = segments[i];
            const uint32_t ph = phoff + 32 * static_cast<uint32_t>(i);
            const uint32_t filesz = s.filesz >= 0 ? static_cast<uint32_t>(s.filesz)
                                                  : static_cast<uint32_t>(s.data.size());
            put32(out, ph + 0, s.type);
            put32(out, ph + 4, s.offset >= 0 ? static_cast<uint32_t>(s.offset) : offsets[i]);
            put32(out, ph + 8, s.vaddr >= 0 ? static_cast<uint32_t>(s.vaddr) : s.paddr);
            put32(out, ph + 12, s.paddr);
            put32(out, ph + 16, filesz);
            put32(out, ph + 20, s.memsz ? s.memsz : static_cast<uint32_t>(s.data.size()));
            put32(out, ph + 24, s.flags);
            put32(out, ph + 28, 4);
        }
        return out;
    }

    static void put16(std::vector<uint8_t>& b, size_t off, uint16_t v) {
        b[off] = static_cast<uint8_t>(v);
        b[off + 1] = static_cast<uint8_t>(v >> 8);
    }
    static void put32(std::vector<uint8_t>& b, size_t off, uint32_t v) {
        for (int i = 0; i < 4; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
    }
    static void align(std::vector<uint8_t>& b, size_t a) {
        while (b.size() % a) b.push_back(0);
    }
};

// --- RV32I encodings (just what test programs need) ---
namespace rv {
inline uint32_t lui(uint32_t rd, uint32_t imm20) {
    return (imm20 << 12) | (rd << 7) | 0x37;
}
inline uint32_t addi(uint32_t rd, uint32_t rs1, int32_t imm) {
    return (static_cast<uint32_t>(imm & 0xFFF) << 20) | (rs1 << 15) | (rd << 7) | 0x13;
}
inline uint32_t sw(uint32_t rs2, uint32_t rs1, int32_t imm) {
    const uint32_t i = static_cast<uint32_t>(imm) & 0xFFF;
    return ((i >> 5) << 25) | (rs2 << 20) | (rs1 << 15) | (2u << 12) | ((i & 0x1F) << 7) | 0x23;
}
inline constexpr uint32_t kEbreak = 0x00100073;
inline constexpr uint32_t kJalSelf = 0x0000006F;  // jal x0, 0: spin forever
}  // namespace rv

inline std::vector<uint8_t> words_to_bytes(const std::vector<uint32_t>& words) {
    std::vector<uint8_t> b;
    for (uint32_t w : words) {
        for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(w >> (8 * i)));
    }
    return b;
}

// A program that prints `text` through the sim-control console (0xFE000000), then writes
// `status` to the sim-control exit register (0xFE000004) and spins.
inline std::vector<uint32_t> console_exit_program(const std::string& text, uint32_t status) {
    std::vector<uint32_t> p;
    p.push_back(rv::lui(5, 0xFE000));  // t0 = 0xFE000000
    for (char c : text) {
        p.push_back(rv::addi(6, 0, static_cast<unsigned char>(c)));
        p.push_back(rv::sw(6, 5, 0));
    }
    // status may exceed 12 bits: lui + addi with the usual rounding.
    const uint32_t hi = (status + 0x800) >> 12;
    const int32_t lo = static_cast<int32_t>(status - (hi << 12));
    p.push_back(rv::lui(6, hi & 0xFFFFF));
    p.push_back(rv::addi(6, 6, lo));
    p.push_back(rv::sw(6, 5, 4));
    p.push_back(rv::kJalSelf);
    return p;
}

// A one-segment executable image of `program` at `base`, entry at base.
inline std::vector<uint8_t> program_elf(const std::vector<uint32_t>& program, uint32_t base) {
    TestElf e;
    e.entry = base;
    e.segments.push_back({.paddr = base, .data = words_to_bytes(program)});
    e.symbols.push_back({"_start", base});
    return e.build();
}

}  // namespace fabric::test
