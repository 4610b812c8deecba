// Every NOC HAL call from firmware, against a passive target core on the same chip: unicast write
// and read on NOC0 and NOC1, posted and non-posted, requests split at the burst size, inline
// writes (with byte enables), atomic increments (non-posted with the old value returned, posted,
// wrapping), transaction IDs, the flushed/sent checks, every barrier, and the argument checks that
// refuse a request before it reaches the NIU. The kernel checks what it can see itself and
// publishes the NIU counter deltas for the host to compare with the exact expected numbers.
#include <stdint.h>

#include "common/kernel.h"
#include "hal/noc.h"
#include "hal/timeouts.h"

namespace {

using protocol::HalNocArgs;
using protocol::HalNocResults;
using protocol::HalNocStep;
using protocol::TestFail;
using Noc = hal::Noc<hal::kArch>;
namespace st = hal::noc::status;

constexpr const hal::ArchMap& A = hal::kArch;

hal::Deadline barrier_deadline() {
    return hal::Deadline::after_us(A, hal::timeouts::kNocBarrierUs);
}

struct CounterSnapshot {
    uint32_t v[6];
};

CounterSnapshot snapshot(const Noc& n) {
    return CounterSnapshot{
        {n.hw_counter(st::kMstNonpostedWrReqSent), n.hw_counter(st::kMstWrAckReceived),
         n.hw_counter(st::kMstRdRespReceived), n.hw_counter(st::kMstAtomicRespReceived),
         n.hw_counter(st::kMstPostedAtomicSent), n.hw_counter(st::kMstPostedWrReqSent)}};
}

protocol::NocCounterDeltas deltas(const CounterSnapshot& a, const CounterSnapshot& b) {
    return protocol::NocCounterDeltas{b.v[0] - a.v[0], b.v[1] - a.v[1], b.v[2] - a.v[2],
                                      b.v[3] - a.v[3], b.v[4] - a.v[4], b.v[5] - a.v[5]};
}

bool same(const CounterSnapshot& a, const CounterSnapshot& b) {
    for (int i = 0; i < 6; ++i) {
        if (a.v[i] != b.v[i]) {
            return false;
        }
    }
    return true;
}

HalNocResults r{};

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const HalNocArgs a = k.args<HalNocArgs>();
    const uint32_t T = a.transfer_bytes;
    if (T < 4096 || T % 16 != 0 || a.grid_x == 0 || a.grid_y == 0) {
        return k.fail(r, TestFail::BadArgs, HalNocStep::Init);
    }
    // The target in each NoC's coordinates (NOC1 mirrors both axes).
    const uint32_t t0x = a.target_x, t0y = a.target_y;
    const uint32_t t1x = a.grid_x - 1 - a.target_x, t1y = a.grid_y - 1 - a.target_y;

    Noc noc0{hal::NocId::Noc0, {.atomic_return_l1_addr = a.local_atomic_ret}};
    Noc noc1{hal::NocId::Noc1, {.atomic_return_l1_addr = a.local_atomic_ret}};
    uint32_t checked = 0;

    // ---- before init: every request is refused ----
    FW_EXPECT_STATUS(k, r, noc0.write(a.local_src, {t0x, t0y, a.target_a}, 16),
                     hal::Status::NotInitialized, HalNocStep::Init, 0);
    ++checked;
    FW_EXPECT_STATUS(k, r, noc0.init(), hal::Status::Ok, HalNocStep::Init, 0);
    FW_EXPECT_STATUS(k, r, noc1.init(), hal::Status::Ok, HalNocStep::Init, 1);
    Noc no_ret{hal::NocId::Noc0};  // no atomic return word configured
    FW_EXPECT_STATUS(k, r, no_ret.init(), hal::Status::Ok, HalNocStep::Init, 2);

    const CounterSnapshot start0 = snapshot(noc0), start1 = snapshot(noc1);
    const uint32_t accepted0 = noc0.hw_counter(st::kMstCmdAccepted);

    // ---- own coordinates ----
    r.self_noc0 = protocol::pack_xy(noc0.self().x, noc0.self().y);
    r.self_noc1 = protocol::pack_xy(noc1.self().x, noc1.self().y);
    FW_EXPECT(k, r,
              noc1.self().x == a.grid_x - 1 - noc0.self().x &&
                  noc1.self().y == a.grid_y - 1 - noc0.self().y,
              TestFail::Unexpected, HalNocStep::SelfCoords, r.self_noc1);

    // ---- argument checks: refused before any register is written ----
    {
        const hal::NocAddr tgt{t0x, t0y, a.target_a};
        struct Case {
            hal::Status got, want;
        };
        const Case cases[] = {
            {noc0.write(a.local_src, tgt, 0), hal::Status::BadArg},
            {noc0.write(a.local_src + 4, tgt, 16), hal::Status::Misaligned},
            {noc0.write(a.local_src, tgt, 16, {.vc = 4}), hal::Status::BadArg},
            {noc0.write(a.local_src, tgt, 16, {.trid = 16}), hal::Status::BadArg},
            {noc0.write(A.eth_l1_size - 16, tgt, 32), hal::Status::OutOfRange},
            {noc0.write(a.local_src, {64, 0, a.target_a}, 16), hal::Status::OutOfRange},
            {noc0.read(tgt, a.local_dst + 8, 16), hal::Status::Misaligned},
            {noc0.write_inline(tgt, 1, {.byte_enable = 0}), hal::Status::BadArg},
            {noc0.write_inline({t0x, t0y, a.target_words + 2}, 1), hal::Status::Misaligned},
            {noc0.atomic_inc({t0x, t0y, 0xFFB40000}, 1), hal::Status::Unsupported},
            {noc0.atomic_inc({t0x, t0y, a.target_counter + 1}, 1), hal::Status::Misaligned},
            {noc0.atomic_inc(tgt, 1, {.wrap = 32}), hal::Status::BadArg},
            {no_ret.atomic_inc(tgt, 1), hal::Status::BadArg},
            {noc0.multicast_write(a.local_src, {1, 1, 2, 2}, a.target_a, 16, 4, {.trid = 1}),
             hal::Status::BadArg},
            {noc0.multicast_write(a.local_src, {1, 1, 2, 2}, a.target_a, 16, 4, {.vc = 1}),
             hal::Status::BadArg},
            {noc0.multicast_write(a.local_src, {1, 1, 2, 2}, a.target_a, 16, 0),
             hal::Status::BadArg},
            {noc0.trid_barrier(16, barrier_deadline()), hal::Status::BadArg},
            {noc0.clear_trid_counters(1u << 16), hal::Status::BadArg},
        };
        for (const Case& c : cases) {
            FW_EXPECT_STATUS(k, r, c.got, c.want, HalNocStep::ArgErrors, checked);
            ++checked;
        }
        // Nothing reached the NIU.
        FW_EXPECT(
            k, r, noc0.hw_counter(st::kMstCmdAccepted) == accepted0 && same(snapshot(noc0), start0),
            TestFail::CounterMismatch, HalNocStep::ArgErrors, noc0.hw_counter(st::kMstCmdAccepted));
        r.arg_errors_checked = checked;
    }

    // ---- NOC0 non-posted write, split at the burst size ----
    fwtest::fill_pattern(a.local_src, T, protocol::kHalNocSeedA);
    {
        const uint32_t issued0 = noc0.counters().nonposted_wr_req_issued;
        FW_EXPECT_STATUS(k, r, noc0.write(a.local_src, {t0x, t0y, a.target_a}, T, {.trid = 1}),
                         hal::Status::Ok, HalNocStep::WriteNoc0, 0);
        const uint32_t chunks = (T + A.noc_max_burst_bytes - 1) / A.noc_max_burst_bytes;
        FW_EXPECT(k, r, noc0.counters().nonposted_wr_req_issued - issued0 == chunks,
                  TestFail::CounterMismatch, HalNocStep::WriteNoc0, chunks);
        if (!noc0.nonposted_writes_flushed()) {
            r.flags |= protocol::kFlagNotFlushedAtIssue;
        }
        // Wait for "flushed" alone: once every ack is back, every request has necessarily left.
        FW_EXPECT_STATUS(k, r,
                         hal::wait_until([&] { return noc0.nonposted_writes_flushed(); },
                                         barrier_deadline(), k.term()),
                         hal::Status::Ok, HalNocStep::WriteNoc0, 1);
        if (noc0.nonposted_writes_sent()) {
            r.flags |= protocol::kFlagSentWhenFlushed;
        }
        FW_EXPECT_STATUS(k, r, noc0.write_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::WriteNoc0, 2);
        FW_EXPECT(k, r, noc0.trid_flushed(1) && noc0.trid_writes_sent(1), TestFail::Unexpected,
                  HalNocStep::WriteNoc0, 3);
    }

    // ---- NOC0 read back ----
    fwtest::zero_words(a.local_dst, T);
    FW_EXPECT_STATUS(k, r, noc0.read({t0x, t0y, a.target_a}, a.local_dst, T), hal::Status::Ok,
                     HalNocStep::ReadNoc0, 0);
    FW_EXPECT_STATUS(k, r, noc0.read_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                     HalNocStep::ReadNoc0, 1);
    {
        uint32_t first = 0;
        const uint32_t bad =
            fwtest::count_mismatches(a.local_dst, T, protocol::kHalNocSeedA, &first);
        FW_EXPECT(k, r, bad == 0, TestFail::DataMismatch, HalNocStep::ReadNoc0, first);
    }

    // ---- NOC1 posted write with a transaction ID, then read back on NOC1 (same path and VC, so
    // the read arrives after the posted data) ----
    fwtest::fill_pattern(a.local_src, T, protocol::kHalNocSeedB);
    FW_EXPECT_STATUS(
        k, r, noc1.write(a.local_src, {t1x, t1y, a.target_b}, T, {.posted = true, .trid = 7}),
        hal::Status::Ok, HalNocStep::PostedWriteNoc1, 0);
    FW_EXPECT_STATUS(
        k, r,
        hal::wait_until([&] { return noc1.posted_writes_sent(); }, barrier_deadline(), k.term()),
        hal::Status::Ok, HalNocStep::PostedWriteNoc1, 1);
    r.flags |= protocol::kFlagPostedSent;
    FW_EXPECT_STATUS(
        k, r,
        hal::wait_until([&] { return noc1.trid_writes_sent(7); }, barrier_deadline(), k.term()),
        hal::Status::Ok, HalNocStep::PostedWriteNoc1, 2);
    r.flags |= protocol::kFlagTridWritesSent;
    FW_EXPECT_STATUS(k, r, noc1.write_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                     HalNocStep::PostedWriteNoc1, 3);

    fwtest::zero_words(a.local_dst, T);
    FW_EXPECT_STATUS(k, r, noc1.read({t1x, t1y, a.target_b}, a.local_dst, T), hal::Status::Ok,
                     HalNocStep::ReadNoc1, 0);
    FW_EXPECT_STATUS(k, r, noc1.read_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                     HalNocStep::ReadNoc1, 1);
    {
        uint32_t first = 0;
        const uint32_t bad =
            fwtest::count_mismatches(a.local_dst, T, protocol::kHalNocSeedB, &first);
        FW_EXPECT(k, r, bad == 0, TestFail::DataMismatch, HalNocStep::ReadNoc1, first);
    }
    // NOC1 read of what NOC0 wrote (acknowledged, so it is there).
    fwtest::zero_words(a.local_dst, T);
    FW_EXPECT_STATUS(k, r, noc1.read({t1x, t1y, a.target_a}, a.local_dst, T), hal::Status::Ok,
                     HalNocStep::ReadNoc1, 2);
    FW_EXPECT_STATUS(k, r, noc1.read_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                     HalNocStep::ReadNoc1, 3);
    {
        uint32_t first = 0;
        const uint32_t bad =
            fwtest::count_mismatches(a.local_dst, T, protocol::kHalNocSeedA, &first);
        FW_EXPECT(k, r, bad == 0, TestFail::DataMismatch, HalNocStep::ReadNoc1, 0x10000 | first);
    }

    // ---- inline writes: NOC0 non-posted, NOC1 posted, a single byte lane ----
    {
        uint32_t expect[4] = {0, 0, 0, 0};
        const hal::Status s0 =
            noc0.write_inline({t0x, t0y, a.target_words}, protocol::kHalNocInlineValue0);
        if (A.noc.inline_to_l1_unsafe) {
            // Blackhole (BH-86): inline writes to L1 are refused; nothing is sent.
            FW_EXPECT_STATUS(k, r, s0, hal::Status::Unsupported, HalNocStep::Inline, 0);
            FW_EXPECT_STATUS(k, r,
                             noc1.write_inline({t1x, t1y, a.target_words + 4},
                                               protocol::kHalNocInlineValue1, {.posted = true}),
                             hal::Status::Unsupported, HalNocStep::Inline, 1);
            r.flags |= protocol::kFlagBlackholeInlineRefused;
        } else {
            FW_EXPECT_STATUS(k, r, s0, hal::Status::Ok, HalNocStep::Inline, 0);
            FW_EXPECT_STATUS(k, r,
                             noc1.write_inline({t1x, t1y, a.target_words + 4},
                                               protocol::kHalNocInlineValue1, {.posted = true}),
                             hal::Status::Ok, HalNocStep::Inline, 1);
            FW_EXPECT_STATUS(
                k, r,
                noc0.write_inline({t0x, t0y, a.target_words + 8}, protocol::kHalNocInlineByteValue,
                                  {.byte_enable = 0x2}),
                hal::Status::Ok, HalNocStep::Inline, 2);
            expect[0] = protocol::kHalNocInlineValue0;
            expect[1] = protocol::kHalNocInlineValue1;
            expect[2] = protocol::kHalNocInlineByteValue & 0x0000FF00u;
        }
        FW_EXPECT_STATUS(k, r, noc0.write_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Inline, 3);
        FW_EXPECT_STATUS(k, r, noc1.write_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Inline, 4);
        fwtest::zero_words(a.local_dst, 16);
        FW_EXPECT_STATUS(k, r, noc1.read({t1x, t1y, a.target_words}, a.local_dst, 16),
                         hal::Status::Ok, HalNocStep::Inline, 5);
        FW_EXPECT_STATUS(k, r, noc1.read_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Inline, 6);
        for (uint32_t i = 0; i < 4; ++i) {
            FW_EXPECT(k, r, fwtest::load32(a.local_dst + 4 * i) == expect[i],
                      TestFail::DataMismatch, HalNocStep::Inline, 0x10 + i);
        }
    }

    // ---- atomics ----
    {
        const uint32_t init = protocol::kHalNocCounterInit;
        const hal::NocAddr ctr0{t0x, t0y, a.target_counter};
        fwtest::store32(a.local_atomic_ret, 0xDEADBEEF);
        FW_EXPECT_STATUS(k, r, noc0.atomic_inc(ctr0, 5), hal::Status::Ok, HalNocStep::Atomic, 0);
        FW_EXPECT_STATUS(k, r, noc0.atomic_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Atomic, 1);
        r.atomic_old_first = fwtest::load32(a.local_atomic_ret);
        FW_EXPECT(k, r, r.atomic_old_first == init, TestFail::DataMismatch, HalNocStep::Atomic,
                  r.atomic_old_first);
        FW_EXPECT_STATUS(k, r, noc0.atomic_inc(ctr0, 7, {.posted = true}), hal::Status::Ok,
                         HalNocStep::Atomic, 2);
        FW_EXPECT_STATUS(k, r, noc0.atomic_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Atomic, 3);
        FW_EXPECT_STATUS(k, r, noc0.atomic_inc(ctr0, 1), hal::Status::Ok, HalNocStep::Atomic, 4);
        FW_EXPECT_STATUS(k, r, noc0.atomic_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Atomic, 5);
        r.atomic_old_second = fwtest::load32(a.local_atomic_ret);
        FW_EXPECT(k, r, r.atomic_old_second == init + 12, TestFail::DataMismatch,
                  HalNocStep::Atomic, r.atomic_old_second);
        // Wrap above bit 7: only the low byte counts, the rest of the word is kept.
        FW_EXPECT_STATUS(k, r, noc0.atomic_inc(ctr0, 0x10, {.wrap = 7}), hal::Status::Ok,
                         HalNocStep::Atomic, 6);
        FW_EXPECT_STATUS(k, r, noc0.atomic_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Atomic, 7);
        r.atomic_old_wrap = fwtest::load32(a.local_atomic_ret);
        FW_EXPECT(k, r, r.atomic_old_wrap == init + 13, TestFail::DataMismatch, HalNocStep::Atomic,
                  r.atomic_old_wrap);
        const uint32_t wrapped = (init & ~0xFFu) | ((init + 13 + 0x10) & 0xFFu);
        // NOC1: +0x100 on the wrapped value.
        FW_EXPECT_STATUS(k, r, noc1.atomic_inc({t1x, t1y, a.target_counter}, 0x100),
                         hal::Status::Ok, HalNocStep::Atomic, 8);
        FW_EXPECT_STATUS(k, r, noc1.atomic_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Atomic, 9);
        FW_EXPECT(k, r, fwtest::load32(a.local_atomic_ret) == wrapped, TestFail::DataMismatch,
                  HalNocStep::Atomic, fwtest::load32(a.local_atomic_ret));
    }

    // ---- transaction IDs ----
    {
        const hal::NocAddr tgt{t0x, t0y, a.target_a};
        // 4 KiB: its last flit leaves the NIU ~128 cycles after issue, so the ID is still
        // outstanding when the counter is read right after.
        FW_EXPECT_STATUS(k, r, noc0.write(a.local_src, tgt, 4096, {.trid = 5}), hal::Status::Ok,
                         HalNocStep::Trids, 0);
        r.trid_outstanding_at_issue = noc0.hw_counter(st::mst_reqs_outstanding_id(5));
        if (!noc0.trid_flushed(5)) {
            r.flags |= protocol::kFlagTridNotFlushedAtIssue;
        }
        FW_EXPECT_STATUS(k, r, noc0.trid_barrier(5, barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Trids, 1);
        if (noc0.trid_flushed(5)) {
            r.flags |= protocol::kFlagTridFlushedAfter;
        }
        // Two IDs in flight at once, waited for in the other order.
        FW_EXPECT_STATUS(k, r, noc0.write(a.local_src, tgt, 256, {.trid = 3}), hal::Status::Ok,
                         HalNocStep::Trids, 2);
        FW_EXPECT_STATUS(
            k, r, noc0.write(a.local_src + 256, {t0x, t0y, a.target_a + 256}, 256, {.trid = 4}),
            hal::Status::Ok, HalNocStep::Trids, 3);
        FW_EXPECT_STATUS(k, r, noc0.trid_barrier(4, barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Trids, 4);
        FW_EXPECT_STATUS(k, r, noc0.trid_barrier(3, barrier_deadline(), k.term()), hal::Status::Ok,
                         HalNocStep::Trids, 5);
        FW_EXPECT(k, r, noc0.trid_flushed(3) && noc0.trid_flushed(4), TestFail::Unexpected,
                  HalNocStep::Trids, 6);
        FW_EXPECT_STATUS(k, r, noc0.clear_trid_counters(1u << 9), hal::Status::Ok,
                         HalNocStep::Trids, 7);
    }

    // ---- barriers with nothing outstanding, even with an expired deadline ----
    FW_EXPECT_STATUS(k, r, noc0.full_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                     HalNocStep::Barriers, 0);
    FW_EXPECT_STATUS(k, r, noc1.full_barrier(barrier_deadline(), k.term()), hal::Status::Ok,
                     HalNocStep::Barriers, 1);
    FW_EXPECT_STATUS(k, r, noc0.write_barrier(hal::Deadline::at_cycle(0)), hal::Status::Ok,
                     HalNocStep::Barriers, 2);
    FW_EXPECT_STATUS(k, r, noc1.read_barrier(hal::Deadline::at_cycle(0)), hal::Status::Ok,
                     HalNocStep::Barriers, 3);
    FW_EXPECT_STATUS(k, r, noc0.atomic_barrier(hal::Deadline::at_cycle(0)), hal::Status::Ok,
                     HalNocStep::Barriers, 4);

    // ---- the software counts agree with the NIU ----
    FW_EXPECT(k, r,
              noc0.nonposted_writes_sent() && noc0.nonposted_writes_flushed() &&
                  noc0.posted_writes_sent() && noc0.reads_flushed() && noc0.atomics_flushed() &&
                  noc0.posted_atomics_sent() && noc1.nonposted_writes_sent() &&
                  noc1.nonposted_writes_flushed() && noc1.posted_writes_sent() &&
                  noc1.reads_flushed() && noc1.atomics_flushed() && noc1.posted_atomics_sent(),
              TestFail::CounterMismatch, HalNocStep::Counters, 0);
    r.noc0 = deltas(start0, snapshot(noc0));
    r.noc1 = deltas(start1, snapshot(noc1));
    return k.pass(r);
}
