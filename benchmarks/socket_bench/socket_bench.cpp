// socket_bench: sockets over the fabric in the model (Wormhole B0; fabric/socket_plan.h, the
// socket_stream kernel): a sender on chip 0 streams to a receiver on chip 1 of the T3000, one hop,
// over the 1D fabric (a line of the two chips, fabric_router.elf) and the 2D one (the t3k 2x4
// mesh, fabric_router_2d.elf), for pages of 1, 2 and 4 KiB and rings of 2 to 32 pages, the
// receiver as fast as it goes (no consume delay). Prints figures; not a test.
//
//   socket_bench [--bytes N]    (default 512 KiB per stream)
//
// Rate = bytes consumed / the sender's cycles from its first page to the last acknowledgement
// (the whole stream, start-up included: it is short beside 256 pages). Every run's output is
// checked byte for byte and every count the ends report (socket_problems); a failing run stops
// the benchmark. Cycles are core clock cycles (WH: 1 GHz, so 1 B/cycle = 1 GB/s).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/t3k_setup.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/sim_device.h"
#include "fabric/soc_descriptor.h"
#include "fabric/socket_plan.h"

namespace {

namespace pf = protocol::fabric;

struct Setup : bench::T3kSetup {
    Setup() : T3kSetup("socket_stream") {}
};

// One row per (page, ring) over the fabric `plan` (brought up once); `plan_socket` plans each.
template <typename PlanSocket>
void rows(const char* name, Setup& s, const fabric::FabricPlan& plan, const std::string& router,
          uint32_t bytes, const PlanSocket& plan_socket) {
    fabric::SimDevice dev(s.soc, hal::Arch::WormholeB0,
                          fabric::SimDeviceOptions{s.cluster, std::nullopt});
    fabric::FabricRunner runner(
        dev, plan, fabric::ElfImage::load_file(bench::shipped(FABRIC_FIRMWARE_DIR, router)));
    runner.bring_up(5'000'000);
    const auto& workers = s.soc.cores(fabric::CoreType::Worker);
    for (uint32_t page : {1024u, 2048u, 4096u}) {
        for (uint32_t ring : {2u, 4u, 8u, 16u, 32u}) {
            fabric::SocketOptions o;
            o.bytes = bytes;
            o.page_bytes = page;
            o.ring_pages = ring;
            const fabric::SocketPlan sp = plan_socket({0, workers[0]}, {1, workers[0]}, o);
            fabric::LaunchOptions lo;
            lo.max_cycles = 100'000'000;
            lo.poll_cycles = 2'000;
            const fabric::SocketRun run = fabric::run_socket(runner, sp, lo);
            auto problems = fabric::socket_problems(sp, run);
            if (fabric::check_socket_output(dev, sp, bytes).bad_words != 0)
                problems.push_back("the output differs from the stream");
            for (const auto& p : problems) std::fprintf(stderr, "socket_bench: %s\n", p.c_str());
            if (!problems.empty()) std::exit(1);
            const uint32_t cycles = run.sender.results.cycles;
            std::printf("| %s | %u B | %u | %u | %.3f |\n", name, page, ring, cycles,
                        static_cast<double>(bytes) / cycles);
        }
    }
    runner.terminate(pf::Termination::Graceful, 5'000'000);
}

}  // namespace

int main(int argc, char** argv) {
    uint32_t bytes = 512 * 1024;
    if (argc == 3 && std::string(argv[1]) == "--bytes") bytes = std::stoul(argv[2]);
    try {
        Setup s;
        std::printf("| fabric | page | ring pages | cycles | B/cycle |\n|---|---|---|---|---|\n");
        fabric::FabricOptions lo;
        lo.topology = pf::Topology::Line;
        lo.chips = {0, 1};
        const fabric::FabricPlan line = fabric::plan_fabric(s.cluster, s.soc, lo);
        rows("1D line", s, line, "wormhole_b0/fabric_router.elf", bytes,
             [&](const fabric::CoreLocation& a, const fabric::CoreLocation& b,
                 const fabric::SocketOptions& o) {
                 return fabric::plan_socket(line, s.socs, s.kernel, a, b, o);
             });
        fabric::MeshFabricOptions mo;
        mo.topology = pf::Topology::Mesh;
        mo.planes = {0};
        const fabric::MeshPlan mesh =
            fabric::plan_mesh(fabric::MeshGraph::load_file(
                                  bench::shipped(FABRIC_SOC_DESCRIPTOR_DIR, "t3k_mesh_graph.yaml")),
                              s.cluster, s.soc, mo);
        rows("2D t3k mesh", s, mesh.fabric, "wormhole_b0/fabric_router_2d.elf", bytes,
             [&](const fabric::CoreLocation& a, const fabric::CoreLocation& b,
                 const fabric::SocketOptions& o) {
                 return fabric::plan_socket(mesh, s.socs, s.kernel, a, b, o);
             });
    } catch (const fabric::Error& e) {
        std::fprintf(stderr, "socket_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
