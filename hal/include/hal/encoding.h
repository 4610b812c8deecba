// Pure (constexpr, no MMIO) address and field encodings for the NIU, the overlay streams and the
// Ethernet queues. The drivers (noc.h, stream.h, eth.h) encode with these; the simulator and the
// fake NIU decode with the same functions, so both sides of the register interface agree by
// construction. Arch differences come in as `const ArchMap&` (data), never as #ifdefs.
#pragma once

#include <stdint.h>

#include "hal/arch_map.h"

namespace hal {

// A NoC coordinate, in the coordinate space of the NoC it is used on.
struct NocXY {
    uint32_t x;
    uint32_t y;
};

// A unicast NoC address: tile (x, y) and a 36-bit address inside that tile.
struct NocAddr {
    uint32_t x;
    uint32_t y;
    uint64_t addr;
};

// A multicast rectangle, inclusive on both ends. start > end on an axis wraps around the grid.
struct NocRect {
    uint32_t x_start;
    uint32_t y_start;
    uint32_t x_end;
    uint32_t y_end;
};

namespace noc {

[[gnu::always_inline]] constexpr uint32_t niu_base(uint32_t noc_id) {
    return common::kNocRegsBase + noc_id * common::kNocInstanceStride;
}
[[gnu::always_inline]] constexpr uint32_t cmd_buf_base(const ArchMap& a, uint32_t noc_id,
                                                       uint32_t cmd_buf) {
    return niu_base(noc_id) + cmd_buf * a.noc_cmd_buf_stride;
}
[[gnu::always_inline]] constexpr uint32_t status_addr(uint32_t noc_id, uint32_t counter_index) {
    return niu_base(noc_id) + kStatusBase + 4 * counter_index;
}
constexpr uint32_t cfg_addr(uint32_t noc_id, uint32_t cfg_index) {
    return niu_base(noc_id) + kCfgBase + 4 * cfg_index;
}

[[gnu::always_inline]] constexpr bool coord_ok(uint32_t c) {
    return c < kCoordLimit;
}
constexpr bool xy_ok(NocXY p) {
    return coord_ok(p.x) && coord_ok(p.y);
}
[[gnu::always_inline]] constexpr bool addr_ok(const NocAddr& a) {
    return coord_ok(a.x) && coord_ok(a.y) && a.addr < kLocalAddrLimit;
}
[[gnu::always_inline]] constexpr bool rect_ok(const NocRect& r) {
    return coord_ok(r.x_start) && coord_ok(r.y_start) && coord_ok(r.x_end) && coord_ok(r.y_end);
}

// 12-bit unicast coordinate field (also the NOC_NODE_ID layout).
[[gnu::always_inline]] constexpr uint32_t unicast_coord(uint32_t x, uint32_t y) {
    return (x & kCoordMask) | ((y & kCoordMask) << kCoordBits);
}
constexpr NocXY decode_unicast_coord(uint32_t field) {
    return NocXY{field & kCoordMask, (field >> kCoordBits) & kCoordMask};
}

// 24-bit multicast rectangle field.
[[gnu::always_inline]] constexpr uint32_t mcast_coord(const NocRect& r) {
    return ((r.x_end & kCoordMask) << kMcastEndXShift) |
           ((r.y_end & kCoordMask) << kMcastEndYShift) |
           ((r.x_start & kCoordMask) << kMcastStartXShift) |
           ((r.y_start & kCoordMask) << kMcastStartYShift);
}
constexpr NocRect decode_mcast_coord(uint32_t field) {
    return NocRect{
        (field >> kMcastStartXShift) & kCoordMask, (field >> kMcastStartYShift) & kCoordMask,
        (field >> kMcastEndXShift) & kCoordMask, (field >> kMcastEndYShift) & kCoordMask};
}

// The three words of a TARG_ADDR or RET_ADDR register triple.
struct AddrRegs {
    uint32_t lo;
    uint32_t mid;
    uint32_t hi;
};

// Encode a tile-local address and a coordinate field (unicast or multicast) for `a`.
[[gnu::always_inline]] constexpr AddrRegs encode_addr(const ArchMap& a, uint64_t local,
                                                      uint32_t coord_field) {
    AddrRegs r{static_cast<uint32_t>(local), static_cast<uint32_t>(local >> 32) & kMidLocalMask, 0};
    if (a.noc.coord_reg == NocCoordReg::Hi) {
        r.hi = coord_field << a.noc.coord_shift;
    } else {
        r.mid |= coord_field << a.noc.coord_shift;
    }
    return r;
}

struct DecodedAddr {
    uint64_t local;
    uint32_t coord_field;  // 24 bits: a unicast field is in the low 12
};
constexpr DecodedAddr decode_addr(const ArchMap& a, const AddrRegs& r) {
    const uint32_t coord_src = a.noc.coord_reg == NocCoordReg::Hi ? r.hi : r.mid;
    return DecodedAddr{(static_cast<uint64_t>(r.mid & kMidLocalMask) << 32) | r.lo,
                       (coord_src >> a.noc.coord_shift) & 0xFFFFFF};
}

// NOC_CTRL static-VC bits.
[[gnu::always_inline]] constexpr uint32_t static_vc(uint32_t vc) {
    return kCtrlVcStatic | ((vc << kCtrlStaticVcShift) & kCtrlStaticVcMask);
}
constexpr uint32_t ctrl_vc(uint32_t ctrl) {
    return (ctrl & kCtrlStaticVcMask) >> kCtrlStaticVcShift;
}

// NOC_PACKET_TAG for a transaction ID.
[[gnu::always_inline]] constexpr uint32_t packet_tag(uint32_t trid) {
    return (trid & kMaxTransactionId) << kTagTransactionIdShift;
}
constexpr uint32_t tag_trid(uint32_t tag) {
    return (tag >> kTagTransactionIdShift) & kMaxTransactionId;
}

// NOC_AT_LEN_BE for an inline write of a 4-byte-aligned word: the byte-enable mask is relative
// to the enclosing aligned 16 bytes (WH rounds the address down to 16 for L1 destinations;
// MMIO destinations ignore the mask and store 4 bytes).
[[gnu::always_inline]] constexpr uint32_t inline_byte_enable(uint64_t addr, uint32_t be4) {
    return (be4 & 0xF) << (static_cast<uint32_t>(addr) & 0xF);
}

// NOC_AT_LEN_BE for an INCR_GET atomic on the word at `addr`, wrapping at bit `wrap` + 1.
[[gnu::always_inline]] constexpr uint32_t atomic_incr_len_be(uint64_t addr, uint32_t wrap) {
    return (kAtInsIncrGet << kAtInsShift) | ((wrap & 0x1F) << kAtWrapShift) |
           (((static_cast<uint32_t>(addr) >> 2) & 0x3) << kAtInd32Shift) | (0u << kAtInd32SrcShift);
}

}  // namespace noc

namespace stream {

// Address of register `index` of overlay stream `stream_id`.
constexpr uint32_t reg_addr(uint32_t stream_id, uint32_t index) {
    return common::kStreamRegsBase + stream_id * common::kStreamRegSpace + index * 4;
}

// The value to write to a *_SPACE_AVAILABLE_UPDATE register to add `delta` to the 17-bit
// words-free counter (negative subtracts). Only the counter field is set.
constexpr uint32_t encode_words_free_delta(int32_t delta) {
    return (static_cast<uint32_t>(delta) & kWordsFreeMask) << kWordsFreeIncShift;
}
// What a write of `value` to the update register adds to the counter (mod 2^17).
constexpr uint32_t words_free_delta_of(uint32_t value) {
    return (value >> kWordsFreeIncShift) & kWordsFreeMask;
}
// A delta is representable iff it fits a 17-bit two's-complement field.
constexpr bool delta_ok(int32_t delta) {
    return delta >= -(1 << (kWordsFreeBits - 1)) && delta < (1 << (kWordsFreeBits - 1));
}

}  // namespace stream

namespace eth {

constexpr uint32_t txq_base(uint32_t q) {
    return common::kEthTxqBase + q * common::kEthTxqStride;
}
constexpr uint32_t txq_reg(uint32_t q, uint32_t offset) {
    return txq_base(q) + offset;
}
constexpr uint32_t rxq_reg(const ArchMap& a, uint32_t q, uint32_t offset) {
    return a.eth.rxq_base + q * kRxqStride + offset;
}

}  // namespace eth

}  // namespace hal
