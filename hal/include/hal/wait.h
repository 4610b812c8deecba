// The one bounded-wait helper. Every wait in the firmware goes through wait_until: it polls a
// predicate until it holds, the deadline passes, or the host writes the termination word.
#pragma once

#include <stdint.h>

#include "hal/clock.h"
#include "hal/mmio.h"
#include "hal/status.h"

namespace hal {

// The value of the host-written termination word while the firmware should keep running; any
// other value asks it to stop (the firmware's protocol header gives those values meaning).
inline constexpr uint32_t kKeepRunning = 0;

// Poll `pred()` until it returns true (Status::Ok), `*termination_word` (when given) becomes
// something other than kKeepRunning (Status::Terminated), or `deadline` passes (Status::Timeout).
// The predicate is checked first on every pass, so a condition that already holds returns Ok even
// with an expired deadline, and a condition that becomes true wins over a termination request
// seen in the same pass. Each pass reads the wall clock once.
// wait_until_inline is the same loop forced inline, for hot paths that must not make a call
// (e.g. Noc request issue, where a call would make the caller save its registers).
template <typename Pred>
[[nodiscard, gnu::always_inline]] inline Status wait_until_inline(
    Pred&& pred, Deadline deadline, const uint32_t* termination_word = nullptr) {
    while (true) {
        if (pred()) {
            return Status::Ok;
        }
        if (termination_word != nullptr && mmio::load_shared(termination_word) != kKeepRunning) {
            return Status::Terminated;
        }
        if (deadline.expired()) {
            return Status::Timeout;
        }
    }
}

template <typename Pred>
[[nodiscard]] Status wait_until(Pred&& pred, Deadline deadline,
                                const uint32_t* termination_word = nullptr) {
    return wait_until_inline(pred, deadline, termination_word);
}

}  // namespace hal
