// fabric_bench: the 1D fabric in the model (Wormhole B0, T3000 cluster descriptor), brought up by
// the host control plane (FabricRunner over SimDevice) exactly as `fabricctl fabric` does, with
// fabric_traffic worker kernels sending through the worker adapter. Prints figures; not a test.
//
//   fabric_bench [bandwidth|latency|router|all] [--quick] [--firmware DIR] [--prefix P]
//                [--phases K]
//   fabric_bench profile|profile-bi16|profile-bi2k|profile-uni{16,2k,4k}|trace|stages{16,2k,4k}
//                (development aids, below)
//
//   bandwidth  one worker per direction sends N packets of P bytes (UnicastWrite) one hop, on a
//              line of 2 chips; unidirectional (one worker) and bidirectional (one each way).
//              Rate = (N2 - N1) * P / (T2 - T1) over two runs of N1 and N2 packets, T = the
//              worker's own cycles from open to its last send returning, so start-up and the
//              packets still in flight at the end cancel out. Compared with the modelled link's
//              payload capacity for the packet: P / wire bytes * 12.5 B/cycle, where the wire
//              carries the 64-B header, 50 B per frame (<= 1488 B each) and the 16-B credit
//              register write that announces the packet. Each row is the mean over 4 start phases
//              of the workers (29 cycles apart), with their range.
//   latency    a worker on chip 0 of an 8-chip line sends one packet (fused write + atomic
//              increment) h = 1..7 hops; the host steps the model 4 cycles at a time until the
//              counter at the destination reads 1. Each h is run 8 times, each started 29 cycles
//              later (the routers' idle loops are then met at other phases); per hop = the
//              least-squares slope over h of the mean arrival (worker start-up cancels), with the
//              range of the single runs' slopes, beside the link's own latency (500 cycles +
//              serialisation).
//   router     16-B packets through a forwarding chip (line of 3, chip 0 -> chip 2) at
//              saturation: cycles and retired instructions per packet of the two routers of the
//              middle chip (receive + forward, send), again differenced over two runs. The rate
//              is set by the slowest agent, which is the worker (fabric_traffic + the adapter's
//              push, ~460 cycles a packet, never waiting for a slot), so the routers' own cost
//              is printed too: busy cycles per packet of each router on the path, i.e. cycles
//              whose PC is outside the set its loop visits while the fabric is idle (sampled
//              every cycle over a window).
//   profile    PC histograms (every cycle, 400 k cycles at saturation) of the four routers on
//              the router-mode path and the worker, to /tmp/fabric_profile-<core>.txt ("pc
//              count"; map with riscv64-unknown-elf-addr2line -f -i on the ELF);
//              profile-bi16 / profile-bi2k: the same for the bidirectional one-hop run,
//              profile-uni16 / -uni2k / -uni4k for the unidirectional one (chip 0 -> chip 1).
//   trace      PC of every router of a 4-chip line, every cycle, while one packet goes 3 hops:
//              /tmp/fabric_trace.txt ("<router> <cycle> <pc>"), for per-hop latency breakdowns.
//   stages     where a ch0 slot's round trip goes, one hop at saturation (16 B, 2 KiB, 4 KiB):
//              mean cycles from push to send, to announcement, to take, to the completion back
//              and processed, to the slot's next push, from the stream counters' running sums.
//              A queue in front of a stage (e.g. landed packets waiting to be taken) shows which
//              router limits the rate; each router's busy share (as in `router`) says the same.
//              FB_EVENTS=1 also prints 24 packets' stage cycles and writes both routers' PCs
//              around them to P_stages_pc.txt (the trace format).
//   FB_PAYLOAD, FB_SS, FB_RS  (environment) plan another slot payload / sender / receiver slot
//              count than the automatic one, to see what slots are worth.
//   --phases K   each bandwidth row as the mean of K start phases rather than 4 (the 16-B
//                bidirectional row moves several percent with the phase alone: compare two
//                firmwares with more)
//   --firmware DIR  the ELFs of another build (DIR/wormhole_b0/*.elf), to compare two firmwares
//   --prefix P   profile and trace files go to P_profile-<core>.txt / P_trace.txt instead of
//                /tmp/fabric_... (several people profiling on one machine); `router --prefix P`
//                also writes the busy cycles' PC histograms, P_busy-<n>.txt (n: the row).
//
// Cycles are core clock cycles (WH: 1 GHz, so 1 B/cycle = 1 GB/s and 1 packet/cycle = 1e9/s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster.h"
#include "common/fabric_link.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/launch.h"
#include "fabric/sim_device.h"
#include "fabric/soc_descriptor.h"
#include "protocol/fabric.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"
#include "tile.h"

namespace {

namespace pf = protocol::fabric;
using fabric::ChipId;
using fabric::CoreLocation;
using fabric::FabricDir;

using bench::kFrameOverhead;
using bench::kLinkBytesPerCycle;
constexpr uint32_t kLinkLatency = 500;

// Payload capacity of the link for packets of `payload` bytes (see the top of the file).
double capacity(uint32_t payload) {
    return bench::fabric_link_capacity(payload);
}
// One hop of the bare link for a packet: wire latency plus serialisation.
double link_hop(uint32_t payload) {
    const uint32_t packet = payload + static_cast<uint32_t>(sizeof(pf::PacketHeader));
    return kLinkLatency +
           (packet + bench::fabric_packet_frames(payload) * kFrameOverhead) / kLinkBytesPerCycle;
}

// The T3000 chips as one chain (tests/sim/fabric_test.cpp uses the same one).
const std::vector<ChipId> kChain = {0, 1, 2, 3, 7, 6, 5, 4};

// Worker L1 (same map as the sim tests and fabricctl's traffic).
constexpr uint32_t kConnL1 = 0x18000;
constexpr uint32_t kDestsAddr = 0x18200;
constexpr uint32_t kSrcAddr = 0x19000;
constexpr uint32_t kSinkRegion = 0x60000;
constexpr uint32_t kSinkSem = 0x50000;

std::string path(const char* dir, const std::string& f) {
    return std::string(dir) + "/" + f;
}

struct Bench {
    explicit Bench(const std::string& firmware_dir)
        : router(fabric::ElfImage::load_file(firmware_dir + "/wormhole_b0/fabric_router.elf")),
          worker(fabric::ElfImage::load_file(firmware_dir + "/wormhole_b0/fabric_traffic.elf")) {}
    fabric::SocDescriptor soc = fabric::SocDescriptor::load_file(
        path(FABRIC_SOC_DESCRIPTOR_DIR, "wormhole_b0_80_arch.yaml"));
    fabric::ClusterDescriptor cluster =
        fabric::ClusterDescriptor::load_file(path(FABRIC_SOC_DESCRIPTOR_DIR, "t3k_cluster.yaml"));
    fabric::ElfImage router;
    fabric::ElfImage worker;
    uint64_t sim_cycles = 0;
};

// A fabric up on a line of the first `chips` chips of the chain.
struct Line {
    fabric::SimDevice dev;
    fabric::FabricRunner runner;
    const fabric::SocDescriptor& soc;
    Bench& b;

    static fabric::SimDeviceOptions options(const Bench& b) {
        fabric::SimDeviceOptions o;
        o.cluster = b.cluster;
        return o;
    }
    static fabric::FabricPlan plan(const Bench& b, size_t chips) {
        fabric::FabricOptions o;
        o.chips.assign(kChain.begin(), kChain.begin() + static_cast<long>(chips));
        if (getenv("FB_PAYLOAD")) o.payload_bytes = atoi(getenv("FB_PAYLOAD"));
        if (getenv("FB_SS")) o.sender_slots = atoi(getenv("FB_SS"));
        if (getenv("FB_RS")) o.receiver_slots = atoi(getenv("FB_RS"));
        return fabric::plan_fabric(b.cluster, b.soc, o);
    }
    Line(Bench& bench, size_t chips)
        : dev(bench.soc, hal::Arch::WormholeB0, options(bench)),
          runner(dev, plan(bench, chips), bench.router),
          soc(bench.soc),
          b(bench) {
        runner.bring_up(20'000'000);
        // NoC writes to a core the model has not instantiated are lost: create every sink.
        for (ChipId c : runner.plan().chips) dev.write32(sink(c), kSinkSem, 0);
    }
    ~Line() { b.sim_cycles += dev.cycles(); }

    fabric::CoreCoord worker_core(size_t k) const { return soc.cores(fabric::CoreType::Worker)[k]; }
    CoreLocation sink(ChipId chip) const { return {chip, worker_core(2)}; }

    // Worker `k` of chip index `from` sending `count` packets of `bytes` towards `dir`.
    struct Worker {
        CoreLocation core;
        protocol::FabricTrafficArgs args{};
        protocol::FabricDest dest{};
    };
    Worker make_worker(size_t from, size_t k, FabricDir dir, uint32_t hops, pf::NocSendType type,
                       uint32_t bytes, uint32_t count) {
        const auto& plan = runner.plan();
        Worker w;
        w.core = {plan.chips[from], worker_core(k)};
        w.args.channel = plan.worker_channel(plan.chips[from], dir);
        w.args.send_type = static_cast<uint32_t>(type);
        w.args.packet_bytes = bytes;
        w.args.packet_count = count;
        w.args.num_dests = 1;
        w.args.dest_slots = 1;
        w.args.dests_addr = kDestsAddr;
        w.args.src_addr = kSrcAddr;
        w.args.conn_l1 = kConnL1;
        w.args.timeout_us = 100'000;
        const fabric::CoreCoord s = worker_core(2);
        w.dest.route = pf::route_unicast(hops);
        w.dest.flags_word = pf::Route{}.with_ttl(plan.ttl()).flags_word;
        w.dest.x = w.dest.sem_x = s.x;
        w.dest.y = w.dest.sem_y = s.y;
        w.dest.addr = kSinkRegion + static_cast<uint32_t>(k) * 0x8000;
        w.dest.seed = 0x1000u * static_cast<uint32_t>(k + 1);
        w.dest.sem_addr = kSinkSem + 16 * static_cast<uint32_t>(k);
        return w;
    }

    // Load and start the workers; returns the cycle they started at.
    uint64_t start(std::vector<Worker>& ws) {
        std::vector<fabric::LaunchTarget> targets;
        auto rules = fabric::erisc_placement(hal::kWormholeB0, soc.worker_l1_size());
        for (auto& w : ws) targets.push_back({w.core, &b.worker, rules});
        const auto methods = fabric::load_many(dev, targets);
        for (auto& w : ws) {
            std::vector<uint8_t> d(sizeof w.dest);
            std::memcpy(d.data(), &w.dest, sizeof w.dest);
            dev.write(w.core, kDestsAddr, d);
            protocol::TestMailbox m{};
            m.magic = protocol::kTestMailboxMagic;
            m.num_args = sizeof(w.args) / 4;
            std::memcpy(m.args, &w.args, sizeof w.args);
            std::vector<uint8_t> mb(sizeof m);
            std::memcpy(mb.data(), &m, sizeof m);
            dev.write(w.core, protocol::test_mailbox_addr(hal::Arch::WormholeB0), mb);
        }
        start_targets_ = targets;
        methods_ = methods;
        const uint64_t t0 = dev.cycles();
        fabric::start_many(dev, targets, methods);
        return t0;
    }
    // Wait for the workers; their results (failing loudly if one did not pass).
    std::vector<protocol::FabricTrafficResults> wait(std::vector<Worker>& ws) {
        fabric::LaunchOptions lo;
        lo.max_cycles = 200'000'000;
        lo.poll_cycles = 2'000;
        const auto res = fabric::wait_many(dev, start_targets_, methods_, lo);
        std::vector<protocol::FabricTrafficResults> out;
        for (size_t i = 0; i < ws.size(); ++i) {
            protocol::TestMailbox m{};
            std::vector<uint8_t> mb(sizeof m);
            dev.read(ws[i].core, protocol::test_mailbox_addr(hal::Arch::WormholeB0), mb);
            std::memcpy(&m, mb.data(), sizeof m);
            if (res[i].outcome != fabric::LaunchOutcome::Exited ||
                m.status != static_cast<uint32_t>(protocol::TestStatus::Done)) {
                fabric::fail(fabric::ErrorCategory::Fabric,
                             "worker {} did not pass (outcome {}, status {:#x}, stuck_at {:#x})",
                             ws[i].core.str(), fabric::outcome_name(res[i].outcome), m.status,
                             m.stuck_at);
            }
            protocol::FabricTrafficResults r;
            std::memcpy(&r, m.results, sizeof r);
            out.push_back(r);
        }
        return out;
    }
    sim::Tile& tile(ChipId chip, FabricDir d) {
        return dev.tile(runner.plan().router(chip, d).core);
    }

    std::vector<fabric::LaunchTarget> start_targets_;
    std::vector<fabric::LaunchMethod> methods_;
};

struct Timer {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    double secs() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
};

// Cycles of each worker for `count` packets per worker, the workers started `phase` cycles after
// the fabric came up.
std::vector<uint32_t> send_cycles(Bench& b, bool bidir, uint32_t bytes, uint32_t count,
                                  uint32_t phase) {
    Line line(b, 2);
    std::vector<Line::Worker> ws{
        line.make_worker(0, 0, FabricDir::East, 1, pf::NocSendType::UnicastWrite, bytes, count)};
    if (bidir)
        ws.push_back(line.make_worker(1, 1, FabricDir::West, 1, pf::NocSendType::UnicastWrite,
                                      bytes, count));
    line.dev.step(phase);
    line.start(ws);
    std::vector<uint32_t> out;
    for (const auto& r : line.wait(ws)) out.push_back(r.cycles);
    (void)line.runner.terminate(pf::Termination::Graceful, 20'000'000);
    return out;
}

// The workers start at these many phases, kBandwidthPhaseStep cycles apart, after the fabric
// came up: where the two directions' routers meet in their loops at the start can settle the
// rate a few percent apart (a bidirectional 2 KiB row moved 1-3 % with two instructions more
// at start-up), so a row is the mean over the phases, with their range.
uint32_t g_bandwidth_phases = 4;
constexpr uint32_t kBandwidthPhaseStep = 29;

void bandwidth(Bench& b, bool quick) {
    std::printf(
        "\n== bandwidth: one hop (chip 0 <-> chip 1), UnicastWrite, per direction, mean "
        "of %u start phases\n",
        g_bandwidth_phases);
    std::printf("%8s %6s %10s %10s %9s %12s %12s %16s\n", "payload", "dirs", "B/cycle", "capacity",
                "of cap", "Mpackets/s", "packets", "B/cycle range");
    for (uint32_t bytes : {16u, 2048u, 4096u}) {
        const uint32_t n2 = quick ? (bytes == 16 ? 800 : 200) : (bytes == 16 ? 4000 : 800);
        const uint32_t n1 = n2 / 4;
        for (bool bidir : {false, true}) {
            double sum = 0, lo = 0, hi = 0;
            for (uint32_t k = 0; k < g_bandwidth_phases; ++k) {
                const uint32_t phase = k * kBandwidthPhaseStep;
                const auto t1 = send_cycles(b, bidir, bytes, n1, phase);
                const auto t2 = send_cycles(b, bidir, bytes, n2, phase);
                double rate = 0;  // the slower direction
                for (size_t i = 0; i < t1.size(); ++i) {
                    const double r = double(n2 - n1) * bytes / double(t2[i] - t1[i]);
                    rate = i == 0 ? r : std::min(rate, r);
                }
                sum += rate;
                lo = k == 0 ? rate : std::min(lo, rate);
                hi = k == 0 ? rate : std::max(hi, rate);
            }
            const double rate = sum / g_bandwidth_phases;
            std::printf("%8u %6s %10.3f %10.3f %8.1f%% %12.3f %12u %7.3f..%-7.3f\n", bytes,
                        bidir ? "bi" : "uni", rate, capacity(bytes), 100 * rate / capacity(bytes),
                        rate / bytes * 1e3, n2, lo, hi);
        }
    }
}

// Runs per hop count, each started this many cycles later than the one before: an idle router
// sees a packet only when its loop comes round, so one run's arrival moves by up to a pass per
// router on the way (tens of cycles a hop); the mean over start phases does not.
constexpr uint32_t kLatencyRuns = 8;
constexpr uint32_t kLatencyPhaseStep = 29;  // not a divisor of a loop pass: the phases spread

void latency(Bench& b) {
    std::printf(
        "\n== latency: chip 0 -> chip h of an 8-chip line, one packet (fused write + atomic inc), "
        "mean of %u start phases\n",
        kLatencyRuns);
    std::printf("%8s %s\n", "payload",
                "mean cycles to arrival for h = 1..7, then the per-hop slope (min..max of the "
                "runs' slopes)");
    for (uint32_t bytes : {16u, 4096u}) {
        Line line(b, 8);
        std::vector<std::vector<double>> runs(kLatencyRuns);  // [run][h - 1]
        for (uint32_t h = 1; h <= 7; ++h) {
            for (uint32_t run = 0; run < kLatencyRuns; ++run) {
                const fabric::CoreLocation sink = line.sink(line.runner.plan().chips[h]);
                std::vector<Line::Worker> ws{line.make_worker(
                    0, 0, FabricDir::East, h, pf::NocSendType::FusedWriteAtomicInc, bytes, 1)};
                line.dev.write32(sink, ws[0].dest.sem_addr, 0);
                line.dev.step(run * kLatencyPhaseStep);
                const uint64_t t0 = line.start(ws);
                uint64_t arrived = 0;
                while (line.dev.cycles() - t0 < 1'000'000) {
                    line.dev.step(4);
                    if (line.dev.read32(sink, ws[0].dest.sem_addr) == 1) {
                        arrived = line.dev.cycles() - t0;
                        break;
                    }
                }
                (void)line.wait(ws);
                if (arrived == 0)
                    fabric::fail(fabric::ErrorCategory::Fabric,
                                 "latency: packet of {} B never arrived {} hops away", bytes, h);
                runs[run].push_back(static_cast<double>(arrived));
            }
        }
        (void)line.runner.terminate(pf::Termination::Graceful, 20'000'000);
        // least-squares slope over h = 1..7
        const auto slope_of = [](const std::vector<double>& t) {
            double sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (size_t i = 0; i < t.size(); ++i) {
                const double x = double(i + 1);
                sx += x;
                sy += t[i];
                sxx += x * x;
                sxy += x * t[i];
            }
            const double n = double(t.size());
            return (n * sxy - sx * sy) / (n * sxx - sx * sx);
        };
        std::vector<double> mean(runs[0].size(), 0.0);
        double lo = 1e18, hi = 0;
        for (const auto& t : runs) {
            for (size_t i = 0; i < t.size(); ++i) mean[i] += t[i] / kLatencyRuns;
            const double one = slope_of(t);
            lo = std::min(lo, one);
            hi = std::max(hi, one);
        }
        const double slope = slope_of(mean);
        std::printf("%8u", bytes);
        for (double v : mean) std::printf(" %6.0f", v);
        std::printf(
            "  | per hop %.0f cycles (%.0f..%.0f); bare link %.0f; router overhead %.0f per hop\n",
            slope, lo, hi, link_hop(bytes), slope - link_hop(bytes));
    }
}

struct RouterCost {
    uint64_t cycles;
    uint64_t instret_rx;  // west router of the middle chip (receives + forwards)
    uint64_t instret_tx;  // east router of the middle chip (sends on)
};
RouterCost forward_run(Bench& b, uint32_t count) {
    Line line(b, 3);
    const ChipId mid = line.runner.plan().chips[1];
    std::vector<Line::Worker> ws{
        line.make_worker(0, 0, FabricDir::East, 2, pf::NocSendType::UnicastWrite, 16, count)};
    sim::Tile& rx = line.tile(mid, FabricDir::West);
    sim::Tile& tx = line.tile(mid, FabricDir::East);
    const uint64_t i_rx = rx.instret(), i_tx = tx.instret();
    line.start(ws);
    const auto r = line.wait(ws);
    RouterCost c{r[0].cycles, rx.instret() - i_rx, tx.instret() - i_tx};
    (void)line.runner.terminate(pf::Termination::Graceful, 20'000'000);
    return c;
}

// Busy cycles per packet of the routers on the path, at the rate one worker sets: every cycle of
// a window is sampled and counted busy when the router's PC is outside the set of PCs its loop
// visits while the fabric is idle (collected first, before any traffic). An idle pass costs
// nothing, a pass that moves a packet counts its work (the loop's own polling in it excepted):
// the cycles a router needs per packet, whoever limits the rate.
struct BusyCost {
    const char* name;
    double per_packet;
    double share;
};
std::vector<BusyCost> busy_run(Bench& b, uint32_t count, double cycles_per_packet,
                               const std::string& busy_prefix) {
    Line line(b, 3);
    const auto& plan = line.runner.plan();
    struct Probe {
        const char* name;
        sim::Tile* tile;
        std::set<uint32_t> idle;
        uint64_t busy = 0;
        std::map<uint32_t, uint64_t> hist = {};  // busy cycles per PC
    };
    std::vector<Probe> probes{
        {"chip 0 East (sends the worker's packets)",
         &line.tile(plan.chips[0], FabricDir::East),
         {}},
        {"chip 1 West (receives + forwards)", &line.tile(plan.chips[1], FabricDir::West), {}},
        {"chip 1 East (sends on)", &line.tile(plan.chips[1], FabricDir::East), {}},
        {"chip 2 West (receives + delivers)", &line.tile(plan.chips[2], FabricDir::West), {}}};
    for (uint32_t i = 0; i < 50'000; ++i) {
        line.dev.step(1);
        for (auto& p : probes) p.idle.insert(p.tile->pc());
    }
    std::vector<Line::Worker> ws{
        line.make_worker(0, 0, FabricDir::East, 2, pf::NocSendType::UnicastWrite, 16, count)};
    line.start(ws);
    // Past the worker's start-up (open, first credits), well before its last packet.
    const uint64_t warmup = 20'000, window = static_cast<uint64_t>(cycles_per_packet * count / 2);
    line.dev.step(warmup);
    for (uint64_t i = 0; i < window; ++i) {
        line.dev.step(1);
        for (auto& p : probes) {
            const uint32_t pc = p.tile->pc();
            if (p.idle.count(pc) != 0) continue;
            ++p.busy;
            if (!busy_prefix.empty()) ++p.hist[pc];
        }
    }
    for (size_t i = 0; i < probes.size() && !busy_prefix.empty(); ++i) {
        const std::string f = busy_prefix + "_busy-" + std::to_string(i) + ".txt";
        FILE* out = std::fopen(f.c_str(), "w");
        if (out == nullptr)
            fabric::fail(fabric::ErrorCategory::Fabric, "router: cannot write {}", f);
        for (const auto& [pc, n] : probes[i].hist)
            std::fprintf(out, "%08x %llu\n", pc, static_cast<unsigned long long>(n));
        std::fclose(out);
    }
    (void)line.wait(ws);
    (void)line.runner.terminate(pf::Termination::Graceful, 20'000'000);
    const double packets = double(window) / cycles_per_packet;
    std::vector<BusyCost> out;
    for (const auto& p : probes)
        out.push_back({p.name, double(p.busy) / packets, double(p.busy) / double(window)});
    return out;
}

void router_cost(Bench& b, bool quick, const std::string& busy_prefix) {
    std::printf(
        "\n== router cost: 16-B packets forwarded through chip 1 of a 3-chip line, at "
        "saturation\n");
    const uint32_t n2 = quick ? 800 : 4000, n1 = n2 / 4;
    const RouterCost a = forward_run(b, n1), c = forward_run(b, n2);
    const double dn = double(n2 - n1);
    const double per_packet = double(c.cycles - a.cycles) / dn;
    std::printf("cycles per packet (throughput bound): %.1f\n", per_packet);
    std::printf(
        "instructions per packet: receiving+forwarding router %.1f, sending router %.1f "
        "(retired in the same interval, idle polling included)\n",
        double(c.instret_rx - a.instret_rx) / dn, double(c.instret_tx - a.instret_tx) / dn);
    std::printf(
        "busy cycles per packet (PC outside the idle loop; the rest of the %.0f is idle "
        "polling):\n",
        per_packet);
    for (const BusyCost& r : busy_run(b, quick ? 800 : 2000, per_packet, busy_prefix)) {
        std::printf("  %-42s %6.1f  (busy %4.1f%% of the time)\n", r.name, r.per_packet,
                    100 * r.share);
    }
}

// PC histograms, sampled every cycle over a window at saturation, written as "pc count" lines to
// <prefix>-<name>.txt for scripts that map PCs to source lines (addr2line -i on the ELF). A
// development aid.
struct Probe {
    const char* name;
    sim::Tile* tile;
    std::map<uint32_t, uint64_t> hist = {};
};
constexpr uint64_t kProfileWindow = 400'000;
// Enough packets to keep the one-hop line saturated through the window at any size (~240 cycles a
// packet at 16 B and 2 KiB, ~400 at 4 KiB).
constexpr uint32_t kProfilePackets = 4000;

// Let the workers reach saturation, sample the probes, let the workers finish, stop the fabric,
// write the histograms.
void sample_profile(Line& line, std::vector<Line::Worker>& ws, std::vector<Probe>& probes,
                    const std::string& prefix) {
    line.dev.step(100'000);
    for (uint64_t i = 0; i < kProfileWindow; ++i) {
        line.dev.step(1);
        for (auto& p : probes) ++p.hist[p.tile->pc()];
    }
    (void)line.wait(ws);
    (void)line.runner.terminate(pf::Termination::Graceful, 20'000'000);
    for (auto& p : probes) {
        const std::string f = prefix + "-" + p.name + ".txt";
        FILE* out = std::fopen(f.c_str(), "w");
        if (out == nullptr)
            fabric::fail(fabric::ErrorCategory::Fabric, "profile: cannot write {}", f);
        for (const auto& [pc, n] : p.hist)
            std::fprintf(out, "%08x %llu\n", pc, static_cast<unsigned long long>(n));
        std::fclose(out);
    }
}

// Both routers of a two-chip line and chip 0's worker, traffic both ways (or only East).
void profile_bidir(Bench& b, const std::string& prefix, uint32_t bytes, bool bidir = true) {
    Line line(b, 2);
    const auto& plan = line.runner.plan();
    std::vector<Probe> probes{{"c0_east", &line.tile(plan.chips[0], FabricDir::East)},
                              {"c1_west", &line.tile(plan.chips[1], FabricDir::West)}};
    std::vector<Line::Worker> ws{line.make_worker(
        0, 0, FabricDir::East, 1, pf::NocSendType::UnicastWrite, bytes, kProfilePackets)};
    if (bidir)
        ws.push_back(line.make_worker(1, 1, FabricDir::West, 1, pf::NocSendType::UnicastWrite,
                                      bytes, kProfilePackets));
    line.start(ws);
    probes.push_back({"worker", &line.dev.tile(ws[0].core)});
    sample_profile(line, ws, probes, prefix);
    std::printf("\n== profile (%s, %u B): histograms in %s-*.txt\n",
                bidir ? "bidirectional" : "unidirectional", bytes, prefix.c_str());
}

// The four routers on the forwarding path (chip 0 East sends the worker's packets, chip 1 West
// receives + forwards, chip 1 East sends on, chip 2 West receives + delivers) and the worker.
void profile(Bench& b, const std::string& prefix) {
    Line line(b, 3);
    const auto& plan = line.runner.plan();
    std::vector<Probe> probes{{"c0_east", &line.tile(plan.chips[0], FabricDir::East)},
                              {"c1_west", &line.tile(plan.chips[1], FabricDir::West)},
                              {"c1_east", &line.tile(plan.chips[1], FabricDir::East)},
                              {"c2_west", &line.tile(plan.chips[2], FabricDir::West)}};
    std::vector<Line::Worker> ws{
        line.make_worker(0, 0, FabricDir::East, 2, pf::NocSendType::UnicastWrite, 16, 3000)};
    line.start(ws);
    probes.push_back({"worker", &line.dev.tile(ws[0].core)});
    sample_profile(line, ws, probes, prefix);
    std::printf("\n== profile: %llu cycles sampled per router, histograms in %s-*.txt\n",
                static_cast<unsigned long long>(kProfileWindow), prefix.c_str());
}

// PC of every router on a 4-chip line, every cycle, while one 16-B packet (fused write + atomic
// inc) goes 3 hops: "<router> <cycle> <pc>" lines in <prefix>.txt. A development aid.
void trace(Bench& b, const std::string& prefix) {
    Line line(b, 4);
    const auto& plan = line.runner.plan();
    std::vector<std::pair<std::string, sim::Tile*>> probes;
    for (size_t i = 0; i < 4; ++i) {
        if (i > 0)
            probes.push_back(
                {"c" + std::to_string(i) + "_west", &line.tile(plan.chips[i], FabricDir::West)});
        if (i < 3)
            probes.push_back(
                {"c" + std::to_string(i) + "_east", &line.tile(plan.chips[i], FabricDir::East)});
    }
    const fabric::CoreLocation sink = line.sink(plan.chips[3]);
    std::vector<Line::Worker> ws{
        line.make_worker(0, 0, FabricDir::East, 3, pf::NocSendType::FusedWriteAtomicInc, 16, 1)};
    line.dev.write32(sink, ws[0].dest.sem_addr, 0);
    const uint64_t t0 = line.start(ws);
    const std::string f = prefix + ".txt";
    FILE* out = std::fopen(f.c_str(), "w");
    if (out == nullptr) fabric::fail(fabric::ErrorCategory::Fabric, "trace: cannot write {}", f);
    for (uint64_t c = 0; c < 12'000; ++c) {
        line.dev.step(1);
        for (auto& [n, t] : probes)
            std::fprintf(out, "%s %llu %08x\n", n.c_str(),
                         static_cast<unsigned long long>(line.dev.cycles() - t0), t->pc());
        if (line.dev.read32(sink, ws[0].dest.sem_addr) == 1) {
            std::fprintf(out, "arrived %llu 0\n",
                         static_cast<unsigned long long>(line.dev.cycles() - t0));
            break;
        }
    }
    std::fclose(out);
    (void)line.wait(ws);
    (void)line.runner.terminate(pf::Termination::Graceful, 20'000'000);
    std::printf("\n== trace in %s\n", f.c_str());
}

// Where a packet's round trip goes, one hop, unidirectional, at saturation: the stream counters
// along the path, read every cycle from the model (sim::StreamRegs' running sums of what was added
// and subtracted; nothing in the firmware). Their increments are events in packet order: the
// worker's push (chip 0 East's Pushed0 +1), the router's send (Pushed0 -1), the announcement
// landing (chip 1 West's RxSent0 +n), the take (RxSent0 -n), the completion landing back (chip 0
// East's Completed0 +n) and its processing (Completed0 -n); a ch0 slot is pushed again `slots`
// packets later. Prints the mean time between the stages over the packets of the window.
void stages(Bench& b, uint32_t bytes, const std::string& prefix) {
    Line line(b, 2);
    const auto& plan = line.runner.plan();
    const fabric::RouterPlacement& tx = plan.router(plan.chips[0], FabricDir::East);
    const fabric::RouterPlacement& rx = plan.router(plan.chips[1], FabricDir::West);
    sim::StreamRegs& txs = line.dev.cluster().chip(tx.chip).streams(tx.core.core.x, tx.core.core.y);
    sim::StreamRegs& rxs = line.dev.cluster().chip(rx.chip).streams(rx.core.core.x, rx.core.core.y);
    // Each router's busy cycles (PC outside the set its loop visits while idle, as in `router`).
    sim::Tile* tiles[2] = {&line.tile(plan.chips[0], FabricDir::East),
                           &line.tile(plan.chips[1], FabricDir::West)};
    std::set<uint32_t> idle[2];
    uint64_t busy[2] = {0, 0};
    for (uint32_t i = 0; i < 50'000; ++i) {
        line.dev.step(1);
        for (int k = 0; k < 2; ++k) idle[k].insert(tiles[k]->pc());
    }
    std::vector<Line::Worker> ws{line.make_worker(
        0, 0, FabricDir::East, 1, pf::NocSendType::UnicastWrite, bytes, kProfilePackets)};
    line.start(ws);
    struct Counter {  // the cycles at which a running sum reached 1, 2, 3, ...
        std::vector<uint64_t> at;
        void sample(uint64_t sum, uint64_t t) {
            while (at.size() < sum) at.push_back(t);
        }
    };
    Counter pushed, sent, landed, taken, completed, processed;
    // FB_EVENTS=1: each router's PC on every cycle too, for the dump below.
    const bool events = getenv("FB_EVENTS") != nullptr;
    const uint64_t t_first = line.dev.cycles();
    std::vector<std::pair<uint32_t, uint32_t>> pcs;
    const uint64_t end = line.dev.cycles() + 100'000 + kProfileWindow;
    for (uint64_t t = line.dev.cycles(); t < end; ++t) {
        line.dev.step(1);
        pushed.sample(txs.added(pf::kStreamPushed0), t);
        sent.sample(txs.subtracted(pf::kStreamPushed0), t);
        landed.sample(rxs.added(pf::kStreamRxSent0), t);
        taken.sample(rxs.subtracted(pf::kStreamRxSent0), t);
        completed.sample(txs.added(pf::kStreamCompleted0), t);
        processed.sample(txs.subtracted(pf::kStreamCompleted0), t);
        if (events) pcs.push_back({tiles[0]->pc(), tiles[1]->pc()});
        if (t >= end - kProfileWindow) {
            for (int k = 0; k < 2; ++k) busy[k] += idle[k].count(tiles[k]->pc()) == 0 ? 1 : 0;
        }
    }
    (void)line.wait(ws);
    (void)line.runner.terminate(pf::Termination::Graceful, 20'000'000);
    const uint32_t slots = tx.config.sender_slots[0];
    const std::vector<std::pair<const char*, const std::vector<uint64_t>*>> path{
        {"pushed by the worker", &pushed.at},
        {"sent by chip 0 East", &sent.at},
        {"announced to chip 1 West", &landed.at},
        {"taken (delivered)", &taken.at},
        {"completion back at chip 0 East", &completed.at},
        {"completion processed", &processed.at}};
    size_t n = pushed.at.size();
    for (const auto& [name, v] : path) n = std::min(n, v->size());
    // Packets past the warm-up whose slot was pushed again within the window.
    const size_t first = n / 4, last = n > slots ? n - slots : 0;
    if (last <= first)
        fabric::fail(fabric::ErrorCategory::Fabric, "stages: too few packets ({})", n);
    std::printf(
        "\n== stages: one hop, %u B, UnicastWrite, packets %zu..%zu of the window, %u ch0 slots\n",
        bytes, first, last, slots);
    double total = 0;
    for (size_t i = 0; i < path.size(); ++i) {
        const auto& next = i + 1 < path.size() ? *path[i + 1].second : pushed.at;
        const size_t shift = i + 1 < path.size() ? 0 : slots;  // the slot's next push
        double sum = 0;
        for (size_t k = first; k < last; ++k)
            sum += double(next[k + shift]) - double((*path[i].second)[k]);
        const double mean = sum / double(last - first);
        total += mean;
        std::printf("  %-32s -> %-32s %8.1f cycles\n", path[i].first,
                    i + 1 < path.size() ? path[i + 1].first : "the slot pushed again", mean);
    }
    if (events) {
        // Packets k0.. k0 + 23: the cycle of each stage (columns in the order above) from the
        // first one's push; and both routers' PCs over those cycles, "<router> <cycle> <pc>" lines
        // (the trace format) in <prefix>_stages_pc.txt.
        const size_t k0 = first + (last - first) / 2;
        const uint64_t t0 = pushed.at[k0];
        std::printf(
            "  events (cycles from packet %zu's push): push, send, announced, taken, completion "
            "back, processed\n",
            k0);
        for (size_t k = k0; k < k0 + 24 && k < last; ++k) {
            std::printf("  packet %5zu:", k);
            for (const auto& [name, v] : path)
                std::printf(" %6lld", static_cast<long long>((*v)[k]) - static_cast<long long>(t0));
            std::printf("\n");
        }
        const std::string f = prefix + "_stages_pc.txt";
        FILE* out = std::fopen(f.c_str(), "w");
        if (out == nullptr)
            fabric::fail(fabric::ErrorCategory::Fabric, "stages: cannot write {}", f);
        for (size_t i = 0; i < pcs.size(); ++i) {
            const long long rel = static_cast<long long>(t_first + i) - static_cast<long long>(t0);
            if (rel < -2000 || rel > 8000) continue;
            std::fprintf(out, "c0_east %lld %08x\nc1_west %lld %08x\n", rel, pcs[i].first, rel,
                         pcs[i].second);
        }
        std::fclose(out);
        std::printf("  PCs of both routers in %s\n", f.c_str());
    }
    const double interval = double(pushed.at[last] - pushed.at[first]) / double(last - first);
    std::printf("  round trip of a ch0 slot %.0f cycles = %u slots x %.1f cycles a packet\n", total,
                slots, interval);
    std::printf("  busy (last %llu cycles): chip 0 East %.1f%%, chip 1 West %.1f%%\n",
                static_cast<unsigned long long>(kProfileWindow),
                100.0 * double(busy[0]) / kProfileWindow, 100.0 * double(busy[1]) / kProfileWindow);
}

}  // namespace

int main(int argc, char** argv) {
    std::string what = "all";
    bool quick = false;
    std::string firmware_dir = FABRIC_FIRMWARE_DIR;
    std::string prefix_arg;              // --prefix as given
    std::string prefix = "/tmp/fabric";  // profile / trace output files start with this
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else if (a == "--firmware" && i + 1 < argc)
            firmware_dir = argv[++i];
        else if (a == "--prefix" && i + 1 < argc)
            prefix = prefix_arg = argv[++i];
        else if (a == "--phases" && i + 1 < argc)
            g_bandwidth_phases = static_cast<uint32_t>(std::max(1, std::atoi(argv[++i])));
        else
            what = a;
    }
    try {
        Bench b(firmware_dir);
        Timer timer;
        std::printf(
            "fabric_bench: Wormhole B0 model, T3000 cluster, payload slots %u B, router %s\n",
            pf::kDefaultPayloadBytes, (firmware_dir + "/wormhole_b0/fabric_router.elf").c_str());
        if (what == "all" || what == "bandwidth") bandwidth(b, quick);
        if (what == "all" || what == "latency") latency(b);
        if (what == "all" || what == "router")
            router_cost(b, quick, what == "router" ? prefix_arg : "");
        if (what == "profile") profile(b, prefix + "_profile");
        if (what == "profile-bi16") profile_bidir(b, prefix + "_profile", 16);
        if (what == "profile-bi2k") profile_bidir(b, prefix + "_profile", 2048);
        if (what == "profile-uni16") profile_bidir(b, prefix + "_profile", 16, false);
        if (what == "profile-uni2k") profile_bidir(b, prefix + "_profile", 2048, false);
        if (what == "profile-uni4k") profile_bidir(b, prefix + "_profile", 4096, false);
        if (what == "trace") trace(b, prefix + "_trace");
        if (what == "stages16") stages(b, 16, prefix);
        if (what == "stages2k") stages(b, 2048, prefix);
        if (what == "stages4k") stages(b, 4096, prefix);
        std::printf("\n(%.1f M simulated cycles in %.1f s)\n", double(b.sim_cycles) / 1e6,
                    timer.secs());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fabric_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
