// Sockets over the fabric end to end in the model (fabric/socket_plan.h, fabric/socket.h): a
// socket_stream sender and receiver on worker cores of two chips, pages through the routers one
// way, acknowledgements the other. Every stream is at least 16 rings long with a receiver slower
// than the sender (back-pressure: the sender waits for room), every byte of the receiver's output
// is checked, every count the ends report is exact, and the routers end clean.
//
//   - 1D: a t3k line, chip 0 to chip 3 (3 hops east, the acknowledgements 3 hops west)
//   - 2D: the t3k 2x4 mesh, a corner to the far corner (X then Y, and back)
//   - between meshes: the spec's 4-mesh cluster, M0D5 to M3D2 (no direct link between the meshes)
//   - a close in the middle from the sender (1D) and from the receiver (2D)
//   - pages larger than a router slot (each page's write split into several packets)
//   - Blackhole: a 2x2 mesh (the compact 2D image)
// Skipped (with a warning) until the firmware sub-build made the ELFs.
#include <catch2/catch.hpp>

#include "cluster.h"
#include "descriptors.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/mesh_plan.h"
#include "fabric/sim_device.h"
#include "fabric/socket_plan.h"
#include "protocol/socket.h"
#include "sim_fabric.h"

namespace pf = protocol::fabric;
using fabric::SocketSide;
using protocol::SocketEnd;

namespace {

#define REQUIRE_FIRMWARE(router_name)                                                        \
    const auto router = fabric::test::firmware_elf(router_name);                             \
    const auto kernel = fabric::test::firmware_elf("socket_stream");                         \
    if (!router || !kernel) {                                                                \
        WARN("skipped: " router_name ".elf / socket_stream.elf not built (build firmware)"); \
        return;                                                                              \
    }

using fabric::test::bh_soc;
using fabric::test::wh_soc;

using Fabric = fabric::test::SimFabric;

fabric::ChipSocs socs(const fabric::SocDescriptor& soc = wh_soc()) {
    return [&soc](fabric::ChipId) -> const fabric::SocDescriptor& { return soc; };
}

fabric::CoreLocation worker(fabric::ChipId chip, size_t index,
                            const fabric::SocDescriptor& soc = wh_soc()) {
    return {chip, soc.cores(fabric::CoreType::Worker).at(index)};
}

// Run the socket; both ends must do exactly what socket_expect says and the receiver's output
// hold the stream, byte for byte, as far as it was consumed. Returns the run.
fabric::SocketRun run_checked(Fabric& f, const fabric::SocketPlan& plan) {
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 40'000'000;
    const fabric::SocketRun run = fabric::run_socket(f.runner, plan, lo);
    INFO("sender status 0x" << std::hex << run.sender.status << " stuck_at 0x"
                            << run.sender.stuck_at << "; receiver status 0x" << run.receiver.status
                            << " stuck_at 0x" << run.receiver.stuck_at);
    CHECK(fabric::socket_problems(plan, run).empty());
    for (const auto& p : fabric::socket_problems(plan, run)) UNSCOPED_INFO(p);
    const fabric::SocketExpect x = fabric::socket_expect(plan);
    const fabric::PatternCheck c = fabric::check_socket_output(f.dev, plan, x.bytes);
    CHECK(c.bad_words == 0);
    return run;
}

// Graceful termination: every router Terminated, nothing refused, every packet taken.
void terminate_clean(Fabric& f) {
    for (const auto& s : f.runner.terminate(pf::Termination::Graceful, 5'000'000)) {
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
        CHECK(s.block.bad_packets == 0);
        CHECK(s.block.undrained == 0);
    }
}

fabric::FabricPlan t3k_line() {
    fabric::FabricOptions o;
    o.topology = pf::Topology::Line;
    o.chips = {0, 1, 2, 3};
    return fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), wh_soc(), o);
}

fabric::MeshPlan mesh(const std::string& graph, const std::string& cluster,
                      const fabric::SocDescriptor& soc = wh_soc()) {
    fabric::MeshFabricOptions o;
    o.topology = pf::Topology::Mesh;
    o.planes = {0};
    return fabric::plan_mesh(fabric::test::mesh_graph(graph), fabric::test::cluster(cluster), soc,
                             o);
}

}  // namespace

TEST_CASE("socket (sim): 1D line: 16 rings to a slow receiver 3 hops away: every byte",
          "[socket][sim]") {
    REQUIRE_FIRMWARE("fabric_router");
    const auto plan = t3k_line();
    Fabric f("t3k_cluster.yaml", plan, *router, 5'000'000);
    fabric::SocketOptions o;
    o.page_bytes = 2048;
    o.ring_pages = 2;
    o.bytes = 16 * o.ring_pages * o.page_bytes + 512;  // 16 rings and a short last page
    o.consume_delay = 3'000;
    const auto s = fabric::plan_socket(plan, socs(), *kernel, worker(0, 0), worker(3, 1), o);
    CHECK(s.sender.hops == 3);
    CHECK(s.receiver.hops == 3);
    CHECK(s.pages() == 33);
    const auto run = run_checked(f, s);
    CHECK(run.sender.results.bytes_sent == o.bytes);
    CHECK(run.sender.results.pages == 33);
    CHECK(run.receiver.results.bytes_consumed == o.bytes);
    CHECK(run.receiver.results.end == static_cast<uint32_t>(SocketEnd::Complete));
    // The receiver set the pace: a page every consume_delay cycles at least.
    CHECK(run.receiver.results.cycles >= 32 * o.consume_delay);
    terminate_clean(f);
}

TEST_CASE("socket (sim): 1D: the sender closes in the middle", "[socket][sim][close]") {
    REQUIRE_FIRMWARE("fabric_router");
    const auto plan = t3k_line();
    Fabric f("t3k_cluster.yaml", plan, *router, 5'000'000);
    fabric::SocketOptions o;
    o.page_bytes = 1024;
    o.ring_pages = 4;
    o.bytes = 64 * o.page_bytes;
    o.consume_delay = 2'000;
    o.close_after = 21;
    o.close_from = SocketSide::Sender;
    const auto s = fabric::plan_socket(plan, socs(), *kernel, worker(1, 0), worker(2, 0), o);
    const auto run = run_checked(f, s);
    CHECK(run.sender.results.bytes_sent == 21 * 1024);
    CHECK(run.sender.results.bytes_acked == 21 * 1024);
    CHECK(run.sender.results.end == static_cast<uint32_t>(SocketEnd::ClosedHere));
    CHECK(run.receiver.results.bytes_received == 21 * 1024);
    CHECK(run.receiver.results.bytes_consumed == 21 * 1024);
    CHECK(run.receiver.results.pages == 21);
    CHECK(run.receiver.results.end == static_cast<uint32_t>(SocketEnd::ClosedByPeer));
    CHECK(run.receiver.results.socket_status ==
          static_cast<uint32_t>(protocol::SocketStatus::PeerClosed));
    terminate_clean(f);
}

TEST_CASE("socket (sim): 2D t3k mesh: a corner to the far corner: a slow receiver: every byte",
          "[socket][sim]") {
    REQUIRE_FIRMWARE("fabric_router_2d");
    const auto m = mesh("t3k_mesh_graph.yaml", "t3k_cluster.yaml");
    Fabric f("t3k_cluster.yaml", m.fabric, *router, 5'000'000);
    fabric::SocketOptions o;
    o.page_bytes = 2048;
    o.ring_pages = 3;
    o.bytes = 16 * o.ring_pages * o.page_bytes;
    o.consume_delay = 3'000;
    const fabric::ChipId from = m.chip_of({0, 0});
    const fabric::ChipId to = m.chip_of({0, 7});
    const auto s = fabric::plan_socket(m, socs(), *kernel, worker(from, 2), worker(to, 5), o);
    CHECK(s.sender.hops == 4);  // 3 along the row, 1 down the column
    CHECK(s.receiver.hops == 4);
    const auto run = run_checked(f, s);
    CHECK(run.receiver.results.bytes_consumed == o.bytes);
    CHECK(run.receiver.results.pages == 48);
    terminate_clean(f);
}

TEST_CASE("socket (sim): 2D: the receiver closes in the middle", "[socket][sim][close]") {
    REQUIRE_FIRMWARE("fabric_router_2d");
    const auto m = mesh("t3k_mesh_graph.yaml", "t3k_cluster.yaml");
    Fabric f("t3k_cluster.yaml", m.fabric, *router, 5'000'000);
    fabric::SocketOptions o;
    o.page_bytes = 2048;
    o.ring_pages = 4;
    o.bytes = 64 * o.page_bytes;
    o.consume_delay = 2'000;
    o.close_after = 10;
    o.close_from = SocketSide::Receiver;
    const auto s = fabric::plan_socket(m, socs(), *kernel, worker(m.chip_of({0, 1}), 0),
                                       worker(m.chip_of({0, 6}), 0), o);
    const auto run = run_checked(f, s);
    CHECK(run.receiver.results.bytes_consumed == 10 * 2048);
    CHECK(run.receiver.results.pages == 10);
    CHECK(run.receiver.results.end == static_cast<uint32_t>(SocketEnd::ClosedHere));
    CHECK(run.sender.results.bytes_acked == 10 * 2048);
    CHECK(run.sender.results.end == static_cast<uint32_t>(SocketEnd::ClosedByPeer));
    CHECK(run.sender.results.socket_status ==
          static_cast<uint32_t>(protocol::SocketStatus::PeerClosed));
    // Held at most a ring ahead of what the receiver acknowledged, and a slow receiver keeps it
    // there: it stopped more than a page and at most a ring past the close.
    CHECK(run.sender.results.bytes_sent > 11 * 2048);
    CHECK(run.sender.results.bytes_sent <= 10 * 2048 + s.ring_bytes());
    CHECK(run.sender.results.bytes_sent == run.sender.results.pages * 2048);
    terminate_clean(f);
}

TEST_CASE("socket (sim): between meshes: M0D5 to M3D2 of the spec's 4-mesh cluster: every byte",
          "[socket][sim][intermesh]") {
    REQUIRE_FIRMWARE("fabric_router_2d");
    const auto m = mesh("spec_4mesh_3x3_mesh_graph.yaml", "spec_4mesh_3x3_cluster.yaml");
    Fabric f("spec_4mesh_3x3_cluster.yaml", m.fabric, *router, 10'000'000);
    fabric::SocketOptions o;
    o.page_bytes = 1024;
    o.ring_pages = 2;
    o.bytes = 16 * o.ring_pages * o.page_bytes;
    o.consume_delay = 2'000;
    // Mesh 0 has no link to mesh 3: the shortest way between them crosses mesh 1 (5 hops; the
    // 10 of M0D0 -> M3D8 take this 36-chip model twice as long and cross nothing more).
    const auto s = fabric::plan_socket(m, socs(), *kernel, worker(m.chip_of({0, 5}), 0),
                                       worker(m.chip_of({3, 2}), 0), o);
    CHECK(s.sender.hops == 5);
    const auto run = run_checked(f, s);
    CHECK(run.receiver.results.bytes_consumed == o.bytes);
    CHECK(run.sender.results.bytes_acked == o.bytes);
    terminate_clean(f);
}

TEST_CASE("socket (sim): 1D: pages larger than a router slot are split and still checked",
          "[socket][sim]") {
    REQUIRE_FIRMWARE("fabric_router");
    const auto plan = t3k_line();
    Fabric f("t3k_cluster.yaml", plan, *router, 5'000'000);
    fabric::SocketOptions o;
    o.page_bytes = 8192;  // the routers' slots carry 4352 B: two packets a page
    o.ring_pages = 2;
    o.bytes = 16 * o.ring_pages * o.page_bytes;
    o.consume_delay = 1'000;
    const auto s = fabric::plan_socket(plan, socs(), *kernel, worker(2, 0), worker(1, 3), o);
    REQUIRE(plan.worker_channel(2, fabric::FabricDir::West).payload_bytes < o.page_bytes);
    // 161760 B below the mailbox hold 19 pages: the source wraps, and not at a ring's multiple.
    CHECK(s.source_bytes() == 19 * 8192);
    const auto run = run_checked(f, s);
    CHECK(run.receiver.results.bytes_consumed == o.bytes);
    CHECK(run.receiver.results.pages == 32);
    terminate_clean(f);
}

TEST_CASE("socket (sim): Blackhole 2x2 mesh: a slow receiver across the diagonal: every byte",
          "[socket][sim][blackhole]") {
    const auto router = fabric::test::firmware_elf("fabric_router_2d", hal::Arch::Blackhole);
    const auto kernel = fabric::test::firmware_elf("socket_stream", hal::Arch::Blackhole);
    if (!router || !kernel) {
        WARN("skipped: the Blackhole firmware is not built");
        return;
    }
    const auto m = mesh("bh_2x2_mesh_graph.yaml", "bh_2x2_cluster.yaml", bh_soc());
    Fabric f("bh_2x2_cluster.yaml", m.fabric, *router, 5'000'000, bh_soc());
    fabric::SocketOptions o;
    o.page_bytes = 4096;
    o.ring_pages = 4;
    o.bytes = 16 * o.ring_pages * o.page_bytes;
    o.consume_delay = 2'000;
    const auto s =
        fabric::plan_socket(m, socs(bh_soc()), *kernel, worker(m.chip_of({0, 0}), 0, bh_soc()),
                            worker(m.chip_of({0, 3}), 1, bh_soc()), o);
    CHECK(s.arch == hal::Arch::Blackhole);
    CHECK(s.sender.hops == 2);
    const auto run = run_checked(f, s);
    CHECK(run.receiver.results.bytes_consumed == o.bytes);
    CHECK(run.sender.results.bytes_acked == o.bytes);
    terminate_clean(f);
}
