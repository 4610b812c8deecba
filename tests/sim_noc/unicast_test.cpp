// Unicast requests through the NIU registers: writes, reads, inline writes, counters, transaction
// IDs, ordering, torus routes, and exact zero-load latencies.
#include <algorithm>
#include <catch2/catch.hpp>

#include "noc/dram.h"
#include "noc_test_util.h"

using namespace noc_test;
namespace st = hal::noc::status;

namespace {

// Steps from launch until the last byte of a write of `len` bytes to `dst_addr` over `hops`
// links has landed: F flits enter the network one per cycle, the last one then needs
// (hops + 1) router+link stages.
uint64_t write_landing_steps(const Network& n, uint64_t dst_addr, uint32_t len, uint32_t hops) {
    const uint64_t flits = 1 + data_flits(n.arch(), dst_addr, len);
    return flits + (hops + 1) * per_hop(n);
}

}  // namespace

TEST_CASE("NIU registers: node id (NOC1 mirrored), cmd buf windows, read-only blocks",
          "[sim_noc][niu]") {
    for (const hal::ArchMap* a : {&hal::kWormholeB0, &hal::kBlackhole}) {
        INFO(a->name);
        Chip chip(10, 12, *a);
        Core& c = chip.add_core(2, 3);
        Niu& niu = *c.niu;
        CHECK(niu.mmio_read(hal::noc::cmd_buf_base(*a, 0, 0) + a->noc.node_id) ==
              hal::noc::unicast_coord(2, 3));
        CHECK(niu.mmio_read(hal::noc::cmd_buf_base(*a, 1, 0) + a->noc.node_id) ==
              hal::noc::unicast_coord(10 - 1 - 2, 12 - 1 - 3));
        CHECK(niu.mmio_read(hal::noc::cmd_buf_base(*a, 1, 3) + a->noc.node_id) ==
              hal::noc::unicast_coord(7, 8));
        CHECK_FALSE(niu.mmio_write(hal::noc::cmd_buf_base(*a, 0, 0) + a->noc.node_id, 0));
        // Plain storage per buffer and per NOC.
        const uint32_t r0 = hal::noc::cmd_buf_base(*a, 0, 1) + hal::noc::kAtLenBe;
        const uint32_t r1 = hal::noc::cmd_buf_base(*a, 1, 1) + hal::noc::kAtLenBe;
        CHECK(niu.mmio_write(r0, 0x111));
        CHECK(niu.mmio_write(r1, 0x222));
        CHECK(niu.mmio_read(r0) == 0x111u);
        CHECK(niu.mmio_read(r1) == 0x222u);
        // Config registers are storage, status counters read-only.
        CHECK(niu.mmio_write(hal::noc::cfg_addr(0, 3), 0xABC));
        CHECK(niu.mmio_read(hal::noc::cfg_addr(0, 3)) == 0xABCu);
        CHECK(niu.mmio_read(hal::noc::status_addr(0, st::kMstWrAckReceived)) == 0u);
        CHECK_FALSE(niu.mmio_write(hal::noc::status_addr(0, st::kMstWrAckReceived), 5));
        // Ready buffers read kCmdCtrlReady.
        CHECK(niu.mmio_read(hal::noc::cmd_buf_base(*a, 0, 2) + a->noc.cmd_ctrl) ==
              hal::noc::kCmdCtrlReady);
        // Outside the 4 buffers, misaligned, outside the NIU.
        CHECK_FALSE(niu.mmio_read(hal::noc::cmd_buf_base(*a, 0, 0) + 4 * a->noc_cmd_buf_stride)
                        .has_value());
        CHECK_FALSE(niu.mmio_read(hal::noc::cmd_buf_base(*a, 0, 0) + 2).has_value());
        CHECK_FALSE(
            niu.mmio_write(hal::common::kNocRegsBase + 2 * hal::common::kNocInstanceStride, 0));
        CHECK(Niu::contains(hal::common::kNocRegsBase));
        CHECK_FALSE(Niu::contains(hal::common::kNocRegsBase - 4));
    }
}

TEST_CASE("unicast write: byte-exact, exact zero-load latency, ack and busy timing",
          "[sim_noc][unicast]") {
    struct Case {
        const hal::ArchMap* arch;
        uint32_t noc;
        Coord src;
        Coord dst;
        uint32_t src_addr;
        uint32_t dst_addr;
        uint32_t len;
        sim::noc::NocParams params;
    };
    const sim::noc::NocParams slow{
        .router_cycles = 5, .link_cycles = 2, .credit_cycles = 2, .vc_buffer_flits = 12};
    const std::vector<Case> cases = {
        {&hal::kWormholeB0, 0, {1, 1}, {4, 1}, 0x20000, 0x30000, 32, {}},
        {&hal::kWormholeB0, 0, {1, 1}, {4, 5}, 0x20000, 0x30000, 256, {}},
        {&hal::kWormholeB0, 0, {1, 1}, {4, 5}, 0x20010, 0x30010, 1000, {}},  // congruent, unaligned
        {&hal::kWormholeB0, 0, {2, 2}, {2, 2}, 0x20000, 0x30000, 64, {}},    // to itself: 0 hops
        {&hal::kWormholeB0, 0, {1, 1}, {9, 11}, 0x20000, 0x30000, 8192, {}},
        {&hal::kWormholeB0, 1, {1, 1}, {4, 5}, 0x20000, 0x30000, 4096, {}},
        {&hal::kWormholeB0, 0, {1, 1}, {4, 5}, 0x20000, 0x30000, 4096, slow},
        {&hal::kBlackhole, 0, {1, 2}, {15, 10}, 0x20000, 0x30000, 16384, {}},
        {&hal::kBlackhole, 1, {3, 2}, {5, 1}, 0x20020, 0x30020, 100, {}},
    };
    for (const Case& k : cases) {
        const hal::ArchMap& a = *k.arch;
        INFO(a.name << " NOC" << k.noc << " (" << k.src.x << "," << k.src.y << ")->(" << k.dst.x
                    << "," << k.dst.y << ") len " << k.len << " router " << k.params.router_cycles);
        Chip chip(a.arch == hal::Arch::Blackhole ? 17 : 10, 12, a, k.params);
        Core& s = chip.add_core(k.src.x, k.src.y);
        Core& d = k.src == k.dst ? s : chip.add_core(k.dst.x, k.dst.y);
        fill(s, k.src_addr, k.len, 7);
        const uint32_t hops = chip.net.hops(k.noc, k.src, k.dst);
        const uint32_t back = chip.net.hops(k.noc, k.dst, k.src);
        const uint32_t flits = 1 + data_flits(a, k.dst_addr, k.len);

        write(chip, s, k.src_addr, chip.net.to_noc(k.noc, k.dst), k.dst_addr, k.len,
              {.noc = k.noc, .trid = 2});
        const uint32_t cmd_ctrl = hal::noc::cmd_buf_base(a, k.noc, 0) + a.noc.cmd_ctrl;
        CHECK(s.niu->mmio_read(cmd_ctrl) == hal::noc::kCmdCtrlSend);
        CHECK(counter(s, k.noc, st::mst_reqs_outstanding_id(2)) == 1);
        CHECK(counter(s, k.noc, st::mst_write_reqs_outgoing_id(2)) == 1);

        // The buffer is busy exactly while its flits are being injected.
        const uint64_t busy =
            chip.run_until([&] { return s.niu->mmio_read(cmd_ctrl) == hal::noc::kCmdCtrlReady; });
        CHECK(busy == flits);
        CHECK(counter(s, k.noc, st::kMstNonpostedWrReqSent) == 1);
        CHECK(counter(s, k.noc, st::mst_write_reqs_outgoing_id(2)) == 0);
        CHECK(counter(s, k.noc, st::kMstNonpostedWrDataWordSent) == flits - 1);

        const uint64_t landed =
            busy + chip.run_until([&] { return same(s, k.src_addr, d, k.dst_addr, k.len); });
        CHECK(landed == write_landing_steps(chip.net, k.dst_addr, k.len, hops));
        CHECK(counter(s, k.noc, st::kMstWrAckReceived) == 0);

        const uint64_t acked =
            landed + chip.run_until([&] { return counter(s, k.noc, st::kMstWrAckReceived) == 1; });
        CHECK(acked == landed + (back + 1) * per_hop(chip.net));
        CHECK(counter(s, k.noc, st::mst_reqs_outstanding_id(2)) == 0);
        chip.drain();
        CHECK(chip.net.idle());
        CHECK(chip.net.errors().empty());
        // Nothing outside the destination range was touched.
        if (&d != &s) {
            CHECK(all_zero(d, k.dst_addr - 64, 64));
            CHECK(all_zero(d, k.dst_addr + k.len, 64));
        }
    }
}

TEST_CASE("unicast read: exact data, exact round-trip latency, counters", "[sim_noc][unicast]") {
    for (const hal::ArchMap* ap : {&hal::kWormholeB0, &hal::kBlackhole}) {
        const hal::ArchMap& a = *ap;
        INFO(a.name);
        for (uint32_t noc = 0; noc < 2; ++noc) {
            Chip chip(10, 12, a);
            Core& me = chip.add_core(1, 1);
            Core& far = chip.add_core(6, 9);
            const uint32_t len = 3000;
            fill(far, 0x30010, len, 3);
            read(chip, me, chip.net.to_noc(noc, far.at), 0x30010, 0x10010, len,
                 {.noc = noc, .trid = 9});
            CHECK(counter(me, noc, st::mst_reqs_outstanding_id(9)) == 1);
            const uint32_t there = chip.net.hops(noc, me.at, far.at);
            const uint32_t back = chip.net.hops(noc, far.at, me.at);
            const uint64_t steps =
                chip.run_until([&] { return counter(me, noc, st::kMstRdRespReceived) == 1; });
            const uint64_t resp_flits = 1 + data_flits(a, 0x10010, len);
            CHECK(steps ==
                  (there + 1) * per_hop(chip.net) + resp_flits + (back + 1) * per_hop(chip.net));
            CHECK(same(me, 0x10010, far, 0x30010, len));
            CHECK(all_zero(me, 0x10000, 16));
            CHECK(all_zero(me, 0x10010 + len, 64));
            CHECK(counter(me, noc, st::kMstRdReqSent) == 1);
            CHECK(counter(me, noc, st::kMstRdDataWordReceived) == resp_flits - 1);
            CHECK(counter(me, noc, st::mst_reqs_outstanding_id(9)) == 0);
            CHECK(counter(far, noc, st::kSlvRdReqReceived) == 1);
            CHECK(counter(far, noc, st::kSlvRdRespSent) == 1);
            chip.drain();
            CHECK(chip.net.errors().empty());
        }
    }
}

TEST_CASE("read from a DRAM endpoint (sparse memory) and write back", "[sim_noc][unicast]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& me = chip.add_core(1, 1);
    sim::SparseMemory dram(uint64_t{2} << 30);
    REQUIRE(chip.net.attach(0, 0, &dram, sim::noc::EndpointKind::Other));
    std::vector<uint8_t> pattern(2048);
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        pattern[i] = static_cast<uint8_t>(i ^ 0x5A);
    }
    const uint64_t dram_addr = (uint64_t{1} << 31) - 4096;  // the last 4 KiB of the 2 GiB bank
    REQUIRE(dram.write(dram_addr, pattern));
    read(chip, me, {0, 0}, dram_addr, 0x8000, 2048);
    chip.drain();
    CHECK(std::equal(pattern.begin(), pattern.end(), me.bytes() + 0x8000));
    write(chip, me, 0x8000, {0, 0}, 0x100, 2048);
    chip.drain();
    std::vector<uint8_t> back(2048);
    REQUIRE(dram.read(0x100, back));
    CHECK(back == pattern);
    CHECK(chip.net.errors().empty());
}

TEST_CASE("inline writes: byte enables to L1, 4-byte writes to remote stream registers",
          "[sim_noc][unicast]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& s = chip.add_core(1, 1);
    Core& d = chip.add_core(3, 4);
    std::memset(d.bytes() + 0x1000, 0xEE, 32);
    // Word at +4, bytes 1 and 2 only.
    inline_write(chip, s, d.at, 0x1004, 0xAABBCCDD, 0x6);
    // Whole word at +12.
    inline_write(chip, s, d.at, 0x100C, 0x11223344, 0xF, {.buf = 1});
    chip.drain();
    const uint8_t expect[16] = {0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xCC, 0xBB, 0xEE,
                                0xEE, 0xEE, 0xEE, 0xEE, 0x44, 0x33, 0x22, 0x11};
    CHECK(std::memcmp(d.bytes() + 0x1000, expect, 16) == 0);
    CHECK(d.bytes()[0x1010] == 0xEE);
    CHECK(counter(s, 0, st::kMstNonpostedWrReqSent) == 2);
    CHECK(counter(s, 0, st::kMstWrAckReceived) == 2);
    CHECK(counter(s, 0, st::kMstNonpostedWrDataWordSent) == 0);  // inline: header only

    // Remote credit updates: the fabric's way of returning buffer space.
    const uint32_t upd = hal::stream::reg_addr(7, a.stream.remote_dest_buf_space_available_update);
    for (int i = 0; i < 5; ++i) {
        inline_write(chip, s, d.at, upd, hal::stream::encode_words_free_delta(3), 0xF,
                     {.posted = true});
        chip.run_until([&] {
            return s.niu->mmio_read(hal::noc::cmd_buf_base(a, 0, 0) + a.noc.cmd_ctrl) == 0u;
        });
    }
    inline_write(chip, s, d.at, upd, hal::stream::encode_words_free_delta(-4), 0x1,
                 {.posted = true});
    chip.drain();
    CHECK(d.streams.words_free(7) == 11u);
    CHECK(d.streams.update_writes() == 6);
    CHECK(counter(s, 0, st::kMstPostedWrReqSent) == 6);
    CHECK(chip.net.errors().empty());
}

TEST_CASE("posted vs non-posted write counters are exact", "[sim_noc][unicast]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& s = chip.add_core(1, 1);
    Core& d = chip.add_core(5, 5);
    (void)d;
    const uint32_t np = 5;
    const uint32_t p = 7;
    uint32_t issued_np = 0;
    uint32_t issued_p = 0;
    const uint32_t ctrl0 = hal::noc::cmd_buf_base(a, 0, 0) + a.noc.cmd_ctrl;
    while (issued_np + issued_p < np + p) {
        if (s.niu->mmio_read(ctrl0) == hal::noc::kCmdCtrlReady) {
            const bool posted =
                (issued_np + issued_p) % 2 == 1 && issued_p < p ? true : issued_np >= np;
            write(chip, s, 0x1000, {5, 5}, 0x2000, 512,
                  {.posted = posted, .trid = posted ? 1u : 4u});
            (posted ? issued_p : issued_np) += 1;
        }
        chip.net.step();
    }
    chip.drain();
    CHECK(counter(s, 0, st::kMstNonpostedWrReqSent) == np);
    CHECK(counter(s, 0, st::kMstPostedWrReqSent) == p);
    CHECK(counter(s, 0, st::kMstNonpostedWrReqStarted) == np);
    CHECK(counter(s, 0, st::kMstPostedWrReqStarted) == p);
    CHECK(counter(s, 0, st::kMstWrAckReceived) == np);  // acks only for non-posted
    CHECK(counter(s, 0, st::kMstPostedWrDataWordSent) == p * 16);
    CHECK(counter(s, 0, st::kMstNonpostedWrDataWordSent) == np * 16);
    CHECK(counter(s, 0, st::kMstCmdAccepted) == np + p);
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(4)) == 0);
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(1)) == 0);  // posted never counted
    CHECK(counter(d, 0, st::kSlvPostedWrReqReceived) == p);
    CHECK(counter(d, 0, st::kSlvNonpostedWrReqReceived) == np);
    CHECK(counter(d, 0, st::kSlvWrAckSent) == np);
    CHECK(chip.net.errors().empty());
}

TEST_CASE("per-transaction-ID outstanding counters and CLEAR_OUTSTANDING_REQ_CNT",
          "[sim_noc][unicast]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& s = chip.add_core(1, 1);
    chip.add_core(8, 10);
    write(chip, s, 0x1000, {8, 10}, 0x1000, 4096, {.buf = 0, .trid = 3});
    write(chip, s, 0x1000, {8, 10}, 0x3000, 4096, {.buf = 1, .trid = 3});
    write(chip, s, 0x1000, {8, 10}, 0x5000, 4096, {.buf = 2, .trid = 5});
    read(chip, s, {8, 10}, 0x1000, 0x9000, 64, {.buf = 3, .trid = 5});
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(3)) == 2);
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(5)) == 2);
    CHECK(counter(s, 0, st::mst_write_reqs_outgoing_id(3)) == 2);
    CHECK(counter(s, 0, st::mst_write_reqs_outgoing_id(5)) == 1);
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(0)) == 0);
    // Outstanding counts fall as the acks come back, per ID.
    chip.run_until([&] { return counter(s, 0, st::mst_reqs_outstanding_id(3)) == 1; });
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(5)) == 2);
    chip.drain();
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(3)) == 0);
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(5)) == 0);
    CHECK(counter(s, 0, st::mst_write_reqs_outgoing_id(3)) == 0);
    // CLEAR zeroes the selected IDs only.
    write(chip, s, 0x1000, {8, 10}, 0x1000, 64, {.buf = 0, .trid = 6});
    write(chip, s, 0x1000, {8, 10}, 0x1000, 64, {.buf = 1, .trid = 7});
    CHECK(s.niu->mmio_write(hal::noc::niu_base(0) + a.noc.clear_outstanding_req_cnt, 1u << 6));
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(6)) == 0);
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(7)) == 1);
    chip.drain();
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(6)) == 0xFF);  // 8-bit: the late ack wraps it
    CHECK(counter(s, 0, st::mst_reqs_outstanding_id(7)) == 0);
}

TEST_CASE("ordering: same source, destination, NOC and VC arrive in issue order",
          "[sim_noc][ordering]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    SECTION("a big write then a flag on the same VC: the flag lands after all the data") {
        Chip chip(10, 12, a);
        Core& s = chip.add_core(1, 1);
        Core& d = chip.add_core(6, 7);
        fill(s, 0x10000, 8192, 1);
        s.bytes()[0x30000] = 0x77;
        write(chip, s, 0x10000, d.at, 0x10000, 8192, {.buf = 0, .vc = 1});
        write(chip, s, 0x30000, d.at, 0x30000, 16, {.buf = 2, .vc = 1});
        chip.drain();
        const auto& log = d.l1.log();
        REQUIRE(log.size() == 1 + 8192 / 32);
        CHECK(log.back().addr == 0x30000);
        CHECK(same(s, 0x10000, d, 0x10000, 8192));
    }
    SECTION("on another VC the flag may overtake (so the VC is what orders)") {
        Chip chip(10, 12, a);
        Core& s = chip.add_core(1, 1);
        Core& d = chip.add_core(6, 7);
        write(chip, s, 0x10000, d.at, 0x10000, 8192, {.buf = 0, .vc = 1});
        write(chip, s, 0x30000, d.at, 0x30000, 16, {.buf = 2, .vc = 0});
        chip.drain();
        const auto& log = d.l1.log();
        const auto flag =
            std::find_if(log.begin(), log.end(), [](const auto& w) { return w.addr == 0x30000; });
        REQUIRE(flag != log.end());
        CHECK(flag != log.end() - 1);  // not last: it overtook the tail of the big write
    }
    SECTION("launch order is kept across command buffers") {
        Chip chip(10, 12, a);
        Core& s = chip.add_core(1, 1);
        Core& d = chip.add_core(6, 7);
        // Launch on buffers 2, 0, 3, 1 in that order (one cycle apart), different sizes.
        const uint32_t bufs[4] = {2, 0, 3, 1};
        const uint32_t lens[4] = {1024, 32, 4096, 64};
        for (uint32_t i = 0; i < 4; ++i) {
            write(chip, s, 0x1000, d.at, 0x20000 + i * 0x2000, lens[i], {.buf = bufs[i], .vc = 2});
            chip.net.step();
        }
        chip.drain();
        std::vector<uint64_t> first_landing;
        for (uint32_t i = 0; i < 4; ++i) {
            const uint64_t base = 0x20000 + i * 0x2000;
            const auto it = std::find_if(d.l1.log().begin(), d.l1.log().end(), [&](const auto& w) {
                return w.addr >= base && w.addr < base + 0x2000;
            });
            REQUIRE(it != d.l1.log().end());
            first_landing.push_back(it->cycle);
        }
        CHECK(std::is_sorted(first_landing.begin(), first_landing.end()));
        CHECK(first_landing[0] < first_landing[1]);
    }
}

TEST_CASE("torus: NOC0 goes +x/+y and NOC1 -x/-y, wrapping around the edge", "[sim_noc][torus]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    using sim::noc::Port;
    SECTION("NOC0 (8,0) -> (1,0) crosses the x wrap: 3 hops") {
        Chip chip(10, 12, a);
        Core& s = chip.add_core(8, 0);
        Core& d = chip.add_core(1, 0);
        CHECK(chip.net.hops(0, s.at, d.at) == 3);
        fill(s, 0x100, 1024, 5);
        write(chip, s, 0x100, d.at, 0x100, 1024, {.posted = true});
        const uint64_t n = chip.run_until([&] { return same(s, 0x100, d, 0x100, 1024); });
        CHECK(n == write_landing_steps(chip.net, 0x100, 1024, 3));
        const uint64_t f = 1 + 1024 / 32;
        CHECK(chip.net.link_stats(0, 8, 0, Port::X).flits == f);
        CHECK(chip.net.link_stats(0, 9, 0, Port::X).flits == f);  // the wrap link
        CHECK(chip.net.link_stats(0, 0, 0, Port::X).flits == f);
        CHECK(chip.net.link_stats(0, 1, 0, Port::Local).flits == f);
        CHECK(chip.net.link_stats(0, 1, 0, Port::X).flits == 0);
        CHECK(chip.net.link_stats(0, 7, 0, Port::X).flits == 0);
        CHECK(chip.net.link_stats(1, 8, 0, Port::X).flits == 0);
    }
    SECTION("NOC1 (1,0) -> (8,0) goes -x through the wrap: 3 hops") {
        Chip chip(10, 12, a);
        Core& s = chip.add_core(1, 0);
        Core& d = chip.add_core(8, 0);
        CHECK(chip.net.hops(1, s.at, d.at) == 3);
        CHECK(chip.net.hops(0, s.at, d.at) == 7);
        fill(s, 0x100, 512, 6);
        write(chip, s, 0x100, chip.net.to_noc(1, d.at), 0x100, 512, {.noc = 1, .posted = true});
        const uint64_t n = chip.run_until([&] { return same(s, 0x100, d, 0x100, 512); });
        CHECK(n == write_landing_steps(chip.net, 0x100, 512, 3));
        const uint64_t f = 1 + 512 / 32;
        CHECK(chip.net.link_stats(1, 1, 0, Port::X).flits == f);
        CHECK(chip.net.link_stats(1, 0, 0, Port::X).flits == f);
        CHECK(chip.net.link_stats(1, 9, 0, Port::X).flits == f);
        CHECK(chip.net.link_stats(1, 8, 0, Port::Local).flits == f);
        CHECK(chip.net.link_stats(1, 2, 0, Port::X).flits == 0);
    }
    SECTION("NOC0 X then Y, with the y wrap: (3,10) -> (5,2)") {
        Chip chip(10, 12, a);
        Core& s = chip.add_core(3, 10);
        Core& d = chip.add_core(5, 2);
        CHECK(chip.net.hops(0, s.at, d.at) == 2 + 4);
        write(chip, s, 0x100, d.at, 0x100, 64, {.posted = true});
        chip.drain();
        CHECK(chip.net.link_stats(0, 3, 10, Port::X).flits == 3);
        CHECK(chip.net.link_stats(0, 4, 10, Port::X).flits == 3);
        CHECK(chip.net.link_stats(0, 5, 10, Port::Y).flits ==
              3);  // turns at the destination column
        CHECK(chip.net.link_stats(0, 5, 11, Port::Y).flits == 3);  // y wrap
        CHECK(chip.net.link_stats(0, 5, 0, Port::Y).flits == 3);
        CHECK(chip.net.link_stats(0, 5, 1, Port::Y).flits == 3);
        CHECK(chip.net.link_stats(0, 5, 2, Port::Local).flits == 3);
        CHECK(chip.net.link_stats(0, 3, 10, Port::Y).flits == 0);  // never Y first
    }
}

TEST_CASE("DRAM channels: one bank per channel, the same bytes through every port",
          "[sim_noc][dram]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip chip(10, 12, a);
    Core& me = chip.add_core(1, 1);
    // Two channels of the Wormhole descriptor's layout (soc_descriptors/wormhole_b0_80_arch.yaml).
    sim::noc::DramChannels dram(chip.net, {{{0, 0}, {0, 1}, {0, 11}}, {{0, 5}, {0, 6}, {0, 7}}},
                                uint64_t{2} << 30);
    REQUIRE(dram.size() == 2);
    fill(me, 0x1000, 4096, 77);
    write(chip, me, 0x1000, {0, 11}, 0x7000'0000, 4096);  // channel 0, third port
    chip.drain();
    read(chip, me, {0, 1}, 0x7000'0000, 0x9000, 4096);  // channel 0, second port
    chip.drain();
    CHECK(same(me, 0x1000, me, 0x9000, 4096));
    std::vector<uint8_t> other(16, 0xFF);
    REQUIRE(dram.channel(1).read(0x7000'0000, other));
    CHECK(other == std::vector<uint8_t>(16, 0));  // channel 1 is a different bank
    CHECK(chip.net.errors().empty());
    CHECK_THROWS_AS(sim::noc::DramChannels(chip.net, {{{10, 0}}}, 1024), std::out_of_range);
}

TEST_CASE("advance_idle: an idle clock jump equals idle steps, refused while traffic is in flight",
          "[sim_noc][unicast]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    Chip stepped(10, 12, a), jumped(10, 12, a);
    for (uint32_t i = 0; i < 1000; ++i) stepped.net.step();
    jumped.net.advance_idle(1000);
    REQUIRE(jumped.net.cycle() == stepped.net.cycle());
    uint64_t landed[2] = {};
    int k = 0;
    for (Chip* chip : {&stepped, &jumped}) {
        Core& s = chip->add_core(1, 1);
        Core& d = chip->add_core(4, 5);
        fill(s, 0x20000, 512, 3);
        write(*chip, s, 0x20000, {4, 5}, 0x30000, 512);
        CHECK_THROWS_AS(chip->net.advance_idle(1), std::logic_error);
        chip->drain();
        landed[k++] = chip->net.cycle();
        CHECK(same(d, 0x30000, s, 0x20000, 512));
    }
    CHECK(landed[0] == landed[1]);
}
