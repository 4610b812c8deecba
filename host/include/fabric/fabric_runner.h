// The fabric control plane (1D plans, and 2D ones from mesh_plan.h) over any Device: load the
// router firmware onto every router core of a FabricPlan with its RouterConfig, bring the fabric up
// (handshake, then ready), watch it, run worker kernels while the routers keep running, and
// terminate it (graceful or immediate).
//
//   bring_up:   every router: hold + load the ELF, write RouterConfig at layout.config and zero
//               [layout.status, layout.sender_base[0]) (status, termination, ready, handshake,
//               connection, upstream credits, scratch; a 2D router (RouterPlacement::mesh) gets
//               its MeshRouterConfig at layout.mesh_config and its exit table at
//               layout.exit_table in the same write), then start all of them together. Advance
//               until every router is HandshakeComplete, write kReadyMagic to every ready word,
//               advance until every router is ReadyForTraffic.
//   start:      bring_up's first step alone (load, configure, start), nothing waited for.
//   run_workers: launch worker kernels and wait for them only (the routers keep running).
//   terminate:  Graceful: wait for global quiescence first (every router holds nothing
//               unfinished (RouterControlReport::held) and has sent == completed on every channel,
//               all routers together received what they sent, and the counters are unchanged over
//               two polls), then write the termination word; Immediate: write it at once. Then
//               advance until every router core has exited.
//
// Every wait is bounded by a cycle budget. A failure is Error(Fabric) whose one-line message
// names every router that failed or lagged: chip, eth channel, core, direction, status, stage,
// stuck_at, detail and what the core is doing.
//
// Health (health_monitor.h): from bring_up on, every router (and any component added with
// watch(), e.g. a mux) is watched by a HealthMonitor. run_workers polls it while the workers run,
// terminate while it waits (stalled heartbeats only), monitor() while the fabric runs on its own;
// a stuck component ends the wait at once with HealthError (an Error(Fabric)) naming it.
//
// Events (router_events.h): with a sink (on_events), every poll of those waits also collects the
// routers' new event records and hands them over.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/fabric_plan.h"
#include "fabric/health_monitor.h"
#include "fabric/launch.h"
#include "fabric/reroute_plan.h"
#include "fabric/router_events.h"
#include "protocol/fabric.h"

namespace fabric {

// Names of the router's status words, for messages and JSON: snake_case ("handshake_complete",
// "handshake_reply", "graceful"); a value the protocol does not define is "unknown(0x...)".
std::string router_status_name(uint32_t status);
std::string router_wait_name(uint32_t wait);
std::string termination_name(uint32_t mode);
std::string router_control_name(uint32_t control);  // "run", "pause", "drain", "reroute"
std::string reroute_state_name(uint32_t state);     // "none", "applied", "refused"
// ConfigInvalid, HandshakeMismatch, Timeout, Fault and undefined values (BadPacket is counted,
// not fatal; NotStarted and the start-up stages are not errors).
bool router_status_is_error(uint32_t status);
// The codes behind a router's detail word (protocol/fabric.h), snake_case: "mesh_config",
// "route_too_long", "both_masters"; "unknown(0x...)" for a value the protocol does not define.
std::string config_check_name(uint32_t check);
std::string bad_packet_name(uint32_t reason);
std::string handshake_field_name(uint32_t field);
// A router's detail word read with its status: "config:payload_bytes" (ConfigInvalid: a
// ConfigCheck), "mismatch:both_masters" (HandshakeMismatch: a HandshakeField), "hal:timeout"
// (Timeout, Fault: the hal::Status of the call that failed), "bad_packet:turn" (any other status:
// the last packet the router dropped); the word in hex when there is nothing to name (0, or a
// value outside those ranges).
std::string router_detail_name(uint32_t status, uint32_t detail);
// The same for a mux (protocol/fabric_mux.h): "config:schedule" (MuxConfigCheck),
// "bad_packet:payload_bytes" (MuxBadPacket), "hal:..." (Timeout, Fault).
std::string mux_detail_name(uint32_t status, uint32_t detail);

// Where the router image may be loaded on a router's core: the ERISC application range, clear of
// the router's L1 block [layout.config, layout.end).
PlacementRules router_placement(const RouterPlacement& router, const hal::ArchMap& arch,
                                uint32_t eth_l1_size);

// The router for the health monitor: status / stage names as router_status_name, stuck_at as
// router_wait_name, detail as router_detail_name; errors as router_status_is_error; the heartbeat
// moves while ReadyForTraffic or Draining (the main loop); done when Terminated.
const ComponentKind& router_component_kind();
// "router east chip 0 eth 2"; a 2D router: "router M0D5 E plane 0 (chip 5 eth 8)"
std::string router_component_name(const RouterPlacement& r);
// Which side of its chip a router serves: "east" / "west", or its mesh port "M0D5 E plane 0".
std::string router_side_name(const RouterPlacement& r);
// The mux (protocol/fabric_mux.h) publishes the router's status and wait values in the same first
// five words: the router's kind, named "mux", its detail as mux_detail_name. Watch one with
// runner.watch({mux.core, "mux chip 0 core 1-1", mux.layout.status, mux_component_kind(), launch
// method}).
const ComponentKind& mux_component_kind();

// How often the runner looks at the routers while it waits (device cycles).
inline constexpr uint64_t kFabricPollCycles = 1'000;

// One router as the host sees it.
struct RouterSnapshot {
    ChipId chip = 0;
    uint32_t eth_channel = 0;
    CoreLocation core;
    FabricDir dir = FabricDir::East;  // 1D routers only
    std::optional<MeshPort> mesh;     // 2D routers: the mesh port (then `dir` is meaningless)
    protocol::fabric::RouterStatusBlock block{};
    // Its control state (protocol/fabric.h RouterControlReport; zero before the main loop).
    protocol::fabric::RouterControlReport control{};
    CoreStatus run;              // what the core is doing
    bool core_finished = false;  // exited, trapped, or returned to the base firmware
    LaunchMethod method = LaunchMethod::ResetPc;

    std::string status_name() const { return router_status_name(block.status); }
    std::string stage_name() const { return router_status_name(block.stage); }
    std::string stuck_at_name() const { return router_wait_name(block.stuck_at); }
    std::string detail_name() const { return router_detail_name(block.status, block.detail); }
    // "chip 0 eth 2 (core 8-0, east): status timeout, stage handshaking, stuck at handshake_reply,
    // detail hal:timeout, core running at pc 0x00009abc"; a 2D router: "(core 8-0, M0D5 E plane 0)"
    std::string describe() const;
    // Totals over channels.
    uint64_t sent() const;
    uint64_t completed() const;
    uint64_t received() const;
};

class FabricRunner {
  public:
    // Throws Error(BadInput) if the plan does not match the device (arch, chips) and
    // Error(BadElf) if the router image does not fit an eth core outside the router block.
    FabricRunner(Device& device, FabricPlan plan, ElfImage router_elf,
                 uint64_t poll_cycles = kFabricPollCycles);
    FabricRunner(const FabricRunner&) = delete;  // the launch targets point at the owned image
    FabricRunner& operator=(const FabricRunner&) = delete;

    const FabricPlan& plan() const { return plan_; }
    Device& device() { return device_; }

    // Load, configure and start every router, then handshake and ready, within `timeout_cycles`
    // device cycles in total. Error(Fabric) naming every router that is not there in time or
    // reports an error; Error(BadInput) after bring_up, start or attach.
    void bring_up(uint64_t timeout_cycles);
    // Only the first step of bring_up: load, configure and start every router, and return at once
    // (nothing is waited for, the ready word stays 0). For callers that watch the start-up
    // themselves, e.g. tests of configs the routers must refuse. status, health, monitor and
    // terminate work afterwards; bring_up, attach and run_workers do not. Error(BadInput) after
    // bring_up, start or attach.
    void start();
    // Take over a fabric an earlier runner (e.g. an earlier `fabricctl mesh up` on silicon) brought
    // up and left running, instead of bring_up: nothing is loaded or started. Every router of the
    // plan must hold the plan's RouterConfig (and MeshRouterConfig) and be ReadyForTraffic with its
    // core running; else Error(Fabric) naming each one that is not (nothing is written).
    // Error(BadInput) after bring_up, start or attach. Then status, monitor and terminate work as
    // after bring_up (handshake_cycles / ready_cycles stay 0: not seen).
    void attach();
    bool started() const { return started_; }
    bool up() const { return up_; }
    // Device cycles from the start of the routers to all HandshakeComplete / all ReadyForTraffic.
    uint64_t handshake_cycles() const { return handshake_cycles_; }
    uint64_t ready_cycles() const { return ready_cycles_; }

    // Every router now, in plan order.
    std::vector<RouterSnapshot> status();
    // Error(Fabric) naming every router that is not ReadyForTraffic with its core running.
    void check_running();

    // Launch worker kernels (their images, checked and loaded as launch_many does) and wait for
    // them only; the routers keep running. `setup` runs for each worker after it is loaded and
    // before any is started (e.g. to write its mailbox). Error(BadInput) if a worker is a router
    // core or the fabric is not up; Error(Fabric) naming the routers as soon as one reports an
    // error, traps or exits while the workers run.
    std::vector<LaunchResult> run_workers(
        std::span<const LaunchTarget> workers, const LaunchOptions& options = {},
        const std::function<void(const LaunchTarget&)>& setup = {});

    // The start of traffic: `hook` gets the device cycle at which run_workers released the
    // workers (their start written, before any cycle ran), at every run_workers call; every hook
    // added does, in the order added (a fault plan's, a control schedule's). The first
    // one is also kept as traffic_start_cycle(); fault plans count from it (fault_plan.h).
    void on_workers_released(std::function<void(uint64_t device_cycle)> hook);
    std::optional<uint64_t> traffic_start_cycle() const { return traffic_start_; }

    // ---- health ----
    // The stall window of the health monitor (default kDefaultStallCycles); set it before
    // bring_up. Error(BadInput) for 0 or after bring_up.
    void set_stall_cycles(uint64_t cycles);
    uint64_t stall_cycles() const { return stall_cycles_; }
    // Watch another component too (its status block starts with ComponentStatusHead).
    void watch(WatchedComponent component);
    // One poll now (the device is not advanced): the stuck components, empty when all are
    // healthy. Error(BadInput) before bring_up.
    std::vector<StuckReport> health();
    // HealthError naming every stuck component, if there is one now.
    void check_health();
    // Let the fabric run for `cycles` device cycles, polling every poll interval; HealthError at
    // the first poll that finds a stuck component. Error(BadInput) before bring_up.
    void monitor(uint64_t cycles);

    // ---- control (protocol/fabric.h RouterControl: pause, drain, resume) ----
    // Write `control` into the control word of the routers `which` (indices into plan().routers;
    // empty: every router) and return at once (a timed action in the model, a reaction to an
    // event while workers run). Error(BadInput) before bring_up, start or attach, or for an index
    // out of range.
    void write_control(protocol::fabric::RouterControl control, std::span<const size_t> which = {});
    // write_control, then advance until each of those routers reports it reached (its
    // RouterControlReport::state) and, for Pause, until every router's counters stand still
    // between two polls (completions still on the wire land), within `timeout_cycles`. Returns
    // every router's snapshot. Error(Fabric) naming the routers that did not reach it.
    std::vector<RouterSnapshot> control(protocol::fabric::RouterControl control,
                                        uint64_t timeout_cycles,
                                        std::span<const size_t> which = {});

    // A reaction to a dead link, at every poll that collects events (whether or not there is a
    // sink). A router reporting link_down or peer_silent gets Drain, and so does the router at
    // the other end of its link, once each (write_control: not waited for): at once (Drain), or
    // once the link has stayed down for down_grace_us or the peer silent for silent_grace_us
    // with no link_up / peer_heard and no packet across it (AfterGrace: a flapping link or a
    // briefly frozen peer is left alone). Drained routers cut the link and report what was on it
    // (protocol/fabric.h RouterControl), so traffic over it ends in bounded time with every packet
    // accounted for (traffic_account.h resolve_unacked).
    // With `cluster`, the control plane decides first (reroute_plan.h decide_reroute, in
    // `reliability` mode): a link whose two routers have their configured fallbacks working (2D,
    // paired planes: the other plane's routers on the same two chips) is rerouted
    // (RouterControl::Reroute, seeds/000 §7.4; not with reroute false): both ends cut it and hold
    // what they sent on it; once both hold, each gets a RerouteOrder with the other's counts of
    // what it took, sends the rest again over its fallback, and traffic goes on with nothing lost
    // or applied twice (an end that does not hold within reroute_timeout_us, or refuses the order,
    // is drained with the other). With no link left between the two chips, relaxed drains the
    // link's ends and strict stops the fabric (every router drained). link_reports() says which.
    // A rerouted link that both ends see up again for rejoin_after_us gets its traffic back
    // (RouterControl::Rejoin to both ends; once both report RerouteState::Rejoined, Run to both);
    // an end that does not get there within reroute_timeout_us leaves the link on its fallback
    // for good (Reroute again). 0: a rerouted link stays on its fallback.
    struct LinkDownReaction {
        enum class Mode : uint8_t { None, Drain, AfterGrace };
        Mode mode = Mode::None;
        uint32_t down_grace_us = 50;                 // a link down: tens of microseconds
        uint32_t silent_grace_us = 1000;             // a silent peer: about a millisecond
        const ClusterDescriptor* cluster = nullptr;  // the caller's, while the runner runs
        ReliabilityMode reliability = ReliabilityMode::Relaxed;
        bool reroute = true;
        uint32_t reroute_timeout_us = 200;
        uint32_t rejoin_after_us = 20;
    };
    void react_to_dead_links(LinkDownReaction reaction) { reaction_ = reaction; }
    void drain_on_link_down(bool on) {
        reaction_.mode = on ? LinkDownReaction::Mode::Drain : LinkDownReaction::Mode::None;
    }
    // The routers drained by that reaction so far (indices into plan().routers, in order).
    const std::vector<size_t>& drained_for_link_down() const { return drained_; }
    // The routers rerouted over their fallbacks so far (their orders applied), in order.
    const std::vector<size_t>& rerouted_for_link_down() const { return rerouted_; }
    // The routers whose rerouted link carries their traffic again, in order.
    const std::vector<size_t>& rejoined_after_link_down() const { return rejoined_; }
    // What the control plane did about each dead link it decided on, one line each
    // (RerouteDecision::summary, and how a reroute that could not be done ended).
    const std::vector<std::string>& link_reports() const { return link_reports_; }

    // ---- events (router_events.h) ----
    // `sink` gets every router's new event records at every poll of the runner's waits
    // (bring_up, run_workers, monitor, terminate) and once more when each ends, so the routers'
    // logs never fill while the host is waiting. Set it before bring_up (or start, attach) to see
    // the start-up too.
    void on_events(std::function<void(std::span<const RouterEventRecord>)> sink);
    // Collect now (also without a sink): every router's records since the last collection.
    std::vector<RouterEventRecord> collect_events();
    const RouterEventReader& events() const { return events_; }

    // Stop every router (see the top of this file), within `timeout_cycles` in total. Returns
    // the final snapshots. Error(Fabric) naming the laggards if the fabric does not quiesce
    // (Graceful; nothing is written then, so the caller can still terminate Immediate), a
    // router core is still running at the deadline, or a router did not end Terminated
    // (Graceful: also with undrained packets); Immediate only fails for cores still running or
    // trapped. Graceful with a link a drain cut: the rest of the fabric quiesces (the cut routers
    // left out of the balance, but each must have decided every packet it held), then the word
    // written is Immediate, and a router whose
    // link works must still end with nothing undrained. Error(BadInput) for KeepRunning or before
    // bring_up.
    std::vector<RouterSnapshot> terminate(protocol::fabric::Termination mode,
                                          uint64_t timeout_cycles);
    // The word the last terminate wrote (Immediate for a Graceful one with a cut link);
    // KeepRunning before any.
    protocol::fabric::Termination termination_written() const { return written_; }

  private:
    void refuse_restart(const char* what) const;
    // Load, configure and start every router (no waiting); the health monitor starts with them.
    void start_routers();
    RouterSnapshot snapshot(size_t i);
    // Advance until pred(all snapshots) holds; returns false at the deadline. `each_poll` (if
    // given) runs after every advance, before the snapshots are taken; it may throw.
    template <typename Pred>
    bool advance_until(uint64_t deadline, Pred&& done, std::vector<RouterSnapshot>& last,
                       const std::function<void()>& each_poll = {});
    HealthMonitor& monitor_or_fail(const char* what);
    size_t watched_count() const;
    // The sink's share of a poll: collect and hand over, if there is a sink.
    void poll_events();

    Device& device_;
    FabricPlan plan_;
    ElfImage elf_;
    uint64_t poll_cycles_;
    std::vector<LaunchTarget> targets_;
    std::vector<LaunchMethod> methods_;
    bool started_ = false;
    bool up_ = false;
    bool terminated_ = false;
    uint64_t start_cycle_ = 0;
    uint64_t handshake_cycles_ = 0;
    uint64_t ready_cycles_ = 0;
    uint64_t stall_cycles_ = kDefaultStallCycles;
    std::vector<WatchedComponent> extra_;   // watch() before bring_up
    std::optional<HealthMonitor> monitor_;  // from bring_up on
    RouterEventReader events_{plan_};
    std::function<void(std::span<const RouterEventRecord>)> event_sink_;
    std::vector<std::function<void(uint64_t)>> released_hooks_;
    LinkDownReaction reaction_;
    bool stall_drops_ = false;  // some router's stall timeouts drop (drain_for_destination)
    protocol::fabric::Termination written_ = protocol::fabric::Termination::KeepRunning;
    std::vector<size_t> drained_;
    // A link waiting out its grace: the router that reported it, when it is drained, and whether
    // for silence (cancelled by peer_heard) or the link (cancelled by link_up).
    struct PendingDrain {
        size_t router = 0;
        uint64_t deadline = 0;
        bool silent = false;
        uint64_t crossed = 0;  // crossed_link() when the grace began
    };
    std::vector<PendingDrain> pending_drains_;
    // A link being rerouted: its two ends, held (Reroute written) or ordered (RerouteOrder
    // written), and when they must have got there.
    struct PendingReroute {
        RerouteDecision decision;
        bool ordered = false;
        uint64_t deadline = 0;
    };
    std::vector<PendingReroute> pending_reroutes_;
    std::vector<size_t> rerouted_;
    std::vector<size_t> rejoined_;
    // A rerouted link: on its fallback, rejoining (Rejoin written, until `deadline`), back (its
    // traffic returned to it) or staying on the fallback for good (the rejoin failed).
    struct ReroutedLink {
        enum class Phase : uint8_t { OnFallback, Rejoining, Back, Stays };
        RerouteDecision decision;
        Phase phase = Phase::OnFallback;
        uint64_t deadline = 0;
    };
    std::vector<ReroutedLink> rerouted_links_;
    // Each router's link as its events said (LinkDown / LinkUp) and since when; none yet: up
    // since bring-up (a link rerouted for a silent peer, not for its status word).
    struct LinkSeen {
        bool up = true;
        uint64_t since = 0;
    };
    std::map<size_t, LinkSeen> link_seen_;
    // Added to a router's RouterControlReport::taken[c] (and its received count of the channel's
    // VC) in its snapshots: the packets of its
    // peer's channel c that did not cross the link (sent over the fallback) before it rejoined,
    // so taken[c] stays comparable with the peer's positions on the link (its completed count).
    std::map<size_t, std::array<uint32_t, protocol::fabric::kMaxSenderChannels>> taken_offset_;
    void advance_rejoins(uint64_t now);
    // `near`, `far`: the two ends' snapshots, both Rejoined (their counts final).
    void rejoined(ReroutedLink& link, const RouterSnapshot& near, const RouterSnapshot& far);
    bool on_fallback(size_t router) const;
    std::vector<std::string> link_reports_;
    bool reroute_link(const RerouteDecision& d);
    EthPortRef port_of(size_t router) const;
    std::set<EthPortRef> failed_ports() const;
    void advance_reroutes(uint64_t now);
    void write_order(size_t router, const RouterSnapshot& peer);
    bool rerouting(size_t router) const;
    bool link_handled(size_t router) const;
    // react_to_dead_links' share of a poll.
    void react_to_link_down(std::span<const RouterEventRecord> fresh);
    void drain_expired(uint64_t now);
    void drain_link(size_t router);
    void drain_ends(size_t router);
    void drain_for_destination(const RouterEventRecord& r);
    std::optional<size_t> peer_of(size_t router) const;
    uint64_t crossed_link(size_t router);
    uint64_t grace_cycles(bool silent) const;
    std::optional<uint64_t> traffic_start_;
};

}  // namespace fabric
