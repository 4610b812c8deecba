#include "fabric/fabric_runner.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <set>

#include "fabric/error.h"
#include "fabric/soc_descriptor.h"
#include "hal/arch_map.h"
#include "hal/status.h"
#include "protocol/erisc_base_fw.h"
#include "protocol/fabric_mux.h"

namespace fabric {

namespace pf = protocol::fabric;

namespace {

// The code's name from its protocol table, or "unknown(0x...)".
template <typename E, size_t N>
std::string name_or_unknown(const pf::CodeName<E> (&names)[N], uint32_t value) {
    if (const char* name = pf::code_name(names, value)) return name;
    return fmt::format("unknown({})", hex32(value));
}

// Its stall timeouts are on and drop what stalls.
bool drops_stalls(const RouterPlacement& r) {
    return r.config.stall_timeout_us != 0 &&
           r.config.stall_action == static_cast<uint32_t>(pf::StallAction::Drop);
}

}  // namespace

std::string router_status_name(uint32_t status) {
    return name_or_unknown(pf::kRouterStatusNames, status);
}

std::string router_wait_name(uint32_t wait) {
    return name_or_unknown(pf::kRouterWaitNames, wait);
}

std::string router_control_name(uint32_t control) {
    if (control == pf::kControlStateSettling) return "settling";
    return name_or_unknown(pf::kRouterControlNames, control);
}

std::string reroute_state_name(uint32_t state) {
    return name_or_unknown(pf::kRerouteStateNames, state);
}

std::string termination_name(uint32_t mode) {
    return name_or_unknown(pf::kTerminationNames, mode);
}

bool router_status_is_error(uint32_t status) {
    switch (static_cast<pf::RouterStatus>(status)) {
        case pf::RouterStatus::NotStarted:
        case pf::RouterStatus::Started:
        case pf::RouterStatus::ConfigChecked:
        case pf::RouterStatus::StreamsInitialized:
        case pf::RouterStatus::Handshaking:
        case pf::RouterStatus::HandshakeComplete:
        case pf::RouterStatus::ReadyForTraffic:
        case pf::RouterStatus::Draining:
        case pf::RouterStatus::Terminated:
        case pf::RouterStatus::BadPacket:
            return false;
        case pf::RouterStatus::ConfigInvalid:
        case pf::RouterStatus::HandshakeMismatch:
        case pf::RouterStatus::Timeout:
        case pf::RouterStatus::Fault:
            return true;
        default:
            return true;
    }
}

std::string config_check_name(uint32_t check) {
    return name_or_unknown(pf::kConfigCheckNames, check);
}

std::string bad_packet_name(uint32_t reason) {
    if (reason == static_cast<uint32_t>(pf::BadPacket::None)) return "none";
    return name_or_unknown(pf::kBadPacketNames, reason);
}

std::string handshake_field_name(uint32_t field) {
    return name_or_unknown(pf::kHandshakeFieldNames, field);
}

namespace {

// Bad packet reasons (router 0x100.., mux 0x200..) are far from the other codes: a detail in
// their range names one whatever the status (the router keeps running after a bad packet).
constexpr uint32_t kRouterBadPacketFirst = static_cast<uint32_t>(pf::BadPacket::Magic);
constexpr uint32_t kRouterBadPacketLast = static_cast<uint32_t>(pf::kLastBadPacket);

// Fault and Timeout carry the hal::Status of the call that failed (0: a wait of the component's
// own).
std::string hal_detail_name(uint32_t detail) {
    if (detail == 0 || detail > static_cast<uint32_t>(hal::Status::NotInitialized))
        return hex32(detail);
    return fmt::format("hal:{}", hal::to_string(static_cast<hal::Status>(detail)));
}

bool is_hal_detail_status(uint32_t status) {
    return status == static_cast<uint32_t>(pf::RouterStatus::Fault) ||
           status == static_cast<uint32_t>(pf::RouterStatus::Timeout);
}

std::string mux_config_check_name(uint32_t check) {
    return name_or_unknown(pf::kMuxConfigCheckNames, check);
}

std::string mux_bad_packet_name(uint32_t reason) {
    return name_or_unknown(pf::kMuxBadPacketNames, reason);
}

}  // namespace

std::string router_detail_name(uint32_t status, uint32_t detail) {
    if (status == static_cast<uint32_t>(pf::RouterStatus::ConfigInvalid) && detail != 0) {
        return "config:" + config_check_name(detail);
    }
    if (status == static_cast<uint32_t>(pf::RouterStatus::HandshakeMismatch)) {
        return "mismatch:" + handshake_field_name(detail);
    }
    if (is_hal_detail_status(status)) return hal_detail_name(detail);
    if (detail >= kRouterBadPacketFirst && detail <= kRouterBadPacketLast) {
        return "bad_packet:" + bad_packet_name(detail);
    }
    return hex32(detail);
}

std::string mux_detail_name(uint32_t status, uint32_t detail) {
    if (status == static_cast<uint32_t>(pf::RouterStatus::ConfigInvalid) && detail != 0) {
        return "config:" + mux_config_check_name(detail);
    }
    if (is_hal_detail_status(status)) return hal_detail_name(detail);
    if (pf::code_name(pf::kMuxBadPacketNames, detail) != nullptr) {
        return "bad_packet:" + mux_bad_packet_name(detail);
    }
    return hex32(detail);
}

const ComponentKind& router_component_kind() {
    static const ComponentKind kind = [] {
        using S = pf::RouterStatus;
        ComponentKind k;
        k.name = "router";
        k.status_name = router_status_name;
        k.stage_name = router_status_name;
        k.stuck_at_name = router_wait_name;
        k.detail_name = router_detail_name;
        k.is_error = router_status_is_error;
        k.beating = [](uint32_t s) {
            return s == static_cast<uint32_t>(S::ReadyForTraffic) ||
                   s == static_cast<uint32_t>(S::Draining);
        };
        k.done = [](uint32_t s) { return s == static_cast<uint32_t>(S::Terminated); };
        k.not_started = static_cast<uint32_t>(S::NotStarted);
        return k;
    }();
    return kind;
}

const ComponentKind& mux_component_kind() {
    static const ComponentKind kind = [] {
        ComponentKind k = router_component_kind();
        k.name = "mux";
        k.detail_name = mux_detail_name;
        return k;
    }();
    return kind;
}

std::string router_component_name(const RouterPlacement& r) {
    if (r.mesh)
        return fmt::format("router {} (chip {} eth {})", r.mesh->port().str(), r.chip,
                           r.eth_channel);
    return fmt::format("router {} chip {} eth {}", dir_name(r.dir), r.chip, r.eth_channel);
}

std::string router_side_name(const RouterPlacement& r) {
    return r.mesh ? r.mesh->port().str() : std::string(dir_name(r.dir));
}

std::string RouterSnapshot::describe() const {
    return fmt::format(
        "chip {} eth {} (core {}, {}): status {}, stage {}, stuck at {}, detail {}, {}", chip,
        eth_channel, core.core.str(), mesh ? mesh->str() : std::string(dir_name(dir)),
        status_name(), stage_name(), stuck_at_name(), detail_name(), describe_core(run));
}

uint64_t RouterSnapshot::sent() const {
    uint64_t s = 0;
    for (uint32_t v : block.sent) s += v;
    return s;
}
uint64_t RouterSnapshot::completed() const {
    uint64_t s = 0;
    for (uint32_t v : block.completed) s += v;
    return s;
}
uint64_t RouterSnapshot::received() const {
    uint64_t s = 0;
    for (uint32_t v : block.received) s += v;
    return s;
}

PlacementRules router_placement(const RouterPlacement& r, const hal::ArchMap& arch,
                                uint32_t eth_l1_size) {
    PlacementRules rules = erisc_placement(arch, eth_l1_size);
    rules.target = fmt::format("fabric router {} (eth {})", r.core.str(), r.eth_channel);
    rules.reserved.push_back({r.layout.config, r.layout.end, "router L1 block"});
    return rules;
}

namespace {

// "2 of 6 routers: <describe>; <describe>"
std::string laggards(const std::vector<RouterSnapshot>& all,
                     const std::function<bool(const RouterSnapshot&)>& bad) {
    std::string out;
    size_t n = 0;
    for (const RouterSnapshot& s : all) {
        if (!bad(s)) continue;
        out += fmt::format("{}{}", n ? "; " : "", s.describe());
        ++n;
    }
    return fmt::format("{} of {} router{}: {}", n, all.size(), all.size() == 1 ? "" : "s", out);
}

bool core_failed(const RouterSnapshot& s) {
    return s.core_finished || s.run.state == CoreRunState::Trapped;
}

// The counters that move with traffic (not the heartbeat or loop count).
bool same_counters(const pf::RouterStatusBlock& a, const pf::RouterStatusBlock& b) {
    return std::equal(std::begin(a.sent), std::end(a.sent), std::begin(b.sent)) &&
           std::equal(std::begin(a.completed), std::end(a.completed), std::begin(b.completed)) &&
           std::equal(std::begin(a.received), std::end(a.received), std::begin(b.received)) &&
           a.delivered == b.delivered && a.forwarded == b.forwarded &&
           a.bad_packets == b.bad_packets;
}

bool same_counters(const RouterSnapshot& a, const RouterSnapshot& b) {
    return same_counters(a.block, b.block) && a.control.held == b.control.held;
}

// A router whose link a drain cut (protocol/fabric.h RouterControl): what it dropped unsent
// counts as sent, what it sent and the peer never took is never received, so quiescence is judged
// without it (the host drains both ends of a dead link: its peer is cut too).
bool link_cut(const RouterSnapshot& s) {
    return s.control.cut != 0;
}

bool channels_settled(const RouterSnapshot& s) {
    for (uint32_t c = 0; c < pf::kMaxSenderChannels; ++c) {
        if (s.block.sent[c] != s.block.completed[c]) return false;
    }
    return true;
}

}  // namespace

FabricRunner::FabricRunner(Device& device, FabricPlan plan, ElfImage router_elf,
                           uint64_t poll_cycles)
    : device_(device),
      plan_(std::move(plan)),
      elf_(std::move(router_elf)),
      poll_cycles_(poll_cycles) {
    if (poll_cycles_ == 0) fail(ErrorCategory::BadInput, "fabric: poll interval is 0");
    if (plan_.routers.empty()) fail(ErrorCategory::BadInput, "fabric: the plan has no routers");
    const hal::ArchMap& am = hal::arch_map(plan_.arch);
    for (const RouterPlacement& r : plan_.routers) {
        if (r.chip >= device_.chip_count()) {
            fail(ErrorCategory::BadInput, "fabric: router on chip {}, but {} has {} chip(s)",
                 r.chip, device_.description(), device_.chip_count());
        }
        const SocDescriptor& soc = device_.soc(r.chip);
        if (soc.arch() != plan_.arch) {
            fail(ErrorCategory::BadInput, "fabric: the plan is for {} but chip {} of {} is {}",
                 arch_name(plan_.arch), r.chip, device_.description(), arch_name(soc.arch()));
        }
        if (soc.eth_channel(r.core.core) != r.eth_channel) {
            fail(ErrorCategory::BadInput, "fabric: {} is not eth channel {} of {}", r.core.str(),
                 r.eth_channel, soc.source());
        }
        if (r.mesh && r.mesh->exit_table.size() > pf::kMeshExitEntries) {
            fail(ErrorCategory::BadInput,
                 "fabric: router {} has {} exit table entries (at most {})",
                 router_component_name(r), r.mesh->exit_table.size(), pf::kMeshExitEntries);
        }
        const PlacementRules rules = router_placement(r, am, soc.eth_l1_size());
        elf_.check_placement(rules);
        targets_.push_back(LaunchTarget{r.core, &elf_, rules});
    }
    stall_drops_ = std::any_of(plan_.routers.begin(), plan_.routers.end(), drops_stalls);
}

RouterSnapshot FabricRunner::snapshot(size_t i) {
    const RouterPlacement& r = plan_.routers[i];
    RouterSnapshot s;
    s.chip = r.chip;
    s.eth_channel = r.eth_channel;
    s.core = r.core;
    s.dir = r.dir;
    if (r.mesh) s.mesh = r.mesh->port();
    s.method = i < methods_.size() ? methods_[i] : LaunchMethod::ResetPc;
    // The core's state first: once it has ended, the blocks read after it are final (the device
    // may run between the reads: a sim server, silicon).
    s.run = device_.core_status(r.core);
    s.core_finished = s.run.state == CoreRunState::Exited || s.run.state == CoreRunState::Trapped;
    if (started_ && !s.core_finished && s.method == LaunchMethod::LaunchFlag &&
        device_.read32(r.core, protocol::base_fw::kLaunchAppFlag) == 0) {
        s.core_finished = true;  // the router returned to the base firmware
        s.run.state = CoreRunState::Exited;
        s.run.exit_status =
            device_.read32(r.core, protocol::base_fw::kStatusBlock +
                                       offsetof(protocol::base_fw::StatusBlock, app_result));
    }
    std::vector<uint8_t> raw(sizeof(pf::RouterStatusBlock));
    device_.read(r.core, r.layout.status, raw);
    std::memcpy(&s.block, raw.data(), raw.size());
    std::vector<uint8_t> report(sizeof(pf::RouterControlReport));
    device_.read(r.core, pf::router_control_report(r.layout), report);
    std::memcpy(&s.control, report.data(), report.size());
    // A rejoined link: what the fallback carried for it counts as taken and received, so the
    // counts stay those of the link's positions and sent and received balance.
    if (const auto off = taken_offset_.find(i); off != taken_offset_.end()) {
        for (size_t c = 0; c < off->second.size(); ++c) {
            s.control.taken[c] += off->second[c];
            s.block.received[c >= pf::kMeshVc1Channel0 ? 1 : 0] += off->second[c];
        }
    }
    return s;
}

std::vector<RouterSnapshot> FabricRunner::status() {
    std::vector<RouterSnapshot> out;
    out.reserve(plan_.routers.size());
    for (size_t i = 0; i < plan_.routers.size(); ++i) out.push_back(snapshot(i));
    return out;
}

template <typename Pred>
bool FabricRunner::advance_until(uint64_t deadline, Pred&& done, std::vector<RouterSnapshot>& last,
                                 const std::function<void()>& each_poll) {
    // done() is called exactly once per snapshot (it may compare with the previous one).
    last = status();
    bool finished = done(last);
    while (!finished) {
        const uint64_t now = device_.cycles();
        if (now >= deadline) return false;
        const uint64_t ran = device_.advance(std::min(poll_cycles_, deadline - now));
        poll_events();
        if (each_poll) each_poll();
        last = status();
        finished = done(last);
        if (ran == 0 && !finished) {
            fail(ErrorCategory::Device,
                 "{}: the device clock does not advance while the host waits for the routers: {}",
                 device_.description(), laggards(last, [](const RouterSnapshot&) { return true; }));
        }
    }
    return true;
}

void FabricRunner::refuse_restart(const char* what) const {
    if (started_) fail(ErrorCategory::BadInput, "fabric: {} after bring_up, start or attach", what);
}

void FabricRunner::start() {
    refuse_restart("start");
    start_routers();
}

void FabricRunner::start_routers() {
    methods_ = load_many(device_, targets_);
    for (size_t i = 0; i < plan_.routers.size(); ++i) {
        const RouterPlacement& r = plan_.routers[i];
        // Config, then zeros up to the first slot: status, termination, ready, handshake,
        // connection, upstream credits, scratch; a 2D router's mesh config and exit table too.
        std::vector<uint8_t> block(r.layout.sender_base[0] - r.layout.config, 0);
        const auto put = [&](uint32_t addr, const void* data, size_t bytes) {
            std::memcpy(block.data() + (addr - r.layout.config), data, bytes);
        };
        put(r.layout.config, &r.config, sizeof(r.config));
        if (r.mesh) {
            put(r.layout.mesh_config, &r.mesh->config, sizeof(r.mesh->config));
            put(r.layout.exit_table, r.mesh->exit_table.data(),
                r.mesh->exit_table.size() * sizeof(uint32_t));
        }
        device_.write(r.core, r.layout.config, block);
    }
    std::vector<WatchedComponent> watched;
    for (size_t i = 0; i < plan_.routers.size(); ++i) {
        const RouterPlacement& r = plan_.routers[i];
        watched.push_back({r.core, router_component_name(r), r.layout.status,
                           router_component_kind(), methods_[i]});
    }
    for (auto& c : extra_) watched.push_back(std::move(c));
    extra_.clear();
    monitor_.emplace(device_, std::move(watched), stall_cycles_);
    start_many(device_, targets_, methods_);
    started_ = true;
    start_cycle_ = device_.cycles();
}

void FabricRunner::bring_up(uint64_t timeout_cycles) {
    refuse_restart("bring_up");
    if (timeout_cycles == 0) fail(ErrorCategory::BadInput, "fabric: bring-up timeout is 0 cycles");
    start_routers();
    const uint64_t deadline = start_cycle_ + timeout_cycles;

    const auto wait_for = [&](pf::RouterStatus goal, const char* phase) {
        const uint32_t want = static_cast<uint32_t>(goal);
        const auto failed = [](const RouterSnapshot& s) {
            return router_status_is_error(s.block.status) || core_failed(s);
        };
        std::vector<RouterSnapshot> last;
        const bool ok = advance_until(
            deadline,
            [&](const std::vector<RouterSnapshot>& all) {
                bool all_there = true;
                for (const RouterSnapshot& s : all) {
                    if (failed(s)) return true;  // stop waiting: report below
                    if (s.block.status != want) all_there = false;
                }
                return all_there;
            },
            last);
        const bool any_failed = std::any_of(last.begin(), last.end(), failed);
        if (ok && !any_failed) return;
        const auto lagging = [&](const RouterSnapshot& s) {
            return s.block.status != want || core_failed(s);
        };
        if (any_failed) {
            fail(ErrorCategory::Fabric, "fabric bring-up ({}) failed after {} cycles: {}", phase,
                 device_.cycles() - start_cycle_, laggards(last, lagging));
        }
        fail(ErrorCategory::Fabric, "fabric bring-up: not {} within {} cycles: {}",
             router_status_name(want), timeout_cycles, laggards(last, lagging));
    };

    wait_for(pf::RouterStatus::HandshakeComplete, "handshake");
    handshake_cycles_ = device_.cycles() - start_cycle_;
    for (const RouterPlacement& r : plan_.routers) {
        device_.write32(r.core, r.layout.ready, pf::kReadyMagic);
    }
    wait_for(pf::RouterStatus::ReadyForTraffic, "ready");
    ready_cycles_ = device_.cycles() - start_cycle_;
    up_ = true;
    poll_events();
}

void FabricRunner::attach() {
    refuse_restart("attach");
    methods_.clear();
    for (const LaunchTarget& t : targets_) methods_.push_back(device_.launch_method(t.core));
    started_ = true;  // snapshot() reads through the methods
    std::vector<std::string> wrong;
    for (size_t i = 0; i < plan_.routers.size(); ++i) {
        const RouterPlacement& r = plan_.routers[i];
        // The configuration it runs must be the plan's: another fabric's routers are not ours.
        std::vector<uint8_t> cfg(sizeof(r.config));
        device_.read(r.core, r.layout.config, cfg);
        bool same = std::memcmp(cfg.data(), &r.config, sizeof(r.config)) == 0;
        if (same && r.mesh) {
            std::vector<uint8_t> mc(sizeof(r.mesh->config));
            device_.read(r.core, r.layout.mesh_config, mc);
            same = std::memcmp(mc.data(), &r.mesh->config, sizeof(r.mesh->config)) == 0;
        }
        const RouterSnapshot s = snapshot(i);
        if (!same) {
            wrong.push_back(
                fmt::format("{}: its config is not the plan's", router_component_name(r)));
        } else if (s.block.status != static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic) ||
                   core_failed(s) || s.core_finished) {
            wrong.push_back(s.describe());
        }
    }
    if (!wrong.empty()) {
        started_ = false;
        fail(ErrorCategory::Fabric,
             "fabric attach: {} of {} routers are not this plan's running fabric: {}", wrong.size(),
             plan_.routers.size(), fmt::join(wrong, "; "));
    }
    std::vector<WatchedComponent> watched;
    for (size_t i = 0; i < plan_.routers.size(); ++i) {
        const RouterPlacement& r = plan_.routers[i];
        watched.push_back({r.core, router_component_name(r), r.layout.status,
                           router_component_kind(), methods_[i]});
    }
    for (auto& c : extra_) watched.push_back(std::move(c));
    extra_.clear();
    monitor_.emplace(device_, std::move(watched), stall_cycles_);
    start_cycle_ = device_.cycles();
    up_ = true;
}

void FabricRunner::check_running() {
    const auto all = status();
    const auto bad = [](const RouterSnapshot& s) {
        return s.block.status != static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic) ||
               core_failed(s);
    };
    if (std::any_of(all.begin(), all.end(), bad)) {
        fail(ErrorCategory::Fabric, "fabric: not every router is ready for traffic: {}",
             laggards(all, bad));
    }
}

std::vector<LaunchResult> FabricRunner::run_workers(
    std::span<const LaunchTarget> workers, const LaunchOptions& options,
    const std::function<void(const LaunchTarget&)>& setup) {
    if (!up_ || terminated_) {
        fail(ErrorCategory::BadInput, "fabric: workers can only run while the fabric is up ({})",
             terminated_ ? "it was terminated" : "bring it up first");
    }
    if (options.poll_cycles == 0) fail(ErrorCategory::BadInput, "launch: poll interval is 0");
    for (const LaunchTarget& w : workers) {
        for (const RouterPlacement& r : plan_.routers) {
            if (w.core == r.core) {
                fail(ErrorCategory::BadInput,
                     "fabric: worker {} is the {} router core of chip {} (eth {})", w.core.str(),
                     router_side_name(r), r.chip, r.eth_channel);
            }
        }
    }
    const std::vector<LaunchMethod> methods = load_many(device_, workers);
    if (setup) {
        for (const LaunchTarget& w : workers) setup(w);
    }
    start_many(device_, workers, methods);
    const uint64_t begin = device_.cycles();
    if (!traffic_start_) traffic_start_ = begin;
    for (const auto& hook : released_hooks_) hook(begin);
    // Stop waiting as soon as a component fails or stalls: the workers would only run into their
    // timeouts.
    HealthMonitor& mon = *monitor_;
    (void)mon.poll();  // the stall windows start with the workers (the host may have been away)
    const auto watch = [&] {
        poll_events();
        auto stuck = mon.poll();
        if (!stuck.empty()) {
            const std::string what = describe_stuck(stuck, mon.components().size());
            // A component that stopped or trapped said so itself; one that stalled did not.
            const bool stalled = std::all_of(stuck.begin(), stuck.end(), [](const StuckReport& r) {
                return r.reason == StuckReason::Stalled;
            });
            throw HealthError(
                fmt::format("fabric: {} while workers ran ({} cycles in, stall window {} "
                            "cycles): {}",
                            stalled ? "no progress" : "a component failed",
                            device_.cycles() - begin, mon.stall_cycles(), what),
                std::move(stuck));
        }
    };
    return wait_many(device_, workers, methods, options, watch);
}

void FabricRunner::write_control(pf::RouterControl control, std::span<const size_t> which) {
    if (!started_) fail(ErrorCategory::BadInput, "fabric: control before bring_up");
    const auto write = [&](size_t i) {
        if (i >= plan_.routers.size()) {
            fail(ErrorCategory::BadInput, "fabric: control of router {}, but the plan has {}", i,
                 plan_.routers.size());
        }
        const RouterPlacement& r = plan_.routers[i];
        device_.write32(r.core, pf::router_control(r.layout), static_cast<uint32_t>(control));
    };
    if (which.empty()) {
        for (size_t i = 0; i < plan_.routers.size(); ++i) write(i);
    } else {
        for (size_t i : which) write(i);
    }
}

std::vector<RouterSnapshot> FabricRunner::control(pf::RouterControl control,
                                                  uint64_t timeout_cycles,
                                                  std::span<const size_t> which) {
    if (timeout_cycles == 0) fail(ErrorCategory::BadInput, "fabric: control timeout is 0 cycles");
    write_control(control, which);
    std::vector<bool> asked(plan_.routers.size(), which.empty());
    for (size_t i : which) asked[i] = true;
    const uint32_t want = static_cast<uint32_t>(control);
    std::vector<RouterSnapshot> prev;
    const auto there = [&](const std::vector<RouterSnapshot>& all) {
        bool ok = true;
        for (size_t i = 0; i < all.size(); ++i) {
            if (asked[i] && all[i].control.state != want) ok = false;
        }
        // A pause holds the counters still: wait until two polls agree.
        if (ok && control == pf::RouterControl::Pause) {
            ok = prev.size() == all.size();
            for (size_t i = 0; ok && i < all.size(); ++i) {
                ok = same_counters(all[i].block, prev[i].block) &&
                     std::equal(std::begin(all[i].control.taken), std::end(all[i].control.taken),
                                std::begin(prev[i].control.taken));
            }
        }
        prev = all;
        return ok;
    };
    std::vector<RouterSnapshot> last;
    const bool reached = advance_until(device_.cycles() + timeout_cycles, there, last);
    poll_events();  // the records written on the way (a drain's reports)
    if (!reached) {
        fail(ErrorCategory::Fabric, "fabric: {} not reached within {} cycles: {}",
             router_control_name(want), timeout_cycles,
             laggards(last, [&](const RouterSnapshot& s) { return s.control.state != want; }));
    }
    return last;
}

void FabricRunner::on_workers_released(std::function<void(uint64_t)> hook) {
    released_hooks_.push_back(std::move(hook));
}

void FabricRunner::on_events(std::function<void(std::span<const RouterEventRecord>)> sink) {
    event_sink_ = std::move(sink);
}

std::vector<RouterEventRecord> FabricRunner::collect_events() {
    return events_.collect(device_);
}

void FabricRunner::poll_events() {
    const bool reacting = reaction_.mode != LinkDownReaction::Mode::None;
    if (!event_sink_ && !reacting && !stall_drops_) return;
    const std::vector<RouterEventRecord> fresh = events_.collect(device_);
    if (reacting) react_to_link_down(fresh);
    for (const RouterEventRecord& r : fresh) {
        if (r.lost == 0 && r.event.kind == static_cast<uint16_t>(pf::RouterEventKind::NotAccepted))
            drain_for_destination(r);
    }
    if (event_sink_ && !fresh.empty()) event_sink_(fresh);
}

std::optional<size_t> FabricRunner::peer_of(size_t router) const {
    const pf::RouterConfig& c = plan_.routers[router].config;
    for (size_t j = 0; j < plan_.routers.size(); ++j) {
        const RouterPlacement& peer = plan_.routers[j];
        if (peer.chip == c.peer_chip_id && peer.eth_channel == c.peer_eth_channel) return j;
    }
    return std::nullopt;
}

namespace {

bool holds(const std::vector<size_t>& routers, size_t router) {
    return std::find(routers.begin(), routers.end(), router) != routers.end();
}

}  // namespace

// A dead link, acted on once: without a cluster (no decision possible) both ends are drained;
// with one, the control plane's decision (reroute_plan.h) is carried out: rerouted over the
// routers' configured fallbacks, the link removed (both ends drained: what needs it is dropped and
// reported) or, strict with no link left, the fabric stopped (every router drained).
void FabricRunner::drain_link(size_t router) {
    if (link_handled(router)) return;
    const auto peer = peer_of(router);
    if (!reaction_.cluster || !peer) return drain_ends(router);
    const RerouteDecision d = decide_reroute(*reaction_.cluster, plan_, port_of(router),
                                             failed_ports(), reaction_.reliability);
    switch (d.action) {
        case RerouteAction::Reroute:
            if (reroute_link(d)) return;
            link_reports_.push_back(
                d.summary(plan_) +
                (!reaction_.reroute ? ": rerouting is off: drained instead"
                 : d.fallback->near_router
                     ? ": not the routers this link's were configured to fall "
                       "back on (not built): drained instead"
                     : ": starting routers there is not built: drained instead"));
            return drain_ends(router);
        case RerouteAction::RemoveLink:
            link_reports_.push_back(d.summary(plan_));
            return drain_ends(router);
        case RerouteAction::Stop:
            link_reports_.push_back(d.summary(plan_));
            for (size_t i = 0; i < plan_.routers.size(); ++i) drain_ends(i);
            return;
    }
}

// A delivery its destination core does not accept pins the receiver channel it came on (its
// slots complete in order), so its peer gets no more completions: the link is drained (not
// rerouted: another link leads to the same core), which frees the peer's packets and reports them.
// With the router's stall timeouts dropping (not StallAction::Hold, debugging: everything stays
// where it is), whatever the reaction to dead links.
void FabricRunner::drain_for_destination(const RouterEventRecord& r) {
    const RouterPlacement& at = plan_.routers[r.router];
    if (link_handled(r.router) || !drops_stalls(at)) return;
    link_reports_.push_back(fmt::format(
        "chip {} core {}-{} does not accept deliveries from chip {} eth {}: its link drained",
        at.chip, r.event.code & 0xFF, r.event.code >> 8, at.chip, at.eth_channel));
    drain_ends(r.router);
}

// Drain `router` and the router at the other end of its link, each once.
void FabricRunner::drain_ends(size_t router) {
    const auto drain = [&](size_t i) {
        if (holds(drained_, i)) return;
        drained_.push_back(i);
        const size_t one[] = {i};
        write_control(pf::RouterControl::Drain, one);
    };
    drain(router);
    if (const auto peer = peer_of(router)) drain(*peer);
}

EthPortRef FabricRunner::port_of(size_t router) const {
    return {plan_.routers[router].chip, plan_.routers[router].eth_channel};
}

// Both ends of every link the host has acted on: known down.
std::set<EthPortRef> FabricRunner::failed_ports() const {
    std::set<EthPortRef> down;
    const auto add = [&](size_t r) {
        down.insert(port_of(r));
        if (const auto peer = peer_of(r)) down.insert(port_of(*peer));
    };
    for (size_t r : drained_) add(r);
    for (size_t r : rerouted_) {
        if (on_fallback(r)) add(r);
    }
    for (const PendingReroute& p : pending_reroutes_) add(p.decision.near_router);
    return down;
}

// Rerouted, and its link has not taken its traffic back.
bool FabricRunner::on_fallback(size_t router) const {
    return std::any_of(rerouted_links_.begin(), rerouted_links_.end(), [&](const ReroutedLink& l) {
        return l.phase != ReroutedLink::Phase::Back &&
               (l.decision.near_router == router || l.decision.far_router == router);
    });
}

// Being rerouted now, or rerouted (and not back on its link).
bool FabricRunner::rerouting(size_t router) const {
    return on_fallback(router) || std::any_of(pending_reroutes_.begin(), pending_reroutes_.end(),
                                              [router](const PendingReroute& p) {
                                                  return p.decision.near_router == router ||
                                                         p.decision.far_router == router;
                                              });
}

// Drained, rerouted or being rerouted: the host has acted on this router's link already.
bool FabricRunner::link_handled(size_t router) const {
    return holds(drained_, router) || rerouting(router);
}

// Start the reroute `d` decided, if its fallback routers are the ones the failed link's routers
// were configured with (the firmware forwards into those only) and their own link is untouched.
bool FabricRunner::reroute_link(const RerouteDecision& d) {
    const FallbackLink& f = *d.fallback;
    if (!reaction_.reroute || !f.near_router || !f.far_router ||
        f.near_router != configured_fallback(plan_, d.near_router) ||
        f.far_router != configured_fallback(plan_, d.far_router) || link_handled(*f.near_router) ||
        link_handled(*f.far_router)) {
        return false;
    }
    const size_t both[] = {d.near_router, d.far_router};
    write_control(pf::RouterControl::Reroute, both);
    const uint64_t bound =
        uint64_t{reaction_.reroute_timeout_us} * hal::arch_map(plan_.arch).aiclk_mhz;
    pending_reroutes_.push_back({d, false, device_.cycles() + bound});
    return true;
}

// The RerouteOrder for `router`: what its peer took of each of its sender channels, magic last.
void FabricRunner::write_order(size_t router, const RouterSnapshot& peer) {
    const RouterPlacement& r = plan_.routers[router];
    pf::RerouteOrder order{};
    std::copy(std::begin(peer.control.taken), std::end(peer.control.taken), order.resume);
    std::vector<uint8_t> bytes(offsetof(pf::RerouteOrder, magic));
    std::memcpy(bytes.data(), &order, bytes.size());
    const uint32_t at = pf::router_reroute_order(r.layout);
    device_.write(r.core, at, bytes);
    device_.write32(r.core, at + offsetof(pf::RerouteOrder, magic), pf::kRerouteOrderMagic);
}

// Each link being rerouted, a step when both ends are there: both holding (their counts final)
// -> the orders; both applied -> rerouted. An end that refuses, or does not get there in time,
// has the link drained instead.
void FabricRunner::advance_reroutes(uint64_t now) {
    constexpr uint32_t kHeld = static_cast<uint32_t>(pf::RouterControl::Reroute);
    const auto state = [](const RouterSnapshot& s) {
        return static_cast<pf::RerouteState>(s.control.reroute);
    };
    for (auto it = pending_reroutes_.begin(); it != pending_reroutes_.end();) {
        const size_t a = it->decision.near_router, b = it->decision.far_router;
        const RouterSnapshot sa = snapshot(a), sb = snapshot(b);
        if (!it->ordered && sa.control.state == kHeld && sb.control.state == kHeld) {
            write_order(a, sb);
            write_order(b, sa);
            it->ordered = true;
        } else if (it->ordered && state(sa) == pf::RerouteState::Applied &&
                   state(sb) == pf::RerouteState::Applied) {
            rerouted_.push_back(a);
            rerouted_.push_back(b);
            rerouted_links_.push_back({it->decision});
            link_reports_.push_back(it->decision.summary(plan_));
            it = pending_reroutes_.erase(it);
            continue;
        }
        const bool refused =
            state(sa) == pf::RerouteState::Refused || state(sb) == pf::RerouteState::Refused;
        if (!refused && now <= it->deadline && !core_failed(sa) && !core_failed(sb)) {
            ++it;
            continue;
        }
        link_reports_.push_back(
            fmt::format("{}: the reroute {}: drained instead", it->decision.summary(plan_),
                        refused ? "was refused" : "did not reach both ends in time"));
        it = pending_reroutes_.erase(it);
        drain_ends(a);
    }
}

// Packets the two ends of `router`'s link have taken from each other: what crossed it.
uint64_t FabricRunner::crossed_link(size_t router) {
    uint64_t n = snapshot(router).received();
    if (const auto peer = peer_of(router)) n += snapshot(*peer).received();
    return n;
}

void FabricRunner::react_to_link_down(std::span<const RouterEventRecord> fresh) {
    using Kind = pf::RouterEventKind;
    const bool at_once = reaction_.mode == LinkDownReaction::Mode::Drain;
    const uint64_t now = device_.cycles();
    const auto pending = [&](size_t router, bool silent) {
        return std::find_if(pending_drains_.begin(), pending_drains_.end(), [&](const auto& p) {
            return p.router == router && p.silent == silent;
        });
    };
    for (const RouterEventRecord& r : fresh) {
        if (r.lost != 0) continue;
        const auto kind = static_cast<Kind>(r.event.kind);
        const bool silent = kind == Kind::PeerSilent || kind == Kind::PeerHeard;
        if (kind == Kind::LinkDown || kind == Kind::PeerSilent) {
            if (at_once) {
                drain_link(r.router);
            } else if (pending(r.router, silent) == pending_drains_.end()) {
                pending_drains_.push_back(
                    {r.router, now + grace_cycles(silent), silent, crossed_link(r.router)});
            }
        } else if (kind == Kind::LinkUp || kind == Kind::PeerHeard) {
            const auto it = pending(r.router, silent);
            if (it != pending_drains_.end()) pending_drains_.erase(it);
        }
        if (kind == Kind::LinkUp || kind == Kind::LinkDown) {
            link_seen_[r.router] = {kind == Kind::LinkUp, now};
        }
    }
    drain_expired(now);
    advance_reroutes(now);
    advance_rejoins(now);
}

// Each rerouted link, a step: both ends have seen it up for rejoin_after_us -> Rejoin to both;
// both rejoined -> Run to both (rejoined()); an end that does not get there in time (or ends,
// or sees the link go down again) -> Reroute to both: the link stays on its fallback.
void FabricRunner::advance_rejoins(uint64_t now) {
    using Phase = ReroutedLink::Phase;
    if (reaction_.rejoin_after_us == 0) return;
    const uint64_t mhz = hal::arch_map(plan_.arch).aiclk_mhz;
    for (ReroutedLink& l : rerouted_links_) {
        const size_t ends[] = {l.decision.near_router, l.decision.far_router};
        const LinkSeen a = link_seen_[ends[0]], b = link_seen_[ends[1]];
        if (l.phase == Phase::OnFallback && a.up && b.up &&
            now >= std::max(a.since, b.since) + uint64_t{reaction_.rejoin_after_us} * mhz) {
            write_control(pf::RouterControl::Rejoin, ends);
            l.phase = Phase::Rejoining;
            l.deadline = now + uint64_t{reaction_.reroute_timeout_us} * mhz;
            continue;
        }
        if (l.phase != Phase::Rejoining) continue;
        const RouterSnapshot sa = snapshot(ends[0]), sb = snapshot(ends[1]);
        const auto done = [](const RouterSnapshot& s) {
            return s.control.reroute == static_cast<uint32_t>(pf::RerouteState::Rejoined) &&
                   s.control.state == static_cast<uint32_t>(pf::RouterControl::Rejoin);
        };
        if (done(sa) && done(sb)) {
            rejoined(l, sa, sb);
            continue;
        }
        if (now <= l.deadline && a.up && b.up && !core_failed(sa) && !core_failed(sb)) continue;
        write_control(pf::RouterControl::Reroute, ends);
        l.phase = Phase::Stays;
        link_reports_.push_back(fmt::format(
            "link {} up again, but its ends did not rejoin it {}: it stays on its fallback",
            l.decision.failed.str(), a.up && b.up ? "in time" : "before it went down again"));
    }
}

// Both ends of `link` have started their link state again: from here a packet's position on it
// counts the packets of its channel the fallback carried too, so each end's taken counts are
// offset by what they did not see (snapshot()); then Run to both: the traffic returns to it.
void FabricRunner::rejoined(ReroutedLink& link, const RouterSnapshot& near,
                            const RouterSnapshot& far) {
    const size_t ends[] = {link.decision.near_router, link.decision.far_router};
    const RouterSnapshot* snaps[] = {&near, &far};
    for (size_t i = 0; i < 2; ++i) {
        const RouterSnapshot &sender = *snaps[i], &taker = *snaps[1 - i];
        auto& offset = taken_offset_[ends[1 - i]];
        for (size_t c = 0; c < offset.size(); ++c)
            offset[c] += sender.block.completed[c] - taker.control.taken[c];
    }
    write_control(pf::RouterControl::Run, ends);
    link.phase = ReroutedLink::Phase::Back;
    // The markers crossed it: a grace still running from its failure (a silent peer's) is moot.
    std::erase_if(pending_drains_, [&](const PendingDrain& p) {
        return p.router == ends[0] || p.router == ends[1];
    });
    rejoined_.insert(rejoined_.end(), std::begin(ends), std::end(ends));
    link_reports_.push_back(
        fmt::format("link {} up again: its traffic returned to it", link.decision.failed.str()));
}

// A link whose grace ran out is drained unless packets crossed it meanwhile (a flapping link
// whose router missed the link_up between its polls): then it gets another grace.
void FabricRunner::drain_expired(uint64_t now) {
    for (auto it = pending_drains_.begin(); it != pending_drains_.end();) {
        if (it->deadline > now) {
            ++it;
            continue;
        }
        const uint64_t crossed = crossed_link(it->router);
        if (crossed != it->crossed) {
            it->crossed = crossed;
            it->deadline = now + grace_cycles(it->silent);
            ++it;
            continue;
        }
        drain_link(it->router);
        it = pending_drains_.erase(it);
    }
}

uint64_t FabricRunner::grace_cycles(bool silent) const {
    const uint64_t us = silent ? reaction_.silent_grace_us : reaction_.down_grace_us;
    return us * hal::arch_map(plan_.arch).aiclk_mhz;
}

void FabricRunner::set_stall_cycles(uint64_t cycles) {
    if (cycles == 0) fail(ErrorCategory::BadInput, "fabric: stall window is 0 cycles");
    if (monitor_) fail(ErrorCategory::BadInput, "fabric: set the stall window before bring_up");
    stall_cycles_ = cycles;
}

void FabricRunner::watch(WatchedComponent component) {
    if (monitor_) {
        monitor_->add(std::move(component));
    } else {
        extra_.push_back(std::move(component));
    }
}

HealthMonitor& FabricRunner::monitor_or_fail(const char* what) {
    if (!monitor_) fail(ErrorCategory::BadInput, "fabric: {} before bring_up", what);
    return *monitor_;
}

std::vector<StuckReport> FabricRunner::health() {
    return monitor_or_fail("health check").poll();
}

void FabricRunner::check_health() {
    HealthMonitor& mon = monitor_or_fail("health check");
    auto stuck = mon.poll();
    if (!stuck.empty()) {
        const std::string what = describe_stuck(stuck, mon.components().size());
        throw HealthError(fmt::format("fabric: health check (stall window {} cycles): {}",
                                      mon.stall_cycles(), what),
                          std::move(stuck));
    }
}

void FabricRunner::monitor(uint64_t cycles) {
    HealthMonitor& mon = monitor_or_fail("monitor");
    const uint64_t begin = device_.cycles();
    std::vector<StuckReport> stuck;
    // Poll by poll when events are collected, else in one watch.
    const uint64_t step = event_sink_ ? poll_cycles_ : cycles;
    for (uint64_t done = 0; done < cycles && stuck.empty(); done += step) {
        stuck = mon.watch(std::min(step, cycles - done), poll_cycles_);
        poll_events();
    }
    if (!stuck.empty()) {
        const std::string what = describe_stuck(stuck, mon.components().size());
        throw HealthError(
            fmt::format("fabric: no progress after {} of {} cycles of monitoring (stall window "
                        "{} cycles): {}",
                        device_.cycles() - begin, cycles, mon.stall_cycles(), what),
            std::move(stuck));
    }
}

std::vector<RouterSnapshot> FabricRunner::terminate(pf::Termination mode, uint64_t timeout_cycles) {
    if (mode != pf::Termination::Graceful && mode != pf::Termination::Immediate) {
        fail(ErrorCategory::BadInput, "fabric: terminate with mode {}: use graceful or immediate",
             termination_name(static_cast<uint32_t>(mode)));
    }
    if (!started_) fail(ErrorCategory::BadInput, "fabric: terminate before bring_up");
    if (timeout_cycles == 0) fail(ErrorCategory::BadInput, "fabric: terminate timeout is 0 cycles");
    const uint64_t begin = device_.cycles();
    const uint64_t deadline = begin + timeout_cycles;
    std::vector<RouterSnapshot> last;
    // A component whose heartbeat stands still will not drain or exit: say so at once instead of
    // waiting for the budget (the other failures are named below, as before).
    const char* phase = "quiescence";
    bool written = false;  // the termination word
    const auto stalled = [&] {
        HealthMonitor& mon = *monitor_;
        auto stuck = mon.poll();
        std::erase_if(stuck, [](const StuckReport& r) { return r.reason != StuckReason::Stalled; });
        if (!stuck.empty()) {
            const std::string what = describe_stuck(stuck, mon.components().size());
            throw HealthError(
                fmt::format("fabric: {} termination: no progress while waiting for {} ({} cycles "
                            "in, stall window {} cycles{}): {}",
                            termination_name(static_cast<uint32_t>(mode)), phase,
                            device_.cycles() - begin, mon.stall_cycles(),
                            written ? "" : "; nothing terminated", what),
                std::move(stuck));
        }
    };

    if (mode == pf::Termination::Graceful) {
        // Quiescence: every router running and ready, every channel settled, everything sent
        // taken by the peers, and the counters unchanged since the previous poll.
        std::vector<RouterSnapshot> prev;
        // Each router's heartbeat when any router's counters last changed: a frozen router's
        // counters stand still too, while it may hold packets pushed after it last published, so
        // only a router whose main loop has published since the fabric's last change vouches for
        // its own (protocol/fabric.h kRouterPublishEvery).
        std::vector<uint32_t> beat_at_change;
        const auto quiet = [&](const std::vector<RouterSnapshot>& all) {
            bool ok = true;
            uint64_t sent = 0;
            uint64_t received = 0;
            for (const RouterSnapshot& s : all) {
                if (core_failed(s) || router_status_is_error(s.block.status)) {
                    ok = false;
                    break;
                }
                if (s.control.held != 0) ok = false;
                if (link_cut(s)) continue;
                if (!channels_settled(s)) ok = false;
                sent += s.sent();
                received += s.received();
            }
            ok = ok && sent == received && prev.size() == all.size();
            bool changed = prev.size() != all.size();
            for (size_t i = 0; i < all.size() && !changed; ++i)
                changed = !same_counters(all[i], prev[i]);
            beat_at_change.resize(all.size());
            for (size_t i = 0; i < all.size(); ++i) {
                if (changed) beat_at_change[i] = all[i].block.heartbeat;
                if (all[i].block.heartbeat - beat_at_change[i] <
                    pf::kRouterPublishEvery + pf::kRouterPollEvery)
                    ok = false;
            }
            prev = all;
            return ok;
        };
        const auto broken = [](const RouterSnapshot& s) {
            return core_failed(s) || router_status_is_error(s.block.status);
        };
        bool ok = false;
        last = status();
        if (!std::any_of(last.begin(), last.end(), broken)) {
            ok = advance_until(
                deadline,
                [&](const std::vector<RouterSnapshot>& all) {
                    return std::any_of(all.begin(), all.end(), broken) || quiet(all);
                },
                last, stalled);
        }
        if (std::any_of(last.begin(), last.end(), broken)) {
            fail(ErrorCategory::Fabric,
                 "fabric: cannot terminate gracefully, routers have failed (terminate immediate "
                 "instead): {}",
                 laggards(last, broken));
        }
        if (!ok) {
            uint64_t sent = 0;
            uint64_t received = 0;
            for (const RouterSnapshot& s : last) {
                sent += s.sent();
                received += s.received();
            }
            fail(ErrorCategory::Fabric,
                 "fabric: traffic did not quiesce within {} cycles (sent {}, received {}; nothing "
                 "terminated): {}",
                 timeout_cycles, sent, received,
                 laggards(last, [](const RouterSnapshot& s) { return !channels_settled(s); }));
        }
    }

    // A fabric with a cut link ends immediately once the rest is quiet: the cut routers could
    // never agree with their peers that they drained. It must still end with nothing left in the
    // routers whose links work.
    const bool cut_ends_immediately = std::any_of(last.begin(), last.end(), link_cut);
    if (cut_ends_immediately) mode = pf::Termination::Immediate;
    written_ = mode;
    for (size_t i = 0; i < plan_.routers.size(); ++i) {
        const RouterPlacement& r = plan_.routers[i];
        device_.write32(r.core, r.layout.termination, static_cast<uint32_t>(mode));
    }
    terminated_ = true;
    written = true;
    up_ = false;
    phase = "the routers to exit";
    const bool stopped = advance_until(
        deadline,
        [](const std::vector<RouterSnapshot>& all) {
            return std::all_of(all.begin(), all.end(),
                               [](const RouterSnapshot& s) { return s.core_finished; });
        },
        last, stalled);
    poll_events();  // the routers' last records (Terminated)
    if (!stopped) {
        fail(ErrorCategory::Fabric, "fabric: {} termination: still running after {} cycles: {}",
             termination_name(static_cast<uint32_t>(mode)), timeout_cycles,
             laggards(last, [](const RouterSnapshot& s) { return !s.core_finished; }));
    }
    const auto bad_end = [&](const RouterSnapshot& s) {
        if (s.run.state == CoreRunState::Trapped) return true;
        if (cut_ends_immediately) return !link_cut(s) && s.block.undrained != 0;
        if (mode == pf::Termination::Immediate) return false;
        return s.block.status != static_cast<uint32_t>(pf::RouterStatus::Terminated) ||
               s.block.undrained != 0;
    };
    if (std::any_of(last.begin(), last.end(), bad_end)) {
        std::string undrained;
        for (const RouterSnapshot& s : last) {
            if (s.block.undrained != 0) {
                undrained += fmt::format(", chip {} eth {} left {} undrained", s.chip,
                                         s.eth_channel, s.block.undrained);
            }
        }
        fail(ErrorCategory::Fabric, "fabric: {} termination did not end cleanly{}: {}",
             termination_name(static_cast<uint32_t>(mode)), undrained, laggards(last, bad_end));
    }
    return last;
}

}  // namespace fabric
