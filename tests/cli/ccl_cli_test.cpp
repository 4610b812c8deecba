// `fabricctl ccl run` and `ccl mesh-run` as processes: a ring all-gather, reduce-scatter and
// all-reduce on the t3k's 8 chips as a 1D ring, seeds/001's reduce-scatter (both ways, two workers
// a direction through muxes), and an all-reduce round the t3k's 2x4 mesh in 2D (the routers, the
// mux and the ccl_ring kernel of this build): the text report and the JSON counts exact, and every
// bad input with its exit code and one-line message.
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
    CHECK_THAT(r.out, Contains("all-gather: ring of 8 ranks (chips 0,1,2,3,7,6,5,4), each rank "
                               "sends one chunk a step one hop along its router's line\n"));
    CHECK_THAT(r.out, Contains("ring 0 (forward): chips 0,1,2,3,7,6,5,4, worker core 1-1\n"));
    CHECK_THAT(r.out, Contains("ring 0 rank 0 chip 0 core 1-1: sent 7, received 7, "));
    CHECK_THAT(r.out, Contains("ring 0 rank 7 chip 4 core 1-1: sent 7, received 7, "));
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
    // Every router: 7 chunks of one packet each (the increment fused) through each East router.
    uint64_t delivered = 0;
    for (const auto& rt : j["routers"]) {
        CHECK(rt["status"] == "terminated");
        CHECK(rt["bad_packets"] == 0);
        delivered += rt["delivered"].get<uint64_t>();
    }
    CHECK(delivered == 8 * 7);
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

TEST_CASE(
    "fabricctl ccl run: seeds/001's reduce-scatter: both ways, two workers a direction "
    "through muxes",
    "[cli][ccl][sim][mux]") {
    if (!fabric::test::have_firmware({"fabric_router", "ccl_ring", "fabric_mux"})) return;
    auto r = fabricctl(ccl_run("reduce-scatter", {"--bytes", "4096", "--workers", "2",
                                                  "--bidirectional", "--mux", "--json", "-q"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const auto j = json::parse(r.out);
    const json& c = j["ccl"];
    CHECK(c["rings"] == 4);
    CHECK(c["muxes"] == 16);
    CHECK(c["ring_chunk_bytes"] == 1024);
    CHECK(c["every_word_checked"] == true);
    REQUIRE(c["ranks"].size() == 32);
    CHECK(c["ranks"][16]["ring"] == 2);  // the first back ring: 0, 4, 5, ...
    CHECK(c["ranks"][17]["chip"] == 4);
    for (const json& rank : c["ranks"]) {
        CHECK(rank["sent"] == 7);
        CHECK(rank["received"] == 7);
    }
    // Every ring's 8 x 7 steps of one fused packet, East and West routers alike.
    uint64_t delivered = 0;
    for (const auto& rt : j["routers"]) delivered += rt["delivered"].get<uint64_t>();
    CHECK(delivered == 4 * 8 * 7);
    r = fabricctl(ccl_run("all-gather", {"--workers", "2"}));
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: all-gather: 2 workers a direction need a mux (--mux): a router's "
          "worker channel takes one worker at a time\n");
}

TEST_CASE("fabricctl ccl mesh-run: all-reduce round the t3k's 2x4 mesh (2D)", "[cli][ccl][sim]") {
    if (!fabric::test::have_firmware({"fabric_router_2d", "ccl_ring"})) return;
    const std::vector<std::string> base{"ccl",          "mesh-run",
                                        "--mesh-graph", kSoc + "/t3k_mesh_graph.yaml",
                                        "--cluster",    kSoc + "/t3k_cluster.yaml",
                                        "--op",         "all-reduce"};
    auto args = base;
    args.insert(args.end(), {"--bytes", "2048"});
    auto r = fabricctl(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("every word checked: every rank's output equals the host's\n"));
    CHECK_THAT(r.err, Contains("fabricctl: ccl mesh-run passed: all-reduce on a ring of 8 ranks, "
                               "2048 B a rank, every rank's 32768 B of output checked; "));
    args = base;
    args.insert(args.end(), {"--bytes", "2048", "--bidirectional", "--json", "-q"});
    r = fabricctl(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    const json doc = json::parse(r.out);
    const json& c = doc["ccl"];
    CHECK(c["rings"] == 2);
    CHECK(c["every_word_checked"] == true);
    for (const json& rank : c["ranks"]) CHECK(rank["sent"] == 14);
    args = base;
    args.insert(args.end(), {"--mesh", "1"});
    r = fabricctl(args);
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: unknown mesh 1 (" + kSoc + "/t3k_mesh_graph.yaml has meshes 0..0)\n");
}
