// What the fabricctl end-to-end tests share: running this build's fabricctl in the test's
// temporary directory (FABRICCTL, FABRIC_TEST_TMP_DIR), writing input files there, and what every
// failure must look like: the exit code, one line on stderr starting "fabricctl: ", and nothing on
// stdout (unless the command was asked for --json, whose error document goes to stdout).
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "run_process.h"

namespace fabric::test {

inline Run fabricctl(const std::vector<std::string>& args) {
    return run_process(FABRICCTL, args, FABRIC_TEST_TMP_DIR);
}
// With stdout going to `stdout_to` (e.g. "/dev/full") instead of being captured.
inline Run fabricctl_to(const std::string& stdout_to, const std::vector<std::string>& args) {
    return run_process(FABRICCTL, args, FABRIC_TEST_TMP_DIR, stdout_to);
}

// Sent `sig.signal` after `sig.after`.
inline SignalledRun fabricctl_signalled(const SignalAfter& sig,
                                        const std::vector<std::string>& args) {
    return run_process_signalled(FABRICCTL, args, FABRIC_TEST_TMP_DIR, sig);
}

// `text` in a new file of the temporary directory; returns its path.
inline std::string write_file(const std::string& name, const std::string& text) {
    const std::string path = temp_path(FABRIC_TEST_TMP_DIR, name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
}
inline std::string write_file(const std::string& name, const std::vector<uint8_t>& bytes) {
    return write_file(name, std::string(bytes.begin(), bytes.end()));
}

inline void expect_failure(const Run& r, int code, bool json = false) {
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    CHECK(r.code == code);
    if (!json) CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Matchers::StartsWith("fabricctl: "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK((!r.err.empty() && r.err.back() == '\n'));
}

// The firmware images a CLI test runs exist (a failed check otherwise, never a skip; the firmware
// sub-build makes them before the tests).
inline bool have_firmware(std::initializer_list<const char*> names,
                          const std::string& arch = "wormhole_b0") {
    bool all = true;
    for (const char* name : names) {
        const std::string p = std::string(FABRIC_FIRMWARE_DIR) + "/" + arch + "/" + name + ".elf";
        INFO(p << " must be built (the firmware sub-build runs before the tests)");
        CHECK(std::filesystem::exists(p));
        all = all && std::filesystem::exists(p);
    }
    return all;
}

// The Wormhole fabric images the fabric CLI tests run.
inline bool have_fabric_firmware() {
    return have_firmware({"fabric_router", "fabric_router_2d", "fabric_traffic"});
}

}  // namespace fabric::test
