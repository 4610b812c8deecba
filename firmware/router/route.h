// Route rules that are more than one hop's decoding: how long a worker's route may be on a ring
// or torus (the dateline argument in README.md), and the route an entry router of a mesh computes
// for a packet that comes from another mesh.
#pragma once

#include <stdint.h>

#include "fabric/l1_words.h"
#include "protocol/fabric.h"

namespace fabric::router {

namespace pf = protocol::fabric;

// 1D: the route bits a worker's packet may use. On a ring of n chips at most n - 1 hops (2 bits
// each), since a longer route would cross the dateline again on VC1 and close a cycle of waits.
// A line needs no limit: a route past its end has no downstream.
constexpr uint32_t ring_route_mask(uint32_t topology, uint32_t ring_size) {
    if (topology != static_cast<uint32_t>(pf::Topology::Ring) || ring_size == 0) return ~0u;
    const uint32_t bits = 2 * (ring_size - 1);
    return bits >= 32 ? ~0u : (1u << bits) - 1;
}
static_assert(ring_route_mask(static_cast<uint32_t>(pf::Topology::Ring), 8) == 0x3FFF);
static_assert(ring_route_mask(static_cast<uint32_t>(pf::Topology::Ring), 2) == 0x3);
static_assert(ring_route_mask(static_cast<uint32_t>(pf::Topology::Line), 8) == ~0u);

// The lowest bit set in `bits` (31 for none). Not __builtin_ctz: on rv32im that pulls in
// libgcc's 256-B table, which the Wormhole 2D image's window has no room for.
constexpr uint32_t lowest_bit(uint32_t bits) {
    uint32_t i = 0;
    while (i < 31 && ((bits >> i) & 1) == 0) ++i;
    return i;
}
static_assert(lowest_bit(0b1000) == 3 && lowest_bit(1) == 0 && lowest_bit(0) == 31);

// 2D torus, a worker's packet taken by the router at the far end of its first link (its whole
// route is still in the header): at most ring - 1 hops per dimension along the trunk (counting
// the one that brought it here), and branches shorter than the column rings, so it crosses each
// dateline at most once.
inline bool torus_route_fits(uint32_t route, uint32_t route_ext, uint32_t branch_hops,
                             const pf::MeshRouterConfig& m) {
    const pf::Route r{route, route_ext, 0, 0};
    uint32_t dir = pf::opposite_dir(m.dir);  // the way it travels
    uint32_t hops[2] = {0, 0};               // [0] N/S, [1] E/W
    ++hops[dir & 1];
    for (uint32_t i = 0; i < pf::kMaxHops2D; ++i) {
        const uint32_t fwd = pf::hop_cmd(r, i) & ~pf::dir_bit(pf::opposite_dir(dir));
        if (fwd == 0) break;
        dir = (fwd & pf::dir_bit(dir)) != 0 ? dir : lowest_bit(fwd);
        ++hops[dir & 1];
    }
    const uint32_t branch_n = (branch_hops >> 4 * static_cast<uint32_t>(pf::MeshDirection::N)) & 15;
    const uint32_t branch_s = (branch_hops >> 4 * static_cast<uint32_t>(pf::MeshDirection::S)) & 15;
    return hops[1] < m.mesh_cols && hops[0] < m.mesh_rows && branch_n < m.mesh_rows &&
           branch_s < m.mesh_rows;
}

// 2D entry router (its link comes from another mesh): the route on from here for the packet's
// destination node (`dst_word`: dst_mesh | dst_device << 16), our own hop command first: to the
// device in this mesh, or to the exit node of the exit table at `exit_table` (one word per mesh:
// valid | direction << 8 | device) and out through its port. DstNode if there is no such route.
inline pf::BadPacket mesh_entry_route(uint32_t dst_word, const pf::MeshRouterConfig& m,
                                      uint32_t exit_table, pf::Route& out) {
    constexpr pf::BadPacket kBad = pf::BadPacket::DstNode;
    const uint32_t dst_mesh = dst_word & 0xFFFF, dst_device = (dst_word >> 16) & 0xFF;
    const uint32_t devices = m.mesh_rows * m.mesh_cols;
    uint32_t target = dst_device;
    bool leave = false;
    uint32_t exit_dir = 0;
    if (dst_mesh != m.mesh_id) {
        if (dst_mesh >= m.exit_count) return kBad;
        const uint32_t e = ld(exit_table + 4 * dst_mesh);
        if ((e & pf::kMeshExitValid) == 0) return kBad;
        target = e & 0xFF;
        exit_dir = (e >> 8) & 3;
        leave = true;
    }
    if (target >= devices) return kBad;
    uint32_t path[pf::kMaxHops2D] = {};
    uint32_t n = pf::mesh_path_xy(m.device_id / m.mesh_cols, m.device_id % m.mesh_cols,
                                  target / m.mesh_cols, target % m.mesh_cols, path);
    if (leave) {
        if (n >= pf::kMaxHops2D) return kBad;
        path[n++] = exit_dir;
    }
    // Our command (the first nibble) plus one per hop after us: at most kMaxHops2D in all.
    if (n + 1 > pf::kMaxHops2D || (n != 0 && path[0] == m.dir)) return kBad;
    const pf::Route rest = pf::mesh_route_path(path, n, !leave);
    const uint32_t mine = n == 0 ? pf::dir_bit(m.dir) : pf::dir_bit(path[0]);
    out.hops = rest.hops << 4 | mine;
    out.ext = rest.ext << 4 | rest.hops >> 28;
    return pf::BadPacket::None;
}

}  // namespace fabric::router
