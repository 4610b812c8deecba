// Parallel simulation (sim::ClusterOptions::threads): the same 2D fabric traffic run with the
// cluster's chips on 1, 2 and 3 threads (3: an uneven split of 8 chips) must end in exactly the
// same state: the cycle at every step of the run, every instantiated core's L1 and run state, every
// router's status block, every link's statistics, and no NOC error anywhere.
//
//   - all-to-all unicast on a t3k 2x4 mesh
//   - the same with faults applied mid-run at fixed cycles (extra delay, a dropped frame, a link
//     down and up again): the fault hooks act at the cycle the host names, whatever the threads
//   - every device to its counterpart in each other mesh of the spec's 4-mesh cluster (36 chips)
//   - fabricctl --threads / FABRIC_SIM_THREADS: the same report as one thread; bad values refused
//   - a fault campaign (link flaps, drops, delays, stalled routers, dead links; 1D and 2D) whose
//     runs use 3 threads: every iteration's report the same as on one
// Skipped (with a warning) until the firmware sub-build made the ELFs.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cluster.h"
#include "descriptors.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_runner.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "fabric/sim_device.h"
#include "run_process.h"

namespace pf = protocol::fabric;

namespace {

const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kFwDir = FABRIC_FIRMWARE_DIR;
const std::string kFabricctl = FABRICCTL;
const std::string kTmp = FABRIC_TEST_TMP_DIR;

std::optional<fabric::ElfImage> firmware(const std::string& name) {
    const std::string path = kFwDir + "/wormhole_b0/" + name + ".elf";
    if (!std::filesystem::exists(path)) return std::nullopt;
    return fabric::ElfImage::load_file(path);
}

// FNV-1a over a core's L1: equal L1s give equal digests, and a difference names its core.
uint64_t digest(const std::vector<uint8_t>& bytes) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
    return h;
}

// What a run leaves behind, in a form two runs can be compared by (CHECK names what differs).
struct Outcome {
    std::vector<uint64_t> cycles;                        // the device's cycle after each step
    std::map<std::string, uint64_t> l1;                  // "chip 0 core 9-0" -> digest of its L1
    std::vector<std::string> cores;                      // every core's run report
    std::vector<std::string> routers;                    // every router's final snapshot
    std::vector<std::vector<uint64_t>> router_counters;  // sent, completed, received, delivered
    std::map<std::string, std::vector<uint64_t>> links;  // "chip 0 eth 8 A->B" -> its statistics
};

std::vector<uint64_t> link_counters(const sim::eth::LinkStats& s) {
    return {s.frames_sent,
            s.frames_retransmitted,
            s.frames_dropped,
            s.frames_discarded,
            s.frames_delivered,
            s.bytes_delivered,
            s.reg_writes_delivered,
            s.commands_completed,
            s.wire_bytes,
            s.busy_cycles,
            s.busy_ticks,
            s.naks,
            s.timeouts,
            s.go_backs};
}

void record_model(fabric::SimDevice& dev, Outcome& out) {
    sim::Cluster& cl = dev.cluster();
    for (uint32_t c = 0; c < cl.chip_count(); ++c) {
        sim::Chip& chip = cl.chip(c);
        for (const auto& at : chip.instantiated_cores()) {
            std::vector<uint8_t> bytes(chip.core_spec(at.x, at.y)->l1_size);
            chip.read(at.x, at.y, 0, bytes);
            out.l1["chip " + std::to_string(c) + " core " + std::to_string(at.x) + "-" +
                   std::to_string(at.y)] = digest(bytes);
        }
        INFO("chip " << c);
        CHECK(chip.network().errors().empty());
        for (uint32_t ch = 0; ch < chip.eth_channels(); ++ch) {
            const auto peer = cl.peer(c, ch);
            if (!peer || *peer < sim::EthPort{c, ch}) continue;  // each link once, from side A
            const auto at = chip.eth_core(ch);
            if (!chip.instantiated(at.x, at.y)) continue;
            sim::eth::Link& link = cl.link(c, ch);
            const std::string name = "chip " + std::to_string(c) + " eth " + std::to_string(ch);
            out.links[name + " A->B"] = link_counters(link.stats(sim::eth::Dir::AtoB));
            out.links[name + " B->A"] = link_counters(link.stats(sim::eth::Dir::BtoA));
        }
    }
    for (const auto& r : cl.report()) out.cores.push_back(r.describe());
}

void record_routers(const std::vector<fabric::RouterSnapshot>& snaps, Outcome& out) {
    for (const auto& s : snaps) {
        out.routers.push_back(s.describe());
        out.router_counters.push_back({s.sent(), s.completed(), s.received(), s.block.delivered});
    }
}

void check_same(const Outcome& serial, const Outcome& parallel) {
    CHECK(parallel.cycles == serial.cycles);
    CHECK(parallel.cores == serial.cores);
    CHECK(parallel.routers == serial.routers);
    CHECK(parallel.router_counters == serial.router_counters);
    REQUIRE(parallel.l1.size() == serial.l1.size());
    for (const auto& [core, d] : serial.l1) {
        INFO(core);
        CHECK(parallel.l1.at(core) == d);
    }
    REQUIRE(parallel.links.size() == serial.links.size());
    for (const auto& [link, counters] : serial.links) {
        INFO(link);
        CHECK(parallel.links.at(link) == counters);
    }
}

// Actions the host takes at fixed cycles during the traffic (fault hooks).
using Faults = std::function<void(fabric::SimDevice& dev, uint64_t traffic_start)>;

using Flows = std::vector<fabric::MeshFlow>;

// Every device to every other of its mesh.
Flows within_meshes(const fabric::MeshPlan& plan) {
    Flows flows;
    for (const auto& m : plan.tables.graph().meshes()) {
        for (uint32_t i = 0; i < m.device_count(); ++i) {
            for (uint32_t j = 0; j < m.device_count(); ++j) {
                if (i != j) flows.push_back({{m.id, i}, {m.id, j}, 0});
            }
        }
    }
    return flows;
}

// Every device to the device of the same index in every other mesh (meshes without a direct
// link included: through another mesh).
Flows across_meshes(const fabric::MeshPlan& plan) {
    Flows flows;
    for (const auto& a : plan.tables.graph().meshes()) {
        for (const auto& b : plan.tables.graph().meshes()) {
            if (a.id == b.id) continue;
            for (uint32_t i = 0; i < a.device_count(); ++i)
                flows.push_back({{a.id, i}, {b.id, i}, 0});
        }
    }
    return flows;
}

// Bring the mesh fabric of `graph_file` on `cluster_file` up on `threads` threads, run `packets`
// of 1 KiB on each flow `pick` chooses, terminate; record everything.
Outcome run_traffic(const std::string& graph_file, const std::string& cluster_file,
                    uint32_t threads, uint32_t packets,
                    const std::function<Flows(const fabric::MeshPlan&)>& pick,
                    const Faults& faults = {}) {
    const auto router = firmware("fabric_router_2d");
    const auto traffic = firmware("fabric_traffic");
    const fabric::SocDescriptor soc = fabric::test::wh_soc();
    const auto cluster = fabric::ClusterDescriptor::load_file(kSocDir + "/" + cluster_file);
    fabric::MeshFabricOptions mo;
    mo.topology = pf::Topology::Mesh;
    mo.planes = {0};
    const fabric::MeshPlan plan = fabric::plan_mesh(
        fabric::MeshGraph::load_file(kSocDir + "/" + graph_file), cluster, soc, mo);
    fabric::SimDeviceOptions so;
    so.cluster = cluster;
    so.threads = threads;
    fabric::SimDevice dev(soc, soc.arch(), so);
    fabric::FabricRunner runner(dev, plan.fabric, *router);

    Outcome out;
    runner.bring_up(5'000'000);
    out.cycles.push_back(dev.cycles());

    // A kernel sends to at most 16 flows: in rounds, each with sink cores of its own.
    const std::vector<fabric::MeshFlow> flows = pick(plan);
    if (faults) faults(dev, dev.cycles());
    const auto rounds = fabric::mesh_traffic_rounds(plan, flows);
    std::vector<fabric::MeshTraffic> ts;
    for (size_t r = 0; r < rounds.size(); ++r) {
        fabric::MeshTrafficOptions to;
        to.packets = packets;
        to.packet_bytes = 1024;
        to.sink_core_index = fabric::kMeshSinkCoreIndex + static_cast<uint32_t>(r);
        ts.push_back(fabric::plan_mesh_traffic(plan, soc, *traffic, rounds[r], to));
        fabric::LaunchOptions lo;
        lo.poll_cycles = 2'000;
        lo.max_cycles = 200'000'000;
        const auto res = fabric::run_mesh_traffic(runner, ts.back(), lo);
        out.cycles.push_back(dev.cycles());
        for (const auto& w : res.workers) {
            CHECK(w.launch.outcome == fabric::LaunchOutcome::Exited);
            out.cycles.push_back(w.launch.cycles);
        }
    }
    runner.monitor(50'000);  // the last packets land after their workers exit
    out.cycles.push_back(dev.cycles());
    for (const auto& t : ts) {
        for (const size_t bad : fabric::check_mesh_landed(dev, t)) CHECK(bad == 0);
    }

    record_routers(runner.terminate(pf::Termination::Graceful, 5'000'000), out);
    out.cycles.push_back(dev.cycles());
    record_model(dev, out);
    return out;
}

}  // namespace

#define REQUIRE_FIRMWARE()                                                                     \
    if (!firmware("fabric_router_2d") || !firmware("fabric_traffic")) {                        \
        WARN("skipped: fabric_router_2d.elf / fabric_traffic.elf not built (build firmware)"); \
        return;                                                                                \
    }

TEST_CASE("parallel sim: a t3k all-to-all on 1, 2 and 3 threads ends in the same state",
          "[parallel][sim]") {
    REQUIRE_FIRMWARE();
    const Outcome serial =
        run_traffic("t3k_mesh_graph.yaml", "t3k_cluster.yaml", 1, 6, within_meshes);
    CHECK(serial.routers.size() == 20);
    for (uint32_t threads : {2u, 3u}) {
        INFO(threads << " threads");
        check_same(serial, run_traffic("t3k_mesh_graph.yaml", "t3k_cluster.yaml", threads, 6,
                                       within_meshes));
    }
}

TEST_CASE("parallel sim: faults applied mid-run act at the same cycle on 1 and 3 threads",
          "[parallel][sim]") {
    REQUIRE_FIRMWARE();
    // A link used by the traffic (chip 0's first connected port), slowed, a frame corrupted,
    // then down for 3,000 cycles: Go-Back-N recovers everything, later than without faults.
    const Faults faults = [](fabric::SimDevice& dev, uint64_t start) {
        sim::Cluster& cl = dev.cluster();
        uint32_t ch = 0;
        while (!cl.peer(0, ch)) ++ch;
        dev.at_cycle(start + 20'000, [&cl, ch] { cl.link(0, ch).set_extra_delay(300); });
        dev.at_cycle(start + 25'000, [&cl, ch] {
            sim::eth::Link& l = cl.link(0, ch);
            l.drop_frame(sim::eth::Dir::AtoB, l.stats(sim::eth::Dir::AtoB).frames_sent + 5);
        });
        dev.at_cycle(start + 30'000, [&cl, ch] { cl.link(0, ch).set_up(false); });
        dev.at_cycle(start + 33'000, [&cl, ch] { cl.link(0, ch).set_up(true); });
    };
    const Outcome serial =
        run_traffic("t3k_mesh_graph.yaml", "t3k_cluster.yaml", 1, 6, within_meshes, faults);
    const Outcome parallel =
        run_traffic("t3k_mesh_graph.yaml", "t3k_cluster.yaml", 3, 6, within_meshes, faults);
    check_same(serial, parallel);
    // The faults did happen: the serial run's links show a drop and resends.
    uint64_t dropped = 0;
    for (const auto& [name, c] : serial.links) dropped += c[2];
    CHECK(dropped == 1);
}

TEST_CASE("parallel sim: traffic between the meshes of the spec's 4-mesh cluster, 1 and 2 threads",
          "[parallel][sim]") {
    REQUIRE_FIRMWARE();
    const Outcome serial = run_traffic("spec_4mesh_3x3_mesh_graph.yaml",
                                       "spec_4mesh_3x3_cluster.yaml", 1, 1, across_meshes);
    const Outcome parallel = run_traffic("spec_4mesh_3x3_mesh_graph.yaml",
                                         "spec_4mesh_3x3_cluster.yaml", 2, 1, across_meshes);
    check_same(serial, parallel);
}

namespace {

// fabricctl with `args`, FABRIC_SIM_THREADS set to `env` (unset when empty).
fabric::test::Run fabricctl(const std::vector<std::string>& args, const std::string& env) {
    if (env.empty()) {
        ::unsetenv("FABRIC_SIM_THREADS");
    } else {
        ::setenv("FABRIC_SIM_THREADS", env.c_str(), 1);
    }
    auto r = fabric::test::run_process(kFabricctl, args, kTmp);
    ::unsetenv("FABRIC_SIM_THREADS");
    return r;
}

// `fabricctl mesh run` of a little all-to-all on the t3k, with `extra` options.
fabric::test::Run mesh_run(const std::vector<std::string>& extra, const std::string& env = "") {
    std::vector<std::string> args{"mesh",         "run",
                                  "--cluster",    kSocDir + "/t3k_cluster.yaml",
                                  "--mesh-graph", kSocDir + "/t3k_mesh_graph.yaml",
                                  "--packets",    "4",
                                  "--bytes",      "256",
                                  "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return fabricctl(args, env);
}

// A JSON report without its wall-clock figures (keys naming seconds), at any depth.
nlohmann::json without_wall_clock(const nlohmann::json& j) {
    if (j.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, value] : j.items()) {
            if (key.find("second") == std::string::npos) out[key] = without_wall_clock(value);
        }
        return out;
    }
    if (j.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& e : j) out.push_back(without_wall_clock(e));
        return out;
    }
    return j;
}

nlohmann::json simulated(const std::string& report) {
    return without_wall_clock(nlohmann::json::parse(report));
}

}  // namespace

TEST_CASE("parallel sim: fabricctl --threads and FABRIC_SIM_THREADS report the same run",
          "[parallel][cli]") {
    REQUIRE_FIRMWARE();
    const auto serial = mesh_run({});
    REQUIRE(serial.code == 0);
    const auto two = mesh_run({"--threads", "2"});
    REQUIRE(two.code == 0);
    CHECK(simulated(two.out) == simulated(serial.out));
    CHECK(two.err == serial.err);
    const auto three = mesh_run({}, "3");
    REQUIRE(three.code == 0);
    CHECK(simulated(three.out) == simulated(serial.out));
    CHECK(three.err == serial.err);
}

TEST_CASE("parallel sim: fabricctl refuses a bad thread count", "[parallel][cli]") {
    const auto zero = mesh_run({"--threads", "0"});
    CHECK(zero.code == 100);
    CHECK_THAT(zero.err, Catch::Matchers::Contains("--threads"));
    const auto bad_env = mesh_run({}, "two");
    CHECK(bad_env.code == 101);
    CHECK_THAT(bad_env.err, Catch::Matchers::Contains(
                                "FABRIC_SIM_THREADS 'two': not a number of threads (1..64)"));
}

TEST_CASE("parallel sim: a fault campaign on 3 threads reports every iteration as on one",
          "[parallel][cli][campaign]") {
    REQUIRE_FIRMWARE();
    // Seed 5's first 24 iterations draw every fault kind on 1D and 2D fabrics; the runs the
    // campaign starts inherit FABRIC_SIM_THREADS.
    const std::vector<std::string> args{"fault",        "campaign", "--seed", "5",
                                        "--iterations", "24",       "--json", "--reports"};
    const auto serial = fabricctl(args, "1");
    REQUIRE(serial.code == 0);
    const auto parallel = fabricctl(args, "3");
    REQUIRE(parallel.code == 0);
    const auto s = simulated(serial.out);
    CHECK(s["summary"]["iterations"] == 24);
    CHECK(s["summary"]["failed"] == 0);
    for (const char* kind : {"link-flap", "link-drop", "link-delay", "router-stall", "link-down"})
        CHECK(s["summary"]["by_fault"][kind]["iterations"] > 0);
    CHECK(simulated(parallel.out) == s);
}
