// What every fabricctl end-to-end test expects of a failure: the exit code, one line on stderr
// starting "fabricctl: ", and nothing on stdout (unless the command was asked for --json, whose
// error document goes to stdout).
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>

#include "run_process.h"

namespace fabric::test {

inline void expect_failure(const Run& r, int code, bool json = false) {
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    CHECK(r.code == code);
    if (!json) CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Matchers::StartsWith("fabricctl: "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK((!r.err.empty() && r.err.back() == '\n'));
}

}  // namespace fabric::test
