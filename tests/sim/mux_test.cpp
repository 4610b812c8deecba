// The fabric mux in the model (firmware/mux, protocol/fabric_mux.h): clients (mux_worker) on
// full-size and header-only channels of a mux on a Tensix core, the mux on the router's ch0 of a
// planned 1D fabric. Every case checks the delivered bytes, the mux's counters and statuses
// exactly; the seeds/001 regression runs the reduce-scatter shutdown scenario under seeded
// Ethernet stalls and delays, and shows that the old unbounded spin (fabric_mux_unfair) hangs in
// the same scenario.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fabric_sim.h"
#include "fw_harness.h"
#include "hal/encoding.h"
#include "protocol/fabric.h"
#include "protocol/fabric_mux.h"

using namespace fabric_sim;
using protocol::MuxWorkerArgs;
using protocol::MuxWorkerResults;

namespace {

// Worker L1: connection words, the master's done word, source buffers.
constexpr uint32_t kConnL1 = 0x18000;
constexpr uint32_t kDoneAddr = 0x18300;
constexpr uint32_t kSrcAddr = 0x19000;
// The receiving core: worker w's region and (header-only) counter.
constexpr uint32_t kRegion = 0x60000;
constexpr uint32_t kRegionStride = 0x8000;
constexpr uint32_t kSem = 0x50000;

// Tensix cores of a chip (NOC0) for the mux (i = 0) and its clients (i = 1, 2, ...), clear of the
// receiving core (x = kSinkX). Blackhole's row 1 is Ethernet: one row lower.
Core tensix(hal::Arch a, uint32_t chip, uint32_t i) {
    static constexpr uint32_t kXs[] = {1, 2, 4, 6, 7, 8, 9};
    return Core{chip, kXs[i % 7], 1 + i / 7 + (a == hal::Arch::Blackhole ? 1u : 0u)};
}

std::string hex(uint32_t v) {
    std::ostringstream o;
    o << "0x" << std::hex << v;
    return o.str();
}

// A fabric with one mux per chosen router.
class MuxSim {
  public:
    MuxSim(const std::string& cluster, const FabricOptions& o) : f_(cluster, o) {}

    FabricSim& fabric() { return f_; }
    Rig& rig() { return f_.rig(); }
    hal::Arch arch() { return rig().arch().arch; }

    // A mux config for the router of line position `index`, direction `d`.
    pf::MuxConfig config(uint32_t index, FabricDir d, uint32_t full, uint32_t full_slots,
                         uint32_t payload, uint32_t header = 0, uint32_t header_slots = 1) const {
        pf::MuxConfig c{};
        c.magic = pf::kMuxConfigMagic;
        c.version = pf::kProtocolVersion;
        c.full_channels = full;
        c.full_slots = full_slots;
        c.full_payload_bytes = payload;
        c.header_channels = header;
        c.header_slots = header_slots;
        c.header_every = 16;
        c.forward_wait_cycles = 128;
        c.teardown_check_every = 4;
        c.ready_timeout_us = 200;
        c.drain_timeout_us = 200;
        c.progress_timeout_us = 1'000;
        c.router_status_addr = f_.router(index, d).layout.status;
        c.downstream = f_.channel(index, d);
        return c;
    }

    pf::MuxLayout layout(const pf::MuxConfig& c) { return pf::mux_layout(rig().arch(), c); }

    // A mux image with its config as a kernel: config written, status and termination words
    // zeroed before it starts.
    Kernel mux_kernel(Core at, const pf::MuxConfig& c, const std::string& elf = "fabric_mux") {
        const pf::MuxLayout l = layout(c);
        Kernel k{at, elf, std::nullopt, {}};
        k.writes.emplace_back(l.config, bytes_of(c));
        k.writes.emplace_back(l.status, std::vector<uint8_t>(sizeof(pf::MuxStatusBlock), 0));
        k.writes.emplace_back(l.termination, std::vector<uint8_t>(4, 0));
        return k;
    }

    // Load (not release) a mux image with its config, as mux_kernel says.
    void load_mux(Core at, const pf::MuxConfig& c, const std::string& elf = "fabric_mux") {
        load_kernel(rig(), mux_kernel(at, c, elf));
    }

    pf::MuxStatusBlock status(Core at) {
        pf::MuxStatusBlock b{};
        const auto bytes = rig().read(at, layout(pf::MuxConfig{}).status, sizeof b);
        std::memcpy(&b, bytes.data(), sizeof b);
        return b;
    }
    void terminate(Core at, pf::Termination t) {
        rig().write32(at, layout(pf::MuxConfig{}).termination, static_cast<uint32_t>(t));
    }

    std::string describe(Core at) {
        const pf::MuxStatusBlock b = status(at);
        std::string s = "mux " + at.str() + ": status " + fabric::router_status_name(b.status) +
                        ", stage " + fabric::router_status_name(b.stage) + ", stuck at " +
                        fabric::router_wait_name(b.stuck_at) + ", detail " + hex(b.detail) +
                        ", heartbeat " + std::to_string(b.heartbeat) + ", forwarded";
        for (uint32_t c = 0; c < pf::kMuxMaxChannels && c < 8; ++c)
            s.append(" ").append(std::to_string(b.forwarded[c]));
        s += ", undrained " + std::to_string(b.undrained) + " (channels " +
             hex(b.undrained_channels) + "), connects " + std::to_string(b.connects) +
             ", teardowns " + std::to_string(b.teardowns) + ", giveups " +
             std::to_string(b.forward_giveups) + "\n  " + rig().describe(at);
        return s;
    }

  private:
    FabricSim f_;
};

struct Client {
    Core core;
    MuxWorkerArgs args;
};

// Client w of a mux channel, sending `count` packets to `sink` (route: one hop).
MuxWorkerArgs client_args(const pf::WorkerChannel& ch, uint32_t w, uint32_t count, uint32_t bytes,
                          Core sink, uint32_t seed, Core master, uint32_t workers, bool is_master) {
    MuxWorkerArgs a{};
    a.channel = ch;
    a.packet_count = count;
    a.packet_bytes = bytes;
    a.route = pf::route_unicast(1);
    a.dst_x = sink.x;
    a.dst_y = sink.y;
    const bool header_only = ch.payload_bytes == 0;
    a.dst_addr = header_only ? kSem + 16 * w : kRegion + w * kRegionStride;
    a.seed = seed;
    a.src_addr = kSrcAddr;
    a.conn_l1 = kConnL1;
    a.send_timeout_us = 2'000;
    a.close_timeout_us = 2'000;
    a.master_x = master.x;
    a.master_y = master.y;
    a.done_addr = kDoneAddr;
    a.workers = workers;
    a.flags = (is_master ? protocol::kMuxWorkerMaster : 0u) |
              (header_only ? protocol::kMuxWorkerHeaderOnly : 0u);
    return a;
}

// A client kernel: its args in the mailbox, the master's done word zeroed.
Kernel client_kernel(const Client& c) {
    Kernel k = mailbox_kernel(c.core, "mux_worker", c.args);
    k.writes.emplace_back(kDoneAddr, std::vector<uint8_t>(4, 0));
    return k;
}

void load_client(Rig& rig, const Client& c) {
    load_kernel(rig, client_kernel(c));
}

// Every byte (full-size) or the counter (header-only) client `a` left on `sink`.
void check_delivered(Rig& rig, Core sink, const MuxWorkerArgs& a, uint32_t packets) {
    INFO("client of mux channel at " << hex(a.channel.connection) << ", " << packets << " packets");
    if ((a.flags & protocol::kMuxWorkerHeaderOnly) != 0) {
        CHECK(rig.read32(sink, a.dst_addr) == packets);
        return;
    }
    for (uint32_t p = 0; p < std::min(packets, protocol::kMuxWorkerPositions); ++p) {
        INFO("position " << p);
        CHECK(rig.pattern_mismatches(sink, a.dst_addr + p * a.packet_bytes, a.packet_bytes,
                                     a.seed + p) == 0);
    }
}

bool all_exited(Rig& rig, const std::vector<Core>& cores) {
    for (const Core& c : cores) {
        if (rig.state(c) == sim::RunState::Running) return false;
    }
    return true;
}

// The line API through a mux: chip 0's east router published its line (one chip ahead on the
// two-chip line) and the mux passed it on, word for word, to every channel's connection block.
void check_line_passed_on(MuxSim& m, Core mux, const std::vector<Client>& clients) {
    const pf::LineInfoWords line{pf::LineInfo{.reach = 1, .dir = pf::kLine1D}};
    const std::vector<uint32_t> want(line.w, line.w + 3);
    const auto& router = m.fabric().router(0, FabricDir::East);
    const uint32_t at = offsetof(pf::WorkerConnectionInfo, line);
    CHECK(m.rig().read_words(Core::at(router.core), router.layout.connection + at, 3) == want);
    for (const Client& c : clients) {
        CHECK(m.rig().read_words(mux, c.args.channel.connection + at, 3) == want);
    }
}

// One mux on chip 0's east router with `full` full-size and `header` header-only channels, one
// client each, `count` packets per client; graceful termination by client 0.
// `on_eth`: the mux on an idle Ethernet core of chip 0 instead of a Tensix core.
void deliver_case(const std::string& cluster, uint32_t full, uint32_t header, uint32_t slots,
                  uint32_t count, bool on_eth = false) {
    MuxSim m(cluster, line_options({0, 1}, 2048));
    const hal::Arch a = m.arch();
    m.fabric().start();
    const uint32_t busy_eth = m.fabric().router(0, FabricDir::East).eth_channel;
    const Core mux = on_eth ? m.rig().eth(m.fabric().chip(0), busy_eth == 15 ? 14 : 15)
                            : tensix(a, m.fabric().chip(0), 0);
    const Core sink{m.fabric().chip(1), kSinkX, sink_y(a)};
    const pf::MuxConfig cfg = m.config(0, FabricDir::East, full, slots, 1024, header, slots);
    std::vector<Kernel> kernels = {m.mux_kernel(mux, cfg)};
    std::vector<Client> clients;
    const Core master = tensix(a, mux.chip, 1);
    for (uint32_t w = 0; w < full + header; ++w) {
        const pf::WorkerChannel ch = pf::mux_channel(m.rig().arch(), cfg, w, mux.x, mux.y);
        clients.push_back(
            {tensix(a, mux.chip, 1 + w),
             client_args(ch, w, count, 1024, sink, 1000 * (w + 1), master, full + header, w == 0)});
        kernels.push_back(client_kernel(clients.back()));
    }
    // On failure: the mux, and each client with its connection block and pushed stream.
    const auto story = [&] {
        std::string s = m.describe(mux) + "\n";
        for (const Client& c : clients) {
            s += m.rig().describe(c.core) + "\n  block:";
            for (uint32_t v : m.rig().read_words(mux, c.args.channel.connection, 24))
                s.append(" ").append(hex(v));  // not operator+: GCC 12 -O3 -Wrestrict
            s += " pushed stream " +
                 hex(m.rig().read32(mux,
                                    hal::stream::reg_addr(
                                        c.args.channel.pushed_stream,
                                        hal::kWormholeB0.stream.remote_dest_buf_space_available)));
            s += "\n";
        }
        return s;
    };
    m.fabric().run_workers(kernels, 20'000'000, story);
    check_line_passed_on(m, mux, clients);
    const pf::MuxStatusBlock b = m.status(mux);
    CHECK(m.rig().exit_code(mux) == 0);
    CHECK(b.status == static_cast<uint32_t>(RouterStatus::Terminated));
    CHECK(b.stage == static_cast<uint32_t>(RouterStatus::Draining));
    CHECK(b.undrained == 0);
    CHECK(b.undrained_channels == 0);
    CHECK(b.bad_packets == 0);
    CHECK(b.connects == full + header);
    CHECK(b.teardowns == full + header);
    for (uint32_t w = 0; w < full + header; ++w) CHECK(b.forwarded[w] == count);
    REQUIRE(m.rig().drain_links());
    m.fabric().stop_graceful();
    for (const Client& c : clients) check_delivered(m.rig(), sink, c.args, count);
    const auto r = m.fabric().status(m.fabric().router(0, FabricDir::East));
    CHECK(r.sent[0] == (full + header) * count);
}

}  // namespace

TEST_CASE("mux: full-size and header-only clients deliver every byte through one router channel",
          "[sim][mux]") {
    SECTION("Wormhole: 4 full-size + 2 header-only channels, 2 slots each") {
        deliver_case("n300_cluster.yaml", 4, 2, 2, 24);
    }
    SECTION("Wormhole: 8 full-size channels, one slot each") {
        deliver_case("n300_cluster.yaml", 8, 0, 1, 12);
    }
    SECTION("Wormhole: the mux on an idle Ethernet core") {
        deliver_case("n300_cluster.yaml", 2, 1, 2, 16, true);
    }
    SECTION("Blackhole (staged credit and teardown words): 2 full-size + 1 header-only") {
        deliver_case(blackhole_chain_cluster(2), 2, 1, 2, 16);
    }
}

TEST_CASE("mux: an invalid config is refused with the reason", "[sim][mux]") {
    MuxSim m("n300_cluster.yaml", line_options({0, 1}, 2048));
    const Core mux = tensix(m.arch(), 0, 0);
    const pf::MuxConfig good = m.config(0, FabricDir::East, 2, 1, 1024);
    struct Bad {
        const char* what;
        pf::MuxConfig c;
        pf::MuxConfigCheck why;
    };
    std::vector<Bad> bad;
    pf::MuxConfig c = good;
    c.magic = 0;
    bad.push_back({"magic", c, pf::MuxConfigCheck::Magic});
    c = good;
    c.full_channels = 0;
    bad.push_back({"no channels", c, pf::MuxConfigCheck::Channels});
    c = good;
    c.full_channels = 12;
    c.header_channels = 5;
    bad.push_back({"17 channels", c, pf::MuxConfigCheck::Channels});
    c = good;
    c.full_slots = pf::kMuxMaxSlots + 1;
    bad.push_back({"too many slots", c, pf::MuxConfigCheck::Slots});
    c = good;
    c.full_payload_bytes = 4096;
    bad.push_back({"payload above the router's", c, pf::MuxConfigCheck::PayloadBytes});
    c = good;
    c.full_payload_bytes = 1000;
    bad.push_back({"payload not a multiple of 16", c, pf::MuxConfigCheck::PayloadBytes});
    c = good;
    c.downstream.router_x = 200;
    bad.push_back({"router coordinates", c, pf::MuxConfigCheck::Downstream});
    c = good;
    c.drain_timeout_us = 0;
    bad.push_back({"zero timeout", c, pf::MuxConfigCheck::Timeouts});
    c = good;
    c.header_every = 0;
    bad.push_back({"header_every 0", c, pf::MuxConfigCheck::Schedule});
    c = good;
    c.full_channels = 16;
    c.full_slots = 16;
    bad.push_back({"slots beyond L1", c, pf::MuxConfigCheck::Layout});
    for (const Bad& b : bad) {
        INFO(b.what);
        m.load_mux(mux, b.c);
        m.rig().release(mux);
        REQUIRE(m.rig().run_until([&] { return m.rig().state(mux) != sim::RunState::Running; },
                                  200'000, 64));
        const pf::MuxStatusBlock s = m.status(mux);
        CHECK(s.status == static_cast<uint32_t>(RouterStatus::ConfigInvalid));
        CHECK(s.stage == static_cast<uint32_t>(RouterStatus::Started));
        CHECK(s.detail == static_cast<uint32_t>(b.why));
        CHECK(m.rig().exit_code(mux) != 0);
    }
}

TEST_CASE("mux: a router that is never ready: the mux times out saying so", "[sim][mux]") {
    MuxSim m("n300_cluster.yaml", line_options({0, 1}, 2048));
    m.fabric().start_routers();  // routers handshake but nobody writes their ready word
    const Core mux = tensix(m.arch(), 0, 0);
    pf::MuxConfig c = m.config(0, FabricDir::East, 2, 1, 1024);
    c.ready_timeout_us = 50;
    m.load_mux(mux, c);
    m.rig().release(mux);
    REQUIRE(m.rig().run_until([&] { return m.rig().state(mux) != sim::RunState::Running; }, 500'000,
                              64));
    const pf::MuxStatusBlock s = m.status(mux);
    INFO(m.describe(mux));
    CHECK(s.status == static_cast<uint32_t>(RouterStatus::Timeout));
    CHECK(s.stage == static_cast<uint32_t>(RouterStatus::StreamsInitialized));
    CHECK(s.stuck_at == static_cast<uint32_t>(pf::RouterWait::RouterReady));
    (void)m.fabric().runner().terminate(pf::Termination::Immediate, 1'000'000);
}

TEST_CASE("mux: a bad header from a client is dropped, counted and its slot returned",
          "[sim][mux]") {
    MuxSim m("n300_cluster.yaml", line_options({0, 1}, 2048));
    m.fabric().start();
    const Core mux = tensix(m.arch(), 0, 0);
    const pf::MuxConfig c = m.config(0, FabricDir::East, 1, 2, 1024, 1, 2);
    const pf::MuxLayout l = m.layout(c);
    m.load_mux(mux, c);
    m.rig().release(mux);
    REQUIRE(m.rig().run_until(
        [&] {
            return m.status(mux).status == static_cast<uint32_t>(RouterStatus::ReadyForTraffic);
        },
        500'000, 64));
    // The host plays the client: a header in a slot, then +1 on the channel's pushed stream.
    const auto push = [&](uint32_t channel, uint32_t slot, const pf::PacketHeader& h) {
        const pf::WorkerChannel ch = pf::mux_channel(m.rig().arch(), c, channel, mux.x, mux.y);
        std::vector<uint8_t> bytes(sizeof h);
        std::memcpy(bytes.data(), &h, sizeof h);
        m.rig().write(mux, ch.slots_base + slot * ch.slot_bytes, bytes);
        m.rig().write32(
            mux,
            hal::stream::reg_addr(ch.pushed_stream,
                                  hal::kWormholeB0.stream.remote_dest_buf_space_available_update),
            hal::stream::encode_words_free_delta(1));
        m.rig().run(20'000);
    };
    pf::PacketHeader h{};
    h.payload_bytes = 64;
    h.route = pf::route_unicast(1);
    push(0, 0, h);  // no magic
    CHECK(m.status(mux).bad_packets == 1);
    CHECK(m.status(mux).detail == static_cast<uint32_t>(pf::MuxBadPacket::Magic));
    h.magic = pf::kHeaderMagic;
    h.payload_bytes = 1040;  // more than the channel's slot
    push(0, 1, h);
    CHECK(m.status(mux).bad_packets == 2);
    CHECK(m.status(mux).detail == static_cast<uint32_t>(pf::MuxBadPacket::PayloadBytes));
    h.payload_bytes = 16;  // any payload on a header-only channel
    push(1, 0, h);
    CHECK(m.status(mux).bad_packets == 3);
    CHECK(m.status(mux).detail == static_cast<uint32_t>(pf::MuxBadPacket::PayloadBytes));
    // Nothing went to the router; the slots were freed (recorded for the next opener).
    m.terminate(mux, pf::Termination::Graceful);
    REQUIRE(m.rig().run_until([&] { return m.rig().state(mux) != sim::RunState::Running; }, 500'000,
                              64));
    const pf::MuxStatusBlock s = m.status(mux);
    CHECK(s.status == static_cast<uint32_t>(RouterStatus::Terminated));
    CHECK(s.undrained == 0);
    CHECK(s.forwarded[0] == 0);
    CHECK(s.forwarded[1] == 0);
    CHECK(m.rig().read32(mux, l.connection + offsetof(pf::WorkerConnectionInfo, freed)) == 2);
    CHECK(m.rig().read32(mux, l.connection + sizeof(pf::WorkerConnectionInfo) +
                                  offsetof(pf::WorkerConnectionInfo, freed)) == 1);
    m.fabric().stop_graceful();
    CHECK(m.fabric().status(m.fabric().router(0, FabricDir::East)).sent[0] == 0);
}

namespace {

// Two clients with one slot each behind a mux whose router's link is down: they fill what they
// can; returns the set-up for the termination cases.
struct StalledMux {
    MuxSim m{"n300_cluster.yaml", [] {
                 FabricOptions o = line_options({0, 1}, 2048);
                 o.sender_slots = 2;
                 o.receiver_slots = 4;
                 return o;
             }()};
    Core mux, sink;
    pf::MuxConfig cfg;
    std::vector<Client> clients;

    explicit StalledMux(uint32_t count, bool close_timeout_long) {
        const hal::Arch a = m.arch();
        m.fabric().start();
        mux = tensix(a, 0, 0);
        sink = Core{1, kSinkX, sink_y(a)};
        cfg = m.config(0, FabricDir::East, 2, 1, 1024);
        m.load_mux(mux, cfg);
        const Core master = tensix(a, 0, 1);
        for (uint32_t w = 0; w < 2; ++w) {
            MuxWorkerArgs args = client_args(pf::mux_channel(m.rig().arch(), cfg, w, mux.x, mux.y),
                                             w, count, 1024, sink, 77 * (w + 1), master, 2, w == 0);
            args.send_timeout_us = 100'000;
            if (close_timeout_long) args.close_timeout_us = 100'000;
            clients.push_back({tensix(a, 0, 1 + w), args});
            load_client(m.rig(), clients.back());
        }
        link().set_up(false);
        m.rig().release(mux);
        for (const Client& c : clients) m.rig().release(c.core);
    }
    sim::eth::Link& link() {
        return m.rig().link(FabricSim::core(m.fabric().router(0, FabricDir::East)));
    }
};

}  // namespace

TEST_CASE("mux: immediate termination exits while the router is stalled, reporting what was left",
          "[sim][mux][termination]") {
    StalledMux s(6, true);
    Rig& rig = s.m.rig();
    rig.run(200'000);  // the router's two ch0 slots and both mux slots fill; the clients wait
    REQUIRE(rig.state(s.mux) == sim::RunState::Running);
    CHECK(s.m.status(s.mux).status == static_cast<uint32_t>(RouterStatus::ReadyForTraffic));
    const uint64_t t0 = rig.cluster().cycle();
    s.m.terminate(s.mux, pf::Termination::Immediate);
    REQUIRE(rig.run_until([&] { return rig.state(s.mux) != sim::RunState::Running; }, 100'000, 16));
    const uint64_t exit_cycles = rig.cluster().cycle() - t0;
    INFO(s.m.describe(s.mux));
    const pf::MuxStatusBlock b = s.m.status(s.mux);
    CHECK(b.status == static_cast<uint32_t>(RouterStatus::Terminated));
    CHECK(rig.exit_code(s.mux) == 0);
    CHECK(b.forwarded[0] + b.forwarded[1] == 2);  // what the router's two slots took
    CHECK(b.undrained == 2);                      // one in each mux slot
    CHECK(b.undrained_channels == 0b11);
    CHECK(exit_cycles < 20'000);
    // The clients' waits escape on their termination words; the link comes back and the router
    // delivers what the mux had forwarded.
    for (const Client& c : s.clients) rig.terminate(c.core);
    REQUIRE(rig.run_until(
        [&] {
            return all_exited(rig, {s.clients[0].core, s.clients[1].core});
        },
        100'000, 64));
    s.link().set_up(true);
    REQUIRE(rig.drain_links());
    rig.run(50'000);
    s.m.fabric().stop_graceful();
    CHECK(s.m.fabric().status(s.m.fabric().router(0, FabricDir::East)).sent[0] == 2);
}

TEST_CASE("mux: closes are answered and graceful drain is bounded while the router is stalled",
          "[sim][mux][termination]") {
    StalledMux s(2, false);
    Rig& rig = s.m.rig();
    std::vector<Core> cores = {s.mux, s.clients[0].core, s.clients[1].core};
    // Two packets each: the first of each fills the router's two ch0 slots, the second stays in
    // its mux slot. The clients close (answered although nothing can move), the master
    // terminates the mux, whose drain runs out (200 us) with the link still down.
    const bool done = rig.run_until([&] { return all_exited(rig, cores); }, 2'000'000, 256);
    INFO(s.m.describe(s.mux));
    std::string story;
    for (const Client& c : s.clients) story += rig.describe(c.core) + "\n";
    INFO(story);
    REQUIRE(done);
    const pf::MuxStatusBlock b = s.m.status(s.mux);
    for (const Client& c : s.clients) {
        REQUIRE_KERNEL_PASSED(rig, c.core);
        const auto r = rig.results<MuxWorkerResults>(c.core);
        // A close waits at most teardown_check_every + 1 rounds (protocol/fabric_mux.h), plus
        // the NoC trips of the request and the answer.
        CHECK(r.close_cycles <= (s.cfg.teardown_check_every + 1) * b.round_max_cycles + 2'000);
        CHECK(r.close_cycles < 10'000);
    }
    CHECK(b.status == static_cast<uint32_t>(RouterStatus::Terminated));
    CHECK(b.stuck_at == static_cast<uint32_t>(pf::RouterWait::Drain));
    CHECK(b.teardowns == 2);
    CHECK(b.forwarded[0] == 1);
    CHECK(b.forwarded[1] == 1);
    CHECK(b.undrained == 2);
    CHECK(b.undrained_channels == 0b11);
    s.link().set_up(true);
    REQUIRE(rig.drain_links());
    rig.run(50'000);
    s.m.fabric().stop_graceful();
    // What the mux forwarded arrived byte for byte.
    for (const Client& c : s.clients) check_delivered(rig, s.sink, c.args, 1);
}

// ---- the seeds/001 regression ------------------------------------------------------------------
//
// Both chips of an n300, each with a mux on its router's ch0: two full-size channels with one slot
// each, one client per channel sending 2..6 packets of 1 KiB to the other chip, closing within
// 10 us, then telling its termination master (client 0), which gracefully terminates the mux once
// both are done. The link between the chips stalls at random (seeded): in half the iterations one
// long stall of 15..50 us starting while the clients send, plus up to three short stalls of
// 0.1..3 us and, in 30 % of iterations, 0..2 us of extra link latency. A hang is an iteration whose
// cores have not all finished within kIterationBudget cycles, a client that gave up (its close not
// answered in time, its slot or done wait run out) or a mux that did not end Terminated; it is
// reported with every stuck core and its status. Every packet of a finished iteration is checked
// byte for byte on the other chip.
namespace {

constexpr uint64_t kIterationBudget = 400'000;

struct RegressionResult {
    uint32_t iterations = 0;
    uint32_t hangs = 0;
    uint32_t long_stalls = 0;
    uint64_t cycles = 0;  // simulated, all iterations
    uint32_t max_close_cycles = 0;
    std::string first_hang;
};

struct Stall {
    uint64_t start, length;
};

class Regression {
  public:
    explicit Regression(const std::string& mux_elf) : elf_(mux_elf) {
        m_.fabric().start();
        const hal::Arch a = m_.arch();
        for (uint32_t side = 0; side < 2; ++side) {
            Side& s = sides_[side];
            const FabricDir d = side == 0 ? FabricDir::East : FabricDir::West;
            s.mux = tensix(a, m_.fabric().chip(side), 0);
            s.sink = Core{m_.fabric().chip(1 - side), kSinkX, sink_y(a)};
            s.cfg = m_.config(side, d, 2, 1, 1024);
            s.cfg.drain_timeout_us = 150;
            for (uint32_t w = 0; w < 2; ++w) s.clients[w] = tensix(a, s.mux.chip, 1 + w);
        }
    }

    sim::eth::Link& link() {
        return m_.rig().link(FabricSim::core(m_.fabric().router(0, FabricDir::East)));
    }

    // One iteration; returns the hang report ("" when it finished cleanly).
    std::string iteration(uint64_t seed, RegressionResult& out) {
        Rig& rig = m_.rig();
        std::mt19937_64 rng(seed);
        const auto uniform = [&](uint64_t lo, uint64_t hi) {
            return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
        };
        std::vector<Stall> stalls;
        if (uniform(0, 1) == 1) {
            stalls.push_back({uniform(0, 8'000), uniform(15'000, 50'000)});
            ++out.long_stalls;
        }
        for (uint64_t n = uniform(0, 3); n > 0; --n)
            stalls.push_back({uniform(0, 15'000), uniform(100, 3'000)});
        const uint32_t delay = uniform(0, 9) < 3 ? static_cast<uint32_t>(uniform(0, 2'000)) : 0;

        std::vector<Core> cores, client_cores;
        std::vector<MuxWorkerArgs> args;
        for (uint32_t side = 0; side < 2; ++side) {
            Side& s = sides_[side];
            m_.load_mux(s.mux, s.cfg, elf_);
            cores.push_back(s.mux);
            for (uint32_t w = 0; w < 2; ++w) {
                const pf::WorkerChannel ch =
                    pf::mux_channel(rig.arch(), s.cfg, w, s.mux.x, s.mux.y);
                MuxWorkerArgs a = client_args(
                    ch, 2 * side + w, static_cast<uint32_t>(uniform(2, 6)), 1024, s.sink,
                    static_cast<uint32_t>(seed * 8 + 2 * side + w), s.clients[0], 2, w == 0);
                a.send_timeout_us = 200;
                a.close_timeout_us = 10;
                load_client(rig, {s.clients[w], a});
                cores.push_back(s.clients[w]);
                client_cores.push_back(s.clients[w]);
                args.push_back(a);
            }
        }
        link().set_extra_delay(delay);
        const uint64_t t0 = rig.cluster().cycle();
        for (const Core& c : cores) rig.release(c);

        // Run to the end, switching the link at the stall edges (overlapping stalls nest).
        std::vector<std::pair<uint64_t, int>> edges;
        for (const Stall& st : stalls) {
            edges.push_back({st.start, +1});
            edges.push_back({st.start + st.length, -1});
        }
        std::sort(edges.begin(), edges.end());
        int down = 0;
        size_t next = 0;
        const auto finished = [&] { return all_exited(rig, cores); };
        // A client that gave up is a hang at once: the report shows the mux as it is then.
        const auto finished_or_failed = [&] {
            for (const Core& c : client_cores) {
                if (rig.state(c) != sim::RunState::Running && !rig.passed(c)) return true;
            }
            return finished();
        };
        bool done = false;
        while (true) {
            const uint64_t now = rig.cluster().cycle() - t0;
            const uint64_t until = next < edges.size()
                                       ? std::min(edges[next].first, kIterationBudget)
                                       : kIterationBudget;
            done = until > now ? rig.run_until(finished_or_failed, until - now, 64)
                               : finished_or_failed();
            if (done || next >= edges.size() || until >= kIterationBudget) break;
            down += edges[next++].second;
            link().set_up(down == 0);
        }
        out.cycles += rig.cluster().cycle() - t0;
        link().set_up(true);
        link().set_extra_delay(0);

        std::string report;
        for (uint32_t side = 0; side < 2; ++side) {
            const Side& s = sides_[side];
            const pf::MuxStatusBlock b = m_.status(s.mux);
            if (rig.state(s.mux) == sim::RunState::Running ||
                b.status != static_cast<uint32_t>(RouterStatus::Terminated) || b.undrained != 0) {
                report += "  " + m_.describe(s.mux) + "\n";
            }
            for (uint32_t w = 0; w < 2; ++w) {
                if (!rig.passed(s.clients[w])) {
                    report += "  client of mux channel " + std::to_string(w) + ": " +
                              rig.describe(s.clients[w]) + "\n";
                } else {
                    out.max_close_cycles =
                        std::max(out.max_close_cycles,
                                 rig.results<MuxWorkerResults>(s.clients[w]).close_cycles);
                }
            }
        }
        if (!report.empty()) {
            std::string faults;
            for (const Stall& st : stalls)
                faults += " stall " + std::to_string(st.start) + "+" + std::to_string(st.length);
            report = "seed " + std::to_string(seed) + (done ? "" : " (cycle budget exceeded)") +
                     " at cycle " + std::to_string(rig.cluster().cycle() - t0) +
                     ", faults:" + faults + ", extra delay " + std::to_string(delay) + "\n" +
                     report;
            // Free whatever is stuck (the link is up again), so the next iteration starts clean.
            for (uint32_t side = 0; side < 2; ++side) {
                m_.terminate(sides_[side].mux, pf::Termination::Immediate);
                for (const Core& c : sides_[side].clients) rig.terminate(c);
            }
            REQUIRE(rig.run_until(finished, 2'000'000, 256));
        }
        // Settle: every packet the muxes handed to their routers has been delivered on the other
        // chip (a router may still hold the last ones in its ch0 slots when the cores are done).
        for (uint32_t side = 0; side < 2; ++side) {
            const pf::MuxStatusBlock b = m_.status(sides_[side].mux);
            for (uint32_t c = 0; c < 2; ++c) forwarded_total_ += b.forwarded[c];
        }
        const bool settled =
            rig.run_until([&] { return delivered_total() == forwarded_total_; }, 2'000'000, 1024);
        INFO("seed " << seed << ": delivered " << delivered_total() << " of " << forwarded_total_);
        REQUIRE(settled);
        if (report.empty()) {
            for (uint32_t i = 0; i < args.size(); ++i) {
                const Core sink = sides_[i / 2].sink;
                for (uint32_t p = 0;
                     p < std::min(args[i].packet_count, protocol::kMuxWorkerPositions); ++p) {
                    if (rig.pattern_mismatches(sink, args[i].dst_addr + p * 1024, 1024,
                                               args[i].seed + p) != 0) {
                        report += "seed " + std::to_string(seed) + ": client " + std::to_string(i) +
                                  " packet " + std::to_string(p) + " corrupted or lost\n";
                    }
                }
            }
        }
        return report;
    }

  private:
    struct Side {
        Core mux, sink;
        pf::MuxConfig cfg;
        Core clients[2];
    };

    // Packets delivered on either chip so far (the routers publish once idle).
    uint64_t delivered_total() {
        uint64_t n = 0;
        for (const RouterPlacement& p : m_.fabric().plan().routers)
            n += m_.fabric().status(p).delivered;
        return n;
    }

    MuxSim m_{"n300_cluster.yaml", [] {
                  FabricOptions o = line_options({0, 1}, 2048);
                  o.sender_slots = 2;
                  o.receiver_slots = 4;
                  return o;
              }()};
    std::string elf_;
    Side sides_[2];
    uint64_t forwarded_total_ = 0;  // packets both muxes forwarded, all iterations so far
};

// `iterations` seeded iterations (seeds first_seed, first_seed + 1, ...); stops early after
// `stop_after_hangs` hangs (0: never).
RegressionResult run_regression(const std::string& elf, uint32_t iterations, uint64_t first_seed,
                                uint32_t stop_after_hangs) {
    Regression r(elf);
    RegressionResult out;
    for (uint32_t i = 0; i < iterations; ++i) {
        const std::string report = r.iteration(first_seed + i, out);
        ++out.iterations;
        if (out.iterations % 10'000 == 0) {  // long runs: progress
            std::printf("  %u iterations, %u hangs\n", out.iterations, out.hangs);
            std::fflush(stdout);
        }
        if (!report.empty()) {
            if (std::getenv("MUX_REGRESSION_PRINT_HANGS") !=
                nullptr) {  // long runs: each as it happens
                std::printf("hang:\n%s", report.c_str());
                std::fflush(stdout);
            }
            if (out.hangs == 0) out.first_hang = report;
            ++out.hangs;
            if (stop_after_hangs != 0 && out.hangs >= stop_after_hangs) break;
        }
    }
    return out;
}

uint64_t env_u64(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

uint32_t env_iterations(const char* name, uint32_t fallback) {
    const char* v = std::getenv(name);
    return v != nullptr ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : fallback;
}

void print(const char* what, const RegressionResult& r) {
    std::printf(
        "%s: %u iterations (%u with a long stall), %u hangs, %.1f M simulated cycles, longest "
        "close %u cycles\n",
        what, r.iterations, r.long_stalls, r.hangs, r.cycles / 1e6, r.max_close_cycles);
    if (!r.first_hang.empty()) std::printf("first hang:\n%s", r.first_hang.c_str());
}

}  // namespace

// MUX_REGRESSION_ITERATIONS and MUX_REGRESSION_FIRST_SEED override the count and the seeds (the
// documented 100,000-iteration run).
TEST_CASE("mux regression (seeds/001): seeded Ethernet stalls, zero hangs",
          "[sim][mux][regression]") {
    const RegressionResult r =
        run_regression("fabric_mux", env_iterations("MUX_REGRESSION_ITERATIONS", 1'000),
                       env_u64("MUX_REGRESSION_FIRST_SEED", 1), 0);
    print("fair mux", r);
    INFO(r.first_hang);
    CHECK(r.hangs == 0);
    CHECK(r.long_stalls > 0);
    // Every close answered well inside the clients' 10 us.
    CHECK(r.max_close_cycles < 5'000);
}

TEST_CASE("mux regression: the old unbounded per-channel spin is caught",
          "[sim][mux][regression]") {
    const RegressionResult r = run_regression("fabric_mux_unfair", 100, 1, 3);
    print("unfair mux (test-only variant)", r);
    REQUIRE(r.hangs >= 1);
    // The report names the client whose close went unanswered and the mux with its status.
    CHECK(r.first_hang.find("stuck_at 0x803") != std::string::npos);
    CHECK(r.first_hang.find("mux chip") != std::string::npos);
    CHECK(r.first_hang.find("stuck at router_slot") != std::string::npos);
}
