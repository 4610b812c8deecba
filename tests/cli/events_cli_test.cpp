// `fabricctl mesh events`: the event log a run wrote with --events FILE (fabric/router_events.h),
// printed one event per line, as JSON lines with --json, followed with --follow; a file that is
// not an event log is bad input naming the line.
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_expect.h"

namespace t = fabric::test;
using Catch::Matchers::Contains;

namespace {

const std::string kLog =
    R"j({"host_time":"2026-11-26T16:30:00.123Z","router":"router east chip 0 eth 2","chip":0,)j"
    R"j("eth":2,"text":"state ready_for_traffic","kind":"state","cycle":5000,"router_time":12,)j"
    R"j("status":"ready_for_traffic"})j"
    "\n"
    R"j({"host_time":"2026-11-26T16:30:00.456Z","router":"router west chip 1 eth 4","chip":1,)j"
    R"j("eth":4,"text":"bad_packet magic on rx0 (seq 7)","kind":"bad_packet","cycle":6000,)j"
    R"j("router_time":99,"reason":"magic","channel":0,"seq":7})j"
    "\n";

}  // namespace

TEST_CASE("fabricctl mesh events: one line per event", "[cli][events]") {
    const std::string path = t::write_file("events.jsonl", kLog);
    const auto r = t::fabricctl({"mesh", "events", path});
    INFO("stderr: " << r.err);
    CHECK(r.code == 0);
    CHECK(r.out ==
          "2026-11-26T16:30:00.123Z router east chip 0 eth 2: state ready_for_traffic\n"
          "2026-11-26T16:30:00.456Z router west chip 1 eth 4: bad_packet magic on rx0 (seq 7)\n");
    CHECK(r.err.empty());
}

TEST_CASE("fabricctl mesh events --json: the records as they are", "[cli][events]") {
    const std::string path = t::write_file("events.jsonl", kLog);
    const auto r = t::fabricctl({"mesh", "events", path, "--json"});
    CHECK(r.code == 0);
    const auto first = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
    CHECK(first["status"] == "ready_for_traffic");
    CHECK(first["cycle"] == 5000);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
}

TEST_CASE("fabricctl mesh events: not an event log is bad input naming the line",
          "[cli][events][errors]") {
    std::string path = t::write_file("bad.jsonl", kLog + "{oops\n");
    auto r = t::fabricctl({"mesh", "events", path});
    CHECK(r.code == 101);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);  // the good lines before it
    CHECK(r.err == "fabricctl: error: " + path + ":3: not JSON\n");
    r = t::fabricctl({"mesh", "events", t::write_file("bad.jsonl", "{\"router\":\"r\"}\n")});
    t::expect_failure(r, 101);
    CHECK_THAT(r.err, Contains(":1: not an event record (no \"host_time\")"));
    r = t::fabricctl({"mesh", "events", t::write_file("bad.jsonl", std::string(70'000, 'x'))});
    t::expect_failure(r, 101);
    CHECK_THAT(r.err, Contains(":1: a line longer than 65536 bytes is not an event record"));
    r = t::fabricctl({"mesh", "events", std::string(FABRIC_TEST_TMP_DIR) + "/no-such.jsonl"});
    t::expect_failure(r, 101);
    CHECK_THAT(r.err, Contains("no-such.jsonl: cannot open the event log"));
}

TEST_CASE("fabricctl mesh events --follow: prints, then waits for more until SIGINT",
          "[cli][events][signal]") {
    using namespace std::chrono_literals;
    const std::string path = t::write_file("events.jsonl", kLog);
    const auto r = t::fabricctl_signalled({SIGINT, 1s}, {"mesh", "events", path, "--follow"});
    CHECK(r.code == 130);
    CHECK(r.out ==
          "2026-11-26T16:30:00.123Z router east chip 0 eth 2: state ready_for_traffic\n"
          "2026-11-26T16:30:00.456Z router west chip 1 eth 4: bad_packet magic on rx0 (seq 7)\n");
    CHECK(r.err == "fabricctl: error: interrupted by SIGINT\n");
    CHECK(r.seconds_to_exit < 1.0);
}

TEST_CASE("fabricctl fabric run --events: the routers' log, then mesh events prints it",
          "[cli][events][fabric]") {
    const std::string fw = std::string(FABRIC_FIRMWARE_DIR) + "/wormhole_b0/fabric_router.elf";
    if (!std::filesystem::exists(fw)) {
        WARN("skipped: " << fw << " is not built yet");
        return;
    }
    const std::string log = std::string(FABRIC_TEST_TMP_DIR) + "/run_events.jsonl";
    const auto run = t::fabricctl({"fabric", "run", "--cluster",
                                   std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/t3k_cluster.yaml",
                                   "--chips", "0,1", "--packets", "4", "--events", log, "-q"});
    INFO("stderr: " << run.err);
    REQUIRE(run.code == 0);
    const auto r = t::fabricctl({"mesh", "events", log});
    CHECK(r.code == 0);
    // Both routers of the line, from start to terminated, each state once and in order.
    for (const std::string router : {"router east chip 0 eth 2", "router west chip 1 eth 4"}) {
        std::string seen;
        std::istringstream lines(r.out);
        for (std::string line; std::getline(lines, line);) {
            const auto at = line.find(" " + router + ": ");
            if (at != std::string::npos) seen += line.substr(at + router.size() + 3) + "; ";
        }
        CHECK(seen ==
              "state started; state config_checked; state streams_initialized; state handshaking; "
              "state handshake_complete; state ready_for_traffic; state draining; "
              "state terminated; ");
    }
}
