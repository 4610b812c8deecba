// The fabric as a picture (fabric_page.h).
#include "fabric/fabric_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace fabric {

namespace pf = protocol::fabric;

namespace {

constexpr double kMargin = 60;
constexpr double kMeshGap = 80;      // between two meshes side by side
constexpr double kPlaneOffset = 12;  // px between the lines of two planes' links
constexpr double kLegendHeight = 70;
constexpr double kMinWidth = 3, kMaxWidth = 12;
constexpr double kMinPageWidth = 560;  // the legend's

bool running(const RouterSnapshot& s) {
    return !s.core_finished &&
           (s.block.status == static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic) ||
            s.block.status == static_cast<uint32_t>(pf::RouterStatus::Draining));
}

const char* state_color(const std::string& state) {
    if (state == "up") return "#2e7d32";
    if (state == "terminated") return "#757575";
    return "#c62828";
}

std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

// Each mesh's chips on its grid, the meshes left to right.
std::map<ChipId, PageChip> place_chips(const MeshPlan& plan, double& width, double& height) {
    std::map<ChipId, PageChip> chips;
    double left = kMargin;
    height = 0;
    for (const MeshSpec& m : plan.tables.graph().meshes()) {
        for (uint32_t d = 0; d < m.device_count(); ++d) {
            const MeshNode node{m.id, d};
            const PagePoint at{left + kPageChipSpacing / 2 + m.col_of(d) * kPageChipSpacing,
                               kMargin + kPageChipSpacing / 2 + m.row_of(d) * kPageChipSpacing};
            chips[plan.chip_of(node)] = {plan.chip_of(node), node, at, true};
        }
        left += m.cols * kPageChipSpacing + kMeshGap;
        height = std::max(height, kMargin + m.rows * kPageChipSpacing);
    }
    width = std::max(left - kMeshGap + kMargin, kMinPageWidth);
    height += kLegendHeight;
    return chips;
}

// The line of a link between its chips' centers, moved sideways by its plane.
void place_line(PageLink& l, PagePoint a, PagePoint b, double offset) {
    const double dx = b.x - a.x, dy = b.y - a.y;
    const double len = std::max(1.0, std::hypot(dx, dy));
    const double nx = -dy / len * offset, ny = dx / len * offset;
    l.from = {a.x + nx, a.y + ny};
    l.to = {b.x + nx, b.y + ny};
}

}  // namespace

std::vector<RouterPair> router_pairs(const FabricPlan& plan) {
    std::vector<RouterPair> out;
    for (size_t i = 0; i < plan.routers.size(); ++i) {
        const auto& r = plan.routers[i];
        for (size_t j = i + 1; j < plan.routers.size(); ++j) {
            const auto& p = plan.routers[j];
            if (p.chip == r.config.peer_chip_id && p.eth_channel == r.config.peer_eth_channel)
                out.push_back({i, j});
        }
    }
    return out;
}

std::string link_state(const RouterSnapshot& a, const RouterSnapshot& b) {
    const bool paired = a.block.peer_chip == b.chip && a.block.peer_channel == b.eth_channel &&
                        b.block.peer_chip == a.chip && b.block.peer_channel == a.eth_channel;
    if (running(a) && running(b) && paired) return "up";
    const auto terminated = static_cast<uint32_t>(pf::RouterStatus::Terminated);
    if (a.block.status == terminated && b.block.status == terminated) return "terminated";
    return "down";
}

PageLayout page_layout(const MeshPlan& plan, const TelemetrySample& sample) {
    PageLayout page;
    std::map<ChipId, PageChip> chips = place_chips(plan, page.width, page.height);
    for (size_t i = 0; i < sample.routers.size(); ++i) {
        if (!running(sample.routers[i])) chips[plan.fabric.routers[i].chip].healthy = false;
    }
    for (auto& [id, c] : chips) page.chips.push_back(c);
    uint64_t most = 0;
    for (const RouterPair& p : router_pairs(plan.fabric)) {
        const RouterSnapshot &a = sample.routers[p.a], &b = sample.routers[p.b];
        PageLink l;
        l.ends = p;
        l.state = link_state(a, b);
        if (sample.link_up[p.a] == false || sample.link_up[p.b] == false) l.state = "down";
        l.color = state_color(l.state);
        l.packets = a.sent() + b.sent();
        const auto& planes = plan.planes;
        const auto k =
            std::find(planes.begin(), planes.end(), plan.fabric.routers[p.a].mesh->plane) -
            planes.begin();
        place_line(l, chips[a.chip].center, chips[b.chip].center,
                   (double(k) - double(planes.size() - 1) / 2) * kPlaneOffset);
        most = std::max(most, l.packets);
        page.links.push_back(l);
    }
    for (PageLink& l : page.links) {
        l.width = kMinWidth + (most == 0 ? 0 : (kMaxWidth - kMinWidth) * double(l.packets) / most);
    }
    return page;
}

namespace {

std::string svg_of(const MeshPlan& plan, const PageLayout& page) {
    std::string s = fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}">)"
        "\n"
        R"(<rect width="{0}" height="{1}" fill="#ffffff"/>)"
        "\n",
        page.width, page.height);
    for (const PageLink& l : page.links) {
        const std::string name =
            fmt::format("{} <-> {}", plan.fabric.routers[l.ends.a].mesh->port().str(),
                        plan.fabric.routers[l.ends.b].mesh->port().str());
        s += fmt::format(
            R"(<line class="link {}" data-link="{}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" )"
            R"(stroke="{}" stroke-width="{:.1f}"><title>{}: {}, {} packets</title></line>)"
            "\n",
            l.state, escape(name), l.from.x, l.from.y, l.to.x, l.to.y, l.color, l.width,
            escape(name), l.state, l.packets);
    }
    for (const PageChip& c : page.chips) {
        const double h = kPageChipSize / 2;
        s += fmt::format(
            R"(<g class="chip{}"><rect x="{:.1f}" y="{:.1f}" width="{}" height="{}" rx="6" )"
            R"(fill="#e3f2fd" stroke="{}" stroke-width="{}"/>)"
            R"(<text x="{:.1f}" y="{:.1f}" font-family="sans-serif" font-size="14" )"
            R"(text-anchor="middle">{}</text>)"
            R"(<text x="{:.1f}" y="{:.1f}" font-family="sans-serif" font-size="11" )"
            R"(text-anchor="middle">chip {}</text></g>)"
            "\n",
            c.healthy ? "" : " unhealthy", c.center.x - h, c.center.y - h, kPageChipSize,
            kPageChipSize, c.healthy ? "#1565c0" : "#c62828", c.healthy ? 2 : 5, c.center.x,
            c.center.y - 2, c.node.str(), c.center.x, c.center.y + 16, c.chip);
    }
    const double y = page.height - kLegendHeight / 2;
    s += fmt::format(
        R"(<g class="legend" font-family="sans-serif" font-size="13">)"
        R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#2e7d32" stroke-width="4"/>)"
        R"(<text x="{3}" y="{4}">up</text>)"
        R"(<line x1="{5}" y1="{1}" x2="{6}" y2="{1}" stroke="#c62828" stroke-width="4"/>)"
        R"(<text x="{7}" y="{4}">down</text>)"
        R"(<line x1="{8}" y1="{1}" x2="{9}" y2="{1}" stroke="#757575" stroke-width="4"/>)"
        R"(<text x="{10}" y="{4}">terminated</text>)"
        R"(<text x="{0}" y="{11}">thicker: more packets; a red chip: a router that is not )"
        R"(running</text></g>)"
        "\n</svg>\n",
        kMargin, y, kMargin + 30, kMargin + 36, y + 4, kMargin + 70, kMargin + 100, kMargin + 106,
        kMargin + 160, kMargin + 190, kMargin + 196, y + 24);
    return s;
}

nlohmann::json data_of(const MeshPlan& plan, const TelemetrySample& sample,
                       const PageLayout& page) {
    nlohmann::json chips = nlohmann::json::array(), links = nlohmann::json::array();
    for (const PageChip& c : page.chips) {
        chips.push_back({{"chip", c.chip}, {"node", c.node.str()}, {"healthy", c.healthy}});
    }
    for (const PageLink& l : page.links) {
        links.push_back({{"a", plan.fabric.routers[l.ends.a].mesh->port().str()},
                         {"b", plan.fabric.routers[l.ends.b].mesh->port().str()},
                         {"state", l.state},
                         {"packets", l.packets}});
    }
    return {{"device_cycles", sample.device_cycles}, {"chips", chips}, {"links", links}};
}

}  // namespace

std::string fabric_page_html(const MeshPlan& plan, const TelemetrySample& sample,
                             const std::string& title) {
    const PageLayout page = page_layout(plan, sample);
    std::string data = data_of(plan, sample, page).dump();
    // JSON inside <script>: a "</" would end the element.
    for (size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 2))
        data.replace(at, 2, "<\\/");
    return fmt::format(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{0}</title>\n"
        "<style>body{{margin:0;background:#ffffff}}</style></head>\n<body>\n{1}"
        "<script type=\"application/json\" id=\"fabric-data\">{2}</script>\n</body></html>\n",
        escape(title), svg_of(plan, page), data);
}

}  // namespace fabric
