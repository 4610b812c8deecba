// The ring all-gather plan (fabric/ccl_plan.h): ranks, routers and kernel arguments exact on the
// t3k's 8-chip 1D ring and along a 4x4 torus row and column in 2D, the host's expected output, and
// every refusal with its message.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/ccl_plan.h"
#include "fabric/fabric_plan.h"
#include "fabric/mesh_plan.h"
#include "protocol/ccl.h"
#include "protocol/test_kernels.h"
#include "test_elf.h"

namespace pf = protocol::fabric;
using fabric::AllGatherOptions;
using fabric::ChipId;
using fabric::ErrorCategory;
using fabric::MeshDir;
using fabric::test::expect_error;
using fabric::test::wh_soc;

namespace {

const fabric::ElfImage& kernel() {
    static const auto image = fabric::ElfImage::parse(
        fabric::test::program_elf({0x0000006f}, hal::kWormholeB0.app_fw_base), "ccl.elf");
    return image;
}

const fabric::ChipSocs& socs() {
    static const fabric::ChipSocs s = [](ChipId) -> const fabric::SocDescriptor& {
        return wh_soc();
    };
    return s;
}

fabric::FabricPlan plan_1d(pf::Topology t, std::vector<ChipId> chips) {
    fabric::FabricOptions o;
    o.topology = t;
    o.chips = std::move(chips);
    return fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), wh_soc(), o);
}

fabric::MeshPlan plan_2d(const std::string& graph, const std::string& cluster, pf::Topology t) {
    fabric::MeshFabricOptions o;
    o.topology = t;
    o.planes = {0};
    return fabric::plan_mesh(fabric::test::mesh_graph(graph), fabric::test::cluster(cluster),
                             wh_soc(), o);
}

std::vector<ChipId> chips_of(const fabric::AllGatherPlan& p) {
    std::vector<ChipId> out;
    for (const auto& r : p.ranks) out.push_back(r.target.core.chip);
    return out;
}

}  // namespace

TEST_CASE("ccl plan: all-gather on the t3k's 8-chip ring, every argument", "[ccl][plan]") {
    const auto ring = plan_1d(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    AllGatherOptions o;
    o.chunk_bytes = 10240;
    const auto p = fabric::plan_all_gather(ring, socs(), kernel(), o);
    REQUIRE(p.ranks.size() == 8);
    CHECK(chips_of(p) == std::vector<ChipId>{0, 1, 2, 3, 7, 6, 5, 4});
    CHECK(p.output_bytes() == 8 * 10240);
    const auto worker0 = wh_soc().cores(fabric::CoreType::Worker).at(0);
    for (uint32_t r = 0; r < 8; ++r) {
        INFO("rank " << r);
        const auto& rank = p.ranks[r];
        const ChipId chip = ring.chips[r];
        CHECK(rank.router == &ring.router(chip, fabric::FabricDir::East));
        CHECK(rank.target.core == fabric::CoreLocation{chip, worker0});
        CHECK(rank.target.image == &kernel());
        const protocol::AllGatherArgs& a = rank.args;
        const pf::WorkerChannel want = ring.worker_channel(chip, fabric::FabricDir::East);
        CHECK(std::memcmp(&a.channel, &want, sizeof(want)) == 0);
        CHECK(a.conn_l1 == 0x18000);
        CHECK(a.rank == r);
        CHECK(a.ranks == 8);
        CHECK(a.chunk_bytes == 10240);
        CHECK(a.counter_addr == 0x18300);
        CHECK(a.input_addr == 0x18400);
        CHECK(a.output_addr == 0x18400 + 10240);
        CHECK(a.next_x == worker0.x);
        CHECK(a.next_y == worker0.y);
        CHECK(a.timeout_us == 20'000);
    }
    // The host's output: chunk r is rank r's input, pattern(seed + r).
    const auto want = fabric::all_gather_expected(p);
    REQUIRE(want.size() == 8 * 10240 / 4);
    CHECK(want[0] == protocol::pattern_word(0xA110, 0));
    CHECK(want[2560 * 3 + 7] == protocol::pattern_word(0xA113, 7));
    CHECK(want.back() == protocol::pattern_word(0xA117, 2559));
}

TEST_CASE("ccl plan: all-gather along a 4x4 torus row and column in 2D", "[ccl][plan]") {
    const auto torus =
        plan_2d("mesh_4x4_mesh_graph.yaml", "torus_4x4_cluster.yaml", pf::Topology::Torus);
    const auto row = fabric::plan_all_gather(torus, {0, 6}, MeshDir::E, 0, socs(), kernel());
    CHECK(chips_of(row) == std::vector<ChipId>{6, 7, 4, 5});
    CHECK(row.ranks[2].router == &torus.router({0, 4}, MeshDir::E, 0));
    CHECK(row.ranks[3].args.rank == 3);
    CHECK(row.ranks[3].args.ranks == 4);
    const auto column = fabric::plan_all_gather(torus, {0, 1}, MeshDir::N, 0, socs(), kernel());
    CHECK(chips_of(column) == std::vector<ChipId>{1, 13, 9, 5});
}

TEST_CASE("ccl plan: every refusal is named", "[ccl][plan]") {
    const auto ring = plan_1d(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    const auto line = plan_1d(pf::Topology::Line, {0, 1, 2, 3});
    const auto refused = [&](const fabric::FabricPlan& plan, AllGatherOptions o) {
        return expect_error(ErrorCategory::BadInput,
                            [&] { (void)fabric::plan_all_gather(plan, socs(), kernel(), o); });
    };
    CHECK(refused(line, {}) ==
          "all-gather: the 1D fabric is a line: a ring all-gather needs a ring (--topology ring)");
    CHECK(refused(ring, {.chunk_bytes = 0}) ==
          "all-gather: chunk size 0 is not a positive multiple of 16 (--bytes)");
    CHECK(refused(ring, {.chunk_bytes = 1000}) ==
          "all-gather: chunk size 1000 is not a positive multiple of 16 (--bytes)");
    // 9 x 17984 B (the input and 8 chunks of output) do not fit 0x3FBE0 - 0x18400.
    CHECK(refused(ring, {.chunk_bytes = 17984}) ==
          "all-gather: the input and the output of 8 ranks (9 x 17984 B) do not fit the 161760 B "
          "below a rank's mailbox");
    CHECK(fabric::plan_all_gather(ring, socs(), kernel(), {.chunk_bytes = 17968}).ranks.size() ==
          8);
    CHECK(refused(ring, {.chunk_bytes = 4096, .seed = 1, .timeout_us = 0}) ==
          "all-gather: the timeout is 0 us");
    const auto mesh = plan_2d("t3k_mesh_graph.yaml", "t3k_cluster.yaml", pf::Topology::Mesh);
    CHECK(expect_error(
              ErrorCategory::BadInput,
              [&] {
                  (void)fabric::plan_all_gather(mesh, {0, 0}, MeshDir::E, 0, socs(), kernel());
              }) ==
          "all-gather: the line of M0D0 E plane 0 is not a ring: it ends at chip 3 (a "
          "dimension that does not wrap)");
}
