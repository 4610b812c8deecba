// mesh_bench: the 2D fabric in the model (Wormhole B0, fabric_router_2d.elf), planned by
// plan_mesh and brought up by FabricRunner over SimDevice as `fabricctl mesh up` does, with
// fabric_traffic workers from fabric/mesh_traffic.h. Prints figures; not a test.
//
//   mesh_bench [bringup|alltoall|all] [--quick] [--workers] [--firmware DIR] [--slots S,R]
//              [--phases K] [--bytes P] [--threads N]
//
//   --workers   every worker's flows, packets and cycles (open .. last send) in every run
//   --firmware  the ELFs of another build (DIR/wormhole_b0/*.elf), e.g. to compare two firmwares
//   --slots     router slots per sender / receiver channel instead of the plan's choice
//   --phases    each all-to-all row as the mean of K start phases (min and max printed too)
//   --bytes     only the all-to-all rows of P-byte packets
//   --threads   threads stepping the model (SimDeviceOptions::threads; the same cycles as one)
//
//   bringup   the 8x4 galaxy (galaxy_8x4_mesh_graph.yaml on galaxy_8x4_cluster.yaml), plane 0 and
//             all four planes: wall-clock seconds to set up (plan, model) and of bring_up, device
//             cycles from the routers' start to all HandshakeComplete and to all ReadyForTraffic;
//             simulated cycles/s of bring_up and of 50,000 cycles of the ready fabric.
//   alltoall  uniform all-to-all unicast (UnicastWrite, X then Y) on plane 0 of the t3k 2x4 mesh
//             and of the 4x4 mesh: every node sends N packets of P bytes to every other node. One
//             worker per (chip, router it sends through), so a worker carries all the flows that
//             leave its chip in one direction (up to 12 on the 4x4) and the busiest one sets the
//             time. Rate = (N2 - N1) x flows x P / (T2 - T1) over two runs on the same fabric,
//             T = the slowest worker's own cycles from open to its last send, so start-up and the
//             packets in flight at the end cancel. The workers fill their source buffers, then
//             start together (MeshTrafficOptions::start_together). After each run every byte is
//             checked and the routers' counters must account for every packet.
//
// The bisection bound (uniform all-to-all, R x C mesh, one link per edge and direction on a plane):
// cut the longer dimension in half (columns if C >= R). L = links across the cut per direction
// (R, or C), X = flows whose source and destination are on different sides (both directions),
// F = all flows, c(P) = the modelled link's payload capacity per direction for packets of P bytes
// (common/fabric_link.h, as fabric_bench). With every flow at the same rate r, the cut carries
// X r <= 2 L c(P), so the aggregate F r <= c(P) x L x 2 x F / X.
//
// Cycles are core clock cycles (WH: 1 GHz, so 1 B/cycle = 1 GB/s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cluster.h"  // sim::Cluster::thread_meetings
#include "common/fabric_link.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/error.h"
#include "fabric/fabric_runner.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "fabric/sim_device.h"
#include "fabric/soc_descriptor.h"
#include "protocol/fabric.h"

namespace {

namespace pf = protocol::fabric;
using Clock = std::chrono::steady_clock;

std::string path(const char* dir, const std::string& f) {
    return std::string(dir) + "/" + f;
}

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Bench {
    explicit Bench(const char* firmware_dir)
        : router(
              fabric::ElfImage::load_file(path(firmware_dir, "wormhole_b0/fabric_router_2d.elf"))),
          worker(
              fabric::ElfImage::load_file(path(firmware_dir, "wormhole_b0/fabric_traffic.elf"))) {}
    fabric::SocDescriptor soc = fabric::SocDescriptor::load_file(
        path(FABRIC_SOC_DESCRIPTOR_DIR, "wormhole_b0_80_arch.yaml"));
    fabric::ElfImage router;
    fabric::ElfImage worker;
    uint64_t sim_cycles = 0;
};

// Router slots per sender / receiver channel (--slots S,R); 0: the plan chooses.
uint32_t g_slots[2] = {0, 0};

// A mesh graph on a cluster in the model and its runner, the fabric not yet brought up.
uint32_t g_threads = 1;  // --threads N

fabric::SimDeviceOptions device_options(const fabric::ClusterDescriptor& cluster) {
    fabric::SimDeviceOptions o;
    o.cluster = cluster;
    o.threads = g_threads;
    return o;
}

struct Mesh {
    Bench& b;
    fabric::ClusterDescriptor cluster;
    fabric::MeshGraph graph;
    fabric::MeshPlan plan;
    fabric::SimDevice dev;
    fabric::FabricRunner runner;

    static fabric::MeshFabricOptions options(std::vector<uint32_t> planes) {
        fabric::MeshFabricOptions o;
        o.planes = std::move(planes);
        o.sender_slots = g_slots[0];
        o.receiver_slots = g_slots[1];
        return o;
    }
    Mesh(Bench& bench, const std::string& graph_file, const std::string& cluster_file,
         std::vector<uint32_t> planes, uint64_t poll_cycles = fabric::kFabricPollCycles)
        : b(bench),
          cluster(
              fabric::ClusterDescriptor::load_file(path(FABRIC_SOC_DESCRIPTOR_DIR, cluster_file))),
          graph(fabric::MeshGraph::load_file(path(FABRIC_SOC_DESCRIPTOR_DIR, graph_file))),
          plan(fabric::plan_mesh(graph, cluster, bench.soc, options(std::move(planes)))),
          dev(bench.soc, hal::Arch::WormholeB0, device_options(cluster)),
          runner(dev, plan.fabric, bench.router, poll_cycles) {}
    ~Mesh() { b.sim_cycles += dev.cycles(); }
};

// ", 2 threads met 1234 times in 1200 windows, waited 12 % of their time, work split 1.93x"
// (nothing on one thread). The split: CPU time of all partitions / of the slowest in each round.
std::string meetings(fabric::SimDevice& dev) {
    const auto m = dev.cluster().thread_meetings();
    if (m.partitions == 1) return "";
    return fmt::format(
        ", {} threads met {} times in {} windows, waited {:.0f} % of their time, work split "
        "{:.2f}x",
        m.partitions, m.rounds, m.windows,
        m.round_seconds > 0 ? 100 * m.waited_seconds / (m.partitions * m.round_seconds) : 0.0,
        m.critical_cpu_seconds > 0 ? m.cpu_seconds / m.critical_cpu_seconds : 0.0);
}

// The runner sees the routers' stages when it polls: the cycle figures are good to this.
constexpr uint64_t kBringUpPoll = 100;
// Cycles the bring-up rows run the ready fabric for its "ready cyc/s" (the model's own speed).
constexpr uint64_t kReadyCycles = 50'000;

void bringup(Bench& b, bool quick) {
    std::printf(
        "\n== bring-up: 8x4 galaxy (galaxy_8x4_mesh_graph.yaml, galaxy_8x4_cluster.yaml), polled "
        "every %llu cycles\n",
        static_cast<unsigned long long>(kBringUpPoll));
    std::printf("%-8s %8s %8s %10s %12s %16s %16s %14s %14s\n", "planes", "routers", "slots",
                "setup s", "bring_up s", "handshake cyc", "ready cyc", "sim cyc/s", "ready cyc/s");
    std::vector<std::vector<uint32_t>> runs = {{0}};
    if (!quick) runs.push_back({0, 1, 2, 3});
    for (const auto& planes : runs) {
        const auto t0 = Clock::now();
        Mesh m(b, "galaxy_8x4_mesh_graph.yaml", "galaxy_8x4_cluster.yaml", planes, kBringUpPoll);
        const double setup = seconds_since(t0);
        const uint64_t c0 = m.dev.cycles();
        const auto t1 = Clock::now();
        m.runner.bring_up(50'000'000);
        const double up = seconds_since(t1);
        const uint64_t c1 = m.dev.cycles();
        // The fabric up and idle: every router polls its channels (no host work in between).
        const auto t2 = Clock::now();
        m.dev.step(kReadyCycles);
        const double ready_secs = seconds_since(t2);
        const auto& cfg = m.plan.fabric.routers.at(0).config;
        std::printf("%-8s %8zu %4u/%-3u %10.2f %12.2f %16llu %16llu %14.0f %14.0f\n",
                    planes.size() == 1 ? "0" : "0..3", m.plan.fabric.routers.size(),
                    cfg.sender_slots[0], cfg.receiver_slots[0], setup, up,
                    static_cast<unsigned long long>(m.runner.handshake_cycles()),
                    static_cast<unsigned long long>(m.runner.ready_cycles()), double(c1 - c0) / up,
                    double(kReadyCycles) / ready_secs);
        if (g_threads > 1) std::printf("  (%s)\n", meetings(m.dev).c_str() + 2);
        (void)m.runner.terminate(pf::Termination::Immediate, 5'000'000);
    }
}

std::vector<fabric::MeshFlow> all_to_all(const fabric::MeshSpec& spec) {
    std::vector<fabric::MeshFlow> flows;
    for (uint32_t a = 0; a < spec.device_count(); ++a) {
        for (uint32_t d = 0; d < spec.device_count(); ++d) {
            if (a != d) flows.push_back({{spec.id, a}, {spec.id, d}, 0});
        }
    }
    return flows;
}

// The bisection of the top of the file.
struct Bisection {
    bool cut_columns = true;
    uint32_t links = 0;   // per direction
    size_t crossing = 0;  // flows, both directions
    size_t flows = 0;
    double bound(uint32_t payload) const {
        return bench::fabric_link_capacity(payload) * links * 2 * double(flows) / double(crossing);
    }
};

Bisection bisection(const fabric::MeshPlan& plan, const fabric::MeshSpec& spec,
                    const std::vector<fabric::MeshFlow>& flows) {
    Bisection bi;
    bi.cut_columns = spec.cols >= spec.rows;
    const uint32_t half = (bi.cut_columns ? spec.cols : spec.rows) / 2;
    const auto side = [&](fabric::MeshDeviceId d) {
        return (bi.cut_columns ? spec.col_of(d) : spec.row_of(d)) < half;
    };
    // Links across the cut: the routers on the near side facing it (plane 0, one per link).
    const fabric::MeshDir facing = bi.cut_columns ? fabric::MeshDir::E : fabric::MeshDir::S;
    for (const auto& r : plan.fabric.routers) {
        const auto& p = *r.mesh;
        const uint32_t at =
            bi.cut_columns ? spec.col_of(p.node.device) : spec.row_of(p.node.device);
        if (p.plane == 0 && p.dir == facing && at == half - 1) ++bi.links;
    }
    for (const auto& f : flows) bi.crossing += side(f.src.device) != side(f.dst.device);
    bi.flows = flows.size();
    return bi;
}

bool g_workers = false;  // --workers: every worker's flows, packets and cycles in every run
// --phases K: each row is the mean of K measurements, each started kPhaseStep x k cycles later
// (a row moves by several percent with where the routers' loops meet the start alone).
uint32_t g_phases = 1;
constexpr uint64_t kPhaseStep = 29;  // not a divisor of a loop pass: the phases spread
uint32_t g_only_bytes = 0;           // --bytes P: only the rows of P-byte packets

struct Sample {
    uint64_t slowest = 0;          // the slowest worker's open .. last send (cycles)
    std::string slowest_worker;    // "chip 15 core 1-1 (12 flows)"
    uint32_t busiest_packets = 0;  // the most packets one worker sent
    uint64_t run_cycles = 0;       // from the start words to the last worker's exit
    std::vector<uint64_t> sent;    // packets each router sent in this run
};

// How long the last packets may take to land after the workers exit, checked every kLandPoll.
constexpr uint64_t kLandWindow = 300'000, kLandPoll = 5'000;

// The routers' published counters account for a run of `packets` since `before`: all delivered,
// every packet sent taken by a peer and completed.
bool counted(const std::vector<fabric::RouterSnapshot>& before,
             const std::vector<fabric::RouterSnapshot>& after, uint64_t packets) {
    uint64_t delivered = 0, sent = 0, received = 0;
    for (size_t i = 0; i < after.size(); ++i) {
        if (after[i].sent() != after[i].completed()) return false;
        delivered += after[i].block.delivered - before[i].block.delivered;
        sent += after[i].sent() - before[i].sent();
        received += after[i].received() - before[i].received();
    }
    return delivered == packets && sent == received;
}

Sample run_once(Mesh& m, const fabric::MeshTraffic& t) {
    fabric::LaunchOptions lo;
    lo.poll_cycles = 2'000;
    lo.max_cycles = 400'000'000;
    const auto before = m.runner.status();
    const auto run = fabric::run_mesh_traffic(m.runner, t, lo);
    for (size_t i = 0; i < run.workers.size(); ++i) {
        const auto& o = run.workers[i];
        if (!o.passed(t.workers[i])) {
            fabric::fail(fabric::ErrorCategory::Fabric,
                         "worker {} did not pass (outcome {}, status {:#x}, stuck_at {:#x}, {} of "
                         "{} packets)",
                         t.workers[i].target.core.str(), fabric::outcome_name(o.launch.outcome),
                         o.status, o.stuck_at, o.results.packets_sent,
                         t.workers[i].args.packet_count);
        }
    }
    // The workers' last packets may still be on their way: give them time, then every byte.
    auto bad = fabric::check_mesh_landed(m.dev, t);
    for (uint64_t waited = 0;
         std::any_of(bad.begin(), bad.end(), [](uint32_t n) { return n != 0; }) &&
         waited < kLandWindow;
         waited += kLandPoll) {
        m.runner.monitor(kLandPoll);
        bad = fabric::check_mesh_landed(m.dev, t);
    }
    for (size_t k = 0; k < bad.size(); ++k) {
        if (bad[k] != 0) {
            fabric::fail(fabric::ErrorCategory::Fabric,
                         "{} -> {}: {} words differ from the pattern", t.flows[k].src.str(),
                         t.flows[k].dst.str(), bad[k]);
        }
    }
    Sample s;
    s.run_cycles = run.cycles;
    // Everything landed; the routers publish their counters a few idle passes later.
    auto after = m.runner.status();
    for (uint64_t waited = 0; !counted(before, after, t.total_packets()); waited += kLandPoll) {
        if (waited >= kLandWindow) {
            fabric::fail(fabric::ErrorCategory::Fabric,
                         "the routers' counters do not account for the {} packets",
                         t.total_packets());
        }
        m.runner.monitor(kLandPoll);
        after = m.runner.status();
    }
    for (size_t i = 0; i < after.size(); ++i) s.sent.push_back(after[i].sent() - before[i].sent());
    for (size_t i = 0; i < run.workers.size() && g_workers; ++i) {
        const auto& w = t.workers[i];
        std::printf("    worker %-18s flows %2u packets %5u cycles %8u (%.0f per packet)\n",
                    w.target.core.str().c_str(), w.args.num_dests, w.args.packet_count,
                    run.workers[i].results.cycles,
                    double(run.workers[i].results.cycles) / w.args.packet_count);
    }
    for (size_t i = 0; i < run.workers.size(); ++i) {
        if (run.workers[i].results.cycles > s.slowest) {
            s.slowest = run.workers[i].results.cycles;
            s.slowest_worker = fmt::format("{} ({} flows)", t.workers[i].target.core.str(),
                                           t.workers[i].dests.size());
        }
        s.busiest_packets = std::max(s.busiest_packets, t.workers[i].args.packet_count);
    }
    return s;
}

void alltoall(Bench& b, bool quick) {
    std::printf("\n== all-to-all unicast, plane 0, UnicastWrite X then Y\n");
    std::printf(
        "bound = c(P) x L x 2 x F / X (L links across the cut per direction, F flows, X of them "
        "cross it;\n"
        "        c(P) = P / (P + 64 + 50 per frame + 66) x 12.5 B/cycle, the link's payload "
        "capacity)\n"
        "busiest = packets of the busiest worker, slowest cycles = the slowest worker's open .. "
        "last send\n"
        "(runs N1 / N2); all cyc = start words to the last exit (N2); hot = the router that sent "
        "the most\n");
    struct Case {
        const char* name;
        const char* graph;
        const char* cluster;
    };
    const Case cases[] = {{"t3k 2x4", "t3k_mesh_graph.yaml", "t3k_cluster.yaml"},
                          {"4x4", "mesh_4x4_mesh_graph.yaml", "mesh_4x4_cluster.yaml"}};
    struct Size {
        uint32_t bytes, n1, n2, slots;
    };
    // Packets per flow in the two runs; 4 KiB with 2 slots, so that 12 flows' sources fit a worker.
    const std::vector<Size> sizes =
        quick ? std::vector<Size>{{1024, 8, 16, 4}, {4096, 4, 8, 2}}
              : std::vector<Size>{{16, 32, 64, 4}, {1024, 16, 48, 4}, {4096, 8, 24, 2}};
    for (const Case& c : cases) {
        const auto t0 = Clock::now();
        Mesh m(b, c.graph, c.cluster, {0});
        m.runner.bring_up(20'000'000);
        const auto& spec = m.graph.meshes()[0];
        const auto flows = all_to_all(spec);
        const Bisection bi = bisection(m.plan, spec, flows);
        const auto& cfg = m.plan.fabric.routers.at(0).config;
        std::printf(
            "\n%s: %u x %u, %zu routers (%u sender / %u receiver slots); cut across the %s: L = "
            "%u, F = %zu, "
            "X = %zu, bound = %.3f x c(P)\n",
            c.name, spec.rows, spec.cols, m.plan.fabric.routers.size(), cfg.sender_slots[0],
            cfg.receiver_slots[0], bi.cut_columns ? "columns" : "rows", bi.links, bi.flows,
            bi.crossing, bi.bound(1) / bench::fabric_link_capacity(1));
        uint64_t sent = 0;
        std::vector<std::string> hot_names;
        std::printf("%7s %9s %8s %8s %17s %9s %9s %8s %8s %9s %9s %9s\n", "payload", "pkt/flow",
                    "packets", "busiest", "slowest cycles", "all cyc", "B/cycle", "Mpkt/s", "c(P)",
                    "bound", "of bound", "hot Mpkt/s");
        for (const Size& sz : sizes) {
            if (g_only_bytes != 0 && sz.bytes != g_only_bytes) continue;
            Sample s[2];
            std::vector<double> rates;  // one per start phase
            for (uint32_t phase = 0; phase < g_phases; ++phase) {
                m.dev.step(phase * kPhaseStep);
                for (int i = 0; i < 2; ++i) {
                    fabric::MeshTrafficOptions o;
                    o.packets = i == 0 ? sz.n1 : sz.n2;
                    o.packet_bytes = sz.bytes;
                    o.slots = sz.slots;
                    o.timeout_us = 100'000;
                    o.start_together = true;
                    const auto t = fabric::plan_mesh_traffic(m.plan, b.soc, b.worker, flows, o);
                    s[i] = run_once(m, t);
                    sent += t.total_packets();
                }
                rates.push_back(double(sz.n2 - sz.n1) * double(flows.size()) * sz.bytes /
                                double(s[1].slowest - s[0].slowest));
            }
            const double dt = double(s[1].slowest - s[0].slowest);
            double rate = 0;
            for (double r : rates) rate += r / double(rates.size());
            if (rates.size() > 1) {
                std::printf("%7u B/cycle over %zu start phases: mean %.3f, min %.3f, max %.3f\n",
                            sz.bytes, rates.size(), rate,
                            *std::min_element(rates.begin(), rates.end()),
                            *std::max_element(rates.begin(), rates.end()));
            }
            const double bound = bi.bound(sz.bytes);
            const double cap = bench::fabric_link_capacity(sz.bytes);
            // The router that sent the most: its packet rate over the same difference.
            const size_t hot =
                size_t(std::max_element(s[1].sent.begin(), s[1].sent.end()) - s[1].sent.begin());
            const double hot_rate = double(s[1].sent[hot] - s[0].sent[hot]) / dt * 1e3;
            std::printf(
                "%7u %4u/%-4u %8llu %3u/%-4u %8llu/%-8llu %9llu %9.3f %8.2f %8.3f %9.2f %8.1f%% "
                "%10.2f\n",
                sz.bytes, sz.n1, sz.n2,
                static_cast<unsigned long long>(uint64_t(sz.n2) * flows.size()),
                s[0].busiest_packets, s[1].busiest_packets,
                static_cast<unsigned long long>(s[0].slowest),
                static_cast<unsigned long long>(s[1].slowest),
                static_cast<unsigned long long>(s[1].run_cycles), rate, rate / sz.bytes * 1e3, cap,
                bound, 100 * rate / bound, hot_rate);
            hot_names.push_back(
                fmt::format("{} B: hot {}, {} packets in the second run; slowest worker {}",
                            sz.bytes, fabric::router_component_name(m.plan.fabric.routers[hot]),
                            s[1].sent[hot], s[1].slowest_worker));
        }
        std::printf("(with X-then-Y routing the hot router sends across the cut)\n");
        for (const auto& h : hot_names) std::printf("  %s\n", h.c_str());
        // Everything sent was delivered once, nothing is left in a router.
        const auto fin = m.runner.terminate(pf::Termination::Graceful, 20'000'000);
        uint64_t delivered = 0;
        for (const auto& r : fin) delivered += r.block.delivered;
        if (delivered != sent) {
            fabric::fail(fabric::ErrorCategory::Fabric,
                         "{}: routers delivered {} packets, workers sent {}", c.name, delivered,
                         sent);
        }
        const double secs = seconds_since(t0);
        std::printf("%s: %.2f M simulated cycles in %.1f s (setup included): %.0f cycles/s%s\n",
                    c.name, double(m.dev.cycles()) / 1e6, secs, double(m.dev.cycles()) / secs,
                    meetings(m.dev).c_str());
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string what = "all";
    bool quick = false;
    const char* firmware_dir = FABRIC_FIRMWARE_DIR;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") {
            quick = true;
        } else if (a == "--firmware" && i + 1 < argc) {
            firmware_dir = argv[++i];
        } else if (a == "--slots" && i + 1 < argc &&
                   std::sscanf(argv[i + 1], "%u,%u", &g_slots[0], &g_slots[1]) == 2) {
            ++i;
        } else if (a == "--threads" && i + 1 < argc &&
                   std::sscanf(argv[i + 1], "%u", &g_threads) == 1 && g_threads > 0) {
            ++i;
        } else if (a == "--workers") {
            g_workers = true;
        } else if (a == "--phases" && i + 1 < argc &&
                   std::sscanf(argv[i + 1], "%u", &g_phases) == 1 && g_phases > 0) {
            ++i;
        } else if (a == "--bytes" && i + 1 < argc &&
                   std::sscanf(argv[i + 1], "%u", &g_only_bytes) == 1) {
            ++i;
        } else {
            what = a;
        }
    }
    if (what != "all" && what != "bringup" && what != "alltoall") {
        std::fprintf(stderr,
                     "usage: mesh_bench [bringup|alltoall|all] [--quick] [--workers] [--firmware "
                     "DIR] [--slots S,R] [--phases K] [--bytes P] [--threads N]\n");
        return 2;
    }
    try {
        Bench b(firmware_dir);
        const auto t0 = Clock::now();
        std::printf(
            "mesh_bench: Wormhole B0 model, fabric_router_2d, router payload %u B, default slots, "
            "%u thread%s\n",
            pf::kDefaultPayloadBytes, g_threads, g_threads == 1 ? "" : "s");
        if (what == "all" || what == "bringup") bringup(b, quick);
        if (what == "all" || what == "alltoall") alltoall(b, quick);
        std::printf("\n(%.1f M simulated cycles in %.1f s)\n", double(b.sim_cycles) / 1e6,
                    seconds_since(t0));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mesh_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
