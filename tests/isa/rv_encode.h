// RV32IM instruction encoder: one function per instruction, returning the 32-bit word.
//
// Covers every RV32I and M instruction, the Zicsr instructions (csrrw/csrrs/csrrc and their
// immediate forms, plus the csrr pseudo-instruction), fence, fence.i, ecall and ebreak. Operands
// are in assembler order (rd, rs1, rs2 / rd, rs1, imm / rs2, offset(rs1) for stores as
// sw(rs2, rs1, offset)). Branch and jump offsets are byte offsets relative to the instruction.
// Out-of-range immediates, misaligned offsets and register numbers above 31 throw
// std::invalid_argument: an encoder that silently truncated would make tests lie.
//
// Also here: a few pseudo-instructions (nop, mv, li, j, ret) and rv::Program, a tiny assembler
// buffer with labels for forward and backward branches. Header-only, host code only.
// Used by tests/isa (instruction self-tests) and tests/difftest (random programs vs qemu).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rv {

// Register numbers, with ABI names.
enum Reg : uint8_t {
    x0 = 0,
    x1,
    x2,
    x3,
    x4,
    x5,
    x6,
    x7,
    x8,
    x9,
    x10,
    x11,
    x12,
    x13,
    x14,
    x15,
    x16,
    x17,
    x18,
    x19,
    x20,
    x21,
    x22,
    x23,
    x24,
    x25,
    x26,
    x27,
    x28,
    x29,
    x30,
    x31,
    zero = 0,
    ra = 1,
    sp = 2,
    gp = 3,
    tp = 4,
    t0 = 5,
    t1 = 6,
    t2 = 7,
    s0 = 8,
    fp = 8,
    s1 = 9,
    a0 = 10,
    a1 = 11,
    a2 = 12,
    a3 = 13,
    a4 = 14,
    a5 = 15,
    a6 = 16,
    a7 = 17,
    s2 = 18,
    s3 = 19,
    s4 = 20,
    s5 = 21,
    s6 = 22,
    s7 = 23,
    s8 = 24,
    s9 = 25,
    s10 = 26,
    s11 = 27,
    t3 = 28,
    t4 = 29,
    t5 = 30,
    t6 = 31,
};

// CSR numbers the ERISC model implements (all read-only).
namespace csr {
inline constexpr uint32_t cycle = 0xC00, time = 0xC01, instret = 0xC02;
inline constexpr uint32_t cycleh = 0xC80, timeh = 0xC81, instreth = 0xC82;
inline constexpr uint32_t mcycle = 0xB00, minstret = 0xB02, mcycleh = 0xB80, minstreth = 0xB82;
inline constexpr uint32_t mhartid = 0xF14;
}  // namespace csr

namespace detail {

inline uint32_t reg(unsigned r) {
    if (r > 31)
        throw std::invalid_argument("rv: register x" + std::to_string(r) + " does not exist");
    return r;
}

inline void check_signed(int64_t v, int bits, const char* what) {
    const int64_t lo = -(int64_t{1} << (bits - 1));
    const int64_t hi = (int64_t{1} << (bits - 1)) - 1;
    if (v < lo || v > hi) {
        throw std::invalid_argument(std::string("rv: ") + what + " " + std::to_string(v) +
                                    " does not fit " + std::to_string(bits) + " signed bits");
    }
}

inline void check_unsigned(uint64_t v, int bits, const char* what) {
    if (v >= (uint64_t{1} << bits)) {
        throw std::invalid_argument(std::string("rv: ") + what + " " + std::to_string(v) +
                                    " does not fit " + std::to_string(bits) + " unsigned bits");
    }
}

inline void check_even(int32_t off, const char* what) {
    if (off & 1)
        throw std::invalid_argument(std::string("rv: ") + what + " offset " + std::to_string(off) +
                                    " is odd");
}

constexpr uint32_t OP_LUI = 0x37, OP_AUIPC = 0x17, OP_JAL = 0x6F, OP_JALR = 0x67, OP_BRANCH = 0x63,
                   OP_LOAD = 0x03, OP_STORE = 0x23, OP_IMM = 0x13, OP_REG = 0x33, OP_FENCE = 0x0F,
                   OP_SYSTEM = 0x73;

inline uint32_t r_type(uint32_t f7, unsigned rs2, unsigned rs1, uint32_t f3, unsigned rd,
                       uint32_t op) {
    return (f7 << 25) | (reg(rs2) << 20) | (reg(rs1) << 15) | (f3 << 12) | (reg(rd) << 7) | op;
}

inline uint32_t i_type(int32_t imm, unsigned rs1, uint32_t f3, unsigned rd, uint32_t op) {
    check_signed(imm, 12, "I-immediate");
    return (static_cast<uint32_t>(imm & 0xFFF) << 20) | (reg(rs1) << 15) | (f3 << 12) |
           (reg(rd) << 7) | op;
}

inline uint32_t s_type(int32_t imm, unsigned rs2, unsigned rs1, uint32_t f3, uint32_t op) {
    check_signed(imm, 12, "S-immediate");
    const uint32_t u = static_cast<uint32_t>(imm);
    return (((u >> 5) & 0x7F) << 25) | (reg(rs2) << 20) | (reg(rs1) << 15) | (f3 << 12) |
           ((u & 0x1F) << 7) | op;
}

inline uint32_t b_type(int32_t off, unsigned rs2, unsigned rs1, uint32_t f3) {
    check_signed(off, 13, "branch offset");
    check_even(off, "branch");
    const uint32_t u = static_cast<uint32_t>(off);
    return (((u >> 12) & 1) << 31) | (((u >> 5) & 0x3F) << 25) | (reg(rs2) << 20) |
           (reg(rs1) << 15) | (f3 << 12) | (((u >> 1) & 0xF) << 8) | (((u >> 11) & 1) << 7) |
           OP_BRANCH;
}

inline uint32_t shift_imm(uint32_t f7, unsigned rd, unsigned rs1, unsigned shamt, uint32_t f3) {
    check_unsigned(shamt, 5, "shift amount");
    return (f7 << 25) | (shamt << 20) | (reg(rs1) << 15) | (f3 << 12) | (reg(rd) << 7) | OP_IMM;
}

inline uint32_t csr_type(unsigned rd, uint32_t csr, uint32_t rs1_or_uimm, uint32_t f3) {
    check_unsigned(csr, 12, "CSR number");
    check_unsigned(rs1_or_uimm, 5, "CSR rs1/uimm");
    return (csr << 20) | (rs1_or_uimm << 15) | (f3 << 12) | (reg(rd) << 7) | OP_SYSTEM;
}

}  // namespace detail

// ---- RV32I: upper immediates and jumps ----------------------------------------------------------
// imm20 is the value of the upper 20 bits (lui rd, imm20 puts imm20 << 12 in rd).
inline uint32_t lui(unsigned rd, uint32_t imm20) {
    detail::check_unsigned(imm20, 20, "U-immediate");
    return (imm20 << 12) | (detail::reg(rd) << 7) | detail::OP_LUI;
}
inline uint32_t auipc(unsigned rd, uint32_t imm20) {
    detail::check_unsigned(imm20, 20, "U-immediate");
    return (imm20 << 12) | (detail::reg(rd) << 7) | detail::OP_AUIPC;
}
inline uint32_t jal(unsigned rd, int32_t off) {
    detail::check_signed(off, 21, "jal offset");
    detail::check_even(off, "jal");
    const uint32_t u = static_cast<uint32_t>(off);
    return (((u >> 20) & 1) << 31) | (((u >> 1) & 0x3FF) << 21) | (((u >> 11) & 1) << 20) |
           (((u >> 12) & 0xFF) << 12) | (detail::reg(rd) << 7) | detail::OP_JAL;
}
inline uint32_t jalr(unsigned rd, unsigned rs1, int32_t imm) {
    return detail::i_type(imm, rs1, 0, rd, detail::OP_JALR);
}

// ---- branches
// -------------------------------------------------------------------------------------
inline uint32_t beq(unsigned rs1, unsigned rs2, int32_t off) {
    return detail::b_type(off, rs2, rs1, 0);
}
inline uint32_t bne(unsigned rs1, unsigned rs2, int32_t off) {
    return detail::b_type(off, rs2, rs1, 1);
}
inline uint32_t blt(unsigned rs1, unsigned rs2, int32_t off) {
    return detail::b_type(off, rs2, rs1, 4);
}
inline uint32_t bge(unsigned rs1, unsigned rs2, int32_t off) {
    return detail::b_type(off, rs2, rs1, 5);
}
inline uint32_t bltu(unsigned rs1, unsigned rs2, int32_t off) {
    return detail::b_type(off, rs2, rs1, 6);
}
inline uint32_t bgeu(unsigned rs1, unsigned rs2, int32_t off) {
    return detail::b_type(off, rs2, rs1, 7);
}

// ---- loads: rd, offset(rs1)
// -----------------------------------------------------------------------
inline uint32_t lb(unsigned rd, unsigned rs1, int32_t off) {
    return detail::i_type(off, rs1, 0, rd, detail::OP_LOAD);
}
inline uint32_t lh(unsigned rd, unsigned rs1, int32_t off) {
    return detail::i_type(off, rs1, 1, rd, detail::OP_LOAD);
}
inline uint32_t lw(unsigned rd, unsigned rs1, int32_t off) {
    return detail::i_type(off, rs1, 2, rd, detail::OP_LOAD);
}
inline uint32_t lbu(unsigned rd, unsigned rs1, int32_t off) {
    return detail::i_type(off, rs1, 4, rd, detail::OP_LOAD);
}
inline uint32_t lhu(unsigned rd, unsigned rs1, int32_t off) {
    return detail::i_type(off, rs1, 5, rd, detail::OP_LOAD);
}

// ---- stores: rs2 (data), offset(rs1)
// --------------------------------------------------------------
inline uint32_t sb(unsigned rs2, unsigned rs1, int32_t off) {
    return detail::s_type(off, rs2, rs1, 0, detail::OP_STORE);
}
inline uint32_t sh(unsigned rs2, unsigned rs1, int32_t off) {
    return detail::s_type(off, rs2, rs1, 1, detail::OP_STORE);
}
inline uint32_t sw(unsigned rs2, unsigned rs1, int32_t off) {
    return detail::s_type(off, rs2, rs1, 2, detail::OP_STORE);
}

// ---- register-immediate
// ---------------------------------------------------------------------------
inline uint32_t addi(unsigned rd, unsigned rs1, int32_t imm) {
    return detail::i_type(imm, rs1, 0, rd, detail::OP_IMM);
}
inline uint32_t slti(unsigned rd, unsigned rs1, int32_t imm) {
    return detail::i_type(imm, rs1, 2, rd, detail::OP_IMM);
}
inline uint32_t sltiu(unsigned rd, unsigned rs1, int32_t imm) {
    return detail::i_type(imm, rs1, 3, rd, detail::OP_IMM);
}
inline uint32_t xori(unsigned rd, unsigned rs1, int32_t imm) {
    return detail::i_type(imm, rs1, 4, rd, detail::OP_IMM);
}
inline uint32_t ori(unsigned rd, unsigned rs1, int32_t imm) {
    return detail::i_type(imm, rs1, 6, rd, detail::OP_IMM);
}
inline uint32_t andi(unsigned rd, unsigned rs1, int32_t imm) {
    return detail::i_type(imm, rs1, 7, rd, detail::OP_IMM);
}
inline uint32_t slli(unsigned rd, unsigned rs1, unsigned shamt) {
    return detail::shift_imm(0x00, rd, rs1, shamt, 1);
}
inline uint32_t srli(unsigned rd, unsigned rs1, unsigned shamt) {
    return detail::shift_imm(0x00, rd, rs1, shamt, 5);
}
inline uint32_t srai(unsigned rd, unsigned rs1, unsigned shamt) {
    return detail::shift_imm(0x20, rd, rs1, shamt, 5);
}

// ---- register-register
// ----------------------------------------------------------------------------
inline uint32_t add(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x00, rs2, rs1, 0, rd, detail::OP_REG);
}
inline uint32_t sub(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x20, rs2, rs1, 0, rd, detail::OP_REG);
}
inline uint32_t sll(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x00, rs2, rs1, 1, rd, detail::OP_REG);
}
inline uint32_t slt(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x00, rs2, rs1, 2, rd, detail::OP_REG);
}
inline uint32_t sltu(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x00, rs2, rs1, 3, rd, detail::OP_REG);
}
inline uint32_t xor_(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x00, rs2, rs1, 4, rd, detail::OP_REG);
}
inline uint32_t srl(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x00, rs2, rs1, 5, rd, detail::OP_REG);
}
inline uint32_t sra(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x20, rs2, rs1, 5, rd, detail::OP_REG);
}
inline uint32_t or_(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x00, rs2, rs1, 6, rd, detail::OP_REG);
}
inline uint32_t and_(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x00, rs2, rs1, 7, rd, detail::OP_REG);
}

// ---- M extension
// ----------------------------------------------------------------------------------
inline uint32_t mul(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x01, rs2, rs1, 0, rd, detail::OP_REG);
}
inline uint32_t mulh(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x01, rs2, rs1, 1, rd, detail::OP_REG);
}
inline uint32_t mulhsu(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x01, rs2, rs1, 2, rd, detail::OP_REG);
}
inline uint32_t mulhu(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x01, rs2, rs1, 3, rd, detail::OP_REG);
}
inline uint32_t div(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x01, rs2, rs1, 4, rd, detail::OP_REG);
}
inline uint32_t divu(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x01, rs2, rs1, 5, rd, detail::OP_REG);
}
inline uint32_t rem(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x01, rs2, rs1, 6, rd, detail::OP_REG);
}
inline uint32_t remu(unsigned rd, unsigned rs1, unsigned rs2) {
    return detail::r_type(0x01, rs2, rs1, 7, rd, detail::OP_REG);
}

// ---- fences and system
// ---------------------------------------------------------------------------- fence pred, succ:
// 4-bit IORW sets (default iorw, iorw as the assembler's plain "fence").
inline uint32_t fence(uint32_t pred = 0xF, uint32_t succ = 0xF) {
    detail::check_unsigned(pred, 4, "fence pred");
    detail::check_unsigned(succ, 4, "fence succ");
    return (pred << 24) | (succ << 20) | detail::OP_FENCE;
}
inline uint32_t fence_i() {
    return (1u << 12) | detail::OP_FENCE;
}
inline uint32_t ecall() {
    return 0x00000073;
}
inline uint32_t ebreak() {
    return 0x00100073;
}

// ---- Zicsr
// ----------------------------------------------------------------------------------------
inline uint32_t csrrw(unsigned rd, uint32_t csr, unsigned rs1) {
    return detail::csr_type(rd, csr, detail::reg(rs1), 1);
}
inline uint32_t csrrs(unsigned rd, uint32_t csr, unsigned rs1) {
    return detail::csr_type(rd, csr, detail::reg(rs1), 2);
}
inline uint32_t csrrc(unsigned rd, uint32_t csr, unsigned rs1) {
    return detail::csr_type(rd, csr, detail::reg(rs1), 3);
}
inline uint32_t csrrwi(unsigned rd, uint32_t csr, uint32_t uimm) {
    return detail::csr_type(rd, csr, uimm, 5);
}
inline uint32_t csrrsi(unsigned rd, uint32_t csr, uint32_t uimm) {
    return detail::csr_type(rd, csr, uimm, 6);
}
inline uint32_t csrrci(unsigned rd, uint32_t csr, uint32_t uimm) {
    return detail::csr_type(rd, csr, uimm, 7);
}
inline uint32_t csrr(unsigned rd, uint32_t csr) {
    return csrrs(rd, csr, x0);
}

// ---- pseudo-instructions
// --------------------------------------------------------------------------
inline uint32_t nop() {
    return addi(x0, x0, 0);
}
inline uint32_t mv(unsigned rd, unsigned rs) {
    return addi(rd, rs, 0);
}
inline uint32_t j(int32_t off) {
    return jal(x0, off);
}
inline uint32_t ret() {
    return jalr(x0, ra, 0);
}

// li: one addi when the value fits 12 signed bits, else lui + addi (addi omitted when the low
// 12 bits are zero).
inline std::vector<uint32_t> li(unsigned rd, uint32_t value) {
    const int32_t sv = static_cast<int32_t>(value);
    if (sv >= -2048 && sv <= 2047) return {addi(rd, x0, sv)};
    const int32_t lo = static_cast<int32_t>(value << 20) >> 20;  // sign-extended low 12 bits
    const uint32_t hi = (value - static_cast<uint32_t>(lo)) >> 12;
    if (lo == 0) return {lui(rd, hi)};
    return {lui(rd, hi), addi(rd, rd, lo)};
}

// A program under construction: instructions at consecutive addresses from `base`, with labels.
// Branches and jumps to a label are encoded when the label is known (backward) or patched by
// resolve() (forward). words() resolves and returns the image.
class Program {
  public:
    explicit Program(uint32_t base = 0) : base_(base) {}

    uint32_t base() const { return base_; }
    uint32_t pc() const { return base_ + static_cast<uint32_t>(4 * code_.size()); }  // next address
    size_t size() const { return code_.size(); }

    Program& emit(uint32_t word) {
        code_.push_back(word);
        return *this;
    }
    Program& emit(const std::vector<uint32_t>& words) {
        code_.insert(code_.end(), words.begin(), words.end());
        return *this;
    }
    Program& li(unsigned rd, uint32_t value) { return emit(rv::li(rd, value)); }

    // Define `name` at the current address.
    Program& label(const std::string& name) {
        if (!labels_.emplace(name, pc()).second)
            throw std::invalid_argument("rv::Program: label '" + name + "' defined twice");
        return *this;
    }
    uint32_t address_of(const std::string& name) const {
        auto it = labels_.find(name);
        if (it == labels_.end())
            throw std::invalid_argument("rv::Program: label '" + name + "' is not defined");
        return it->second;
    }

    // Branch/jump to a label. Kinds: beq bne blt bge bltu bgeu (rs1, rs2), jal (rd).
    Program& beq(unsigned rs1, unsigned rs2, const std::string& l) {
        return fixup(Kind::Beq, rs1, rs2, l);
    }
    Program& bne(unsigned rs1, unsigned rs2, const std::string& l) {
        return fixup(Kind::Bne, rs1, rs2, l);
    }
    Program& blt(unsigned rs1, unsigned rs2, const std::string& l) {
        return fixup(Kind::Blt, rs1, rs2, l);
    }
    Program& bge(unsigned rs1, unsigned rs2, const std::string& l) {
        return fixup(Kind::Bge, rs1, rs2, l);
    }
    Program& bltu(unsigned rs1, unsigned rs2, const std::string& l) {
        return fixup(Kind::Bltu, rs1, rs2, l);
    }
    Program& bgeu(unsigned rs1, unsigned rs2, const std::string& l) {
        return fixup(Kind::Bgeu, rs1, rs2, l);
    }
    Program& jal(unsigned rd, const std::string& l) { return fixup(Kind::Jal, rd, 0, l); }
    Program& j(const std::string& l) { return fixup(Kind::Jal, x0, 0, l); }

    // The encoded program, all label references resolved.
    std::vector<uint32_t> words() {
        for (const Fixup& f : fixups_) {
            const int32_t off = static_cast<int32_t>(address_of(f.label) -
                                                     (base_ + 4 * static_cast<uint32_t>(f.index)));
            code_[f.index] = encode(f.kind, f.a, f.b, off);
        }
        return code_;
    }

  private:
    enum class Kind { Beq, Bne, Blt, Bge, Bltu, Bgeu, Jal };
    struct Fixup {
        size_t index;
        Kind kind;
        unsigned a, b;
        std::string label;
    };

    static uint32_t encode(Kind k, unsigned a, unsigned b, int32_t off) {
        switch (k) {
            case Kind::Beq:
                return rv::beq(a, b, off);
            case Kind::Bne:
                return rv::bne(a, b, off);
            case Kind::Blt:
                return rv::blt(a, b, off);
            case Kind::Bge:
                return rv::bge(a, b, off);
            case Kind::Bltu:
                return rv::bltu(a, b, off);
            case Kind::Bgeu:
                return rv::bgeu(a, b, off);
            case Kind::Jal:
                return rv::jal(a, off);
            default:
                throw std::logic_error("rv::Program: unknown fixup kind");
        }
    }

    Program& fixup(Kind k, unsigned a, unsigned b, const std::string& l) {
        fixups_.push_back(Fixup{code_.size(), k, a, b, l});
        code_.push_back(0);  // patched by words()
        return *this;
    }

    uint32_t base_;
    std::vector<uint32_t> code_;
    std::map<std::string, uint32_t> labels_;
    std::vector<Fixup> fixups_;
};

}  // namespace rv
