// Constants of the NOC model shared by its pipeline stages: the NoC facts hal/arch_map.h does not
// carry yet, and the router's port / VC-slot numbering derived from them.
#pragma once

#include <cstdint>

#include "hal/arch_map.h"
#include "noc/network.h"

namespace sim::noc {

// ---- TODO(hal): move to arch_map.h ------------------------------------------------------------
// NoC facts the model needs that hal/arch_map.h does not carry (yet). Sources: fabric-protocol.md
// §5.5 ("16 NoC VCs; bcast VCs start 4") and the ISA doc's NoC pages (alignment table, atomics).
inline constexpr uint32_t kNumVcNumbers = 8;  // NOC_CTRL static VC field is 3 bits (bits 15..13)
inline constexpr uint32_t kNumVcs = 16;       // VCs per port: VC number x dateline bit
// Class 0b11: responses (acks, read data, atomic returns). ASSUMPTION: the class is reserved for
// responses; the exact response VC of the silicon is not documented here.
inline constexpr uint32_t kResponseVc = 6;
// MODEL-INTERNAL: a multicast's unicast leg to its start corner travels on VC number 7 so that
// leg and the tree never share a buffer (each crosses a ring's wrap link at most once, which the
// dateline needs). Not a silicon fact.
inline constexpr uint32_t kToStartVc = 7;
inline constexpr uint32_t kOtherAlignment = 32;     // data from a non-L1/MMIO address: C32
inline constexpr uint32_t kMmioWordBytes = 4;       // MMIO accesses: 4-byte aligned, 4 bytes
inline constexpr uint32_t kBeWriteBytes = 32;       // NOC_CMD_WR_BE (not inline): 32 B, 32-bit mask
inline constexpr uint32_t kInlineL1Bytes = 16;      // inline write to L1: aligned 16 B range (DA16)
inline constexpr uint32_t kAtomicRegionBytes = 16;  // atomics act on a word of an aligned 16 B
inline constexpr uint32_t kAtInd32Mask = 0x3;       // NOC_AT_IND_32 field width
inline constexpr uint32_t kAtWrapMask = 0x1F;       // NOC_AT_WRAP field width
inline constexpr uint32_t kAtInsMask = 0xF;         // NOC_AT_INS field width
inline constexpr uint32_t kNumCfgRegs = 64;         // NOC_CFG(0..63) between kCfgBase, kStatusBase
inline constexpr uint32_t kTridCounterMask = 0xFF;  // per-transaction-ID counters are 8 bits
// ------------------------------------------------------------------------------------------------

static_assert(hal::noc::kCfgBase + 4 * kNumCfgRegs <= hal::noc::kStatusBase);
static_assert(hal::noc::kVcMulticastMax < kResponseVc && kResponseVc < kToStartVc &&
              kToStartVc < kNumVcNumbers);

// Router ports as indices (Port in network.h).
inline constexpr uint32_t kPortX = static_cast<uint32_t>(Port::X);
inline constexpr uint32_t kPortY = static_cast<uint32_t>(Port::Y);
inline constexpr uint32_t kPortLocal = static_cast<uint32_t>(Port::Local);
// Input buffers: one per VC slot (VC number * 2 + dateline bit) on every input port; input index =
// port * kSlots + slot. X and Y outputs have one output VC per slot (output index likewise).
inline constexpr uint32_t kSlots = kNumVcs;
inline constexpr uint32_t kInputs = kNumPorts * kSlots;
inline constexpr uint32_t kNone = 0xFFFFFFFF;

static_assert(kSlots <= 32, "input-port occupancy is kept in a 32-bit mask");
static_assert(kInputs <= 256, "inputs are named in bytes (allocation candidates, grants)");

// Number of output ports in a 3-bit port mask.
constexpr uint32_t ports_in(uint32_t mask) {
    return (mask & 1u) + ((mask >> 1) & 1u) + ((mask >> 2) & 1u);
}

}  // namespace sim::noc
