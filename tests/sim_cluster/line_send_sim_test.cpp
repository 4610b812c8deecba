// The line API end to end in the model (protocol/fabric.h "the line a worker's endpoint sends
// along"; FabricConnection::line_unicast / line_multicast): one kernel ELF, line_send, that sends
// by hop count only, runs on
//   - a 1D line (t3k chips 0-3) and a 1D ring (the t3k's 8 chips),
//   - the t3k 2x4 mesh in 2D (along a row E and W, along a column N),
//   - a 4x4 torus in 2D (round the wrap links of a row and of a column),
//   - a Blackhole 2x2 mesh in 2D (its compact router image publishes the line too),
// each with unicasts at several hop counts, multicasts, and refused sends (0 hops, past the line's
// end: their status, nothing sent). The host knows where each send should land from the plan's
// lines (line_chips), computed apart from the firmware's routes: on every chip of the fabric
// every byte of every worker's destination region is checked (the pattern where a send landed,
// zeros elsewhere) and each counter (one atomic increment per send that reached the chip) is
// exact. What each router published is checked word for word.
// Skipped (with a warning) until the firmware sub-build made the ELFs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "descriptors.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "hal/status.h"
#include "protocol/test_kernels.h"
#include "sim_fabric.h"

namespace pf = protocol::fabric;
using fabric::ChipId;
using fabric::FabricDir;
using fabric::MeshDir;
using fabric::RouterPlacement;
using fabric::test::wh_soc;
using protocol::line_send_multicast;
using protocol::line_send_unicast;
using protocol::LineSendArgs;
using protocol::LineSendResults;

namespace {

constexpr uint32_t kSendBytes = 2048;
constexpr uint32_t kOk = static_cast<uint32_t>(hal::Status::Ok);
constexpr uint32_t kBadArg = static_cast<uint32_t>(hal::Status::BadArg);
constexpr uint32_t kOutOfRange = static_cast<uint32_t>(hal::Status::OutOfRange);

#define REQUIRE_FIRMWARE(router_name)                                                    \
    const auto router = fabric::test::firmware_elf(router_name);                         \
    const auto kernel = fabric::test::firmware_elf("line_send");                         \
    if (!router || !kernel) {                                                            \
        WARN("skipped: " router_name ".elf / line_send.elf not built (build firmware)"); \
        return;                                                                          \
    }

// One worker: the router it connects to, the line it should see, its sends and what each must
// return.
struct LineWorker {
    const RouterPlacement* router = nullptr;
    std::vector<ChipId> line;  // the plan's line_chips(router): hop k is line[k - 1]
    pf::LineInfo published;    // what the router must publish
    std::vector<uint32_t> sends;
    std::vector<uint32_t> statuses;  // hal::Status each send must return
};

// Where worker w's sends land on every chip: the destination worker core (index 1), a counter,
// then kLineSendMax sends of kSendBytes, above the test mailbox (mesh_sink_base).
struct Sink {
    fabric::CoreLocation core;
    uint32_t counter, data;
};
Sink sink_of(const fabric::SocDescriptor& soc, ChipId chip, size_t w) {
    const uint32_t base = fabric::mesh_sink_base(soc.arch()) +
                          static_cast<uint32_t>(w) * (256 + protocol::kLineSendMax * kSendBytes);
    return {{chip, soc.cores(fabric::CoreType::Worker).at(1)}, base, base + 256};
}

LineSendArgs args_of(const fabric::SocDescriptor& soc, const LineWorker& lw, size_t w) {
    const Sink s = sink_of(soc, lw.router->chip, w);
    const uint32_t base = protocol::test_l1_base(soc.arch());
    LineSendArgs a{};
    a.channel = pf::worker_channel(hal::arch_map(soc.arch()), lw.router->config,
                                   lw.router->core.core.x, lw.router->core.core.y);
    a.conn_l1 = base;
    a.src_addr = base + 0x400;
    a.dst_addr = s.data;
    a.dst_x = s.core.core.x;
    a.dst_y = s.core.core.y;
    a.counter_addr = s.counter;
    a.bytes = kSendBytes;
    a.seed = 0x1100 + 0x10 * static_cast<uint32_t>(w);
    a.timeout_us = 20'000;
    a.num_sends = static_cast<uint32_t>(lw.sends.size());
    std::copy(lw.sends.begin(), lw.sends.end(), a.sends);
    return a;
}

// The chips send i of worker lw reaches (none for a refused send), from the plan's line.
std::vector<ChipId> reached(const LineWorker& lw, size_t i) {
    if (lw.statuses.at(i) != kOk) return {};
    const uint32_t op = lw.sends[i];
    const uint32_t start = op & 0xFF;
    const uint32_t range = (op & protocol::kLineSendMulticast) != 0 ? (op >> 8) & 0xFF : 1;
    REQUIRE(start + range - 1 <= lw.line.size());
    return {lw.line.begin() + start - 1, lw.line.begin() + start - 1 + range};
}

std::vector<uint32_t> read_words(fabric::Device& dev, const fabric::CoreLocation& core,
                                 uint32_t addr, uint32_t bytes) {
    std::vector<uint8_t> raw(bytes);
    dev.read(core, addr, raw);
    std::vector<uint32_t> out(bytes / 4);
    std::memcpy(out.data(), raw.data(), bytes);
    return out;
}

// What worker w's sink on `chip` must hold: its counter, then each send's pattern or zeros.
std::vector<uint32_t> expected_sink(const fabric::SocDescriptor& soc, const LineWorker& lw,
                                    size_t w, ChipId chip, uint32_t& count) {
    const LineSendArgs a = args_of(soc, lw, w);
    std::vector<uint32_t> words(protocol::kLineSendMax * kSendBytes / 4, 0);
    count = 0;
    for (size_t i = 0; i < lw.sends.size(); ++i) {
        const auto to = reached(lw, i);
        if (std::find(to.begin(), to.end(), chip) == to.end()) continue;
        ++count;
        for (uint32_t k = 0; k < kSendBytes / 4; ++k) {
            words[i * kSendBytes / 4 + k] =
                protocol::pattern_word(a.seed + static_cast<uint32_t>(i), k);
        }
    }
    return words;
}

// Zero every sink, run the workers to their end, terminate gracefully (every packet delivered),
// then check each worker's report and every sink on every chip.
void run_and_check(fabric::test::SimFabric& f, const fabric::ElfImage& kernel,
                   const std::vector<ChipId>& chips, const std::vector<LineWorker>& workers,
                   const fabric::SocDescriptor& soc = wh_soc()) {
    for (size_t w = 0; w < workers.size(); ++w) {
        for (ChipId c : chips) {
            const Sink s = sink_of(soc, c, w);
            f.dev.write(s.core, s.counter,
                        std::vector<uint8_t>(256 + protocol::kLineSendMax * kSendBytes, 0));
        }
    }
    std::vector<fabric::LaunchTarget> targets;
    for (const LineWorker& lw : workers) {
        const fabric::CoreLocation at{lw.router->chip, soc.cores(fabric::CoreType::Worker).at(0)};
        targets.push_back(
            {at, &kernel,
             fabric::erisc_placement(hal::arch_map(soc.arch()), soc.worker_l1_size())});
    }
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 10'000'000;
    const auto res = f.runner.run_workers(targets, lo, [&](const fabric::LaunchTarget& t) {
        for (size_t w = 0; w < targets.size(); ++w) {
            if (!(targets[w].core == t.core)) continue;
            protocol::TestMailbox m{};
            m.magic = protocol::kTestMailboxMagic;
            const LineSendArgs a = args_of(soc, workers[w], w);
            m.num_args = sizeof(a) / 4;
            std::memcpy(m.args, &a, sizeof(a));
            std::vector<uint8_t> bytes(sizeof(m));
            std::memcpy(bytes.data(), &m, sizeof(m));
            f.dev.write(t.core, protocol::test_mailbox_addr(soc.arch()), bytes);
        }
    });
    for (const auto& s : f.runner.terminate(pf::Termination::Graceful, 5'000'000)) {
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
        CHECK(s.block.bad_packets == 0);
    }
    for (size_t w = 0; w < workers.size(); ++w) {
        const LineWorker& lw = workers[w];
        INFO("worker " << w << " on chip " << lw.router->chip << " via " << lw.router->core.str());
        const auto mb = fabric::read_test_mailbox(f.dev, soc.arch(), targets[w].core);
        LineSendResults r{};
        std::memcpy(&r, mb.results, sizeof(r));
        CHECK(res.at(w).outcome == fabric::LaunchOutcome::Exited);
        CHECK(mb.status == static_cast<uint32_t>(protocol::TestStatus::Done));
        CHECK(mb.stuck_at == 0);
        const pf::LineInfoWords want{lw.published};
        CHECK(std::vector<uint32_t>(r.line, r.line + 3) ==
              std::vector<uint32_t>(want.w, want.w + 3));
        uint32_t statuses = 0, refused = 0;
        for (size_t i = 0; i < lw.statuses.size(); ++i) {
            statuses |= lw.statuses[i] << (4 * i);
            refused += lw.statuses[i] != kOk ? 1 : 0;
        }
        CHECK(r.statuses == statuses);
        CHECK(r.refused == refused);
        CHECK(r.sent == lw.sends.size() - refused);
        for (ChipId c : chips) {
            INFO("sink on chip " << c);
            const Sink s = sink_of(soc, c, w);
            uint32_t count = 0;
            const auto want_words = expected_sink(soc, lw, w, c, count);
            CHECK(f.dev.read32(s.core, s.counter) == count);
            CHECK(read_words(f.dev, s.core, s.data, kSendBytes * protocol::kLineSendMax) ==
                  want_words);
        }
    }
}

LineWorker worker_1d(const fabric::FabricPlan& plan, ChipId chip, FabricDir dir,
                     std::vector<uint32_t> sends, std::vector<uint32_t> statuses) {
    const RouterPlacement& r = plan.router(chip, dir);
    const auto line = plan.line_chips(r);
    return {&r, line, pf::LineInfo{.reach = static_cast<uint8_t>(line.size()), .dir = pf::kLine1D},
            std::move(sends), std::move(statuses)};
}

LineWorker worker_2d(const fabric::MeshPlan& plan, uint32_t device, MeshDir dir, uint8_t reach,
                     uint16_t rows, uint16_t cols, std::vector<uint32_t> sends,
                     std::vector<uint32_t> statuses) {
    const RouterPlacement& r = plan.router({0, device}, dir, 0);
    const pf::LineInfo published{.reach = reach,
                                 .dir = static_cast<uint8_t>(dir),
                                 .mesh = 0,
                                 .device = static_cast<uint16_t>(device),
                                 .rows = rows,
                                 .cols = cols};
    return {&r, plan.line_chips(r), published, std::move(sends), std::move(statuses)};
}

fabric::MeshPlan plan_2d(const std::string& graph, const std::string& cluster, pf::Topology t,
                         const fabric::SocDescriptor& soc = wh_soc()) {
    fabric::MeshFabricOptions o;
    o.topology = t;
    o.planes = {0};
    return fabric::plan_mesh(fabric::test::mesh_graph(graph), fabric::test::cluster(cluster), soc,
                             o);
}

fabric::FabricPlan plan_1d(pf::Topology t, std::vector<ChipId> chips) {
    fabric::FabricOptions o;
    o.topology = t;
    o.chips = std::move(chips);
    return fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), wh_soc(), o);
}

}  // namespace

TEST_CASE("line send (sim): 1D line, both ends, unicast 1-3 hops and multicast", "[line][sim]") {
    REQUIRE_FIRMWARE("fabric_router");
    const auto plan = plan_1d(pf::Topology::Line, {0, 1, 2, 3});
    fabric::test::SimFabric f("t3k_cluster.yaml", plan, *router, 5'000'000);
    const std::vector<LineWorker> workers{
        worker_1d(plan, 0, FabricDir::East,
                  {line_send_unicast(1), line_send_unicast(2), line_send_unicast(3),
                   line_send_multicast(2, 2), line_send_unicast(0), line_send_unicast(4)},
                  {kOk, kOk, kOk, kOk, kBadArg, kOutOfRange}),
        worker_1d(plan, 3, FabricDir::West,
                  {line_send_unicast(3), line_send_multicast(1, 3), line_send_multicast(3, 2),
                   line_send_multicast(1, 0)},
                  {kOk, kOk, kOutOfRange, kBadArg}),
    };
    CHECK(workers[0].line == std::vector<ChipId>{1, 2, 3});
    CHECK(workers[1].line == std::vector<ChipId>{2, 1, 0});
    run_and_check(f, *kernel, plan.chips, workers);
}

TEST_CASE("line send (sim): 1D ring of 8, round the ring", "[line][sim]") {
    REQUIRE_FIRMWARE("fabric_router");
    const auto plan = plan_1d(pf::Topology::Ring, {0, 1, 2, 3, 7, 6, 5, 4});
    fabric::test::SimFabric f("t3k_cluster.yaml", plan, *router, 5'000'000);
    const std::vector<LineWorker> workers{
        worker_1d(plan, 0, FabricDir::East,
                  {line_send_unicast(7), line_send_multicast(1, 7), line_send_unicast(8)},
                  {kOk, kOk, kOutOfRange}),
        worker_1d(plan, 2, FabricDir::West, {line_send_unicast(5), line_send_multicast(4, 3)},
                  {kOk, kOk}),
    };
    CHECK(workers[0].line == std::vector<ChipId>{1, 2, 3, 7, 6, 5, 4});
    CHECK(workers[1].line == std::vector<ChipId>{1, 0, 4, 5, 6, 7, 3});
    run_and_check(f, *kernel, plan.chips, workers);
}

TEST_CASE("line send (sim): the same kernel on the t3k 2x4 mesh in 2D", "[line][sim]") {
    REQUIRE_FIRMWARE("fabric_router_2d");
    const auto plan = plan_2d("t3k_mesh_graph.yaml", "t3k_cluster.yaml", pf::Topology::Mesh);
    fabric::test::SimFabric f("t3k_cluster.yaml", plan.fabric, *router, 5'000'000);
    const std::vector<LineWorker> workers{
        worker_2d(plan, 0, MeshDir::E, 3, 2, 4,
                  {line_send_unicast(1), line_send_unicast(2), line_send_unicast(3),
                   line_send_multicast(1, 3), line_send_unicast(4), line_send_unicast(0)},
                  {kOk, kOk, kOk, kOk, kOutOfRange, kBadArg}),
        worker_2d(plan, 6, MeshDir::N, 1, 2, 4, {line_send_unicast(1), line_send_unicast(2)},
                  {kOk, kOutOfRange}),
        worker_2d(plan, 7, MeshDir::W, 3, 2, 4, {line_send_multicast(2, 2)}, {kOk}),
    };
    CHECK(workers[0].line == std::vector<ChipId>{1, 2, 3});
    CHECK(workers[1].line == std::vector<ChipId>{2});
    CHECK(workers[2].line == std::vector<ChipId>{6, 5, 4});
    run_and_check(f, *kernel, plan.fabric.chips, workers);
}

TEST_CASE("line send (sim): a 4x4 torus in 2D, round the wrap links", "[line][sim]") {
    REQUIRE_FIRMWARE("fabric_router_2d");
    const auto plan =
        plan_2d("mesh_4x4_mesh_graph.yaml", "torus_4x4_cluster.yaml", pf::Topology::Torus);
    fabric::test::SimFabric f("torus_4x4_cluster.yaml", plan.fabric, *router, 5'000'000);
    const std::vector<LineWorker> workers{
        worker_2d(plan, 6, MeshDir::E, 3, 4, 4,
                  {line_send_unicast(1), line_send_unicast(2), line_send_unicast(3),
                   line_send_multicast(1, 3), line_send_unicast(4)},
                  {kOk, kOk, kOk, kOk, kOutOfRange}),
        worker_2d(plan, 1, MeshDir::N, 3, 4, 4, {line_send_unicast(1), line_send_multicast(2, 2)},
                  {kOk, kOk}),
    };
    CHECK(workers[0].line == std::vector<ChipId>{7, 4, 5});
    CHECK(workers[1].line == std::vector<ChipId>{13, 9, 5});
    run_and_check(f, *kernel, plan.fabric.chips, workers);
}

TEST_CASE("line send (sim): Blackhole 2x2 mesh in 2D (the compact 2D router image)",
          "[line][sim][blackhole]") {
    const auto router = fabric::test::firmware_elf("fabric_router_2d", hal::Arch::Blackhole);
    const auto kernel = fabric::test::firmware_elf("line_send", hal::Arch::Blackhole);
    if (!router || !kernel) {
        WARN("skipped: the Blackhole firmware is not built");
        return;
    }
    const auto& soc = fabric::test::bh_soc();
    const auto plan =
        plan_2d("bh_2x2_mesh_graph.yaml", "bh_2x2_cluster.yaml", pf::Topology::Mesh, soc);
    fabric::test::SimFabric f("bh_2x2_cluster.yaml", plan.fabric, *router, 5'000'000, soc);
    const std::vector<LineWorker> workers{
        worker_2d(plan, 0, MeshDir::E, 1, 2, 2, {line_send_unicast(1), line_send_unicast(2)},
                  {kOk, kOutOfRange}),
        worker_2d(plan, 3, MeshDir::N, 1, 2, 2, {line_send_multicast(1, 1)}, {kOk}),
    };
    CHECK(workers[0].line == std::vector<ChipId>{plan.chip_of({0, 1})});
    CHECK(workers[1].line == std::vector<ChipId>{plan.chip_of({0, 1})});
    run_and_check(f, *kernel, plan.fabric.chips, workers, soc);
}
