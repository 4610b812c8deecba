// NOC traffic from several cores at once (firmware/tests/noc_traffic): two senders sharing a link,
// a multicast that reaches exactly its rectangle, and atomic increments from four cores that sum
// exactly.
#include <algorithm>
#include <catch2/catch.hpp>

#include "fw_harness.h"

using protocol::KernelRole;
using protocol::NocTrafficArgs;
using protocol::NocTrafficOp;
using protocol::NocTrafficResults;
using simfw::Core;
using simfw::Rig;

namespace {

NocTrafficArgs write_args(uint32_t dest_x, uint32_t dest_y, uint32_t dest_addr, uint32_t local,
                          uint32_t bytes, uint32_t requests, uint32_t seed) {
    NocTrafficArgs a{};
    a.op = static_cast<uint32_t>(NocTrafficOp::Write);
    a.noc = 0;
    a.vc = 1;
    a.dest_x = dest_x;
    a.dest_y = dest_y;
    a.dest_addr = dest_addr;
    a.local_addr = local;
    a.request_bytes = bytes;
    a.requests = requests;
    a.seed = seed;
    a.timeout_us = 10'000;
    return a;
}

// Every request_bytes chunk of [addr, addr + requests * request_bytes) holds pattern(seed).
uint32_t chunk_mismatches(Rig& rig, Core c, uint32_t addr, uint32_t request_bytes,
                          uint32_t requests, uint32_t seed) {
    uint32_t bad = 0;
    for (uint32_t i = 0; i < requests; ++i)
        bad += rig.pattern_mismatches(c, addr + i * request_bytes, request_bytes, seed);
    return bad;
}

void require_no_noc_errors(Rig& rig) {
    for (const auto& e : rig.chip(0).network().errors()) FAIL_CHECK(sim::noc::to_string(e));
}

}  // namespace

TEST_CASE("noc contention: two senders sharing a link both complete, data exact",
          "[sim][noc][contention]") {
    // NOC0 travels +x: (1,0) -> (4,0) crosses the links 1->2, 2->3, 3->4; (2,0) -> (4,0) shares
    // 2->3 and 3->4 with it. Each sends 8 x 8 KiB (the WH burst): alone, one flow keeps a link
    // ~70 % busy (the kernel reprograms the command buffer between requests), so two flows need
    // more than the link has and the link becomes the bottleneck.
    const uint32_t bytes = 8192, requests = 8;
    const uint32_t base = protocol::test_l1_base(hal::Arch::WormholeB0);
    const Core a{0, 1, 0}, b{0, 2, 0}, d{0, 4, 0};
    const uint32_t flits_per_flow = requests * (1 + bytes / hal::kWormholeB0.noc_word_bytes);
    // Alone first: the time one flow takes with the links to itself.
    uint32_t alone = 0;
    {
        Rig rig(1);
        rig.chip(0).tile(d.x, d.y);
        rig.launch(a, "noc_traffic", KernelRole::Master,
                   write_args(d.x, d.y, base, base, bytes, requests, 0xA1));
        REQUIRE(rig.run(1'000'000).done);
        REQUIRE_KERNEL_PASSED(rig, a);
        alone = rig.results<NocTrafficResults>(a).cycles;
    }
    Rig rig(1);
    rig.chip(0).tile(d.x, d.y);
    rig.chip(0).network().reset_stats();
    rig.launch(a, "noc_traffic", KernelRole::Master,
               write_args(d.x, d.y, base, base, bytes, requests, 0xA1));
    rig.launch(b, "noc_traffic", KernelRole::Master,
               write_args(d.x, d.y, base + requests * bytes, base, bytes, requests, 0xB2));
    const auto report = rig.run(2'000'000);
    INFO(rig.describe(a));
    INFO(rig.describe(b));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, a);
    REQUIRE_KERNEL_PASSED(rig, b);
    const auto ra = rig.results<NocTrafficResults>(a);
    const auto rb = rig.results<NocTrafficResults>(b);
    CHECK(ra.issued == requests);
    CHECK(rb.issued == requests);
    CHECK(ra.hw_wr_ack == requests);
    CHECK(rb.hw_wr_ack == requests);
    CHECK(chunk_mismatches(rig, d, base, bytes, requests, 0xA1) == 0);
    CHECK(chunk_mismatches(rig, d, base + requests * bytes, bytes, requests, 0xB2) == 0);
    // The shared link (router 3,0 -> 4,0 on NOC0) carried exactly both flows' flits: per request a
    // header and bytes / 32 data flits. The acks go round the other way.
    const uint64_t flits = rig.chip(0).network().link_stats(0, 3, 0, sim::noc::Port::X).flits;
    CHECK(flits == 2 * flits_per_flow);
    // It was the bottleneck: busy >= 85 % of the time both flows were running, and each flow took
    // clearly longer than alone.
    const uint32_t longest = std::max(ra.cycles, rb.cycles);
    INFO("alone " << alone << " cycles, shared " << ra.cycles << " / " << rb.cycles
                  << ", shared link " << flits << " flits");
    CHECK(flits * 100 >= uint64_t{longest} * 85);
    CHECK(ra.cycles > alone * 13 / 10);
    CHECK(rb.cycles > alone * 13 / 10);
    CHECK(longest < 2 * alone + 500);
    require_no_noc_errors(rig);
}

TEST_CASE("noc multicast: exactly the rectangle's cores receive, on NOC0 and NOC1",
          "[sim][noc][multicast]") {
    Rig rig(1);
    sim::Chip& chip = rig.chip(0);
    const uint32_t gx = chip.spec().grid_x, gy = chip.spec().grid_y;
    const uint32_t dest = 0x20000, bytes = 2048, requests = 2;
    // NOC0 rectangle: workers x 1..3, y 2..4 (9 cores). NOC1 rectangle (in NOC0 terms): x 6..8,
    // y 7..9; NOC1 coordinates mirror both axes, so it is x 1..3, y 2..4 there.
    struct Rect {
        uint32_t x0, y0, x1, y1;
        bool contains(uint32_t x, uint32_t y) const {
            return x >= x0 && x <= x1 && y >= y0 && y <= y1;
        }
    };
    const Rect r0{1, 2, 3, 4}, r1{6, 7, 8, 9};
    // Instantiate every worker in and around both rectangles: the ones outside must stay untouched.
    std::vector<Core> around;
    for (uint32_t y = 1; y < gy; ++y) {
        for (uint32_t x = 0; x < gx; ++x) {
            const sim::CoreSpec* cs = chip.core_spec(x, y);
            if (cs == nullptr || cs->kind != sim::CoreKind::Worker) continue;
            const bool near0 = x + 1 >= r0.x0 && x <= r0.x1 + 1 && y + 1 >= r0.y0 && y <= r0.y1 + 1;
            const bool near1 = x + 1 >= r1.x0 && x <= r1.x1 + 1 && y + 1 >= r1.y0 && y <= r1.y1 + 1;
            if (near0 || near1) {
                chip.tile(x, y);
                around.push_back(Core{0, x, y});
            }
        }
    }
    const Core s0 = rig.eth(0, 0), s1 = rig.eth(0, 1);
    NocTrafficArgs a0{};
    a0.op = static_cast<uint32_t>(NocTrafficOp::Multicast);
    a0.noc = 0;
    a0.posted = 0;
    a0.vc = 4;
    a0.rect_x_start = r0.x0;
    a0.rect_y_start = r0.y0;
    a0.rect_x_end = r0.x1;
    a0.rect_y_end = r0.y1;
    a0.mcast_dests = 9;
    a0.dest_addr = dest;
    a0.local_addr = rig.l1_base();
    a0.request_bytes = bytes;
    a0.requests = requests;
    a0.seed = 0xC0;
    a0.timeout_us = 10'000;
    NocTrafficArgs a1 = a0;
    a1.noc = 1;
    a1.posted = 1;
    a1.vc = 5;
    a1.rect_x_start = gx - 1 - r1.x1;
    a1.rect_y_start = gy - 1 - r1.y1;
    a1.rect_x_end = gx - 1 - r1.x0;
    a1.rect_y_end = gy - 1 - r1.y0;
    a1.dest_addr = dest + requests * bytes;
    a1.seed = 0xC1;
    rig.launch(s0, "noc_traffic", KernelRole::Master, a0);
    rig.launch(s1, "noc_traffic", KernelRole::Master, a1);
    const auto report = rig.run(2'000'000);
    INFO(rig.describe(s0));
    INFO(rig.describe(s1));
    REQUIRE(report.done);
    REQUIRE_KERNEL_PASSED(rig, s0);
    REQUIRE_KERNEL_PASSED(rig, s1);
    // Posted writes have left the NIU; let the last flits land.
    rig.cluster().step(2'000);
    const auto res0 = rig.results<NocTrafficResults>(s0);
    const auto res1 = rig.results<NocTrafficResults>(s1);
    CHECK(res0.hw_wr_ack == 9 * requests);  // one ack per destination per request
    CHECK(res0.hw_nonposted_wr_sent == requests);
    CHECK(res1.hw_posted_wr_sent == requests);
    CHECK(res1.hw_wr_ack == 0);
    uint32_t in0 = 0, in1 = 0;
    for (const Core& c : around) {
        INFO(c.str());
        const bool want0 = r0.contains(c.x, c.y), want1 = r1.contains(c.x, c.y);
        in0 += want0;
        in1 += want1;
        const auto got0 = rig.read_words(c, dest, requests * bytes / 4);
        const auto got1 = rig.read_words(c, dest + requests * bytes, requests * bytes / 4);
        if (want0) {
            CHECK(chunk_mismatches(rig, c, dest, bytes, requests, a0.seed) == 0);
        } else {
            CHECK(got0 == std::vector<uint32_t>(got0.size(), 0));
        }
        if (want1) {
            CHECK(chunk_mismatches(rig, c, dest + requests * bytes, bytes, requests, a1.seed) == 0);
        } else {
            CHECK(got1 == std::vector<uint32_t>(got1.size(), 0));
        }
    }
    CHECK(in0 == 9);
    CHECK(in1 == 9);
    CHECK(around.size() > 18);  // there were neighbours to get it wrong
    require_no_noc_errors(rig);
}

TEST_CASE("noc atomics: four cores increment one counter, the sum is exact", "[sim][noc][atomic]") {
    Rig rig(1);
    sim::Chip& chip = rig.chip(0);
    const uint32_t gx = chip.spec().grid_x, gy = chip.spec().grid_y;
    const Core tgt{0, 1, 1};  // a worker
    chip.tile(tgt.x, tgt.y);
    const uint32_t counter = 0x10000, init = 1000, n = 50;
    rig.write32(tgt, counter, init);
    std::vector<Core> cores{rig.eth(0, 0), rig.eth(0, 1), rig.eth(0, 2), rig.eth(0, 3)};
    for (uint32_t i = 0; i < cores.size(); ++i) {
        NocTrafficArgs a{};
        a.op = static_cast<uint32_t>(NocTrafficOp::AtomicInc);
        a.noc = i % 2;  // two on each NOC
        a.vc = 1;
        a.dest_x = a.noc == 0 ? tgt.x : gx - 1 - tgt.x;
        a.dest_y = a.noc == 0 ? tgt.y : gy - 1 - tgt.y;
        a.dest_addr = counter;
        a.requests = n;
        a.incr = 1;
        a.atomic_ret = rig.l1_base();
        a.timeout_us = 10'000;
        rig.launch(cores[i], "noc_traffic", KernelRole::Master, a);
    }
    const auto report = rig.run(2'000'000);
    REQUIRE(report.done);
    uint64_t first_min = ~0ull, last_max = 0;
    for (const Core& c : cores) {
        INFO(rig.describe(c));
        REQUIRE_KERNEL_PASSED(rig, c);
        const auto r = rig.results<NocTrafficResults>(c);
        CHECK(r.issued == n);
        CHECK(r.hw_atomic_resp == n);
        CHECK(r.atomic_not_increasing == 0);
        first_min = std::min<uint64_t>(first_min, r.atomic_old_first);
        last_max = std::max<uint64_t>(last_max, r.atomic_old_last);
    }
    CHECK(rig.read32(tgt, counter) == init + 4 * n);
    CHECK(first_min == init);             // someone got the initial value
    CHECK(last_max == init + 4 * n - 1);  // and someone the value before the last increment
    require_no_noc_errors(rig);
}
