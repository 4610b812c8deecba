// The bring-up workflow of silicon on the model, each step a process of its own (issue 20 item 2):
// `fabricctl sim serve` keeps a 2x2 Blackhole cluster running; `mesh up` leaves its routers
// running, `mesh status` and `mesh events` read them, the example program (examples/fabric_hello)
// opens the device as it would open silicon and sends over the live fabric with its own worker
// kernel, `flash` loads a kernel beside the fabric and reads its end from the exit mailbox,
// `mesh down` terminates the routers, `sim stop` ends the server. Served with and without the
// model's sim-control block (`--no-sim-control`: as on silicon). Then the same on a T3K, whose
// chips 4-7 are reached only through the eth cores of chips 0-3 (remote access).
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_expect.h"
#include "run_process.h"
#include "sim_server.h"

using Catch::Matchers::Contains;
using fabric::test::fabricctl;
namespace t = fabric::test;

namespace {

const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kTmp = FABRIC_TEST_TMP_DIR;
const std::string kCluster = kSocDir + "/bh_2x2_cluster.yaml";
const std::string kGraph = kSocDir + "/bh_2x2_mesh_graph.yaml";
const std::string kKernel = std::string(FABRIC_FIRMWARE_DIR) + "/blackhole/fabric_hello.elf";

// A `fabricctl sim serve` of a cluster (the 2x2 Blackhole unless told).
struct Server : t::SimServerProcess {
    std::string cluster, graph;
    explicit Server(const std::vector<std::string>& extra,
                    const std::string& cluster_file = kCluster,
                    const std::string& graph_file = kGraph)
        : SimServerProcess(FABRICCTL, cluster_file, kTmp, "fabric_live", extra),
          cluster(cluster_file),
          graph(graph_file) {}
    // `mesh VERB` on the served cluster.
    t::Run mesh(const std::string& verb, std::vector<std::string> more = {}) const {
        std::vector<std::string> a{"mesh", verb,       "--cluster", cluster,    "--mesh-graph",
                                   graph,  "--target", "sim",       "--socket", socket};
        a.insert(a.end(), more.begin(), more.end());
        return fabricctl(a);
    }
    // The example program against the served cluster.
    t::Run hello(std::vector<std::string> more = {}) const {
        std::vector<std::string> a{"--cluster", cluster, "--mesh-graph", graph, "--socket", socket};
        a.insert(a.end(), more.begin(), more.end());
        return t::run_process(FABRIC_HELLO, a, kTmp);
    }
};

// Each router's "status" in `mesh status --json`, and its sent / received packet counts.
struct Routers {
    std::vector<std::string> status;
    std::map<std::string, std::pair<uint64_t, uint64_t>> packets;  // label -> (sent, received)
};
Routers routers_of(const std::string& status_json) {
    Routers r;
    const auto doc = nlohmann::json::parse(status_json);  // alive while its routers are read
    for (const auto& j : doc.at("routers")) {
        r.status.push_back(j.at("status"));
        const std::string label = "M" + std::to_string(j.at("mesh").get<int>()) + "D" +
                                  std::to_string(j.at("device").get<int>()) + " " +
                                  j.at("dir").get<std::string>() + " p" +
                                  std::to_string(j.at("plane").get<int>());
        r.packets[label] = {j.at("packets_sent"), j.at("packets_received")};
    }
    return r;
}

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("the live fabric: serve, mesh up, status, events, a user's program, flash, mesh down",
          "[cli][live_fabric]") {
    REQUIRE(std::filesystem::exists(kKernel));
    // As the model serves it, and as silicon would: without the sim-control block, every core's
    // end (routers' and kernels') comes from its exit mailbox.
    const std::vector<std::string> extra =
        GENERATE(std::vector<std::string>{}, std::vector<std::string>{"--no-sim-control"});
    INFO("sim serve " << (extra.empty() ? "" : extra.front()));
    Server server(extra);
    const std::string events = t::temp_path(kTmp, "live_up", ".jsonl");

    const auto up = server.mesh("up", {"--events", events});
    INFO("mesh up: " << up.err);
    REQUIRE(up.code == 0);
    CHECK_THAT(up.err, Contains("fabricctl: mesh up: 1 mesh, 4 chips, 8 routers (plane 0: 8): "
                                "handshake "));
    CHECK_THAT(up.err, Contains("routers left running on the chips"));

    const auto status = server.mesh("status", {"--json"});
    REQUIRE(status.code == 0);
    const Routers before = routers_of(status.out);
    CHECK(before.status == std::vector<std::string>(8, "ready_for_traffic"));

    // What each router went through in the bring-up, as `mesh up` wrote it.
    const auto ev = fabricctl({"mesh", "events", events});
    REQUIRE(ev.code == 0);
    CHECK(count_of(ev.out, ": state started\n") == 8);
    CHECK(count_of(ev.out, ": state ready_for_traffic\n") == 8);

    // A user's program, opened on the server as on silicon: its kernel sends over the live fabric.
    const auto hello = server.hello();
    INFO("fabric_hello: " << hello.err);
    CHECK(hello.code == 0);
    CHECK(hello.out ==
          "fabric_hello: sent 4096 bytes 1 hop(s) along the line of router 1-1\n"
          "fabric_hello: 4096 bytes from chip 0 (1-2) to chip 1 (2-2) over the live fabric: every "
          "byte checked, counter 1\n");
    // The routers carried it (a write and the counter's increment) and still run.
    const Routers after = routers_of(server.mesh("status", {"--json"}).out);
    CHECK(after.status == std::vector<std::string>(8, "ready_for_traffic"));
    CHECK(after.packets.at("M0D0 E p0") == std::pair<uint64_t, uint64_t>{2, 0});
    CHECK(after.packets.at("M0D1 W p0") == std::pair<uint64_t, uint64_t>{0, 2});

    // flash onto a worker core beside the live fabric: the kernel, given no arguments, says so
    // on its console and exits 1, both read from its exit mailbox.
    const auto flash = fabricctl({"flash", "--target", "sim", "--socket", server.socket, "--chips",
                                  "3", "--workers", "1-2", "--wait", kKernel});
    CHECK(flash.code == 1);
    CHECK_THAT(flash.out,
               Contains("chip 3 worker (core 1-2): reset_pc, exited with status 1 after "));
    CHECK_THAT(flash.out, Contains("\n    | fabric_hello: no arguments in the mailbox\n"));
    CHECK(routers_of(server.mesh("status", {"--json"}).out).status ==
          std::vector<std::string>(8, "ready_for_traffic"));

    const auto down = server.mesh("down");
    INFO("mesh down: " << down.out << down.err);
    REQUIRE(down.code == 0);
    CHECK_THAT(down.out, Contains("terminated gracefully: 8 of 8 routers terminated"));
    CHECK_THAT(down.err, Contains("fabricctl: mesh down: 1 mesh, 4 chips, 8 routers (plane 0: 8): "
                                  "attached to the running routers; terminated gracefully\n"));
    CHECK_THAT(down.out, !Contains("bring-up:"));  // `mesh up` brought them up, not this
    CHECK(routers_of(server.mesh("status", {"--json"}).out).status ==
          std::vector<std::string>(8, "terminated"));

    const auto stop = fabricctl({"sim", "stop", "--socket", server.socket});
    CHECK(stop.code == 0);
    const auto served = server.wait();
    CHECK(served.code == 0);
    CHECK_THAT(served.err, Contains("fabricctl: sim server stopped"));
    CHECK_FALSE(std::filesystem::exists(server.socket));
}

// A T3K as on silicon: only chips 0-3 are PCIe-attached; chips 4-7 are reached through the eth
// cores of the chips that are (PcieDevice's remote access over the base firmware's queues), for
// the bring-up, the user's program and the teardown alike.
TEST_CASE("the live fabric on a T3K: chips 4-7 reached through the PCIe chips' eth cores",
          "[cli][live_fabric][remote]") {
    const std::string wh_kernel =
        std::string(FABRIC_FIRMWARE_DIR) + "/wormhole_b0/fabric_hello.elf";
    REQUIRE(std::filesystem::exists(wh_kernel));
    Server server({}, kSocDir + "/t3k_cluster.yaml", kSocDir + "/t3k_mesh_graph.yaml");

    const auto up = server.mesh("up");
    INFO("mesh up: " << up.err);
    REQUIRE(up.code == 0);
    CHECK_THAT(up.err, Contains("fabricctl: mesh up: 1 mesh, 8 chips, 20 routers (plane 0: 20): "
                                "handshake "));
    const Routers before = routers_of(server.mesh("status", {"--json"}).out);
    CHECK(before.status == std::vector<std::string>(20, "ready_for_traffic"));

    // From a remote chip to a remote chip (4 -> 5), and from a PCIe chip to a remote one (0 -> 4).
    const auto remote = server.hello({"--from", "4", "--dir", "E"});
    INFO("fabric_hello --from 4: " << remote.err);
    CHECK(remote.code == 0);
    CHECK_THAT(remote.out, Contains("4096 bytes from chip 4 (1-1) to chip 5 (2-1) over the live "
                                    "fabric: every byte checked, counter 1\n"));
    const auto south = server.hello({"--dir", "S"});
    INFO("fabric_hello --dir S: " << south.err);
    CHECK(south.code == 0);
    CHECK_THAT(south.out, Contains("4096 bytes from chip 0 (1-1) to chip 4 (2-1) over the live "
                                   "fabric: every byte checked, counter 1\n"));
    const Routers after = routers_of(server.mesh("status", {"--json"}).out);
    CHECK(after.packets.at("M0D4 E p0") == std::pair<uint64_t, uint64_t>{2, 0});
    CHECK(after.packets.at("M0D5 W p0") == std::pair<uint64_t, uint64_t>{0, 2});
    CHECK(after.packets.at("M0D0 S p0") == std::pair<uint64_t, uint64_t>{2, 0});
    CHECK(after.packets.at("M0D4 N p0") == std::pair<uint64_t, uint64_t>{0, 2});

    const auto down = server.mesh("down");
    INFO("mesh down: " << down.out << down.err);
    REQUIRE(down.code == 0);
    CHECK_THAT(down.out, Contains("terminated gracefully: 20 of 20 routers terminated"));
    CHECK(routers_of(server.mesh("status", {"--json"}).out).status ==
          std::vector<std::string>(20, "terminated"));
    CHECK(fabricctl({"sim", "stop", "--socket", server.socket}).code == 0);
    CHECK(server.wait().code == 0);
}
