// Every router's counters and its link's state in the Prometheus text exposition format (issue 20,
// telemetry; `fabricctl mesh telemetry`). Counters are the routers' own (RouterStatusBlock),
// cumulative since bring-up, so a scraper takes rates itself (rate() in PromQL); the link state is
// the Ethernet link status word the base firmware keeps (hal ArchMap::link_status).
//
// Names carry the `tt_fabric_` prefix of tt-metal's fabric telemetry; every series carries chip,
// channel, peer_chip, peer_channel and, on a 2D fabric, port ("M0D5 E plane 0").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabric/device.h"
#include "fabric/fabric_runner.h"

namespace fabric {

struct TelemetrySample {
    std::vector<RouterSnapshot> routers;       // in plan order
    std::vector<std::optional<bool>> link_up;  // per router; nullopt: the word reads neither value
    uint64_t device_cycles = 0;
};

// Read every router's status block and link status word now.
TelemetrySample read_telemetry(FabricRunner& runner);

// The sample as one Prometheus text document: per metric its HELP and TYPE lines, then one series
// per router. Only what the routers count is reported (packets, not estimated bytes).
std::string prometheus_text(const TelemetrySample& sample);

}  // namespace fabric
