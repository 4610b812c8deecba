// `fabricctl socket run` as a process: a socket over the 2D fabric of the t3k mesh on the
// simulated t3k cluster (the 2D router and the socket_stream kernel of this build; a failed check
// while they are not built, never a skip): the text report, the JSON counts exact, a close from
// the receiver, and every bad input with its exit code and one-line message.
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

std::vector<std::string> socket_run(std::vector<std::string> extra) {
    std::vector<std::string> a{"socket",       "run",
                               "--mesh-graph", kSoc + "/t3k_mesh_graph.yaml",
                               "--cluster",    kSoc + "/t3k_cluster.yaml"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

bool have_socket_firmware() {
    return fabric::test::have_firmware({"fabric_router_2d", "socket_stream"});
}

}  // namespace

TEST_CASE("fabricctl socket run: bad input and usage", "[cli][socket]") {
    expect_failure(fabricctl(socket_run({"--to", "1"})), 100);  // --from is required
    // A sim server's socket is --sim-socket here (--socket would read as the socket being run).
    expect_failure(fabricctl(socket_run({"--from", "0", "--to", "1", "--socket", "/tmp/s"})), 100);
    auto no_server = fabricctl(
        socket_run({"--from", "0", "--to", "1", "--sim-socket", "/tmp/no_such_fabric_sim.sock"}));
    expect_failure(no_server, 106);
    CHECK(no_server.err ==
          "fabricctl: error: no sim server answers at /tmp/no_such_fabric_sim.sock: No such file "
          "or directory (start one with `fabricctl sim serve`)\n");
    expect_failure(fabricctl(socket_run({"--from", "0", "--to", "1", "--close-from", "both"})),
                   100);
    auto r = fabricctl(socket_run({"--from", "0", "--to", "0"}));
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: socket: sender and receiver are the same core (chip 0 core "
          "1-1)\n");
    r = fabricctl(socket_run({"--from", "zero", "--to", "1"}));
    expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: --from zero: expected CHIP or CHIP:X-Y\n");
    r = fabricctl(socket_run({"--from", "0:0-0", "--to", "1"}));
    expect_failure(r, 101);
    CHECK(r.err ==
          "fabricctl: error: socket: the sender core 0-0 of chip 0 is not a worker core\n");
    r = fabricctl(socket_run({"--from", "0", "--to", "1", "--page-bytes", "100"}));
    expect_failure(r, 101);
    CHECK(r.err == "fabricctl: error: socket: page size 100 is not a positive multiple of 16\n");
}

TEST_CASE("fabricctl socket run: a corner to the far corner of the t3k: every byte",
          "[cli][socket][sim]") {
    if (!have_socket_firmware()) return;
    // Chip 0 plays M0D0 and chip 7 M0D7 on the t3k (mesh map); 32 KiB, 16 rings of 1 KiB pages.
    auto r =
        fabricctl(socket_run({"--from", "0", "--to", "7:2-1", "--bytes", "32768", "--page-bytes",
                              "1024", "--ring-pages", "2", "--consume-delay", "1000"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("socket chip 0 core 1-1 -> chip 7 core 2-1: 4 hops there, 4 back, "
                               "plane 0\n"));
    CHECK_THAT(r.out, Contains("stream: 32768 B in 32 pages of 1024 B, ring 2 pages (2048 B), "
                               "consume delay 1000\n"));
    CHECK_THAT(r.out, Contains("sender: sent 32768 B (32 pages), acknowledged 32768 B, complete"));
    CHECK_THAT(r.out,
               Contains("receiver: consumed 32768 B (32 pages), received 32768 B, complete"));
    CHECK_THAT(r.out, Contains("every byte checked: 32768 B of output equal the stream\n"));
    CHECK_THAT(r.err, Contains("fabricctl: socket run passed: 32768 B in 32 pages of 1024 B"));

    r = fabricctl(socket_run({"--from", "0", "--to", "7", "--bytes", "32768", "--page-bytes",
                              "2048", "--close-after", "5", "--close-from", "receiver",
                              "--consume-delay", "2000", "--json", "-q"}));
    INFO("stdout: " << r.out);
    REQUIRE(r.code == 0);
    const json j = json::parse(r.out);
    CHECK(j["ok"] == true);
    const json& s = j["socket"];
    CHECK(s["every_byte_checked"] == true);
    CHECK(s["close_from"] == "receiver");
    CHECK(s["to"]["bytes_consumed"] == 5 * 2048);
    CHECK(s["to"]["pages"] == 5);
    CHECK(s["to"]["end"] == "closed here");
    CHECK(s["to"]["socket_status"] == "ok");
    CHECK(s["from"]["bytes_acked"] == 5 * 2048);
    CHECK(s["from"]["end"] == "closed by its peer");
    CHECK(s["from"]["socket_status"] == "peer_closed");
    // Held at most a ring (4 pages) ahead of what the slow receiver acknowledged.
    CHECK(s["from"]["bytes_sent"] > 6 * 2048);
    CHECK(s["from"]["bytes_sent"] <= 9 * 2048);
    CHECK(s["from"]["bytes_sent"] == s["from"]["pages"].get<uint32_t>() * 2048);
    for (const auto& router : j["routers"]) CHECK(router["status"] == "terminated");
}

TEST_CASE("fabricctl socket run: --payload below the page size splits every page",
          "[cli][socket][sim]") {
    if (!have_socket_firmware()) return;
    const auto r = fabricctl(socket_run({"--from", "0", "--to", "5", "--payload", "1024",
                                         "--page-bytes", "4096", "--bytes", "131072"}));
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("payload 1024 B"));
    CHECK_THAT(r.out, Contains("receiver: consumed 131072 B (32 pages), received 131072 B"));
    CHECK_THAT(r.out, Contains("every byte checked: 131072 B of output equal the stream\n"));
}

TEST_CASE("fabricctl socket run: ends still running at the budget are 105 and named",
          "[cli][socket][sim]") {
    if (!have_socket_firmware()) return;
    // A receiver 5000 cycles a page cannot take 128 pages in 400,000 cycles: it gets through about
    // 74 after the bring-up, the sender a ring (4 pages) more, and each publishes its count every
    // 16 pages, so both last said 64.
    const auto r = fabricctl(socket_run({"--from", "0", "--to", "7", "--bytes", "262144",
                                         "--consume-delay", "5000", "--max-cycles", "400000"}));
    INFO("stderr: " << r.err);
    CHECK(r.code == 105);
    CHECK_THAT(r.out, Contains("sender: timeout after 64 pages or more (status 0x52554e21, "
                               "stuck_at 0x0, socket status ok)\n"));
    CHECK_THAT(r.err, Contains("fabricctl: socket run failed: sender chip 0 core 1-1: timeout with "
                               "status 0x52554e21, stuck_at 0x0, socket status ok, hal status ok; "
                               "receiver chip 7 core 1-1: timeout with status 0x52554e21"));
    CHECK_THAT(r.out, !Contains("every byte checked"));
}
