// Route rules beyond one hop (firmware/router/route.h): a ring's route mask, a torus worker's
// route length, an entry router's route from the destination node.
#include "route.h"

#include <catch2/catch.hpp>
#include <initializer_list>

#include "router_fixtures.h"

namespace {

using namespace fw_test;
using D = pf::MeshDirection;
constexpr uint32_t bit(D d) {
    return pf::dir_bit(static_cast<uint32_t>(d));
}

}  // namespace

TEST_CASE("routes: a ring's worker route is at most ring_size - 1 hops", "[router][route]") {
    using fabric::router::ring_route_mask;
    const uint32_t ring = static_cast<uint32_t>(pf::Topology::Ring);
    CHECK(ring_route_mask(ring, 2) == 0x3);
    CHECK(ring_route_mask(ring, 8) == 0x3FFF);
    CHECK(ring_route_mask(ring, 17) == ~0u);  // 16 hops: the whole word
    CHECK(ring_route_mask(ring, 0) == ~0u);   // unknown ring size: no limit
    CHECK(ring_route_mask(static_cast<uint32_t>(pf::Topology::Line), 4) == ~0u);
}

TEST_CASE("routes: a torus worker's route, per dimension and branch", "[router][route][2d]") {
    using fabric::router::torus_route_fits;
    MeshRouter r = mesh_router(D::W, 4, 4);  // takes packets travelling east
    // E, E, then S, S, S (the turn counts in Y), then the N router writes.
    const auto route = [](std::initializer_list<uint32_t> cmds) {
        pf::Route r{};
        uint32_t i = 0;
        for (const uint32_t c : cmds) pf::set_hop(r, i++, c);
        return r;
    };
    const pf::Route fits = route({bit(D::E), bit(D::S), bit(D::S), bit(D::S), bit(D::N)});
    CHECK(torus_route_fits(fits.hops, fits.ext, 0, r.mesh));  // 2 in X (with ours), 3 in Y
    // A fourth hop south: round the 4-ring.
    const pf::Route round =
        route({bit(D::E), bit(D::S), bit(D::S), bit(D::S), bit(D::S), bit(D::N)});
    CHECK_FALSE(torus_route_fits(round.hops, round.ext, 0, r.mesh));
    // Branches as long as a column ring are refused too.
    const uint32_t branch_n = 4u << 4 * static_cast<uint32_t>(D::N);
    CHECK_FALSE(torus_route_fits(bit(D::W), 0, branch_n, r.mesh));
    CHECK(torus_route_fits(bit(D::W), 0, 3u << 4 * static_cast<uint32_t>(D::S), r.mesh));
}

TEST_CASE("routes: an entry router's route on from the destination node", "[router][route][2d]") {
    using fabric::router::mesh_entry_route;
    FakeCore core;
    MeshRouter r = mesh_router(D::N, 2, 4, 2);  // device 2: row 0, col 2; our link faces N
    r.mesh.mesh_id = 1;
    r.mesh.exit_count = 3;
    r.mesh.inter_mesh = 1;
    const uint32_t table = 0x12000;
    core.put<uint32_t>(table + 4 * 0, pf::kMeshExitValid | static_cast<uint32_t>(D::W) << 8 | 4);
    core.put<uint32_t>(table + 4 * 2, 0);  // mesh 2: no route
    pf::Route out{};
    // Device 7 (row 1, col 3) of our mesh: E, then S, then the N router writes.
    CHECK(mesh_entry_route(pf::mesh_node_word(1, 7), r.mesh, table, out) == pf::BadPacket::None);
    CHECK(out.hops == (bit(D::E) | bit(D::S) << 4 | bit(D::N) << 8));
    CHECK(out.ext == 0);
    // Mesh 0 through the exit at device 4 (row 1, col 0), out west: W, W, S, then W again.
    CHECK(mesh_entry_route(pf::mesh_node_word(0, 0), r.mesh, table, out) == pf::BadPacket::None);
    CHECK(out.hops == (bit(D::W) | bit(D::W) << 4 | bit(D::S) << 8 | bit(D::W) << 12));
    // Ourselves: write here (our own direction's bit).
    CHECK(mesh_entry_route(pf::mesh_node_word(1, 2), r.mesh, table, out) == pf::BadPacket::None);
    CHECK(out.hops == bit(D::N));
    // Routes that cannot be: an invalid exit, a mesh past the table, a device outside the mesh,
    // and a first hop back out of our own link.
    CHECK(mesh_entry_route(pf::mesh_node_word(2, 0), r.mesh, table, out) == pf::BadPacket::DstNode);
    CHECK(mesh_entry_route(pf::mesh_node_word(3, 0), r.mesh, table, out) == pf::BadPacket::DstNode);
    CHECK(mesh_entry_route(pf::mesh_node_word(1, 8), r.mesh, table, out) == pf::BadPacket::DstNode);
    r.mesh.dir = static_cast<uint32_t>(D::E);
    CHECK(mesh_entry_route(pf::mesh_node_word(1, 3), r.mesh, table, out) == pf::BadPacket::DstNode);
}
