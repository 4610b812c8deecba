// What every fuzz target shares. A target is an LLVMFuzzerTestOneInput: it hands the input to one
// loader, and the loader may only accept it or refuse it with a fabric::Error. Any other exception
// escapes (libFuzzer reports it as a crash; mutation_driver.cpp as a failure), as do crashes,
// hangs and allocations above the cap, which the sanitizer or the driver catch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fabric::fuzz {

// Whether the last input was accepted by the loader (for the driver, which keeps accepted inputs
// as starting points for further mutation; libFuzzer uses coverage instead).
inline bool g_last_accepted = false;

// Run a loader on one input: a fabric::Error is a fine answer to a bad input.
template <typename F>
void accept_or_refuse(F&& load) {
    g_last_accepted = false;
    try {
        load();
        g_last_accepted = true;
    } catch (const fabric::Error& e) {
        // A refusal must be one printable line: escaped (fabric::escape_control) and short
        // enough to read.
        const std::string_view what = e.what();
        for (const char c : what) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                throw std::logic_error("raw control character in an error message");
            }
        }
    }
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Inputs the driver starts from besides its corpus files (a target may have none).
std::vector<std::string> builtin_seeds();

// Tokens worth inserting into inputs of this target (YAML keys, numbers at the edges of ranges).
std::vector<std::string> dictionary();

}  // namespace fabric::fuzz
