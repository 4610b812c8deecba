// The router's topologies as policy types. One source builds two images: fabric_router.elf runs
// lines and rings (LineRing), fabric_router_2d.elf meshes and tori (Mesh); router.cpp picks one as
// `Topology` and is written once against what a policy provides:
//
// clang-format off
//   kSenders             sender channels (1D: ch0 worker, ch1 VC0, ch2 VC1; 2D: ch0, ch1 + F,
//                        ch5 + F)
//   is_vc1(c)            sender channel c sends into the peer's rx1
//   runs(topology)       the config topologies the image runs (the other image's are refused)
//   read_own_config      its own config beside RouterConfig (2D: MeshRouterConfig)
//   check_config(c, m)   the topology's own config checks (ConfigCheck::None if fine)
//   fed(c, config)       sender channel c can receive packets at all (the loop polls only those)
//   neighbour(i, ...)    the other routers of the chip this one forwards into: their cores, which
//                        of their channels our ports are, where our channels' credits go
//   set_up, index_ports  the policy's state from the checked config, then from the ports found
//   plain(head, r)       the plain case of a packet's hop, if it is one: a forward into one fed
//                        port whose route goes on, or a write here only (PlainHop)
//   plain_route_ok       the one route check a plain hop can fail (the fast take path's only one)
//   hop(head, slot, r)   what the hop says in general: write, forward into which ports
//   check_route(...)     the route's checks for this hop
//   pass_on(slot, hop)   the route the next router reads, rewritten in our slot before a
//                        forward (the TTL one less is header.h's pass_ttl_on, the same for all)
//   pass_on_plain        the same for a plain hop (the fast take path)
//   before_send(c, s)    a rewrite of slot `s` of channel c before it goes on the link (2D
//                        multicast)
// clang-format on
//
// A port is a sender channel of another router of this chip that this one forwards into: its
// freed count comes back in our upstream_credit[port]. 1D: port 1 = the downstream's ch1 (from
// rx0), port 2 its ch2 (from rx1). 2D: port 1 + F / 5 + F = ch(1 + our dir) / ch(5 + our dir) of
// the router facing F (VC0 / VC1).
#pragma once

#include <stdint.h>

#include "fabric/l1_words.h"
#include "hal/encoding.h"
#include "header.h"
#include "protocol/fabric.h"
#include "route.h"

namespace fabric::router {

namespace pf = protocol::fabric;

// The plain case of a hop (the topology's plain()): a forward into one fed port (`forward`,
// into `port`) whose route goes on, or a write here and nothing else (`write`); neither: not
// plain. (Flags the fast take path branches on as they are: a port tested against 0, or one
// encoded word, cost it ~5 cycles a packet.)
struct PlainHop {
    uint32_t port;     // the forward's port (0 when it is not one: the fast path tests this)
    uint32_t forward;  // 0 or 1 (words, not bools: a struct of bytes was kept on the stack)
    uint32_t write;    // 0 or 1
    bool any() const { return (forward | write) != 0; }
};

// What one hop of a packet's route says at this router. Every field is set where a Hop is made:
// no default initializers, as zeroing the struct first would be a call to picolibc's memset on
// every packet (the firmware is built -ffreestanding: no builtin memset).
struct Hop {
    uint32_t ports;          // bit p: a copy goes into port p
    bool write;              // the packet is delivered on this chip
    uint32_t plain_port;     // a plain forward: its port (the topology's plain(), else 0)
    uint32_t route;          // the route word this hop read (2D entry router: the one it computed)
    uint32_t route_ext;      // 2D entry router: the route_ext it computed (else read when needed)
    pf::BadPacket dst_node;  // 2D entry router: DstNode (no route from here), reported first

    // The hop of a plain packet on `route`.
    static Hop of_plain(PlainHop plain, uint32_t route) {
        Hop h;
        h.write = plain.write != 0;
        h.plain_port = plain.forward != 0 ? plain.port : 0;
        h.ports = plain.forward != 0 ? 1u << plain.port : 0;
        h.route = route;
        h.route_ext = 0;
        h.dst_node = pf::BadPacket::None;
        return h;
    }
};

// Another router of this chip: its core, and for each VC the port we feed it through, its channel
// behind that port, and our channel it feeds, whose freed count goes to its upstream_credit[slot].
// No default member initializers: neighbour() writes every field when it finds one, and zeroing
// the struct first is a 36-byte memset (a byte loop, ~150 cycles) per direction in start-up.
struct Neighbour {
    uint32_t xy;  // y << 8 | x (NOC0)
    uint32_t port[2];
    uint32_t channel[2];
    uint32_t fed_channel[2];
    uint32_t credit_slot[2];
    uint32_t x() const { return xy & 0xFF; }
    uint32_t y() const { return (xy >> 8) & 0xFF; }
};

// ---- lines and rings ---------------------------------------------------------------------------

// Routes are 2 bits a hop (pf::HopAction), hop 0 in the low bits. A ring's dateline link sends into
// the peer's rx1 (RouterConfig::dateline); a worker's route is at most ring_size - 1 hops.
struct LineRing {
    static constexpr uint32_t kSenders = pf::kNumSenderChannels;
    static constexpr uint32_t kNeighbours =
        1;  // the downstream: this chip's router facing the other way
    static constexpr bool is_vc1(uint32_t c) { return c == 2; }
    static constexpr bool runs(uint32_t topology) {
        return topology == static_cast<uint32_t>(pf::Topology::Line) ||
               topology == static_cast<uint32_t>(pf::Topology::Ring);
    }
    // Space for the image's speed-ups (router.cpp says what each buys): feeding TXQ0 back to back
    // with long packets, and prepared credit writes.
    static constexpr bool kFeedTxq = true;
    static constexpr bool kPrepareCredits = true;
    static constexpr uint32_t kUnrolledSenders = kSenders;
    static constexpr uint32_t kCreditUnroll = kSenders;
    static constexpr bool kSharedWalk = false;

    uint32_t route_mask = ~0u;  // ring_route_mask() of the config
    uint32_t present = 0;       // bit p: port p has slots (index_ports)

    static void read_own_config(pf::MeshRouterConfig&, uint32_t) {}
    static pf::ConfigCheck check_config(const pf::RouterConfig&, const pf::MeshRouterConfig&) {
        return pf::ConfigCheck::None;
    }
    void set_up(const pf::RouterConfig& c, const pf::MeshRouterConfig*, uint32_t) {
        route_mask = ring_route_mask(c.topology, c.ring_size);
    }
    // ch1/ch2 are fed only by the downstream: at the end of a line nothing pushes into them.
    static bool fed(uint32_t c, const pf::RouterConfig& config) {
        return c == pf::kWorkerChannel || config.has_downstream != 0;
    }
    // The downstream (if any): port 1 its ch1, port 2 its ch2; it feeds our ch1 and ch2.
    static bool neighbour(uint32_t i, const pf::RouterConfig& c, const pf::MeshRouterConfig&,
                          Neighbour& out) {
        if (i != 0 || c.has_downstream == 0) return false;
        out.xy = c.downstream_y << 8 | c.downstream_x;
        for (uint32_t vc = 0; vc < 2; ++vc) {
            out.port[vc] = out.channel[vc] = out.fed_channel[vc] = out.credit_slot[vc] = 1 + vc;
        }
        return true;
    }
    void index_ports(uint32_t present_ports) { present = present_ports; }

    // From rx r a forward goes into port 1 + r: the downstream's ch1 (VC0) or ch2 (VC1).
    [[gnu::always_inline]] PlainHop plain(const HeaderHead& h, uint32_t r) const {
        const uint32_t action = h.route & 3;
        const bool forward = action == static_cast<uint32_t>(pf::HopAction::Forward) &&
                             (h.route >> 2) != 0 && (present >> (1 + r) & 1) != 0;
        return {forward ? 1 + r : 0, forward ? 1u : 0u,
                action == static_cast<uint32_t>(pf::HopAction::Write) ? 1u : 0u};
    }
    // Only a worker's packet (ch0) carries its whole route here (forwarded ones were shifted).
    [[gnu::always_inline]] bool plain_route_ok(const HeaderHead& h, uint32_t) const {
        return h.src_channel() != pf::kWorkerChannel || (h.route & ~route_mask) == 0;
    }
    Hop hop(const HeaderHead& h, uint32_t, uint32_t r) const {
        const uint32_t action = h.route & 3;
        Hop hop = Hop::of_plain(plain(h, r), h.route);
        hop.write = (action & static_cast<uint32_t>(pf::HopAction::Write)) != 0;
        hop.ports =
            (action & static_cast<uint32_t>(pf::HopAction::Forward)) != 0 ? 1u << (1 + r) : 0;
        return hop;
    }
    pf::BadPacket check_route(const HeaderHead& h, uint32_t slot, const Hop& hop) const {
        if (!plain_route_ok(h, slot)) return pf::BadPacket::RouteTooLong;
        if ((h.route & 3) == static_cast<uint32_t>(pf::HopAction::Invalid))
            return pf::BadPacket::Route;
        if (hop.ports != 0 && (h.route >> 2) == 0)
            return pf::BadPacket::Route;  // nothing left to do
        return pf::BadPacket::None;
    }
    // The next router acts on the next 2 bits.
    [[gnu::always_inline]] void pass_on(uint32_t slot, const Hop& hop) const {
        pass_on_plain(slot, hop.route);
    }
    [[gnu::always_inline]] void pass_on_plain(uint32_t slot, uint32_t route) const {
        st(slot + 4 * kHdrRouteWord, route >> 2);
    }
    static void before_send(uint32_t, uint32_t) {}
    // No fallback router in a line or ring (RouterControl::Reroute is refused).
    static constexpr bool kReroutes = false;
    static constexpr uint32_t fallback_port(uint32_t) { return 1; }  // (any port: never used)
};

// ---- meshes and tori ---------------------------------------------------------------------------

// Routes are a hop command (a nibble of direction bits) per hop, 16 hops in route + route_ext.
// The receiving router faces the direction the packet came from, so its own bit means "write
// here"; the other bits forward to the router facing that way. See README.md "2D".
struct Mesh {
    static constexpr uint32_t kSenders = pf::kMaxSenderChannels;
    static constexpr uint32_t kNeighbours = pf::kMeshDirections;
    static constexpr bool is_vc1(uint32_t c) { return c >= pf::kMeshVc1Channel0; }
    static constexpr bool runs(uint32_t topology) { return pf::is_2d(topology); }
    // Nine sender channels' worth of inlined steps would not fit the 2D image's code window, nor
    // nine prepared credit handles its stack frame.
    static constexpr bool kFeedTxq = false;
    static constexpr bool kPrepareCredits = false;
    // Nor nine copies of the sender step: the worker's and the VC0 channels are unrolled, the VC1
    // channels (a torus's datelines, traffic from other meshes) share one copy.
    static constexpr uint32_t kUnrolledSenders = pf::kMeshVc1Channel0;
    static constexpr uint32_t kCreditUnroll = 1;
    // Both receiver channels share one completion walk (armed atomics, termination).
    static constexpr bool kSharedWalk = true;

    // Copied from MeshRouterConfig once checked (read per packet: the stack, not L1).
    uint32_t dir = 0;         // the direction our link leaves in
    bool inter_mesh = false;  // our peer is in another mesh (we are an entry router)
    bool torus = false;
    // The forward directions a packet must not take here: on a N/S link it travels in Y, and
    // dimension order (X, then Y) forbids a turn into X, except into a port leaving the mesh. None
    // for an entry router (the route starts here).
    uint32_t no_turn = 0;
    const pf::MeshRouterConfig* config = nullptr;
    uint32_t exit_table = 0;  // L1 address of the exit table (entry routers)
    // The plain cases (see plain()), built once the ports are known (index_ports); none on an
    // entry router, whose packets take the route computed here. write_cmd: our own bit alone
    // (0xFF, no command, on an entry router). plain_hops: per receiver channel and hop command,
    // the port of a forward into one fed port with no forbidden turn, else 0 (a byte each: the
    // stack has no room for more).
    uint32_t write_cmd = 0xFF;
    uint8_t plain_hops[pf::kNumReceiverChannels][16] = {};

    // Its MeshRouterConfig (RouterLayout::mesh_config), read beside the RouterConfig.
    static void read_own_config(pf::MeshRouterConfig& m, uint32_t addr) { load_struct(m, addr); }
    static pf::ConfigCheck check_config(const pf::RouterConfig& c, const pf::MeshRouterConfig& m);
    void set_up(const pf::RouterConfig& c, const pf::MeshRouterConfig* m,
                uint32_t exit_table_addr) {
        config = m;
        exit_table = exit_table_addr;
        dir = m->dir;
        inter_mesh = m->inter_mesh != 0;
        torus = c.topology == static_cast<uint32_t>(pf::Topology::Torus);
        if (!inter_mesh && pf::is_y(m->dir)) {
            no_turn = (pf::dir_bit(static_cast<uint32_t>(pf::MeshDirection::E)) |
                       pf::dir_bit(static_cast<uint32_t>(pf::MeshDirection::W))) &
                      ~m->exit_dirs;
        }
    }
    static bool fed(uint32_t, const pf::RouterConfig&) { return true; }
    // The router facing direction i: port 1 + i / 5 + i are its ch(1 + our dir) / ch(5 + our dir);
    // it feeds our ch(1 + i) / ch(5 + i) and reads their freed counts in its upstream_credit[1 +
    // our dir] / [5 + our dir].
    static bool neighbour(uint32_t i, const pf::RouterConfig&, const pf::MeshRouterConfig& m,
                          Neighbour& out) {
        if (m.neighbor[i] == 0) return false;
        out.xy = m.neighbor[i] & 0xFFFF;
        const uint32_t first[2] = {pf::kMeshVc0Channel0, pf::kMeshVc1Channel0};
        for (uint32_t vc = 0; vc < 2; ++vc) {
            out.port[vc] = out.fed_channel[vc] = first[vc] + i;
            out.channel[vc] = out.credit_slot[vc] = first[vc] + m.dir;
        }
        return true;
    }

    // The port a packet taken from rx r leaves by towards direction `d`: the VC1 or VC0 channel of
    // the router facing `d`. VC1: a packet that entered this mesh from another (taken by an entry
    // router, or from rx1 of a mesh), so that it never waits behind the mesh's own traffic to
    // other meshes; on a torus, straight on from rx1 (past the dateline; a turn starts the next
    // dimension's ring on VC0).
    uint32_t port_towards(uint32_t r, uint32_t d) const {
        const bool vc1 = inter_mesh || (r == 1 && (!torus || d == pf::opposite_dir(dir)));
        return (vc1 ? pf::kMeshVc1Channel0 : pf::kMeshVc0Channel0) + d;
    }
    // The plain hops, once we know which ports we feed (`present`: bit p, the port has slots).
    void index_ports(uint32_t present) {
        if (inter_mesh) return;
        write_cmd = pf::dir_bit(dir);
        for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
            for (uint32_t d = 0; d < pf::kMeshDirections; ++d) {
                const uint32_t cmd = pf::dir_bit(d);
                const uint32_t p = port_towards(r, d);
                if (d == dir || (cmd & no_turn) != 0 || (present >> p & 1) == 0) continue;
                plain_hops[r][cmd] = static_cast<uint8_t>(p);
            }
        }
    }

    // The port into the fallback (MeshRouterConfig::neighbor[dir]: another plane's router whose
    // link joins the same two chips) for our channel c: its ch(1 + dir), or for a VC1 channel
    // (a torus's packets past the dateline, a mesh's from other meshes) its ch(5 + dir); nothing
    // else feeds them. A rerouted
    // router's packets go there, ready to send: the fallback sends them on as its own.
    static constexpr bool kReroutes = true;
    uint32_t fallback_port(uint32_t c) const {
        return (is_vc1(c) ? pf::kMeshVc1Channel0 : pf::kMeshVc0Channel0) + dir;
    }
    // A plain forward is one whose route goes on in `route` (the fast path shifts it).
    [[gnu::always_inline]] PlainHop plain(const HeaderHead& h, uint32_t r) const {
        const uint32_t cmd = h.route & 15;
        if (cmd == write_cmd) return {0, 0, 1};
        const uint32_t p = (h.route >> 4) != 0 ? plain_hops[r][cmd] : 0;
        return {p, p != 0 ? 1u : 0u, 0};
    }
    // A worker's route on a torus must not cross a dateline twice (the others were counted by the
    // router that took them first).
    [[gnu::always_inline]] bool plain_route_ok(const HeaderHead& h, uint32_t slot) const {
        return h.src_channel() != pf::kWorkerChannel || !torus ||
               torus_fits(h.route, slot, h.branch_hops());
    }
    Hop hop(const HeaderHead& h, uint32_t slot, uint32_t r) const {
        if (inter_mesh) return entry_hop(slot, r);
        Hop hop = Hop::of_plain(plain(h, r), h.route);
        const uint32_t cmd = h.route & 15;
        const uint32_t fwd = cmd & ~pf::dir_bit(dir);
        hop.write = fwd != cmd;
        hop.ports = ports_towards(r, fwd);
        return hop;
    }
    // The route's checks for this hop, in the order reported: none, a forbidden turn, a forward
    // with nothing left to do (unless the next router leaves the mesh: the entry router on the
    // other side computes the rest; or it is a multicast turning into its branches: their routers
    // write the branch routes), a torus worker's route crossing a dateline twice.
    pf::BadPacket check_route(const HeaderHead& h, uint32_t slot, const Hop& hop) const {
        const uint32_t cmd = hop.route & 15;
        if (cmd == 0) return pf::BadPacket::Route;
        const uint32_t fwd = cmd & ~pf::dir_bit(dir);
        if ((fwd & no_turn) != 0) return pf::BadPacket::Turn;
        if (fwd != 0 && (hop.route >> 4) == 0 && route_ext(slot, hop) == 0 &&
            (fwd & ~config->exit_dirs) != 0 && h.branch_hops() == 0) {
            return pf::BadPacket::Route;
        }
        return plain_route_ok(h, slot) ? pf::BadPacket::None : pf::BadPacket::RouteTooLong;
    }
    // The next router acts on the next nibble: route and route_ext shift by one.
    [[gnu::always_inline]] void pass_on(uint32_t slot, const Hop& hop) const {
        shift_route(slot, hop.route, route_ext(slot, hop));
    }
    // The same for a plain hop (never on an entry router: route_ext is the slot's).
    [[gnu::always_inline]] void pass_on_plain(uint32_t slot, uint32_t route) const {
        shift_route(slot, route, route_ext_of(slot));
    }
    // Sending a packet that turned into our direction (it came from a perpendicular one): a
    // multicast copy (branch_hops non-zero) covers branch_hops[our dir] chips along it, writing on
    // each; it is a plain line multicast from here.
    void before_send(uint32_t c, uint32_t slot) const {
        if (c >= pf::kMeshVc0Channel0 && c < pf::kMeshVc0Channel0 + pf::kMeshDirections &&
            pf::perpendicular(c - pf::kMeshVc0Channel0, dir)) {
            branch_rewrite(slot);
        }
    }

  private:
    static uint32_t route_ext_of(uint32_t slot) { return ld(slot + 4 * kHdrRouteExtWord); }
    // (route_ext is 0 for every route of 8 hops or fewer, and stays so: not stored again.)
    static void shift_route(uint32_t slot, uint32_t route, uint32_t ext) {
        st(slot + 4 * kHdrRouteWord, route >> 4 | ext << 28);
        if (ext != 0) st(slot + 4 * kHdrRouteExtWord, ext >> 4);
    }
    uint32_t route_ext(uint32_t slot, const Hop& hop) const {
        return inter_mesh ? hop.route_ext : route_ext_of(slot);
    }
    // The ports of the directions in `fwd` for a packet from rx r.
    uint32_t ports_towards(uint32_t r, uint32_t fwd) const {
        uint32_t ports = 0;
        for (uint32_t d = 0; d < pf::kMeshDirections; ++d) {
            if ((fwd >> d & 1) != 0) ports |= 1u << port_towards(r, d);
        }
        return ports;
    }
    // Entered this mesh here: the route on comes from the destination node (it depends on
    // nothing else, so a packet that has to wait gets the same one again).
    Hop entry_hop(uint32_t slot, uint32_t r) const {
        pf::Route on{};
        const pf::BadPacket why =
            mesh_entry_route(ld(slot + 4 * kHdrDstNodeWord), *config, exit_table, on);
        Hop hop = Hop::of_plain({0, 0, 0}, on.hops);
        hop.route_ext = on.ext;
        hop.dst_node = why;
        const uint32_t cmd = on.hops & 15;
        const uint32_t fwd = cmd & ~pf::dir_bit(dir);
        hop.write = fwd != cmd;
        hop.ports = ports_towards(r, fwd);
        return hop;
    }
    // (Out of line, taking values: a packet's header words whose address escaped to a call would
    // live on the stack rather than in registers.)
    [[gnu::noinline]] bool torus_fits(uint32_t route, uint32_t slot, uint32_t branch_hops) const {
        return torus_route_fits(route, route_ext_of(slot), branch_hops, *config);
    }
    [[gnu::noinline]] void branch_rewrite(uint32_t slot) const {
        const uint32_t w = ld(slot + 4 * kHdrMagicWord);
        if ((w >> 16) == 0) return;  // not a multicast
        const uint32_t chips = (w >> (16 + 4 * dir)) & 15;
        const pf::Route r = pf::mesh_route_line_multicast(dir, chips);
        st(slot + 4 * kHdrRouteWord, r.hops);
        st(slot + 4 * kHdrRouteExtWord, r.ext);
        st(slot + 4 * kHdrMagicWord, w & 0xFFFF);  // magic and ttl; no branches from here
    }
};

inline pf::ConfigCheck Mesh::check_config(const pf::RouterConfig& c,
                                          const pf::MeshRouterConfig& m) {
    constexpr pf::ConfigCheck kBad = pf::ConfigCheck::MeshConfig;
    if (m.magic != pf::kMeshConfigMagic || m.dir >= pf::kMeshDirections) return kBad;
    if (m.mesh_rows == 0 || m.mesh_cols == 0 || m.mesh_rows * m.mesh_cols > 256 ||
        m.device_id >= m.mesh_rows * m.mesh_cols || m.exit_count > pf::kMeshExitEntries ||
        m.inter_mesh > 1 || m.exit_dirs > 15) {
        return kBad;
    }
    // The channels of our own direction only with a fallback (neighbor[dir]), whose packets they
    // take while that one is rerouted (a packet never comes back): VC0, and VC1 (where routers
    // carry it: a torus past the dateline, a mesh of several from other meshes).
    if ((c.sender_slots[pf::kMeshVc0Channel0 + m.dir] != 0 ||
         c.sender_slots[pf::kMeshVc1Channel0 + m.dir] != 0) &&
        m.neighbor[m.dir] == 0) {
        return kBad;
    }
    // Datelines only on a torus, and a torus has no other meshes (its VC1 is the dateline's).
    const bool torus = c.topology == static_cast<uint32_t>(pf::Topology::Torus);
    if (torus ? (m.inter_mesh != 0 || m.exit_dirs != 0) : c.dateline != 0) return kBad;
    for (uint32_t d = 0; d < pf::kMeshDirections; ++d) {
        const uint32_t n = m.neighbor[d];
        if (n == 0) continue;
        if ((n & ~(pf::kMeshNeighborPresent | 0xFFFFu)) != 0 ||
            (n & pf::kMeshNeighborPresent) == 0 || !hal::noc::coord_ok(n & 0xFF) ||
            !hal::noc::coord_ok((n >> 8) & 0xFF)) {
            return kBad;
        }
    }
    return pf::ConfigCheck::None;
}

}  // namespace fabric::router
