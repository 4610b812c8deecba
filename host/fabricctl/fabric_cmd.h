// `fabricctl fabric up` and `fabricctl fabric run`: the 1D fabric in the simulator.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "fabric/health_monitor.h"

namespace fabricctl {

struct FabricArgs {
    std::string cluster;
    std::string soc;
    std::string topology = "line";
    std::string chips;  // "0,1,2,3"; empty: 0..n-1
    uint32_t link = 0;
    uint32_t size = 1024;
    uint32_t packets = 16;
    std::string pattern = "neighbour";
    std::string router_elf;
    std::string worker_elf;
    std::string base_fw;
    bool no_base_fw = false;
    uint64_t max_cycles = 0;    // 0: kDefaultFabricMaxCycles
    uint64_t stall_cycles = 0;  // 0: fabric::kDefaultStallCycles
    uint64_t watch = 0;         // `up`: let the fabric run this long under the health monitor
    std::string stall_router;   // sim fault: "CHIP:ETH@CYCLES", freeze that router's core
    bool json = false;
    bool quiet = false;
};

struct FabricCommands {
    CLI::App* up = nullptr;
    CLI::App* run = nullptr;
};

// Adds `fabric up` and `fabric run` to `app`; the options land in `args`.
FabricCommands add_fabric_commands(CLI::App& app, FabricArgs& args);

// Run the parsed command (traffic: `run`, else `up`). Returns the exit code; throws fabric::Error
// (fabric::HealthError when a component got stuck).
int fabric_main(const FabricArgs& args, bool traffic);

// One stuck component as JSON (the "stuck" array of an error document).
nlohmann::json stuck_json(const fabric::StuckReport& r);

}  // namespace fabricctl
