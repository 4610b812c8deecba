// Loads and stores: every width at every legal offset, sign and zero extension, byte lanes of
// stores, store-to-load ordering, load-use forwarding, negative offsets, L1 and local data RAM.
#include "isa_harness.h"

using namespace rv;
using isa::Check;

namespace {
constexpr uint32_t kPattern0 = 0x8281F07F;  // bytes (lsb first): 7f f0 81 82
constexpr uint32_t kPattern1 = 0x7FFF8000;  // halves: 8000 7fff
}  // namespace

TEST_CASE("loads: widths, offsets, sign and zero extension", "[isa][mem]") {
    Check c;
    c.p.li(x10, isa::kDataBase);
    c.p.li(x1, kPattern0).emit(sw(x1, x10, 0));
    c.p.li(x1, kPattern1).emit(sw(x1, x10, 4));
    // lb / lbu at each byte of word 0
    const uint32_t lb_want[4] = {0x0000007F, 0xFFFFFFF0, 0xFFFFFF81, 0xFFFFFF82};
    const uint32_t lbu_want[4] = {0x7F, 0xF0, 0x81, 0x82};
    for (int i = 0; i < 4; ++i) {
        c.p.emit(lb(x3, x10, i));
        c.expect(x3, lb_want[i], isa::label("lb +", i));
        c.p.emit(lbu(x3, x10, i));
        c.expect(x3, lbu_want[i], isa::label("lbu +", i));
    }
    // lh / lhu at both halves of both words
    c.p.emit(lh(x3, x10, 0));
    c.expect(x3, 0xFFFFF07F, "lh +0");
    c.p.emit(lh(x3, x10, 2));
    c.expect(x3, 0xFFFF8281, "lh +2");
    c.p.emit(lhu(x3, x10, 2));
    c.expect(x3, 0x00008281, "lhu +2");
    c.p.emit(lh(x3, x10, 4));
    c.expect(x3, 0xFFFF8000, "lh +4");
    c.p.emit(lh(x3, x10, 6));
    c.expect(x3, 0x00007FFF, "lh +6 (positive)");
    c.p.emit(lhu(x3, x10, 4));
    c.expect(x3, 0x00008000, "lhu +4");
    c.p.emit(lw(x3, x10, 0));
    c.expect(x3, kPattern0, "lw +0");
    c.p.emit(lw(x3, x10, 4));
    c.expect(x3, kPattern1, "lw +4");
    // negative offsets and the largest positive one
    c.p.li(x11, isa::kDataBase + 8);
    c.p.emit(lw(x3, x11, -8));
    c.expect(x3, kPattern0, "lw -8");
    c.p.emit(lbu(x3, x11, -5));
    c.expect(x3, 0x82, "lbu -5");
    c.p.li(x12, isa::kDataBase + 4 - 2047);  // odd base; x12 + 2047 = kDataBase + 4
    c.p.emit(lbu(x3, x12, 2047));
    c.expect(x3, 0x00, "lbu +2047 (byte 0 of word 1)");
    c.run();
}

TEST_CASE("stores: byte lanes and widths", "[isa][mem]") {
    Check c;
    c.p.li(x10, isa::kDataBase);
    c.p.li(x1, 0xAABBCCDD);
    // fill four words with a background, then store into each lane
    c.p.li(x2, 0x11111111);
    for (int w = 0; w < 4; ++w) c.p.emit(sw(x2, x10, 4 * w));
    c.p.emit(sb(x1, x10, 0));   // word 0: ...DD
    c.p.emit(sb(x1, x10, 5));   // word 1: ..DD..
    c.p.emit(sh(x1, x10, 8));   // word 2: ....CCDD
    c.p.emit(sh(x1, x10, 14));  // word 3: CCDD....
    c.p.emit(sb(x1, x10, 3));   // word 0: DD....DD
    for (int w = 0; w < 4; ++w) {
        c.p.emit(lw(x3, x10, 4 * w));
        const uint32_t want[4] = {0xDD1111DD, 0x1111DD11, 0x1111CCDD, 0xCCDD1111};
        c.expect(x3, want[w], isa::label("word ", w) + " after sb/sh");
    }
    // store immediately followed by a load of the same address, and of another lane
    c.p.li(x4, 0x01020304).emit(sw(x4, x10, 16)).emit(lw(x3, x10, 16));
    c.expect(x3, 0x01020304, "sw then lw");
    c.p.emit(sb(x1, x10, 17)).emit(lbu(x3, x10, 17));
    c.expect(x3, 0xDD, "sb then lbu");
    c.p.emit(lw(x3, x10, 16));
    c.expect(x3, 0x0102DD04, "sb merged into word");
    sim::Tile& t = c.run();
    // the same bytes seen from the NOC side
    uint8_t bytes[8];
    t.read(isa::kDataBase, bytes);
    const uint8_t want[8] = {0xDD, 0x11, 0x11, 0xDD, 0x11, 0xDD, 0x11, 0x11};
    for (int i = 0; i < 8; ++i) CHECK(bytes[i] == want[i]);
}

TEST_CASE("load-use: a loaded value is usable by the next instruction", "[isa][mem]") {
    Check c;
    c.p.li(x10, isa::kDataBase).li(x1, 100).emit(sw(x1, x10, 0));
    c.p.emit(lw(x2, x10, 0)).emit(addi(x3, x2, 1));
    c.expect(x3, 101, "lw then addi");
    c.p.emit(lw(x2, x10, 0)).emit(add(x3, x1, x2));
    c.expect(x3, 200, "lw then add (rs2)");
    c.p.emit(lw(x2, x10, 0)).emit(sw(x2, x10, 4)).emit(lw(x3, x10, 4));
    c.expect(x3, 100, "lw then sw of the loaded value");
    c.p.emit(lw(x11, x10, 0))
        .li(x12, isa::kDataBase + 100)
        .emit(sw(x11, x12, 0))
        .emit(lw(x3, x12, 0));
    c.expect(x3, 100, "store data forwarded");
    // pointer chasing: the loaded value is the next address
    c.p.li(x13, isa::kDataBase + 0x40)
        .emit(sw(x13, x10, 8))
        .emit(lw(x14, x10, 8))
        .emit(lw(x3, x14, -0x40));
    c.expect(x3, 100, "pointer chase");
    c.run();
}

TEST_CASE("local data RAM is load/store memory", "[isa][mem]") {
    Check c;
    c.p.li(x10, hal::common::kLocalDataRamBase);
    c.p.li(x11, hal::common::kLocalDataRamBase + 4096);
    c.p.li(x1, 0xCAFEF00D).emit(sw(x1, x10, 0)).emit(sw(x1, x11, -4));
    c.p.emit(lw(x3, x10, 0));
    c.expect(x3, 0xCAFEF00D, "ldm word 0");
    c.p.emit(sb(x0, x10, 1)).emit(lw(x3, x10, 0));
    c.expect(x3, 0xCAFE000D, "ldm byte store");
    c.p.emit(lh(x3, x10, 2));
    c.expect(x3, 0xFFFFCAFE, "ldm lh");
    c.p.emit(lw(x3, x11, -4));
    c.expect(x3, 0xCAFEF00D, "ldm last word (4 KiB)");
    c.run();
}

TEST_CASE("Blackhole-sized tile: 512 KiB L1 and 8 KiB local data RAM", "[isa][mem]") {
    Check c;
    c.p.li(x10, 512 * 1024 - 4).li(x1, 0x5A5A5A5A).emit(sw(x1, x10, 0)).emit(lw(x3, x10, 0));
    c.expect(x3, 0x5A5A5A5A, "last L1 word");
    c.p.li(x11, hal::common::kLocalDataRamBase + 8192 - 4)
        .emit(sw(x1, x11, 0))
        .emit(lw(x3, x11, 0));
    c.expect(x3, 0x5A5A5A5A, "last ldm word");
    sim::TileConfig cfg;
    cfg.arch = hal::Arch::Blackhole;
    cfg.l1_size = hal::kBlackhole.eth_l1_size;
    cfg.ldm_size = hal::kBlackhole.local_data_ram_size;
    c.run(cfg);
}
