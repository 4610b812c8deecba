// mux_bench: the fabric mux in the model (Wormhole B0, T3000 cluster descriptor, a line of chips
// 0 and 1 brought up by FabricRunner over SimDevice): a mux on a Tensix core of chip 0 feeding the
// east router's ch0, mux_worker clients on other Tensix cores sending one hop to chip 1. Prints
// figures; not a test.
//
//   mux_bench [bandwidth|fairness|header|all] [--quick] [--slots N] [--wait CYCLES] [--check
//   ROUNDS]
//
//   bandwidth  K = 1, 2, 4, 8 clients on K full-size channels (4 slots each), packets of 16 B,
//              1, 2, 4 KiB; against one client on the router's ch0 directly. Aggregate rate =
//              K * (N2 - N1) * P / (T2 - T1) over two runs of N1 and N2 packets per client,
//              T = the slowest client's cycles from open to its last send returning.
//   fairness   8 equal clients at saturation (4 KiB): each channel's forwarded packets over a
//              window in the middle of the run (the mux's own counters), Jain's index
//              (sum x)^2 / (n * sum x^2).
//   header     full-size bandwidth (4 KiB) of 1 and 8 full-size clients with 0, 1 and 8
//              header-only clients (atomic increments) saturating beside them, over the same
//              kind of window.
//
// Cycles are core clock cycles (WH: 1 GHz, so 1 B/cycle = 1 GB/s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/launch.h"
#include "fabric/mux.h"
#include "fabric/sim_device.h"
#include "fabric/soc_descriptor.h"
#include "protocol/fabric.h"
#include "protocol/fabric_mux.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"
#include "tile.h"

namespace {

namespace pf = protocol::fabric;
using fabric::CoreLocation;
using fabric::FabricDir;

constexpr uint32_t kConnL1 = 0x18000;
constexpr uint32_t kDoneAddr = 0x18300;
constexpr uint32_t kSrcAddr = 0x19000;
constexpr uint32_t kSinkRegion = 0x60000;
constexpr uint32_t kSinkStride = 4096 * protocol::kMuxWorkerPositions;  // the largest packet here
constexpr uint32_t kSinkSem = 0x50000;

// Mux options every run uses (command line: --slots, --wait, --check).
fabric::MuxOptions g_mux;
// The firmware images' directory (command line: --firmware, as fabric_bench and mesh_bench take).
const char* g_firmware_dir = FABRIC_FIRMWARE_DIR;

std::string path(const char* dir, const std::string& f) {
    return std::string(dir) + "/" + f;
}

struct Bench {
    fabric::SocDescriptor soc = fabric::SocDescriptor::load_file(
        path(FABRIC_SOC_DESCRIPTOR_DIR, "wormhole_b0_80_arch.yaml"));
    fabric::ClusterDescriptor cluster =
        fabric::ClusterDescriptor::load_file(path(FABRIC_SOC_DESCRIPTOR_DIR, "t3k_cluster.yaml"));
    fabric::ElfImage router =
        fabric::ElfImage::load_file(path(g_firmware_dir, "wormhole_b0/fabric_router.elf"));
    fabric::ElfImage mux =
        fabric::ElfImage::load_file(path(g_firmware_dir, "wormhole_b0/fabric_mux.elf"));
    fabric::ElfImage client =
        fabric::ElfImage::load_file(path(g_firmware_dir, "wormhole_b0/mux_worker.elf"));
    uint64_t sim_cycles = 0;
};

// One run: a fresh two-chip fabric, optionally a mux, and clients.
struct Run {
    Bench& b;
    fabric::SimDevice dev;
    fabric::FabricRunner runner;
    std::vector<fabric::LaunchTarget> targets;
    std::vector<fabric::LaunchMethod> methods;
    std::vector<CoreLocation> clients;
    fabric::MuxPlacement mux;
    bool has_mux = false;

    static fabric::SimDeviceOptions options(const Bench& b) {
        fabric::SimDeviceOptions o;
        o.cluster = b.cluster;
        return o;
    }
    static fabric::FabricPlan plan(const Bench& b) {
        fabric::FabricOptions o;
        o.chips = {0, 1};
        return fabric::plan_fabric(b.cluster, b.soc, o);
    }
    explicit Run(Bench& bench)
        : b(bench),
          dev(bench.soc, hal::Arch::WormholeB0, options(bench)),
          runner(dev, plan(bench), bench.router) {
        runner.bring_up(20'000'000);
        dev.write32(sink(), kSinkSem, 0);  // the sink core exists before anything writes to it
    }
    ~Run() { b.sim_cycles += dev.cycles(); }

    fabric::CoreCoord tensix(size_t k) const { return b.soc.cores(fabric::CoreType::Worker)[k]; }
    CoreLocation sink() const { return {1, tensix(0)}; }

    void start_mux(const fabric::MuxOptions& o) {
        mux = fabric::plan_mux(runner.plan(), b.soc, 0, FabricDir::East, tensix(1), o);
        (void)fabric::start_mux(dev, mux, b.soc, b.mux);
        has_mux = true;
    }

    // Client k on `channel` sending `count` packets of `bytes` (0: header-only atomics).
    void add_client(const pf::WorkerChannel& channel, uint32_t k, uint32_t count, uint32_t bytes,
                    bool master, uint32_t workers) {
        protocol::MuxWorkerArgs a{};
        a.channel = channel;
        a.packet_count = count;
        a.packet_bytes = bytes;
        a.route = pf::route_unicast(1);
        a.dst_x = sink().core.x;
        a.dst_y = sink().core.y;
        a.dst_addr = bytes == 0 ? kSinkSem + 16 * k : kSinkRegion + k * kSinkStride;
        a.seed = 1000 * (k + 1);
        a.src_addr = kSrcAddr;
        a.conn_l1 = kConnL1;
        a.send_timeout_us = 100'000;
        a.close_timeout_us = 100'000;
        const CoreLocation me{0, tensix(2 + k)};
        const CoreLocation first{0, tensix(2)};
        a.master_x = first.core.x;
        a.master_y = first.core.y;
        a.done_addr = kDoneAddr;
        a.workers = workers;
        a.flags = (master ? protocol::kMuxWorkerMaster : 0u) |
                  (bytes == 0 ? protocol::kMuxWorkerHeaderOnly : 0u);
        fabric::LaunchTarget t{me, &b.client,
                               fabric::erisc_placement(hal::kWormholeB0, b.soc.worker_l1_size())};
        targets.push_back(t);
        methods.push_back(fabric::load_many(dev, std::span(&targets.back(), 1))[0]);
        protocol::TestMailbox m{};
        m.magic = protocol::kTestMailboxMagic;
        m.num_args = sizeof a / 4;
        std::memcpy(m.args, &a, sizeof a);
        std::vector<uint8_t> mb(sizeof m);
        std::memcpy(mb.data(), &m, sizeof m);
        dev.write(me, protocol::test_mailbox_addr(hal::Arch::WormholeB0), mb);
        dev.write32(me, kDoneAddr, 0);
        clients.push_back(me);
    }
    void start_clients() { fabric::start_many(dev, targets, methods); }

    // Wait for every client; each one's open..last-send cycles.
    std::vector<uint32_t> wait_clients() {
        fabric::LaunchOptions lo;
        lo.max_cycles = 400'000'000;
        lo.poll_cycles = 4'000;
        const auto res = fabric::wait_many(dev, targets, methods, lo);
        std::vector<uint32_t> out;
        for (size_t i = 0; i < clients.size(); ++i) {
            protocol::TestMailbox m{};
            std::vector<uint8_t> mb(sizeof m);
            dev.read(clients[i], protocol::test_mailbox_addr(hal::Arch::WormholeB0), mb);
            std::memcpy(&m, mb.data(), sizeof m);
            if (res[i].outcome != fabric::LaunchOutcome::Exited ||
                m.status != static_cast<uint32_t>(protocol::TestStatus::Done)) {
                fabric::fail(fabric::ErrorCategory::Fabric,
                             "client {} did not pass (outcome {}, status {:#x}, stuck_at {:#x})",
                             clients[i].str(), fabric::outcome_name(res[i].outcome), m.status,
                             m.stuck_at);
            }
            protocol::MuxWorkerResults r;
            std::memcpy(&r, m.results, sizeof r);
            out.push_back(r.send_cycles);
        }
        return out;
    }

    // Per channel forwarded counts once the full-size channels' sum reaches `total` (the mux
    // publishes every few rounds).
    std::vector<uint32_t> forwarded_at(uint64_t total, uint64_t& cycle, uint32_t& rounds) {
        while (true) {
            const pf::MuxStatusBlock s = fabric::read_mux_status(dev, mux);
            uint64_t sum = 0;
            for (uint32_t i = 0; i < mux.config.full_channels; ++i) sum += s.forwarded[i];
            if (sum >= total) {
                cycle = dev.cycles();
                rounds = s.main_loop_iterations;
                return std::vector<uint32_t>(s.forwarded, s.forwarded + mux.channels());
            }
            if (dev.advance(500) == 0)
                fabric::fail(fabric::ErrorCategory::Fabric, "mux_bench: the model stopped");
        }
    }

    // Stop everything still running (clients escape on their termination words).
    void stop_all() {
        for (const CoreLocation& c : clients) {
            dev.write32(c,
                        protocol::test_mailbox_addr(hal::Arch::WormholeB0) +
                            offsetof(protocol::TestMailbox, termination),
                        1);
        }
        if (has_mux) fabric::write_mux_termination(dev, mux, pf::Termination::Immediate);
        (void)runner.terminate(pf::Termination::Immediate, 20'000'000);
    }
};

// Aggregate bytes per cycle of `k` clients sending `count` packets of `bytes` each (k = 0: one
// client on the router's ch0 directly).
double aggregate(Bench& b, uint32_t k, uint32_t bytes, uint32_t count, uint32_t& slowest,
                 uint64_t& mux_instret) {
    Run r(b);
    const bool direct = k == 0;
    const uint32_t n = direct ? 1 : k;
    if (!direct) {
        fabric::MuxOptions o = g_mux;
        o.full_channels = k;
        r.start_mux(o);
    }
    for (uint32_t i = 0; i < n; ++i) {
        const pf::WorkerChannel ch =
            direct ? r.runner.plan().worker_channel(0, FabricDir::East) : r.mux.channel(i);
        r.add_client(ch, i, count, bytes, !direct && i == 0, n);
    }
    r.start_clients();
    const auto t = r.wait_clients();
    slowest = *std::max_element(t.begin(), t.end());
    mux_instret = direct ? 0 : r.dev.tile(r.mux.core).instret();
    r.stop_all();
    return double(n) * count * bytes / slowest;
}

void bandwidth(Bench& b, bool quick) {
    std::printf(
        "\n== bandwidth through the mux (%u slots per channel) vs one client on the router's ch0\n",
        g_mux.full_slots);
    std::printf("%8s %8s %10s %12s %10s %12s\n", "payload", "clients", "B/cycle", "Mpackets/s",
                "of direct", "mux instr/pkt");
    for (uint32_t bytes : {16u, 1024u, 2048u, 4096u}) {
        const uint32_t n2 = quick ? (bytes == 16 ? 400 : 100) : (bytes == 16 ? 1600 : 400);
        const uint32_t n1 = n2 / 4;
        double direct = 0;
        for (uint32_t k : {0u, 1u, 2u, 4u, 8u}) {
            uint32_t t1 = 0, t2 = 0;
            uint64_t i1 = 0, i2 = 0;
            (void)aggregate(b, k, bytes, n1, t1, i1);
            (void)aggregate(b, k, bytes, n2, t2, i2);
            const double rate = double(std::max(k, 1u)) * (n2 - n1) * bytes / double(t2 - t1);
            if (k == 0) direct = rate;
            std::printf("%8u %8s %10.3f %12.3f %9.1f%%", bytes,
                        k == 0 ? "direct" : std::to_string(k).c_str(), rate, rate / bytes * 1e3,
                        100 * rate / direct);
            if (k != 0) std::printf(" %12.1f", double(i2 - i1) / (double(k) * (n2 - n1)));
            std::printf("\n");
        }
    }
}

// Forwarded packets per channel over the middle of a saturated run of `full` full-size clients
// (4 KiB) and `header` header-only clients; returns the full-size bytes per cycle.
double window(Bench& b, uint32_t full, uint32_t header, uint32_t count,
              std::vector<uint32_t>& share, double* round_cycles = nullptr) {
    Run r(b);
    fabric::MuxOptions o = g_mux;
    o.full_channels = full;
    o.header_channels = header;
    o.header_slots = 4;
    r.start_mux(o);
    for (uint32_t i = 0; i < full + header; ++i) {
        r.add_client(r.mux.channel(i), i, i < full ? count : 100 * count, i < full ? 4096 : 0,
                     false, full + header);
    }
    r.start_clients();
    const uint64_t total = uint64_t(full) * count;
    uint64_t c1 = 0, c2 = 0;
    uint32_t r1 = 0, r2 = 0;
    const auto f1 = r.forwarded_at(total / 5, c1, r1);
    const auto f2 = r.forwarded_at(total * 3 / 5, c2, r2);
    if (round_cycles != nullptr) *round_cycles = r2 > r1 ? double(c2 - c1) / (r2 - r1) : 0;
    share.clear();
    uint64_t full_packets = 0;
    for (uint32_t i = 0; i < full + header; ++i) {
        share.push_back(f2[i] - f1[i]);
        if (i < full) full_packets += f2[i] - f1[i];
    }
    r.stop_all();
    return double(full_packets) * 4096 / double(c2 - c1);
}

double jain(const std::vector<uint32_t>& x, size_t n) {
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; ++i) {
        s += x[i];
        s2 += double(x[i]) * x[i];
    }
    return s2 == 0 ? 0 : s * s / (double(n) * s2);
}

void fairness(Bench& b, bool quick) {
    std::printf(
        "\n== fairness: 8 equal clients at saturation (4 KiB), packets forwarded per channel in a "
        "window\n");
    std::vector<uint32_t> share;
    const double rate = window(b, 8, 0, quick ? 100 : 1000, share);
    std::printf("per channel:");
    for (uint32_t s : share) std::printf(" %u", s);
    std::printf("\nJain's index %.4f, aggregate %.3f B/cycle\n", jain(share, 8), rate);
}

void header(Bench& b, bool quick) {
    std::printf(
        "\n== header-only traffic beside full-size channels (4 KiB), full-size bandwidth in a "
        "window\n");
    std::printf("%6s %8s %10s %14s %16s %14s\n", "full", "header", "B/cycle", "vs no header",
                "header pkts/full", "cycles/round");
    const uint32_t count = quick ? 100 : 1000;
    for (uint32_t full : {1u, 8u}) {
        std::vector<uint32_t> share;
        double rc = 0;
        const double alone = window(b, full, 0, count, share, &rc);
        std::printf("%6u %8u %10.3f %13.1f%% %16s %14.0f\n", full, 0u, alone, 100.0, "-", rc);
        for (uint32_t hdr : {1u, 8u}) {
            const double rate = window(b, full, hdr, count, share, &rc);
            uint64_t f = 0, h = 0;
            for (uint32_t i = 0; i < share.size(); ++i) (i < full ? f : h) += share[i];
            std::printf("%6u %8u %10.3f %13.1f%% %16.3f %14.0f\n", full, hdr, rate,
                        100 * rate / alone, f ? double(h) / f : 0.0, rc);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string what = "all";
    bool quick = false;
    g_mux.full_slots = 4;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&] {
            return i + 1 < argc ? static_cast<uint32_t>(std::stoul(argv[++i])) : 0u;
        };
        if (a == "--quick")
            quick = true;
        else if (a == "--slots")
            g_mux.full_slots = value();
        else if (a == "--wait")
            g_mux.forward_wait_cycles = value();
        else if (a == "--check")
            g_mux.teardown_check_every = value();
        else if (a == "--firmware" && i + 1 < argc)
            g_firmware_dir = argv[++i];
        else
            what = a;
    }
    try {
        Bench b;
        const auto t0 = std::chrono::steady_clock::now();
        std::printf(
            "mux_bench: Wormhole B0 model, T3000 cluster, chip 0 -> chip 1, router payload %u B\n",
            pf::kDefaultPayloadBytes);
        if (what == "all" || what == "bandwidth") bandwidth(b, quick);
        if (what == "all" || what == "fairness") fairness(b, quick);
        if (what == "all" || what == "header") header(b, quick);
        std::printf("\n(%.1f M simulated cycles in %.1f s)\n", double(b.sim_cycles) / 1e6,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mux_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
