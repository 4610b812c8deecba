// `fabricctl ccl run` as a process: a ring all-gather and a ring reduce-scatter on the t3k's 8
// chips (the 1D router and the ccl_ring kernel of this build; a failed check while they are not
// built, never a skip): the text report and the JSON counts exact, and every bad input with its
// exit code and one-line message.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_expect.h"
#include "run_process.h"

using Catch::Matchers::Contains;
using fabric::test::expect_failure;
using fabric::test::fabricctl;
using nlohmann::json;

namespace {

const std::string kSoc = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kFw = FABRIC_FIRMWARE_DIR;

// `op` on the t3k's 8 chips as a ring (0-3 along the top, 7-4 back along the bottom).
std::vector<std::string> ccl_run(const std::string& op, std::vector<std::string> extra) {
    std::vector<std::string> a{
        "ccl",        "run",  "--cluster", kSoc + "/t3k_cluster.yaml", "--op", op,
        "--topology", "ring", "--chips",   "0,1,2,3,7,6,5,4"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

bool have_ccl_firmware() {
    return fabric::test::have_firmware({"fabric_router", "ccl_ring"});
}

}  // namespace

TEST_CASE("fabricctl ccl run: bad input and usage", "[cli][ccl]") {
    expect_failure(fabricctl({"ccl", "run", "--op", "all-gather"}), 100);  // --cluster required
    expect_failure(fabricctl(ccl_run("broadcast", {})), 100);              // not an op
    auto r = fabricctl(ccl_run("all-gather", {"--bytes", "1000"}));
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: all-gather: chunk size 1000 is not a positive multiple of 16 "
          "(--bytes)\n");
    r = fabricctl(ccl_run("all-gather", {"--bytes", "20000"}));
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: all-gather: the input and the output of 8 ranks (9 x 20000 B) do "
          "not fit the 161760 B below a rank's mailbox\n");
    r = fabricctl({"ccl", "run", "--cluster", kSoc + "/t3k_cluster.yaml", "--chips", "0,1,2,3"});
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: all-gather: the 1D fabric is a line: a ring all-gather needs a ring "
          "(--topology ring)\n");
}

TEST_CASE("fabricctl ccl run: all-gather on the t3k's 8-chip ring, text and JSON",
          "[cli][ccl][sim]") {
    if (!have_ccl_firmware()) return;
    auto r = fabricctl(ccl_run("all-gather", {"--bytes", "8192"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("all-gather: ring, 8 ranks (chips 0,1,2,3,7,6,5,4), each sends one "
                               "chunk a step one hop along its East router's line\n"));
    CHECK_THAT(r.out, Contains("rank 0 chip 0 core 1-1: sent 7, received 7, "));
    CHECK_THAT(r.out, Contains("rank 7 chip 4 core 1-1: sent 7, received 7, "));
    CHECK_THAT(r.out, Contains("size: 8192 B a rank, 8192 B of input and 65536 B of output on "
                               "every rank\n"));
    CHECK_THAT(r.out, Contains("every word checked: every rank's output equals the host's\n"));
    CHECK_THAT(r.err, Contains("fabricctl: ccl run passed: all-gather on a ring of 8 ranks, 8192 B "
                               "a rank, every rank's 65536 B of output checked; "));

    r = fabricctl(ccl_run("all-gather", {"--bytes", "4096", "--json", "-q"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    const auto j = json::parse(r.out);
    CHECK(j["ok"] == true);
    CHECK(j["topology"] == "ring");
    const json& c = j["ccl"];
    CHECK(c["op"] == "all-gather");
    CHECK(c["algorithm"] == "ring");
    CHECK(c["chunk_bytes"] == 4096);
    CHECK(c["output_bytes"] == 8 * 4096);
    CHECK(c["every_word_checked"] == true);
    CHECK(c["bus_bytes_per_cycle"].get<double>() > 0.0);
    REQUIRE(c["ranks"].size() == 8);
    const std::vector<int> chips{0, 1, 2, 3, 7, 6, 5, 4};
    uint64_t slowest = 0;
    for (size_t i = 0; i < 8; ++i) {
        const json& rank = c["ranks"][i];
        INFO("rank " << i);
        CHECK(rank["rank"] == i);
        CHECK(rank["chip"] == chips[i]);
        CHECK(rank["outcome"] == "exited");
        CHECK(rank["sent"] == 7);
        CHECK(rank["received"] == 7);
        slowest = std::max(slowest, rank["cycles"].get<uint64_t>());
    }
    CHECK(c["cycles"] == slowest);
    // Every router: 7 chunks of one packet and 7 increments through each East router's ch0.
    uint64_t delivered = 0;
    for (const auto& rt : j["routers"]) {
        CHECK(rt["status"] == "terminated");
        CHECK(rt["bad_packets"] == 0);
        delivered += rt["delivered"].get<uint64_t>();
    }
    CHECK(delivered == 8 * 7 * 2);
}

TEST_CASE("fabricctl ccl run: reduce-scatter and all-reduce on the t3k's 8-chip ring, JSON",
          "[cli][ccl][sim]") {
    if (!have_ccl_firmware()) return;
    auto r = fabricctl(ccl_run("reduce-scatter", {"--bytes", "4096", "--json", "-q"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const auto j = json::parse(r.out);
    CHECK(j["ok"] == true);
    const json& c = j["ccl"];
    CHECK(c["op"] == "reduce-scatter");
    CHECK(c["chunk_bytes"] == 4096);
    CHECK(c["output_bytes"] == 8 * 4096);
    CHECK(c["every_word_checked"] == true);
    REQUIRE(c["ranks"].size() == 8);
    for (const json& rank : c["ranks"]) {
        CHECK(rank["sent"] == 7);
        CHECK(rank["received"] == 7);
    }
    r = fabricctl(ccl_run("all-reduce", {"--bytes", "2048", "--json", "-q"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const auto ar = json::parse(r.out);
    CHECK(ar["ccl"]["op"] == "all-reduce");
    CHECK(ar["ccl"]["output_bytes"] == 2 * 8 * 2048);
    CHECK(ar["ccl"]["every_word_checked"] == true);
    for (const json& rank : ar["ccl"]["ranks"]) {
        CHECK(rank["sent"] == 14);  // two passes round the ring
        CHECK(rank["received"] == 14);
    }
    r = fabricctl(ccl_run("reduce-scatter", {"--bytes", "10112"}));
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: reduce-scatter: the input and the output of 8 ranks (16 x 10112 B) "
          "do not fit the 161760 B below a rank's mailbox\n");
}
