// The NoC alignment rules (ISA doc, "NoC Address Alignment"), checked where a request is served.
// Endpoints attached as EndpointKind::Tile have L1 below hal::noc::kMmioStart and MMIO above;
// everything at an Other endpoint (DRAM, PCIe) is "other".
#pragma once

#include <cstdint>

#include "noc/network.h"

namespace sim::noc {

enum class AddrClass : uint8_t { L1, Mmio, Other };

AddrClass addr_class(EndpointKind kind, uint64_t addr);

// Requests whose NOC_AT_LEN_BE is a length (reads, plain writes): source and destination
// congruent mod 16 from an L1 source, mod 32 from an other one; MMIO involvement needs
// 4-byte-aligned, 4-byte accesses.
bool length_alignment_ok(AddrClass src_class, uint64_t src, AddrClass dst_class, uint64_t dst,
                         uint32_t len);
// NOC_CMD_WR_BE writes: 32-byte-aligned source and destination, or to MMIO a 4-byte-aligned
// destination congruent with the source mod 16.
bool byte_enable_alignment_ok(AddrClass dst_class, uint64_t src, uint64_t dst);

}  // namespace sim::noc
