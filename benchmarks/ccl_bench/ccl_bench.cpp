// ccl_bench: ring collectives (fabric/ccl_plan.h, the ccl_ring kernel) in the model (Wormhole B0)
// on the t3k's 8 chips: as a 1D ring (fabric_router.elf, chips 0,1,2,3,7,6,5,4) and round every
// chip of the 2x4 mesh in 2D (fabric_router_2d.elf, plane 0, no wrap link). Each fabric is brought
// up once; every op at several sizes and three ring shapes:
//   1 ring      one worker a chip sending one way round
//   both ways   two rings, one each way (each chip's two routers of the ring)
//   seeds/001   four rings, two a direction, each chip's two of a direction through one mux
//               (one slot a channel), as seeds/001's reduce-scatter
//   8 a direction  sixteen rings the same way: the reducing ops' additions over 16 worker cores
// Prints figures; not a test.
//
//   ccl_bench [--quick]     (--quick: one size an op)
//
// N is a rank's share of the output (all-gather: its input; reduce-scatter: the share of the sum
// it ends with; all-reduce: the same, gathered to every rank). Bus bandwidth as NCCL counts it:
// phases x (ranks - 1) x N over the slowest rank's cycles (first send .. result complete), an
// all-reduce two phases. Every chunk crosses each link of its ring once a phase, so the bound is
// one link direction's payload capacity per ring direction (common/fabric_link.h, for the router
// payload the chunks are cut at): c for one way, 2c both ways. Every run's output is checked word
// for word (ccl_problems); a failing run stops the benchmark. Cycles are core clock cycles (WH:
// 1 GHz, so 1 B/cycle = 1 GB/s).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/fabric_link.h"
#include "fabric/ccl_plan.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/sim_device.h"
#include "fabric/soc_descriptor.h"

namespace {

namespace pf = protocol::fabric;
using protocol::CclOp;

std::string path(const char* dir, const std::string& f) {
    return std::string(dir) + "/" + f;
}

struct Setup {
    fabric::SocDescriptor soc = fabric::SocDescriptor::load_file(
        path(FABRIC_SOC_DESCRIPTOR_DIR, "wormhole_b0_80_arch.yaml"));
    fabric::ClusterDescriptor cluster =
        fabric::ClusterDescriptor::load_file(path(FABRIC_SOC_DESCRIPTOR_DIR, "t3k_cluster.yaml"));
    fabric::ElfImage kernel =
        fabric::ElfImage::load_file(path(FABRIC_FIRMWARE_DIR, "wormhole_b0/ccl_ring.elf"));
    fabric::ElfImage mux =
        fabric::ElfImage::load_file(path(FABRIC_FIRMWARE_DIR, "wormhole_b0/fabric_mux.elf"));
    fabric::ChipSocs socs = [this](fabric::ChipId) -> const fabric::SocDescriptor& { return soc; };
};

struct Shape {
    const char* name;
    uint32_t workers;
    bool both_ways, mux;
};
constexpr Shape kShapes[] = {{"1 ring", 1, false, false},
                             {"both ways", 1, true, false},
                             {"seeds/001", 2, true, true},
                             {"8 a direction", 8, true, true}};

struct OpSizes {
    CclOp op;
    std::vector<uint32_t> sizes;  // N, bytes a rank
};

std::vector<OpSizes> op_sizes(bool quick) {
    if (quick)
        return {{CclOp::AllGather, {16384}},
                {CclOp::ReduceScatter, {4096}},
                {CclOp::AllReduce, {4096}}};
    return {{CclOp::AllGather, {1024, 4096, 16384, 65536}},
            {CclOp::ReduceScatter, {1024, 4096, 16384}},
            {CclOp::AllReduce, {1024, 4096, 16384}}};
}

// One row: plan, run, check, print. Sizes that do not fit a shape's rings are skipped.
template <typename PlanCcl>
void row(const char* fabric_name, Setup& s, fabric::FabricRunner& runner, const Shape& shape,
         CclOp op, uint32_t bytes, uint32_t payload, const PlanCcl& plan_ccl) {
    fabric::CclOptions o;
    o.op = op;
    o.chunk_bytes = bytes;
    o.workers_per_direction = shape.workers;
    o.bidirectional = shape.both_ways;
    o.through_mux = shape.mux;
    o.timeout_us = 200'000;
    fabric::CclPlan plan;
    try {
        plan = plan_ccl(o);
    } catch (const fabric::Error& e) {
        std::printf("| %s | %s | %s | %u | refused: %s | | |\n", fabric_name,
                    std::string(fabric::ccl_op_name(op)).c_str(), shape.name, bytes, e.what());
        return;
    }
    fabric::LaunchOptions lo;
    lo.max_cycles = 200'000'000;
    lo.poll_cycles = 2'000;
    const fabric::CclRun run = fabric::run_ccl(runner, plan, lo, &s.mux);
    const auto problems = fabric::ccl_problems(runner.device(), plan, run);
    for (const auto& p : problems) std::fprintf(stderr, "ccl_bench: %s\n", p.c_str());
    if (!problems.empty()) std::exit(1);
    const double bus = fabric::ccl_bus_bandwidth(plan, run);
    const double bound = bench::fabric_link_capacity(payload) * (shape.both_ways ? 2 : 1);
    std::printf("| %s | %s | %s | %u | %u | %.3f | %.1f %% |\n", fabric_name,
                std::string(fabric::ccl_op_name(op)).c_str(), shape.name, bytes,
                run.slowest_cycles(), bus, 100.0 * bus / bound);
}

template <typename PlanCcl>
void rows(const char* name, Setup& s, const fabric::FabricPlan& plan, const std::string& router,
          bool quick, const PlanCcl& plan_ccl) {
    fabric::SimDevice dev(s.soc, hal::Arch::WormholeB0,
                          fabric::SimDeviceOptions{s.cluster, std::nullopt});
    fabric::FabricRunner runner(dev, plan,
                                fabric::ElfImage::load_file(path(FABRIC_FIRMWARE_DIR, router)));
    runner.bring_up(5'000'000);
    const uint32_t payload = plan.routers.front().config.payload_bytes;
    for (const OpSizes& os : op_sizes(quick)) {
        for (const Shape& shape : kShapes) {
            for (uint32_t bytes : os.sizes)
                row(name, s, runner, shape, os.op, bytes, payload, plan_ccl);
        }
    }
    runner.terminate(pf::Termination::Graceful, 5'000'000);
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc == 2 && std::string(argv[1]) == "--quick";
    try {
        Setup s;
        std::printf(
            "| fabric | op | rings | N (B a rank) | cycles | bus B/cycle | of the bound |\n"
            "|---|---|---|---|---|---|---|\n");
        fabric::FabricOptions ro;
        ro.topology = pf::Topology::Ring;
        ro.chips = {0, 1, 2, 3, 7, 6, 5, 4};
        const fabric::FabricPlan ring = fabric::plan_fabric(s.cluster, s.soc, ro);
        rows("1D ring", s, ring, "wormhole_b0/fabric_router.elf", quick,
             [&](const fabric::CclOptions& o) {
                 return fabric::plan_ccl(ring, s.socs, s.kernel, o);
             });
        fabric::MeshFabricOptions mo;
        mo.planes = {0};
        const fabric::MeshPlan mesh = fabric::plan_mesh(
            fabric::MeshGraph::load_file(path(FABRIC_SOC_DESCRIPTOR_DIR, "t3k_mesh_graph.yaml")),
            s.cluster, s.soc, mo);
        rows("2D 2x4 mesh", s, mesh.fabric, "wormhole_b0/fabric_router_2d.elf", quick,
             [&](const fabric::CclOptions& o) {
                 return fabric::plan_ccl(mesh, 0, 0, s.socs, s.kernel, o);
             });
    } catch (const fabric::Error& e) {
        std::fprintf(stderr, "ccl_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
