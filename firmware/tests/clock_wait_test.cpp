// The wall clock and the bounded wait from firmware: the clock is monotonic and agrees with mcycle,
// Deadline::after_us converts with the arch clock, wait_until returns Timeout at its deadline (and
// not much later), Ok for a predicate that already holds even with an expired deadline, and
// Terminated as soon as the host writes the termination word during a long wait (the escape every
// kernel relies on so that nothing hangs).
#include <stdint.h>

#include "common/kernel.h"
#include "hal/clock.h"
#include "hal/csr.h"
#include "hal/wait.h"

namespace {

using protocol::ClockWaitArgs;
using protocol::ClockWaitPhase;
using protocol::ClockWaitResults;
using protocol::ClockWaitStep;
using protocol::TestFail;

ClockWaitResults r{};

// A loop the compiler cannot remove.
void spin(uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) {
        hal::mmio::compiler_barrier();
    }
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const ClockWaitArgs a = k.args<ClockWaitArgs>();
    if (a.timeout_cycles == 0 || a.long_wait_us == 0) {
        return k.fail(r, TestFail::BadArgs, ClockWaitStep::Monotonic);
    }
    r.phase = static_cast<uint32_t>(ClockWaitPhase::Starting);
    k.publish(r);

    // ---- monotonic, back to back ----
    const uint64_t t0 = hal::wall_clock();
    const uint64_t t1 = hal::wall_clock();
    FW_EXPECT(k, r, t1 > t0, TestFail::Unexpected, ClockWaitStep::Monotonic,
              static_cast<uint32_t>(t1 - t0));
    r.back_to_back_cycles = static_cast<uint32_t>(t1 - t0);

    // ---- wall clock and mcycle count the same cycles ----
    {
        const uint64_t w0 = hal::wall_clock();
        const uint32_t c0 = hal::csr::mcycle();
        spin(2000);
        const uint64_t w1 = hal::wall_clock();
        const uint32_t c1 = hal::csr::mcycle();
        const uint32_t dw = static_cast<uint32_t>(w1 - w0), dc = c1 - c0;
        r.wall_minus_mcycle = dw > dc ? dw - dc : dc - dw;
        FW_EXPECT(k, r, dw > 2000 && r.wall_minus_mcycle <= 8, TestFail::Unexpected,
                  ClockWaitStep::Mcycle, dw);
    }

    // ---- a wait that times out ----
    {
        const uint64_t start = hal::wall_clock();
        const hal::Status s = hal::wait_until(
            [] { return false; }, hal::Deadline::at_cycle(start + a.timeout_cycles), k.term());
        r.timeout_elapsed = static_cast<uint32_t>(hal::wall_clock() - start);
        r.timeout_status = static_cast<uint32_t>(s);
        FW_EXPECT_STATUS(k, r, s, hal::Status::Timeout, ClockWaitStep::Timeout, r.timeout_elapsed);
        FW_EXPECT(k, r, r.timeout_elapsed >= a.timeout_cycles, TestFail::Unexpected,
                  ClockWaitStep::Timeout, r.timeout_elapsed);
    }

    // ---- a predicate that already holds wins over an expired deadline ----
    {
        const hal::Status s =
            hal::wait_until([] { return true; }, hal::Deadline::at_cycle(0), k.term());
        r.already_true_status = static_cast<uint32_t>(s);
        FW_EXPECT_STATUS(k, r, s, hal::Status::Ok, ClockWaitStep::AlreadyTrue, 0);
        FW_EXPECT(k, r, hal::Deadline::at_cycle(0).expired(), TestFail::Unexpected,
                  ClockWaitStep::AlreadyTrue, 1);
    }

    // ---- microseconds in the arch's clock ----
    {
        const uint64_t now = hal::wall_clock();
        const hal::Deadline d = hal::Deadline::after_us(hal::kArch, 3);
        r.after_us_cycles = static_cast<uint32_t>(d.cycle() - now);
        FW_EXPECT(k, r, !d.expired(), TestFail::Unexpected, ClockWaitStep::Deadline,
                  r.after_us_cycles);
    }

    // ---- a long wait the host ends with the termination word ----
    r.phase = static_cast<uint32_t>(ClockWaitPhase::WaitingForTermination);
    k.publish(r);
    {
        const uint64_t start = hal::wall_clock();
        r.long_wait_start_lo = static_cast<uint32_t>(start);
        k.publish_word(r, r.long_wait_start_lo);
        const hal::Status s = hal::wait_until(
            [] { return false; }, hal::Deadline::after_us(hal::kArch, a.long_wait_us), k.term());
        r.long_wait_end_lo = fwtest::wall32();
        r.termination_status = static_cast<uint32_t>(s);
        r.phase = static_cast<uint32_t>(ClockWaitPhase::Finished);
        FW_EXPECT_STATUS(k, r, s, hal::Status::Terminated, ClockWaitStep::Termination, 0);
    }
    return k.pass(r);
}
