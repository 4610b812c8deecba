// fabricctl sim serve and its controls end to end (host/fabricctl/sim_serve_cmd.cpp): `mesh up`,
// `mesh status` and `mesh down` as three commands on one fabric the server keeps running, as on
// silicon; a killed client leaves the server serving; SIGTERM and `sim stop` end it cleanly;
// no server and no socket are clear errors; `mesh telemetry --listen` serves its /metrics.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "run_process.h"
#include "sim_server.h"

using Catch::Matchers::Contains;
namespace t = fabric::test;

namespace {

const std::string kFabricctl = FABRICCTL;
const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kTmp = FABRIC_TEST_TMP_DIR;
const std::string kCluster = kSocDir + "/bh_2x2_cluster.yaml";  // four chips, each on PCIe
const std::string kGraph = kSocDir + "/bh_2x2_mesh_graph.yaml";
const std::string kFwDir = FABRIC_FIRMWARE_DIR;

t::Run fabricctl(const std::vector<std::string>& args) {
    return t::run_process(kFabricctl, args, kTmp);
}

// A `fabricctl sim serve` of the 2x2 Blackhole cluster.
struct Server : t::SimServerProcess {
    explicit Server(const std::vector<std::string>& extra = {})
        : SimServerProcess(kFabricctl, kCluster, kTmp, "fabric_sim", extra) {}
    std::vector<std::string> mesh(const std::string& verb, bool json = false) const {
        std::vector<std::string> a{"mesh", verb,       "--cluster", kCluster,   "--mesh-graph",
                                   kGraph, "--target", "sim",       "--socket", socket};
        if (json) a.push_back("--json");
        return a;
    }
};

// GET `path` from 127.0.0.1:`port`: the whole reply, head and body.
std::string http_get(uint16_t port, const std::string& path) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    const std::string req = "GET " + path + " HTTP/1.0\r\n\r\n";
    REQUIRE(::send(fd, req.data(), req.size(), 0) == ssize_t(req.size()));
    std::string reply;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) reply.append(buf, size_t(n));
    ::close(fd);
    return reply;
}

// The port a `mesh telemetry --listen 0` says it serves on, from its stderr file.
uint16_t served_port(const std::string& err_path) {
    const std::string marker = "serving http://127.0.0.1:";
    for (int i = 0; i < 1000; ++i) {
        const std::string err = t::slurp(err_path);
        if (const size_t at = err.find(marker); at != std::string::npos) {
            return static_cast<uint16_t>(std::stoul(err.substr(at + marker.size())));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL("mesh telemetry never said where it serves");
    return 0;
}

std::vector<std::string> router_statuses(const std::string& status_json) {
    const auto j = nlohmann::json::parse(status_json);
    std::vector<std::string> out;
    for (const auto& r : j.at("routers")) out.push_back(r.at("status"));
    return out;
}

}  // namespace

TEST_CASE("fabricctl sim serve: mesh up, status and down are three commands on one fabric",
          "[sim_server][cli]") {
    Server server;
    const auto up = fabricctl(server.mesh("up"));
    REQUIRE(up.code == 0);
    CHECK_THAT(up.err, Contains("8 routers (plane 0: 8)"));
    CHECK_THAT(up.err, Contains("routers left running on the chips"));
    // A second process finds them running.
    const auto running = fabricctl(server.mesh("status", true));
    REQUIRE(running.code == 0);
    CHECK(router_statuses(running.out) == std::vector<std::string>(8, "ready_for_traffic"));
    const auto st = fabricctl({"sim", "status", "--socket", server.socket, "--json"});
    REQUIRE(st.code == 0);
    const auto sj = nlohmann::json::parse(st.out);
    CHECK(sj["running"] == true);
    CHECK(sj["clients"] == 1);
    CHECK(sj["model"] ==
          "simulated /dev/tenstorrent over sim blackhole (4 chips, 4 Ethernet links)");
    // A third ends them.
    const auto down = fabricctl(server.mesh("down"));
    REQUIRE(down.code == 0);
    CHECK_THAT(down.out, Contains("terminated gracefully: 8 of 8 routers terminated"));
    const auto after = fabricctl(server.mesh("status", true));
    REQUIRE(after.code == 0);
    CHECK(router_statuses(after.out) == std::vector<std::string>(8, "terminated"));
    const auto stop = fabricctl({"sim", "stop", "--socket", server.socket});
    CHECK(stop.code == 0);
    CHECK_THAT(stop.out, Contains(", stopping"));
    const auto served = server.wait();
    CHECK(served.code == 0);
    CHECK_THAT(served.err, Contains("fabricctl: sim server stopped"));
    CHECK_FALSE(std::filesystem::exists(server.socket));
}

TEST_CASE("fabricctl sim serve: a killed client leaves it serving, SIGTERM stops it",
          "[sim_server][cli]") {
    Server server;
    const t::Spawned client = t::spawn_process(kFabricctl, server.mesh("up"), kTmp, "");
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ::kill(client.pid, SIGKILL);
    (void)t::collect_process(client);
    nlohmann::json sj;
    for (int i = 0; i < 200; ++i) {  // the server drops the dead client at its next poll
        const auto st = fabricctl({"sim", "status", "--socket", server.socket, "--json"});
        REQUIRE(st.code == 0);
        sj = nlohmann::json::parse(st.out);
        if (sj["clients"] == 1) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(sj["clients"] == 1);
    // Paused, the clock stands until stepped.
    const auto paused =
        nlohmann::json::parse(fabricctl({"sim", "pause", "--socket", server.socket, "--json"}).out);
    CHECK(paused["running"] == false);
    const auto stepped = nlohmann::json::parse(
        fabricctl({"sim", "step", "2500", "--socket", server.socket, "--json"}).out);
    CHECK(stepped["cycles"] == paused["cycles"].get<uint64_t>() + 2500);
    ::kill(server.process.pid, SIGTERM);
    const auto served = server.wait();
    CHECK(served.code == 143);
    CHECK_THAT(served.err, Contains("sim server stopped by SIGTERM"));
    CHECK_FALSE(std::filesystem::exists(server.socket));
}

TEST_CASE("fabricctl sim status: no server, no socket", "[sim_server][cli]") {
    const std::string path = t::unique_path("/tmp", "fabric_nobody") + ".sock";
    std::filesystem::remove(path);
    auto r = fabricctl({"sim", "status", "--socket", path});
    CHECK(r.code == 106);
    CHECK_THAT(r.err, Contains("no sim server answers at " + path +
                               ": No such file or directory (start one with `fabricctl sim "
                               "serve`)"));
    ::unsetenv("FABRIC_SIM_SOCKET");
    r = fabricctl({"sim", "status"});
    CHECK(r.code == 101);
    CHECK_THAT(r.err,
               Contains("no sim server socket: give --socket PATH or set FABRIC_SIM_SOCKET"));
}

TEST_CASE("fabricctl mesh telemetry --listen: /metrics of a fabric the sim server keeps",
          "[sim_server][telemetry][cli]") {
    Server server;
    REQUIRE(fabricctl(server.mesh("up")).code == 0);
    auto args = server.mesh("telemetry");
    args.insert(args.end(), {"--listen", "0"});
    const t::Spawned tele = t::spawn_process(kFabricctl, args, kTmp, "");
    const uint16_t port = served_port(tele.err_path);
    const std::string reply = http_get(port, "/metrics");
    CHECK(reply.rfind("HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4", 0) == 0);
    const std::vector<std::string> ports{"M0D0 E", "M0D0 S", "M0D1 S", "M0D1 W",
                                         "M0D2 N", "M0D2 E", "M0D3 N", "M0D3 W"};
    for (const std::string& p : ports) {
        INFO(p);
        CHECK(reply.find("port=\"" + p + " plane 0\"} 1\n") != std::string::npos);
    }
    // Every router ready and every link up: 8 + 8 series with the value 1, per its name.
    const auto count = [&](const std::string& series) {
        size_t n = 0;
        for (size_t at = reply.find(series); at != std::string::npos;
             at = reply.find(series, at + 1))
            ++n;
        return n;
    };
    CHECK(count("\ntt_fabric_link_up{") == 8);
    CHECK(count("\ntt_fabric_router_ready{") == 8);
    CHECK(reply.find("tt_fabric_router_ready{chip=\"0\",channel=\"0\",peer_chip=\"1\","
                     "peer_channel=\"1\",port=\"M0D0 E plane 0\"} 1\n") != std::string::npos);
    CHECK(http_get(port, "/").rfind("HTTP/1.0 404 Not Found", 0) == 0);
    ::kill(tele.pid, SIGINT);
    const auto done = t::collect_process(tele);
    CHECK(done.code == 130);
    CHECK_THAT(done.err, Contains("mesh telemetry: stopped by SIGINT"));
    CHECK(fabricctl(server.mesh("down")).code == 0);
    // Once, on a model of its own: brought up, read, terminated.
    const auto once = fabricctl({"mesh", "telemetry", "--cluster", kCluster});
    REQUIRE(once.code == 0);
    CHECK(once.out.rfind("# HELP tt_fabric_link_up ", 0) == 0);
    CHECK(once.out.find("tt_fabric_link_up{chip=\"3\",channel=\"1\",peer_chip=\"2\","
                        "peer_channel=\"0\",port=\"M0D3 W plane 0\"} 1\n") != std::string::npos);
    // Without a fabric that outlives the command there is nothing to serve.
    const auto alone = fabricctl({"mesh", "telemetry", "--cluster", kCluster, "--listen", "0"});
    CHECK(alone.code == 101);
    CHECK_THAT(alone.err, Contains("--listen needs a fabric that outlives the command"));
}

TEST_CASE("fabricctl sim serve --no-sim-control: pcie run reads exit and console from the mailbox",
          "[sim_server][cli][exit_mailbox]") {
    const std::string lines = kFwDir + "/blackhole/console_lines.elf";
    const std::string hello = kFwDir + "/blackhole/hello.elf";
    if (!std::filesystem::exists(lines) || !std::filesystem::exists(hello)) {
        WARN("skipped: console_lines.elf / hello.elf are not built yet (build the firmware)");
        return;
    }
    // Served as silicon: the clients' PcieDevice has no run-state words to read.
    Server server({"--no-sim-control"});
    const auto run = [&](const std::string& elf, const std::vector<std::string>& more = {}) {
        std::vector<std::string> a{"pcie",      "run",      "--target",    "sim",    "--arch",
                                   "blackhole", "--socket", server.socket, "--core", "2"};
        a.insert(a.end(), more.begin(), more.end());
        a.push_back(elf);
        return fabricctl(a);
    };
    std::string all;
    for (int line = 1; line <= 40; ++line)
        all += fmt::format("console line {:02} of 40: ok\n", line);
    const auto r = run(lines);
    CHECK(r.code == 42);  // the firmware's status, passed through
    CHECK(r.out == all.substr(all.size() - 512));
    CHECK_THAT(r.err, Contains("fabricctl: 528 earlier console bytes lost (the ring keeps the "
                               "last 512)\nfabricctl: firmware on chip 0 core 2-1 exited with "
                               "status 42 after "));
    const auto j = nlohmann::json::parse(run(lines, {"--json"}).out);
    CHECK(j["exit_status"] == 42);
    CHECK(j["console"] == all.substr(all.size() - 512));
    CHECK(j["console_lost"] == 528);
    // hello on the same core of the server says byte for byte what it says on a model of the
    // command's own, where the model's sim-control block reports the run.
    const auto served = run(hello);
    const auto own =
        fabricctl({"pcie", "run", "--target", "sim", "--arch", "blackhole", "--core", "2", hello});
    CHECK(served.code == 0);
    CHECK(own.code == 0);
    CHECK_THAT(served.out, Contains("sum of the first 100 primes = 24133 (correct)"));
    CHECK(served.out == own.out);
    CHECK(fabricctl({"sim", "stop", "--socket", server.socket}).code == 0);
    CHECK(server.wait().code == 0);
}

TEST_CASE("fabricctl mesh replay through a sim server: the account a model of its own recorded",
          "[cli][sim_server][record]") {
    const std::string rec = t::unique_path(kTmp, "bh_record") + ".json";
    auto r = fabricctl({"mesh", "run", "--cluster", kCluster, "--mesh-graph", kGraph, "--packets",
                        "4", "--record", rec, "-q"});
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    Server server;
    // The chips behind the simulated tt-kmd: the path a replay on silicon takes.
    r = fabricctl({"mesh", "replay", rec, "--target", "sim", "--socket", server.socket});
    INFO("stderr: " << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("replay: every flow's account (sent, delivered, dropped by whom) "
                               "equals the record's (12 flows)\n"));
    CHECK_THAT(r.err, Contains("fabricctl: mesh replay passed: 1 mesh, 4 chips, 8 routers"));
    r = fabricctl({"sim", "stop", "--socket", server.socket});
    CHECK(r.code == 0);
    CHECK(server.wait().code == 0);
}
