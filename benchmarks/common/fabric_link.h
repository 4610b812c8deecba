// The modelled Ethernet link (hal::eth, sim/model/eth/README.md, seeds/002): the capacity
// eth_bench, fabric_bench and mesh_bench compare their rates with.
#pragma once

#include <cstdint>

#include "hal/arch_map.h"
#include "protocol/fabric.h"

namespace bench {

// 100 Gb/s per direction at the WH 1 GHz: 12.5 B/cycle.
inline constexpr double kLinkBytesPerCycle = hal::eth::kLinkMbps / 8.0 / hal::kWormholeB0.aiclk_mhz;
inline constexpr uint32_t kFrameOverhead =
    hal::eth::kFrameOverheadBytes;  // wire bytes per frame beside its payload
inline constexpr uint32_t kMaxFramePayload =
    hal::eth::kMaxFramePayload;  // 1488: MAX_PKT_SIZE_BYTES in 16-B words
inline constexpr uint32_t kCreditWireBytes =
    16 + kFrameOverhead;  // the "packets sent" register write

// Frames one data command of `bytes` takes on the wire.
constexpr uint32_t link_frames(uint32_t bytes) {
    return (bytes + kMaxFramePayload - 1) / kMaxFramePayload;
}

// Frames a packet of `payload` bytes and its header take on the wire.
constexpr uint32_t fabric_packet_frames(uint32_t payload) {
    return link_frames(payload + static_cast<uint32_t>(sizeof(protocol::fabric::PacketHeader)));
}

// Payload bytes per cycle one link direction carries for fabric packets of `payload` bytes:
// P / (P + 64-B header + 50 B per frame + the 16-B credit write and its frame) x 12.5.
constexpr double fabric_link_capacity(uint32_t payload) {
    const double wire = payload + static_cast<double>(sizeof(protocol::fabric::PacketHeader)) +
                        fabric_packet_frames(payload) * kFrameOverhead + kCreditWireBytes;
    return kLinkBytesPerCycle * payload / wire;
}

}  // namespace bench
