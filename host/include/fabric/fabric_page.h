// A picture of a running 2D fabric (issue 20, `fabricctl mesh show`): one self-contained HTML page
// with an SVG of every mesh's chips at their mesh positions and every link of every routing plane
// between them, each link coloured by its state (up, down, terminated) and drawn thicker the more
// packets it carried, chips whose routers are not all running marked. The page also carries the
// data it was drawn from as JSON (a <script type="application/json" id="fabric-data">).
#pragma once

#include <string>
#include <vector>

#include "fabric/mesh_plan.h"
#include "fabric/telemetry.h"

namespace fabric {

// The two routers (plan indices) of each link, each link once, in plan order of its first end.
struct RouterPair {
    size_t a = 0;
    size_t b = 0;
};
std::vector<RouterPair> router_pairs(const FabricPlan& plan);

// "up": both ends running and each learned the other in the handshake; "terminated": both ends
// are; else "down".
std::string link_state(const RouterSnapshot& a, const RouterSnapshot& b);

// Where everything is drawn, in CSS pixels of the page (the SVG sits at its top left).
struct PagePoint {
    double x = 0, y = 0;
};
struct PageChip {
    ChipId chip = 0;
    MeshNode node;
    PagePoint center;
    bool healthy = true;  // every router of the chip is ready for traffic
};
struct PageLink {
    RouterPair ends;
    std::string state;  // link_state()
    std::string color;  // "#2e7d32" up, "#c62828" down, "#757575" terminated
    PagePoint from, to;
    double width = 0;      // 3 .. 12 px with the packets the link carried
    uint64_t packets = 0;  // sent both ways
};
struct PageLayout {
    double width = 0, height = 0;
    std::vector<PageChip> chips;
    std::vector<PageLink> links;
};

inline constexpr double kPageChipSpacing = 160;  // px between neighbouring chips' centers
inline constexpr double kPageChipSize = 64;      // px, the side of a chip's box

PageLayout page_layout(const MeshPlan& plan, const TelemetrySample& sample);
std::string fabric_page_html(const MeshPlan& plan, const TelemetrySample& sample,
                             const std::string& title);

}  // namespace fabric
