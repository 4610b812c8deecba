// The register facts the HAL tests check against, restated here as literals from
// fabric-protocol.md §5.3-5.5 and the ISA documentation rather than taken from arch_map.h, so a
// wrong value in the map fails a test instead of agreeing with itself.
#pragma once

#include <stdint.h>

#include <vector>

#include "hal/arch_map.h"
#include "hal/testing/fake_mmio.h"

namespace facts {

using hal::testing::RegWrite;

struct Wormhole {
    static constexpr const hal::ArchMap& map = hal::kWormholeB0;
    static constexpr const char* name = "wormhole_b0";
    static constexpr uint32_t cmd_buf_stride = 0x400;
    static constexpr uint32_t at_data = 0x24;
    static constexpr uint32_t cmd_ctrl = 0x28;
    static constexpr uint32_t node_id = 0x2C;
    static constexpr uint32_t clear_trid = 0x50;
    static constexpr bool has_at_len_be_1 = false;
    static constexpr uint32_t max_burst = 8192;
    static constexpr bool inline_l1_refused = false;
    // Stream register indices.
    static constexpr uint32_t stream_scratch = 0;
    static constexpr uint32_t stream_buf_size = 4;
    static constexpr uint32_t stream_update = 34;
    static constexpr uint32_t stream_avail = 64;
    static constexpr uint32_t eth_queues = 2;

    // TARG/RET register triple: coordinates at bit 4 of MID, above address bits 35..32.
    static std::vector<RegWrite> addr(uint32_t reg_lo, uint64_t local, uint32_t coord) {
        return {{reg_lo, static_cast<uint32_t>(local)},
                {reg_lo + 4, static_cast<uint32_t>(local >> 32) | (coord << 4)}};
    }
};

struct Blackhole {
    static constexpr const hal::ArchMap& map = hal::kBlackhole;
    static constexpr const char* name = "blackhole";
    static constexpr uint32_t cmd_buf_stride = 0x800;
    static constexpr uint32_t at_data = 0x28;
    static constexpr uint32_t cmd_ctrl = 0x40;
    static constexpr uint32_t node_id = 0x44;
    static constexpr uint32_t clear_trid = 0x60;
    static constexpr bool has_at_len_be_1 = true;
    static constexpr uint32_t max_burst = 16384;
    static constexpr bool inline_l1_refused = true;
    static constexpr uint32_t stream_scratch = 4;
    static constexpr uint32_t stream_buf_size = 10;
    static constexpr uint32_t stream_update = 270;
    static constexpr uint32_t stream_avail = 297;
    static constexpr uint32_t eth_queues = 3;

    // TARG/RET register triple: address bits 35..32 in MID, coordinates in HI from bit 0.
    static std::vector<RegWrite> addr(uint32_t reg_lo, uint64_t local, uint32_t coord) {
        return {{reg_lo, static_cast<uint32_t>(local)},
                {reg_lo + 4, static_cast<uint32_t>(local >> 32)},
                {reg_lo + 8, coord}};
    }
};

// NIU base of NoC n and command buffer b.
template <typename F>
constexpr uint32_t cmd_buf(uint32_t noc, uint32_t buf) {
    return 0xFFB20000 + noc * 0x10000 + buf * F::cmd_buf_stride;
}

inline std::vector<RegWrite>& operator+=(std::vector<RegWrite>& a, const std::vector<RegWrite>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace facts
