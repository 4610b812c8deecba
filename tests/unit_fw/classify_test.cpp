// classify() and drop_reason() (firmware/router/classify.h, header.h, topology.h): what a router
// does with a packet it takes, on both topologies, and the reason it reports for a bad one.
#include "classify.h"

#include <catch2/catch.hpp>
#include <initializer_list>
#include <string>
#include <vector>

#include "router_fixtures.h"

namespace {

using namespace fw_test;
using fabric::router::HeaderHead;
using fabric::router::LineRing;
using fabric::router::Mesh;
using fabric::router::TakeLimits;
using fabric::router::Verdict;
using B = pf::BadPacket;

constexpr uint32_t kSlot = 0x30000;
constexpr uint32_t kWrite = static_cast<uint32_t>(pf::HopAction::Write);
constexpr uint32_t kFwd = static_cast<uint32_t>(pf::HopAction::Forward);
constexpr uint32_t kBoth = static_cast<uint32_t>(pf::HopAction::WriteAndForward);

// The header in the slot, classified by `topology` taking it from rx `rx`.
template <class Topology>
Verdict take(FakeCore& core, const Topology& topology, const pf::PacketHeader& h, uint32_t rx,
             const TakeLimits& limits) {
    core.put(kSlot, h);
    return fabric::router::classify(topology, fabric::router::read_head(kSlot), kSlot, rx, limits);
}

// The reason the general take path reports: the command words are the header's own here.
B reason(const Verdict& v, const pf::PacketHeader& h) {
    return fabric::router::drop_reason(v, h);
}

// Ports 1 and 2 (the downstream's ch1, ch2) fed.
constexpr TakeLimits kLineLimits{pf::kDefaultPayloadBytes, 1u << 1 | 1u << 2};

LineRing line_router(const pf::RouterConfig& c, uint32_t present = kLineLimits.present_ports) {
    LineRing t;
    t.set_up(c, nullptr, 0);
    t.index_ports(present);
    return t;
}

}  // namespace

TEST_CASE("classify 1D: the hop action of the low 2 bits", "[router][classify]") {
    FakeCore core;
    const LineRing t = line_router(line_config());
    const auto h = [](uint32_t route) { return header(pf::NocSendType::UnicastWrite, route); };

    const Verdict write = take(core, t, h(kWrite), 0, kLineLimits);
    CHECK(write.why == B::None);
    CHECK(write.plain.write);
    CHECK(write.hop.write);
    CHECK(write.hop.ports == 0);
    CHECK(write.hop.plain_port == 0);

    // A plain forward from rx0 goes into port 1 (the downstream's ch1), from rx1 into port 2.
    const Verdict fwd0 = take(core, t, h(kWrite << 2 | kFwd), 0, kLineLimits);
    CHECK(fwd0.why == B::None);
    CHECK_FALSE(fwd0.hop.write);
    CHECK(fwd0.hop.ports == 1u << 1);
    CHECK(fwd0.hop.plain_port == 1);
    CHECK(fwd0.plain.port == 1);
    const Verdict fwd1 = take(core, t, h(kWrite << 2 | kFwd), 1, kLineLimits);
    CHECK(fwd1.hop.ports == 1u << 2);
    CHECK(fwd1.hop.plain_port == 2);

    // Multicast: write here and forward, not a plain forward.
    const Verdict both = take(core, t, h(kWrite << 2 | kBoth), 0, kLineLimits);
    CHECK(both.why == B::None);
    CHECK_FALSE(both.plain.any());
    CHECK(both.hop.write);
    CHECK(both.hop.ports == 1u << 1);
    CHECK(both.hop.plain_port == 0);

    // A forward into a port that is not fed: not plain, and NoDownstream.
    const LineRing end = line_router(line_config(), 0);
    const Verdict past_end =
        take(core, end, h(kWrite << 2 | kFwd), 0, TakeLimits{pf::kDefaultPayloadBytes, 0});
    CHECK_FALSE(past_end.plain.any());
    CHECK(past_end.why == B::NoDownstream);
}

TEST_CASE("classify 1D: bad routes", "[router][classify]") {
    FakeCore core;
    const LineRing line = line_router(line_config());
    const auto h = [](uint32_t route, uint32_t src = 0) {
        return header(pf::NocSendType::UnicastWrite, route, 64, src);
    };
    CHECK(take(core, line, h(0), 0, kLineLimits).why == B::Route);
    // Forwarded with nothing left to do.
    CHECK(take(core, line, h(kFwd), 0, kLineLimits).why == B::Route);
    CHECK(take(core, line, h(kBoth), 0, kLineLimits).why == B::Route);
    // A line has no limit on a worker's route: past its end there is no downstream.
    CHECK(take(core, line, h(pf::route_unicast(16)), 0, kLineLimits).why == B::None);

    // A ring of 4: a worker's route of at most 3 hops; forwarded packets are not counted.
    const LineRing ring = line_router(ring_config(4));
    CHECK(take(core, ring, h(pf::route_unicast(3)), 0, kLineLimits).why == B::None);
    const Verdict too_long = take(core, ring, h(pf::route_unicast(4)), 0, kLineLimits);
    CHECK(too_long.why == B::RouteTooLong);
    CHECK_FALSE(too_long.plain.any());
    CHECK(take(core, ring, h(pf::route_unicast(4), 1), 0, kLineLimits).why == B::None);
}

TEST_CASE("classify: the header's own checks and their order", "[router][classify]") {
    FakeCore core;
    const LineRing t = line_router(line_config());
    pf::PacketHeader h = header(pf::NocSendType::UnicastWrite, kWrite);
    h.magic = 0;
    h.src_channel = 3;
    h.send_type = 9;
    CHECK(take(core, t, h, 0, kLineLimits).why == B::Magic);
    h.magic = pf::kHeaderMagic;
    h.ttl = 0;
    CHECK(take(core, t, h, 0, kLineLimits).why == B::TtlExpired);
    h.ttl = 1;  // this hop is the one it had left: 0 once decremented
    CHECK(take(core, t, h, 0, kLineLimits).why == B::TtlExpired);
    h.ttl = 2;
    CHECK(take(core, t, h, 0, kLineLimits).why == B::SrcChannel);
    h.src_channel = 2;
    CHECK(take(core, t, h, 0, kLineLimits).why == B::SendType);
    h.send_type = 0;
    h.payload_bytes = pf::kDefaultPayloadBytes + 16;
    CHECK(take(core, t, h, 0, kLineLimits).why == B::PayloadBytes);
    h.payload_bytes = pf::kDefaultPayloadBytes;
    CHECK(take(core, t, h, 0, kLineLimits).why == B::None);
}

TEST_CASE("drop_reason: the header's checks, then the command's, then the route's",
          "[router][classify]") {
    FakeCore core;
    const LineRing ring = line_router(ring_config(2));
    pf::PacketHeader h = header(pf::NocSendType::UnicastWrite, pf::route_unicast(2));
    h.cmd.write.dst.addr = 0x20004;  // not 16-B aligned: Target
    h.payload_bytes = pf::kDefaultPayloadBytes + 16;
    // The route is too long for a 2-chip ring, but it is only forwarded here: no Target check.
    CHECK(reason(take(core, ring, h, 0, kLineLimits), h) == B::PayloadBytes);
    h.payload_bytes = 64;
    CHECK(reason(take(core, ring, h, 0, kLineLimits), h) == B::RouteTooLong);
    h.route = pf::route_multicast(1, 2);  // written here too: the command's check comes first
    CHECK(reason(take(core, ring, h, 0, kLineLimits), h) == B::Target);
    h.cmd.write.dst.addr = 0x20000;
    CHECK(reason(take(core, ring, h, 0, kLineLimits), h) == B::RouteTooLong);
    h.route = pf::route_unicast(1);
    CHECK(reason(take(core, ring, h, 0, kLineLimits), h) == B::None);
}

TEST_CASE("check_command: every send type's targets", "[router][classify]") {
    using fabric::router::check_command;
    const auto of = [](pf::NocSendType type, uint32_t bytes) {
        return header(type, kWrite, bytes);
    };
    pf::PacketHeader w = of(pf::NocSendType::UnicastWrite, 64);
    CHECK(check_command(w) == B::None);
    w.payload_bytes = 0;
    CHECK(check_command(w) == B::Target);
    w.payload_bytes = 64;
    w.cmd.write.dst.x = 64;
    CHECK(check_command(w) == B::Target);
    w.cmd.write.dst = {hal::noc::kMmioStart - 32, 1, 1, 0};
    CHECK(check_command(w) == B::Target);  // runs into the register window

    pf::PacketHeader in = of(pf::NocSendType::InlineWrite, 0);
    in.cmd.inline_write.dst = {0x20004, 1, 1, 0};
    CHECK(check_command(in) == B::None);
    in.cmd.inline_write.dst.addr = 0x20006;
    CHECK(check_command(in) == B::Target);

    pf::PacketHeader at = of(pf::NocSendType::AtomicInc, 0);
    at.cmd.atomic.dst = {0x20008, 1, 1, 0};
    CHECK(check_command(at) == B::None);
    at.cmd.atomic.dst.y = 64;
    CHECK(check_command(at) == B::Target);

    pf::PacketHeader fused = of(pf::NocSendType::FusedWriteAtomicInc, 64);
    fused.cmd.fused.dst = {0x20000, 1, 1, 0};
    fused.cmd.fused.sem = {0x21000, 2, 2, 0};
    CHECK(check_command(fused) == B::None);
    fused.cmd.fused.sem.addr = 0x21002;
    CHECK(check_command(fused) == B::Target);

    pf::PacketHeader sc = of(pf::NocSendType::ScatterWrite, 96);
    sc.cmd.scatter.chunk_count = 3;
    sc.cmd.scatter.chunk_bytes[0] = 32;
    sc.cmd.scatter.chunk_bytes[1] = 32;
    for (uint32_t i = 0; i < 3; ++i) sc.cmd.scatter.dst[i] = {0x20000 + 0x100 * i, 1, 1, 0};
    CHECK(check_command(sc) == B::None);
    pf::PacketHeader one = sc;
    one.cmd.scatter.chunk_count = 1;
    CHECK(check_command(one) == B::Scatter);
    pf::PacketHeader odd = sc;
    odd.cmd.scatter.chunk_bytes[1] = 24;  // only the last chunk may be any size
    CHECK(check_command(odd) == B::Scatter);
    pf::PacketHeader nothing_left = sc;
    nothing_left.payload_bytes = 64;  // the chunks before the last take it all
    CHECK(check_command(nothing_left) == B::Scatter);
    pf::PacketHeader far = sc;
    far.cmd.scatter.dst[2].x = 64;
    CHECK(check_command(far) == B::Target);
}

namespace {

// A mesh router facing `dir`, set up with its ports as setup_ports() would find them.
struct MeshSetup {
    MeshRouter r;
    Mesh t;
    TakeLimits limits;
    MeshSetup(pf::MeshDirection dir, uint32_t exit_dirs = 0, bool inter_mesh = false) {
        r = mesh_router(dir);
        r.mesh.exit_dirs = exit_dirs;
        r.mesh.inter_mesh = inter_mesh ? 1 : 0;
        t.set_up(r.config, &r.mesh, 0x12000);
        limits.payload_bytes = r.config.payload_bytes;
        for (uint32_t f = 0; f < pf::kMeshDirections; ++f) {
            if (f == r.mesh.dir) continue;
            limits.present_ports |= 1u << (pf::kMeshVc0Channel0 + f);
            if (inter_mesh) limits.present_ports |= 1u << (pf::kMeshVc1Channel0 + f);
        }
        t.index_ports(limits.present_ports);
    }
};

constexpr uint32_t bit(pf::MeshDirection d) {
    return pf::dir_bit(static_cast<uint32_t>(d));
}
constexpr uint32_t vc0(pf::MeshDirection d) {
    return pf::kMeshVc0Channel0 + static_cast<uint32_t>(d);
}

}  // namespace

TEST_CASE("classify 2D: writes, plain forwards, turns and multicast", "[router][classify][2d]") {
    using D = pf::MeshDirection;
    FakeCore core;
    // The router facing W takes packets travelling east: its own bit (W) means "write here".
    MeshSetup w(D::W);
    const auto h = [](uint32_t route, uint32_t ext = 0) {
        pf::PacketHeader p = header(pf::NocSendType::UnicastWrite, route);
        p.route_ext = ext;
        return p;
    };
    const Verdict here = take(core, w.t, h(bit(D::W)), 0, w.limits);
    CHECK(here.why == B::None);
    CHECK(here.plain.write);
    CHECK(here.hop.write);
    CHECK(here.hop.ports == 0);

    // On east (straight on): port 1 + E, the VC0 channel of the router facing E; then it writes.
    const Verdict on = take(core, w.t, h(bit(D::E) | bit(D::W) << 4), 0, w.limits);
    CHECK(on.why == B::None);
    CHECK(on.hop.plain_port == vc0(D::E));
    CHECK(on.plain.port == vc0(D::E));
    CHECK(on.hop.ports == 1u << vc0(D::E));
    // A turn south (X, then Y) is fine on an E/W link.
    CHECK(take(core, w.t, h(bit(D::S) | bit(D::N) << 4), 0, w.limits).hop.plain_port == vc0(D::S));
    // From rx1 of a mesh: VC1 (that port is not fed here: no plain forward, NoDownstream).
    const Verdict vc1 = take(core, w.t, h(bit(D::E) | bit(D::W) << 4), 1, w.limits);
    CHECK(vc1.hop.ports == 1u << (pf::kMeshVc1Channel0 + static_cast<uint32_t>(D::E)));
    CHECK(vc1.why == B::NoDownstream);

    // A multicast hop: write here, on east and branch north: ports E and N, not plain.
    const Verdict mc = take(core, w.t, h(bit(D::W) | bit(D::E) | bit(D::N)), 0, w.limits);
    CHECK(mc.hop.write);
    CHECK(mc.hop.ports == (1u << vc0(D::E) | 1u << vc0(D::N)));
    CHECK(mc.hop.plain_port == 0);
    CHECK_FALSE(mc.plain.any());
    // ... forwarded with nothing left to do: a bad route, unless it is a multicast's branches.
    CHECK(mc.why == B::Route);
    pf::PacketHeader branches = h(bit(D::W) | bit(D::E) | bit(D::N));
    branches.branch_hops = 1 << (4 * static_cast<uint32_t>(D::N));  // one chip north
    CHECK(take(core, w.t, branches, 0, w.limits).why == B::None);
    CHECK(take(core, w.t, h(0), 0, w.limits).why == B::Route);

    // The route goes on in route_ext: not "nothing left", but not plain either (the fast path
    // wants the next hop in `route`).
    const Verdict long_route = take(core, w.t, h(bit(D::E), bit(D::W)), 0, w.limits);
    CHECK(long_route.why == B::None);
    CHECK_FALSE(long_route.plain.any());
    CHECK(long_route.hop.ports == 1u << vc0(D::E));
}

TEST_CASE("classify 2D: dimension order on a N/S link", "[router][classify][2d]") {
    using D = pf::MeshDirection;
    FakeCore core;
    const auto h = [](uint32_t route) { return header(pf::NocSendType::UnicastWrite, route); };
    MeshSetup n(D::N);  // takes packets travelling south
    CHECK(take(core, n.t, h(bit(D::S) | bit(D::N) << 4), 0, n.limits).hop.plain_port == vc0(D::S));
    const Verdict turn = take(core, n.t, h(bit(D::E) | bit(D::W) << 4), 0, n.limits);
    CHECK(turn.why == B::Turn);
    CHECK(turn.hop.plain_port == 0);
    // Unless the port to the east leaves the mesh.
    MeshSetup exit_e(D::N, bit(D::E));
    CHECK(take(core, exit_e.t, h(bit(D::E) | bit(D::W) << 4), 0, exit_e.limits).why == B::None);
    // Into an exit, a forward may have nothing left to do (the next mesh's entry router routes).
    CHECK(take(core, exit_e.t, h(bit(D::E)), 0, exit_e.limits).why == B::None);
}

TEST_CASE("classify 2D: a worker's route on a torus crosses each dateline once",
          "[router][classify][2d]") {
    using D = pf::MeshDirection;
    FakeCore core;
    MeshSetup w(D::W);  // 4 x 4
    w.r.config.topology = static_cast<uint32_t>(pf::Topology::Torus);
    w.t.set_up(w.r.config, &w.r.mesh, 0x12000);
    w.t.index_ports(w.limits.present_ports);
    // A worker's route east: the hop to us, then `hops_after_us` more, then the write.
    const auto east = [](uint32_t hops_after_us) {
        uint32_t path[pf::kMaxHops2D] = {};
        for (uint32_t i = 0; i < hops_after_us + 1; ++i) path[i] = static_cast<uint32_t>(D::E);
        return pf::mesh_route_path(path, hops_after_us + 1).hops;
    };
    // Its route from the worker's chip: 1 hop (to us) + 2 more east = 3 of the 4-ring: fine.
    pf::PacketHeader ok = header(pf::NocSendType::UnicastWrite, east(2));
    CHECK(take(core, w.t, ok, 0, w.limits).plain.port == vc0(D::E));
    pf::PacketHeader wraps = header(pf::NocSendType::UnicastWrite, east(3));
    const Verdict round = take(core, w.t, wraps, 0, w.limits);
    CHECK(round.why == B::RouteTooLong);
    CHECK_FALSE(round.plain.any());
    wraps.src_channel = 1;  // forwarded to us: counted by the router that took it first
    CHECK(take(core, w.t, wraps, 0, w.limits).why == B::None);
}

TEST_CASE("classify 2D: an entry router routes from the destination node",
          "[router][classify][2d]") {
    using D = pf::MeshDirection;
    FakeCore core;
    // Device 5 (row 1, col 1) of a 4 x 4 mesh, its W router's peer in another mesh.
    MeshSetup w(D::W, 0, true);
    w.r.mesh.mesh_id = 2;
    w.r.mesh.exit_count = 4;
    const uint32_t exit_table = 0x12000;
    core.put<uint32_t>(exit_table + 4 * 3,
                       pf::kMeshExitValid | static_cast<uint32_t>(D::S) << 8 | 13);
    pf::PacketHeader h = header(pf::NocSendType::UnicastWrite, 0);  // its route ended at the exit
    h.dst_mesh = 2;
    h.dst_device = 7;  // row 1, col 3: two hops east
    Verdict v = take(core, w.t, h, 0, w.limits);
    CHECK(v.why == B::None);
    CHECK(v.hop.route == (bit(D::E) | bit(D::E) << 4 | bit(D::W) << 8));
    CHECK(v.hop.ports == 1u << (pf::kMeshVc1Channel0 + static_cast<uint32_t>(D::E)));  // VC1
    CHECK_FALSE(v.plain.any());  // entry routers take the general path
    CHECK(v.hop.route_ext == 0);
    h.dst_device = 5;  // us
    v = take(core, w.t, h, 0, w.limits);
    CHECK(v.hop.write);
    CHECK(v.hop.ports == 0);
    // Another mesh through the exit at device 13 (row 3, col 1), out south.
    h.dst_mesh = 3;
    v = take(core, w.t, h, 0, w.limits);
    CHECK(v.why == B::None);
    CHECK(v.hop.route == (bit(D::S) | bit(D::S) << 4 | bit(D::S) << 8));
    // No route: a mesh beyond the table, an invalid entry, a device outside the mesh.
    h.dst_mesh = 4;
    CHECK(take(core, w.t, h, 0, w.limits).why == B::DstNode);
    h.dst_mesh = 1;
    CHECK(take(core, w.t, h, 0, w.limits).why == B::DstNode);
    h.dst_mesh = 2;
    h.dst_device = 16;
    CHECK(take(core, w.t, h, 0, w.limits).why == B::DstNode);
}

namespace {

// The fast take path acts on classify()'s first stage alone (Topology::plain() and
// plain_passes()), so that stage must say "plain" exactly for the packets the whole verdict finds
// fine and plain: a forward into one port whose route goes on in `route`, or a write here only,
// with the general decoding (Topology::hop()) giving the same port and write.
template <class Topology>
void check_plain_agrees(FakeCore& core, const Topology& t, const TakeLimits& limits, uint32_t route,
                        uint32_t rx, uint32_t bits_per_hop) {
    const pf::PacketHeader h = header(pf::NocSendType::UnicastWrite, route);
    const Verdict v = take(core, t, h, rx, limits);
    const fabric::router::Hop general = t.hop(fabric::router::read_head(kSlot), kSlot, rx);
    const bool one_port = general.ports != 0 && (general.ports & (general.ports - 1)) == 0;
    const bool goes_on = (route >> bits_per_hop) != 0;
    const bool plain = v.why == B::None && ((one_port && !general.write && goes_on) ||
                                            (general.ports == 0 && general.write));
    INFO("route 0x" << std::hex << route << " rx " << rx);
    CHECK(v.plain.any() == plain);
    if (!v.plain.any()) return;
    CHECK(v.hop.ports == general.ports);
    CHECK(v.hop.write == general.write);
    CHECK((v.plain.forward != 0) == (general.ports != 0));
    CHECK((v.plain.port != 0 ? 1u << v.plain.port : 0u) == general.ports);
}

}  // namespace

TEST_CASE("classify: the fast path's first stage agrees with the whole verdict",
          "[router][classify]") {
    FakeCore core;
    // 1D: every hop action, with and without a next hop, from both receiver channels.
    const LineRing line = line_router(ring_config(8));
    for (uint32_t rx = 0; rx < 2; ++rx) {
        for (uint32_t action = 0; action < 4; ++action) {
            for (const uint32_t next : {0u, kWrite}) {
                check_plain_agrees(core, line, kLineLimits, next << 2 | action, rx, 2);
            }
        }
    }
    // 2D: every hop command of routers facing each direction, with and without a next hop.
    for (uint32_t d = 0; d < pf::kMeshDirections; ++d) {
        const MeshSetup m(static_cast<pf::MeshDirection>(d));
        for (uint32_t rx = 0; rx < 2; ++rx) {
            for (uint32_t cmd = 0; cmd < 16; ++cmd) {
                for (const uint32_t next : {0u, 1u}) {
                    check_plain_agrees(core, m.t, m.limits, next << 4 | cmd, rx, 4);
                }
            }
        }
    }
}

TEST_CASE("pass_on, pass_ttl_on: the next router gets the route shifted and one hop less to live",
          "[router][classify][ttl]") {
    using D = pf::MeshDirection;
    using fabric::router::kHdrMagicWord;
    using fabric::router::kHdrRouteExtWord;
    using fabric::router::kHdrRouteWord;
    using fabric::router::pass_ttl_on;
    using fabric::router::read_head;
    FakeCore core;
    const auto word = [&](uint32_t i) { return fabric::ld(kSlot + 4 * i); };

    // 1D: a forward from a router of a line; the TTL byte alone changes in the magic word.
    const LineRing line = line_router(line_config());
    pf::PacketHeader h = header(pf::NocSendType::UnicastWrite, pf::route_unicast(3));
    h.ttl = 7;
    h.branch_hops = 0xABCD;  // (2D only) passed on as it is
    Verdict v = take(core, line, h, 0, kLineLimits);
    REQUIRE(v.why == B::None);
    line.pass_on_plain(kSlot, read_head(kSlot).route);
    pass_ttl_on(kSlot, read_head(kSlot));
    CHECK(word(kHdrRouteWord) == pf::route_unicast(2));
    CHECK(word(kHdrMagicWord) == (pf::kHeaderMagic | 6u << 8 | 0xABCDu << 16));
    core.put(kSlot, h);
    line.pass_on(kSlot, v.hop);
    CHECK(word(kHdrRouteWord) == pf::route_unicast(2));

    // 2D: straight on east from the router facing W, then the W router of the next chip writes;
    // the general path's pass_on (an entry router's computed route aside) does the same.
    MeshSetup w(D::W);
    pf::PacketHeader m = header(pf::NocSendType::UnicastWrite, bit(D::E) | bit(D::W) << 4);
    m.route_ext = bit(D::N);
    m.ttl = 2;  // the last hop it may take: the next router drops it
    v = take(core, w.t, m, 0, w.limits);
    REQUIRE(v.why == B::None);
    w.t.pass_on_plain(kSlot, read_head(kSlot).route);
    pass_ttl_on(kSlot, read_head(kSlot));
    CHECK(word(kHdrRouteWord) == (bit(D::W) | bit(D::N) << 28));
    CHECK(word(kHdrRouteExtWord) == 0);
    CHECK(word(kHdrMagicWord) == (pf::kHeaderMagic | 1u << 8));
    CHECK(fabric::router::classify(w.t, read_head(kSlot), kSlot, 0, w.limits).why == B::TtlExpired);
    core.put(kSlot, m);
    w.t.pass_on(kSlot, v.hop);
    CHECK(word(kHdrRouteWord) == (bit(D::W) | bit(D::N) << 28));
    CHECK(word(kHdrRouteExtWord) == 0);
}
