// The host side of sockets over the fabric (fabric/socket_plan.h): a socket pair planned exactly
// on a 1D line and on the t3k 2x4 mesh (routes both ways, channels, L1 layout, kernel arguments,
// the source that wraps), what the ends must report, and every bad input refused with its exact
// message.
#include <catch2/catch.hpp>
#include <cstring>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/fabric_plan.h"
#include "fabric/mesh_plan.h"
#include "fabric/socket_plan.h"
#include "hal/status.h"
#include "protocol/socket.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"
#include "test_elf.h"

namespace pf = protocol::fabric;
using fabric::CoreCoord;
using fabric::CoreLocation;
using fabric::SocketOptions;
using fabric::SocketSide;
using fabric::test::wh_soc;

namespace {

const fabric::ElfImage& kernel() {
    static const auto image = fabric::ElfImage::parse(
        fabric::test::program_elf({0x0000006f}, hal::kWormholeB0.app_fw_base), "socket.elf");
    return image;
}

const fabric::ChipSocs& socs() {
    static const fabric::ChipSocs s = [](fabric::ChipId) -> const fabric::SocDescriptor& {
        return wh_soc();
    };
    return s;
}

fabric::FabricPlan line(std::vector<fabric::ChipId> chips = {0, 1, 2, 3}) {
    fabric::FabricOptions o;
    o.topology = pf::Topology::Line;
    o.chips = std::move(chips);
    return fabric::plan_fabric(fabric::test::cluster("t3k_cluster.yaml"), wh_soc(), o);
}

fabric::MeshPlan t3k_mesh() {
    fabric::MeshFabricOptions o;
    o.topology = pf::Topology::Mesh;
    o.planes = {0};
    return fabric::plan_mesh(fabric::test::mesh_graph("t3k_mesh_graph.yaml"),
                             fabric::test::cluster("t3k_cluster.yaml"), wh_soc(), o);
}

bool same_channel(const pf::WorkerChannel& a, const pf::WorkerChannel& b) {
    return std::memcmp(&a, &b, sizeof(a)) == 0;
}

CoreLocation worker(fabric::ChipId chip, size_t index) {
    return {chip, wh_soc().cores(fabric::CoreType::Worker).at(index)};
}

std::string refused(const SocketOptions& o, CoreLocation from = worker(0, 0),
                    CoreLocation to = worker(3, 1)) {
    const auto plan = line();
    return fabric::test::expect_error(fabric::ErrorCategory::BadInput, [&] {
        fabric::plan_socket(plan, socs(), kernel(), from, to, o);
    });
}

}  // namespace

TEST_CASE("socket plan: 1D: both ends: routes both ways and the L1 layout", "[socket]") {
    const auto plan = line();
    SocketOptions o;
    o.bytes = 40 * 1024;
    o.page_bytes = 2048;
    o.ring_pages = 4;
    o.consume_delay = 500;
    const auto s = fabric::plan_socket(plan, socs(), kernel(), worker(0, 0), worker(3, 1), o);
    CHECK(s.pages() == 20);
    CHECK(s.ring_bytes() == 8192);
    // The sender sends east 3 hops, the receiver acknowledges west 3 hops.
    CHECK(s.sender.hops == 3);
    CHECK(s.receiver.hops == 3);
    CHECK(s.sender.args.socket.peer.route == pf::route_unicast(3));
    CHECK(s.receiver.args.socket.peer.route == pf::route_unicast(3));
    CHECK(s.sender.args.socket.peer.flags_word == plan.ttl());
    CHECK(same_channel(s.sender.args.channel, plan.worker_channel(0, fabric::FabricDir::East)));
    CHECK(same_channel(s.receiver.args.channel, plan.worker_channel(3, fabric::FabricDir::West)));
    CHECK(s.sender.args.socket.peer.x == worker(3, 1).core.x);
    CHECK(s.sender.args.socket.peer.y == worker(3, 1).core.y);
    CHECK(s.receiver.args.socket.peer.x == worker(0, 0).core.x);
    CHECK(s.receiver.args.socket.peer.y == worker(0, 0).core.y);
    // The same ring and words on both ends; the output above the mailbox; the whole stream fits
    // the source, so it does not wrap.
    for (const auto* e : {&s.sender, &s.receiver}) {
        CHECK(e->args.socket.words_addr == 0x18000);
        CHECK(e->args.socket.ring_addr == 0x18400);
        CHECK(e->args.socket.ring_pages == 4);
        CHECK(e->args.socket.page_bytes == 2048);
        CHECK(e->args.total_bytes == 40 * 1024);
        CHECK(e->args.timeout_us == 20'000);
        CHECK(e->args.close_after_pages == 0);
    }
    CHECK(s.sender.args.data_addr == 0x18400);
    CHECK(s.sender.args.source_bytes == 40 * 1024);
    CHECK(s.sender.args.consume_delay == 0);
    CHECK(s.receiver.args.data_addr == 0x40000);
    CHECK(s.receiver.args.consume_delay == 500);
    CHECK(s.sender.name == "sender chip 0 core 1-1");
    CHECK(s.receiver.target.core == worker(3, 1));
    const auto x = fabric::socket_expect(s);
    CHECK(x.bytes == 40 * 1024);
    CHECK(x.pages == 20);
}

TEST_CASE("socket plan: a stream longer than the source wraps it (never at a multiple of the ring)",
          "[socket]") {
    const auto plan = line();
    SocketOptions o;
    o.page_bytes = 2048;
    o.ring_pages = 2;
    o.bytes = 1024 * 1024;
    // 161760 B below the mailbox hold 78 pages: a multiple of the ring, so 77.
    const auto s = fabric::plan_socket(plan, socs(), kernel(), worker(2, 0), worker(1, 0), o);
    CHECK(s.source_bytes() == 77 * 2048);
    CHECK(s.sender.hops == 1);
    CHECK(s.sender.args.socket.peer.route == pf::route_unicast(1));
    CHECK(fabric::socket_stream_word(s, 77 * 512) == protocol::pattern_word(0x5000, 0));
    CHECK(fabric::socket_stream_word(s, 77 * 512 + 3) == protocol::pattern_word(0x5000, 3));
    o.ring_pages = 3;  // 78 is a multiple of 3 too
    CHECK(
        fabric::plan_socket(plan, socs(), kernel(), worker(2, 0), worker(1, 0), o).source_bytes() ==
        77 * 2048);
    o.ring_pages = 5;
    CHECK(
        fabric::plan_socket(plan, socs(), kernel(), worker(2, 0), worker(1, 0), o).source_bytes() ==
        78 * 2048);
}

TEST_CASE("socket plan: 2D: a corner to the far corner of the t3k mesh", "[socket][mesh]") {
    const auto m = t3k_mesh();
    const fabric::ChipId from = m.chip_of({0, 0});
    const fabric::ChipId to = m.chip_of({0, 7});
    const auto s = fabric::plan_socket(m, socs(), kernel(), worker(from, 0), worker(to, 0));
    const auto there = m.send({0, 0}, {0, 7}, 0);
    const auto back = m.send({0, 7}, {0, 0}, 0);
    CHECK(s.sender.hops == 4);
    CHECK(s.receiver.hops == 4);
    CHECK(s.sender.args.socket.peer.route == there.route.hops);
    CHECK(s.sender.args.socket.peer.route_ext == there.route.ext);
    CHECK(s.sender.args.socket.peer.flags_word == there.route.flags_word);
    CHECK(s.sender.args.socket.peer.dst_node == there.route.dst_node);
    CHECK(s.receiver.args.socket.peer.route == back.route.hops);
    CHECK(same_channel(s.sender.args.channel, m.worker_channel(*there.router)));
    CHECK(same_channel(s.receiver.args.channel, m.worker_channel(*back.router)));
    SocketOptions o;
    o.plane = 1;
    CHECK(fabric::test::expect_error(fabric::ErrorCategory::BadInput, [&] {
              fabric::plan_socket(m, socs(), kernel(), worker(from, 0), worker(to, 0), o);
          }).find("plane 1") != std::string::npos);
}

TEST_CASE("socket plan: between meshes: the hops are every link on the way", "[socket][mesh]") {
    fabric::MeshFabricOptions mo;
    mo.topology = pf::Topology::Mesh;
    mo.planes = {0};
    const auto m =
        fabric::plan_mesh(fabric::test::mesh_graph("spec_4mesh_3x3_mesh_graph.yaml"),
                          fabric::test::cluster("spec_4mesh_3x3_cluster.yaml"), wh_soc(), mo);
    const auto s = fabric::plan_socket(m, socs(), kernel(), worker(m.chip_of({0, 0}), 0),
                                       worker(m.chip_of({3, 8}), 0));
    // M0D0 -> M0D1 -> M0D2 -> M0D5 -> mesh 1 -> ... -> M3D8 (fabricctl mesh routes).
    CHECK(s.sender.hops == m.links({0, 0}, {3, 8}, 0).size());
    CHECK(s.sender.hops == 10);
    CHECK(s.receiver.hops == m.links({3, 8}, {0, 0}, 0).size());
    // The route itself goes as MeshPlan::send has it (to the first entry node, then the tables).
    CHECK(s.sender.args.socket.peer.route == m.send({0, 0}, {3, 8}, 0).route.hops);
    CHECK(s.sender.args.socket.peer.dst_node == m.send({0, 0}, {3, 8}, 0).route.dst_node);
}

TEST_CASE("socket plan: what each end must report after a close from either side", "[socket]") {
    const auto plan = line();
    SocketOptions o;
    o.bytes = 64 * 1024;
    o.page_bytes = 1024;
    o.close_after = 10;
    o.close_from = SocketSide::Receiver;
    auto x = fabric::socket_expect(
        fabric::plan_socket(plan, socs(), kernel(), worker(0, 0), worker(1, 0), o));
    CHECK(x.bytes == 10 * 1024);
    CHECK(x.pages == 10);
    CHECK(x.sender_end == protocol::SocketEnd::ClosedByPeer);
    CHECK(x.receiver_end == protocol::SocketEnd::ClosedHere);
    o.close_from = SocketSide::Sender;
    const auto s = fabric::plan_socket(plan, socs(), kernel(), worker(0, 0), worker(1, 0), o);
    CHECK(s.sender.args.close_after_pages == 10);
    CHECK(s.receiver.args.close_after_pages == 0);
    x = fabric::socket_expect(s);
    CHECK(x.sender_end == protocol::SocketEnd::ClosedHere);
    CHECK(x.receiver_end == protocol::SocketEnd::ClosedByPeer);
    CHECK(fabric::parse_socket_side("receiver") == SocketSide::Receiver);
    CHECK(fabric::parse_socket_side("both") == std::nullopt);
    CHECK(fabric::socket_side_name(SocketSide::Sender) == "sender");
}

TEST_CASE("socket plan: every bad input refused with its message", "[socket]") {
    SocketOptions o;
    CHECK(refused(o, worker(0, 0), worker(0, 0)) ==
          "socket: sender and receiver are the same core (chip 0 core 1-1)");
    CHECK(refused(o, worker(0, 0), worker(0, 1)) ==
          "socket: sender and receiver are both on chip 0: a socket crosses the fabric between "
          "two chips");
    CHECK(refused(o, {0, CoreCoord{0, 0}}, worker(3, 1)) ==
          "socket: the sender core 0-0 of chip 0 is not a worker core");
    CHECK(refused(o, worker(0, 0), {3, CoreCoord{9, 0}}) ==
          "socket: the receiver core 9-0 of chip 3 is not a worker core");
    CHECK(refused(o, worker(0, 0), worker(5, 0)) == "socket: chip 5 is not in the fabric");
    o.page_bytes = 1000;
    CHECK(refused(o) == "socket: page size 1000 is not a positive multiple of 16");
    o.page_bytes = 0;
    CHECK(refused(o) == "socket: page size 0 is not a positive multiple of 16");
    o = {};
    o.bytes = 100;
    CHECK(refused(o) == "socket: stream size 100 is not a positive multiple of 16");
    o.bytes = 0x80000000u;
    CHECK(refused(o) ==
          "socket: stream size 2147483648 B: a close word carries at most 2147483647 B");
    o = {};
    o.ring_pages = 0;
    CHECK(refused(o) == "socket: the ring needs at least 1 page");
    o.ring_pages = 80;
    CHECK(refused(o) ==
          "socket: the ring of 80 pages of 2048 B does not fit the receiver's 161760 B below its "
          "mailbox");
    o = {};
    o.bytes = 1236992 + 16;
    CHECK(refused(o) ==
          "socket: the receiver's output of 1237008 B from 0x40000 passes the end of its L1 "
          "(1499136 B, chip 3 core 2-1)");
    o = {};
    o.bytes = 8 * 2048;
    o.close_after = 8;
    CHECK(refused(o) ==
          "socket: close after 8 pages: the stream has only 8 pages of 2048 B, so it ends first");
}

namespace {

// What a socket_stream end reports when it did everything `x` says.
fabric::SocketEndOutcome clean_end(protocol::SocketEnd end, uint32_t bytes, uint32_t pages) {
    fabric::SocketEndOutcome o;
    o.launch.outcome = fabric::LaunchOutcome::Exited;
    o.status = static_cast<uint32_t>(protocol::TestStatus::Done);
    o.results.end = static_cast<uint32_t>(end);
    o.results.pages = pages;
    o.results.bytes_sent = bytes;
    o.results.bytes_acked = bytes;
    o.results.bytes_received = bytes;
    o.results.bytes_consumed = bytes;
    return o;
}

}  // namespace

TEST_CASE("socket plan: the problems of a run, one line each", "[socket]") {
    const auto plan = line();
    SocketOptions o;
    o.bytes = 40 * 1024;
    o.page_bytes = 2048;
    o.ring_pages = 4;
    const auto s = fabric::plan_socket(plan, socs(), kernel(), worker(0, 0), worker(3, 1), o);
    fabric::SocketRun run;
    run.sender = clean_end(protocol::SocketEnd::Complete, 40 * 1024, 20);
    run.receiver = clean_end(protocol::SocketEnd::Complete, 40 * 1024, 20);
    CHECK(fabric::socket_problems(s, run).empty());

    auto bad = run;
    bad.receiver.results.bytes_consumed = 1024;
    bad.sender.results.end = static_cast<uint32_t>(protocol::SocketEnd::ClosedByPeer);
    CHECK(fabric::socket_problems(s, bad) ==
          std::vector<std::string>{
              "receiver chip 3 core 2-1: bytes consumed 1024, expected 40960",
              "sender chip 0 core 1-1: ended closed by its peer, expected complete"});

    bad = run;
    bad.receiver.status = protocol::test_status_failed(protocol::TestFail::Stuck);
    bad.receiver.stuck_at = protocol::kSocketStuckStream;
    bad.receiver.results.socket_status = static_cast<uint32_t>(protocol::SocketStatus::DataTimeout);
    bad.receiver.results.last_hal_status = static_cast<uint32_t>(hal::Status::Timeout);
    CHECK(fabric::socket_problems(s, bad) ==
          std::vector<std::string>{
              "receiver chip 3 core 2-1: exited with status 0xfa11ed06, stuck_at 0x902, socket "
              "status data_timeout, hal status timeout"});

    // The receiver closes after 5 pages: the sender may be a ring (4 pages) past them, no more.
    o.close_after = 5;
    o.close_from = SocketSide::Receiver;
    const auto c = fabric::plan_socket(plan, socs(), kernel(), worker(0, 0), worker(3, 1), o);
    fabric::SocketRun closed;
    closed.sender = clean_end(protocol::SocketEnd::ClosedByPeer, 5 * 2048, 9);
    closed.sender.results.bytes_sent = 9 * 2048;
    closed.receiver = clean_end(protocol::SocketEnd::ClosedHere, 5 * 2048, 5);
    CHECK(fabric::socket_problems(c, closed).empty());
    closed.sender.results.bytes_sent = 10 * 2048;
    CHECK(
        fabric::socket_problems(c, closed) ==
        std::vector<std::string>{"sender chip 0 core 1-1: sent 20480 B, expected 10240 to 18432"});
    CHECK(fabric::socket_status_name(1) == "peer_closed");
    CHECK(fabric::socket_status_name(9) == "unknown(9)");
    CHECK(fabric::socket_end_name(1) == "closed here");
}
