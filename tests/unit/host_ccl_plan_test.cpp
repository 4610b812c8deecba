// The ring collectives' plan (fabric/ccl_plan.h): ranks, routers and kernel arguments exact on
// the t3k's 8-chip 1D ring and along a 4x4 torus row and column in 2D, the host's expected output
// of an all-gather and of a reduce-scatter (hand-computed sums), and every refusal with its
// message.
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
using fabric::CclOptions;
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

std::vector<ChipId> chips_of(const fabric::CclPlan& p) {
    std::vector<ChipId> out;
    for (const auto& r : p.rings.at(0).ranks) out.push_back(r.target.core.chip);
    return out;
}

}  // namespace

TEST_CASE("ccl plan: all-gather on the t3k's 8-chip ring, every argument", "[ccl][plan]") {
    const auto ring = plan_1d(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    CclOptions o;
    o.chunk_bytes = 10240;
    const auto p = fabric::plan_ccl(ring, socs(), kernel(), o);
    REQUIRE(p.rings.at(0).ranks.size() == 8);
    CHECK(chips_of(p) == std::vector<ChipId>{0, 1, 2, 3, 7, 6, 5, 4});
    CHECK(p.output_bytes() == 8 * 10240);
    const auto worker0 = wh_soc().cores(fabric::CoreType::Worker).at(0);
    for (uint32_t r = 0; r < 8; ++r) {
        INFO("rank " << r);
        const auto& rank = p.rings[0].ranks[r];
        const ChipId chip = ring.chips[r];
        CHECK(rank.router == &ring.router(chip, fabric::FabricDir::East));
        CHECK(rank.target.core == fabric::CoreLocation{chip, worker0});
        CHECK(rank.target.image == &kernel());
        const protocol::CclRingArgs& a = rank.args;
        const pf::WorkerChannel want = ring.worker_channel(chip, fabric::FabricDir::East);
        CHECK(std::memcmp(&a.channel, &want, sizeof(want)) == 0);
        CHECK(a.conn_l1 == 0x18000);
        CHECK(a.op == static_cast<uint32_t>(protocol::CclOp::AllGather));
        CHECK(a.rank == r);
        CHECK(a.ranks == 8);
        CHECK(a.chunk_bytes == 10240);
        CHECK(a.counter_addr == 0x18300);
        CHECK(a.input_addr == 0x18400);
        CHECK(a.output_addr == 0x18400 + 10240);
        CHECK(a.next_x == worker0.x);
        CHECK(a.next_y == worker0.y);
        CHECK(a.timeout_us == 20'000);
        CHECK(a.piece_bytes == rank.router->config.payload_bytes);
    }
    // 10 KiB chunks in packets of 4352 B: 3 writes and an increment a gathering step, 3 fused
    // packets a reducing one; a chunk of one packet is one fused packet either way; 7 steps a
    // phase.
    REQUIRE(fabric::ccl_path_payload(p) == 4352);
    CHECK(fabric::ccl_packets_per_rank(p) == 7 * 4);
    o.op = protocol::CclOp::ReduceScatter;
    o.chunk_bytes = 8 * 1024;  // 2 packets
    CHECK(fabric::ccl_packets_per_rank(fabric::plan_ccl(ring, socs(), kernel(), o)) == 7 * 2);
    o.op = protocol::CclOp::AllReduce;
    o.chunk_bytes = 4 * 1024;  // 1 packet
    CHECK(fabric::ccl_packets_per_rank(fabric::plan_ccl(ring, socs(), kernel(), o)) == 7 + 7);
    // The host's output, the same on every rank: chunk r is rank r's input, pattern(seed + r).
    for (uint32_t r : {0u, 5u}) {
        const auto want = fabric::ccl_expected(p, 0, r);
        REQUIRE(want.size() == 8 * 10240 / 4);
        CHECK(want[0] == protocol::pattern_word(0xA110, 0));
        CHECK(want[2560 * 3 + 7] == protocol::pattern_word(0xA113, 7));
        CHECK(want.back() == protocol::pattern_word(0xA117, 2559));
    }
}

TEST_CASE("ccl plan: reduce-scatter on the 8-chip ring: inputs, layout and every partial sum",
          "[ccl][plan]") {
    const auto ring = plan_1d(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    CclOptions o;
    o.op = protocol::CclOp::ReduceScatter;
    o.chunk_bytes = 64;  // 16 int32 elements a chunk
    o.seed = 0x500;
    const auto p = fabric::plan_ccl(ring, socs(), kernel(), o);
    REQUIRE(p.rings.at(0).ranks.size() == 8);
    CHECK(p.input_bytes() == 8 * 64);
    CHECK(p.output_bytes() == 8 * 64);
    CHECK(p.rings[0].ranks[3].args.op == static_cast<uint32_t>(protocol::CclOp::ReduceScatter));
    CHECK(p.rings[0].ranks[3].args.input_addr == 0x18400);
    CHECK(p.rings[0].ranks[3].args.output_addr == 0x18400 + 8 * 64);
    const auto in = [](uint32_t rank, uint32_t chunk, uint32_t w) {
        return protocol::pattern_word(0x500 + rank, 16 * chunk + w);
    };
    CHECK(fabric::ccl_input(p, 0, 6) == [&] {
        std::vector<uint32_t> v;
        for (uint32_t w = 0; w < 128; ++w) v.push_back(protocol::pattern_word(0x506, w));
        return v;
    }());
    // Rank 3: slot 3 the whole sum; slot 2 never written (rank 3 starts chunk 2's chain); slot 1
    // ranks 2 and 3; slot 4 ranks 5, 6, 7, 0, 1, 2, 3 (round the ring).
    const auto want = fabric::ccl_expected(p, 0, 3);
    REQUIRE(want.size() == 128);
    for (uint32_t w = 0; w < 16; ++w) {
        INFO("element " << w);
        uint32_t all = 0;
        for (uint32_t q = 0; q < 8; ++q) all += in(q, 3, w);
        CHECK(want[3 * 16 + w] == all);
        CHECK(want[2 * 16 + w] == 0);
        CHECK(want[1 * 16 + w] == in(2, 1, w) + in(3, 1, w));
        uint32_t round = 0;
        for (uint32_t q : {5u, 6u, 7u, 0u, 1u, 2u, 3u}) round += in(q, 4, w);
        CHECK(want[4 * 16 + w] == round);
    }
}

TEST_CASE("ccl plan: all-gather along a 4x4 torus row and column in 2D", "[ccl][plan]") {
    const auto torus =
        plan_2d("mesh_4x4_mesh_graph.yaml", "torus_4x4_cluster.yaml", pf::Topology::Torus);
    const auto row = fabric::plan_ccl(torus, {0, 6}, MeshDir::E, 0, socs(), kernel());
    CHECK(chips_of(row) == std::vector<ChipId>{6, 7, 4, 5});
    CHECK(row.rings[0].ranks[2].router == &torus.router({0, 4}, MeshDir::E, 0));
    CHECK(row.rings[0].ranks[3].args.rank == 3);
    CHECK(row.rings[0].ranks[3].args.ranks == 4);
    const auto column = fabric::plan_ccl(torus, {0, 1}, MeshDir::N, 0, socs(), kernel());
    CHECK(chips_of(column) == std::vector<ChipId>{1, 13, 9, 5});
}

TEST_CASE("ccl plan: every refusal is named", "[ccl][plan]") {
    const auto ring = plan_1d(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    const auto line = plan_1d(pf::Topology::Line, {0, 1, 2, 3});
    const auto refused = [&](const fabric::FabricPlan& plan, CclOptions o) {
        return expect_error(ErrorCategory::BadInput,
                            [&] { (void)fabric::plan_ccl(plan, socs(), kernel(), o); });
    };
    CHECK(refused(line, {}) ==
          "all-gather: the 1D fabric is a line: a ring all-gather needs a ring (--topology ring)");
    CHECK(refused(ring, {.chunk_bytes = 0}) ==
          "all-gather: chunk size 0 is not a positive multiple of 16 (--bytes)");
    CHECK(refused(ring, {.chunk_bytes = 1000}) ==
          "all-gather: chunk size 1000 is not a positive multiple of 16 (--bytes)");
    // 9 x 17984 B (the input and 8 chunks of output) do not fit 0x3FBE0 - 0x18400.
    CHECK(refused(ring, {.op = protocol::CclOp::AllGather, .chunk_bytes = 17984}) ==
          "all-gather: the input and the output of 8 ranks (9 x 17984 B) do not fit the 161760 B "
          "below a rank's mailbox");
    CHECK(fabric::plan_ccl(ring, socs(), kernel(), {.chunk_bytes = 17968}).ranks() == 8);
    CHECK(refused(ring, {.chunk_bytes = 4096, .seed = 1, .timeout_us = 0}) ==
          "all-gather: the timeout is 0 us");
    // A reduce-scatter's input is a chunk per rank: 16 x 10112 B do not fit.
    CHECK(refused(ring, {.op = protocol::CclOp::ReduceScatter, .chunk_bytes = 10112}) ==
          "reduce-scatter: the input and the output of 8 ranks (16 x 10112 B) do not fit the "
          "161760 B below a rank's mailbox");
    CHECK(fabric::parse_ccl_op("reduce-scatter") == protocol::CclOp::ReduceScatter);
    CHECK(fabric::parse_ccl_op("all-reduce") == protocol::CclOp::AllReduce);
    CHECK(fabric::parse_ccl_op("broadcast") == std::nullopt);
    // An all-reduce's output is twice the slots: 8 + 16 x 6752 B do not fit.
    CHECK(refused(ring, {.op = protocol::CclOp::AllReduce, .chunk_bytes = 6752}) ==
          "all-reduce: the input and the output of 8 ranks (24 x 6752 B) do not fit the 161760 B "
          "below a rank's mailbox");
    CHECK(fabric::ccl_op_name(protocol::CclOp::AllGather) == "all-gather");
    const auto mesh = plan_2d("t3k_mesh_graph.yaml", "t3k_cluster.yaml", pf::Topology::Mesh);
    CHECK(expect_error(ErrorCategory::BadInput,
                       [&] {
                           (void)fabric::plan_ccl(mesh, {0, 0}, MeshDir::E, 0, socs(), kernel());
                       }) ==
          "all-gather: the line of M0D0 E plane 0 is not a ring (a dimension that does not wrap, "
          "or an inter-mesh port)");
}

TEST_CASE("ccl plan: all-reduce on a 4-rank torus row: both halves of every rank's output",
          "[ccl][plan]") {
    const auto torus =
        plan_2d("mesh_4x4_mesh_graph.yaml", "torus_4x4_cluster.yaml", pf::Topology::Torus);
    CclOptions o;
    o.op = protocol::CclOp::AllReduce;
    o.chunk_bytes = 32;  // 8 int32 elements a chunk
    o.seed = 0x700;
    const auto p = fabric::plan_ccl(torus, {0, 6}, MeshDir::E, 0, socs(), kernel(), o);
    REQUIRE(p.rings.at(0).ranks.size() == 4);
    CHECK(p.phases() == 2);
    CHECK(p.input_bytes() == 4 * 32);
    CHECK(p.output_bytes() == 2 * 4 * 32);
    CHECK(p.rings[0].ranks[1].args.output_addr == 0x18400 + 4 * 32);
    const auto in = [](uint32_t rank, uint32_t chunk, uint32_t w) {
        return protocol::pattern_word(0x700 + rank, 8 * chunk + w);
    };
    // Rank 1: first half as a reduce-scatter leaves it (slot 0 never written: rank 1 starts
    // chunk 0's chain; slot 1 the whole sum; slot 3 ranks 0 and 1; slot 2 ranks 3, 0, 1); the
    // second half every chunk's whole sum.
    const auto want = fabric::ccl_expected(p, 0, 1);
    REQUIRE(want.size() == 64);
    for (uint32_t w = 0; w < 8; ++w) {
        INFO("element " << w);
        CHECK(want[0 * 8 + w] == 0);
        CHECK(want[1 * 8 + w] == in(0, 1, w) + in(1, 1, w) + in(2, 1, w) + in(3, 1, w));
        CHECK(want[2 * 8 + w] == in(3, 2, w) + in(0, 2, w) + in(1, 2, w));
        CHECK(want[3 * 8 + w] == in(0, 3, w) + in(1, 3, w));
        for (uint32_t c = 0; c < 4; ++c) {
            CHECK(want[32 + c * 8 + w] == in(0, c, w) + in(1, c, w) + in(2, c, w) + in(3, c, w));
        }
    }
}

TEST_CASE("ccl plan: the ring through every chip of a 2D mesh, and meshes with none",
          "[ccl][plan]") {
    const auto t3k = plan_2d("t3k_mesh_graph.yaml", "t3k_cluster.yaml", pf::Topology::Mesh);
    // 2x4: row 0 west to east, row 1 back to column 1, then up column 0.
    std::vector<uint32_t> devices;
    for (const auto n : fabric::ccl_mesh_cycle(t3k, 0)) devices.push_back(n.device);
    CHECK(devices == std::vector<uint32_t>{0, 1, 2, 3, 7, 6, 5, 4});
    const auto p = fabric::plan_ccl(t3k, 0, 0, socs(), kernel());
    REQUIRE(p.rings.size() == 1);
    std::vector<ChipId> want;
    for (uint32_t d : devices) want.push_back(t3k.chip_of({0, d}));
    CHECK(chips_of(p) == want);
    CHECK(p.cycle == want);
    // Each rank's router faces the next rank: E along row 0, S down column 3, W back, N up.
    const std::vector<MeshDir> dirs{MeshDir::E, MeshDir::E, MeshDir::E, MeshDir::S,
                                    MeshDir::W, MeshDir::W, MeshDir::W, MeshDir::N};
    for (uint32_t r = 0; r < 8; ++r) {
        INFO("rank " << r);
        CHECK(p.rings[0].ranks[r].router == &t3k.router({0, devices[r]}, dirs[r], 0));
    }
    const auto m4 =
        plan_2d("mesh_4x4_mesh_graph.yaml", "mesh_4x4_cluster.yaml", pf::Topology::Mesh);
    devices.clear();
    for (const auto n : fabric::ccl_mesh_cycle(m4, 0)) devices.push_back(n.device);
    CHECK(devices == std::vector<uint32_t>{0, 1, 2, 3, 7, 6, 5, 9, 10, 11, 15, 14, 13, 12, 8, 4});
    const auto n300 = plan_2d("n300_mesh_graph.yaml", "n300_cluster.yaml", pf::Topology::Mesh);
    CHECK(expect_error(ErrorCategory::BadInput, [&] { (void)fabric::ccl_mesh_cycle(n300, 0); }) ==
          "ccl: mesh 0 is 1x2: a ring through every chip without wrap links needs at least 2 rows "
          "and 2 columns, and an even number of one of them");
}

TEST_CASE("ccl plan: seeds/001's shape: rings both ways, two workers a direction, through muxes",
          "[ccl][plan][mux]") {
    const auto ring = plan_1d(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    CclOptions o;
    o.op = protocol::CclOp::ReduceScatter;
    o.chunk_bytes = 4 * 1024;  // 1 KiB a ring
    o.workers_per_direction = 2;
    o.bidirectional = true;
    o.through_mux = true;
    const auto p = fabric::plan_ccl(ring, socs(), kernel(), o);
    REQUIRE(p.rings.size() == 4);
    CHECK(p.ring_chunk_bytes() == 1024);
    CHECK(p.input_bytes() == 8 * 1024);
    const auto& workers = wh_soc().cores(fabric::CoreType::Worker);
    // Forward rings 0 and 1 round 0,1,2,3,7,6,5,4; back rings 2 and 3 round 0,4,5,6,7,3,2,1.
    CHECK(chips_of(p) == std::vector<ChipId>{0, 1, 2, 3, 7, 6, 5, 4});
    std::vector<ChipId> back;
    for (const auto& r : p.rings[2].ranks) back.push_back(r.target.core.chip);
    CHECK(back == std::vector<ChipId>{0, 4, 5, 6, 7, 3, 2, 1});
    // A mux per chip and direction: 16, on worker cores 4 (forward) and 5 (back), two channels.
    REQUIRE(p.muxes.size() == 16);
    for (uint32_t i = 0; i < 16; ++i) {
        INFO("mux " << i);
        const auto& m = p.muxes[i];
        const bool reverse = i >= 8;
        const ChipId chip = reverse ? back[i - 8] : ring.chips[i];
        CHECK(m.core == fabric::CoreLocation{chip, workers[reverse ? 5 : 4]});
        CHECK(m.channels() == 2);
        CHECK(m.config.full_slots == 1);
        CHECK(m.side == (reverse ? "west" : "east"));
    }
    for (uint32_t ring_index = 0; ring_index < 4; ++ring_index) {
        const auto& rr = p.rings[ring_index];
        CHECK(rr.reverse == (ring_index >= 2));
        for (uint32_t r = 0; r < 8; ++r) {
            INFO("ring " << ring_index << " rank " << r);
            const auto& rank = rr.ranks[r];
            CHECK(rank.ring == ring_index);
            CHECK(rank.target.core.core == workers[ring_index]);
            const auto& mux = p.muxes[(rr.reverse ? 8 : 0) + r];
            const pf::WorkerChannel want = mux.channel(ring_index % 2);
            CHECK(std::memcmp(&rank.args.channel, &want, sizeof(want)) == 0);
            CHECK(rank.router ==
                  &ring.router(rank.target.core.chip,
                               rr.reverse ? fabric::FabricDir::West : fabric::FabricDir::East));
            CHECK(rank.args.next_x == workers[ring_index].x);
            CHECK(rank.args.chunk_bytes == 1024);
            CHECK(rank.args.piece_bytes == mux.config.full_payload_bytes);
        }
    }
    // Each ring its own inputs.
    CHECK(fabric::ccl_input(p, 3, 2)[5] == protocol::pattern_word(0xA110 + 0x300 + 2, 5));
    CHECK(fabric::ccl_path_payload(p) == p.muxes[0].config.full_payload_bytes);
    // 7 steps of a 1 KiB chunk in one fused packet each.
    CHECK(fabric::ccl_packets_per_rank(p) == 7);
}

TEST_CASE("ccl plan: refusals of rings, workers and muxes", "[ccl][plan][mux]") {
    const auto ring = plan_1d(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    const auto refused = [&](CclOptions o) {
        return expect_error(ErrorCategory::BadInput,
                            [&] { (void)fabric::plan_ccl(ring, socs(), kernel(), o); });
    };
    CHECK(refused({.chunk_bytes = 4096, .workers_per_direction = 2}) ==
          "all-gather: 2 workers a direction need a mux (--mux): a router's worker channel takes "
          "one worker at a time");
    CHECK(refused({.chunk_bytes = 4096, .workers_per_direction = 0}) ==
          "all-gather: 0 workers a direction: 1..16 (through a mux)");
    CHECK(refused({.chunk_bytes = 4096, .workers_per_direction = 17, .through_mux = true}) ==
          "all-gather: 17 workers a direction: 1..16 (through a mux)");
    CHECK(refused({.chunk_bytes = 4000,
                   .workers_per_direction = 2,
                   .bidirectional = true,
                   .through_mux = true}) ==
          "all-gather: chunk size 4000 is not a positive multiple of 64, 16 for each of 4 rings "
          "(--bytes)");
    CHECK(refused({.chunk_bytes = 4096, .through_mux = true, .mux_slots = 0}) ==
          "mux on chip 0 core 2-1: slots per channel must be 1..16 (full-size 0, header-only 2)");
    const auto pair = plan_1d(pf::Topology::Ring, {0, 1});
    CHECK(fabric::plan_ccl(pair, socs(), kernel(), {.chunk_bytes = 4096, .bidirectional = true})
              .rings.size() == 2);
}
