// A fabric mux as the host places and runs it (firmware/mux, protocol/fabric_mux.h): which core,
// which router ch0 it feeds, its MuxConfig and MuxLayout, what each client opens; and the device
// side: load and start a mux, read its status block, write its termination word.
//
//   plan_mux()   pure: checks the options against the fabric plan and the SoC (Error(BadInput)
//                naming the option), computes config and layout
//   start_mux()  holds the core, loads the image (placed clear of the mux's L1 block), writes the
//                config, zeroes status and termination, releases the core; the mux then waits
//                (bounded) for its router to be ReadyForTraffic and opens the router's ch0
//
// Clients open mux_channel(i) with the same worker adapter they would use on a router, after
// FabricConnection::wait_endpoint_ready (the mux resets its connection blocks at start).
#pragma once

#include <cstdint>
#include <string>

#include "fabric/coord.h"
#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/fabric_plan.h"
#include "fabric/health_monitor.h"
#include "fabric/launch.h"
#include "fabric/soc_descriptor.h"
#include "protocol/fabric_mux.h"

namespace fabric {

struct MuxOptions {
    uint32_t full_channels = 1;
    uint32_t full_slots = 4;
    uint32_t full_payload_bytes = 0;  // 0: the router's payload_bytes
    uint32_t header_channels = 0;
    uint32_t header_slots = 2;
    // Under contention one header-only packet per this many full-size packets: at most
    // 1 / (header_every + 1) of the router's packets go to header-only channels.
    uint32_t header_every = 16;
    // A channel's wait for a router slot per visit (cycles): well under one router packet time
    // (firmware/mux/README.md).
    uint32_t forward_wait_cycles = 128;
    uint32_t teardown_check_every = 4;  // rounds between looks at the connection blocks
    uint32_t ready_timeout_us = 200'000, drain_timeout_us = 20'000, progress_timeout_us = 10'000;
};

struct MuxPlacement {
    hal::Arch arch = hal::Arch::WormholeB0;
    CoreLocation core;  // the mux core
    ChipId chip = 0;    // the router it feeds: its chip and side ("east", "M0D1 E plane 0")
    std::string side = "east";
    protocol::fabric::MuxConfig config{};
    protocol::fabric::MuxLayout layout{};

    uint32_t channels() const { return protocol::fabric::mux_channels(config); }
    // What the client of channel i (0..channels-1: full-size first, then header-only) opens.
    // Error(BadInput) for i out of range.
    protocol::fabric::WorkerChannel channel(uint32_t i) const;
};

MuxPlacement plan_mux(const FabricPlan& plan, const SocDescriptor& soc, ChipId chip, FabricDir dir,
                      CoreCoord core, const MuxOptions& options);
// The same for any router of the plan (a 2D plan's: MeshPlan::fabric and MeshPlan::router).
MuxPlacement plan_mux(const FabricPlan& plan, const SocDescriptor& soc,
                      const RouterPlacement& router, CoreCoord core, const MuxOptions& options);

// Where the mux image may go on its core: the application window, clear of the mux's L1 block.
PlacementRules mux_placement(const MuxPlacement& mux, const SocDescriptor& soc);

// Load, configure and release the mux. Error(BadElf) if the image does not fit beside the block.
LaunchMethod start_mux(Device& device, const MuxPlacement& mux, const SocDescriptor& soc,
                       const ElfImage& image);

protocol::fabric::MuxStatusBlock read_mux_status(Device& device, const MuxPlacement& mux);
void write_mux_termination(Device& device, const MuxPlacement& mux,
                           protocol::fabric::Termination t);

// Terminate the mux gracefully (its clients have closed: it drains and exits) and advance the
// device, polling every `poll_cycles`, until it says Terminated; at most `max_cycles`. Its final
// status block; Error(Fabric) with describe_mux if it does not end in time.
protocol::fabric::MuxStatusBlock stop_mux(Device& device, const MuxPlacement& mux,
                                          uint64_t max_cycles, uint64_t poll_cycles = 1'000);

// The mux as the health monitor watches it (FabricRunner::watch): "mux chip 0 core 1-1 (router
// east)", its status block, mux_component_kind().
WatchedComponent mux_component(const MuxPlacement& mux,
                               LaunchMethod method = LaunchMethod::ResetPc);

// "mux chip 0 core 1-1 (router east of chip 0): status terminated, stage draining, stuck at
// none, detail 0x00000000, heartbeat 123, forwarded 24/24, undrained 0"
std::string describe_mux(const MuxPlacement& mux, const protocol::fabric::MuxStatusBlock& b);

}  // namespace fabric
