// Status and result types returned by every HAL call that can fail.
//
// A HAL call either does what it was asked or returns a status that says why not; it never fails
// silently and never half-does a hardware operation: argument checks happen before the first
// register write, so a call that returns an argument error (BadArg, Misaligned, OutOfRange,
// Unsupported) or Busy has touched no register.
#pragma once

#include <stdint.h>

namespace hal {

enum class [[nodiscard]] Status : uint8_t{
    Ok = 0,
    Timeout = 1,         // a bounded wait reached its deadline
    Terminated = 2,      // a bounded wait saw the host-written termination word
    Busy = 3,            // the resource is in use; nothing was done, retry later
    BadArg = 4,          // an argument is invalid (zero size, VC or transaction ID out of range...)
    Misaligned = 5,      // an address or size breaks the hardware's alignment rule
    OutOfRange = 6,      // an address, coordinate or index lies outside what the hardware reaches
    Unsupported = 7,     // the hardware cannot do this (e.g. remote register write on TXQ1)
    NotInitialized = 8,  // the driver's init() has not run (or failed)
};

// Short stable name, for logs and status words.
constexpr const char* to_string(Status s) {
    switch (s) {
        case Status::Ok:
            return "ok";
        case Status::Timeout:
            return "timeout";
        case Status::Terminated:
            return "terminated";
        case Status::Busy:
            return "busy";
        case Status::BadArg:
            return "bad-arg";
        case Status::Misaligned:
            return "misaligned";
        case Status::OutOfRange:
            return "out-of-range";
        case Status::Unsupported:
            return "unsupported";
        case Status::NotInitialized:
            return "not-initialized";
        default:
            return "unknown-status";
    }
}

// A value or the reason there is none. `value` is meaningful only when ok().
template <typename T>
struct [[nodiscard]] Result {
    Status status;
    T value;

    constexpr bool ok() const { return status == Status::Ok; }
};

template <typename T>
constexpr Result<T> make_result(T value) {
    return Result<T>{Status::Ok, value};
}

template <typename T>
constexpr Result<T> make_error(Status s) {
    return Result<T>{s, T{}};
}

}  // namespace hal

// Return early from the enclosing function when `expr` is not Status::Ok.
#define HAL_TRY(expr)                                 \
    do {                                              \
        const ::hal::Status hal_try_status_ = (expr); \
        if (hal_try_status_ != ::hal::Status::Ok) {   \
            return hal_try_status_;                   \
        }                                             \
    } while (false)
