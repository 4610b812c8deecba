// The fabric as a picture (fabric/fabric_page.h, `fabricctl mesh show`), looked at in a real
// browser: headless Chromium renders the page to a PNG and the pixels at each link's midpoint and
// on each chip's box must have the colour the data gives them: every link of a t3k brought up in
// the model green, and on a page drawn from a sample with a link down and a router stopped, that
// link red and that chip's outline red.
#include "fabric/fabric_page.h"

#include <png.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "descriptors.h"
#include "fabric/mesh_plan.h"
#include "run_process.h"

namespace t = fabric::test;
namespace pf = protocol::fabric;

namespace {

const std::string kFabricctl = FABRICCTL;
const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;
const std::string kTmp = FABRIC_TEST_TMP_DIR;
const std::string kChromium = "/usr/bin/chromium";

struct Rgb {
    uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb&) const = default;
};
std::ostream& operator<<(std::ostream& o, const Rgb& c) {
    return o << "rgb(" << int(c.r) << "," << int(c.g) << "," << int(c.b) << ")";
}

// A decoded PNG, 8-bit RGB(A).
struct Image {
    uint32_t width = 0, height = 0;
    std::vector<Rgb> pixels;
    Rgb at(double x, double y) const {
        return pixels.at(size_t(uint32_t(y)) * width + uint32_t(x));
    }
};

Image read_png(const std::string& path) {
    png_image img{};
    img.version = PNG_IMAGE_VERSION;
    REQUIRE(png_image_begin_read_from_file(&img, path.c_str()) != 0);
    img.format = PNG_FORMAT_RGB;
    std::vector<uint8_t> buf(PNG_IMAGE_SIZE(img));
    REQUIRE(png_image_finish_read(&img, nullptr, buf.data(), 0, nullptr) != 0);
    Image out{img.width, img.height, {}};
    for (size_t i = 0; i + 2 < buf.size(); i += 3)
        out.pixels.push_back({buf[i], buf[i + 1], buf[i + 2]});
    return out;
}

// Chromium's screenshot of `html` at its layout size.
Image render(const std::string& html_path, const fabric::PageLayout& page) {
    REQUIRE(std::filesystem::exists(kChromium));  // scripts/setup.sh installs it
    const std::string png = html_path + ".png";
    std::filesystem::remove(png);
    const auto r = t::run_process(kChromium,
                                  {"--headless", "--no-sandbox", "--disable-gpu",
                                   "--hide-scrollbars", "--force-device-scale-factor=1",
                                   "--window-size=" + std::to_string(int(page.width)) + "," +
                                       std::to_string(int(page.height)),
                                   "--screenshot=" + png, "file://" + html_path},
                                  kTmp);
    INFO(r.err);
    REQUIRE(std::filesystem::exists(png));
    return read_png(png);
}

double half_box() {
    return fabric::kPageChipSize / 2;
}

Rgb hex(const std::string& h) {
    const auto v = std::stoul(h.substr(1), nullptr, 16);
    return {uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

fabric::MeshPlan t3k_two_planes() {
    fabric::MeshFabricOptions o;
    o.planes = {0, 1};
    return fabric::plan_mesh(t::mesh_graph("t3k_mesh_graph.yaml"), t::cluster("t3k_cluster.yaml"),
                             t::wh_soc(), o);
}

// Every router running and paired with its planned peer, every link word up.
fabric::TelemetrySample all_up(const fabric::MeshPlan& plan) {
    fabric::TelemetrySample s;
    for (const auto& r : plan.fabric.routers) {
        fabric::RouterSnapshot snap;
        snap.chip = r.chip;
        snap.eth_channel = r.eth_channel;
        snap.mesh = r.mesh->port();
        snap.block.status = static_cast<uint32_t>(pf::RouterStatus::ReadyForTraffic);
        snap.block.peer_chip = r.config.peer_chip_id;
        snap.block.peer_channel = r.config.peer_eth_channel;
        s.routers.push_back(snap);
        s.link_up.push_back(true);
    }
    return s;
}

}  // namespace

TEST_CASE("mesh show: Chromium draws every link of a t3k the model brought up green",
          "[page][cli]") {
    const std::string html = t::unique_path(kTmp, "t3k") + ".html";
    const auto r =
        t::run_process(kFabricctl,
                       {"mesh", "show", "--cluster", kSocDir + "/t3k_cluster.yaml", "--mesh-graph",
                        kSocDir + "/t3k_mesh_graph.yaml", "--planes", "0,1", "-o", html},
                       kTmp);
    REQUIRE(r.code == 0);
    const auto plan = t3k_two_planes();
    const fabric::PageLayout page = fabric::page_layout(plan, all_up(plan));  // where things are
    REQUIRE(page.links.size() == 20);
    const Image img = render(html, page);
    CHECK(img.width == uint32_t(page.width));
    const Rgb green = hex("#2e7d32");
    for (const auto& l : page.links) {
        INFO(plan.fabric.routers[l.ends.a].mesh->port().str());
        CHECK(img.at((l.from.x + l.to.x) / 2, (l.from.y + l.to.y) / 2) == green);
    }
    for (const auto& c : page.chips) {
        INFO(c.node.str());
        CHECK(img.at(c.center.x - 26, c.center.y - 26) == hex("#e3f2fd"));  // inside its box
        CHECK(img.at(c.center.x - half_box(), c.center.y) == hex("#1565c0"));
    }
    CHECK(img.at(4, 4) == hex("#ffffff"));
}

TEST_CASE("mesh show: a link down is drawn red, a chip with a stopped router outlined red",
          "[page]") {
    const auto plan = t3k_two_planes();
    fabric::TelemetrySample s = all_up(plan);
    const auto pairs = fabric::router_pairs(plan.fabric);
    const auto down = pairs.at(3);
    s.link_up[down.a] = false;  // its status word says down
    const size_t stopped = pairs.at(7).b;
    s.routers[stopped].block.status = static_cast<uint32_t>(pf::RouterStatus::Timeout);
    s.routers[0].block.sent[0] = 500;  // the busiest link is the thickest
    const fabric::PageLayout page = fabric::page_layout(plan, s);
    const std::string html = t::unique_path(kTmp, "faulty") + ".html";
    std::ofstream(html) << fabric::fabric_page_html(plan, s, "faulty");
    const Image img = render(html, page);
    const Rgb red = hex("#c62828"), green = hex("#2e7d32");
    for (const auto& l : page.links) {
        const bool is_down = (l.ends.a == down.a && l.ends.b == down.b) || l.ends.a == stopped ||
                             l.ends.b == stopped;
        INFO(plan.fabric.routers[l.ends.a].mesh->port().str());
        CHECK(l.state == (is_down ? "down" : "up"));
        CHECK(img.at((l.from.x + l.to.x) / 2, (l.from.y + l.to.y) / 2) == (is_down ? red : green));
        CHECK(l.width == (l.ends.a == 0 ? 12.0 : 3.0));
    }
    for (const auto& c : page.chips) {
        INFO(c.node.str());
        const bool sick = c.chip == plan.fabric.routers[stopped].chip;
        CHECK(c.healthy == !sick);
        CHECK(img.at(c.center.x - half_box(), c.center.y) == (sick ? red : hex("#1565c0")));
    }
}

TEST_CASE("mesh run --page: the fabric drawn after its traffic, as the run counted it",
          "[page][cli]") {
    const std::string html = t::unique_path(kTmp, "run") + ".html";
    const auto r = t::run_process(kFabricctl,
                                  {"mesh", "run", "--cluster", kSocDir + "/t3k_cluster.yaml",
                                   "--mesh-graph", kSocDir + "/t3k_mesh_graph.yaml", "--packets",
                                   "4", "--bytes", "256", "--page", html, "--json"},
                                  kTmp);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Matchers::Contains("wrote the fabric's page to " + html));
    const std::string page = t::slurp(html);
    // The data the page was drawn from: every link up, the packets both ends sent.
    const std::string open = R"(<script type="application/json" id="fabric-data">)";
    const size_t at = page.find(open) + open.size();
    const auto data = nlohmann::json::parse(page.substr(at, page.find("</script>", at) - at));
    REQUIRE(data["links"].size() == 10);
    uint64_t drawn = 0, most = 0;
    std::string hottest;
    for (const auto& l : data["links"]) {
        CHECK(l["state"] == "up");
        drawn += l["packets"].get<uint64_t>();
        if (l["packets"].get<uint64_t>() > most) {
            most = l["packets"];
            hottest = l["a"].get<std::string>() + " &lt;-&gt; " + l["b"].get<std::string>();
        }
    }
    // The run's own report counted the same packets sent.
    uint64_t counted = 0;
    const auto report = nlohmann::json::parse(r.out);
    for (const auto& router : report["routers"]) counted += router["packets_sent"].get<uint64_t>();
    CHECK(drawn == counted);
    CHECK(drawn > 0);
    const size_t hot = page.find("data-link=\"" + hottest + "\"");
    REQUIRE(hot != std::string::npos);
    CHECK(page.substr(hot, 200).find(R"(stroke-width="12.0")") != std::string::npos);
    CHECK(page.find("class=\"link down\"") == std::string::npos);
}
