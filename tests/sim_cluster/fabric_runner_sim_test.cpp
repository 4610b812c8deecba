// FabricRunner over SimDevice with this build's router firmware (fabric_router.elf): bring-up of
// a line and a ring, what the routers learned in the handshake, termination both ways, and the
// failures the control plane must name: a link that is down, a config the peer disagrees with, a
// config the router rejects. Skipped (with a warning) until the firmware sub-build made the ELF.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <optional>

#include "cluster.h"
#include "descriptors.h"
#include "eth/link.h"
#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/fabric_traffic.h"
#include "fabric/mux.h"
#include "fabric/router_events.h"
#include "fabric/sim_device.h"
#include "fabric/traffic_account.h"
#include "hal/arch_map.h"
#include "hal/encoding.h"
#include "protocol/fabric_mux.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using fabric::ErrorCategory;
using fabric::FabricDir;
using fabric::FabricRunner;
namespace pf = protocol::fabric;

namespace {

const std::string kFwDir = FABRIC_FIRMWARE_DIR;

std::optional<fabric::ElfImage> firmware(const std::string& name) {
    const std::string path = kFwDir + "/wormhole_b0/" + name + ".elf";
    if (!std::filesystem::exists(path)) return std::nullopt;
    return fabric::ElfImage::load_file(path);
}

#define REQUIRE_ROUTER(var)                                                       \
    const auto var = firmware("fabric_router");                                   \
    if (!var) {                                                                   \
        WARN("skipped: fabric_router.elf is not built yet (build the firmware)"); \
        return;                                                                   \
    }

using fabric::test::wh_soc;
const fabric::ClusterDescriptor& t3k() {
    return fabric::test::cluster("t3k_cluster.yaml");
}

fabric::SimDevice device(std::optional<fabric::ElfImage> base_fw = std::nullopt) {
    fabric::SimDeviceOptions o;
    o.cluster = t3k();
    o.wh_base_firmware = std::move(base_fw);
    return fabric::SimDevice(wh_soc(), hal::Arch::WormholeB0, std::move(o));
}

fabric::FabricPlan plan(pf::Topology t, std::vector<fabric::ChipId> chips,
                        uint32_t handshake_us = 20'000) {
    fabric::FabricOptions o;
    o.topology = t;
    o.chips = std::move(chips);
    o.handshake_timeout_us = handshake_us;
    return fabric::plan_fabric(t3k(), wh_soc(), o);
}

// A fabric_traffic worker on `chip` sending `packets` packets of `bytes` one hop `dir` to the third
// worker core of the next chip (as `fabricctl fabric run` does; fabric_run_cmd.cpp).
struct TrafficWorker {
    fabric::LaunchTarget target;
    protocol::FabricTrafficArgs args{};
    protocol::FabricDest dest{};
};
TrafficWorker traffic_worker(const fabric::FabricPlan& p, const fabric::ElfImage& image,
                             fabric::ChipId chip, FabricDir dir, uint32_t packets, uint32_t bytes) {
    const auto arch = hal::Arch::WormholeB0;
    const auto& workers = wh_soc().cores(fabric::CoreType::Worker);
    TrafficWorker w;
    w.target.core = {chip, workers[0]};
    w.target.image = &image;
    w.target.placement = fabric::erisc_placement(hal::kWormholeB0, wh_soc().worker_l1_size());
    const uint32_t l1 = protocol::test_l1_base(arch);
    const uint32_t slots = 8;
    const uint32_t sink_base = pf::align_up(
        protocol::test_mailbox_addr(arch) + static_cast<uint32_t>(sizeof(protocol::TestMailbox)),
        4096);
    w.dest = protocol::FabricDest{};
    w.dest.route = pf::route_unicast(1);
    w.dest.flags_word = pf::Route{}.with_ttl(p.ttl()).flags_word;
    w.dest.x = workers[2].x;
    w.dest.y = workers[2].y;
    w.dest.addr = sink_base;
    w.dest.seed = 0x1000;
    auto& g = w.args;
    g.channel = p.worker_channel(chip, dir);
    g.send_type = static_cast<uint32_t>(pf::NocSendType::UnicastWrite);
    g.packet_bytes = bytes;
    g.packet_count = packets;
    g.num_dests = 1;
    g.dest_slots = slots;
    g.dests_addr = l1;
    g.conn_l1 = l1 + 0x100;
    g.src_addr = l1 + 0x400;
    g.timeout_us = 20'000;
    return w;
}

void write_traffic_mailbox(fabric::SimDevice& dev, const TrafficWorker& w) {
    std::vector<uint8_t> d(sizeof(w.dest));
    std::memcpy(d.data(), &w.dest, sizeof(w.dest));
    dev.write(w.target.core, w.args.dests_addr, d);
    protocol::TestMailbox m{};
    m.magic = protocol::kTestMailboxMagic;
    m.role = static_cast<uint32_t>(protocol::KernelRole::Master);
    m.num_args = sizeof(w.args) / 4;
    std::memcpy(m.args, &w.args, sizeof(w.args));
    std::vector<uint8_t> mb(sizeof(m));
    std::memcpy(mb.data(), &m, sizeof(m));
    dev.write(w.target.core, protocol::test_mailbox_addr(hal::Arch::WormholeB0), mb);
}

// Replace one router's config (and its layout) in a plan.
void patch(fabric::FabricPlan& p, size_t i, const std::function<void(pf::RouterConfig&)>& f) {
    f(p.routers[i].config);
    p.routers[i].layout = pf::router_layout(hal::kWormholeB0, p.routers[i].config);
}

}  // namespace

TEST_CASE("router images: code in the router window and the cold window, nowhere else",
          "[fabric_runner][sim]") {
    // The Wormhole images put their .text_cold in hal ArchMap::router_cold (above the router's
    // slots); Blackhole has no cold window and keeps it in its 48 KiB router window.
    for (const hal::ArchMap* a : {&hal::kWormholeB0, &hal::kBlackhole}) {
        for (const char* name : {"fabric_router", "fabric_router_2d"}) {
            const std::string path = kFwDir + "/" + a->name + "/" + name + ".elf";
            INFO(path);
            REQUIRE(std::filesystem::exists(path));
            const fabric::ElfImage image = fabric::ElfImage::load_file(path);
            bool in_cold = false;
            for (const fabric::ElfSegment& seg : image.segments()) {
                INFO("segment " << seg.index << " at 0x" << std::hex << seg.address);
                const bool in_window =
                    seg.address >= a->router_fw.base && seg.end() <= a->router_fw.end();
                const bool cold = a->router_cold.size != 0 && seg.address >= a->router_cold.base &&
                                  seg.end() <= a->router_cold.end();
                CHECK((in_window || cold));
                in_cold = in_cold || cold;
            }
            CHECK(in_cold == (a->router_cold.size != 0));
        }
    }
}

TEST_CASE("fabric runner (sim): line and ring come up, learn their peers, terminate",
          "[fabric_runner][sim]") {
    REQUIRE_ROUTER(router);
    const auto base = firmware("erisc_base");
    for (const bool ring : {false, true}) {
        for (const bool with_base : {false, true}) {
            if (with_base && !base) continue;
            INFO((ring ? "ring" : "line") << (with_base ? ", base firmware" : ", bare metal"));
            auto dev = device(with_base ? base : std::nullopt);
            const auto p = ring ? plan(pf::Topology::Ring, {0, 1, 5, 4})
                                : plan(pf::Topology::Line, {0, 1, 2, 3});
            FabricRunner runner(dev, p, *router);
            runner.bring_up(2'000'000);
            CHECK(runner.up());
            CHECK(runner.handshake_cycles() > 0);
            CHECK(runner.ready_cycles() >= runner.handshake_cycles());
            const auto st = runner.status();
            REQUIRE(st.size() == p.routers.size());
            for (size_t i = 0; i < st.size(); ++i) {
                INFO(st[i].describe());
                CHECK(st[i].status_name() == "ready_for_traffic");
                CHECK(st[i].block.peer_chip == p.routers[i].config.peer_chip_id);
                CHECK(st[i].block.peer_channel == p.routers[i].config.peer_eth_channel);
                CHECK(st[i].method == (with_base ? fabric::LaunchMethod::LaunchFlag
                                                 : fabric::LaunchMethod::ResetPc));
                CHECK_FALSE(st[i].core_finished);
            }
            // The main loop runs: heartbeats move.
            dev.step(5'000);
            const auto later = runner.status();
            for (size_t i = 0; i < st.size(); ++i) {
                CHECK(later[i].block.heartbeat != st[i].block.heartbeat);
            }
            runner.check_running();
            const auto fin = ring ? runner.terminate(pf::Termination::Immediate, 1'000'000)
                                  : runner.terminate(pf::Termination::Graceful, 1'000'000);
            for (const auto& s : fin) {
                INFO(s.describe());
                CHECK(s.status_name() == "terminated");
                CHECK(s.core_finished);
                CHECK(s.block.undrained == 0);
            }
        }
    }
}

TEST_CASE("fabric runner (sim): a link that is down is named by both routers",
          "[fabric_runner][sim]") {
    REQUIRE_ROUTER(router);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1, 2}, 50);  // 50 us handshake timeout
    dev.cluster().link(1, 2).set_up(false);                  // chip 1 ch 2 <-> chip 2 ch 4
    FabricRunner runner(dev, p, *router);
    const auto msg =
        fabric::test::expect_error(ErrorCategory::Fabric, [&] { runner.bring_up(1'000'000); });
    INFO(msg);
    CHECK_THAT(msg, Contains("fabric bring-up (handshake) failed") && Contains("2 of 4 routers"));
    CHECK_THAT(msg, Contains("chip 2 eth 4 (core 7-0, west): status timeout, stage handshaking, "
                             "stuck at handshake_"));
    CHECK_THAT(msg, Contains("chip 1 eth 2 (core 8-0, east): status timeout, stage handshaking, "
                             "stuck at handshake_"));
    // The healthy link 0-1 is not named as failed ...
    CHECK_THAT(msg, !Contains("chip 0 eth 2 (core 8-0, east): status timeout"));
    // ... and immediate termination still stops every router that runs.
    const auto fin = runner.terminate(pf::Termination::Immediate, 1'000'000);
    for (const auto& s : fin) CHECK(s.core_finished);
}

TEST_CASE(
    "fabric runner (sim): a link that dies during graceful termination: its routers end without "
    "the peer's word, well within the drain bound",
    "[fabric_runner][sim]") {
    REQUIRE_ROUTER(router);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1, 2});
    FabricRunner runner(dev, p, *router);
    runner.bring_up(2'000'000);
    // Down as the routers drain: neither can hear that the other drained (the drain's bound is
    // 20 ms, twenty times this termination's budget).
    const uint64_t down_at = dev.cycles() + 2'000;
    dev.at_cycle(down_at, [&] { dev.cluster().link(1, 2).set_up(false); });
    const auto fin = runner.terminate(pf::Termination::Graceful, 1'000'000);
    CHECK(dev.cycles() > down_at);
    for (const auto& s : fin) {
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
        CHECK(s.core_finished);
        CHECK(s.block.undrained == 0);
        CHECK(s.stuck_at_name() == "none");
    }
}

TEST_CASE("fabric runner (sim): configs the routers refuse", "[fabric_runner][sim]") {
    REQUIRE_ROUTER(router);
    SECTION("peers disagree on the slot payload: handshake mismatch") {
        auto dev = device();
        auto p = plan(pf::Topology::Line, {0, 1}, 200);
        patch(p, 1, [](pf::RouterConfig& c) { c.payload_bytes = 1024; });
        FabricRunner runner(dev, p, *router);
        const auto msg =
            fabric::test::expect_error(ErrorCategory::Fabric, [&] { runner.bring_up(2'000'000); });
        CHECK_THAT(msg, Contains("status handshake_mismatch"));
    }
    SECTION("a bad magic: config invalid") {
        auto dev = device();
        auto p = plan(pf::Topology::Line, {0, 1}, 200);
        patch(p, 0, [](pf::RouterConfig& c) { c.magic = 0x12345678; });
        FabricRunner runner(dev, p, *router);
        const auto msg =
            fabric::test::expect_error(ErrorCategory::Fabric, [&] { runner.bring_up(2'000'000); });
        CHECK_THAT(msg, Contains("chip 0 eth 2 (core 8-0, east): status config_invalid"));
    }
}

TEST_CASE("fabric runner (sim): a healthy fabric under traffic has no stuck component",
          "[fabric_runner][sim][health]") {
    REQUIRE_ROUTER(router);
    const auto traffic = firmware("fabric_traffic");
    REQUIRE(traffic);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1, 2});
    FabricRunner runner(dev, p, *router);
    runner.set_stall_cycles(100'000);
    runner.bring_up(2'000'000);
    runner.monitor(300'000);  // idle: three stall windows
    const auto w0 = traffic_worker(p, *traffic, 0, FabricDir::East, 200, 1024);
    const auto w2 = traffic_worker(p, *traffic, 2, FabricDir::West, 200, 1024);
    fabric::LaunchOptions lo;
    lo.poll_cycles = 1'000;
    lo.max_cycles = 20'000'000;
    const std::vector<fabric::LaunchTarget> targets{w0.target, w2.target};
    size_t k = 0;
    const auto res = runner.run_workers(targets, lo, [&](const fabric::LaunchTarget&) {
        write_traffic_mailbox(dev, k++ == 0 ? w0 : w2);
    });
    for (const auto& r : res) CHECK(r.outcome == fabric::LaunchOutcome::Exited);
    CHECK(runner.health().empty());
    // The workers are done when their last packets are in the routers' ch0 slots: watch the
    // fabric drain them (and publish its counters), then count.
    runner.monitor(200'000);
    uint64_t sent = 0;
    for (const auto& s : runner.status()) sent += s.sent();
    CHECK(sent == 400);
    const auto fin = runner.terminate(pf::Termination::Graceful, 2'000'000);
    for (const auto& s : fin) CHECK(s.status_name() == "terminated");
    CHECK(runner.health().empty());
}

TEST_CASE("fabric runner (sim): a router frozen mid-traffic is named by the health monitor",
          "[fabric_runner][sim][health]") {
    REQUIRE_ROUTER(router);
    const auto traffic = firmware("fabric_traffic");
    REQUIRE(traffic);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1, 2});
    // Chip 1's west router receives chip 0's traffic.
    const fabric::RouterPlacement* victim = nullptr;
    for (const auto& r : p.routers) {
        if (r.chip == 1 && r.dir == FabricDir::West) victim = &r;
    }
    REQUIRE(victim);
    FabricRunner runner(dev, p, *router);
    runner.set_stall_cycles(100'000);
    runner.bring_up(2'000'000);
    CHECK(runner.health().empty());

    const auto w0 = traffic_worker(p, *traffic, 0, FabricDir::East, 5'000, 1024);
    fabric::LaunchOptions lo;
    lo.poll_cycles = 1'000;
    lo.max_cycles = 20'000'000;
    const uint64_t start = dev.cycles();
    // Packets are flowing by then, and the router has published counters (every 256 busy passes).
    constexpr uint64_t kFreezeAt = 100'000;
    dev.freeze_core(victim->core, start + kFreezeAt);
    CHECK_FALSE(dev.core_frozen(victim->core));
    const std::vector<fabric::LaunchTarget> targets{w0.target};
    try {
        (void)runner.run_workers(
            targets, lo, [&](const fabric::LaunchTarget&) { write_traffic_mailbox(dev, w0); });
        FAIL("the workers finished although a router was frozen");
    } catch (const fabric::HealthError& e) {
        const std::string msg = e.what();
        INFO(msg);
        REQUIRE(e.reports().size() == 1);  // exactly the frozen router, nobody else
        const auto& r = e.reports()[0];
        CHECK(r.core == victim->core);
        CHECK(r.component == fabric::router_component_name(*victim));
        CHECK(r.component == "router west chip 1 eth " + std::to_string(victim->eth_channel));
        CHECK(r.kind == "router");
        CHECK(r.reason == fabric::StuckReason::Stalled);
        CHECK(r.status_name == "ready_for_traffic");
        CHECK(r.stage_name == "ready_for_traffic");
        CHECK(r.stuck_at_name == "none");
        CHECK(r.head.heartbeat != 0);
        CHECK(r.unchanged_cycles >= 100'000);
        CHECK(r.unchanged_cycles < 100'000 + 2 * lo.poll_cycles);
        CHECK(r.run.state == fabric::CoreRunState::Running);
        REQUIRE(r.run.pc.has_value());
        // Found within a stall window (and a poll or two) of the freeze, not at a worker timeout.
        CHECK(dev.cycles() - start < kFreezeAt + 100'000 + 2 * lo.poll_cycles + 2'000);
        CHECK_THAT(msg, StartsWith("fabric: no progress while workers ran ("));
        CHECK_THAT(msg, Contains("stall window 100000 cycles): 1 of 4 components stuck: " +
                                 r.component + " (chip 1 core " + victim->core.core.str() +
                                 "): stalled; status ready_for_traffic, stage ready_for_traffic, "
                                 "stuck at none, detail 0x00000000, heartbeat " +
                                 std::to_string(r.head.heartbeat) + " unchanged for " +
                                 std::to_string(r.unchanged_cycles) +
                                 " cycles, core running at pc " + fabric::hex32(*r.run.pc)));
    }
    CHECK(dev.core_frozen(victim->core));
    // It was frozen mid-traffic: it had taken some of chip 0's packets, not all.
    const auto snaps = runner.status();
    for (const auto& s : snaps) {
        if (s.core == victim->core) {
            CHECK(s.received() > 0);
            CHECK(s.received() < 5'000);
        }
    }
    // Frozen: its pc and heartbeat hold while the cluster runs.
    const auto before = runner.status();
    dev.step(20'000);
    const auto after = runner.status();
    for (size_t i = 0; i < before.size(); ++i) {
        if (before[i].core == victim->core) {
            CHECK(after[i].block.heartbeat == before[i].block.heartbeat);
            CHECK(after[i].run.pc == before[i].run.pc);
        } else {
            CHECK(after[i].block.heartbeat != before[i].block.heartbeat);
        }
    }
    // Terminating waits for it no longer than a stall window either.
    const uint64_t t0 = dev.cycles();
    CHECK_THAT(fabric::test::expect_error(
                   ErrorCategory::Fabric,
                   [&] { (void)runner.terminate(pf::Termination::Immediate, 10'000'000); }),
               Contains("immediate termination: no progress while waiting for the routers to "
                        "exit") &&
                   Contains("1 of 4 components stuck: " + fabric::router_component_name(*victim)));
    CHECK(dev.cycles() - t0 <= 2 * fabric::kFabricPollCycles);
    // Thawed, it carries on: it sees the termination word and exits like the others.
    dev.thaw_core(victim->core);
    CHECK_FALSE(dev.core_frozen(victim->core));
    dev.step(200'000);
    for (const auto& s : runner.status()) {
        INFO(s.describe());
        CHECK(s.core_finished);
    }
}

TEST_CASE("fabric runner (sim): a mux frozen mid-traffic is named, not its clients",
          "[fabric_runner][sim][health][mux]") {
    REQUIRE_ROUTER(router);
    const auto mux_elf = firmware("fabric_mux");
    const auto client_elf = firmware("mux_worker");
    REQUIRE(mux_elf);
    REQUIRE(client_elf);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1});
    FabricRunner runner(dev, p, *router);
    runner.set_stall_cycles(100'000);
    runner.bring_up(2'000'000);
    const auto& tensix = wh_soc().cores(fabric::CoreType::Worker);
    fabric::MuxOptions mo;
    mo.full_channels = 2;
    mo.full_slots = 2;
    const fabric::MuxPlacement mux =
        fabric::plan_mux(p, wh_soc(), 0, FabricDir::East, tensix[1], mo);
    runner.watch(fabric::mux_component(mux, fabric::start_mux(dev, mux, wh_soc(), *mux_elf)));
    // Two clients sending 1 KiB packets to chip 1; the mux freezes once traffic flows.
    std::vector<fabric::LaunchTarget> targets;
    std::vector<protocol::MuxWorkerArgs> args;
    for (uint32_t w = 0; w < 2; ++w) {
        protocol::MuxWorkerArgs a{};
        a.channel = mux.channel(w);
        a.packet_count = 5'000;
        a.packet_bytes = 1024;
        a.route = pf::route_unicast(1);
        a.dst_x = tensix[0].x;
        a.dst_y = tensix[0].y;
        a.dst_addr = 0x60000 + w * 0x8000;
        a.seed = 7 + w;
        a.src_addr = 0x19000;
        a.conn_l1 = 0x18000;
        a.send_timeout_us = 20'000;
        a.close_timeout_us = 20'000;
        a.master_x = tensix[2].x;
        a.master_y = tensix[2].y;
        a.done_addr = 0x18300;
        a.workers = 2;
        a.flags = w == 0 ? protocol::kMuxWorkerMaster : 0u;
        targets.push_back({{0, tensix[2 + w]},
                           &*client_elf,
                           fabric::erisc_placement(hal::kWormholeB0, wh_soc().worker_l1_size())});
        args.push_back(a);
    }
    dev.write32({1, tensix[0]}, 0x50000, 0);  // the sink core exists before anything lands there
    fabric::LaunchOptions lo;
    lo.poll_cycles = 1'000;
    lo.max_cycles = 20'000'000;
    const uint64_t start = dev.cycles();
    dev.freeze_core(mux.core, start + 60'000);
    size_t k = 0;
    try {
        (void)runner.run_workers(targets, lo, [&](const fabric::LaunchTarget& t) {
            protocol::TestMailbox m{};
            m.magic = protocol::kTestMailboxMagic;
            m.num_args = sizeof(protocol::MuxWorkerArgs) / 4;
            std::memcpy(m.args, &args[k++], sizeof(protocol::MuxWorkerArgs));
            std::vector<uint8_t> mb(sizeof(m));
            std::memcpy(mb.data(), &m, sizeof(m));
            dev.write(t.core, protocol::test_mailbox_addr(hal::Arch::WormholeB0), mb);
            dev.write32(t.core, 0x18300, 0);
        });
        FAIL("the clients finished although their mux was frozen");
    } catch (const fabric::HealthError& e) {
        const std::string msg = e.what();
        INFO(msg);
        REQUIRE(e.reports().size() == 1);
        const auto& r = e.reports()[0];
        CHECK(r.core == mux.core);
        CHECK(r.component == "mux chip 0 core " + tensix[1].str() + " (router east)");
        CHECK(r.kind == "mux");
        CHECK(r.reason == fabric::StuckReason::Stalled);
        CHECK(r.status_name == "ready_for_traffic");
        CHECK(r.head.heartbeat != 0);
        CHECK(r.run.state == fabric::CoreRunState::Running);
        CHECK(dev.cycles() - start < 60'000 + 100'000 + 2 * lo.poll_cycles + 2'000);
        CHECK_THAT(msg, Contains("1 of 3 components stuck: " + r.component));
    }
    // It had forwarded some packets, not all.
    const pf::MuxStatusBlock b = fabric::read_mux_status(dev, mux);
    CHECK(b.forwarded[0] + b.forwarded[1] > 0);
    CHECK(b.forwarded[0] + b.forwarded[1] < 10'000);
    // Thawed, it carries on; immediate termination then ends it with what it still held.
    dev.thaw_core(mux.core);
    fabric::write_mux_termination(dev, mux, pf::Termination::Immediate);
    dev.step(100'000);
    const pf::MuxStatusBlock end = fabric::read_mux_status(dev, mux);
    CHECK(end.status == static_cast<uint32_t>(pf::RouterStatus::Terminated));
    CHECK(fabric::describe_mux(mux, end).find("status terminated") != std::string::npos);
}

// ---- the routers' event logs (fabric/router_events.h) ----------------------------------------

namespace {

size_t router_index(const fabric::FabricPlan& p, fabric::ChipId chip, FabricDir dir) {
    for (size_t i = 0; i < p.routers.size(); ++i) {
        if (p.routers[i].chip == chip && p.routers[i].dir == dir) return i;
    }
    FAIL("no router chip " << chip);
    return 0;
}

std::vector<std::string> descriptions(const std::vector<fabric::RouterEventRecord>& all,
                                      size_t router) {
    std::vector<std::string> out;
    for (const auto& r : all) {
        if (r.router == router) out.push_back(fabric::describe_event(r));
    }
    return out;
}

// The host plays the worker on `r`'s ch0: a header in slot `slot`, then +1 on its pushed stream.
void push_header(fabric::SimDevice& dev, const fabric::RouterPlacement& r, uint32_t slot,
                 const pf::PacketHeader& h) {
    std::vector<uint8_t> bytes(sizeof h + 64, 0xEE);
    std::memcpy(bytes.data(), &h, sizeof h);
    dev.write(r.core, r.layout.sender_base[0] + slot * r.layout.slot_bytes, bytes);
    dev.write32(
        r.core,
        hal::stream::reg_addr(pf::kStreamPushed0,
                              hal::kWormholeB0.stream.remote_dest_buf_space_available_update),
        hal::stream::encode_words_free_delta(1));
}

}  // namespace

TEST_CASE("router events (sim): each router's states from start to terminated, collected live",
          "[fabric_runner][sim][events]") {
    REQUIRE_ROUTER(router);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1});
    FabricRunner runner(dev, p, *router);
    std::vector<fabric::RouterEventRecord> all;
    size_t deliveries = 0;  // hand-overs of the sink
    runner.on_events([&](std::span<const fabric::RouterEventRecord> fresh) {
        all.insert(all.end(), fresh.begin(), fresh.end());
        ++deliveries;
    });
    runner.bring_up(2'000'000);
    runner.monitor(20'000);
    (void)runner.terminate(pf::Termination::Graceful, 1'000'000);
    const std::vector<std::string> expected = {
        "state started",     "state config_checked",     "state streams_initialized",
        "state handshaking", "state handshake_complete", "state ready_for_traffic",
        "state draining",    "state terminated"};
    for (size_t i = 0; i < p.routers.size(); ++i) {
        INFO(fabric::router_component_name(p.routers[i]));
        CHECK(descriptions(all, i) == expected);
    }
    CHECK(deliveries > 1);  // while the fabric ran, not only at the end
    CHECK(runner.events().collected() == expected.size() * p.routers.size());
    CHECK(runner.events().lost() == 0);
    // Oldest first, on the router's own clock.
    for (size_t i = 1; i < all.size(); ++i) {
        if (all[i].router == all[i - 1].router &&
            all[i].collected_cycle == all[i - 1].collected_cycle)
            CHECK(all[i].event.time > all[i - 1].event.time);
    }
    CHECK(runner.collect_events().empty());  // all consumed
}

TEST_CASE("router events (sim): a router that stops says where and why",
          "[fabric_runner][sim][events]") {
    REQUIRE_ROUTER(router);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1, 2}, 50);  // 50 us handshake timeout
    dev.cluster().link(1, 2).set_up(false);                  // chip 1 ch 2 <-> chip 2 ch 4
    FabricRunner runner(dev, p, *router);
    (void)fabric::test::expect_error(ErrorCategory::Fabric, [&] { runner.bring_up(1'000'000); });
    const auto all = runner.collect_events();
    const auto seen = descriptions(all, router_index(p, 1, FabricDir::East));
    REQUIRE(seen.size() == 5);
    CHECK(seen[3] == "state handshaking");
    // Its own wait for the peer ran out (no HAL call failed: no detail).
    CHECK((seen[4] == "state timeout at handshake_reply" ||
           seen[4] == "state timeout at handshake_send"));
    (void)runner.terminate(pf::Termination::Immediate, 1'000'000);
}

TEST_CASE("router events (sim): dropped packets with reason and seq, a full log counts the rest",
          "[fabric_runner][sim][events]") {
    REQUIRE_ROUTER(router);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1});
    FabricRunner runner(dev, p, *router);
    runner.bring_up(2'000'000);  // no sink: nothing collected, six states in each log
    const fabric::RouterPlacement& tx = p.routers[router_index(p, 0, FabricDir::East)];
    const size_t rx = router_index(p, 1, FabricDir::West);
    pf::PacketHeader h{};  // no magic: dropped by the receiving router
    h.payload_bytes = 16;
    h.send_type = static_cast<uint8_t>(pf::NocSendType::UnicastWrite);
    h.route = pf::route_unicast(1);
    const uint32_t bad = 40;
    for (uint32_t i = 0; i < bad; ++i) {
        h.seq = 1000 + i;
        push_header(dev, tx, i % tx.config.sender_slots[0], h);
        dev.step(30'000);
    }
    REQUIRE(runner.status()[rx].block.bad_packets == bad);
    auto all = runner.collect_events();
    auto seen = descriptions(all, rx);
    const uint32_t room = pf::kRouterEventRecords - 6;  // after the six start-up states
    REQUIRE(seen.size() == pf::kRouterEventRecords + 1);
    CHECK(seen[5] == "state ready_for_traffic");
    CHECK(seen[6] == "bad_packet magic on rx0 (seq 1000)");
    CHECK(seen[6 + room - 1] == fmt::format("bad_packet magic on rx0 (seq {})", 1000 + room - 1));
    CHECK(seen.back() == fmt::format("lost {} events (log full)", bad - room));
    CHECK(runner.events().lost() == bad - room);
    // Collected, the log has room again.
    h.seq = 7;
    push_header(dev, tx, bad % tx.config.sender_slots[0], h);
    dev.step(30'000);
    seen = descriptions(runner.collect_events(), rx);
    CHECK(seen == std::vector<std::string>{"bad_packet magic on rx0 (seq 7)"});
    (void)runner.terminate(pf::Termination::Graceful, 1'000'000);
}

namespace {

// The events of one router of kind `k`.
std::vector<fabric::RouterEventRecord> of_kind(const std::vector<fabric::RouterEventRecord>& all,
                                               size_t router, pf::RouterEventKind k) {
    std::vector<fabric::RouterEventRecord> out;
    for (const auto& r : all) {
        if (r.router == router && r.lost == 0 && r.event.kind == static_cast<uint16_t>(k))
            out.push_back(r);
    }
    return out;
}

// Cycles from `since` (device cycles) to the router's record (its clock is the device's).
uint32_t delay(const fabric::RouterEventRecord& r, uint64_t since) {
    return r.event.time - static_cast<uint32_t>(since);
}

// Worst case from the peer's last sign to the report: the silence bound, two poll intervals of
// an idle router (~2.5 us each: its last keep-alive left up to one before, and the silence is seen
// at a poll) and the link latency.
constexpr uint32_t kSilentReportBound = (pf::kRouterPeerSilentUs + 6) * 1000;
// Best case the other way: the peer's last keep-alive may have left up to a keep-alive period and
// a poll interval before it froze, so the report can come that much less than the silence bound
// after the freeze.
constexpr uint32_t kSilentReportLowBound =
    (pf::kRouterPeerSilentUs - pf::kRouterKeepAliveUs) * 1000 - 2500;
// The link status word is read at every poll of an idle router.
constexpr uint32_t kLinkWordBound = 3000;

}  // namespace

TEST_CASE("router events (sim): a silent peer is named within the bound, and heard again",
          "[fabric_runner][sim][events][link]") {
    REQUIRE_ROUTER(router);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1});
    FabricRunner runner(dev, p, *router);
    std::vector<fabric::RouterEventRecord> all;
    runner.on_events([&](std::span<const fabric::RouterEventRecord> fresh) {
        all.insert(all.end(), fresh.begin(), fresh.end());
    });
    runner.bring_up(2'000'000);
    const size_t east = router_index(p, 0, FabricDir::East);
    const size_t west = router_index(p, 1, FabricDir::West);
    // Idle, both keep each other alive: nothing to report.
    runner.monitor(50'000);
    CHECK(of_kind(all, east, pf::RouterEventKind::PeerSilent).empty());
    CHECK(of_kind(all, west, pf::RouterEventKind::PeerSilent).empty());

    SECTION("the peer router frozen, then thawed") {
        const uint64_t frozen_at = dev.cycles();
        dev.freeze_core(p.routers[west].core);
        runner.monitor(30'000);
        const auto silent = of_kind(all, east, pf::RouterEventKind::PeerSilent);
        REQUIRE(silent.size() == 1);
        CHECK(silent[0].event.value == 1);  // the peer's chip and channel
        CHECK(silent[0].event.channel == p.routers[west].eth_channel);
        CHECK(delay(silent[0], frozen_at) >= kSilentReportLowBound);
        CHECK(delay(silent[0], frozen_at) <= kSilentReportBound);
        const uint64_t thawed_at = dev.cycles();
        dev.thaw_core(p.routers[west].core);
        runner.monitor(20'000);
        const auto heard = of_kind(all, east, pf::RouterEventKind::PeerHeard);
        REQUIRE(heard.size() == 1);
        // Its first poll after the thaw sends a keep-alive (long due), which lands a link latency
        // later and is seen at our next poll: two polls (~1.6 us each when idle) and 0.5 us.
        CHECK(delay(heard[0], thawed_at) <= 5000);
        CHECK(heard[0].event.code >= thawed_at - frozen_at);
    }
    SECTION("the link down, then up: both ends name each other") {
        const uint32_t ch = p.routers[east].eth_channel;
        const uint64_t down_at = dev.cycles();
        dev.cluster().link(0, ch).set_up(false);
        runner.monitor(30'000);
        for (const size_t r : {east, west}) {
            const size_t other = r == east ? west : east;
            INFO(fabric::router_component_name(p.routers[r]));
            const auto silent = of_kind(all, r, pf::RouterEventKind::PeerSilent);
            REQUIRE(silent.size() == 1);
            CHECK(silent[0].event.value == p.routers[other].chip);
            CHECK(silent[0].event.channel == p.routers[other].eth_channel);
            CHECK(delay(silent[0], down_at) <= kSilentReportBound);
            // The link status word said so first: at the router's next poll.
            const auto down = of_kind(all, r, pf::RouterEventKind::LinkDown);
            REQUIRE(down.size() == 1);
            CHECK(down[0].event.code == hal::kWormholeB0.link_status.down);
            CHECK(down[0].event.value == p.routers[other].chip);
            CHECK(delay(down[0], down_at) <= kLinkWordBound);
        }
        const uint64_t up_at = dev.cycles();
        dev.cluster().link(0, ch).set_up(true);
        runner.monitor(20'000);
        for (const size_t r : {east, west}) {
            const auto heard = of_kind(all, r, pf::RouterEventKind::PeerHeard);
            REQUIRE(heard.size() == 1);
            // The keep-alives queued while it was down leave at once: one latency and a poll.
            CHECK(delay(heard[0], up_at) <= 5000);
            const auto up = of_kind(all, r, pf::RouterEventKind::LinkUp);
            REQUIRE(up.size() == 1);
            CHECK(up[0].event.code == hal::kWormholeB0.link_status.up);
            CHECK(delay(up[0], up_at) <= kLinkWordBound);
        }
    }
    // Both still routing, and they end cleanly.
    const auto fin = runner.terminate(pf::Termination::Graceful, 2'000'000);
    for (const auto& s : fin) {
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
    }
}

TEST_CASE("traffic account (sim): a 1D multicast whose packets a router drops on the way",
          "[fabric_runner][sim][account]") {
    REQUIRE_ROUTER(router);
    const auto traffic_elf = firmware("fabric_traffic");
    REQUIRE(traffic_elf);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1, 2, 3});
    FabricRunner runner(dev, p, *router);
    fabric::DropLog drops;
    runner.on_events([&](auto records) { drops.add(records, p); });
    runner.bring_up(5'000'000);
    fabric::FabricTrafficOptions o;
    o.pattern = fabric::FabricTrafficPattern::AllToAll;
    o.packets = 6;
    o.packet_bytes = 256;
    o.count_deliveries = true;
    auto t = fabric::plan_fabric_traffic(p, wh_soc(), *traffic_elf, o);
    REQUIRE(t.workers[0].dests == std::vector<fabric::ChipId>{1, 2, 3});
    // Chip 1 writes and forwards, chip 2 finds no action (dropped: route), chip 3 never sees it.
    t.workers[0].dest.route = 0x3u | (0x1u << 4);
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 20'000'000;
    const auto run = fabric::run_fabric_traffic(runner, t, lo);
    for (const auto& w : run.workers) CHECK(w.results.packets_sent == 6);
    (void)runner.terminate(pf::Termination::Graceful, 5'000'000);
    const auto delivered = fabric::read_fabric_delivered(dev, t);
    const auto a =
        fabric::account_traffic(fabric::fabric_flow_tallies(t, run.workers, delivered), drops);
    const auto& rx = p.router(2, FabricDir::West);
    CHECK(rx.eth_channel == 4);
    CHECK(a.flows[0].all_delivered());
    CHECK(a.flows[1].dropped == 6);
    CHECK(a.flows[2].dropped == 6);
    CHECK(a.accounted());
    CHECK(
        fabric::account_table(a) ==
        std::vector<std::string>{
            "flow                                        sent delivered dropped   lost duplicated  "
            "drops",
            "worker chip 0 core 1-1 (east) -> chip 2        6         0       6      0          "
            "0  route at chip 2 eth 4: 6 packets (0, 1, 2, 3, 4, 5)",
            "worker chip 0 core 1-1 (east) -> chip 3        6         0       6      0          "
            "0  route at chip 2 eth 4: 6 packets (0, 1, 2, 3, 4, 5)",
            "account: 12 flows, 72 sent, 60 delivered, 12 dropped, 0 lost"});
}

TEST_CASE(
    "timeouts (sim): a frozen downstream router stalls the packets for it: dropped and "
    "named (drop), or named and kept (hold)",
    "[fabric_runner][sim][timeout]") {
    REQUIRE_ROUTER(router);
    const auto traffic = firmware("fabric_traffic");
    REQUIRE(traffic);
    const bool drop = GENERATE(true, false);
    INFO((drop ? "drop" : "hold"));
    auto dev = device();
    fabric::FabricOptions o;
    o.topology = pf::Topology::Line;
    o.chips = {0, 1, 2};
    o.stall_timeout_us = 20;
    o.stall_action = drop ? pf::StallAction::Drop : pf::StallAction::Hold;
    const auto p = fabric::plan_fabric(t3k(), wh_soc(), o);
    REQUIRE(p.routers[0].config.stall_timeout_us == 20);
    const size_t west1 = router_index(p, 1, FabricDir::West);
    const size_t east1 = router_index(p, 1, FabricDir::East);
    const size_t west2 = router_index(p, 2, FabricDir::West);
    FabricRunner runner(dev, p, *router);
    runner.set_stall_cycles(1'000'000'000);  // the routers' own timeouts are under test here
    std::vector<fabric::RouterEventRecord> all;
    runner.on_events([&](std::span<const fabric::RouterEventRecord> fresh) {
        all.insert(all.end(), fresh.begin(), fresh.end());
        // Hold: the stall named, the frozen router comes back and everything flows on.
        if (!drop && !of_kind(all, west1, pf::RouterEventKind::Stalled).empty())
            dev.thaw_core(p.routers[east1].core);
    });
    runner.bring_up(2'000'000);
    // Chip 1's east router (the downstream of chip 1's west router, which forwards chip 0's
    // packets to chip 2) stops; chip 0 sends 200 packets two hops.
    dev.freeze_core(p.routers[east1].core);
    auto w = traffic_worker(p, *traffic, 0, FabricDir::East, 200, 256);
    w.dest.route = pf::route_unicast(2);
    fabric::LaunchOptions lo;
    lo.poll_cycles = 1'000;
    lo.max_cycles = 20'000'000;
    const std::vector<fabric::LaunchTarget> targets{w.target};
    const auto res = runner.run_workers(
        targets, lo, [&](const fabric::LaunchTarget&) { write_traffic_mailbox(dev, w); });
    REQUIRE(res[0].outcome == fabric::LaunchOutcome::Exited);
    CHECK(res[0].status.exit_status == 0);  // every packet pushed, every credit back
    dev.thaw_core(p.routers[east1].core);
    runner.monitor(200'000);
    if (drop) CHECK(runner.status()[west1].detail_name() == "bad_packet:timeout");
    const auto fin = runner.terminate(pf::Termination::Graceful, 5'000'000);
    for (const auto& s : fin) {
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
        CHECK(s.block.undrained == 0);
    }
    const auto stalled = of_kind(all, west1, pf::RouterEventKind::Stalled);
    REQUIRE(stalled.size() == 1);
    CHECK(stalled[0].event.channel == 0);  // rx0
    CHECK(stalled[0].event.code == 1);     // port 1: the downstream's ch1
    const auto drops = of_kind(all, west1, pf::RouterEventKind::BadPacket);
    const uint32_t dropped = fin[west1].block.bad_packets;
    CHECK(drops.size() == dropped);
    for (const auto& d : drops)
        CHECK(d.event.code == static_cast<uint32_t>(pf::BadPacket::Timeout));
    CHECK(runner.events().lost() == 0);
    // Every packet delivered at chip 2 or dropped at chip 1, never both: 200 in all.
    CHECK(fin[west2].block.delivered + dropped == 200);
    if (drop) {
        CHECK(dropped > 0);
    } else {
        CHECK(dropped == 0);
    }
}

// ---- control: pause, drain, resume (protocol/fabric.h RouterControl) -------------------------

namespace {

// Every counter traffic moves, of every router, for comparing two reads.
std::vector<uint32_t> traffic_counters(const std::vector<fabric::RouterSnapshot>& all) {
    std::vector<uint32_t> v;
    for (const auto& s : all) {
        const auto& b = s.block;
        v.insert(v.end(), std::begin(b.sent), std::end(b.sent));
        v.insert(v.end(), std::begin(b.completed), std::end(b.completed));
        v.insert(v.end(), std::begin(b.received), std::end(b.received));
        v.insert(v.end(), {b.delivered, b.forwarded, b.bad_packets});
        v.insert(v.end(), std::begin(s.control.taken), std::end(s.control.taken));
    }
    return v;
}

// The State events' codes of one router after it first reached ReadyForTraffic.
std::vector<std::string> states_after_ready(const std::vector<fabric::RouterEventRecord>& all,
                                            size_t router) {
    std::vector<std::string> out;
    bool ready = false;
    for (const auto& r : of_kind(all, router, pf::RouterEventKind::State)) {
        if (ready) out.push_back(fabric::router_status_name(r.event.code));
        ready = ready || r.event.code == static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic);
    }
    return out;
}

fabric::FabricTraffic all_to_all(const fabric::FabricPlan& p, const fabric::ElfImage& elf,
                                 uint32_t packets, uint32_t bytes) {
    fabric::FabricTrafficOptions o;
    o.pattern = fabric::FabricTrafficPattern::AllToAll;
    o.packets = packets;
    o.packet_bytes = bytes;
    o.timeout_us = 2'000;  // a worker that cannot finish fails fast
    o.count_deliveries = true;
    return fabric::plan_fabric_traffic(p, wh_soc(), elf, o);
}

}  // namespace

TEST_CASE(
    "control (sim): a pause mid-traffic holds every counter still, resumed the traffic "
    "completes exactly",
    "[fabric_runner][sim][control]") {
    REQUIRE_ROUTER(router);
    const auto traffic_elf = firmware("fabric_traffic");
    REQUIRE(traffic_elf);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1, 2, 3});
    FabricRunner runner(dev, p, *router);
    fabric::DropLog drops;
    std::vector<fabric::RouterEventRecord> all;
    runner.on_events([&](std::span<const fabric::RouterEventRecord> fresh) {
        drops.add(fresh, p);
        all.insert(all.end(), fresh.begin(), fresh.end());
    });
    runner.bring_up(5'000'000);
    const auto t = all_to_all(p, *traffic_elf, 200, 1024);
    // Cycles from the workers' release: pause, read every router twice, resume.
    constexpr uint64_t kPauseAt = 60'000, kFirstRead = 90'000, kSecondRead = 130'000,
                       kResumeAt = 140'000;
    std::vector<fabric::RouterSnapshot> first, second;
    runner.on_workers_released([&](uint64_t start) {
        dev.at_cycle(start + kPauseAt, [&] { runner.write_control(pf::RouterControl::Pause); });
        dev.at_cycle(start + kFirstRead, [&] { first = runner.status(); });
        dev.at_cycle(start + kSecondRead, [&] { second = runner.status(); });
        dev.at_cycle(start + kResumeAt, [&] { runner.write_control(pf::RouterControl::Run); });
    });
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 20'000'000;
    const auto run = fabric::run_fabric_traffic(runner, t, lo);
    REQUIRE(first.size() == p.routers.size());
    REQUIRE(second.size() == p.routers.size());
    uint64_t delivered_when_paused = 0;
    for (const auto& s : first) {
        INFO(s.describe());
        CHECK(s.status_name() == "ready_for_traffic");  // the firmware runs; the report says paused
        CHECK(s.control.state == static_cast<uint32_t>(pf::RouterControl::Pause));
        delivered_when_paused += s.block.delivered;
    }
    // Mid-traffic, and nothing moved while paused: the same values read twice, 40 us apart.
    CHECK(delivered_when_paused > 0);
    CHECK(delivered_when_paused < t.deliveries());
    CHECK(traffic_counters(first) == traffic_counters(second));
    for (const auto& w : run.workers) {
        INFO(fabric::outcome_name(w.launch.outcome));
        CHECK(w.results.packets_sent == 200);
    }
    (void)runner.terminate(pf::Termination::Graceful, 5'000'000);
    CHECK(fabric::check_fabric_landed(dev, t).empty());
    const auto a = fabric::account_traffic(
        fabric::fabric_flow_tallies(t, run.workers, fabric::read_fabric_delivered(dev, t)), drops);
    CHECK(a.all_delivered());
    CHECK(a.delivered == t.deliveries());
    for (size_t i = 0; i < p.routers.size(); ++i) {
        INFO(fabric::router_component_name(p.routers[i]));
        CHECK(states_after_ready(all, i) ==
              std::vector<std::string>{"paused", "ready_for_traffic", "draining", "terminated"});
    }
}

TEST_CASE(
    "control (sim): a link dies under traffic, the host drains both ends: every worker "
    "finishes, every packet delivered or dropped with its identity",
    "[fabric_runner][sim][control]") {
    REQUIRE_ROUTER(router);
    const auto traffic_elf = firmware("fabric_traffic");
    REQUIRE(traffic_elf);
    auto dev = device();
    const auto p = plan(pf::Topology::Line, {0, 1, 2});
    const size_t east1 = router_index(p, 1, FabricDir::East);
    const size_t west2 = router_index(p, 2, FabricDir::West);
    FabricRunner runner(dev, p, *router);
    runner.drain_on_link_down(true);
    fabric::DropLog drops;
    std::vector<fabric::RouterEventRecord> all;
    runner.on_events([&](std::span<const fabric::RouterEventRecord> fresh) {
        drops.add(fresh, p);
        all.insert(all.end(), fresh.begin(), fresh.end());
    });
    runner.bring_up(5'000'000);
    const auto t = all_to_all(p, *traffic_elf, 100, 1024);
    constexpr uint64_t kDownAt = 40'000;
    runner.on_workers_released([&](uint64_t start) {
        dev.at_cycle(start + kDownAt,
                     [&] { dev.cluster().link(1, p.routers[east1].eth_channel).set_up(false); });
    });
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 20'000'000;
    const auto run = fabric::run_fabric_traffic(runner, t, lo);
    for (const auto& w : run.workers) {
        INFO(fabric::outcome_name(w.launch.outcome));
        CHECK(w.results.packets_sent == 100);  // every packet pushed, every credit back
    }
    // Both ends, in the order their events reached the host.
    std::vector<size_t> drained = runner.drained_for_link_down();
    std::sort(drained.begin(), drained.end());
    CHECK(drained == std::vector<size_t>{std::min(east1, west2), std::max(east1, west2)});
    const size_t unacked = drops.unacked.size();
    fabric::resolve_link_down_drains(runner, drops, 1'000'000);
    const auto routers = runner.status();
    for (const size_t r : {east1, west2}) {
        INFO(routers[r].describe());
        CHECK(routers[r].control.state == static_cast<uint32_t>(pf::RouterControl::Drain));
        CHECK(routers[r].control.cut == 1);
    }
    CHECK(drops.unacked.empty());  // every one decided
    INFO(unacked << " unacked");
    // The rest of the fabric quiesces (its last deliveries land), then it ends: immediately, as
    // the cut routers cannot agree with their peers that they drained.
    const auto fin = runner.terminate(pf::Termination::Graceful, 5'000'000);
    for (const auto& s : fin) {
        INFO(s.describe());
        CHECK(s.status_name() == "terminated");
    }
    const auto a = fabric::account_traffic(
        fabric::fabric_flow_tallies(t, run.workers, fabric::read_fabric_delivered(dev, t)), drops);
    INFO(fmt::format("{}", fmt::join(fabric::account_table(a), "\n")));
    CHECK(a.accounted());
    CHECK(a.lost == 0);
    CHECK(a.duplicated == 0);
    CHECK(a.dropped > 0);
    CHECK(a.delivered + a.dropped == a.sent);
    // In flight when it died (the model is deterministic): chip 1 had sent 10 of its worker's
    // packets (ch0, positions 10..19) and 6 of chip 0's (ch1, 4..9) that were never completed,
    // and chip 2 11 of its worker's (10..20). Chip 2 had taken all of them (their completions
    // died on the link): delivered; chip 1 took chip 2's up to 17 (18..20 dropped, unacked; their
    // copies to chip 0 too).
    const auto positions = [&](size_t router, uint32_t channel) {
        std::vector<uint32_t> out;
        for (const auto& r : of_kind(all, router, pf::RouterEventKind::Unacked)) {
            if (r.event.channel == channel) out.push_back(r.event.code);
        }
        return out;
    };
    CHECK(positions(east1, 0) == std::vector<uint32_t>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19});
    CHECK(positions(east1, 1) == std::vector<uint32_t>{4, 5, 6, 7, 8, 9});
    CHECK(positions(west2, 0) == std::vector<uint32_t>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20});
    CHECK(fabric::account_table(a) ==
          std::vector<std::string>{
              "flow                                        sent delivered dropped   lost "
              "duplicated  drops",
              "worker chip 0 core 1-1 (east) -> chip 2      100        10      90      0          "
              "0  drained at chip 1 eth 2: 90 packets (10, 11, 12, 13, 14, 15, 16, 17 and 82 "
              "more)",
              "worker chip 1 core 1-1 (east) -> chip 2      100        20      80      0          "
              "0  drained at chip 1 eth 2: 80 packets (20, 21, 22, 23, 24, 25, 26, 27 and 72 "
              "more)",
              "worker chip 2 core 2-1 (west) -> chip 1      100        18      82      0          "
              "0  drained at chip 2 eth 4: 79 packets (21, 22, 23, 24, 25, 26, 27, 28 and 71 "
              "more); unacked at chip 2 eth 4: 3 packets (18, 19, 20)",
              "worker chip 2 core 2-1 (west) -> chip 0      100        18      82      0          "
              "0  drained at chip 2 eth 4: 79 packets (21, 22, 23, 24, 25, 26, 27, 28 and 71 "
              "more); unacked at chip 2 eth 4: 3 packets (18, 19, 20)",
              "account: 6 flows, 600 sent, 266 delivered, 334 dropped, 0 lost"});
    // Only the traffic over the dead link was dropped, and only by its two routers.
    for (const auto& d : drops.drops) {
        CHECK((d.chip == 1 || d.chip == 2));
        CHECK((d.reason == static_cast<uint32_t>(pf::BadPacket::Drained) ||
               d.reason == static_cast<uint32_t>(pf::BadPacket::Unacked)));
    }
}
