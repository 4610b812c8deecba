// A planned 1D fabric in the model for the sim tests (fabric_test.cpp, mux_test.cpp): the plan's
// links connected in a Rig, routers loaded with their configs, brought up to ReadyForTraffic,
// terminated and checked. Helpers for the shipped descriptors and line/ring options.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/soc_descriptor.h"
#include "fw_harness.h"
#include "protocol/fabric.h"

namespace fabric_sim {

namespace pf = protocol::fabric;
using fabric::FabricDir;
using fabric::FabricOptions;
using fabric::RouterPlacement;
using pf::RouterStatus;
using simfw::Core;
using simfw::Rig;

inline std::string desc_path(const std::string& f) {
    return std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/" + f;
}

inline const fabric::SocDescriptor& soc(hal::Arch arch) {
    static const fabric::SocDescriptor wh = fabric::SocDescriptor::load_file(desc_path("wormhole_b0_80_arch.yaml"));
    static const fabric::SocDescriptor bh = fabric::SocDescriptor::load_file(desc_path("blackhole_140_arch.yaml"));
    return arch == hal::Arch::Blackhole ? bh : wh;
}

// The receiving core on every chip (a Tensix core, NOC0 coordinates): WH 3-1, BH 3-2.
constexpr uint32_t kSinkX = 3;
constexpr uint32_t sink_y(hal::Arch a) {
    return a == hal::Arch::Blackhole ? 2 : 1;
}

// A planned fabric in a Rig: the plan's links connected, routers loaded and brought up.
class FabricSim {
  public:
    // `cluster_file`: a shipped descriptor's name, or a path (contains '/').
    FabricSim(const std::string& cluster_file, const FabricOptions& o)
        : cluster_(fabric::ClusterDescriptor::load_file(
              cluster_file.find('/') == std::string::npos ? desc_path(cluster_file) : cluster_file)),
          plan_(fabric::plan_fabric(cluster_, soc(cluster_.arch()), o)),
          rig_(cluster_.chip_count(), cluster_.arch()) {
        for (const RouterPlacement& p : plan_.routers) {
            if (p.dir == FabricDir::East) rig_.connect(p.chip, p.eth_channel, p.config.peer_chip_id, p.config.peer_eth_channel);
        }
        // A NoC write to a core that is not instantiated is lost (NoEndpoint): the receiving
        // cores exist from the start, held in reset.
        for (fabric::ChipId c : plan_.chips) (void)rig_.chip(c).tile(kSinkX, sink_y(cluster_.arch()));
    }

    Rig& rig() { return rig_; }
    const fabric::FabricPlan& plan() const { return plan_; }
    static Core core(const RouterPlacement& p) { return Core{p.chip, p.core.core.x, p.core.core.y}; }
    const RouterPlacement& router(uint32_t index, FabricDir d) const { return plan_.router(plan_.chips[index], d); }
    pf::WorkerChannel channel(uint32_t index, FabricDir d) const { return plan_.worker_channel(plan_.chips[index], d); }
    uint32_t chip(uint32_t index) const { return plan_.chips[index]; }

    // Write every config (after `tweak`), clear the host words, load and release the routers.
    void load(const std::function<void(const RouterPlacement&, pf::RouterConfig&)>& tweak = {}) {
        for (const RouterPlacement& p : plan_.routers) {
            pf::RouterConfig c = p.config;
            if (tweak) tweak(p, c);
            std::vector<uint8_t> bytes(sizeof c);
            std::memcpy(bytes.data(), &c, sizeof c);
            const Core rc = core(p);
            rig_.load_image(rc, "fabric_router");
            rig_.write(rc, p.layout.config, bytes);
            rig_.write32(rc, p.layout.termination, 0);
            rig_.write32(rc, p.layout.ready, 0);
            rig_.zero(rc, p.layout.status, sizeof(pf::RouterStatusBlock));
        }
        for (const RouterPlacement& p : plan_.routers) rig_.release(core(p));
    }

    pf::RouterStatusBlock status(const RouterPlacement& p) {
        pf::RouterStatusBlock b{};
        const auto bytes = rig_.read(core(p), p.layout.status, sizeof b);
        std::memcpy(&b, bytes.data(), sizeof b);
        return b;
    }

    bool all_status(RouterStatus s) {
        for (const RouterPlacement& p : plan_.routers) {
            if (status(p).status != static_cast<uint32_t>(s)) return false;
        }
        return true;
    }

    std::string describe() {
        std::string out;
        for (const RouterPlacement& p : plan_.routers) {
            const auto b = status(p);
            out += core(p).str() + " " + std::string(fabric::dir_name(p.dir)) + ": " + fabric::router_status_name(b.status) +
                   " stage " + fabric::router_status_name(b.stage) + " stuck_at " + fabric::router_wait_name(b.stuck_at) + " detail " +
                   std::to_string(b.detail) + " sent " + std::to_string(b.sent[0]) + "/" + std::to_string(b.sent[1]) +
                   "/" + std::to_string(b.sent[2]) + " completed " + std::to_string(b.completed[0]) + "/" +
                   std::to_string(b.completed[1]) + "/" + std::to_string(b.completed[2]) + " received " +
                   std::to_string(b.received[0]) + "/" + std::to_string(b.received[1]) + " bad " +
                   std::to_string(b.bad_packets) + " undrained " + std::to_string(b.undrained) + " iters " +
                   std::to_string(b.main_loop_iterations) + "\n  " + rig_.describe(core(p)) + "\n";
        }
        return out;
    }

    // Load, handshake, ready: every router ends in ReadyForTraffic.
    void start() {
        load();
        const bool hs = rig_.run_until([&] { return all_status(RouterStatus::HandshakeComplete); }, 2'000'000, 256);
        INFO(describe());
        REQUIRE(hs);
        for (const RouterPlacement& p : plan_.routers) rig_.write32(core(p), p.layout.ready, pf::kReadyMagic);
        REQUIRE(rig_.run_until([&] { return all_status(RouterStatus::ReadyForTraffic); }, 200'000, 64));
    }

    void terminate(pf::Termination t) {
        for (const RouterPlacement& p : plan_.routers) {
            rig_.write32(core(p), p.layout.termination, static_cast<uint32_t>(t));
        }
    }

    bool routers_exited() {
        for (const RouterPlacement& p : plan_.routers) {
            if (rig_.state(core(p)) == sim::RunState::Running) return false;
        }
        return true;
    }

    // Graceful termination: every router drains, exits 0 with Terminated and nothing undrained.
    void stop_graceful() {
        terminate(pf::Termination::Graceful);
        const bool done = rig_.run_until([&] { return routers_exited(); }, 5'000'000, 256);
        INFO(describe());
        REQUIRE(done);
        for (const RouterPlacement& p : plan_.routers) {
            INFO(core(p).str());
            const auto b = status(p);
            CHECK(rig_.state(core(p)) == sim::RunState::Exited);
            CHECK(rig_.exit_code(core(p)) == 0);
            CHECK(b.status == static_cast<uint32_t>(RouterStatus::Terminated));
            CHECK(b.undrained == 0);
            CHECK(b.bad_packets == 0);
            for (uint32_t c = 0; c < pf::kNumSenderChannels; ++c) CHECK(b.sent[c] == b.completed[c]);
        }
    }

    // Every packet a router sent was received by its peer (and nothing else).
    void check_link_counts() {
        for (const RouterPlacement& p : plan_.routers) {
            const auto me = status(p);
            const RouterPlacement& peer = peer_of(p);
            const auto other = status(peer);
            INFO(core(p).str() << " -> " << core(peer).str());
            CHECK(me.sent[0] + me.sent[1] + me.sent[2] == other.received[0] + other.received[1]);
        }
    }

    const RouterPlacement& peer_of(const RouterPlacement& p) const {
        for (const RouterPlacement& q : plan_.routers) {
            if (q.chip == p.config.peer_chip_id && q.eth_channel == p.config.peer_eth_channel) return q;
        }
        throw std::logic_error("no peer");
    }

  private:
    fabric::ClusterDescriptor cluster_;
    fabric::FabricPlan plan_;
    Rig rig_;
};

inline FabricOptions line_options(std::vector<fabric::ChipId> chips, uint32_t payload = pf::kDefaultPayloadBytes) {
    FabricOptions o;
    o.topology = pf::Topology::Line;
    o.chips = std::move(chips);
    o.payload_bytes = payload;
    return o;
}

inline FabricOptions ring_options(std::vector<fabric::ChipId> chips) {
    FabricOptions o = line_options(std::move(chips));
    o.topology = pf::Topology::Ring;
    return o;
}

// `n` Blackhole chips in a chain, chip i channel 0 <-> chip i+1 channel 1 (no shipped BH cluster
// descriptor has links). Written to the temp directory; returns its path.
inline std::string blackhole_chain_cluster(uint32_t n) {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("erisc_fabric_bh_chain" + std::to_string(n) + "_cluster.yaml")).string();
    std::ofstream out(path);
    std::string arch, chips, links;
    for (uint32_t i = 0; i < n; ++i) {
        arch += (i ? ", " : "") + std::to_string(i) + ": blackhole";
        chips += (i ? ", " : "") + std::to_string(i) + ": [" + std::to_string(i) + ", 0, 0, 0]";
        if (i + 1 < n) {
            links += "  - [{chip: " + std::to_string(i) + ", chan: 0}, {chip: " + std::to_string(i + 1) +
                     ", chan: 1}, {routing_enabled: true}]\n";
        }
    }
    out << "arch: {" << arch << "}\nchips: {" << chips << "}\nethernet_connections:\n" << links
        << "chips_with_mmio:\n  - 0: 0\n";
    return path;
}

}  // namespace fabric_sim
