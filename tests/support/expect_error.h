// Catch2 helper: run f, require it to throw fabric::Error of a category, return the message
// (checked to be one line) for further matching.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "fabric/error.h"

namespace fabric::test {

template <typename F>
std::string expect_error(ErrorCategory category, F&& f) {
    try {
        f();
    } catch (const Error& e) {
        const std::string msg = e.what();
        INFO("message: " << msg);
        CHECK(category_name(e.category()) == category_name(category));
        CHECK(msg.find('\n') == std::string::npos);
        return msg;
    }
    FAIL("expected a fabric::Error (" << category_name(category) << "), nothing was thrown");
    return {};
}

}  // namespace fabric::test
