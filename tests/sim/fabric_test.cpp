// The 1D fabric in the model: fabric_router on the Ethernet cores of a line or ring planned by the
// host (fabric::plan_fabric over the shipped cluster descriptors) and brought up, run and
// terminated by the host's FabricRunner (fabric_sim.h), worker kernels (fabric_traffic,
// fabric_conn_stress) on Tensix cores sending through the worker adapter. Every test checks the
// delivered bytes, the counters and the router statuses exactly, and ends with a termination
// every router must answer (graceful: nothing left undrained).
#include "protocol/fabric.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/soc_descriptor.h"
#include "fabric_sim.h"
#include "fw_harness.h"
#include "hal/encoding.h"
#include "hal/status.h"

namespace pf = protocol::fabric;
using fabric::FabricDir;
using fabric::FabricOptions;
using fabric::RouterPlacement;
using pf::NocSendType;
using pf::RouterStatus;
using protocol::FabricDest;
using protocol::FabricTrafficArgs;
using protocol::FabricTrafficResults;
using simfw::Core;
using simfw::Rig;
using namespace fabric_sim;

namespace {

// Worker L1 (the kernels' side): connection words, destination list, source buffers.
constexpr uint32_t kConnL1 = 0x18000;
constexpr uint32_t kDestsAddr = 0x18200;
constexpr uint32_t kTokenAddr = 0x18300;
constexpr uint32_t kSrcAddr = 0x19000;
// Receiving cores: destination regions and counters, far above anything a kernel uses.
constexpr uint32_t kRegion = 0x60000;
constexpr uint32_t kSem = 0x50000;

// The T3000 chips as one chain: 0-1-2-3 on the top boards, 3-7 across, 7-6-5-4 back (and 4-0 closes
// the ring).
const std::vector<fabric::ChipId> kT3kChain = {0, 1, 2, 3, 7, 6, 5, 4};

FabricTrafficArgs traffic_args(const pf::WorkerChannel& ch, NocSendType t, uint32_t bytes,
                               uint32_t count, uint32_t dests, uint32_t slots) {
    FabricTrafficArgs a{};
    a.channel = ch;
    a.send_type = static_cast<uint32_t>(t);
    a.packet_bytes = bytes;
    a.packet_count = count;
    a.num_dests = dests;
    a.dest_slots = slots;
    a.dests_addr = kDestsAddr;
    a.src_addr = kSrcAddr;
    a.conn_l1 = kConnL1;
    a.timeout_us = 20'000;
    a.flags = protocol::kFabricFlush;
    a.scatter_chunks = 3;
    a.scatter_gap = 0x8000;
    return a;
}

FabricDest dest(uint32_t route, Core at, uint32_t addr, uint32_t seed, uint32_t sem_addr) {
    FabricDest d{};
    d.route = route;
    d.x = at.x;
    d.y = at.y;
    d.addr = addr;
    d.seed = seed;
    d.sem_x = at.x;
    d.sem_y = at.y;
    d.sem_addr = sem_addr;
    return d;
}

// A fabric_traffic worker on `w` sending to `dests` (its destination list at kDestsAddr).
Kernel traffic_kernel(Core w, const FabricTrafficArgs& a, const std::vector<FabricDest>& dests) {
    std::vector<uint8_t> bytes(dests.size() * sizeof(FabricDest));
    std::memcpy(bytes.data(), dests.data(), bytes.size());
    Kernel k = mailbox_kernel(w, "fabric_traffic", a);
    k.writes.emplace_back(kDestsAddr, std::move(bytes));
    return k;
}

// What `packets` packets of send type `a` to destination `d` left on core `at` (see FabricDest).
void check_dest(Rig& rig, Core at, const FabricTrafficArgs& a, const FabricDest& d,
                uint32_t packets) {
    INFO("destination " << at.str() << " addr 0x" << std::hex << d.addr << std::dec << " packets "
                        << packets);
    const uint32_t used = packets < a.dest_slots ? packets : a.dest_slots;
    switch (static_cast<NocSendType>(a.send_type)) {
        case NocSendType::UnicastWrite:
        case NocSendType::FusedWriteAtomicInc:
            for (uint32_t p = 0; p < used; ++p) {
                CHECK(rig.pattern_mismatches(at, d.addr + p * a.packet_bytes, a.packet_bytes,
                                             d.seed + p) == 0);
            }
            // Nothing beyond the used positions.
            CHECK(rig.read_words(at, d.addr + used * a.packet_bytes, 4) ==
                  std::vector<uint32_t>(4, 0));
            if (a.send_type == static_cast<uint32_t>(NocSendType::FusedWriteAtomicInc)) {
                const uint32_t splits =
                    (a.packet_bytes + a.channel.payload_bytes - 1) / a.channel.payload_bytes;
                CHECK(rig.read32(at, d.sem_addr) == packets * splits);
            }
            break;
        case NocSendType::InlineWrite:
            for (uint32_t p = 0; p < used; ++p)
                CHECK(rig.read32(at, d.addr + 4 * p) == protocol::pattern_word(d.seed, p));
            CHECK(rig.read32(at, d.addr + 4 * used) == 0);
            break;
        case NocSendType::AtomicInc:
            CHECK(rig.read32(at, d.addr) == packets);
            break;
        case NocSendType::ScatterWrite: {
            const uint32_t cb = a.packet_bytes / a.scatter_chunks / 16 * 16;
            for (uint32_t p = 0; p < used; ++p) {
                for (uint32_t j = 0; j < a.scatter_chunks; ++j) {
                    const uint32_t first = j * cb;
                    const uint32_t n = j + 1 < a.scatter_chunks ? cb : a.packet_bytes - first;
                    const auto got = rig.read_words(
                        at, d.addr + j * a.scatter_gap + p * a.packet_bytes + first, n / 4);
                    uint32_t bad = 0;
                    for (uint32_t i = 0; i < n / 4; ++i)
                        bad += got[i] != protocol::pattern_word(d.seed + p, first / 4 + i);
                    CHECK(bad == 0);
                }
            }
            break;
        }
        default:
            FAIL("send type");
    }
}

bool exited(Rig& rig, const std::vector<Core>& cores) {
    for (const Core& c : cores) {
        if (rig.state(c) == sim::RunState::Running) return false;
    }
    return true;
}

const char* type_name(NocSendType t) {
    switch (t) {
        case NocSendType::UnicastWrite:
            return "unicast write";
        case NocSendType::InlineWrite:
            return "inline write";
        case NocSendType::AtomicInc:
            return "atomic inc";
        case NocSendType::FusedWriteAtomicInc:
            return "fused write + atomic inc";
        case NocSendType::ScatterWrite:
            return "scatter write";
        default:
            return "?";
    }
}

// Workers and receiving cores (Tensix, WH NOC0 coordinates).
constexpr Core kWorkerEast{0, 1, 1};
constexpr Core kWorkerWest{0, 2, 1};
constexpr Core kSink{0, kSinkX, sink_y(hal::Arch::WormholeB0)};
Core on(uint32_t chip, Core c) {
    c.chip = chip;
    return c;
}

}  // namespace

TEST_CASE("fabric: routers on a two-chip line come up, handshake and terminate", "[sim][fabric]") {
    FabricSim f("n300_cluster.yaml", line_options({0, 1}));
    f.start();
    for (const RouterPlacement& p : f.plan().routers) {
        const auto b = f.status(p);
        CHECK(b.peer_chip == p.config.peer_chip_id);
        CHECK(b.peer_channel == p.config.peer_eth_channel);
    }
    f.stop_graceful();
}

namespace {

// Two chips, both directions at once: a worker on chip 0 sends east to chip 1, one on chip 1
// west to chip 0, `count` packets of `type` each.
void two_chip_send_type(const std::string& cluster, NocSendType type, Core worker_east,
                        Core worker_west) {
    INFO(type_name(type));
    FabricSim f(cluster, line_options({0, 1}));
    f.start();
    const uint32_t count = 24, slots = 8, bytes = 1024;
    const hal::Arch arch = f.rig().arch().arch;
    const Core we = on(f.chip(0), worker_east), ww = on(f.chip(1), worker_west);
    const Core se{f.chip(1), kSinkX, sink_y(arch)}, sw{f.chip(0), kSinkX, sink_y(arch)};
    const auto de = dest(pf::route_unicast(1), se, kRegion, 100, kSem);
    const auto dw = dest(pf::route_unicast(1), sw, kRegion, 200, kSem);
    const auto ae = traffic_args(f.channel(0, FabricDir::East), type, bytes, count, 1, slots);
    const auto aw = traffic_args(f.channel(1, FabricDir::West), type, bytes, count, 1, slots);
    f.run_workers({traffic_kernel(we, ae, {de}), traffic_kernel(ww, aw, {dw})}, 20'000'000);
    // Once idle, the routers' published counters are exact without any termination.
    f.rig().cluster().step(50'000);
    CHECK(f.status(f.router(0, FabricDir::East)).completed[0] == count);
    CHECK(f.status(f.router(1, FabricDir::West)).completed[0] == count);
    CHECK(f.status(f.router(1, FabricDir::West)).received[0] == count);
    f.stop_graceful();
    check_dest(f.rig(), se, ae, de, count);
    check_dest(f.rig(), sw, aw, dw, count);
    const auto e = f.status(f.router(0, FabricDir::East));
    const auto w = f.status(f.router(1, FabricDir::West));
    CHECK(e.sent[0] == count);
    CHECK(w.sent[0] == count);
    CHECK(e.received[0] == count);
    CHECK(w.received[0] == count);
    CHECK(e.delivered == count);
    CHECK(w.delivered == count);
    CHECK(f.rig().results<FabricTrafficResults>(we).packets_sent == count);
    CHECK(f.rig().results<FabricTrafficResults>(ww).packets_sent == count);
}

// Blackhole Tensix cores for the workers and the receiving core (row 1 is Ethernet there).
constexpr Core kBhWorkerEast{0, 1, 2};
constexpr Core kBhWorkerWest{0, 2, 2};
constexpr Core kBhSink{0, kSinkX, sink_y(hal::Arch::Blackhole)};

}  // namespace

TEST_CASE("fabric: two-chip unicast of every send type, both directions", "[sim][fabric]") {
    const auto type = static_cast<NocSendType>(GENERATE(0u, 1u, 2u, 3u, 4u));
    two_chip_send_type("n300_cluster.yaml", type, kWorkerEast, kWorkerWest);
}

// Blackhole: inline writes to L1 are unsafe there, so every credit, teardown and inline-write
// delivery takes the staged path.
TEST_CASE("fabric: Blackhole two-chip unicast of every send type", "[sim][fabric][blackhole]") {
    const auto type = static_cast<NocSendType>(GENERATE(0u, 1u, 2u, 3u, 4u));
    two_chip_send_type(blackhole_chain_cluster(2), type, kBhWorkerEast, kBhWorkerWest);
}

TEST_CASE("fabric: payload sizes up to the arch maximum, split at the slot size", "[sim][fabric]") {
    const uint32_t bytes = GENERATE(16u, 1024u, 2048u, 4096u, 7616u, 9000u / 16 * 16);
    const uint32_t payload = bytes > pf::kDefaultPayloadBytes
                                 ? pf::max_payload_bytes(hal::kWormholeB0)
                                 : pf::kDefaultPayloadBytes;
    INFO("bytes " << bytes << " payload_bytes " << payload);
    FabricSim f("n300_cluster.yaml", line_options({0, 1}, payload));
    // The largest slots fit WH's router block only with fewer of them (plan: 4 sender / 8 rx, then
    // ch0 doubled and the rest of L1 to ch1).
    CHECK(f.router(0, FabricDir::East).config.receiver_slots[0] ==
          (payload > pf::kDefaultPayloadBytes ? 8u : 16u));
    f.start();
    const uint32_t count = 6, slots = 3;
    const Core w = on(f.chip(0), kWorkerEast), s = on(f.chip(1), kSink);
    const auto d = dest(pf::route_unicast(1), s, kRegion, 7, kSem);
    const auto a = traffic_args(f.channel(0, FabricDir::East), NocSendType::FusedWriteAtomicInc,
                                bytes, count, 1, slots);
    f.run_workers({traffic_kernel(w, a, {d})}, 20'000'000);
    f.stop_graceful();
    check_dest(f.rig(), s, a, d, count);
    const uint32_t packets = count * ((bytes + payload - 1) / payload);
    CHECK(f.status(f.router(0, FabricDir::East)).sent[0] == packets);
}

TEST_CASE("fabric: 8-chip line, unicast 1..7 hops in both directions", "[sim][fabric][t3k]") {
    FabricSim f("t3k_cluster.yaml", line_options(kT3kChain));
    f.start();
    const uint32_t per_dest = 8, bytes = 512;
    for (const std::vector<uint32_t>& hops :
         {std::vector<uint32_t>{1, 2, 3, 4}, std::vector<uint32_t>{5, 6, 7}}) {
        const Core we = on(f.chip(0), kWorkerEast), ww = on(f.chip(7), kWorkerWest);
        std::vector<FabricDest> de, dw;
        for (uint32_t h : hops) {
            de.push_back(dest(pf::route_unicast(h), on(f.chip(h), kSink), kRegion + 0x10000 * h,
                              1000 + h, kSem + 16 * h));
            dw.push_back(dest(pf::route_unicast(h), on(f.chip(7 - h), kSink),
                              kRegion + 0x80000 + 0x10000 * h, 2000 + h, kSem + 0x100 + 16 * h));
        }
        const auto n = static_cast<uint32_t>(hops.size());
        const auto ae =
            traffic_args(f.channel(0, FabricDir::East), NocSendType::FusedWriteAtomicInc, bytes,
                         per_dest * n, n, per_dest);
        const auto aw =
            traffic_args(f.channel(7, FabricDir::West), NocSendType::FusedWriteAtomicInc, bytes,
                         per_dest * n, n, per_dest);
        f.run_workers({traffic_kernel(we, ae, de), traffic_kernel(ww, aw, dw)}, 50'000'000);
        f.rig().run(200'000);  // let the last packets land before checking
        for (uint32_t i = 0; i < n; ++i) {
            check_dest(f.rig(), on(f.chip(hops[i]), kSink), ae, de[i], per_dest);
            check_dest(f.rig(), on(f.chip(7 - hops[i]), kSink), aw, dw[i], per_dest);
        }
    }
    f.stop_graceful();
    f.check_link_counts();
    // Every chip in the middle forwarded what went past it: east traffic past chip i is the
    // packets for hops > i.
    for (uint32_t i = 1; i < 7; ++i) {
        const auto w = f.status(f.router(i, FabricDir::West));  // receives the eastbound traffic
        CHECK(w.forwarded == 8 * (7 - i));
    }
}

TEST_CASE("fabric: 1D multicast writes every chip of the range", "[sim][fabric][t3k]") {
    FabricSim f("t3k_cluster.yaml", line_options({0, 1, 2, 3, 7}));
    f.start();
    const uint32_t count = 10, bytes = 2048;
    const Core w = on(f.chip(0), kWorkerEast);
    // hops 2..4 (chips 2, 3, 7); chip 1 only forwards
    const auto d = dest(pf::route_multicast(2, 3), kSink, kRegion, 55, kSem);
    const auto a = traffic_args(f.channel(0, FabricDir::East), NocSendType::FusedWriteAtomicInc,
                                bytes, count, 1, count);
    f.run_workers({traffic_kernel(w, a, {d})}, 20'000'000);
    f.stop_graceful();
    for (uint32_t i = 2; i <= 4; ++i) check_dest(f.rig(), on(f.chip(i), kSink), a, d, count);
    CHECK(f.rig().read32(on(f.chip(1), kSink), kSem) == 0);
    CHECK(f.rig().read_words(on(f.chip(1), kSink), kRegion, 4) == std::vector<uint32_t>(4, 0));
    CHECK(f.status(f.router(1, FabricDir::West)).delivered == 0);
    CHECK(f.status(f.router(2, FabricDir::West)).delivered == count);
    CHECK(f.status(f.router(4, FabricDir::West)).delivered == count);
    CHECK(f.status(f.router(4, FabricDir::West)).forwarded == 0);
}

namespace {

// All-to-all: on every chip the East worker sends to every chip reachable east (up to 4 hops),
// the West worker to every chip reachable west; each source chip has its own region and counter
// on every receiving core.
// Destinations per worker and direction in the 1D all-to-all (the nearest ones).
constexpr uint32_t kAllToAllMaxHops = 4;

struct AllToAll {
    std::vector<Kernel> workers;
    std::vector<std::pair<FabricTrafficArgs, std::vector<std::pair<Core, FabricDest>>>> sends;
};

AllToAll plan_all_to_all(FabricSim& f, uint32_t n, bool ring, uint32_t per_dest, uint32_t bytes,
                         uint32_t slots, Core worker_east = kWorkerEast,
                         Core worker_west = kWorkerWest, Core sink_core = kSink) {
    AllToAll t;
    for (uint32_t i = 0; i < n; ++i) {
        for (FabricDir dir : {FabricDir::East, FabricDir::West}) {
            std::vector<uint32_t> hops;
            const uint32_t east_max = ring ? n / 2 : n - 1 - i;
            const uint32_t west_max = ring ? (n - 1) / 2 : i;
            const uint32_t max = dir == FabricDir::East ? east_max : west_max;
            for (uint32_t h = 1; h <= max && h <= kAllToAllMaxHops; ++h) hops.push_back(h);
            if (hops.empty()) continue;
            std::vector<FabricDest> dests;
            std::vector<std::pair<Core, FabricDest>> where;
            for (uint32_t h : hops) {
                const uint32_t to = dir == FabricDir::East ? (i + h) % n : (i + n - h) % n;
                const Core sink = on(f.chip(to), sink_core);
                // region and counter per source chip and direction
                const uint32_t k = 2 * i + (dir == FabricDir::East ? 0 : 1);
                const auto d = dest(pf::route_unicast(h), sink, kRegion + k * (slots + 1) * bytes,
                                    10 * k + h, kSem + 16 * k);
                dests.push_back(d);
                where.emplace_back(sink, d);
            }
            const Core w = on(f.chip(i), dir == FabricDir::East ? worker_east : worker_west);
            const auto nd = static_cast<uint32_t>(dests.size());
            auto a = traffic_args(f.channel(i, dir), NocSendType::FusedWriteAtomicInc, bytes,
                                  per_dest * nd, nd, slots);
            a.timeout_us = 100'000;
            t.workers.push_back(traffic_kernel(w, a, dests));
            t.sends.emplace_back(a, where);
        }
    }
    return t;
}

void check_all_to_all(FabricSim& f, const AllToAll& t, uint32_t per_dest) {
    for (const auto& [a, where] : t.sends) {
        for (const auto& [sink, d] : where) check_dest(f.rig(), sink, a, d, per_dest);
    }
}

}  // namespace

TEST_CASE("fabric: all-to-all on a 4-chip line", "[sim][fabric][t3k]") {
    FabricSim f("t3k_cluster.yaml", line_options({0, 1, 2, 3}));
    f.start();
    const uint32_t per_dest = 40, bytes = 1024, slots = 4;
    const AllToAll t = plan_all_to_all(f, 4, false, per_dest, bytes, slots);
    f.run_workers(t.workers, 100'000'000);
    f.stop_graceful();
    f.check_link_counts();
    check_all_to_all(f, t, per_dest);
}

namespace {

// Ring all-to-all on the 8 T3000 chips: each East worker reaches 4 chips, each West worker 3 (7
// others per chip), `per_dest` fused write + increment packets to each. Prints the figures.
void ring_all_to_all(uint32_t per_dest) {
    FabricSim f("t3k_cluster.yaml", ring_options(kT3kChain));
    f.start();
    const uint32_t bytes = 1024, slots = 4;
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t c0 = f.rig().cluster().cycle();
    const AllToAll t = plan_all_to_all(f, 8, true, per_dest, bytes, slots);
    f.run_workers(t.workers, 4'000'000'000);
    const uint64_t cycles = f.rig().cluster().cycle() - c0;
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    f.stop_graceful();
    f.check_link_counts();
    check_all_to_all(f, t, per_dest);
    uint64_t packets = 0;
    for (const auto& [a, where] : t.sends) packets += a.packet_count;
    uint64_t forwarded = 0;
    for (const RouterPlacement& p : f.plan().routers) forwarded += f.status(p).forwarded;
    WARN("ring all-to-all: " << packets << " packets of " << bytes << " B from " << t.workers.size()
                             << " workers (" << 4 * per_dest << " per East worker, " << 3 * per_dest
                             << " per West worker), " << forwarded << " forwarded, in " << cycles
                             << " cycles (" << secs << " s wall)");
    // The dateline links carried traffic on VC1 (rx1), and only there did ch0/ch1 traffic use it.
    for (const RouterPlacement& p : f.plan().routers) {
        const auto peer = f.status(f.peer_of(p));
        const auto me = f.status(p);
        INFO(FabricSim::core(p).str() << " dateline " << p.config.dateline);
        if (p.config.dateline != 0) {
            CHECK(peer.received[0] == 0);
            CHECK(peer.received[1] == me.sent[0] + me.sent[1] + me.sent[2]);
        } else {
            CHECK(peer.received[0] == me.sent[0] + me.sent[1]);
            CHECK(peer.received[1] == me.sent[2]);
        }
    }
}

}  // namespace

// Blackhole: forwarding under load, so the upstream credits (staged NoC writes there) and the
// worker credits race with data on every chip.
TEST_CASE("fabric: Blackhole all-to-all on a 4-chip line", "[sim][fabric][blackhole]") {
    FabricSim f(blackhole_chain_cluster(4), line_options({0, 1, 2, 3}));
    f.start();
    const uint32_t per_dest = 40, bytes = 2048, slots = 4;
    const AllToAll t =
        plan_all_to_all(f, 4, false, per_dest, bytes, slots, kBhWorkerEast, kBhWorkerWest, kBhSink);
    f.run_workers(t.workers, 100'000'000);
    f.stop_graceful();
    f.check_link_counts();
    check_all_to_all(f, t, per_dest);
}

// Full load: >= 5,000 packets per worker (East 6,668, West 5,001; 93,352 in all), every queue
// saturated long before the end; about 3 minutes of wall time (twice that load ran at every CI
// before, with the same result).
TEST_CASE("fabric: ring all-to-all on 8 chips at full load", "[sim][fabric][t3k][ring]") {
    ring_all_to_all(700);
}

TEST_CASE("fabric: connection stress, open/send/close with one and three workers",
          "[sim][fabric][conn]") {
    const uint32_t workers = GENERATE(1u, 3u);
    const uint32_t total = 8'000;
    const uint32_t iterations = total / workers + (workers == 3 ? 1 : 0);  // 3 * 2667 >= 8000
    INFO(workers << " workers, " << iterations << " each");
    FabricSim f("n300_cluster.yaml", line_options({0, 1}));
    f.start();
    const Core sink = on(f.chip(1), kSink);
    std::vector<Core> cores;
    for (uint32_t k = 0; k < workers; ++k) cores.push_back(Core{f.chip(0), 1 + k, 2});
    std::vector<Kernel> kernels;
    for (uint32_t k = 0; k < workers; ++k) {
        protocol::FabricConnStressArgs a{};
        a.channel = f.channel(0, FabricDir::East);
        a.iterations = iterations;
        a.workers = workers;
        a.my_index = k;
        a.next_x = cores[(k + 1) % workers].x;
        a.next_y = cores[(k + 1) % workers].y;
        a.token_addr = kTokenAddr;
        a.route = pf::route_unicast(1);
        a.dst_x = sink.x;
        a.dst_y = sink.y;
        a.dst_addr = kRegion;
        a.sem_addr = kSem;
        a.seed = 77;
        a.packet_bytes = 256;
        a.src_addr = kSrcAddr;
        a.conn_l1 = kConnL1;
        a.timeout_us = 20'000;
        kernels.push_back(mailbox_kernel(cores[k], "fabric_conn_stress", a));
    }
    const auto t0 = std::chrono::steady_clock::now();
    f.run_workers(kernels, 4'000'000'000);
    WARN(workers << " workers x " << iterations << " open/send/close: " << f.rig().cluster().cycle()
                 << " cycles, "
                 << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
                 << " s wall");
    f.stop_graceful();
    CHECK(f.rig().read32(sink, kSem) == workers * iterations);
    CHECK(f.rig().pattern_mismatches(sink, kRegion, 256, 77) == 0);
    CHECK(f.status(f.router(0, FabricDir::East)).sent[0] == workers * iterations);
    for (const Core& c : cores) {
        CHECK(f.rig().results<protocol::FabricConnStressResults>(c).iterations_done == iterations);
    }
}

TEST_CASE("fabric: immediate termination with traffic in flight", "[sim][fabric][termination]") {
    FabricSim f("t3k_cluster.yaml", line_options({0, 1, 2, 3}));
    f.start();
    const uint32_t bytes = 1024, slots = 16, count = 100'000;
    const Core we = on(f.chip(0), kWorkerEast), ww = on(f.chip(3), kWorkerWest);
    const auto de = dest(pf::route_unicast(3), on(f.chip(3), kSink), kRegion, 11, kSem);
    const auto dw = dest(pf::route_unicast(3), on(f.chip(0), kSink), kRegion, 22, kSem);
    auto ae = traffic_args(f.channel(0, FabricDir::East), NocSendType::FusedWriteAtomicInc, bytes,
                           count, 1, slots);
    auto aw = traffic_args(f.channel(3, FabricDir::West), NocSendType::FusedWriteAtomicInc, bytes,
                           count, 1, slots);
    ae.timeout_us = aw.timeout_us = 200;  // a router that stopped answers no more credits
    // 300,000 cycles of traffic, then the routers stop with the workers still sending.
    const auto res =
        f.run_kernels({traffic_kernel(we, ae, {de}), traffic_kernel(ww, aw, {dw})}, 300'000);
    REQUIRE(res[0].outcome == fabric::LaunchOutcome::Timeout);
    REQUIRE(f.rig().state(we) == sim::RunState::Running);
    (void)f.runner().terminate(pf::Termination::Immediate, 2'000'000);
    INFO(f.describe());
    for (const RouterPlacement& p : f.plan().routers) {
        INFO(FabricSim::core(p).str());
        CHECK(f.status(p).status == static_cast<uint32_t>(RouterStatus::Terminated));
        CHECK(f.rig().exit_code(FabricSim::core(p)) == 0);
    }
    // The workers give up (bounded wait on their credit), they do not hang.
    REQUIRE(f.rig().run_until([&] { return exited(f.rig(), {we, ww}); }, 2'000'000, 256));
    for (const Core& w : {we, ww}) {
        INFO(f.rig().describe(w));
        CHECK(f.rig().exit_code(w) == static_cast<uint32_t>(protocol::TestFail::Stuck));
        const auto r = f.rig().results<FabricTrafficResults>(w);
        CHECK(r.failure.hal_status == static_cast<uint32_t>(hal::Status::Timeout));
        CHECK(r.packets_sent > 0);
        CHECK(r.packets_sent < count);
    }
    // What was delivered is intact: every counted packet's data is the pattern.
    for (const auto& [sink, d] :
         {std::pair{on(f.chip(3), kSink), de}, std::pair{on(f.chip(0), kSink), dw}}) {
        const uint32_t got = f.rig().read32(sink, d.sem_addr);
        CHECK(got > 0);
        const uint32_t used = got < slots ? got : slots;
        for (uint32_t p = 0; p < used; ++p) {
            // A position may hold an older lap's packet: the same pattern either way.
            CHECK(f.rig().pattern_mismatches(sink, d.addr + p * bytes, bytes, d.seed + p) == 0);
        }
    }
}

TEST_CASE("fabric: graceful termination delivers everything in flight",
          "[sim][fabric][termination]") {
    FabricSim f("t3k_cluster.yaml", line_options({0, 1, 2, 3}));
    f.start();
    const uint32_t bytes = 2048, slots = 8, count = 200;
    const Core we = on(f.chip(0), kWorkerEast);
    const auto de = dest(pf::route_unicast(3), on(f.chip(3), kSink), kRegion, 33, kSem);
    auto ae = traffic_args(f.channel(0, FabricDir::East), NocSendType::FusedWriteAtomicInc, bytes,
                           count, 1, slots);
    f.run_workers({traffic_kernel(we, ae, {de})}, 50'000'000);
    // Ask at once (no wait for quiescence): packets are still on their way through chips 1 and 2.
    f.stop_graceful_now();
    check_dest(f.rig(), on(f.chip(3), kSink), ae, de, count);
    CHECK(f.status(f.router(0, FabricDir::East)).sent[0] == count);
}

TEST_CASE("fabric: handshake mismatch (payload_bytes) stops both ends",
          "[sim][fabric][handshake]") {
    FabricSim f("n300_cluster.yaml", line_options({0, 1}));
    f.start_routers(f.tweaked([](const RouterPlacement& p, pf::RouterConfig& c) {
        if (p.chip == 1) c.payload_bytes = 2048;
    }));
    const bool done = f.rig().run_until([&] { return f.routers_exited(); }, 2'000'000, 256);
    INFO(f.describe());
    REQUIRE(done);
    for (const RouterPlacement& p : f.plan().routers) {
        const auto b = f.status(p);
        CHECK(b.status == static_cast<uint32_t>(RouterStatus::HandshakeMismatch));
        CHECK(b.stage == static_cast<uint32_t>(RouterStatus::Handshaking));
        CHECK(fabric::router_detail_name(b.status, b.detail) == "mismatch:payload_bytes");
        CHECK(f.rig().exit_code(FabricSim::core(p)) ==
              (static_cast<uint32_t>(RouterStatus::HandshakeMismatch) & 0xFF));
    }
}

TEST_CASE("fabric: two masters on one link are a handshake mismatch", "[sim][fabric][handshake]") {
    FabricSim f("n300_cluster.yaml", line_options({0, 1}));
    f.start_routers(
        f.tweaked([](const RouterPlacement&, pf::RouterConfig& c) { c.is_master = 1; }));
    REQUIRE(f.rig().run_until([&] { return f.routers_exited(); }, 2'000'000, 256));
    INFO(f.describe());
    for (const RouterPlacement& p : f.plan().routers) {
        CHECK(f.status(p).status == static_cast<uint32_t>(RouterStatus::HandshakeMismatch));
        CHECK(fabric::router_detail_name(f.status(p).status, f.status(p).detail) ==
              "mismatch:both_masters");
    }
}

TEST_CASE("fabric: a peer that never starts is a handshake timeout", "[sim][fabric][handshake]") {
    FabricSim f("n300_cluster.yaml", line_options({0, 1}));
    const RouterPlacement& master = f.router(0, FabricDir::East);
    // Only the master is started, and gives up after 50 us.
    fabric::FabricPlan alone = f.plan();
    alone.routers = {master};
    alone.routers[0].config.handshake_timeout_us = 50;
    f.start_routers(alone);
    const Core mc = FabricSim::core(master);
    REQUIRE(f.rig().run_until([&] { return f.rig().state(mc) != sim::RunState::Running; },
                              1'000'000, 256));
    const auto b = f.status(master);
    CHECK(b.status == static_cast<uint32_t>(RouterStatus::Timeout));
    CHECK(b.stage == static_cast<uint32_t>(RouterStatus::Handshaking));
    CHECK(b.stuck_at == static_cast<uint32_t>(pf::RouterWait::HandshakeReply));
}

TEST_CASE("fabric: an invalid config is refused", "[sim][fabric]") {
    FabricSim f("n300_cluster.yaml", line_options({0, 1}));
    f.start_routers(
        f.tweaked([](const RouterPlacement&, pf::RouterConfig& c) { c.payload_bytes = 100; }));
    REQUIRE(f.rig().run_until([&] { return f.routers_exited(); }, 200'000, 256));
    for (const RouterPlacement& p : f.plan().routers) {
        CHECK(f.status(p).status == static_cast<uint32_t>(RouterStatus::ConfigInvalid));
        CHECK(f.status(p).stage == static_cast<uint32_t>(RouterStatus::Started));
    }
}

// `ring`: the two chips as a ring (ring_size 2, so a worker's route may have 1 hop): a 2-hop route
// from ch0 is then refused as RouteTooLong (on the line it is refused as NoDownstream).
void bad_header_case(bool ring) {
    FabricSim f("n300_cluster.yaml", ring ? ring_options({0, 1}) : line_options({0, 1}));
    f.start();
    const RouterPlacement& tx = f.router(0, FabricDir::East);
    const RouterPlacement& rx = f.router(1, FabricDir::West);
    const Core sink = on(f.chip(1), kSink);
    // The host plays the worker: a header in ch0 slot 0, then +1 on ch0's pushed stream.
    const auto push = [&](uint32_t slot, pf::PacketHeader h) {
        std::vector<uint8_t> bytes(sizeof h + 64, 0xEE);
        std::memcpy(bytes.data(), &h, sizeof h);
        f.rig().write(FabricSim::core(tx), tx.layout.sender_base[0] + slot * tx.layout.slot_bytes,
                      bytes);
        f.rig().write32(
            FabricSim::core(tx),
            hal::stream::reg_addr(pf::kStreamPushed0,
                                  hal::kWormholeB0.stream.remote_dest_buf_space_available_update),
            hal::stream::encode_words_free_delta(1));
    };
    pf::PacketHeader h{};
    h.payload_bytes = 64;
    h.send_type = static_cast<uint8_t>(NocSendType::UnicastWrite);
    h.route = pf::route_unicast(1);
    h.ttl = pf::kDefaultTtl;
    h.cmd.write.dst = {kRegion, static_cast<uint8_t>(sink.x), static_cast<uint8_t>(sink.y), 0};
    pf::PacketHeader no_magic = h;  // magic missing
    pf::PacketHeader too_big = h;   // payload larger than a slot
    too_big.magic = pf::kHeaderMagic;
    too_big.payload_bytes = static_cast<uint16_t>(pf::kDefaultPayloadBytes + 16);
    pf::PacketHeader no_route = h;  // route ends before its write
    no_route.magic = pf::kHeaderMagic;
    no_route.route = 0;
    pf::PacketHeader bad_type = h;
    bad_type.magic = pf::kHeaderMagic;
    bad_type.send_type = 9;
    pf::PacketHeader past_end = h;  // forwards beyond the end of the line
    past_end.magic = pf::kHeaderMagic;
    past_end.route = pf::route_unicast(2);
    pf::PacketHeader misaligned = h;  // payload destination not 16-B congruent with the slot
    misaligned.magic = pf::kHeaderMagic;
    misaligned.cmd.write.dst.addr = kRegion + 4;
    pf::PacketHeader expired = h;  // its last hop to live was the one before this link
    expired.magic = pf::kHeaderMagic;
    expired.ttl = 1;
    const std::vector<pf::PacketHeader> bad = {no_magic,   too_big,  no_route, bad_type,
                                               misaligned, past_end, expired};
    // One at a time, so each leaves its reason (BadPacket) in the receiver's detail word.
    const std::vector<std::string> why = {
        "bad_packet:magic",      "bad_packet:payload_bytes",
        "bad_packet:route",      "bad_packet:send_type",
        "bad_packet:target",     ring ? "bad_packet:route_too_long" : "bad_packet:no_downstream",
        "bad_packet:ttl_expired"};
    for (uint32_t i = 0; i < bad.size(); ++i) {
        push(i % tx.config.sender_slots[0], bad[i]);  // a ring has fewer ch0 slots than a line
        f.rig().run(30'000);
        CHECK(f.status(rx).bad_packets == i + 1);
        CHECK(fabric::router_detail_name(f.status(rx).status, f.status(rx).detail) == why[i]);
    }
    (void)f.runner().terminate(pf::Termination::Graceful, 2'000'000);
    INFO(f.describe());
    const auto bt = f.status(tx), br = f.status(rx);
    CHECK(bt.status == static_cast<uint32_t>(RouterStatus::Terminated));
    CHECK(br.status == static_cast<uint32_t>(RouterStatus::Terminated));
    CHECK(br.bad_packets == bad.size());
    CHECK(br.delivered == 0);
    CHECK(bt.sent[0] == bad.size());
    CHECK(bt.completed[0] == bad.size());  // credits came back
    CHECK(bt.undrained == 0);
    CHECK(br.undrained == 0);
    CHECK(f.rig().read_words(sink, kRegion, 32) == std::vector<uint32_t>(32, 0));
}

TEST_CASE("fabric: a bad packet header is dropped, counted, and its credit returned",
          "[sim][fabric]") {
    SECTION("line") {
        bad_header_case(false);
    }
    SECTION("ring: a worker's route longer than ring_size - 1 hops") {
        bad_header_case(true);
    }
}

TEST_CASE("fabric: the termination word ends the wait for the ready word",
          "[sim][fabric][termination]") {
    FabricSim f("n300_cluster.yaml", line_options({0, 1}));
    f.start_routers();  // nobody writes the ready word
    REQUIRE(f.rig().run_until([&] { return f.all_status(RouterStatus::HandshakeComplete); },
                              2'000'000, 256));
    f.rig().cluster().step(20'000);
    CHECK(f.all_status(RouterStatus::HandshakeComplete));  // waiting for ready, not giving up
    (void)f.runner().terminate(pf::Termination::Immediate, 100'000);
    for (const RouterPlacement& p : f.plan().routers) {
        const auto b = f.status(p);
        CHECK(b.status == static_cast<uint32_t>(RouterStatus::Terminated));
        CHECK(b.stage == static_cast<uint32_t>(RouterStatus::HandshakeComplete));
        CHECK(f.rig().exit_code(FabricSim::core(p)) == 0);
    }
}
