#include "program_gen.h"

#include <stdexcept>

#include "rv_encode.h"

namespace difftest {

namespace E = rv;

uint64_t Rng::next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t Rng::below(uint32_t n) {
    return static_cast<uint32_t>((static_cast<uint64_t>(u32()) * n) >> 32);
}

int32_t Rng::range(int32_t lo, int32_t hi) {
    return lo + static_cast<int32_t>(below(static_cast<uint32_t>(hi - lo) + 1));
}

std::string reg_name(uint32_t r) {
    // Appended rather than `"x" + std::to_string(r)`: GCC 12 at -O3 inlines that operator+ into a
    // memcpy it wrongly flags as overlapping (-Werror=restrict, GCC bug 105329).
    std::string name = "x";
    name += std::to_string(r);
    return name;
}

namespace {

using RrFn = uint32_t (*)(uint32_t, uint32_t, uint32_t);
using RiFn = uint32_t (*)(uint32_t, uint32_t, int32_t);
using BrFn = uint32_t (*)(uint32_t, uint32_t, int32_t);

struct RrOp {
    const char* name;
    RrFn enc;
};
struct RiOp {
    const char* name;
    RiFn enc;
};
struct BrOp {
    const char* name;
    BrFn enc;
};

// Register-register ALU ops (RV32I) and the M extension.
const RrOp kAluRr[] = {
    {"add", [](uint32_t d, uint32_t a, uint32_t b) { return E::add(d, a, b); }},
    {"sub", [](uint32_t d, uint32_t a, uint32_t b) { return E::sub(d, a, b); }},
    {"sll", [](uint32_t d, uint32_t a, uint32_t b) { return E::sll(d, a, b); }},
    {"slt", [](uint32_t d, uint32_t a, uint32_t b) { return E::slt(d, a, b); }},
    {"sltu", [](uint32_t d, uint32_t a, uint32_t b) { return E::sltu(d, a, b); }},
    {"xor", [](uint32_t d, uint32_t a, uint32_t b) { return E::xor_(d, a, b); }},
    {"srl", [](uint32_t d, uint32_t a, uint32_t b) { return E::srl(d, a, b); }},
    {"sra", [](uint32_t d, uint32_t a, uint32_t b) { return E::sra(d, a, b); }},
    {"or", [](uint32_t d, uint32_t a, uint32_t b) { return E::or_(d, a, b); }},
    {"and", [](uint32_t d, uint32_t a, uint32_t b) { return E::and_(d, a, b); }},
};
const RrOp kMulDiv[] = {
    {"mul", [](uint32_t d, uint32_t a, uint32_t b) { return E::mul(d, a, b); }},
    {"mulh", [](uint32_t d, uint32_t a, uint32_t b) { return E::mulh(d, a, b); }},
    {"mulhsu", [](uint32_t d, uint32_t a, uint32_t b) { return E::mulhsu(d, a, b); }},
    {"mulhu", [](uint32_t d, uint32_t a, uint32_t b) { return E::mulhu(d, a, b); }},
    {"div", [](uint32_t d, uint32_t a, uint32_t b) { return E::div(d, a, b); }},
    {"divu", [](uint32_t d, uint32_t a, uint32_t b) { return E::divu(d, a, b); }},
    {"rem", [](uint32_t d, uint32_t a, uint32_t b) { return E::rem(d, a, b); }},
    {"remu", [](uint32_t d, uint32_t a, uint32_t b) { return E::remu(d, a, b); }},
};
const RiOp kAluImm[] = {
    {"addi", [](uint32_t d, uint32_t a, int32_t i) { return E::addi(d, a, i); }},
    {"slti", [](uint32_t d, uint32_t a, int32_t i) { return E::slti(d, a, i); }},
    {"sltiu", [](uint32_t d, uint32_t a, int32_t i) { return E::sltiu(d, a, i); }},
    {"xori", [](uint32_t d, uint32_t a, int32_t i) { return E::xori(d, a, i); }},
    {"ori", [](uint32_t d, uint32_t a, int32_t i) { return E::ori(d, a, i); }},
    {"andi", [](uint32_t d, uint32_t a, int32_t i) { return E::andi(d, a, i); }},
};
const RiOp kShiftImm[] = {
    {"slli",
     [](uint32_t d, uint32_t a, int32_t s) { return E::slli(d, a, static_cast<uint32_t>(s)); }},
    {"srli",
     [](uint32_t d, uint32_t a, int32_t s) { return E::srli(d, a, static_cast<uint32_t>(s)); }},
    {"srai",
     [](uint32_t d, uint32_t a, int32_t s) { return E::srai(d, a, static_cast<uint32_t>(s)); }},
};
const BrOp kBranches[] = {
    {"beq", [](uint32_t a, uint32_t b, int32_t o) { return E::beq(a, b, o); }},
    {"bne", [](uint32_t a, uint32_t b, int32_t o) { return E::bne(a, b, o); }},
    {"blt", [](uint32_t a, uint32_t b, int32_t o) { return E::blt(a, b, o); }},
    {"bge", [](uint32_t a, uint32_t b, int32_t o) { return E::bge(a, b, o); }},
    {"bltu", [](uint32_t a, uint32_t b, int32_t o) { return E::bltu(a, b, o); }},
    {"bgeu", [](uint32_t a, uint32_t b, int32_t o) { return E::bgeu(a, b, o); }},
};

// Loads and stores by access size.
struct LoadOp {
    const char* name;
    uint32_t size;
    RiFn enc;
};
const LoadOp kLoads[] = {
    {"lb", 1, [](uint32_t d, uint32_t a, int32_t i) { return E::lb(d, a, i); }},
    {"lbu", 1, [](uint32_t d, uint32_t a, int32_t i) { return E::lbu(d, a, i); }},
    {"lh", 2, [](uint32_t d, uint32_t a, int32_t i) { return E::lh(d, a, i); }},
    {"lhu", 2, [](uint32_t d, uint32_t a, int32_t i) { return E::lhu(d, a, i); }},
    {"lw", 4, [](uint32_t d, uint32_t a, int32_t i) { return E::lw(d, a, i); }},
};
// enc(value_reg, base_reg, offset)
struct StoreOp {
    const char* name;
    uint32_t size;
    RiFn enc;
};
const StoreOp kStores[] = {
    {"sb", 1, [](uint32_t v, uint32_t a, int32_t i) { return E::sb(v, a, i); }},
    {"sh", 2, [](uint32_t v, uint32_t a, int32_t i) { return E::sh(v, a, i); }},
    {"sw", 4, [](uint32_t v, uint32_t a, int32_t i) { return E::sw(v, a, i); }},
};

template <typename T, size_t N>
const T& pick(Rng& rng, const T (&arr)[N]) {
    return arr[rng.below(N)];
}

constexpr uint32_t kInteresting[] = {
    0,          1,          0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 2,          0xFFFFFFFE,
    0x80000001, 0x0000FFFF, 0xFFFF0000, 0x00008000, 0xFFFF8000, 0x000007FF, 0x00000800,
    0xFFFFF800, 0x000000FF, 0x00000080, 0xFFFFFF80, 31,         32,         33,
    0x55555555, 0xAAAAAAAA, 0x0000001F, 0xFFFFFFE0,
};

// A branch or jump whose target is resolved after every block has been laid out.
struct Fixup {
    uint32_t word;      // index of the instruction in the body
    uint32_t block;     // block it belongs to
    uint32_t distance;  // target = the distance-th compatible block boundary after this block
    bool is_jal;
    const BrOp* br;  // for branches
    uint32_t rs1, rs2;
};

enum class Kind {
    AluRr,
    MulDiv,
    AluImm,
    ShiftImm,
    Lui,
    Auipc,
    Load,
    Store,
    MemPair,
    Hazard,
    Branch,
    Jump,
    JalLink,
    Jalr,
    Loop
};

struct KindWeight {
    Kind kind;
    uint32_t weight;
};
constexpr KindWeight kWeights[] = {
    {Kind::AluRr, 14},  {Kind::MulDiv, 10}, {Kind::AluImm, 12}, {Kind::ShiftImm, 6},
    {Kind::Lui, 3},     {Kind::Auipc, 3},   {Kind::Load, 12},   {Kind::Store, 10},
    {Kind::MemPair, 5}, {Kind::Hazard, 7},  {Kind::Branch, 11}, {Kind::Jump, 3},
    {Kind::JalLink, 3}, {Kind::Jalr, 4},    {Kind::Loop, 4},
};

class Generator {
  public:
    Generator(uint64_t seed, const GenOptions& opt) : rng_(seed), opt_(opt) { prog_.seed = seed; }

    Program run() {
        choose_reserved();
        prog_.data_init.resize(kDataBytes);
        for (auto& b : prog_.data_init) b = static_cast<uint8_t>(rng_.u32());
        emit_init();

        for (uint32_t u = 0; u < opt_.units && u < opt_.keep_units; ++u) {
            unit_ = u;
            Kind k = pick_kind(/*allow_loop=*/true);
            if (k == Kind::Loop) {
                emit_loop();
            } else {
                emit_block(k);
            }
            prog_.units = u + 1;
        }
        end_word_ = static_cast<uint32_t>(prog_.body.size());
        resolve_fixups();
        emit_register_dump();
        return std::move(prog_);
    }

  private:
    Rng rng_;
    GenOptions opt_;
    Program prog_;
    uint32_t unit_ = 0;
    uint32_t scope_ = 0;  // current loop id (0 = not in a loop)
    uint32_t next_loop_id_ = 1;
    std::vector<uint32_t> block_scope_;
    std::vector<Fixup> fixups_;
    uint32_t end_word_ = 0;
    bool counting_ = false;  // count words in the histogram

    void put(const char* mnemonic, uint32_t word) {
        prog_.body.push_back(word);
        prog_.mnemonics.push_back(mnemonic);
        if (counting_) prog_.histogram[mnemonic]++;
    }
    uint32_t here() const { return static_cast<uint32_t>(prog_.body.size()); }

    void choose_reserved() {
        // Three distinct registers from x1..x31, different per seed so that, across seeds, every
        // register serves as an ordinary destination.
        uint32_t r[3];
        for (int i = 0; i < 3; ++i) {
            bool dup;
            do {
                r[i] = 1 + rng_.below(31);
                dup = false;
                for (int j = 0; j < i; ++j) dup |= r[j] == r[i];
            } while (dup);
        }
        prog_.code_reg = r[0];
        prog_.data_reg = r[1];
        prog_.loop_reg = r[2];
    }

    // How many block boundaries ahead a branch lands; 1 (the next block) makes taken and not taken
    // reach the same place, so it is rare.
    uint32_t distance() { return rng_.chance(10) ? 1 : 2 + rng_.below(6); }

    // Destination for ordinary ops: anything but the base registers and the loop counter; x0
    // sometimes (the write must be dropped).
    uint32_t rd() {
        if (rng_.chance(4)) return 0;
        uint32_t r;
        do r = 1 + rng_.below(31);
        while (prog_.reserved(r) || r == prog_.loop_reg);
        return r;
    }
    // Source: anything but the base registers (whose values differ between platforms).
    uint32_t rs() {
        if (rng_.chance(6)) return 0;
        uint32_t r;
        do r = 1 + rng_.below(31);
        while (prog_.reserved(r));
        return r;
    }
    // Scratch register for address arithmetic: a real destination (not x0).
    uint32_t tmp() {
        uint32_t r;
        do r = 1 + rng_.below(31);
        while (prog_.reserved(r) || r == prog_.loop_reg);
        return r;
    }

    uint32_t interesting() {
        if (rng_.chance(60)) return pick(rng_, kInteresting);
        switch (rng_.below(4)) {
            case 0:
                return rng_.u32();
            case 1:
                return static_cast<uint32_t>(rng_.range(-64, 64));
            case 2:
                return 1u << rng_.below(32);
            default:
                return rng_.u32() >> rng_.below(32);
        }
    }
    int32_t imm12() {
        static constexpr int32_t kEdge[] = {0, 1, -1, 2047, -2048, 2, -2, 0x7FF & 0x555, -0x555};
        if (rng_.chance(40)) return pick(rng_, kEdge);
        return rng_.range(-2048, 2047);
    }

    // rd = value, as lui+addi or a single addi.
    void li(uint32_t r, uint32_t value) {
        int32_t lo = static_cast<int32_t>(value << 20) >> 20;  // sign-extended low 12 bits
        uint32_t hi = (value - static_cast<uint32_t>(lo)) >> 12;
        if (hi == 0) {
            put("addi", E::addi(r, 0, lo));
            return;
        }
        put("lui", E::lui(r, hi));
        if (lo != 0 || rng_.chance(20)) put("addi", E::addi(r, r, lo));
    }
    // Sometimes load an interesting value into a source register right before it is used.
    void maybe_seed(uint32_t r, uint32_t percent) {
        if (r != 0 && r != prog_.loop_reg && rng_.chance(percent)) li(r, interesting());
    }

    void emit_init() {
        for (uint32_t r = 1; r < 32; ++r) {
            if (prog_.reserved(r)) continue;
            li(r, r == prog_.loop_reg ? 0 : interesting());
        }
        counting_ = true;
    }

    void emit_register_dump() {
        counting_ = false;
        for (uint32_t r = 0; r < 32; ++r) {
            if (prog_.reserved(r)) continue;
            put("sw", E::sw(r, prog_.data_reg, kSigRegOffset + static_cast<int32_t>(4 * r)));
        }
    }

    Kind pick_kind(bool allow_loop) {
        uint32_t total = 0;
        for (auto& kw : kWeights) total += (kw.kind == Kind::Loop && !allow_loop) ? 0 : kw.weight;
        uint32_t x = rng_.below(total);
        for (auto& kw : kWeights) {
            uint32_t w = (kw.kind == Kind::Loop && !allow_loop) ? 0 : kw.weight;
            if (x < w) return kw.kind;
            x -= w;
        }
        return Kind::AluRr;
    }

    void begin_block(const char* kind) {
        Block b;
        b.first_word = here();
        b.unit = unit_;
        b.kind = kind;
        prog_.blocks.push_back(b);
        block_scope_.push_back(scope_);
    }
    void end_block() { prog_.blocks.back().words = here() - prog_.blocks.back().first_word; }
    uint32_t cur_block() const { return static_cast<uint32_t>(prog_.blocks.size() - 1); }

    // Aligned byte offset from the data-base register for an access of `size` bytes.
    int32_t data_offset(uint32_t size) {
        int32_t lo = -kDataBaseOffset;
        int32_t hi =
            static_cast<int32_t>(kDataBytes) - kDataBaseOffset - static_cast<int32_t>(size);
        int32_t off = rng_.range(lo, hi);
        return off & ~static_cast<int32_t>(size - 1);
    }

    // Emit a memory access at data-base + off; either directly off the data-base register or via a
    // scratch register that is rebased afterwards. `emit(base, imm)` emits the access itself and
    // returns the register it writes (or 0).
    template <typename F>
    void access(int32_t off, uint32_t avoid_tmp, F emit) {
        if (rng_.chance(55)) {
            emit(prog_.data_reg, off);
            return;
        }
        uint32_t t;
        do t = tmp();
        while (t == avoid_tmp);
        int32_t pre = rng_.range(-1024, 1024);
        put("addi", E::addi(t, prog_.data_reg, pre));
        uint32_t written = emit(t, off - pre);
        if (written != t) put("sub", E::sub(t, t, prog_.data_reg));  // t = pre again
    }

    uint32_t emit_load() {
        const LoadOp& op = pick(rng_, kLoads);
        uint32_t d = rd();
        access(data_offset(op.size), 0, [&](uint32_t base, int32_t imm) {
            put(op.name, op.enc(d, base, imm));
            return d;
        });
        return d;
    }
    void emit_store() {
        const StoreOp& op = pick(rng_, kStores);
        uint32_t v = rs();
        maybe_seed(v, 20);
        access(data_offset(op.size), v, [&](uint32_t base, int32_t imm) {
            put(op.name, op.enc(v, base, imm));
            return 0u;
        });
    }

    uint32_t emit_alu_rr(const RrOp* table, size_t n, bool corners = false) {
        const RrOp& op = table[rng_.below(static_cast<uint32_t>(n))];
        uint32_t a = rs(), b = rng_.chance(10) ? a : rs();
        if (corners && a != b && a != 0 && b != 0 && a != prog_.loop_reg && b != prog_.loop_reg &&
            rng_.chance(20)) {
            // Operand pairs where M-extension results are special (division by zero, overflow).
            static constexpr uint32_t kPairs[][2] = {{0x80000000, 0xFFFFFFFF},
                                                     {0x80000000, 0x80000000},
                                                     {0x7FFFFFFF, 0xFFFFFFFF},
                                                     {0xFFFFFFFF, 0xFFFFFFFF},
                                                     {0x80000000, 0},
                                                     {0xFFFFFFFF, 0},
                                                     {0, 0},
                                                     {0x7FFFFFFF, 0x7FFFFFFF},
                                                     {0x80000000, 1},
                                                     {1, 0x80000000},
                                                     {0xFFFFFFFF, 0x80000000},
                                                     {5, 0xFFFFFFFD}};
            const auto& pr = pick(rng_, kPairs);
            li(a, pr[0]);
            li(b, pr[1]);
        } else {
            maybe_seed(a, 30);
            if (b != a) maybe_seed(b, 30);
        }
        uint32_t d = rng_.chance(15) ? (a != 0 && a != prog_.loop_reg ? a : rd()) : rd();
        put(op.name, op.enc(d, a, b));
        return d;
    }

    void emit_block(Kind k) {
        int32_t result = -1;  // register holding the block's result, if any
        switch (k) {
            case Kind::AluRr: {
                begin_block("alu");
                result = static_cast<int32_t>(emit_alu_rr(kAluRr, std::size(kAluRr)));
                break;
            }
            case Kind::MulDiv: {
                begin_block("muldiv");
                result = static_cast<int32_t>(
                    emit_alu_rr(kMulDiv, std::size(kMulDiv), /*corners=*/true));
                break;
            }
            case Kind::AluImm: {
                begin_block("alu-imm");
                const RiOp& op = pick(rng_, kAluImm);
                uint32_t a = rs();
                maybe_seed(a, 25);
                uint32_t d = rd();
                put(op.name, op.enc(d, a, imm12()));
                result = static_cast<int32_t>(d);
                break;
            }
            case Kind::ShiftImm: {
                begin_block("shift-imm");
                const RiOp& op = pick(rng_, kShiftImm);
                static constexpr int32_t kEdge[] = {0, 1, 31, 16, 30};
                int32_t sh = rng_.chance(40) ? pick(rng_, kEdge) : rng_.range(0, 31);
                uint32_t a = rs();
                maybe_seed(a, 25);
                uint32_t d = rd();
                put(op.name, op.enc(d, a, sh));
                result = static_cast<int32_t>(d);
                break;
            }
            case Kind::Lui: {
                begin_block("lui");
                uint32_t imm =
                    rng_.chance(30) ? (rng_.chance(50) ? 0x80000u : 0xFFFFFu) : (rng_.u32() >> 12);
                uint32_t d = rd();
                put("lui", E::lui(d, imm));
                result = static_cast<int32_t>(d);
                break;
            }
            case Kind::Auipc: {
                begin_block("auipc");
                uint32_t d = rd();
                uint32_t imm = rng_.chance(30) ? 0u : (rng_.u32() >> 12);
                put("auipc", E::auipc(d, imm));
                if (d != 0) put("sub", E::sub(d, d, prog_.code_reg));
                result = static_cast<int32_t>(d);
                break;
            }
            case Kind::Load: {
                begin_block("load");
                result = static_cast<int32_t>(emit_load());
                break;
            }
            case Kind::Store: {
                begin_block("store");
                emit_store();
                break;
            }
            case Kind::MemPair: {
                // A store immediately followed by a load of (part of) the same word, with a
                // different width: store-to-load forwarding and byte-lane merging.
                begin_block("store-load");
                const StoreOp& st = pick(rng_, kStores);
                const LoadOp& ld = pick(rng_, kLoads);
                int32_t word = data_offset(4);
                int32_t st_off = word + static_cast<int32_t>(rng_.below(4 / st.size) * st.size);
                int32_t ld_off = word + static_cast<int32_t>(rng_.below(4 / ld.size) * ld.size);
                uint32_t v = rs();
                maybe_seed(v, 40);
                put(st.name, st.enc(v, prog_.data_reg, st_off));
                uint32_t d = rd();
                put(ld.name, ld.enc(d, prog_.data_reg, ld_off));
                result = static_cast<int32_t>(d);
                break;
            }
            case Kind::Hazard: {
                // A chain in which every instruction consumes the previous result at once
                // (forwarding and load-use interlocks).
                begin_block("hazard");
                uint32_t prev = rs();
                maybe_seed(prev, 30);
                uint32_t n = 2 + rng_.below(3);
                for (uint32_t i = 0; i < n; ++i) {
                    uint32_t d = tmp();
                    switch (rng_.below(5)) {
                        case 0: {
                            const RrOp& op = pick(rng_, kAluRr);
                            uint32_t o = rs();
                            put(op.name, rng_.chance(50) ? op.enc(d, prev, o) : op.enc(d, o, prev));
                            break;
                        }
                        case 1: {
                            const RrOp& op = pick(rng_, kMulDiv);
                            uint32_t o = rs();
                            put(op.name, rng_.chance(50) ? op.enc(d, prev, o) : op.enc(d, o, prev));
                            break;
                        }
                        case 2: {
                            const RiOp& op = pick(rng_, kAluImm);
                            put(op.name, op.enc(d, prev, imm12()));
                            break;
                        }
                        case 3: {  // load, then the next link uses the loaded value
                            const LoadOp& op = pick(rng_, kLoads);
                            put(op.name, op.enc(d, prog_.data_reg, data_offset(op.size)));
                            break;
                        }
                        default: {  // store the previous result, then reload it
                            const StoreOp& st = pick(rng_, kStores);
                            int32_t off = data_offset(4);
                            put(st.name, st.enc(prev, prog_.data_reg, off));
                            put("lw", E::lw(d, prog_.data_reg, off));
                            break;
                        }
                    }
                    prev = d;
                }
                result = static_cast<int32_t>(prev);
                if (rng_.chance(25)) {
                    // ... and a branch that decides on the result at once.
                    const BrOp& op = pick(rng_, kBranches);
                    uint32_t o = rng_.chance(30) ? 0 : rs();
                    bool first = rng_.chance(50);
                    fixups_.push_back({here(), cur_block(), distance(), false, &op,
                                       first ? prev : o, first ? o : prev});
                    put(op.name, 0);
                    result = -1;  // a trace store after the branch would only run when not taken
                }
                break;
            }
            case Kind::Branch: {
                begin_block("branch");
                const BrOp& op = pick(rng_, kBranches);
                uint32_t a = rs();
                uint32_t b;
                switch (rng_.below(4)) {
                    case 0:
                        b = a;
                        break;  // equal operands
                    case 1:
                        b = 0;
                        break;  // against zero
                    default:
                        b = rs();
                        break;
                }
                maybe_seed(a, 35);
                if (b != a) maybe_seed(b, 35);
                if (rng_.chance(50)) std::swap(a, b);
                fixups_.push_back({here(), cur_block(), distance(), false, &op, a, b});
                put(op.name, 0);
                break;
            }
            case Kind::Jump: {
                begin_block("jump");
                fixups_.push_back({here(), cur_block(), distance(), true, nullptr, 0, 0});
                put("jal", 0);
                break;
            }
            case Kind::JalLink: {
                // jal with a link register over a few never-executed words to a landing pad that
                // rebases the link value. Nothing else may branch to the pad.
                begin_block("jal");
                uint32_t d = rd();
                uint32_t skip = rng_.below(3);
                put("jal", E::jal(d, static_cast<int32_t>(4 * (skip + 1))));
                emit_junk(skip);
                if (d != 0) put("sub", E::sub(d, d, prog_.code_reg));
                result = static_cast<int32_t>(d);
                break;
            }
            case Kind::Jalr: {
                // auipc t,0 ; [addi t,t,D] ; jalr d, imm(t) -> pad ; junk ; pad: rebase d and t.
                begin_block("jalr");
                uint32_t t = tmp();
                uint32_t d = rd();
                uint32_t skip = rng_.below(3);
                bool adjust = rng_.chance(50);
                int32_t D = adjust ? rng_.range(-1024, 1024) : 0;
                uint32_t auipc_word = here();
                put("auipc", E::auipc(t, 0));
                if (adjust) put("addi", E::addi(t, t, D));
                uint32_t jalr_word = here();
                uint32_t pad_word = jalr_word + 1 + skip;
                int32_t imm = static_cast<int32_t>(4 * (pad_word - auipc_word)) - D;
                if (rng_.chance(30)) imm += 1;  // jalr clears bit 0 of the target
                put("jalr", E::jalr(d, t, imm));
                emit_junk(skip);
                if (d != 0) put("sub", E::sub(d, d, prog_.code_reg));
                if (t != d) put("sub", E::sub(t, t, prog_.code_reg));
                result = static_cast<int32_t>(d != 0 ? d : t);
                break;
            }
            case Kind::Loop:
            default:
                throw std::logic_error("emit_block: unexpected kind");
        }
        if (result >= 0 && rng_.chance(70)) {
            Block& b = prog_.blocks.back();
            b.trace_slot = static_cast<int32_t>(cur_block() % kTraceSlots);
            b.trace_reg = static_cast<uint32_t>(result);
            put("sw.trace", E::sw(b.trace_reg, prog_.data_reg, kTraceOffset + 4 * b.trace_slot));
        }
        end_block();
    }

    // Words a correct core never executes. Executing one changes the signature or traps.
    void emit_junk(uint32_t n) {
        bool was = counting_;
        counting_ = false;
        for (uint32_t i = 0; i < n; ++i) {
            if (rng_.chance(25)) {
                put("junk", 0x00000000);  // defined illegal instruction
            } else {
                uint32_t d = tmp();
                put("junk", E::xori(d, d, 0x5A5));
            }
        }
        counting_ = was;
        if (counting_) prog_.histogram["(skipped)"] += n;
    }

    void emit_loop() {
        // head: li c, start ; body blocks ; tail: step c ; branch back while not done.
        // The counter is written nowhere else, and nothing outside the loop branches into it.
        uint32_t c = prog_.loop_reg;
        uint32_t variant = rng_.below(6);
        int32_t n = rng_.range(1, 5);
        int32_t start = 0;
        switch (variant) {
            case 0:
            case 1:
            case 5:
                start = n;
                break;  // count down to 0
            case 2:
            case 3:
                start = -n;
                break;  // count up to 0
            default:
                start = n - 1;
                break;  // 4: count down to -1
        }
        begin_block("loop-head");
        put("addi", E::addi(c, 0, start));
        end_block();
        if (counting_) prog_.histogram["loop"]++;

        scope_ = next_loop_id_++;
        uint32_t top = here();
        uint32_t inner = 1 + rng_.below(5);
        for (uint32_t i = 0; i < inner; ++i) emit_block(pick_kind(/*allow_loop=*/false));

        begin_block("loop-tail");
        bool down = variant != 2 && variant != 3;
        put("addi", E::addi(c, c, down ? -1 : 1));
        int32_t back = -static_cast<int32_t>(4 * (here() - top));
        switch (variant) {
            case 0:
                put("bne", E::bne(c, 0, back));
                break;
            case 1:
                put("blt", E::blt(0, c, back));
                break;
            case 2:
                put("bne", E::bne(0, c, back));
                break;
            case 3:
                put("blt", E::blt(c, 0, back));
                break;
            case 4:
                put("bge", E::bge(c, 0, back));
                break;
            default:
                put("bltu", E::bltu(0, c, back));
                break;
        }
        end_block();
        scope_ = 0;
    }

    void resolve_fixups() {
        const uint32_t nblocks = static_cast<uint32_t>(prog_.blocks.size());
        for (const Fixup& f : fixups_) {
            uint32_t scope = block_scope_[f.block];
            // Walk forward over block boundaries this branch may enter: its own loop, or code
            // outside every loop. The end of the program is always a valid target.
            uint32_t target_word = end_word_;
            uint32_t seen = 0;
            for (uint32_t j = f.block + 1; j < nblocks; ++j) {
                uint32_t s = block_scope_[j];
                if (s != 0 && s != scope) continue;
                if (++seen == f.distance) {
                    target_word = prog_.blocks[j].first_word;
                    break;
                }
            }
            int32_t off = static_cast<int32_t>(4 * (target_word - f.word));
            if (!f.is_jal && off > 4094)
                off = static_cast<int32_t>(
                    4 * (prog_.blocks[f.block].first_word + prog_.blocks[f.block].words - f.word));
            prog_.body[f.word] = f.is_jal ? E::jal(0, off) : f.br->enc(f.rs1, f.rs2, off);
        }
    }
};

}  // namespace

Program generate(uint64_t seed, const GenOptions& opt) {
    return Generator(seed, opt).run();
}

}  // namespace difftest
