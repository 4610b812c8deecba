// eth_bench: the Ethernet microbenchmarks of seeds/002, measured by firmware running on the eth
// cores in the model (Wormhole B0, sim::Cluster). Prints figures; not a test.
//
//   eth_bench [bandwidth|latency|ring|all] [--quick]
//
//   bandwidth  firmware/benchmarks/eth_stream: packets of 16 B .. 16 KiB through 1, 2, 4, 8
//              channels (receiver slots in flight) on 1 or 2 TX queues, flow controlled by stream
//              register credits; rate = bytes landed per cycle at the receiver in steady state
//              (the middle 3/4 of the packets), against the theoretical curve
//              payload / (payload + frames * 50) * 12.5 B/cycle (frames of at most 1488 B).
//   latency    firmware/benchmarks/eth_latency: single-link round trip by packet size, measured on
//              the sender's wall clock (one warm-up round trip, then the samples).
//   ring       firmware/benchmarks/eth_ring: a token around a ring of 4 and 8 chips; per hop one
//              Ethernet link and one NOC hand-over between the two eth cores of a chip.
//
// Cycles are core clock cycles (WH: 1 GHz, so 1 cycle = 1 ns and 1 B/cycle = 1 GB/s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/fabric_link.h"
#include "fw_harness.h"

namespace {

using protocol::KernelRole;
using simfw::Core;
using simfw::Rig;

using bench::kFrameOverhead;
using bench::kLinkBytesPerCycle;
using bench::link_frames;

double theoretical(uint32_t packet) {
    const uint32_t frames = link_frames(packet);
    return kLinkBytesPerCycle * packet / static_cast<double>(packet + frames * kFrameOverhead);
}

struct Timer {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    double secs() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
};

uint64_t g_sim_cycles = 0;

bool check_passed(Rig& rig, std::initializer_list<Core> cores) {
    bool ok = true;
    for (const Core& c : cores) {
        if (!rig.passed(c)) {
            std::fprintf(stderr, "eth_bench: kernel failed: %s\n", rig.describe(c).c_str());
            ok = false;
        }
    }
    return ok;
}

// ---- bandwidth ----------------------------------------------------------------------------------

struct BwPoint {
    double rx_rate = 0;   // B/cycle at the receiver, steady state
    double e2e_rate = 0;  // B/cycle at the sender, first send -> last credit back
    uint32_t credit_waits = 0;
    bool ok = false;
};

BwPoint bandwidth_point(uint32_t packet, uint32_t channels, uint32_t queues, uint32_t packets) {
    Rig rig(2);
    rig.connect(0, 0, 1, 0);
    const Core m = rig.eth(0, 0), s = rig.eth(1, 0);
    protocol::EthStreamArgs a{};
    a.packet_bytes = packet;
    a.channels = channels;
    a.packets = packets;
    a.queues = queues;
    a.buf_base = rig.l1_base();
    a.credit_stream = 7;
    a.verify = 0;
    a.seed = 1;
    a.timeout_us = 100'000;
    a.handshake = 1;
    rig.launch(s, "eth_stream", KernelRole::Subordinate, a);
    rig.launch(m, "eth_stream", KernelRole::Master, a);
    const auto rep = rig.run(200'000'000);
    g_sim_cycles += rep.cycles;
    BwPoint p;
    p.ok = rep.done && check_passed(rig, {m, s});
    if (!p.ok) return p;
    const auto rm = rig.results<protocol::EthStreamResults>(m);
    const auto rs = rig.results<protocol::EthStreamResults>(s);
    p.rx_rate = rs.steady_cycles
                    ? static_cast<double>(rs.steady_to - rs.steady_from) * packet / rs.steady_cycles
                    : 0;
    p.e2e_rate = rm.cycles ? static_cast<double>(packets) * packet / rm.cycles : 0;
    p.credit_waits = rm.credit_waits;
    return p;
}

bool bandwidth(bool quick) {
    const std::vector<uint32_t> sizes = {16,   32,   64,   128,  256,  512,
                                         1024, 1488, 2048, 4096, 8192, 16384};
    const std::vector<uint32_t> channel_counts =
        quick ? std::vector<uint32_t>{1, 8}
              : std::vector<uint32_t>{1, 2, 4, 8, protocol::kEthStreamMaxChannels};
    std::printf("\n== Ethernet bandwidth, one direction, by packet size and channels in flight\n");
    std::printf(
        "   rate = bytes landed per cycle at the receiver in steady state (first and last 1/8 of "
        "the packets left out);\n");
    std::printf(
        "   theory = P/(P+frames*50)*12.5, frames = ceil(P/1488); ch = receiver slots (credits) in "
        "flight\n");
    std::printf(
        "   (packet = payload incl. its 16-B sync word; B/cycle = GB/s at the WH 1 GHz clock)\n\n");
    bool ok = true;
    for (uint32_t queues : {1u, 2u}) {
        std::printf("TX queues: %u%s\n", queues,
                    queues == 2 ? " (packets alternate TXQ0/TXQ1)" : "");
        std::printf("%8s %8s", "packet", "theory");
        for (uint32_t c : channel_counts) std::printf("   ch=%-2u B/cyc   %%th", c);
        std::printf("\n");
        for (uint32_t p : sizes) {
            // Enough packets for a steady state: >= 256 KiB and >= 256 packets, at most 4096.
            const uint32_t packets =
                std::min<uint32_t>(4096, std::max<uint32_t>(256, (256u * 1024) / p));
            std::printf("%8u %8.3f", p, theoretical(p));
            for (uint32_t c : channel_counts) {
                if (protocol::eth_stream_end(protocol::test_l1_base(hal::Arch::WormholeB0), p, c) >
                    protocol::kTestMailboxWormholeB0) {  // does not fit in L1
                    std::printf("   %8s %6s", "-", "-");
                    continue;
                }
                const BwPoint r = bandwidth_point(p, c, queues, packets);
                ok = ok && r.ok;
                std::printf("   %8.3f %5.1f%%", r.rx_rate, 100.0 * r.rx_rate / theoretical(p));
            }
            std::printf("\n");
            std::fflush(stdout);
        }
        std::printf("\n");
    }
    return ok;
}

// ---- latency ------------------------------------------------------------------------------------

bool latency(bool quick) {
    std::printf("\n== Single-link round trip (eth_latency: send, peer answers on arrival)\n");
    std::printf(
        "   one warm-up, then samples; cycles on the sender's wall clock; wire = 2 x (latency 500 "
        "+ serialization)\n\n");
    std::printf("%8s %8s %8s %8s %8s %10s %10s\n", "packet", "min", "mean", "max", "wire",
                "fw/trip", "send-issue");
    const std::vector<uint32_t> sizes =
        quick ? std::vector<uint32_t>{16, 1024, 4096}
              : std::vector<uint32_t>{16, 64, 256, 1024, 2048, 4096, 8192, 16384};
    bool ok = true;
    for (uint32_t p : sizes) {
        Rig rig(2);
        rig.connect(0, 0, 1, 0);
        const Core m = rig.eth(0, 0), s = rig.eth(1, 0);
        protocol::EthLatencyArgs a{};
        a.samples = 32;
        a.packet_bytes = p;
        a.buf_base = rig.l1_base();
        a.timeout_us = 100'000;
        rig.launch(s, "eth_latency", KernelRole::Subordinate, a);
        rig.launch(m, "eth_latency", KernelRole::Master, a);
        const auto rep = rig.run(100'000'000);
        g_sim_cycles += rep.cycles;
        if (!rep.done || !check_passed(rig, {m, s})) {
            ok = false;
            continue;
        }
        const auto r = rig.results<protocol::EthLatencyResults>(m);
        const double mean = ((static_cast<uint64_t>(r.rtt_sum_hi) << 32) | r.rtt_sum_lo) /
                            static_cast<double>(a.samples);
        const uint32_t frames = link_frames(p);
        const double wire = 2 * (500 + (p + frames * kFrameOverhead) / kLinkBytesPerCycle);
        std::printf("%8u %8u %8.1f %8u %8.1f %10.1f %10u\n", p, r.rtt_min, mean, r.rtt_max, wire,
                    mean - wire, r.send_issue_cycles);
        std::fflush(stdout);
    }
    return ok;
}

// ---- ring ---------------------------------------------------------------------------------------

// Chip i's channel 0 (core 9-0, the Forwarder) is linked to chip i+1's channel 1 (core 1-0, the
// Receiver); the last chip's Forwarder closes the ring to chip 0's Receiver (the Master). Inside a
// chip the Receiver hands the token to the Forwarder over NOC1, 2 hops (NOC0 would be 8).
bool ring(uint32_t chips, uint32_t packet, uint32_t samples, double* per_hop) {
    Rig rig(chips);
    for (uint32_t i = 0; i < chips; ++i) rig.connect(i, 0, (i + 1) % chips, 1);
    const uint32_t gx = rig.chip(0).spec().grid_x, gy = rig.chip(0).spec().grid_y;
    protocol::EthRingArgs a{};
    a.samples = samples;
    a.packet_bytes = packet;
    a.buf_base = rig.l1_base();
    a.noc = 1;
    a.token_stream = 8;
    a.credit_stream = 9;
    a.timeout_us = 100'000;
    std::vector<Core> all;
    for (uint32_t i = 0; i < chips; ++i) {
        const Core fwd = rig.eth(i, 0), rcv = rig.eth(i, 1);
        protocol::EthRingArgs f = a;
        f.partner_x = gx - 1 - rcv.x;  // unused by the Forwarder; NOC1 coordinates
        f.partner_y = gy - 1 - rcv.y;
        protocol::EthRingArgs r = a;
        r.partner_x = gx - 1 - fwd.x;
        r.partner_y = gy - 1 - fwd.y;
        rig.launch(fwd, "eth_ring", KernelRole::Forwarder, f);
        rig.launch(rcv, "eth_ring", i == 0 ? KernelRole::Master : KernelRole::Subordinate, r);
        all.push_back(fwd);
        all.push_back(rcv);
    }
    const auto rep = rig.run(200'000'000);
    g_sim_cycles += rep.cycles;
    bool ok = rep.done;
    for (const Core& c : all) ok = check_passed(rig, {c}) && ok;
    if (!ok) return false;
    const auto r = rig.results<protocol::EthRingResults>(rig.eth(0, 1));
    const double mean =
        ((static_cast<uint64_t>(r.lap_sum_hi) << 32) | r.lap_sum_lo) / static_cast<double>(samples);
    *per_hop = mean / chips;
    std::printf("%6u %8u %8u %10.1f %8u %10.1f\n", chips, packet, r.lap_min, mean, r.lap_max,
                mean / chips);
    std::fflush(stdout);
    return true;
}

bool rings(bool quick) {
    std::printf(
        "\n== Ring ping latency (eth_ring: token around the ring; hop = Ethernet link + NOC "
        "hand-over)\n\n");
    std::printf("%6s %8s %8s %10s %8s %10s\n", "chips", "packet", "lap min", "lap mean", "lap max",
                "per hop");
    bool ok = true;
    double hop = 0;
    for (uint32_t chips : {4u, 8u}) {
        for (uint32_t p :
             quick ? std::vector<uint32_t>{16} : std::vector<uint32_t>{16, 1024, 4096}) {
            ok = ring(chips, p, 16, &hop) && ok;
        }
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    std::string what = "all";
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") {
            quick = true;
        } else if (arg == "bandwidth" || arg == "latency" || arg == "ring" || arg == "all") {
            what = arg;
        } else {
            std::fprintf(stderr, "usage: eth_bench [bandwidth|latency|ring|all] [--quick]\n");
            return 2;
        }
    }
    const Timer t;
    bool ok = true;
    try {
        if (what == "latency" || what == "all") ok = latency(quick) && ok;
        if (what == "ring" || what == "all") ok = rings(quick) && ok;
        if (what == "bandwidth" || what == "all") ok = bandwidth(quick) && ok;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "eth_bench: %s\n", e.what());
        return 1;
    }
    const double secs = t.secs();
    std::printf("\nsimulated %llu cycles in %.1f s wall (%.2f M cycles/s)\n",
                static_cast<unsigned long long>(g_sim_cycles), secs, g_sim_cycles / secs / 1e6);
    return ok ? 0 : 1;
}
