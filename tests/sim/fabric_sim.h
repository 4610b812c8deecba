// A planned 1D fabric in the model for the sim tests (fabric_test.cpp, mux_test.cpp): the
// cluster's chips and links in a Rig, and the host's FabricRunner over the Rig's device to bring
// the plan's routers up, run worker kernels beside them and terminate them -- the one bring-up
// path `fabricctl fabric` and the sim_cluster tests use. Helpers for the shipped descriptors and
// line/ring options.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
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

// The receiving core on every chip (a Tensix core, NOC0 coordinates): WH 3-1, BH 3-2.
constexpr uint32_t kSinkX = 3;
constexpr uint32_t sink_y(hal::Arch a) {
    return a == hal::Arch::Blackhole ? 2 : 1;
}

// Budgets of the fabric's own steps (device cycles): bring-up (the routers' handshake and ready),
// graceful termination (quiescence, drain and exit).
constexpr uint64_t kBringUpCycles = 2'200'000;
constexpr uint64_t kTerminateCycles = 5'000'000;

// A kernel for FabricSim::run_workers: its image, its test mailbox (role Master) if it has one,
// and what else is written to its L1 after the image and before any kernel starts.
struct Kernel {
    Core core;
    std::string image;
    std::optional<std::vector<uint32_t>> mailbox;                   // the mailbox's argument words
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> writes;  // (address, bytes)
};

// A kernel that takes `args` in its test mailbox.
template <typename Args>
Kernel mailbox_kernel(Core c, std::string image, const Args& args) {
    return Kernel{c, std::move(image), simfw::mailbox_args(args), {}};
}

// Bytes of a plain struct, for Kernel::writes.
template <typename T>
std::vector<uint8_t> bytes_of(const T& value) {
    std::vector<uint8_t> b(sizeof value);
    std::memcpy(b.data(), &value, sizeof value);
    return b;
}

// Write what a kernel takes before it starts: its mailbox (if it has one), then its writes.
inline void set_up_kernel(Rig& rig, const Kernel& k) {
    if (k.mailbox) rig.write_mailbox(k.core, protocol::KernelRole::Master, *k.mailbox);
    for (const auto& [addr, bytes] : k.writes) rig.write(k.core, addr, bytes);
}

// Load a kernel straight into the Rig and set it up, not released: for tests that start it and
// watch it themselves (fault schedules, refused configs).
inline void load_kernel(Rig& rig, const Kernel& k) {
    rig.load_image(k.core, k.image);
    set_up_kernel(rig, k);
}

using ConfigTweak = std::function<void(const RouterPlacement&, pf::RouterConfig&)>;

// A planned fabric in a Rig: every link of the cluster connected, the routers run by a
// FabricRunner (built when they are started).
class FabricSim {
  public:
    // `cluster_file`: a shipped descriptor's name, or a path (contains '/').
    FabricSim(const std::string& cluster_file, const FabricOptions& o)
        : cluster_(fabric::ClusterDescriptor::load_file(cluster_file.find('/') == std::string::npos
                                                            ? desc_path(cluster_file)
                                                            : cluster_file)),
          plan_(fabric::plan_fabric(cluster_, simfw::soc_descriptor(cluster_.arch()), o)),
          rig_(cluster_) {
        // A NoC write to a core that is not instantiated is lost (NoEndpoint): the receiving
        // cores exist from the start, held in reset.
        for (fabric::ChipId c : plan_.chips)
            (void)rig_.chip(c).tile(kSinkX, sink_y(cluster_.arch()));
    }

    Rig& rig() { return rig_; }
    const fabric::FabricPlan& plan() const { return plan_; }
    // The runner of the routers; start() or start_routers() makes it.
    fabric::FabricRunner& runner() {
        REQUIRE(runner_.has_value());
        return *runner_;
    }
    static Core core(const RouterPlacement& p) { return Core::at(p.core); }
    const RouterPlacement& router(uint32_t index, FabricDir d) const {
        return plan_.router(plan_.chips[index], d);
    }
    pf::WorkerChannel channel(uint32_t index, FabricDir d) const {
        return plan_.worker_channel(plan_.chips[index], d);
    }
    uint32_t chip(uint32_t index) const { return plan_.chips[index]; }

    // Bring the fabric up through the runner: every router ends in ReadyForTraffic.
    void start() {
        make_runner(plan_);
        runner_->bring_up(kBringUpCycles);
    }

    // Start the routers of `plan` (this fabric's plan or a variant of it: tweaked configs, fewer
    // routers) and wait for nothing: tests of what the routers do on their own at start-up.
    void start_routers(fabric::FabricPlan plan) {
        make_runner(std::move(plan));
        runner_->start();
    }
    void start_routers() { start_routers(plan_); }

    // This fabric's plan with `tweak` applied to every router's config. The layouts stay the
    // plan's: the routers, not the host, must find the fault.
    fabric::FabricPlan tweaked(const ConfigTweak& tweak) const {
        fabric::FabricPlan p = plan_;
        for (RouterPlacement& r : p.routers) tweak(r, r.config);
        return p;
    }

    // Run the kernels through the runner (loaded, set up, started together; the routers keep
    // running) until each has exited, or for at most `max_cycles`. Their results in order (one
    // still running at the end: Timeout).
    std::vector<fabric::LaunchResult> run_kernels(const std::vector<Kernel>& kernels,
                                                  uint64_t max_cycles) {
        std::vector<fabric::LaunchTarget> targets;
        for (const Kernel& k : kernels) targets.push_back(rig_.target(k.core, k.image));
        const auto set_up = [&](const fabric::LaunchTarget& t) {
            set_up_kernel(rig_, kernel_at(kernels, t.core));
        };
        fabric::LaunchOptions o;
        o.max_cycles = max_cycles;
        o.poll_cycles = fabric::kFabricPollCycles;
        return runner().run_workers(targets, o, set_up);
    }

    // run_kernels, then every kernel must have exited, and a mailbox kernel passed; `story` (if
    // given) is added to the failure message.
    void run_workers(const std::vector<Kernel>& kernels, uint64_t max_cycles,
                     const std::function<std::string()>& story = {}) {
        const std::vector<fabric::LaunchResult> results = run_kernels(kernels, max_cycles);
        for (size_t i = 0; i < kernels.size(); ++i) {
            const Kernel& k = kernels[i];
            const bool exited = results[i].outcome == fabric::LaunchOutcome::Exited;
            const bool passed = exited && (!k.mailbox || rig_.passed(k.core));
            // The whole story (every router, the kernel, the caller's) only when it is needed.
            const std::string why =
                passed
                    ? std::string()
                    : k.image + " " + std::string(fabric::outcome_name(results[i].outcome)) + ": " +
                          rig_.describe(k.core) + "\n" + (story ? story() : "") + describe();
            INFO(why);
            REQUIRE(passed);
        }
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
            out += core(p).str() + " " + std::string(fabric::dir_name(p.dir)) + ": " +
                   fabric::router_status_name(b.status) + " stage " +
                   fabric::router_status_name(b.stage) + " stuck_at " +
                   fabric::router_wait_name(b.stuck_at) + " detail " + std::to_string(b.detail) +
                   " sent " + std::to_string(b.sent[0]) + "/" + std::to_string(b.sent[1]) + "/" +
                   std::to_string(b.sent[2]) + " completed " + std::to_string(b.completed[0]) +
                   "/" + std::to_string(b.completed[1]) + "/" + std::to_string(b.completed[2]) +
                   " received " + std::to_string(b.received[0]) + "/" +
                   std::to_string(b.received[1]) + " bad " + std::to_string(b.bad_packets) +
                   " undrained " + std::to_string(b.undrained) + " iters " +
                   std::to_string(b.main_loop_iterations) + "\n  " + rig_.describe(core(p)) + "\n";
        }
        return out;
    }

    bool routers_exited() {
        for (const RouterPlacement& p : plan_.routers) {
            if (rig_.state(core(p)) == sim::RunState::Running) return false;
        }
        return true;
    }

    // Graceful termination through the runner (quiescence first), then every router exited
    // cleanly (check_terminated_cleanly).
    void stop_graceful() {
        (void)runner().terminate(pf::Termination::Graceful, kTerminateCycles);
        check_terminated_cleanly();
    }

    // Graceful termination asked at once, with no wait for quiescence: the routers themselves
    // must drain what is in flight. Then every router exited cleanly.
    void stop_graceful_now() {
        for (const RouterPlacement& p : plan_.routers) {
            rig_.write32(core(p), p.layout.termination,
                         static_cast<uint32_t>(pf::Termination::Graceful));
        }
        const bool done = rig_.run_until([&] { return routers_exited(); }, kTerminateCycles, 256);
        INFO(describe());
        REQUIRE(done);
        check_terminated_cleanly();
    }

    // Every router exited 0 with Terminated, nothing undrained, no bad packet, every channel's
    // packets completed.
    void check_terminated_cleanly() {
        for (const RouterPlacement& p : plan_.routers) {
            INFO(core(p).str());
            const auto b = status(p);
            CHECK(rig_.state(core(p)) == sim::RunState::Exited);
            CHECK(rig_.exit_code(core(p)) == 0);
            CHECK(b.status == static_cast<uint32_t>(RouterStatus::Terminated));
            CHECK(b.undrained == 0);
            CHECK(b.bad_packets == 0);
            for (uint32_t c = 0; c < pf::kNumSenderChannels; ++c)
                CHECK(b.sent[c] == b.completed[c]);
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
            if (q.chip == p.config.peer_chip_id && q.eth_channel == p.config.peer_eth_channel)
                return q;
        }
        throw std::logic_error("no peer");
    }

  private:
    void make_runner(fabric::FabricPlan plan) {
        REQUIRE_FALSE(runner_.has_value());  // one fabric per test
        runner_.emplace(rig_.device(), std::move(plan),
                        simfw::firmware(cluster_.arch(), "fabric_router"));
    }

    static const Kernel& kernel_at(const std::vector<Kernel>& kernels,
                                   const fabric::CoreLocation& at) {
        for (const Kernel& k : kernels) {
            if (k.core.location() == at) return k;
        }
        throw std::logic_error("no kernel on " + at.str());
    }

    fabric::ClusterDescriptor cluster_;
    fabric::FabricPlan plan_;
    Rig rig_;
    std::optional<fabric::FabricRunner> runner_;
};

inline FabricOptions line_options(std::vector<fabric::ChipId> chips,
                                  uint32_t payload = pf::kDefaultPayloadBytes) {
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
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("erisc_fabric_bh_chain" + std::to_string(n) + "_cluster.yaml"))
                                 .string();
    std::ofstream out(path);
    std::string arch, chips, links;
    for (uint32_t i = 0; i < n; ++i) {
        arch.append(i ? ", " : "")
            .append(std::to_string(i))
            .append(": blackhole");  // not operator+: GCC 12 -O3 -Wrestrict
        chips += (i ? ", " : "") + std::to_string(i) + ": [" + std::to_string(i) + ", 0, 0, 0]";
        if (i + 1 < n) {
            links += "  - [{chip: " + std::to_string(i) +
                     ", chan: 0}, {chip: " + std::to_string(i + 1) +
                     ", chan: 1}, {routing_enabled: true}]\n";
        }
    }
    out << "arch: {" << arch << "}\nchips: {" << chips << "}\nethernet_connections:\n"
        << links << "chips_with_mmio:\n  - 0: 0\n";
    return path;
}

}  // namespace fabric_sim
