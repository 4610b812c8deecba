// The cluster descriptors of soc_descriptors/clusters/ (written by
// scripts/fixtures/gen_clusters.py, shaped like published tt-umd files): each loads through
// ClusterDescriptor::load_file with exact chip, link and MMIO counts; the mesh its header documents
// (chip id at each position) has the documented links per neighbour pair, which also shows that
// chip ids are not mesh positions; a few connections are checked end to end (crossed channel
// numbers, gateways, wrap-around cables); the faulty variants have exactly their fault, and the two
// malformed files are refused.
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "descriptors.h"
#include "expect_error.h"
#include "fabric/cluster_descriptor.h"

using fabric::ChipId;
using fabric::ClusterDescriptor;
using fabric::ErrorCategory;
using fabric::EthPortRef;
using fabric::test::expect_error;

namespace {

using Grid = std::vector<std::vector<ChipId>>;
using MmioList = std::vector<std::pair<ChipId, uint32_t>>;

const ClusterDescriptor& fixture(const std::string& name) {
    return fabric::test::cluster("clusters/" + name + "_cluster.yaml");
}

uint32_t links_between(const ClusterDescriptor& c, ChipId a, ChipId b) {
    uint32_t n = 0;
    for (const auto& conn : c.connections()) {
        if ((conn.a.chip == a && conn.b.chip == b) || (conn.a.chip == b && conn.b.chip == a)) ++n;
    }
    return n;
}

// A mesh as a fixture's header draws it, and the links each neighbour pair must have.
struct Mesh {
    Grid grid;
    uint32_t along_row = 0;     // between horizontal neighbours
    uint32_t down_column = 0;   // between vertical neighbours
    bool rows_wrap = false;     // the last column is cabled back to the first
    bool columns_wrap = false;  // the last row is cabled back to the first
};

void check_mesh(const ClusterDescriptor& c, const Mesh& m) {
    const size_t rows = m.grid.size();
    const size_t cols = m.grid[0].size();
    for (size_t r = 0; r < rows; ++r) {
        for (size_t col = 0; col < cols; ++col) {
            const ChipId here = m.grid[r][col];
            if (col + 1 < cols || (m.rows_wrap && cols > 2)) {
                const ChipId east = m.grid[r][(col + 1) % cols];
                INFO("chips " << here << " and " << east << " (row " << r << ")");
                CHECK(links_between(c, here, east) == m.along_row);
            }
            if (r + 1 < rows || (m.columns_wrap && rows > 2)) {
                const ChipId south = m.grid[(r + 1) % rows][col];
                INFO("chips " << here << " and " << south << " (column " << col << ")");
                CHECK(links_between(c, here, south) == m.down_column);
            }
        }
    }
}

// The two ends of a link, each the other's peer.
void check_link(const ClusterDescriptor& c, EthPortRef a, EthPortRef b) {
    INFO(a.str() << " <-> " << b.str());
    CHECK(c.peer(a) == std::optional<EthPortRef>(b));
    CHECK(c.peer(b) == std::optional<EthPortRef>(a));
}

EthPortRef port(ChipId chip, uint32_t chan) {
    return EthPortRef{chip, chan};
}

void check_counts(const ClusterDescriptor& c, hal::Arch arch, uint32_t chips, size_t links) {
    CHECK(c.arch() == arch);
    CHECK(c.chip_count() == chips);
    CHECK(c.connections().size() == links);
}

void check_coord(const ClusterDescriptor& c, ChipId chip, fabric::EthCoord want) {
    const auto got = c.eth_coord(chip);
    REQUIRE(got.has_value());
    CHECK(std::vector<uint32_t>{got->x, got->y, got->rack, got->shelf} ==
          std::vector<uint32_t>{want.x, want.y, want.rack, want.shelf});
}

// Every chip of a Galaxy is a PCIe device; /dev/tenstorrent numbers them tray by tray.
void check_all_mmio(const ClusterDescriptor& c) {
    CHECK(c.mmio_chips().size() == c.chip_count());
    for (ChipId chip = 0; chip < c.chip_count(); ++chip) CHECK(c.is_mmio(chip));
}

// 6U Galaxy, 8 x 4: chip ids as its header draws them.
const Grid kGalaxy6u = {{1, 17, 19, 3},   {5, 21, 23, 7},  {9, 25, 27, 11}, {13, 29, 31, 15},
                        {12, 28, 30, 14}, {8, 24, 26, 10}, {4, 20, 22, 6},  {0, 16, 18, 2}};
const Grid kGalaxy6uTorus = {{24, 28, 20, 16}, {25, 29, 21, 17}, {26, 30, 22, 18}, {27, 31, 23, 19},
                             {3, 7, 15, 11},   {2, 6, 14, 10},   {1, 5, 13, 9},    {0, 4, 12, 8}};
const Grid kBhGalaxy = {{0, 4, 12, 8},    {1, 5, 13, 9},    {2, 6, 14, 10},   {3, 7, 15, 11},
                        {27, 31, 23, 19}, {26, 30, 22, 18}, {25, 29, 21, 17}, {24, 28, 20, 16}};

}  // namespace

TEST_CASE("cluster fixtures: single chips load with no links", "[cluster_fixtures]") {
    const auto& n150 = fixture("n150");
    check_counts(n150, hal::Arch::WormholeB0, 1, 0);
    CHECK(n150.mmio_chips() == MmioList{{0, 0}});
    check_coord(n150, 0, {0, 0, 0, 0});

    const auto& p150 = fixture("p150");
    check_counts(p150, hal::Arch::Blackhole, 1, 0);
    CHECK(p150.mmio_chips() == MmioList{{0, 0}});
    CHECK_FALSE(p150.eth_coord(0).has_value());  // Blackhole writes `chips: {}`
}

TEST_CASE("cluster fixtures: n300 and P300 boards", "[cluster_fixtures]") {
    const auto& n300 = fixture("n300");
    check_counts(n300, hal::Arch::WormholeB0, 2, 2);
    CHECK(n300.mmio_chips() == MmioList{{0, 0}});
    CHECK_FALSE(n300.is_mmio(1));
    check_link(n300, port(0, 8), port(1, 0));  // the board trace: left 8, 9 <-> right 0, 1
    check_link(n300, port(0, 9), port(1, 1));
    check_coord(n300, 0, {1, 0, 0, 0});  // the remote chip sits west of the PCIe chip
    check_coord(n300, 1, {0, 0, 0, 0});

    const auto& p300 = fixture("p300");
    check_counts(p300, hal::Arch::Blackhole, 2, 2);
    CHECK(p300.mmio_chips() == MmioList{{0, 1}, {1, 0}});
    check_link(p300, port(0, 2), port(1, 9));  // crossed channel numbers
    check_link(p300, port(0, 3), port(1, 8));
}

TEST_CASE("cluster fixtures: T3000 is a 2 x 4 mesh of four n300s", "[cluster_fixtures]") {
    const auto& t3k = fixture("t3k");
    check_counts(t3k, hal::Arch::WormholeB0, 8, 20);
    CHECK(t3k.mmio_chips() == MmioList{{0, 2}, {1, 0}, {2, 3}, {3, 1}});
    for (ChipId remote = 4; remote < 8; ++remote) CHECK_FALSE(t3k.is_mmio(remote));
    check_mesh(t3k, {{{5, 1, 0, 4}, {7, 3, 2, 6}}, 2, 2});
    check_link(t3k, port(1, 8), port(5, 0));    // n300 trace
    check_link(t3k, port(1, 6), port(0, 6));    // QSFP-DD between the PCIe chips of row 0
    check_link(t3k, port(3, 0), port(2, 0));    // and of row 1
    check_link(t3k, port(1, 14), port(3, 14));  // WARP100 bridge, left chips
    check_link(t3k, port(5, 6), port(7, 6));    // WARP100 bridge, right chips
    check_coord(t3k, 0, {2, 0, 0, 0});
    check_coord(t3k, 7, {0, 1, 0, 0});
}

TEST_CASE("cluster fixtures: two n300s as a 2 x 2 mesh", "[cluster_fixtures]") {
    const auto& c = fixture("n300_2x2");
    check_counts(c, hal::Arch::WormholeB0, 4, 8);
    CHECK(c.mmio_chips() == MmioList{{0, 1}, {1, 0}});
    check_mesh(c, {{{1, 3}, {0, 2}}, 2, 2});
    check_link(c, port(1, 14), port(0, 14));
    check_link(c, port(3, 7), port(2, 7));
}

TEST_CASE("cluster fixtures: 6U Galaxy mesh and torus", "[cluster_fixtures]") {
    const auto& mesh = fixture("galaxy_6u");
    check_counts(mesh, hal::Arch::WormholeB0, 32, 208);
    check_all_mmio(mesh);
    CHECK(mesh.mmio_chips()[0] == std::pair<ChipId, uint32_t>{0, 16});  // tray 3 ASIC 1
    CHECK_FALSE(mesh.eth_coord(0).has_value());                         // `chips: {}` on a 6U
    check_mesh(mesh, {kGalaxy6u, 4, 4});
    check_link(mesh, port(1, 12), port(17, 0));  // tray 1: ASIC 1 ch 12-15 <-> ASIC 5 ch 0-3
    check_link(mesh, port(13, 8), port(12, 8));  // linking board 3: tray 1 <-> tray 3, ASIC 4
    CHECK(mesh.connected_channels(1) == std::vector<uint32_t>{8, 9, 10, 11, 12, 13, 14, 15});

    const auto& torus = fixture("galaxy_6u_torus");
    check_counts(torus, hal::Arch::WormholeB0, 32, 256);
    check_all_mmio(torus);
    check_mesh(torus, {kGalaxy6uTorus, 4, 4, true, true});
    check_link(torus, port(24, 0), port(16, 0));  // row wrap: tray 1 <-> 2 QSFP-DD port 3
    check_link(torus, port(24, 4), port(0, 4));   // column wrap: tray 1 <-> 3 QSFP-DD port 2
    CHECK(torus.connected_channels(24).size() == 16);

    const auto& y_torus = fixture("galaxy_6u_y_torus");  // columns closed, rows not
    check_counts(y_torus, hal::Arch::WormholeB0, 32, 224);
    check_mesh(y_torus, {kGalaxy6uTorus, 4, 4, false, true});
    CHECK(links_between(y_torus, 24, 16) == 0);
}

TEST_CASE("cluster fixtures: TG, four n150 gateways on a 4U Galaxy", "[cluster_fixtures]") {
    const auto& tg = fixture("tg");
    check_counts(tg, hal::Arch::WormholeB0, 36, 216);
    CHECK(tg.mmio_chips() == MmioList{{0, 1}, {1, 3}, {2, 0}, {3, 2}});
    for (ChipId galaxy = 4; galaxy < 36; ++galaxy) CHECK_FALSE(tg.is_mmio(galaxy));
    const Grid galaxy = {{12, 17, 11, 19, 10, 35, 21, 31},
                         {6, 23, 28, 9, 18, 29, 34, 14},
                         {13, 32, 20, 24, 7, 5, 15, 30},
                         {16, 33, 8, 25, 27, 22, 26, 4}};
    check_mesh(tg, {galaxy, 4, 4});
    // Each gateway: one link to each of two neighbouring chips of the Galaxy's north edge.
    const std::vector<std::pair<ChipId, std::pair<ChipId, ChipId>>> gateways = {
        {3, {17, 12}}, {2, {19, 11}}, {1, {35, 10}}, {0, {31, 21}}};
    for (const auto& [gw, galaxy_chips] : gateways) {
        check_link(tg, port(gw, 6), port(galaxy_chips.first, 12));
        check_link(tg, port(gw, 7), port(galaxy_chips.second, 12));
        CHECK(tg.connected_channels(gw) == std::vector<uint32_t>{6, 7});
    }
    check_coord(tg, 3, {0, 0, 0, 0});   // gateway ETH y = 0, shelf 0
    check_coord(tg, 16, {0, 0, 0, 1});  // Galaxy chips on shelf 1
}

TEST_CASE("cluster fixtures: p150 x4 ring, x8 mesh and x8 cube", "[cluster_fixtures]") {
    const auto& x4 = fixture("p150_x4");
    check_counts(x4, hal::Arch::Blackhole, 4, 16);
    CHECK(x4.mmio_chips() == MmioList{{0, 1}, {1, 2}, {2, 3}, {3, 0}});
    check_mesh(x4, {{{0, 2, 1, 3}}, 4, 0, true});
    check_link(x4, port(0, 4), port(2, 9));  // every link joins different channel numbers
    check_link(x4, port(3, 7), port(0, 10));

    const MmioList x8_mmio = {{0, 2}, {1, 3}, {2, 1}, {3, 0}, {4, 6}, {5, 7}, {6, 5}, {7, 4}};
    const Grid x8_grid = {{1, 0, 2, 3}, {5, 4, 6, 7}};
    const auto& x8 = fixture("p150_x8");
    check_counts(x8, hal::Arch::Blackhole, 8, 20);
    CHECK(x8.mmio_chips() == x8_mmio);
    check_mesh(x8, {x8_grid, 2, 2});
    CHECK(links_between(x8, 1, 3) == 0);     // rows are not closed
    check_link(x8, port(1, 9), port(0, 4));  // east-west: 9, 11 <-> 4, 6
    check_link(x8, port(0, 5), port(4, 5));  // north-south: the same port at both ends

    const auto& cube = fixture("p150_x8_cube");
    check_counts(cube, hal::Arch::Blackhole, 8, 24);
    CHECK(cube.mmio_chips() == x8_mmio);
    check_mesh(cube, {x8_grid, 2, 2, true});
    check_link(cube, port(3, 5), port(1, 8));  // the closing cable of row 0
}

TEST_CASE("cluster fixtures: two P300s as a 2 x 2 mesh", "[cluster_fixtures]") {
    const auto& c = fixture("p300_x2");
    check_counts(c, hal::Arch::Blackhole, 4, 12);
    CHECK(c.mmio_chips() == MmioList{{0, 3}, {1, 2}, {2, 1}, {3, 0}});
    check_mesh(c, {{{0, 1}, {3, 2}}, 2, 4});
    check_link(c, port(0, 2), port(1, 9));  // board trace
    check_link(c, port(0, 7), port(3, 6));  // WARP400: left ASIC of one board, right of the other
    check_link(c, port(1, 3), port(2, 9));
}

TEST_CASE("cluster fixtures: Blackhole Galaxy torus and four Galaxies", "[cluster_fixtures]") {
    const auto& bh = fixture("bh_galaxy");
    check_counts(bh, hal::Arch::Blackhole, 32, 128);
    check_all_mmio(bh);
    CHECK(bh.mmio_chips()[16] == std::pair<ChipId, uint32_t>{16, 24});  // tray 4 ASIC 1
    check_mesh(bh, {kBhGalaxy, 2, 2, true, true});
    check_link(bh, port(0, 0), port(8, 0));   // row wrap: tray 1 <-> 2 QSFP-DD port 3
    check_link(bh, port(0, 2), port(24, 2));  // column wrap: tray 1 <-> 3 QSFP-DD port 2
    check_link(bh, port(0, 6), port(4, 0));   // tray trace: ASIC 1 ch 6, 7 <-> ASIC 5 ch 0, 1
    check_link(bh, port(3, 4), port(27, 4));  // linking board 3: tray 1 <-> 3, ASIC 4

    const auto& quad = fixture("bh_galaxy_x4");
    check_counts(quad, hal::Arch::Blackhole, 128, 512);
    check_all_mmio(quad);
    Grid stacked;  // Galaxies stacked 2, 0, 3, 1; Galaxy g has ids 32g .. 32g + 31
    for (const ChipId galaxy : {2u, 0u, 3u, 1u}) {
        for (const auto& row : kBhGalaxy) {
            stacked.push_back({});
            for (const ChipId chip : row) stacked.back().push_back(32 * galaxy + chip);
        }
    }
    check_mesh(quad, {stacked, 2, 2, true, true});
    check_link(quad, port(88, 2), port(0, 2));   // Galaxy 2 tray 3 <-> Galaxy 0 tray 1
    check_link(quad, port(56, 3), port(64, 3));  // the ring closes: Galaxy 1 <-> Galaxy 2
    CHECK(links_between(quad, 0, 24) == 0);      // no column wrap inside a Galaxy

    // Galaxy 0 alone, as its host sees it: the cables to the other Galaxies are remote entries.
    const auto& host0 = fixture("bh_galaxy_x4_host0");
    check_counts(host0, hal::Arch::Blackhole, 32, 120);
    check_all_mmio(host0);
    check_mesh(host0, {kBhGalaxy, 2, 2, true, false});
    CHECK(links_between(host0, 0, 24) == 0);
    CHECK(host0.connected_channels(0) == std::vector<uint32_t>{0, 1, 4, 5, 6, 7});
}

TEST_CASE("cluster fixtures: faulty variants have exactly their fault", "[cluster_fixtures]") {
    const auto& missing = fixture("t3k_missing_link");
    check_counts(missing, hal::Arch::WormholeB0, 8, 19);
    CHECK(links_between(missing, 1, 0) == 1);
    CHECK_FALSE(missing.peer(port(1, 7)).has_value());
    CHECK_FALSE(missing.peer(port(0, 7)).has_value());
    check_link(missing, port(1, 6), port(0, 6));

    const auto& galaxy = fixture("galaxy_6u_missing_link");
    check_counts(galaxy, hal::Arch::WormholeB0, 32, 207);
    CHECK(links_between(galaxy, 13, 12) == 3);
    CHECK_FALSE(galaxy.peer(port(13, 9)).has_value());

    const auto& miscabled = fixture("t3k_miscabled");
    check_counts(miscabled, hal::Arch::WormholeB0, 8, 20);
    CHECK(links_between(miscabled, 3, 2) == 0);  // the cable that should join them
    check_link(miscabled, port(3, 0), port(0, 0));
    check_link(miscabled, port(3, 1), port(0, 1));
}

// The loader stops at the first port used twice; ClusterDescriptor::lint lists them all.
TEST_CASE("cluster fixtures: duplicate and asymmetric entries are refused", "[cluster_fixtures]") {
    const std::string dir = fabric::test::descriptor_dir() + "/clusters/";
    const std::string duplicate = dir + "t3k_duplicate_cluster.yaml";
    CHECK(expect_error(ErrorCategory::BadDescriptor,
                       [&] { ClusterDescriptor::load_file(duplicate); }) ==
          duplicate +
              ":176: field 'ethernet_connections[20]': chip 5 chan 0 <-> chip 1 chan 8 is listed "
              "again (first as ethernet_connections[6])");
    const std::string asymmetric = dir + "t3k_asymmetric_cluster.yaml";
    CHECK(expect_error(ErrorCategory::BadDescriptor,
                       [&] { ClusterDescriptor::load_file(asymmetric); }) ==
          asymmetric +
              ":176: field 'ethernet_connections[20]': chip 5 chan 0 is joined to chip 1 chan 0 "
              "here but to chip 1 chan 8 by ethernet_connections[6]");
}
