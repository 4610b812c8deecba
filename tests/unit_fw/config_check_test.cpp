// check_config (firmware/router/config_check.h): every ConfigCheck a router reports, on the image
// of each topology.
#include "config_check.h"

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "router_fixtures.h"
#include "topology.h"

namespace {

using namespace fw_test;
using fabric::router::LineRing;
using fabric::router::Mesh;
using C = pf::ConfigCheck;

template <class Topology>
C check(const pf::RouterConfig& c, const pf::MeshRouterConfig& m = {}) {
    return fabric::router::check_config<Topology>(c, pf::router_layout(hal::kArch, c), m);
}

struct Bad {
    std::string what;
    std::function<void(pf::RouterConfig&)> change;
    C why;
};

}  // namespace

TEST_CASE("router config: a good line and ring pass, each bad field is named", "[router][config]") {
    CHECK(check<LineRing>(line_config()) == C::None);
    CHECK(check<LineRing>(ring_config(8)) == C::None);
    const std::vector<Bad> bad = {
        {"magic", [](auto& c) { c.magic = 0; }, C::Magic},
        {"version", [](auto& c) { c.version = pf::kProtocolVersion + 1; }, C::Version},
        {"a mesh on the 1D image", [](auto& c) { c.topology = 2; }, C::Topology},
        {"no such topology", [](auto& c) { c.topology = 4; }, C::Topology},
        {"payload 0", [](auto& c) { c.payload_bytes = 0; }, C::PayloadBytes},
        {"payload not a multiple of 16", [](auto& c) { c.payload_bytes = 100; }, C::PayloadBytes},
        {"payload above the largest",
         [](auto& c) { c.payload_bytes = pf::max_payload_bytes(hal::kArch) + 16; },
         C::PayloadBytes},
        {"33 slots", [](auto& c) { c.sender_slots[1] = pf::kMaxRouterSlots + 1; }, C::SenderSlots},
        {"a 2D channel", [](auto& c) { c.sender_slots[3] = 1; }, C::SenderSlots},
        {"no rx0", [](auto& c) { c.receiver_slots[0] = 0; }, C::ReceiverSlots},
        {"33 rx1 slots", [](auto& c) { c.receiver_slots[1] = 33; }, C::ReceiverSlots},
        {"a dateline without rx1", [](auto& c) { c.dateline = 1; }, C::Dateline},
        {"dateline 2", [](auto& c) { c.receiver_slots[1] = 4, c.dateline = 2; }, C::Dateline},
        {"has_downstream 2", [](auto& c) { c.has_downstream = 2; }, C::Downstream},
        {"downstream off the NoC", [](auto& c) { c.downstream_x = 64; }, C::Downstream},
        {"handshake timeout 0", [](auto& c) { c.handshake_timeout_us = 0; }, C::Timeouts},
        {"progress timeout 0", [](auto& c) { c.progress_timeout_us = 0; }, C::Timeouts},
        {"slots beyond L1",
         [](auto& c) {
             c.receiver_slots[0] = c.receiver_slots[1] = 32;
             c.sender_slots[0] = 32;
             c.payload_bytes = pf::max_payload_bytes(hal::kArch);
         },
         C::Layout},
        {"is_master 2", [](auto& c) { c.is_master = 2; }, C::IsMaster},
    };
    for (const Bad& b : bad) {
        INFO(b.what);
        pf::RouterConfig c = line_config();
        b.change(c);
        CHECK(check<LineRing>(c) == b.why);
    }
}

TEST_CASE("router config: the first failing check is the one reported", "[router][config]") {
    pf::RouterConfig c = line_config();
    c.payload_bytes = 0;
    c.is_master = 5;
    CHECK(check<LineRing>(c) == C::PayloadBytes);
    c.magic = 1;
    CHECK(check<LineRing>(c) == C::Magic);
}

TEST_CASE("router config: a mesh router and its MeshRouterConfig", "[router][config][2d]") {
    const MeshRouter good = mesh_router(pf::MeshDirection::E);
    CHECK(check<Mesh>(good.config, good.mesh) == C::None);
    CHECK(check<LineRing>(good.config, good.mesh) == C::Topology);
    CHECK(check<Mesh>(line_config(), good.mesh) == C::Topology);
    pf::RouterConfig torus = good.config;
    torus.topology = static_cast<uint32_t>(pf::Topology::Torus);
    torus.receiver_slots[1] = 8;
    torus.dateline = 1;
    CHECK(check<Mesh>(torus, good.mesh) == C::None);
    // A fallback (another plane's router on the same two chips) and the VC0 channel it feeds.
    MeshRouter fallback = good;
    fallback.mesh.neighbor[fallback.mesh.dir] = pf::kMeshNeighborPresent | 1 << 8 | 9;
    fallback.config.sender_slots[pf::kMeshVc0Channel0 + fallback.mesh.dir] = 4;
    CHECK(check<Mesh>(fallback.config, fallback.mesh) == C::None);
    // On a torus also the VC1 channel it feeds (its packets past the dateline).
    MeshRouter torus_fallback = fallback;
    torus_fallback.config.topology = static_cast<uint32_t>(pf::Topology::Torus);
    torus_fallback.config.receiver_slots[1] = 2;
    torus_fallback.config.sender_slots[pf::kMeshVc0Channel0 + torus_fallback.mesh.dir] = 1;
    torus_fallback.config.sender_slots[pf::kMeshVc1Channel0 + torus_fallback.mesh.dir] = 1;
    CHECK(check<Mesh>(torus_fallback.config, torus_fallback.mesh) == C::None);

    struct MeshBad {
        std::string what;
        std::function<void(MeshRouter&)> change;
    };
    const std::vector<MeshBad> bad = {
        {"magic", [](auto& r) { r.mesh.magic = 0; }},
        {"direction", [](auto& r) { r.mesh.dir = 4; }},
        {"no rows", [](auto& r) { r.mesh.mesh_rows = 0; }},
        {"257 devices", [](auto& r) { r.mesh.mesh_rows = 16, r.mesh.mesh_cols = 17; }},
        {"device outside the mesh", [](auto& r) { r.mesh.device_id = 16; }},
        {"65 exits", [](auto& r) { r.mesh.exit_count = pf::kMeshExitEntries + 1; }},
        {"inter_mesh 2", [](auto& r) { r.mesh.inter_mesh = 2; }},
        {"exit_dirs above 15", [](auto& r) { r.mesh.exit_dirs = 16; }},
        {"a VC0 channel from our own direction without a fallback",
         [](auto& r) { r.config.sender_slots[pf::kMeshVc0Channel0 + r.mesh.dir] = 1; }},
        {"a VC1 channel from our own direction without a fallback",
         [](auto& r) {
             r.config.sender_slots[pf::kMeshVc1Channel0 + r.mesh.dir] = 1;
             r.config.receiver_slots[1] = 4;  // (VC1 goes into rx1)
         }},
        {"a dateline on a mesh",
         [](auto& r) { r.config.receiver_slots[1] = 4, r.config.dateline = 1; }},
        {"a torus with another mesh",
         [](auto& r) {
             r.config.topology = static_cast<uint32_t>(pf::Topology::Torus);
             r.mesh.inter_mesh = 1;
         }},
        {"a fallback off the NoC",
         [](auto& r) { r.mesh.neighbor[r.mesh.dir] = pf::kMeshNeighborPresent | 64; }},
        {"a neighbour not marked present", [](auto& r) { r.mesh.neighbor[0] = 0x0102; }},
        {"a neighbour word with stray bits", [](auto& r) { r.mesh.neighbor[0] |= 1u << 20; }},
        {"a neighbour off the NoC",
         [](auto& r) { r.mesh.neighbor[0] = pf::kMeshNeighborPresent | 64; }},
    };
    for (const MeshBad& b : bad) {
        INFO(b.what);
        MeshRouter r = mesh_router(pf::MeshDirection::E);
        b.change(r);
        CHECK(check<Mesh>(r.config, r.mesh) == C::MeshConfig);
    }
}
