// Multicast writes to rectangles and atomics at the target.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "noc_test_util.h"

using namespace noc_test;
namespace st = hal::noc::status;
using sim::noc::Port;

namespace {

// A chip with a core at every node of a gx x gy grid.
struct FullChip {
    FullChip(uint32_t gx, uint32_t gy, const hal::ArchMap& a, uint32_t l1 = 64 * 1024)
        : chip(gx, gy, a) {
        for (uint32_t y = 0; y < gy; ++y) {
            for (uint32_t x = 0; x < gx; ++x) {
                cores.push_back(&chip.add_core(x, y, l1));
            }
        }
    }
    Core& at(uint32_t x, uint32_t y) { return *cores[y * chip.net.grid_x() + x]; }
    Chip chip;
    std::vector<Core*> cores;
};

// The set of physical nodes that received `len` bytes equal to the source's at `addr`, and a
// check that every other node's range is still zero.
std::set<std::pair<uint32_t, uint32_t>> receivers(FullChip& f, Core& src, uint32_t src_addr,
                                                  uint32_t addr, uint32_t len, bool& others_clean) {
    std::set<std::pair<uint32_t, uint32_t>> got;
    others_clean = true;
    for (Core* c : f.cores) {
        if (c == &src && src_addr == addr) {
            continue;
        }
        if (same(src, src_addr, *c, addr, len)) {
            got.insert({c->at.x, c->at.y});
        } else if (!all_zero(*c, addr, len)) {
            others_clean = false;
        }
    }
    return got;
}

std::set<std::pair<uint32_t, uint32_t>> rect_nodes(uint32_t x0, uint32_t x1, uint32_t y0,
                                                   uint32_t y1, uint32_t gx, uint32_t gy) {
    std::set<std::pair<uint32_t, uint32_t>> s;
    for (uint32_t x = x0;; x = (x + 1) % gx) {
        for (uint32_t y = y0;; y = (y + 1) % gy) {
            s.insert({x, y});
            if (y == y1) {
                break;
            }
        }
        if (x == x1) {
            break;
        }
    }
    return s;
}

}  // namespace

TEST_CASE("multicast write reaches exactly the rectangle", "[sim_noc][multicast]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    const uint32_t len = 2048;
    const uint32_t src_addr = 0x1000;
    const uint32_t dst_addr = 0x8000;

    SECTION("source outside, X major: 3x3 rectangle, one ack per destination") {
        FullChip f(8, 8, a);
        Core& s = f.at(0, 0);
        fill(s, src_addr, len, 11);
        mcast_write(f.chip, s, src_addr, {.x_start = 2, .y_start = 1, .x_end = 4, .y_end = 3},
                    dst_addr, len);
        f.chip.drain();
        bool clean = false;
        CHECK(receivers(f, s, src_addr, dst_addr, len, clean) == rect_nodes(2, 4, 1, 3, 8, 8));
        CHECK(clean);
        CHECK(counter(s, 0, st::kMstNonpostedWrReqSent) == 1);
        CHECK(counter(s, 0, st::kMstWrAckReceived) == 9);
        // Link usage, without the acks: the same multicast posted.
        f.chip.net.reset_stats();
        mcast_write(f.chip, s, src_addr, {.x_start = 2, .y_start = 1, .x_end = 4, .y_end = 3},
                    dst_addr, len, {.posted = true});
        f.chip.drain();
        const uint64_t flits = 1 + len / 32;
        // Trunk along row 1 from x=2 to x=4, branches down columns 2..4 to y=3, nothing beyond.
        CHECK(f.chip.net.link_stats(0, 2, 1, Port::X).flits == flits);
        CHECK(f.chip.net.link_stats(0, 3, 1, Port::X).flits == flits);
        CHECK(f.chip.net.link_stats(0, 4, 1, Port::X).flits == 0);
        CHECK(f.chip.net.link_stats(0, 3, 1, Port::Y).flits == flits);
        CHECK(f.chip.net.link_stats(0, 3, 2, Port::Y).flits == flits);
        CHECK(f.chip.net.link_stats(0, 3, 3, Port::Y).flits == 0);
        CHECK(f.chip.net.link_stats(0, 2, 0, Port::Y).flits ==
              flits);  // reached the start corner X then Y
        CHECK(f.chip.net.errors().empty());
    }
    SECTION("Y major: same nodes, trunk down the first column") {
        FullChip f(8, 8, a);
        Core& s = f.at(0, 0);
        fill(s, src_addr, len, 12);
        mcast_write(f.chip, s, src_addr, {.x_start = 2, .y_start = 1, .x_end = 4, .y_end = 3},
                    dst_addr, len, {.posted = true, .y_major = true});
        f.chip.drain();
        bool clean = false;
        CHECK(receivers(f, s, src_addr, dst_addr, len, clean) == rect_nodes(2, 4, 1, 3, 8, 8));
        CHECK(clean);
        const uint64_t flits = 1 + len / 32;
        CHECK(f.chip.net.link_stats(0, 2, 1, Port::Y).flits == flits);
        CHECK(f.chip.net.link_stats(0, 3, 1, Port::Y).flits == 0);
        CHECK(f.chip.net.link_stats(0, 2, 2, Port::X).flits == flits);
    }
    SECTION("source inside the rectangle, with and without itself") {
        for (bool include : {false, true}) {
            INFO("include_self " << include);
            FullChip f(8, 8, a);
            Core& s = f.at(3, 2);
            fill(s, src_addr, len, 13);
            mcast_write(f.chip, s, src_addr, {.x_start = 2, .y_start = 1, .x_end = 4, .y_end = 3},
                        dst_addr, len, {.include_self = include});
            f.chip.drain();
            bool clean = false;
            auto expect = rect_nodes(2, 4, 1, 3, 8, 8);
            if (!include) {
                expect.erase({3, 2});
            }
            CHECK(receivers(f, s, src_addr, dst_addr, len, clean) == expect);
            CHECK(clean);
            CHECK(counter(s, 0, st::kMstWrAckReceived) == expect.size());
            CHECK(f.chip.net.errors().empty());
        }
    }
    SECTION("a rectangle wrapping around both edges") {
        FullChip f(8, 8, a);
        Core& s = f.at(4, 4);
        fill(s, src_addr, len, 14);
        mcast_write(f.chip, s, src_addr, {.x_start = 6, .y_start = 7, .x_end = 1, .y_end = 0},
                    dst_addr, len, {.posted = true});
        f.chip.drain();
        bool clean = false;
        CHECK(receivers(f, s, src_addr, dst_addr, len, clean) == rect_nodes(6, 1, 7, 0, 8, 8));
        CHECK(rect_nodes(6, 1, 7, 0, 8, 8).size() == 8);
        CHECK(clean);
        CHECK(counter(s, 0, st::kMstPostedWrReqSent) == 1);
        CHECK(counter(s, 0, st::kMstWrAckReceived) == 0);
    }
    SECTION("NOC1: the rectangle is in NOC1's (mirrored) coordinates") {
        FullChip f(8, 8, a);
        Core& s = f.at(7, 7);
        fill(s, src_addr, len, 15);
        // NOC1 (1..2, 0..1) is physical x 5..6, y 6..7.
        mcast_write(f.chip, s, src_addr, {.x_start = 1, .y_start = 0, .x_end = 2, .y_end = 1},
                    dst_addr, len, {.noc = 1});
        f.chip.drain();
        bool clean = false;
        CHECK(receivers(f, s, src_addr, dst_addr, len, clean) == rect_nodes(5, 6, 6, 7, 8, 8));
        CHECK(clean);
        CHECK(counter(s, 1, st::kMstWrAckReceived) == 4);
        CHECK(counter(s, 0, st::kMstWrAckReceived) == 0);
    }
}

TEST_CASE("atomic increments from four sources sum exactly, every old value returned once",
          "[sim_noc][atomic]") {
    for (const hal::ArchMap* ap : {&hal::kWormholeB0, &hal::kBlackhole}) {
        const hal::ArchMap& a = *ap;
        INFO(a.name);
        Chip chip(10, 12, a);
        Core& target = chip.add_core(5, 5);
        std::vector<Core*> srcs = {&chip.add_core(0, 0), &chip.add_core(9, 11),
                                   &chip.add_core(5, 2), &chip.add_core(2, 5)};
        const uint32_t counter_addr = 0x2008;  // word 2 of its 16-byte block
        const uint32_t ret_addr = 0x3000;
        const uint32_t per_source = 50;
        target.l1.mem().set_word(counter_addr, 1000);
        std::vector<uint32_t> issued(srcs.size(), 0);
        std::vector<uint32_t> seen(srcs.size(), 0);
        std::multiset<uint32_t> olds;
        uint64_t guard = 0;
        while (olds.size() < srcs.size() * per_source && guard++ < 200000) {
            for (std::size_t i = 0; i < srcs.size(); ++i) {
                Core& s = *srcs[i];
                const uint32_t got = counter(s, 0, st::kMstAtomicRespReceived);
                if (got > seen[i]) {
                    seen[i] = got;
                    olds.insert(s.word(ret_addr));
                }
                if (issued[i] == seen[i] && issued[i] < per_source) {
                    atomic_inc(chip, s, target.at, counter_addr, 1, ret_addr,
                               {.buf = 3, .trid = 1});
                    ++issued[i];
                }
            }
            chip.net.step();
        }
        chip.drain();
        const uint32_t total = static_cast<uint32_t>(srcs.size()) * per_source;
        CHECK(target.word(counter_addr) == 1000 + total);
        CHECK(olds.size() == total);
        CHECK(std::set<uint32_t>(olds.begin(), olds.end()).size() == total);  // all distinct
        CHECK(*olds.begin() == 1000);
        CHECK(*olds.rbegin() == 1000 + total - 1);
        CHECK(target.word(counter_addr - 8) == 0);  // neighbours in the block untouched
        CHECK(target.word(counter_addr + 4) == 0);
        for (Core* s : srcs) {
            CHECK(counter(*s, 0, st::kMstNonpostedAtomicSent) == per_source);
            CHECK(counter(*s, 0, st::kMstAtomicRespReceived) == per_source);
            CHECK(counter(*s, 0, st::mst_reqs_outstanding_id(1)) == 0);
        }
        CHECK(counter(target, 0, st::kSlvNonpostedAtomicReceived) == total);

        // Posted atomics issued back to back from all four at once: no responses, exact sum.
        for (uint32_t k = 0; k < 30; ++k) {
            for (Core* s : srcs) {
                chip.run_until([&] { return !s->niu->cmd_buf_busy(1, 3); });
                atomic_inc(chip, *s, chip.net.to_noc(1, target.at), counter_addr, 3, 0,
                           {.noc = 1, .buf = 3, .posted = true});
            }
        }
        chip.drain();
        CHECK(target.word(counter_addr) == 1000 + total + 30 * 3 * 4);
        for (Core* s : srcs) {
            CHECK(counter(*s, 1, st::kMstPostedAtomicSent) == 30);
            CHECK(counter(*s, 1, st::kMstAtomicRespReceived) == 0);
        }
        CHECK(chip.net.errors().empty());
    }
}

TEST_CASE("atomic wrap: the increment wraps above bit wrap+1, upper bits kept",
          "[sim_noc][atomic]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(4, 4, a);
    Core& s = chip.add_core(0, 0);
    Core& t = chip.add_core(2, 3);
    t.l1.mem().set_word(0x100, 0x123456FF);
    atomic_inc(chip, s, t.at, 0x100, 1, 0x200, {}, 7);  // 8-bit counter
    chip.drain();
    CHECK(t.word(0x100) == 0x12345600u);
    CHECK(s.word(0x200) == 0x123456FFu);
    t.l1.mem().set_word(0x104, 0xFFFFFFFF);
    atomic_inc(chip, s, t.at, 0x104, 2, 0x204);  // 32-bit
    chip.drain();
    CHECK(t.word(0x104) == 1u);
    CHECK(s.word(0x204) == 0xFFFFFFFFu);
    CHECK(chip.net.errors().empty());
}
