// fabricctl as a process: what happens around a command rather than in it. Results that cannot be
// written to stdout are a failure (exit 109), never a silent success. SIGINT / SIGTERM stop a
// model run within a poll of the device: exit 130 / 143, one line on stderr.

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_expect.h"

namespace t = fabric::test;

namespace {

const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kWhSoc = kSoc + "/wormhole_b0_80_arch.yaml";
// A long model run: all-to-all on the 8x4 Galaxy (about 25 s to the end).
const std::vector<std::string> kGalaxyRun{"mesh", "run", "--cluster",
                                          kSoc + "/clusters/galaxy_6u_cluster.yaml"};
const std::string kStdoutFull =
    "fabricctl: error: cannot write the results to stdout: No space left on device\n";

}  // namespace

// ---- stdout write errors (109) ------------------------------------------------------------------

TEST_CASE("fabricctl: text results to a full disk exit 109", "[cli][stdout]") {
    const auto r = t::fabricctl_to("/dev/full", {"soc", "show", kWhSoc});
    CHECK(r.code == 109);
    CHECK(r.err == kStdoutFull);
}

TEST_CASE("fabricctl: a JSON document to a full disk exits 109", "[cli][stdout]") {
    const auto r = t::fabricctl_to("/dev/full", {"soc", "show", kWhSoc, "--json"});
    CHECK(r.code == 109);
    CHECK(r.err == kStdoutFull);
}

TEST_CASE("fabricctl: long results to a full disk exit 109", "[cli][stdout]") {
    // More than one stdio buffer: the first write fails while the command is still printing.
    const auto r = t::fabricctl_to(
        "/dev/full", {"mesh", "routes", "--mesh-graph", kSoc + "/galaxy_8x4_mesh_graph.yaml"});
    CHECK(r.code == 109);
    CHECK(r.err == kStdoutFull);
}

TEST_CASE("fabricctl: --help to a full disk exits 109", "[cli][stdout]") {
    const auto r = t::fabricctl_to("/dev/full", {"--help"});
    CHECK(r.code == 109);
    CHECK(r.err == kStdoutFull);
}

TEST_CASE("fabricctl: a failing command keeps its code when stdout is full too", "[cli][stdout]") {
    const auto r = t::fabricctl_to("/dev/full", {"soc", "show", kSoc + "/missing.yaml", "--json"});
    CHECK(r.code == 101);
    CHECK_THAT(r.err, Catch::Matchers::EndsWith(kStdoutFull));
}

// ---- SIGINT / SIGTERM ---------------------------------------------------------------------------

TEST_CASE("fabricctl: SIGINT stops a model run promptly, exit 130", "[cli][signal]") {
    using namespace std::chrono_literals;
    const auto r = t::fabricctl_signalled({SIGINT, 3s}, kGalaxyRun);
    INFO("stderr: " << r.err);
    CHECK(r.code == 130);
    CHECK(r.err == "fabricctl: error: interrupted by SIGINT\n");
    CHECK(r.out.empty());
    CHECK(r.seconds_to_exit < 1.0);
}

TEST_CASE("fabricctl: SIGTERM stops a model run promptly, exit 143", "[cli][signal]") {
    using namespace std::chrono_literals;
    std::vector<std::string> args = kGalaxyRun;
    args.push_back("--json");
    const auto r = t::fabricctl_signalled({SIGTERM, 3s}, args);
    INFO("stderr: " << r.err);
    CHECK(r.code == 143);
    CHECK(r.err == "fabricctl: error: interrupted by SIGTERM\n");
    CHECK(r.seconds_to_exit < 1.0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["ok"] == false);
    CHECK(j["error"]["category"] == "interrupted");
    CHECK(j["exit_code"] == 143);
}
