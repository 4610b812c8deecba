// Collectives as worker kernels in the model (fabric/ccl_plan.h, protocol/ccl.h): a ring
// all-gather, reduce-scatter and all-reduce (int32 sums added by the worker cores), one ccl_ring
// kernel per chip and ring sending along its router's line with the line API, so the same ELF
// runs on
//   - the t3k's 8 chips as a 1D ring (chunks split over several router slots),
//   - seeds/001's reduce-scatter: the t3k ring both ways, two workers a direction through a mux
//     per chip and direction with one slot a channel,
//   - a row and a column of a 4x4 torus in 2D (round the wrap links),
//   - every chip of the t3k's 2x4 mesh in 2D (a ring with no wrap link), both ways,
//   - a Blackhole 2x2 mesh, directly and through muxes.
// Every rank's whole output (results and partial sums) is compared word for word with the host's
// computation, every rank's counts and every mux's forwarded packets are exact, and the routers
// end clean.
// Skipped (with a warning) until the firmware sub-build made the ELFs.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "descriptors.h"
#include "fabric/ccl_plan.h"
#include "fabric/fabric_plan.h"
#include "fabric/mesh_plan.h"
#include "sim_fabric.h"

namespace pf = protocol::fabric;
using fabric::ChipId;
using fabric::MeshDir;
using fabric::test::wh_soc;

namespace {

#define REQUIRE_FIRMWARE(router_name)                                                   \
    const auto router = fabric::test::firmware_elf(router_name);                        \
    const auto kernel = fabric::test::firmware_elf("ccl_ring");                         \
    if (!router || !kernel) {                                                           \
        WARN("skipped: " router_name ".elf / ccl_ring.elf not built (build firmware)"); \
        return;                                                                         \
    }

const fabric::ChipSocs& socs() {
    static const fabric::ChipSocs s = [](ChipId) -> const fabric::SocDescriptor& {
        return wh_soc();
    };
    return s;
}

// Run the collective; every rank must be Done with every chunk sent and received and its output
// equal to the host's. Returns the run.
// The t3k's 8 chips as a 1D ring (0-3 along the top, 7-4 back along the bottom).
fabric::FabricPlan t3k_ring_plan() {
    fabric::FabricOptions o;
    o.topology = pf::Topology::Ring;
    o.chips = {0, 1, 2, 3, 7, 6, 5, 4};
    return fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), wh_soc(), o);
}

fabric::CclRun run_checked(fabric::test::SimFabric& f, const fabric::CclPlan& plan,
                           const fabric::ElfImage* mux = nullptr) {
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 20'000'000;
    const auto run = fabric::run_ccl(f.runner, plan, lo, mux);
    const auto problems = fabric::ccl_problems(f.dev, plan, run);
    for (const std::string& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
    for (const auto& rank : run.ranks) {
        CHECK(rank.launch.outcome == fabric::LaunchOutcome::Exited);
        CHECK(rank.results.sent == plan.phases() * (plan.ranks() - 1));
        CHECK(rank.results.received == plan.phases() * (plan.ranks() - 1));
        CHECK(rank.results.cycles != 0);
    }
    const uint32_t packets = fabric::ccl_packets_per_rank(plan);
    REQUIRE(run.muxes.size() == plan.muxes.size());
    for (const auto& m : run.muxes) {
        CHECK(m.status == static_cast<uint32_t>(pf::RouterStatus::Terminated));
        for (uint32_t ch = 0; ch < plan.options.workers_per_direction; ++ch)
            CHECK(m.forwarded[ch] == packets);
        CHECK(m.connects == plan.options.workers_per_direction);
        CHECK(m.teardowns == plan.options.workers_per_direction);
    }
    INFO("bus bandwidth " << fabric::ccl_bus_bandwidth(plan, run) << " B/cycle");
    CHECK(fabric::ccl_bus_bandwidth(plan, run) > 0);
    return run;
}

// Graceful termination: every router Terminated, nothing refused, every packet taken.
void terminate_clean(fabric::test::SimFabric& f) {
    for (const auto& s : f.runner.terminate(pf::Termination::Graceful, 5'000'000)) {
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
        CHECK(s.block.bad_packets == 0);
        CHECK(s.block.undrained == 0);
    }
}

}  // namespace

TEST_CASE("ccl (sim): ring all-gather on the t3k's 8 chips (1D), chunks over 3 slots each",
          "[ccl][sim]") {
    REQUIRE_FIRMWARE("fabric_router");
    const auto plan = t3k_ring_plan();
    fabric::test::SimFabric f("t3k_cluster.yaml", plan, *router, 5'000'000);
    fabric::CclOptions ag;
    ag.chunk_bytes = 10240;  // 4352 + 4352 + 1536: three packets a chunk
    const auto ccl = fabric::plan_ccl(plan, socs(), *kernel, ag);
    run_checked(f, ccl);
    terminate_clean(f);
}

TEST_CASE("ccl (sim): ring reduce-scatter and all-reduce on the t3k's 8 chips (1D), int32 sums",
          "[ccl][sim]") {
    REQUIRE_FIRMWARE("fabric_router");
    const auto plan = t3k_ring_plan();
    fabric::test::SimFabric f("t3k_cluster.yaml", plan, *router, 5'000'000);
    fabric::CclOptions rs;
    rs.op = protocol::CclOp::ReduceScatter;
    rs.chunk_bytes = 8192;  // two packets a chunk; 8 chunks of input a rank
    run_checked(f, fabric::plan_ccl(plan, socs(), *kernel, rs));
    // An all-reduce on the same fabric: the reduce-scatter, then an all-gather of the sums.
    rs.op = protocol::CclOp::AllReduce;
    rs.chunk_bytes = 4096;
    rs.seed = 0xC330;
    run_checked(f, fabric::plan_ccl(plan, socs(), *kernel, rs));
    terminate_clean(f);
}

TEST_CASE(
    "ccl (sim): the same kernel along a 4x4 torus row (all-gather) and column (reduce-scatter)",
    "[ccl][sim]") {
    REQUIRE_FIRMWARE("fabric_router_2d");
    fabric::MeshFabricOptions o;
    o.topology = pf::Topology::Torus;
    o.planes = {0};
    const auto plan =
        fabric::plan_mesh(fabric::test::mesh_graph("mesh_4x4_mesh_graph.yaml"),
                          fabric::test::cluster("torus_4x4_cluster.yaml"), wh_soc(), o);
    fabric::test::SimFabric f("torus_4x4_cluster.yaml", plan.fabric, *router, 5'000'000);
    fabric::CclOptions ag;
    ag.chunk_bytes = 4096;
    const auto row = fabric::plan_ccl(plan, {0, 6}, MeshDir::E, 0, socs(), *kernel, ag);
    run_checked(f, row);
    ag.seed = 0xB220;
    ag.op = protocol::CclOp::ReduceScatter;  // and a reduce-scatter up a column
    const auto column = fabric::plan_ccl(plan, {0, 1}, MeshDir::N, 0, socs(), *kernel, ag);
    run_checked(f, column);
    terminate_clean(f);
}

TEST_CASE(
    "ccl (sim): seeds/001's reduce-scatter on the t3k ring: both ways, two workers a direction "
    "through a mux per chip and direction, one slot a channel",
    "[ccl][sim][mux]") {
    REQUIRE_FIRMWARE("fabric_router");
    const auto mux = fabric::test::firmware_elf("fabric_mux");
    REQUIRE(mux);
    const auto plan = t3k_ring_plan();
    fabric::test::SimFabric f("t3k_cluster.yaml", plan, *router, 5'000'000);
    fabric::CclOptions o;
    o.op = protocol::CclOp::ReduceScatter;
    o.chunk_bytes = 8192;  // 2 KiB a ring: one packet a step through the mux, and the increment
    o.workers_per_direction = 2;
    o.bidirectional = true;
    o.through_mux = true;
    o.mux_slots = 1;
    const auto ccl = fabric::plan_ccl(plan, socs(), *kernel, o);
    REQUIRE(ccl.rings.size() == 4);
    REQUIRE(ccl.muxes.size() == 16);
    run_checked(f, ccl, &*mux);
    terminate_clean(f);
}

TEST_CASE(
    "ccl (sim): all-reduce round every chip of the t3k's 2x4 mesh (2D, no wrap link), both "
    "ways",
    "[ccl][sim]") {
    REQUIRE_FIRMWARE("fabric_router_2d");
    fabric::MeshFabricOptions mo;
    mo.planes = {0};
    const auto plan = fabric::plan_mesh(fabric::test::mesh_graph("t3k_mesh_graph.yaml"),
                                        fabric::test::cluster("t3k_cluster.yaml"), wh_soc(), mo);
    fabric::test::SimFabric f("t3k_cluster.yaml", plan.fabric, *router, 5'000'000);
    fabric::CclOptions o;
    o.op = protocol::CclOp::AllReduce;
    o.chunk_bytes = 4096;
    o.bidirectional = true;
    const auto ccl = fabric::plan_ccl(plan, 0, 0, socs(), *kernel, o);
    REQUIRE(ccl.rings.size() == 2);
    run_checked(f, ccl);
    terminate_clean(f);
}

TEST_CASE("ccl (sim): Blackhole 2x2 mesh: reduce-scatter, then an all-gather through muxes",
          "[ccl][sim][blackhole][mux]") {
    const auto router = fabric::test::firmware_elf("fabric_router_2d", hal::Arch::Blackhole);
    const auto kernel = fabric::test::firmware_elf("ccl_ring", hal::Arch::Blackhole);
    const auto mux = fabric::test::firmware_elf("fabric_mux", hal::Arch::Blackhole);
    if (!router || !kernel || !mux) {
        WARN("skipped: the Blackhole firmware is not built");
        return;
    }
    const auto& soc = fabric::test::bh_soc();
    const fabric::ChipSocs bh = [&](ChipId) -> const fabric::SocDescriptor& { return soc; };
    fabric::MeshFabricOptions mo;
    mo.planes = {0};
    const auto plan = fabric::plan_mesh(fabric::test::mesh_graph("bh_2x2_mesh_graph.yaml"),
                                        fabric::test::cluster("bh_2x2_cluster.yaml"), soc, mo);
    fabric::test::SimFabric f("bh_2x2_cluster.yaml", plan.fabric, *router, 5'000'000, soc);
    fabric::CclOptions o;
    o.op = protocol::CclOp::ReduceScatter;
    o.chunk_bytes = 8192;
    run_checked(f, fabric::plan_ccl(plan, 0, 0, bh, *kernel, o));
    o.op = protocol::CclOp::AllGather;
    o.seed = 0xB4C0;
    o.workers_per_direction = 2;
    o.bidirectional = true;
    o.through_mux = true;
    o.mux_slots = 2;
    const auto through_mux = fabric::plan_ccl(plan, 0, 0, bh, *kernel, o);
    REQUIRE(through_mux.muxes.size() == 8);
    run_checked(f, through_mux, &*mux);
    terminate_clean(f);
}
