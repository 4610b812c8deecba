#include "fabric/mux.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "fabric/error.h"
#include "fabric/fabric_runner.h"

namespace fabric {

namespace pf = protocol::fabric;

pf::WorkerChannel MuxPlacement::channel(uint32_t i) const {
    if (i >= channels()) {
        fail(ErrorCategory::BadInput, "mux {}: no channel {} (it has {})", core.str(), i,
             channels());
    }
    return pf::mux_channel(hal::arch_map(arch), config, i, core.core.x, core.core.y);
}

MuxPlacement plan_mux(const FabricPlan& plan, const SocDescriptor& soc, ChipId chip, FabricDir dir,
                      CoreCoord core, const MuxOptions& o) {
    return plan_mux(plan, soc, plan.router(chip, dir), core, o);  // throws for a router it lacks
}

MuxPlacement plan_mux(const FabricPlan& plan, const SocDescriptor& soc,
                      const RouterPlacement& router, CoreCoord core, const MuxOptions& o) {
    const ChipId chip = router.chip;
    const std::string where = fmt::format("mux on chip {} core {}", chip, core.str());
    const auto type = soc.core_type(core);
    if (!type || (*type != CoreType::Worker && *type != CoreType::Eth)) {
        fail(ErrorCategory::BadInput, "{}: not a Tensix or Ethernet core of a {} chip", where,
             hal::arch_map(soc.arch()).name);
    }
    for (const RouterPlacement& r : plan.routers) {
        if (r.chip == chip && r.core.core == core) {
            fail(ErrorCategory::BadInput, "{}: that core runs the {} router (eth {})", where,
                 router_side_name(r), r.eth_channel);
        }
    }
    const uint32_t n = o.full_channels + o.header_channels;
    if (n == 0 || n > pf::kMuxMaxChannels) {
        fail(ErrorCategory::BadInput, "{}: {} full-size + {} header-only channels; 1..{} in all",
             where, o.full_channels, o.header_channels, pf::kMuxMaxChannels);
    }
    const auto slots_ok = [](uint32_t s) { return s >= 1 && s <= pf::kMuxMaxSlots; };
    if ((o.full_channels != 0 && !slots_ok(o.full_slots)) ||
        (o.header_channels != 0 && !slots_ok(o.header_slots))) {
        fail(ErrorCategory::BadInput,
             "{}: slots per channel must be 1..{} (full-size {}, header-only {})", where,
             pf::kMuxMaxSlots, o.full_slots, o.header_slots);
    }
    const uint32_t payload =
        o.full_payload_bytes != 0 ? o.full_payload_bytes : router.config.payload_bytes;
    if (payload % 16 != 0 || payload > router.config.payload_bytes) {
        fail(ErrorCategory::BadInput,
             "{}: full-size payload {} B must be a multiple of 16 and at most the router's {} B",
             where, payload, router.config.payload_bytes);
    }
    if (o.header_every == 0 || o.teardown_check_every == 0) {
        fail(ErrorCategory::BadInput, "{}: header_every and teardown_check_every must be >= 1",
             where);
    }
    for (uint32_t t : {o.ready_timeout_us, o.drain_timeout_us, o.progress_timeout_us}) {
        if (t == 0 || t > kMaxRouterTimeoutUs) {
            fail(ErrorCategory::BadInput, "{}: timeouts must be 1..{} us", where,
                 kMaxRouterTimeoutUs);
        }
    }
    MuxPlacement m;
    m.arch = plan.arch;
    m.core = {chip, core};
    m.chip = chip;
    m.side = router_side_name(router);
    pf::MuxConfig& c = m.config;
    c.magic = pf::kMuxConfigMagic;
    c.version = pf::kProtocolVersion;
    c.full_channels = o.full_channels;
    c.full_slots = o.full_channels != 0 ? o.full_slots : 0;
    c.full_payload_bytes = o.full_channels != 0 ? payload : 0;
    c.header_channels = o.header_channels;
    c.header_slots = o.header_channels != 0 ? o.header_slots : 0;
    c.header_every = o.header_every;
    c.forward_wait_cycles = o.forward_wait_cycles;
    c.teardown_check_every = o.teardown_check_every;
    c.ready_timeout_us = o.ready_timeout_us;
    c.drain_timeout_us = o.drain_timeout_us;
    c.progress_timeout_us = o.progress_timeout_us;
    c.router_status_addr = router.layout.status;
    c.downstream = pf::worker_channel(hal::arch_map(plan.arch), router.config, router.core.core.x,
                                      router.core.core.y);
    m.layout = pf::mux_layout(hal::arch_map(plan.arch), c);
    if (!m.layout.fits) {
        fail(ErrorCategory::BadInput,
             "{}: the channels need L1 up to {:#x}, above {:#x}; use fewer or smaller slots", where,
             m.layout.end, pf::router_l1_top(hal::arch_map(plan.arch)));
    }
    return m;
}

PlacementRules mux_placement(const MuxPlacement& mux, const SocDescriptor& soc) {
    PlacementRules rules = erisc_placement(hal::arch_map(soc.arch()), soc.eth_l1_size());
    rules.target = fmt::format("fabric mux {}", mux.core.str());
    rules.reserved.push_back({mux.layout.config, mux.layout.end, "mux L1 block"});
    return rules;
}

LaunchMethod start_mux(Device& device, const MuxPlacement& mux, const SocDescriptor& soc,
                       const ElfImage& image) {
    const LaunchTarget target{mux.core, &image, mux_placement(mux, soc)};
    const std::vector<LaunchMethod> methods = load_many(device, std::span(&target, 1));
    std::vector<uint8_t> cfg(sizeof mux.config);
    std::memcpy(cfg.data(), &mux.config, sizeof mux.config);
    device.write(mux.core, mux.layout.config, cfg);
    device.write(mux.core, mux.layout.status, std::vector<uint8_t>(sizeof(pf::MuxStatusBlock), 0));
    device.write32(mux.core, mux.layout.termination, 0);
    start_many(device, std::span(&target, 1), methods);
    return methods[0];
}

pf::MuxStatusBlock read_mux_status(Device& device, const MuxPlacement& mux) {
    std::vector<uint8_t> raw(sizeof(pf::MuxStatusBlock));
    device.read(mux.core, mux.layout.status, raw);
    pf::MuxStatusBlock b;
    std::memcpy(&b, raw.data(), sizeof b);
    return b;
}

void write_mux_termination(Device& device, const MuxPlacement& mux, pf::Termination t) {
    device.write32(mux.core, mux.layout.termination, static_cast<uint32_t>(t));
}

pf::MuxStatusBlock stop_mux(Device& device, const MuxPlacement& mux, uint64_t max_cycles,
                            uint64_t poll_cycles) {
    write_mux_termination(device, mux, pf::Termination::Graceful);
    const auto terminated = static_cast<uint32_t>(pf::RouterStatus::Terminated);
    pf::MuxStatusBlock b = read_mux_status(device, mux);
    for (uint64_t waited = 0; b.status != terminated && waited < max_cycles;
         waited += poll_cycles) {
        device.advance(poll_cycles);
        b = read_mux_status(device, mux);
    }
    if (b.status != terminated) {
        fail(ErrorCategory::Fabric, "{} cycles after a graceful termination: {}", max_cycles,
             describe_mux(mux, b));
    }
    return b;
}

WatchedComponent mux_component(const MuxPlacement& mux, LaunchMethod method) {
    WatchedComponent w;
    w.core = mux.core;
    w.name = fmt::format("mux chip {} core {} (router {})", mux.core.chip, mux.core.core.str(),
                         mux.side);
    w.status_addr = mux.layout.status;
    w.kind = mux_component_kind();
    w.method = method;
    return w;
}

std::string describe_mux(const MuxPlacement& mux, const pf::MuxStatusBlock& b) {
    std::string fwd;
    for (uint32_t i = 0; i < mux.channels(); ++i)
        fwd += fmt::format("{}{}", i ? "/" : "", b.forwarded[i]);
    return fmt::format(
        "mux {} (router {} of chip {}): status {}, stage {}, stuck at {}, detail {}, heartbeat {}, "
        "forwarded {}, "
        "undrained {} (channels {:#x})",
        mux.core.str(), mux.side, mux.chip, router_status_name(b.status),
        router_status_name(b.stage), router_wait_name(b.stuck_at),
        mux_detail_name(b.status, b.detail), b.heartbeat, fwd, b.undrained, b.undrained_channels);
}

}  // namespace fabric
