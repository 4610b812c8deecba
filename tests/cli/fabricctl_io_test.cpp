// fabricctl as a process: what happens around a command rather than in it. Results that cannot be
// written to stdout are a failure (exit 109), never a silent success. SIGINT / SIGTERM stop a
// model run within a poll of the device: exit 130 / 143, one line on stderr. A long run shows its
// progress on one redrawn line when stderr is a terminal (a pty through script(1)), and nothing
// extra otherwise.

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
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

// ---- option names: one per meaning, the old ones hidden aliases -------------------------------

TEST_CASE("fabricctl: renamed options still work and say so", "[cli][options]") {
    const std::string n300 = kSoc + "/n300_cluster.yaml";
    const auto size = t::fabricctl({"fabric", "run", "--cluster", n300, "--size", "100"});
    CHECK(size.code == 101);  // the value reached --bytes' check
    CHECK(size.err ==
          "fabricctl: warning: --size is deprecated, use --bytes\n"
          "fabricctl: error: --bytes 100: must be a non-zero multiple of 16 and at most 7616 on "
          "wormhole_b0\n");
    const auto timeout = t::fabricctl({"sim", "run", "--arch", "wormhole_b0", "--core", "0",
                                       kSoc + "/missing.elf", "--timeout-cycles", "10"});
    CHECK(timeout.code == 101);
    CHECK_THAT(timeout.err, Catch::Matchers::StartsWith(
                                "fabricctl: warning: --timeout-cycles is deprecated, use "
                                "--max-cycles\nfabricctl: error: "));
    // The alias keeps the option's check.
    t::expect_failure(t::fabricctl({"mesh", "up", "--cluster", n300, "--timeout-cycles", "0"}),
                      100);
    // Hidden: --help names only the new ones.
    const auto help = t::fabricctl({"mesh", "run", "--help"});
    CHECK_THAT(help.out,
               Catch::Matchers::Contains("--max-cycles") && Catch::Matchers::Contains("--bytes"));
    CHECK_THAT(help.out, !Catch::Matchers::Contains("--timeout-cycles") &&
                             !Catch::Matchers::Contains("--size"));
}

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

TEST_CASE("fabricctl: SIGINT during a PCIe run holds the kernel's core in reset, exit 130",
          "[cli][signal][pcie]") {
    using namespace std::chrono_literals;
    const std::string fw = std::string(FABRIC_FIRMWARE_DIR) + "/blackhole/compute_bound.elf";
    if (!std::filesystem::exists(fw)) {
        WARN("skipped: " << fw << " is not built yet");
        return;
    }
    // The simulated tt-kmd driver: the path a run on silicon takes. The kernel runs for seconds.
    const auto r = t::fabricctl_signalled(
        {SIGINT, 1s}, {"pcie", "run", "--target", "sim", "--arch", "blackhole", "--core", "0",
                       "--max-cycles", "4000000000", fw});
    INFO("stderr: " << r.err);
    CHECK(r.code == 130);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Matchers::StartsWith(
                          "fabricctl: SIGINT: held the 1 core this command started in reset on ") &&
                          Catch::Matchers::EndsWith("\nfabricctl: error: interrupted by SIGINT\n"));
    CHECK(r.seconds_to_exit < 1.0);
}

// ---- progress on a terminal
// ----------------------------------------------------------------------

namespace {

const std::vector<std::string> kT3kRun{"mesh",
                                       "run",
                                       "--cluster",
                                       kSoc + "/t3k_cluster.yaml",
                                       "--mesh-graph",
                                       kSoc + "/t3k_mesh_graph.yaml",
                                       "--packets",
                                       "2",
                                       "--bytes",
                                       "256",
                                       "-q"};

}  // namespace

TEST_CASE("fabricctl: a long run on a terminal shows its progress on one line", "[cli][progress]") {
    std::string command = FABRICCTL;
    for (const auto& a : kT3kRun) command += " " + a;
    // script(1) runs the command on a pty (stdout and stderr both) and copies what it wrote.
    const auto r =
        t::run_process("/usr/bin/script", {"-qec", command, "/dev/null"}, FABRIC_TEST_TMP_DIR);
    INFO("terminal: " << r.out);
    CHECK(r.code == 0);
    using Catch::Matchers::Contains;
    CHECK_THAT(r.out, Contains("\rmesh run: bring-up, 0 of 112 packets delivered"));
    CHECK_THAT(r.out, Contains("\rmesh run: traffic, ") && Contains(" cycles/s"));
    // The routers publish their counters as they go: some of the 112 by now.
    CHECK_THAT(r.out,
               Contains("\rmesh run: termination, ") && Contains(" of 112 packets delivered"));
    // Erased (overwritten with blanks) before the results start at the beginning of the line.
    CHECK_THAT(r.out, Contains(" \rmesh graph "));
}

TEST_CASE("fabricctl: a long run writes no progress when stderr is not a terminal",
          "[cli][progress]") {
    const auto r = t::fabricctl(kT3kRun);
    CHECK(r.code == 0);
    CHECK(r.err.empty());  // -q: no verdict either
    CHECK(r.out.find('\r') == std::string::npos);
}
