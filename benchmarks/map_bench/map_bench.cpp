// map_bench: how long the topology mapping takes on clusters shaped like real ones
// (soc_descriptors/clusters/), as written and with chip ids and channels renamed at random, and how
// long finding the largest mesh of a cluster takes. Prints the median and the slowest of the runs
// in milliseconds. Figures, not a test: docs/PERFORMANCE.md keeps them.
//
//   map_bench [runs]     (default 21)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/error.h"
#include "fabric/mesh_graph.h"
#include "fabric/topology_map.h"
#include "scrambled_cluster.h"

namespace {

using fabric::ChannelPolicy;
using fabric::ClusterDescriptor;
using fabric::MeshGraph;

ClusterDescriptor real(const std::string& name) {
    return ClusterDescriptor::load_file(std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/clusters/" +
                                        name + "_cluster.yaml");
}

struct Timing {
    double median_ms = 0;
    double max_ms = 0;
};

Timing time_runs(uint32_t runs, const std::function<void()>& f) {
    std::vector<double> ms;
    for (uint32_t i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms.back()};
}

void row(const std::string& what, uint32_t chips, Timing t) {
    fmt::print("{:<58} {:>5} {:>10.3f} {:>10.3f}\n", what, chips, t.median_ms, t.max_ms);
}

void map_row(uint32_t runs, const std::string& name, uint32_t rows, uint32_t cols,
             uint32_t channels, bool torus) {
    const ClusterDescriptor c = real(name);
    MeshGraph g =
        MeshGraph::single_mesh(c.arch(), rows, cols, channels, ChannelPolicy::Strict, "bench");
    if (torus) g = g.as_torus();
    const std::string shape = fmt::format("{}x{}{}", rows, cols, torus ? " torus" : "");
    row(fmt::format("map {} on {}", shape, name), c.chip_count(),
        time_runs(runs, [&] { (void)fabric::map_topology(g, c); }));
    const ClusterDescriptor renamed =
        ClusterDescriptor::parse(fabric::test::scramble(c, 7).yaml, "renamed");
    row(fmt::format("map {} on {}, ids and channels renamed", shape, name), c.chip_count(),
        time_runs(runs, [&] { (void)fabric::map_topology(g, renamed); }));
}

}  // namespace

int main(int argc, char** argv) {
    const uint32_t runs = argc > 1 ? static_cast<uint32_t>(std::max(1, std::atoi(argv[1]))) : 21;
    fmt::print("{:<58} {:>5} {:>10} {:>10}\n", "what", "chips", "median ms", "max ms");
    map_row(runs, "t3k", 2, 4, 2, false);
    map_row(runs, "galaxy_6u", 8, 4, 4, false);
    map_row(runs, "galaxy_6u_torus", 8, 4, 4, true);
    map_row(runs, "bh_galaxy", 8, 4, 2, true);
    map_row(runs, "bh_galaxy_x4", 32, 4, 2, true);
    for (const char* name : {"t3k", "galaxy_6u", "bh_galaxy_x4"}) {
        const ClusterDescriptor c = real(name);
        row(fmt::format("largest mesh of {}", name), c.chip_count(),
            time_runs(runs, [&] { (void)fabric::derive_mesh_graph(c); }));
    }
    const ClusterDescriptor faulty = real("galaxy_6u_missing_link");
    const MeshGraph strict =
        MeshGraph::single_mesh(faulty.arch(), 8, 4, 4, ChannelPolicy::Strict, "bench");
    row("refuse 8x4 on galaxy_6u_missing_link (names the link)", faulty.chip_count(),
        time_runs(runs, [&] {
            try {
                (void)fabric::map_topology(strict, faulty);
            } catch (const fabric::Error&) {
            }
        }));
    return 0;
}
