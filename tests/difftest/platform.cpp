#include "platform.h"

#include <cstdio>
#include <stdexcept>

#include "hal/arch_map.h"
#include "rv_encode.h"

namespace difftest {

namespace E = rv;

namespace {

class Writer {
  public:
    explicit Writer(Image& img) : img_(img) {}
    // Byte offset from the image base of the next word.
    void at(uint32_t off) { off_ = off; }
    uint32_t offset() const { return off_; }
    uint32_t addr() const { return img_.base + off_; }
    void word(uint32_t w) {
        if (img_.bytes.size() < off_ + 4) img_.bytes.resize(off_ + 4);
        for (int i = 0; i < 4; ++i) img_.bytes[off_ + i] = static_cast<uint8_t>(w >> (8 * i));
        off_ += 4;
    }
    // Fixed-size (two word) load of a 32-bit constant.
    void li(uint32_t r, uint32_t value) {
        int32_t lo = static_cast<int32_t>(value << 20) >> 20;
        word(E::lui(r, (value - static_cast<uint32_t>(lo)) >> 12));
        word(E::addi(r, r, lo));
    }
    void jump_to(uint32_t target_off) { word(E::jal(0, static_cast<int32_t>(target_off - off_))); }

  private:
    Image& img_;
    uint32_t off_ = 0;
};

// Four distinct scratch registers other than x0 and the data-base register.
std::array<uint32_t, 4> scratch(const Program& p) {
    std::array<uint32_t, 4> r{};
    uint32_t n = 0;
    for (uint32_t x = 5; n < 4; ++x) {
        if (x != p.data_reg) r[n++] = x;
    }
    return r;
}

constexpr uint32_t kMtvec = 0x305, kMcause = 0x342, kMepc = 0x341;

// Copy the whole signature area (kSignatureBytes) from `from` to `to`, a word at a time.
void copy_words(Writer& w, const std::array<uint32_t, 4>& s, uint32_t from, uint32_t to) {
    w.li(s[0], from);
    w.li(s[1], to);
    w.li(s[2], kSignatureBytes / 4);
    w.word(E::lw(s[3], s[0], 0));
    w.word(E::sw(s[3], s[1], 0));
    w.word(E::addi(s[0], s[0], 4));
    w.word(E::addi(s[1], s[1], 4));
    w.word(E::addi(s[2], s[2], -1));
    w.word(E::bne(s[2], 0, -20));
}

}  // namespace

Image build_image(const Program& prog, Platform platform, const Layout& layout) {
    if (layout.body_off % 4 || layout.data_off % 4)
        throw std::invalid_argument("layout not word aligned");
    Image img;
    img.base = layout.base;
    img.body_addr = layout.base + layout.body_off;
    img.sig_addr = layout.base + layout.data_off - kSigRegBytes;
    if (layout.live_sig_addr != 0 && platform != Platform::Tile)
        throw std::invalid_argument("a separate live data area is for the tile only");
    const uint32_t live_sig = layout.live_sig_addr != 0 ? layout.live_sig_addr : img.sig_addr;
    const uint32_t data_addr = live_sig + kSigRegBytes;
    const uint32_t body_end = layout.body_off + static_cast<uint32_t>(4 * prog.body.size());
    constexpr uint32_t kEpilogueRoom = 0x100;
    if (body_end + kEpilogueRoom > layout.data_off - kSigRegBytes)
        throw std::length_error("program body does not fit below the data region");

    Writer w(img);
    const auto s = scratch(prog);

    // Epilogue and trap handler first (their offsets are needed by the prologue).
    w.at(body_end);
    uint32_t trap_off = 0;
    if (platform == Platform::Qemu) {
        // Copy the signature to the UART (waiting for THR empty), then exit through sifive_test.
        w.word(E::lui(s[0], kQemuUart >> 12));
        w.word(E::addi(s[1], prog.data_reg, kSigRegOffset));
        w.li(s[2], kSignatureBytes);
        w.word(E::add(s[2], s[2], s[1]));
        w.word(E::lbu(s[3], s[0], 5));  // wait: LSR.THRE
        w.word(E::andi(s[3], s[3], 0x20));
        w.word(E::beq(s[3], 0, -8));
        w.word(E::lbu(s[3], s[1], 0));
        w.word(E::sb(s[3], s[0], 0));
        w.word(E::addi(s[1], s[1], 1));
        w.word(E::bltu(s[1], s[2], -24));
        w.word(E::lui(s[0], kQemuTestDev >> 12));
        w.li(s[3], 0x5555);
        w.word(E::sw(s[3], s[0], 0));
        w.word(E::jal(0, 0));
        // Trap handler (a generator bug, never a core bug): 'T', mcause, mepc (LE) on the
        // UART, then fail with kQemuTrapExitCode.
        trap_off = w.offset();
        w.word(E::lui(s[0], kQemuUart >> 12));
        w.word(E::addi(s[1], 0, 'T'));
        w.word(E::sb(s[1], s[0], 0));
        w.word(E::csrrs(s[1], kMcause, 0));
        w.word(E::sb(s[1], s[0], 0));
        w.word(E::csrrs(s[1], kMepc, 0));
        for (int i = 0; i < 4; ++i) {
            w.word(E::sb(s[1], s[0], 0));
            w.word(E::srli(s[1], s[1], 8));
        }
        w.word(E::lui(s[0], kQemuTestDev >> 12));
        w.li(s[3], (static_cast<uint32_t>(kQemuTrapExitCode) << 16) | 0x3333);
        w.word(E::sw(s[3], s[0], 0));
        w.word(E::jal(0, 0));
    } else {
        if (layout.live_sig_addr != 0) copy_words(w, s, live_sig, img.sig_addr);
        // Exit through the sim-control block with status 0; the host reads the signature from L1.
        w.word(E::lui(s[0], hal::simctrl::kBase >> 12));
        w.word(E::sw(0, s[0], 4));
        w.word(E::jal(0, 0));
    }

    // Prologue.
    w.at(0);
    if (platform == Platform::Qemu) {
        w.li(s[0], layout.base + trap_off);
        w.word(E::csrrw(0, kMtvec, s[0]));
    }
    if (layout.live_sig_addr != 0) copy_words(w, s, img.sig_addr, live_sig);
    w.li(prog.code_reg, img.body_addr);
    w.li(prog.data_reg, data_addr + kDataBaseOffset);
    if (w.offset() > layout.body_off) throw std::length_error("prologue overlaps the body");
    w.jump_to(layout.body_off);

    // Body.
    w.at(layout.body_off);
    for (uint32_t word : prog.body) w.word(word);

    // Register dump (zero), data region, trace area (zero).
    img.bytes.resize(layout.data_off + kDataBytes + kTraceBytes, 0);
    for (uint32_t i = 0; i < kDataBytes; ++i) img.bytes[layout.data_off + i] = prog.data_init[i];
    return img;
}

Signature parse_signature(const std::vector<uint8_t>& raw) {
    if (raw.size() != kSignatureBytes) throw std::invalid_argument("signature has the wrong size");
    Signature s;
    for (uint32_t r = 0; r < 32; ++r) {
        s.regs[r] = static_cast<uint32_t>(raw[4 * r]) | static_cast<uint32_t>(raw[4 * r + 1]) << 8 |
                    static_cast<uint32_t>(raw[4 * r + 2]) << 16 |
                    static_cast<uint32_t>(raw[4 * r + 3]) << 24;
    }
    s.data.assign(raw.begin() + kSigRegBytes, raw.begin() + kSigRegBytes + kDataBytes);
    s.trace.assign(raw.begin() + kSigRegBytes + kDataBytes, raw.end());
    return s;
}

std::vector<uint8_t> serialize_signature(const Signature& s) {
    std::vector<uint8_t> raw(kSignatureBytes);
    for (uint32_t r = 0; r < 32; ++r)
        for (int i = 0; i < 4; ++i) raw[4 * r + i] = static_cast<uint8_t>(s.regs[r] >> (8 * i));
    for (uint32_t i = 0; i < kDataBytes; ++i) raw[kSigRegBytes + i] = s.data.at(i);
    for (uint32_t i = 0; i < kTraceBytes; ++i) raw[kSigRegBytes + kDataBytes + i] = s.trace.at(i);
    return raw;
}

namespace {
uint32_t word_at(const std::vector<uint8_t>& d, uint32_t off) {
    return static_cast<uint32_t>(d.at(off)) | static_cast<uint32_t>(d.at(off + 1)) << 8 |
           static_cast<uint32_t>(d.at(off + 2)) << 16 | static_cast<uint32_t>(d.at(off + 3)) << 24;
}
}  // namespace

std::vector<Difference> compare(const Program& prog, const Signature& ref, const Signature& dut) {
    std::vector<Difference> out;
    for (uint32_t slot = 0; slot < kTraceSlots; ++slot) {
        uint32_t a = word_at(ref.trace, 4 * slot), b = word_at(dut.trace, 4 * slot);
        if (a != b) out.push_back({Difference::Trace, slot, a, b});
    }
    for (uint32_t r = 0; r < 32; ++r) {
        if (prog.reserved(r)) continue;
        if (ref.regs[r] != dut.regs[r])
            out.push_back({Difference::Reg, r, ref.regs[r], dut.regs[r]});
    }
    for (uint32_t off = 0; off < kDataBytes; off += 4) {
        uint32_t a = word_at(ref.data, off), b = word_at(dut.data, off);
        if (a != b) out.push_back({Difference::Data, off, a, b});
    }
    return out;
}

std::string describe(const Program& prog, const Difference& d, const char* a_name,
                     const char* b_name) {
    char buf[256];
    switch (d.where) {
        case Difference::Reg:
            std::snprintf(buf, sizeof buf, "register x%u: %s=0x%08x %s=0x%08x", d.index, a_name,
                          d.a, b_name, d.b);
            break;
        case Difference::Data: {
            // Offsets as the program sees them: from the data-base register.
            int32_t rel = static_cast<int32_t>(d.index) - kDataBaseOffset;
            std::snprintf(buf, sizeof buf, "data word +0x%03x (data-base %+d): %s=0x%08x %s=0x%08x",
                          d.index, rel, a_name, d.a, b_name, d.b);
            break;
        }
        case Difference::Trace:
        default: {
            std::string who = "no block";
            for (size_t i = 0; i < prog.blocks.size(); ++i) {
                const Block& b = prog.blocks[i];
                if (b.trace_slot != static_cast<int32_t>(d.index)) continue;
                char w[128];
                std::snprintf(w, sizeof w, "block %zu (%s, unit %u) at body +0x%x, result x%u", i,
                              b.kind.c_str(), b.unit, 4 * b.first_word, b.trace_reg);
                who = w;
                break;
            }
            std::snprintf(buf, sizeof buf, "trace slot %u = %s: %s=0x%08x %s=0x%08x", d.index,
                          who.c_str(), a_name, d.a, b_name, d.b);
            break;
        }
    }
    return buf;
}

}  // namespace difftest
