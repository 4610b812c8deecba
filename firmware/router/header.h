// A packet header as the receiving router reads it: the words it loads from the slot and the
// checks of the header itself and of the NoC command it carries. The route's checks depend on
// the topology (topology.h); classify() (classify.h) puts them together.
//
// L1 loads take 7 cycles each, so a take loads only the three words every packet needs (meta:
// payload_bytes | send_type | src_channel, route, magic | ttl | branch_hops), and the
// command's words only for a packet delivered here.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "fabric/l1_words.h"
#include "hal/encoding.h"
#include "protocol/fabric.h"

namespace fabric::router {

namespace pf = protocol::fabric;

// Header words by index (4 B each) in the slot.
inline constexpr uint32_t kHdrMetaWord = offsetof(pf::PacketHeader, payload_bytes) / 4;
inline constexpr uint32_t kHdrRouteWord = offsetof(pf::PacketHeader, route) / 4;
inline constexpr uint32_t kHdrMagicWord = offsetof(pf::PacketHeader, magic) / 4;
inline constexpr uint32_t kHdrRouteExtWord = offsetof(pf::PacketHeader, route_ext) / 4;
inline constexpr uint32_t kHdrDstNodeWord = offsetof(pf::PacketHeader, dst_mesh) / 4;
static_assert(offsetof(pf::PacketHeader, payload_bytes) == 4 * kHdrMetaWord &&
              offsetof(pf::PacketHeader, send_type) == 4 * kHdrMetaWord + 2 &&
              offsetof(pf::PacketHeader, src_channel) == 4 * kHdrMetaWord + 3);
static_assert(offsetof(pf::PacketHeader, ttl) == 4 * kHdrMagicWord + 1 &&
              offsetof(pf::PacketHeader, branch_hops) == 4 * kHdrMagicWord + 2 &&
              offsetof(pf::PacketHeader, dst_device) == 4 * kHdrDstNodeWord + 2);
static_assert(offsetof(pf::PacketHeader, cmd) == 0);

// The three words every take loads, and the fields in them.
struct HeaderHead {
    uint32_t meta = 0;
    uint32_t route = 0;
    uint32_t magic = 0;

    uint32_t payload_bytes() const { return meta & 0xFFFF; }
    uint32_t send_type() const { return (meta >> 16) & 0xFF; }
    uint32_t src_channel() const { return meta >> 24; }
    bool has_magic() const { return (magic & 0xFF) == pf::kHeaderMagic; }
    uint32_t ttl() const { return (magic >> 8) & 0xFF; }
    uint32_t branch_hops() const { return magic >> 16; }
};

// Before a forward: the next router gets the packet with one hop less to live (the TTL is the
// magic word's second byte). The same on every topology; the route's rewrite is the topology's.
inline void pass_ttl_on(uint32_t slot, const HeaderHead& h) {
    st(slot + 4 * kHdrMagicWord, h.magic - (1u << 8));
}

inline HeaderHead read_head(uint32_t slot) {
    return {ld(slot + 4 * kHdrMetaWord), ld(slot + 4 * kHdrRouteWord),
            ld(slot + 4 * kHdrMagicWord)};
}

// NocCommand words each send type uses, 4 bits per NocSendType (a table would be an L1 load).
inline constexpr uint32_t kCmdWordsPacked =
    (sizeof(pf::UnicastWriteCmd) / 4) | (sizeof(pf::InlineWriteCmd) / 4) << 4 |
    (sizeof(pf::AtomicIncCmd) / 4) << 8 | (sizeof(pf::FusedWriteAtomicIncCmd) / 4) << 12 |
    (sizeof(pf::ScatterWriteCmd) / 4) << 16;
static_assert(static_cast<uint32_t>(pf::NocSendType::kCount) == 5 &&
              sizeof(pf::ScatterWriteCmd) / 4 < 16);
constexpr uint32_t cmd_words(uint32_t send_type) {
    return (kCmdWordsPacked >> (4 * send_type)) & 15;
}

// The header's own checks, in the order reported: magic, time to live (the packet is taken off a
// link: one hop more), src_channel (one of the `senders` channels, so its credit can be
// returned), send type, payload (at most `payload_limit`).
inline pf::BadPacket check_head(const HeaderHead& h, uint32_t senders, uint32_t payload_limit) {
    using B = pf::BadPacket;
    if (!h.has_magic()) return B::Magic;
    if (pf::ttl_expired(h.ttl())) return B::TtlExpired;
    if (h.src_channel() >= senders) return B::SrcChannel;
    if (h.send_type() >= static_cast<uint32_t>(pf::NocSendType::kCount)) return B::SendType;
    if (h.payload_bytes() > payload_limit) return B::PayloadBytes;
    return B::None;
}

// A destination a packet may name: a core coordinate and an L1/MMIO range below the NoC's
// register window of the target (the model and silicon refuse anything above), `align`-aligned.
constexpr bool target_ok(uint32_t x, uint32_t y, uint32_t addr, uint32_t bytes, uint32_t align) {
    return hal::noc::coord_ok(x) && hal::noc::coord_ok(y) && addr % align == 0 &&
           static_cast<uint64_t>(addr) + bytes <= hal::noc::kMmioStart;
}
constexpr bool target_ok(const pf::NocTarget& t, uint32_t bytes, uint32_t align) {
    return target_ok(t.x, t.y, t.addr, bytes, align);
}
// A UnicastWrite's target (its payload is 16-B aligned in the slot, so the destination must be
// too, to be congruent) and size; `xy` is the NocTarget word holding x (bits 0-7), y (8-15).
constexpr bool unicast_write_ok(uint32_t addr, uint32_t xy, uint32_t bytes) {
    return bytes != 0 && target_ok(xy & 0xFF, (xy >> 8) & 0xFF, addr, bytes, 16);
}
static_assert(offsetof(pf::NocTarget, x) == 4 && offsetof(pf::NocTarget, y) == 5);

// The checks of the NoC command a packet delivered here executes: every target as the NoC write
// would check it (payload writes 16-B aligned: their sources are 16-B aligned offsets in the
// slot; inline writes and atomics 4-B), sizes non-zero and within the payload.
inline pf::BadPacket check_command(const pf::PacketHeader& h) {
    using B = pf::BadPacket;
    const uint32_t bytes = h.payload_bytes;
    const auto bad_target = [](bool ok) { return ok ? B::None : B::Target; };
    switch (static_cast<pf::NocSendType>(h.send_type)) {
        case pf::NocSendType::UnicastWrite:
            return bad_target(bytes != 0 && target_ok(h.cmd.write.dst, bytes, 16));
        case pf::NocSendType::InlineWrite:
            return bad_target(target_ok(h.cmd.inline_write.dst, 4, 4));
        case pf::NocSendType::AtomicInc:
            return bad_target(target_ok(h.cmd.atomic.dst, 4, 4));
        case pf::NocSendType::FusedWriteAtomicInc:
            return bad_target(bytes != 0 && target_ok(h.cmd.fused.dst, bytes, 16) &&
                              target_ok(h.cmd.fused.sem, 4, 4));
        case pf::NocSendType::ScatterWrite: {
            const pf::ScatterWriteCmd& sc = h.cmd.scatter;
            if (sc.chunk_count < 2 || sc.chunk_count > pf::kScatterMaxChunks) return B::Scatter;
            uint32_t sum = 0;
            for (uint32_t i = 0; i + 1 < sc.chunk_count; ++i) {
                // Each chunk starts 16-B aligned in the slot, so every size but the last is a
                // multiple of 16; the last is the rest and must not be empty.
                if (sc.chunk_bytes[i] == 0 || sc.chunk_bytes[i] % 16 != 0) return B::Scatter;
                if (!target_ok(sc.dst[i], sc.chunk_bytes[i], 16)) return B::Target;
                sum += sc.chunk_bytes[i];
            }
            if (sum >= bytes) return B::Scatter;
            return bad_target(target_ok(sc.dst[sc.chunk_count - 1], bytes - sum, 16));
        }
        default:
            return B::SendType;
    }
}

}  // namespace fabric::router
