// What every test and benchmark kernel does with its mailbox (protocol/test_mailbox.h): check the
// magic, read the arguments, publish status, heartbeat and results, and give up cleanly (stuck_at,
// Failed status, exit code) when a wait ends without its condition.
//
//   fwtest::Kernel k;
//   if (!k.begin()) return k.exit_code();
//   const auto args = k.args<protocol::PingPongArgs>();
//   ... hal calls with k.term() as the termination word ...
//   return k.pass(results);            // or k.fail(...), k.stuck(...)
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch.h"
#include "hal/clock.h"
#include "hal/mmio.h"
#include "hal/status.h"
#include "hal/wait.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"

namespace fwtest {

inline constexpr uint32_t kMailboxAddr = protocol::test_mailbox_addr(hal::kArch.arch);

// Word-by-word copies between L1 that the host (or a peer) writes and a local struct, through the
// MMIO seam so the compiler neither caches nor merges them.
template <typename T>
inline void load_words(T& out, uint32_t l1_addr) {
    static_assert(sizeof(T) % 4 == 0);
    uint32_t* dst = reinterpret_cast<uint32_t*>(&out);
    const uint32_t* src = hal::mmio::l1_ptr<const uint32_t>(l1_addr);
    for (size_t i = 0; i < sizeof(T) / 4; ++i) {
        dst[i] = hal::mmio::load_shared(src + i);
    }
}
template <typename T>
inline void store_words(uint32_t l1_addr, const T& in) {
    static_assert(sizeof(T) % 4 == 0);
    const uint32_t* src = reinterpret_cast<const uint32_t*>(&in);
    uint32_t* dst = hal::mmio::l1_ptr<uint32_t>(l1_addr);
    for (size_t i = 0; i < sizeof(T) / 4; ++i) {
        hal::mmio::store_shared(dst + i, src[i]);
    }
}

inline uint32_t load32(uint32_t l1_addr) {
    return hal::mmio::load_shared(hal::mmio::l1_ptr<const uint32_t>(l1_addr));
}
inline void store32(uint32_t l1_addr, uint32_t value) {
    hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(l1_addr), value);
}

// Fill `bytes` (multiple of 4) at `addr` with pattern_word(seed, i).
inline void fill_pattern(uint32_t addr, uint32_t bytes, uint32_t seed) {
    uint32_t* p = hal::mmio::l1_ptr<uint32_t>(addr);
    for (uint32_t i = 0; i < bytes / 4; ++i) {
        p[i] = protocol::pattern_word(seed, i);
    }
    hal::mmio::compiler_barrier();
}

// Words at `addr` that differ from pattern_word(seed, i); the first bad index goes to *first_bad.
inline uint32_t count_mismatches(uint32_t addr, uint32_t bytes, uint32_t seed,
                                 uint32_t* first_bad = nullptr) {
    hal::mmio::compiler_barrier();
    const uint32_t* p = hal::mmio::l1_ptr<const uint32_t>(addr);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < bytes / 4; ++i) {
        if (hal::mmio::load_shared(p + i) != protocol::pattern_word(seed, i)) {
            if (bad == 0 && first_bad != nullptr) {
                *first_bad = i;
            }
            ++bad;
        }
    }
    return bad;
}

inline void zero_words(uint32_t addr, uint32_t bytes) {
    uint32_t* p = hal::mmio::l1_ptr<uint32_t>(addr);
    for (uint32_t i = 0; i < bytes / 4; ++i) {
        hal::mmio::store_shared(p + i, 0);
    }
}

// A deadline `us` microseconds from now on this arch's clock.
inline hal::Deadline deadline_us(uint32_t us) {
    return hal::Deadline::after_us(hal::kArch, us);
}

inline uint32_t wall32() {
    return static_cast<uint32_t>(hal::wall_clock());
}

class Kernel {
  public:
    // Check the mailbox and publish Running. False: the mailbox was not set up (status Failed,
    // exit with exit_code()).
    bool begin() {
        if (hal::mmio::load_shared(&mb()->magic) != protocol::kTestMailboxMagic) {
            code_ = protocol::TestFail::BadMailbox;
            hal::mmio::store_shared(&mb()->status,
                                    protocol::test_status_failed(protocol::TestFail::BadMailbox));
            return false;
        }
        hal::mmio::store_shared(&mb()->stuck_at, 0);
        hal::mmio::store_shared(&mb()->num_results, 0);
        hal::mmio::store_shared(&mb()->status,
                                static_cast<uint32_t>(protocol::TestStatus::Running));
        return true;
    }

    template <typename T>
    T args() const {
        static_assert(sizeof(T) <= sizeof(uint32_t) * protocol::kTestMaxArgs);
        T a;
        load_words(a, kMailboxAddr + offsetof(protocol::TestMailbox, args));
        return a;
    }

    protocol::KernelRole role() const {
        return static_cast<protocol::KernelRole>(hal::mmio::load_shared(&mb()->role));
    }

    // The host-written termination word, for every wait.
    const uint32_t* term() const { return &mb()->termination; }
    bool termination_requested() const {
        return hal::mmio::load_shared(&mb()->termination) != hal::kKeepRunning;
    }

    void beat() {
        hal::mmio::store_shared(&mb()->heartbeat, hal::mmio::load_shared(&mb()->heartbeat) + 1);
    }

    // Publish results (whole struct) now: the host may read them while the kernel runs.
    template <typename R>
    void publish(const R& r) {
        static_assert(sizeof(R) <= sizeof(uint32_t) * protocol::kTestMaxResults);
        store_words(kMailboxAddr + offsetof(protocol::TestMailbox, results), r);
        hal::mmio::store_shared(&mb()->num_results, sizeof(R) / 4);
    }
    // Publish one word of a results struct (e.g. a phase the host polls for).
    template <typename R>
    void publish_word(const R& r, const uint32_t& field) {
        const size_t off =
            reinterpret_cast<const uint8_t*>(&field) - reinterpret_cast<const uint8_t*>(&r);
        store32(kMailboxAddr + offsetof(protocol::TestMailbox, results) + off, field);
    }

    // Finish: results published, status Done, exit code 0.
    template <typename R>
    int pass(const R& r) {
        publish(r);
        hal::mmio::store_shared(&mb()->status, static_cast<uint32_t>(protocol::TestStatus::Done));
        code_ = protocol::TestFail::None;
        return 0;
    }

    // Finish with a failure recorded in r.failure (which must be the first member of R).
    template <typename R, typename Step>
    int fail(R& r, protocol::TestFail code, Step step, hal::Status s = hal::Status::Ok,
             uint32_t detail = 0) {
        static_assert(offsetof(R, failure) == 0);
        r.failure.code = static_cast<uint32_t>(code);
        r.failure.hal_status = static_cast<uint32_t>(s);
        r.failure.step = static_cast<uint32_t>(step);
        r.failure.detail = detail;
        publish(r);
        hal::mmio::store_shared(&mb()->status, protocol::test_status_failed(code));
        code_ = code;
        return exit_code();
    }

    // Finish because a wait gave up at `where` (a *Stuck code) with status s.
    template <typename R, typename Step>
    int stuck(R& r, uint32_t where, Step step, hal::Status s, uint32_t detail = 0) {
        hal::mmio::store_shared(&mb()->stuck_at, where);
        return fail(r, protocol::TestFail::Stuck, step, s, detail);
    }

    int exit_code() const { return static_cast<int>(code_); }

  private:
    static protocol::TestMailbox* mb() {
        return hal::mmio::l1_ptr<protocol::TestMailbox>(kMailboxAddr);
    }

    protocol::TestFail code_ = protocol::TestFail::None;
};

}  // namespace fwtest

// Fail the kernel (return from main) when `call` does not return `expected`.
#define FW_EXPECT_STATUS(k, r, call, expected, step, detail)                                    \
    do {                                                                                        \
        const ::hal::Status fw_status_ = (call);                                                \
        if (fw_status_ != (expected)) {                                                         \
            return (k).fail((r), ::protocol::TestFail::HalError, (step), fw_status_, (detail)); \
        }                                                                                       \
    } while (false)

// Fail the kernel with `code` when `cond` is false.
#define FW_EXPECT(k, r, cond, code, step, detail)                              \
    do {                                                                       \
        if (!(cond)) {                                                         \
            return (k).fail((r), (code), (step), ::hal::Status::Ok, (detail)); \
        }                                                                      \
    } while (false)
