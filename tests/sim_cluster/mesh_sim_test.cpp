// The 2D fabric end to end in the model: plan_mesh + FabricRunner + fabric_router_2d.elf on the
// chips of a cluster, fabric_traffic workers sending through them. Every byte that lands is
// checked against its pattern, every router's counters after termination, every status word.
//
//   - all-to-all unicast on a t3k 2x4 mesh and on a 4x4 mesh (X then Y: every turn the routing
//     makes, in both directions of both dimensions)
//   - 2D multicast (a trunk along a row, branches up and down the columns)
//   - a 4x4 torus at full load with wraparound routes (datelines in both dimensions)
//   - inter-mesh all-to-all across the spec's 4-mesh cluster: mesh 0 <-> mesh 3 (no direct link),
//     demand around the cycle of meshes, each router's VC0/VC1 packets exactly as planned
//   - routing planes: traffic on plane 0 never touches a plane-1 router
//   - bad 2D headers and a bad mesh config: refused, counted, named
// Skipped (with a warning) until the firmware sub-build made the ELFs.
#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "cluster.h"
#include "descriptors.h"
#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_runner.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "fabric/sim_device.h"
#include "fabric/traffic_account.h"
#include "hal/stream.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"
#include "scrambled_cluster.h"

using Catch::Matchers::Contains;
using fabric::MeshDir;
using fabric::MeshNode;
namespace pf = protocol::fabric;

namespace {

const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kFwDir = FABRIC_FIRMWARE_DIR;
constexpr auto kArch = hal::Arch::WormholeB0;

std::optional<fabric::ElfImage> firmware(const std::string& name, hal::Arch arch = kArch) {
    const std::string path =
        kFwDir + "/" + std::string(fabric::arch_name(arch)) + "/" + name + ".elf";
    if (!std::filesystem::exists(path)) return std::nullopt;
    return fabric::ElfImage::load_file(path);
}

#define REQUIRE_FIRMWARE()                                                                     \
    const auto router = firmware("fabric_router_2d");                                          \
    const auto traffic = firmware("fabric_traffic");                                           \
    if (!router || !traffic) {                                                                 \
        WARN("skipped: fabric_router_2d.elf / fabric_traffic.elf not built (build firmware)"); \
        return;                                                                                \
    }

using fabric::test::bh_soc;
using fabric::test::wh_soc;

// A cluster in the model with the mesh plan of a graph over it, the runner not yet started.
struct Mesh {
    fabric::ClusterDescriptor cluster;
    fabric::MeshPlan plan;
    fabric::SimDevice dev;
    fabric::FabricRunner runner;

    Mesh(const std::string& graph_file, const std::string& cluster_file,
         const fabric::MeshFabricOptions& o, const fabric::ElfImage& router,
         const fabric::SocDescriptor& soc = wh_soc())
        : cluster(fabric::ClusterDescriptor::load_file(kSocDir + "/" + cluster_file)),
          plan(fabric::plan_mesh(fabric::MeshGraph::load_file(kSocDir + "/" + graph_file), cluster,
                                 soc, o)),
          dev(soc, soc.arch(), fabric::SimDeviceOptions{cluster, std::nullopt}),
          runner(dev, plan.fabric, router) {}
    Mesh(const fabric::MeshGraph& graph, fabric::ClusterDescriptor c,
         const fabric::MeshFabricOptions& o, const fabric::ElfImage& router,
         const fabric::SocDescriptor& soc = wh_soc())
        : cluster(std::move(c)),
          plan(fabric::plan_mesh(graph, cluster, soc, o)),
          dev(soc, soc.arch(), fabric::SimDeviceOptions{cluster, std::nullopt}),
          runner(dev, plan.fabric, router) {}
};

fabric::MeshFabricOptions options(pf::Topology t = pf::Topology::Mesh,
                                  std::vector<uint32_t> planes = {0}) {
    fabric::MeshFabricOptions o;
    o.topology = t;
    o.planes = std::move(planes);
    return o;
}

using Flow = fabric::MeshFlow;
using Traffic = fabric::MeshTraffic;
constexpr uint32_t kSinkCoreIndex = fabric::kMeshSinkCoreIndex;

// The traffic of one run (fabric/mesh_traffic.h): `packets` unicast writes of `bytes` per flow.
Traffic plan_traffic(const fabric::MeshPlan& plan, const fabric::ElfImage& image,
                     std::vector<Flow> flows, uint32_t packets, uint32_t bytes,
                     const fabric::SocDescriptor& soc = wh_soc()) {
    fabric::MeshTrafficOptions o;
    o.packets = packets;
    o.packet_bytes = bytes;
    return fabric::plan_mesh_traffic(plan, soc, image, std::move(flows), o);
}

// Run the workers to the end; every one must exit having sent everything. The regions are
// zeroed first, so nothing stale can pass the check.
void run(Mesh& m, const Traffic& t, uint64_t max_cycles = 60'000'000) {
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = max_cycles;
    const auto res = fabric::run_mesh_traffic(m.runner, t, lo);
    REQUIRE(res.workers.size() == t.workers.size());
    for (size_t i = 0; i < res.workers.size(); ++i) {
        const auto& w = t.workers[i];
        const auto& o = res.workers[i];
        INFO("worker chip " << w.target.core.chip << " core " << w.target.core.core.str());
        REQUIRE(o.launch.outcome == fabric::LaunchOutcome::Exited);
        INFO("status 0x" << std::hex << o.status << " stuck_at 0x" << o.stuck_at << std::dec);
        CHECK(o.status == static_cast<uint32_t>(protocol::TestStatus::Done));
        CHECK(o.results.packets_sent == w.args.packet_count);
    }
}

// Every flow's region on its destination holds its last `slots` packets, byte for byte.
void check_landed(Mesh& m, const Traffic& t) {
    const auto bad = fabric::check_mesh_landed(m.dev, t);
    REQUIRE(bad.size() == t.flows.size());
    for (size_t k = 0; k < bad.size(); ++k) {
        const Flow& f = t.flows[k];
        INFO(f.src.str() << " -> " << f.dst.str() << " plane " << f.plane);
        CHECK(bad[k] == 0);
    }
}

// Graceful termination; every router Terminated with nothing left, nothing refused, and the
// packets sent on every link taken at its other end.
std::vector<fabric::RouterSnapshot> terminate_clean(Mesh& m) {
    const auto fin = m.runner.terminate(pf::Termination::Graceful, 5'000'000);
    std::map<std::pair<fabric::ChipId, uint32_t>, const fabric::RouterSnapshot*> by_port;
    for (const auto& s : fin) by_port[{s.chip, s.eth_channel}] = &s;
    for (size_t i = 0; i < fin.size(); ++i) {
        const auto& s = fin[i];
        const auto& r = m.plan.fabric.routers[i];
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
        CHECK(s.block.undrained == 0);
        CHECK(s.block.bad_packets == 0);
        for (uint32_t c = 0; c < pf::kMaxSenderChannels; ++c)
            CHECK(s.block.sent[c] == s.block.completed[c]);
        const auto* peer = by_port.at({r.config.peer_chip_id, r.config.peer_eth_channel});
        CHECK(s.sent() == peer->received());
    }
    // No NoC request went anywhere the model has nothing (or refused it).
    for (fabric::ChipId c = 0; c < m.dev.chip_count(); ++c) {
        INFO("chip " << c);
        CHECK(m.dev.cluster().chip(c).network().errors().empty());
    }
    return fin;
}

std::vector<MeshNode> nodes(const fabric::MeshPlan& p) {
    std::vector<MeshNode> out;
    for (const auto& m : p.tables.graph().meshes()) {
        for (uint32_t d = 0; d < m.device_count(); ++d) out.push_back({m.id, d});
    }
    return out;
}

std::vector<Flow> all_to_all(const fabric::MeshPlan& p, uint32_t plane = 0) {
    std::vector<Flow> flows;
    for (const MeshNode& a : nodes(p)) {
        for (const MeshNode& b : nodes(p)) {
            if (a.mesh == b.mesh && !(a == b)) flows.push_back({a, b, plane});
        }
    }
    return flows;
}

// Every router sent exactly as many packets on VC0 (ch0..ch4) and on VC1 (ch5..ch8) as
// MeshPlan::links says `packets` per flow cross it on each. Returns the VC1 total.
uint64_t check_vcs(const Mesh& m, const std::vector<Flow>& flows, uint32_t packets,
                   const std::vector<fabric::RouterSnapshot>& fin) {
    std::map<const fabric::RouterPlacement*, std::array<uint64_t, 2>> expect;
    for (const Flow& f : flows) {
        for (const fabric::MeshHop& h : m.plan.links(f.src, f.dst, f.plane))
            expect[h.router][h.vc] += packets;
    }
    uint64_t vc1_total = 0;
    for (size_t i = 0; i < fin.size(); ++i) {
        const fabric::RouterPlacement& r = m.plan.fabric.routers[i];
        INFO(r.mesh->port().str());
        std::array<uint64_t, 2> sent{};
        for (uint32_t c = 0; c < pf::kMaxSenderChannels; ++c)
            sent[c >= pf::kMeshVc1Channel0 ? 1 : 0] += fin[i].block.sent[c];
        CHECK(sent[0] == expect[&r][0]);
        CHECK(sent[1] == expect[&r][1]);
        vc1_total += sent[1];
    }
    return vc1_total;
}

uint64_t delivered(const std::vector<fabric::RouterSnapshot>& snaps) {
    uint64_t n = 0;
    for (const auto& s : snaps) n += s.block.delivered;
    return n;
}

// The host plays a worker: a header (and `payload` bytes of 0xEE) in ch0 slot `slot` of router
// `r`, then +1 on its pushed stream.
void push_raw(Mesh& m, const fabric::RouterPlacement& r, uint32_t slot, const pf::PacketHeader& h) {
    std::vector<uint8_t> bytes(sizeof h + h.payload_bytes, 0xEE);
    std::memcpy(bytes.data(), &h, sizeof h);
    m.dev.write(r.core, r.layout.sender_base[0] + slot * r.layout.slot_bytes, bytes);
    m.dev.write32(
        r.core,
        hal::stream::reg_addr(pf::kStreamPushed0,
                              hal::kWormholeB0.stream.remote_dest_buf_space_available_update),
        hal::stream::encode_words_free_delta(1));
}

}  // namespace

TEST_CASE("mesh (sim): all-to-all unicast on a t3k 2x4 mesh", "[mesh][sim]") {
    REQUIRE_FIRMWARE();
    Mesh m("t3k_mesh_graph.yaml", "t3k_cluster.yaml", options(), *router);
    m.runner.bring_up(5'000'000);
    // 2x4, plane 0: 10 edges, a router at each end.
    CHECK(m.plan.fabric.routers.size() == 20);
    const Traffic t = plan_traffic(m.plan, *traffic, all_to_all(m.plan), 12, 1024);
    run(m, t);
    m.runner.monitor(300'000);
    check_landed(m, t);
    const auto fin = terminate_clean(m);
    uint64_t delivered = 0;
    for (const auto& s : fin) delivered += s.block.delivered;
    CHECK(delivered == 56 * 12);
}

// The account of a run (fabric/traffic_account.h) from the workers' outcomes, the sinks'
// counters and the drops the routers reported while the runner collected their events.
fabric::TrafficAccount account_of(Mesh& m, const Traffic& t, const fabric::MeshTrafficRun& res,
                                  const fabric::DropLog& drops) {
    const auto delivered = fabric::read_mesh_delivered(m.dev, t);
    return fabric::account_traffic(fabric::mesh_flow_tallies(t, res.workers, delivered), drops);
}

// Bring the fabric up, the routers' dropped packets going into `drops` from then on.
void bring_up_keeping_drops(Mesh& m, fabric::DropLog& drops) {
    m.runner.on_events([&](auto records) { drops.add(records, m.plan.fabric); });
    m.runner.bring_up(5'000'000);
}

TEST_CASE("mesh (sim): the account of a run that went well: sent == delivered for every flow",
          "[mesh][sim][account]") {
    REQUIRE_FIRMWARE();
    Mesh m("t3k_mesh_graph.yaml", "t3k_cluster.yaml", options(), *router);
    fabric::DropLog drops;
    bring_up_keeping_drops(m, drops);
    fabric::MeshTrafficOptions o;
    o.packets = 5;
    o.packet_bytes = 512;
    o.count_deliveries = true;
    o.first_flow_id = 100;
    const Traffic t = fabric::plan_mesh_traffic(m.plan, wh_soc(), *traffic, all_to_all(m.plan), o);
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 60'000'000;
    const auto res = fabric::run_mesh_traffic(m.runner, t, lo);
    REQUIRE(res.passed(t));
    (void)terminate_clean(m);
    check_landed(m, t);
    const auto a = account_of(m, t, res, drops);
    REQUIRE(a.flows.size() == 56);
    for (size_t k = 0; k < a.flows.size(); ++k) {
        INFO(a.flows[k].tally.name);
        CHECK(a.flows[k].tally.id == 100 + k);
        CHECK(a.flows[k].tally.sent == 5);
        CHECK(a.flows[k].tally.delivered == 5);
    }
    CHECK(a.all_delivered());
    CHECK(
        fabric::account_table(a) ==
        std::vector<std::string>{"account: 56 flows, 280 sent, 280 delivered, 0 dropped, 0 lost"});
}

TEST_CASE("mesh (sim): packets a router drops are named in the account by flow, reason and router",
          "[mesh][sim][account]") {
    REQUIRE_FIRMWARE();
    Mesh m("t3k_mesh_graph.yaml", "t3k_cluster.yaml", options(), *router);
    fabric::DropLog drops;
    bring_up_keeping_drops(m, drops);
    fabric::MeshTrafficOptions o;
    o.packets = 6;
    o.packet_bytes = 256;
    o.count_deliveries = true;
    // M0D0 sends to M0D1 and M0D2 through its E router (one worker, two flows); M0D1 to M0D0.
    Traffic t = fabric::plan_mesh_traffic(
        m.plan, wh_soc(), *traffic, {{{0, 0}, {0, 1}, 0}, {{0, 0}, {0, 2}, 0}, {{0, 1}, {0, 0}, 0}},
        o);
    REQUIRE(t.workers[0].flows == std::vector<size_t>{0, 1});
    t.workers[0].dests[1].route = 0;  // no hop command: M0D1's W router drops every packet
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 20'000'000;
    const auto res = fabric::run_mesh_traffic(m.runner, t, lo);
    REQUIRE(res.passed(t));  // the worker pushed them all: the drops are the router's
    (void)m.runner.terminate(pf::Termination::Graceful, 5'000'000);
    const auto a = account_of(m, t, res, drops);
    const fabric::RouterPlacement& rx = m.plan.router({0, 1}, MeshDir::W, 0);
    CHECK(rx.chip == 1);
    CHECK(rx.eth_channel == 4);
    REQUIRE(a.flows.size() == 3);
    CHECK(a.flows[0].all_delivered());
    CHECK(a.flows[2].all_delivered());
    const fabric::FlowAccount& bad = a.flows[1];
    CHECK(bad.tally.sent == 6);
    CHECK(bad.tally.delivered == 0);
    CHECK(bad.dropped == 6);
    CHECK(bad.lost == 0);
    REQUIRE(bad.drops.size() == 1);
    CHECK(bad.drops[0].chip == rx.chip);
    CHECK(bad.drops[0].eth_channel == rx.eth_channel);
    CHECK(bad.drops[0].reason == static_cast<uint32_t>(pf::BadPacket::Route));
    CHECK(bad.drops[0].packets == std::vector<uint32_t>{0, 1, 2, 3, 4, 5});
    CHECK(a.accounted());
    CHECK(!a.all_delivered());
    CHECK(fabric::account_table(a) ==
          std::vector<std::string>{
              "flow                     sent delivered dropped   lost duplicated  drops",
              "M0D0 -> M0D2 plane 0        6         0       6      0          0  route at chip 1 "
              "eth 4: 6 packets (0, 1, 2, 3, 4, 5)",
              "account: 3 flows, 18 sent, 12 delivered, 6 dropped, 0 lost"});
}

// The property of the topology mapping that matters: whatever ids and channel numbers a cluster's
// chips and links have, the fabric comes up on the mapping and every byte lands.
TEST_CASE("mesh (sim): clusters with renamed chip ids and channels carry all-to-all traffic",
          "[mesh][sim]") {
    struct Case {
        const char* graph;
        const char* cluster;
        hal::Arch arch;
        uint32_t seed;
    };
    std::vector<Case> cases;
    for (uint32_t seed = 1; seed <= fabric::test::property_seeds(2); ++seed) {
        cases.push_back({"t3k_mesh_graph.yaml", "t3k_cluster.yaml", kArch, seed});
    }
    cases.push_back({"bh_2x2_mesh_graph.yaml", "bh_2x2_cluster.yaml", hal::Arch::Blackhole, 3});
    for (const Case& c : cases) {
        INFO(c.cluster << " renamed with seed " << c.seed);
        const auto router = firmware("fabric_router_2d", c.arch);
        const auto traffic = firmware("fabric_traffic", c.arch);
        REQUIRE(router);
        REQUIRE(traffic);
        const auto& soc = c.arch == kArch ? wh_soc() : bh_soc();
        const auto s = fabric::test::scramble(fabric::test::cluster(c.cluster), c.seed);
        Mesh m(fabric::test::mesh_graph(c.graph),
               fabric::ClusterDescriptor::parse(s.yaml, "renamed.yaml"), options(), *router, soc);
        m.runner.bring_up(5'000'000);
        const Traffic t = plan_traffic(m.plan, *traffic, all_to_all(m.plan), 4, 512, soc);
        run(m, t);
        m.runner.monitor(300'000);  // the last packets land
        check_landed(m, t);
        const auto fin = terminate_clean(m);
        CHECK(delivered(fin) == t.flows.size() * 4);
    }
}

TEST_CASE("mesh (sim): all-to-all unicast on a Blackhole 2x2 mesh (the compact 2D image)",
          "[mesh][sim]") {
    const auto router = firmware("fabric_router_2d", hal::Arch::Blackhole);
    const auto traffic = firmware("fabric_traffic", hal::Arch::Blackhole);
    if (!router || !traffic) {
        WARN("skipped: the Blackhole firmware is not built");
        return;
    }
    Mesh m("bh_2x2_mesh_graph.yaml", "bh_2x2_cluster.yaml", options(), *router, bh_soc());
    m.runner.bring_up(5'000'000);
    CHECK(m.plan.fabric.routers.size() == 8);
    const Traffic t = plan_traffic(m.plan, *traffic, all_to_all(m.plan), 8, 2048, bh_soc());
    run(m, t);
    m.runner.monitor(300'000);
    check_landed(m, t);
    const auto fin = terminate_clean(m);
    CHECK(delivered(fin) == 12 * 8);
}

TEST_CASE("mesh (sim): all-to-all unicast on a 4x4 mesh, every turn X then Y", "[mesh][sim]") {
    REQUIRE_FIRMWARE();
    Mesh m("mesh_4x4_mesh_graph.yaml", "mesh_4x4_cluster.yaml", options(), *router);
    m.runner.bring_up(5'000'000);
    CHECK(m.plan.fabric.routers.size() == 48);  // 24 edges
    const Traffic t = plan_traffic(m.plan, *traffic, all_to_all(m.plan), 6, 512);
    CHECK(t.workers.size() ==
          48);  // every router's ch0 has a worker: 4x4 all-to-all uses every direction
    run(m, t);
    m.runner.monitor(300'000);
    check_landed(m, t);
    const auto fin = terminate_clean(m);
    CHECK(delivered(fin) == 240 * 6);
    // Turns: a router that faces N or S forwarded packets that came in from E or W. Each chip
    // not in the top row takes N-bound turns (those from other columns): some N-facing router
    // must have sent packets that it got from its E/W neighbours (channels 1 + E, 1 + W).
    uint64_t turned = 0;
    for (size_t i = 0; i < fin.size(); ++i) {
        const auto dir = m.plan.fabric.routers[i].mesh->dir;
        if (dir == MeshDir::N || dir == MeshDir::S) {
            turned += fin[i].block.sent[1 + static_cast<uint32_t>(MeshDir::E)] +
                      fin[i].block.sent[1 + static_cast<uint32_t>(MeshDir::W)];
        }
        // X then Y: an E/W router never takes a packet from an N/S one.
        if (dir == MeshDir::E || dir == MeshDir::W) {
            CHECK(fin[i].block.sent[1 + static_cast<uint32_t>(MeshDir::N)] == 0);
            CHECK(fin[i].block.sent[1 + static_cast<uint32_t>(MeshDir::S)] == 0);
        }
    }
    // Flows that turn: source and destination in different rows and columns: 16 * 9 of them,
    // each turning once.
    CHECK(turned == 16 * 9 * 6);
}

TEST_CASE("mesh (sim): 2D multicast, a trunk along a row with branches up and down",
          "[mesh][sim]") {
    REQUIRE_FIRMWARE();
    Mesh m("mesh_4x4_mesh_graph.yaml", "mesh_4x4_cluster.yaml", options(), *router);
    m.runner.bring_up(5'000'000);
    // From M0D4 (row 1, column 0) east over columns 1..3, each trunk chip branching 1 chip north
    // and 2 south: the 12 chips of columns 1..3 receive, column 0 does not.
    const MeshNode src{0, 4};
    Traffic t = plan_traffic(m.plan, *traffic, {{src, {0, 5}, 0}}, 8, 1024);
    REQUIRE(t.workers.size() == 1);
    const pf::Route mc =
        pf::mesh_route_multicast(static_cast<uint32_t>(pf::MeshDirection::E), 3, 1, 2);
    auto& d = t.workers[0].dests[0];
    d.route = mc.hops;
    d.route_ext = mc.ext;
    d.flags_word = mc.flags_word;
    // Every chip's sink region zeroed (also those that must stay empty).
    const auto& cores = wh_soc().cores(fabric::CoreType::Worker);
    const std::vector<uint8_t> zeros(t.region_bytes(), 0);
    for (fabric::ChipId c = 0; c < 16; ++c) m.dev.write({c, cores[kSinkCoreIndex]}, d.addr, zeros);
    run(m, t);
    m.runner.monitor(300'000);
    for (uint32_t dev = 0; dev < 16; ++dev) {
        std::vector<uint8_t> got(zeros.size());
        m.dev.read({m.plan.chip_of({0, dev}), cores[kSinkCoreIndex]}, d.addr, got);
        INFO("device " << dev);
        if (dev % 4 == 0) {
            CHECK(got == zeros);
        } else {
            CHECK(fabric::check_pattern(got, t.packet_bytes, t.slots, d.seed).bad_words == 0);
        }
    }
    const auto fin = terminate_clean(m);
    CHECK(delivered(fin) == 12 * 8);
}

TEST_CASE("mesh (sim): a 4x4 torus at full load over the wrap links, no deadlock", "[mesh][sim]") {
    REQUIRE_FIRMWARE();
    auto o = options(pf::Topology::Torus);
    o.sender_slots = 2;  // few slots: buffers fill, so a cycle of waits would show
    o.receiver_slots = 4;
    Mesh m("mesh_4x4_mesh_graph.yaml", "torus_4x4_cluster.yaml", o, *router);
    m.runner.bring_up(5'000'000);
    CHECK(m.plan.fabric.routers.size() == 64);
    const Traffic t = plan_traffic(m.plan, *traffic, all_to_all(m.plan), 40, 256);
    run(m, t, 200'000'000);
    m.runner.monitor(300'000);
    check_landed(m, t);
    const auto fin = terminate_clean(m);
    CHECK(delivered(fin) == 240 * 40);
    // Traffic crossed the datelines: every router sent exactly what the plan's links say on VC0
    // and on VC1 (straight on past a dateline, ch5 + F into rx1).
    CHECK(check_vcs(m, t.flows, 40, fin) > 0);
    uint64_t wrapped = 0;
    for (size_t i = 0; i < fin.size(); ++i) {
        if (m.plan.fabric.routers[i].config.dateline != 0) wrapped += fin[i].sent();
    }
    CHECK(wrapped > 0);
}

TEST_CASE("mesh (sim): inter-mesh all-to-all across the spec's 4-mesh cluster, VC1 once entered",
          "[mesh][sim]") {
    REQUIRE_FIRMWARE();
    Mesh m("spec_4mesh_3x3_mesh_graph.yaml", "spec_4mesh_3x3_cluster.yaml", options(), *router);
    m.runner.bring_up(10'000'000);
    // Every device to every other of all four meshes: mesh 0 <-> mesh 3 (no direct link: through
    // another mesh) and demand around the cycle of meshes at once. On VC0 alone this deadlocks
    // (the mesh's own traffic to the next mesh waits behind traffic that entered it, all the way
    // round); traffic that entered a mesh travels on VC1 (firmware/router/README.md, "2D").
    std::vector<Flow> flows;
    std::vector<std::pair<MeshNode, MeshNode>> pairs;
    for (const MeshNode& a : nodes(m.plan)) {
        for (const MeshNode& b : nodes(m.plan)) {
            if (a == b) continue;
            flows.push_back({a, b, 0});
            pairs.push_back({a, b});
        }
    }
    REQUIRE(flows.size() == 36 * 35);
    REQUIRE_FALSE(m.plan.wait_cycle(pairs, 0).has_value());
    // A kernel sends through one router with at most 16 flows: rounds, each to a sink core of its
    // own (every round's bytes checked at the end).
    constexpr uint32_t kPackets = 2;
    const auto rounds = fabric::mesh_traffic_rounds(m.plan, flows);
    REQUIRE(rounds.size() == 3);
    std::vector<Traffic> ts;
    for (size_t i = 0; i < rounds.size(); ++i) {
        fabric::MeshTrafficOptions o;
        o.packets = kPackets;
        o.packet_bytes = 1024;
        o.sink_core_index = kSinkCoreIndex + static_cast<uint32_t>(i);
        ts.push_back(fabric::plan_mesh_traffic(m.plan, wh_soc(), *traffic, rounds[i], o));
        run(m, ts.back(), 200'000'000);
    }
    m.runner.monitor(500'000);
    for (const Traffic& t : ts) check_landed(m, t);
    const auto fin = terminate_clean(m);
    CHECK(delivered(fin) == flows.size() * kPackets);
    // Every router sent exactly what the plan's links say on each VC: VC0 (ch0..ch4) for a
    // packet in its source mesh, VC1 (ch5..ch8) from the first entry router on.
    CHECK(check_vcs(m, flows, kPackets, fin) > 0);
}

TEST_CASE("mesh (sim): routing planes are isolated", "[mesh][sim]") {
    REQUIRE_FIRMWARE();
    Mesh m("t3k_mesh_graph.yaml", "t3k_cluster.yaml", options(pf::Topology::Mesh, {0, 1}), *router);
    m.runner.bring_up(5'000'000);
    CHECK(m.plan.fabric.routers.size() == 40);
    for (const uint32_t plane : {0u, 1u}) {
        INFO("traffic on plane " << plane);
        const auto before = m.runner.status();
        const Traffic t = plan_traffic(m.plan, *traffic, all_to_all(m.plan, plane), 4, 512);
        run(m, t);
        m.runner.monitor(300'000);
        check_landed(m, t);
        const auto after = m.runner.status();
        uint64_t moved = 0;
        for (size_t i = 0; i < after.size(); ++i) {
            const uint64_t sent = after[i].sent() - before[i].sent();
            const uint64_t received = after[i].received() - before[i].received();
            if (m.plan.fabric.routers[i].mesh->plane == plane) {
                moved += sent;
            } else {
                INFO(after[i].describe());
                CHECK(sent == 0);
                CHECK(received == 0);
            }
        }
        CHECK(moved > 0);
    }
    terminate_clean(m);
}

TEST_CASE("mesh (sim): bad 2D headers are refused, counted and their credits returned",
          "[mesh][sim]") {
    REQUIRE_FIRMWARE();
    // The 2x4 t3k mesh; the host writes packets into M0D0's E router (to M0D1's W router).
    Mesh m("t3k_mesh_graph.yaml", "t3k_cluster.yaml", options(), *router);
    m.runner.bring_up(5'000'000);
    const auto& tx = m.plan.router({0, 0}, MeshDir::E, 0);
    const auto& rx = m.plan.router({0, 1}, MeshDir::W, 0);
    size_t rx_index = 0;
    while (&m.plan.fabric.routers[rx_index] != &rx) ++rx_index;
    const auto& cores = wh_soc().cores(fabric::CoreType::Worker);
    pf::PacketHeader h{};
    h.magic = pf::kHeaderMagic;
    h.ttl = pf::kDefaultTtl;
    h.payload_bytes = 64;
    h.send_type = static_cast<uint8_t>(pf::NocSendType::UnicastWrite);
    h.cmd.write.dst = {fabric::mesh_sink_base(kArch), static_cast<uint8_t>(cores[kSinkCoreIndex].x),
                       static_cast<uint8_t>(cores[kSinkCoreIndex].y), 0};
    struct Case {
        const char* what;
        uint32_t route, route_ext, dst_node, ttl;
        const char* detail;
    };
    const uint32_t N = pf::dir_bit(0), E = pf::dir_bit(1), T = pf::kDefaultTtl;
    const Case cases[] = {
        {"no hop command", 0, 0, 0, T, "bad_packet:route"},
        {"forward north from the top row", N | E << 4, 0, 0, T, "bad_packet:no_downstream"},
        {"forward with nothing left to do", E, 0, 0, T, "bad_packet:route"},
        {"time to live used up (before the route is read)", 0, 0, 0, 1, "bad_packet:ttl_expired"},
    };
    uint32_t slot = 0;
    for (const Case& c : cases) {
        INFO(c.what);
        pf::PacketHeader b = h;
        b.route = c.route;
        b.route_ext = c.route_ext;
        b.ttl = static_cast<uint8_t>(c.ttl);
        push_raw(m, tx, slot, b);
        slot = (slot + 1) % tx.config.sender_slots[0];
        m.runner.monitor(50'000);
        const auto st = m.runner.status()[rx_index];
        CHECK(st.detail_name() == c.detail);
    }
    const auto st = m.runner.status();
    CHECK(st[rx_index].block.bad_packets == std::size(cases));
    CHECK(st[rx_index].block.delivered == 0);
    // As a worker closing after them would: the next opener continues after our packets.
    m.dev.write32(tx.core, tx.layout.connection + offsetof(pf::WorkerConnectionInfo, pushed),
                  static_cast<uint32_t>(std::size(cases)));
    {
        // A Y -> X turn: M0D0 sends south, M0D4's N router is told to go east (X after Y breaks
        // dimension order, and M0D4 has no port out of the mesh).
        const auto& down = m.plan.router({0, 0}, MeshDir::S, 0);
        const auto& below = m.plan.router({0, 4}, MeshDir::N, 0);
        size_t below_index = 0;
        while (&m.plan.fabric.routers[below_index] != &below) ++below_index;
        pf::PacketHeader b = h;
        b.route = E | pf::dir_bit(3) << 4;  // E, then the W router of M0D5 writes
        push_raw(m, down, 0, b);
        m.runner.monitor(50'000);
        const auto turned = m.runner.status()[below_index];
        CHECK(turned.detail_name() == "bad_packet:turn");
        CHECK(turned.block.bad_packets == 1);
        CHECK(turned.block.forwarded == 0);
        m.dev.write32(down.core,
                      down.layout.connection + offsetof(pf::WorkerConnectionInfo, pushed), 1);
    }
    // The fabric still works: a good packet after them lands.
    const Traffic t = plan_traffic(m.plan, *traffic, {{{0, 0}, {0, 1}, 0}}, 4, 256);
    run(m, t);
    m.runner.monitor(100'000);
    check_landed(m, t);
    const auto fin = m.runner.terminate(pf::Termination::Graceful, 5'000'000);
    for (const auto& s : fin) {
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
        CHECK(s.block.undrained == 0);
        for (uint32_t c = 0; c < pf::kMaxSenderChannels; ++c)
            CHECK(s.block.sent[c] == s.block.completed[c]);
    }
}

TEST_CASE(
    "mesh (sim): a bad mesh config is refused with the reason, and a 1D config on the 2D image too",
    "[mesh][sim]") {
    REQUIRE_FIRMWARE();
    auto graph = fabric::MeshGraph::load_file(kSocDir + "/t3k_mesh_graph.yaml");
    auto cluster = fabric::ClusterDescriptor::load_file(kSocDir + "/t3k_cluster.yaml");
    for (const bool line : {false, true}) {
        INFO((line ? "line topology" : "bad mesh config magic"));
        auto plan = fabric::plan_mesh(graph, cluster, wh_soc(), options());
        auto& r = plan.fabric.routers[0];
        if (line) {
            r.config.topology = static_cast<uint32_t>(pf::Topology::Line);
        } else {
            r.mesh->config.magic = 0x1234;
        }
        fabric::SimDevice dev(wh_soc(), kArch, fabric::SimDeviceOptions{cluster, std::nullopt});
        fabric::FabricRunner runner(dev, plan.fabric, *router);
        const auto msg = fabric::test::expect_error(fabric::ErrorCategory::Fabric,
                                                    [&] { runner.bring_up(2'000'000); });
        CHECK_THAT(msg, Contains("M0D0 E plane 0): status config_invalid"));
        CHECK_THAT(msg, Contains(line ? "detail config:topology" : "detail config:mesh_config"));
        runner.terminate(pf::Termination::Immediate, 1'000'000);
    }
}

TEST_CASE("mesh (sim): a second runner attaches to a running fabric and terminates it",
          "[mesh][sim]") {
    REQUIRE_FIRMWARE();
    // As on silicon: `mesh up` leaves the routers running, a later `mesh down` takes them over.
    Mesh m("t3k_mesh_graph.yaml", "t3k_cluster.yaml", options(), *router);
    {
        fabric::FabricRunner other(m.dev, m.plan.fabric, *router);
        // Nothing runs yet: every router is named, nothing is taken over.
        const auto msg =
            fabric::test::expect_error(fabric::ErrorCategory::Fabric, [&] { other.attach(); });
        CHECK_THAT(msg,
                   Contains("fabric attach: 20 of 20 routers are not this plan's running fabric"));
        CHECK_FALSE(other.up());
    }
    m.runner.bring_up(5'000'000);
    // A plan with another payload is not the fabric that runs.
    auto o = options();
    o.payload_bytes = 1024;
    const auto other_plan = fabric::plan_mesh(
        fabric::MeshGraph::load_file(kSocDir + "/t3k_mesh_graph.yaml"), m.cluster, wh_soc(), o);
    fabric::FabricRunner wrong(m.dev, other_plan.fabric, *router);
    const auto msg =
        fabric::test::expect_error(fabric::ErrorCategory::Fabric, [&] { wrong.attach(); });
    CHECK_THAT(msg, Contains("its config is not the plan's"));
    // The same plan: attached, it watches and terminates the fabric.
    fabric::FabricRunner later(m.dev, m.plan.fabric, *router);
    later.attach();
    CHECK(later.up());
    later.monitor(50'000);
    const auto fin = later.terminate(pf::Termination::Graceful, 5'000'000);
    for (const auto& s : fin) {
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
        CHECK(s.core_finished);
        CHECK(s.block.undrained == 0);
    }
}

TEST_CASE("mesh (sim): all-to-all on a t3k whose chips are harvested where workers would go",
          "[mesh][sim][harvest]") {
    REQUIRE_FIRMWARE();
    // t3k_cluster.yaml with harvesting: every chip loses row 1 (bit 1), where the unharvested
    // placement puts its workers, and row 7 (bit 8), where it puts the sink core; chip 5 row 2 too.
    std::ifstream in(kSocDir + "/t3k_cluster.yaml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text += "harvesting:\n";
    for (uint32_t chip = 0; chip < 8; ++chip) {
        const uint32_t mask = (1u << 1) | (1u << 8) | (chip == 5 ? 1u << 3 : 0u);
        text += "  " + std::to_string(chip) +
                ": {noc_translation: true, harvest_mask: " + std::to_string(mask) + "}\n";
    }
    Mesh m(fabric::MeshGraph::load_file(kSocDir + "/t3k_mesh_graph.yaml"),
           fabric::ClusterDescriptor::parse(text, "t3k_harvested.yaml"), options(), *router);
    m.runner.bring_up(5'000'000);
    fabric::MeshTrafficOptions o;
    o.packets = 12;
    o.packet_bytes = 1024;
    const Traffic t = fabric::plan_mesh_traffic(m.plan, m.dev, *traffic, all_to_all(m.plan), o);
    for (const auto& w : t.workers) {
        INFO("worker " << w.target.core.str());
        CHECK(m.dev.soc(w.target.core.chip).core_type(w.target.core.core) ==
              fabric::CoreType::Worker);
        CHECK((w.target.core.core.y != 1 && w.target.core.core.y != 7));
        for (const auto& sink : w.sinks)
            CHECK(sink.core == fabric::CoreCoord{1, sink.chip == 5 ? 10u : 9u});
    }
    run(m, t);
    m.runner.monitor(300'000);
    check_landed(m, t);
    const auto fin = terminate_clean(m);
    CHECK(delivered(fin) == 56 * 12);
}

namespace {

// The router of mesh `from`'s device whose link leads to mesh `to` (1 x 1 meshes: one per
// neighbour).
const fabric::RouterPlacement& router_towards(const fabric::MeshPlan& plan, uint32_t from,
                                              uint32_t to) {
    for (const auto& r : plan.fabric.routers) {
        if (r.mesh->node.mesh == from && plan.node_of(r.config.peer_chip_id).mesh == to) return r;
    }
    FAIL("no link from mesh " << from << " to mesh " << to);
    throw std::logic_error("unreachable");
}

size_t router_index(const fabric::MeshPlan& plan, const fabric::RouterPlacement& r) {
    return static_cast<size_t>(&r - plan.fabric.routers.data());
}

// One visit of a packet to a router, as its receive slot shows it: the router that took it off
// its link and the TTL in the slot (decremented there if it was forwarded).
struct Visit {
    uint32_t device = 0;  // D1..D16 of seeds/000 §7.2 (mesh + 1)
    uint32_t ttl = 0;
    size_t router = 0;
    bool operator==(const Visit&) const = default;
};

std::vector<Visit> visits_of(Mesh& m, uint32_t seq) {
    std::vector<Visit> out;
    for (size_t i = 0; i < m.plan.fabric.routers.size(); ++i) {
        const auto& r = m.plan.fabric.routers[i];
        for (uint32_t rx = 0; rx < pf::kNumReceiverChannels; ++rx) {
            for (uint32_t s = 0; s < r.config.receiver_slots[rx]; ++s) {
                pf::PacketHeader h{};
                m.dev.read(r.core, r.layout.receiver_base[rx] + s * r.layout.slot_bytes,
                           {reinterpret_cast<uint8_t*>(&h), sizeof h});
                if (h.magic == pf::kHeaderMagic && h.seq == seq)
                    out.push_back({r.mesh->node.mesh + 1, h.ttl, i});
            }
        }
    }
    return out;
}

}  // namespace

namespace {

// 64 B of 0xEE (push_raw's payload) for D16 of the spec's 4 x 4 grid of 1 x 1 meshes: to `sink`
// at `region`, routed on by the entry routers from its dst_node.
pf::PacketHeader to_d16(const fabric::CoreLocation& sink, uint32_t region, uint32_t ttl,
                        uint32_t seq) {
    pf::PacketHeader h{};
    h.magic = pf::kHeaderMagic;
    h.ttl = static_cast<uint8_t>(ttl);
    h.seq = seq;
    h.payload_bytes = 64;
    h.send_type = static_cast<uint8_t>(pf::NocSendType::UnicastWrite);
    h.cmd.write.dst = {region, static_cast<uint8_t>(sink.core.x), static_cast<uint8_t>(sink.core.y),
                       0};
    h.route = 0;  // out of D1's own mesh: the entry routers route on from dst_node
    h.dst_mesh = 15;
    h.dst_device = 0;
    return h;
}

}  // namespace

TEST_CASE("mesh (sim): TTL ends the spec's routing loop (seeds/000 7.2): D11 drops it at 0",
          "[mesh][sim][ttl]") {
    REQUIRE_FIRMWARE();
    // The 4 x 4 grid of §7.2 with a routing table on every device (each device a 1 x 1 mesh: its
    // routers look the next hop up in their exit tables).
    Mesh m("spec_ttl_4x4_devices_mesh_graph.yaml", "mesh_4x4_cluster.yaml", options(), *router);
    REQUIRE(m.plan.fabric.ttl() == 16);
    m.runner.bring_up(10'000'000);
    std::vector<fabric::RouterEventRecord> events;
    m.runner.on_events([&](std::span<const fabric::RouterEventRecord> e) {
        events.insert(events.end(), e.begin(), e.end());
    });
    const auto& cores = wh_soc().cores(fabric::CoreType::Worker);
    const fabric::CoreLocation sink{m.plan.chip_of({15, 0}), cores[kSinkCoreIndex]};
    const uint32_t region = fabric::mesh_sink_base(kArch);
    const auto sink_bytes = [&] {
        std::vector<uint8_t> got(64);
        m.dev.read(sink, region, got);
        return got;
    };
    m.dev.write(sink, region, std::vector<uint8_t>(64, 0));
    const auto packet = [&](uint32_t ttl, uint32_t seq) { return to_d16(sink, region, ttl, seq); };
    // D1 sends through its router towards D5 (the loop's first hop).
    const auto& d1 = router_towards(m.plan, 0, 4);

    // With the tables as planned, D1 -> D16 (6 hops) arrives with the plan's TTL.
    push_raw(m, d1, 0, packet(m.plan.fabric.ttl(), 0x7701));
    m.runner.monitor(300'000);
    CHECK(sink_bytes() == std::vector<uint8_t>(64, 0xEE));
    // Five routers passed it on (one hop less each), D16's took it off its last link with 11.
    std::vector<uint32_t> ttls;
    for (const Visit& v : visits_of(m, 0x7701)) ttls.push_back(v.ttl);
    std::sort(ttls.rbegin(), ttls.rend());
    CHECK(ttls == std::vector<uint32_t>{15, 14, 13, 12, 11, 11});

    // Corrupt the tables (seeds/000 7.2's figure): for D16, D5 -> D6 -> D7 -> D11 -> D10 -> D9
    // -> D5 ... (mesh ids are D - 1).
    const std::pair<uint32_t, uint32_t> loop[] = {{4, 5}, {5, 6}, {6, 10}, {10, 9}, {9, 8}, {8, 4}};
    for (const auto& [from, to] : loop) {
        const uint32_t dir = static_cast<uint32_t>(router_towards(m.plan, from, to).mesh->dir);
        for (const auto& r : m.plan.fabric.routers) {
            if (r.mesh->node.mesh != from) continue;
            m.dev.write32(r.core, r.layout.exit_table + 4 * 15, pf::kMeshExitValid | dir << 8);
        }
    }
    m.dev.write(sink, region, std::vector<uint8_t>(64, 0));
    push_raw(m, d1, 1, packet(10, 0x7702));
    m.runner.monitor(300'000);
    (void)m.runner.collect_events();

    // The hop-by-hop TTLs of the spec's table: each router's slot holds what it passed on, D11's
    // second slot what it dropped (1 on arrival: 0 once decremented).
    std::vector<Visit> seen = visits_of(m, 0x7702);
    const auto& d11 = router_towards(m.plan, 10, 6);  // D11's router facing D7: the packet's way in
    const auto dropped = std::find_if(seen.begin(), seen.end(), [&](const Visit& v) {
        return v.router == router_index(m.plan, d11) && v.ttl == 1;
    });
    REQUIRE(dropped != seen.end());
    const Visit last = *dropped;
    seen.erase(dropped);
    std::sort(seen.begin(), seen.end(),
              [](const Visit& a, const Visit& b) { return a.ttl > b.ttl; });
    std::vector<std::pair<uint32_t, uint32_t>> table;  // (device, TTL) as in the spec
    table.push_back({1, 10});
    for (const Visit& v : seen) table.push_back({v.device, v.ttl});
    table.push_back({last.device, last.ttl - 1});
    const std::vector<std::pair<uint32_t, uint32_t>> spec = {
        {1, 10}, {5, 9}, {6, 8}, {7, 7}, {11, 6}, {10, 5}, {9, 4}, {5, 3}, {6, 2}, {7, 1}, {11, 0}};
    CHECK(table == spec);

    // D11 dropped it, reported it (counter, detail, event with the packet's seq), and nothing
    // else was refused; nothing reached D16.
    const auto st = m.runner.status();
    for (size_t i = 0; i < st.size(); ++i) {
        INFO(st[i].describe());
        CHECK(st[i].status_name() == "ready_for_traffic");
        CHECK(st[i].block.bad_packets == (i == router_index(m.plan, d11) ? 1u : 0u));
    }
    CHECK(st[router_index(m.plan, d11)].detail_name() == "bad_packet:ttl_expired");
    std::vector<fabric::RouterEventRecord> drops;
    for (const auto& e : events) {
        if (e.event.kind == static_cast<uint16_t>(pf::RouterEventKind::BadPacket))
            drops.push_back(e);
    }
    REQUIRE(drops.size() == 1);
    CHECK(drops[0].router == router_index(m.plan, d11));
    CHECK(drops[0].event.code == static_cast<uint32_t>(pf::BadPacket::TtlExpired));
    CHECK(drops[0].event.value == 0x7702);
    CHECK(fabric::describe_event(drops[0]).find("ttl_expired") != std::string::npos);
    CHECK(sink_bytes() == std::vector<uint8_t>(64, 0));
}

TEST_CASE("mesh (sim): a routing table changed while the fabric is paused is used after resume",
          "[mesh][sim][control]") {
    REQUIRE_FIRMWARE();
    Mesh m("spec_ttl_4x4_devices_mesh_graph.yaml", "mesh_4x4_cluster.yaml", options(), *router);
    m.runner.bring_up(10'000'000);
    std::vector<fabric::RouterEventRecord> events;
    m.runner.on_events([&](std::span<const fabric::RouterEventRecord> e) {
        events.insert(events.end(), e.begin(), e.end());
    });
    const auto& cores = wh_soc().cores(fabric::CoreType::Worker);
    const fabric::CoreLocation sink{m.plan.chip_of({15, 0}), cores[kSinkCoreIndex]};
    const uint32_t region = fabric::mesh_sink_base(kArch);
    m.dev.write(sink, region, std::vector<uint8_t>(64, 0));
    const auto& d1 = router_towards(m.plan, 0, 4);  // D1 sends through D5
    const auto& d5 = router_towards(m.plan, 4, 0);  // D5's entry router from D1
    // Paused, D5's routers are told they know routes to meshes 0..14 only (the exit count: a
    // field the router keeps a copy of, read again on resume).
    const auto paused = m.runner.control(pf::RouterControl::Pause, 1'000'000);
    for (const auto& s : paused) CHECK(s.control.state == 1u);
    for (const auto& r : m.plan.fabric.routers) {
        if (r.mesh->node.mesh == 4)
            m.dev.write32(r.core, r.layout.mesh_config + offsetof(pf::MeshRouterConfig, exit_count),
                          15);
    }
    (void)m.runner.control(pf::RouterControl::Run, 1'000'000);
    push_raw(m, d1, 0, to_d16(sink, region, m.plan.fabric.ttl(), 0x7703));
    m.runner.monitor(300'000);
    (void)m.runner.collect_events();
    // D5 has no route to mesh 15 now: it drops the packet as dst_node; nothing reaches D16.
    std::vector<fabric::RouterEventRecord> drops;
    for (const auto& e : events) {
        if (e.event.kind == static_cast<uint16_t>(pf::RouterEventKind::BadPacket))
            drops.push_back(e);
    }
    REQUIRE(drops.size() == 1);
    CHECK(drops[0].router == router_index(m.plan, d5));
    CHECK(drops[0].event.code == static_cast<uint32_t>(pf::BadPacket::DstNode));
    CHECK(drops[0].event.value == 0x7703);
    std::vector<uint8_t> got(64);
    m.dev.read(sink, region, got);
    CHECK(got == std::vector<uint8_t>(64, 0));
}

namespace {

// The RerouteOrder for router `i`: `resume` per sender channel, magic last (as the host writes it).
void write_order(Mesh& m, size_t i, const std::array<uint32_t, pf::kMaxSenderChannels>& resume) {
    const fabric::RouterPlacement& r = m.plan.fabric.routers[i];
    const uint32_t at = pf::router_reroute_order(r.layout);
    for (uint32_t c = 0; c < pf::kMaxSenderChannels; ++c)
        m.dev.write32(r.core, at + 4 * c, resume[c]);
    m.dev.write32(r.core, at + offsetof(pf::RerouteOrder, magic), pf::kRerouteOrderMagic);
}

size_t router_at(const fabric::FabricPlan& p, fabric::ChipId chip, uint32_t eth) {
    for (size_t i = 0; i < p.routers.size(); ++i) {
        if (p.routers[i].chip == chip && p.routers[i].eth_channel == eth) return i;
    }
    FAIL("no router at chip " << chip << " eth " << eth);
    return 0;
}

}  // namespace

TEST_CASE(
    "mesh (sim): a reroute order is refused without a fallback or with a count past what was "
    "sent, and changes nothing, a good one is applied",
    "[mesh][sim][reroute]") {
    REQUIRE_FIRMWARE();
    constexpr auto kReroute = pf::RouterControl::Reroute;
    const auto state = [](const fabric::RouterSnapshot& s) {
        return fabric::reroute_state_name(s.control.reroute);
    };
    // One plane: no fallback. The link is held (cut, nothing reported), the order refused.
    {
        Mesh m("n300_mesh_graph.yaml", "n300_cluster.yaml", options(), *router);
        m.runner.bring_up(5'000'000);
        const size_t a = router_at(m.plan.fabric, 0, 8), b = router_at(m.plan.fabric, 1, 0);
        const size_t both[] = {a, b};
        const auto held = m.runner.control(kReroute, 1'000'000, both);
        CHECK(held[a].control.cut == 1);
        CHECK(held[b].control.cut == 1);
        CHECK(state(held[a]) == "none");
        write_order(m, a, {});
        m.runner.monitor(20'000);
        const auto after = m.runner.status();
        CHECK(state(after[a]) == "refused");
        CHECK(state(after[b]) == "none");
        CHECK(after[a].control.state == static_cast<uint32_t>(kReroute));
        (void)m.runner.terminate(pf::Termination::Immediate, 1'000'000);
    }
    // Two planes: chip 0 eth 8's fallback is eth 9 (plane 1). A count for a channel past what it
    // sent (nothing) is refused; counts that match are applied.
    Mesh m("n300_mesh_graph.yaml", "n300_cluster.yaml", options(pf::Topology::Mesh, {0, 1}),
           *router);
    m.runner.bring_up(5'000'000);
    const size_t a = router_at(m.plan.fabric, 0, 8), b = router_at(m.plan.fabric, 1, 0);
    REQUIRE(fabric::configured_fallback(m.plan.fabric, a) == router_at(m.plan.fabric, 0, 9));
    REQUIRE(fabric::configured_fallback(m.plan.fabric, b) == router_at(m.plan.fabric, 1, 1));
    const size_t both[] = {a, b};
    (void)m.runner.control(kReroute, 1'000'000, both);
    std::array<uint32_t, pf::kMaxSenderChannels> past{};
    past[pf::kWorkerChannel] = 1;
    write_order(m, a, past);
    write_order(m, b, {});
    m.runner.monitor(20'000);
    const auto after = m.runner.status();
    CHECK(state(after[a]) == "refused");
    CHECK(state(after[b]) == "applied");
    CHECK(after[a].block.sent[pf::kWorkerChannel] == 0);
    CHECK(after[a].block.completed[pf::kWorkerChannel] == 0);
    (void)m.runner.terminate(pf::Termination::Immediate, 1'000'000);
}

TEST_CASE(
    "mesh (sim): a rerouted link rejoins only once both ends have sent their marker over it, "
    "then Run gives it back its traffic",
    "[mesh][sim][reroute]") {
    REQUIRE_FIRMWARE();
    const auto state = [](const fabric::RouterSnapshot& s) {
        return fabric::reroute_state_name(s.control.reroute);
    };
    Mesh m("n300_mesh_graph.yaml", "n300_cluster.yaml", options(pf::Topology::Mesh, {0, 1}),
           *router);
    m.runner.bring_up(5'000'000);
    const size_t a = router_at(m.plan.fabric, 0, 8), b = router_at(m.plan.fabric, 1, 0);
    const size_t both[] = {a, b}, only_a[] = {a}, only_b[] = {b};
    (void)m.runner.control(pf::RouterControl::Reroute, 1'000'000, both);
    write_order(m, a, {});
    write_order(m, b, {});
    m.runner.monitor(20'000);
    REQUIRE(state(m.runner.status()[a]) == "applied");
    // One end told to rejoin: its marker goes, the peer's never comes; it stays rerouted.
    m.runner.write_control(pf::RouterControl::Rejoin, only_a);
    m.runner.monitor(50'000);
    auto now = m.runner.status();
    CHECK(state(now[a]) == "applied");
    CHECK(state(now[b]) == "applied");
    CHECK(now[a].control.cut == 1);
    // The other end too: both rejoin (still cut until Run).
    m.runner.write_control(pf::RouterControl::Rejoin, only_b);
    const auto rejoined = m.runner.control(pf::RouterControl::Rejoin, 1'000'000, both);
    CHECK(state(rejoined[a]) == "rejoined");
    CHECK(state(rejoined[b]) == "rejoined");
    CHECK(rejoined[a].control.cut == 1);
    CHECK(rejoined[b].control.cut == 1);
    const auto back = m.runner.control(pf::RouterControl::Run, 1'000'000, both);
    for (const size_t i : both) {
        CHECK(back[i].control.cut == 0);
        CHECK(state(back[i]) == "none");
        CHECK(back[i].control.state == static_cast<uint32_t>(pf::RouterControl::Run));
    }
    // Its keep-alives cross it again: neither end reports its peer silent.
    m.runner.monitor(50'000);
    for (const fabric::RouterEventRecord& e : m.runner.collect_events()) {
        CHECK(e.event.kind != static_cast<uint32_t>(pf::RouterEventKind::PeerSilent));
    }
    const auto end = m.runner.terminate(pf::Termination::Graceful, 1'000'000);
    CHECK(end[a].block.status == static_cast<uint32_t>(pf::RouterStatus::Terminated));
    CHECK(end[b].block.status == static_cast<uint32_t>(pf::RouterStatus::Terminated));
}
