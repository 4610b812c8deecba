// Configs and headers for the router's host unit tests, written out by hand (not by the host's
// planner) so each test says exactly what a router is given.
#pragma once

#include <cstdint>
#include <cstring>

#include "hal/arch.h"
#include "hal/testing/fake_mmio.h"
#include "protocol/fabric.h"

namespace fw_test {

namespace pf = protocol::fabric;

// A fake register file with an L1 the router's words live in, installed for the test's scope.
struct FakeCore {
    hal::testing::FakeRegisterFile fake{hal::kArch.eth_l1_size};
    hal::testing::ScopedFakeMmio use{fake};

    void put(uint32_t addr, const void* data, uint32_t bytes) {
        std::memcpy(fake.l1_base() + addr, data, bytes);
    }
    template <typename T>
    void put(uint32_t addr, const T& value) {
        put(addr, &value, sizeof(T));
    }
};

// A router of a line: 8 slots on ch0 and ch1 (a line has no VC1), 16 on rx0, master. (Slot
// counts small enough for every config here to fit a Wormhole router's L1 block.)
inline pf::RouterConfig line_config() {
    pf::RouterConfig c{};
    c.magic = pf::kRouterConfigMagic;
    c.version = pf::kProtocolVersion;
    c.topology = static_cast<uint32_t>(pf::Topology::Line);
    c.chip_id = 0;
    c.eth_channel = 8;
    c.peer_chip_id = 1;
    c.peer_eth_channel = 0;
    c.is_master = 1;
    c.payload_bytes = pf::kDefaultPayloadBytes;
    c.sender_slots[0] = c.sender_slots[1] = 8;
    c.receiver_slots[0] = 16;
    c.has_downstream = 1;
    c.downstream_x = 1;
    c.downstream_y = 0;
    c.handshake_timeout_us = c.ready_timeout_us = c.drain_timeout_us = c.progress_timeout_us = 1000;
    return c;
}

// The same on a ring of `chips`: ch2 and rx1 for VC1.
inline pf::RouterConfig ring_config(uint32_t chips) {
    pf::RouterConfig c = line_config();
    c.topology = static_cast<uint32_t>(pf::Topology::Ring);
    c.sender_slots[2] = 8;
    c.receiver_slots[0] = c.receiver_slots[1] = 6;  // 36 slots: what a WH router block holds
    c.ring_size = chips;
    return c;
}

// A 2D router facing `dir` on a rows x cols mesh, fed by (and feeding) every other direction.
struct MeshRouter {
    pf::RouterConfig config{};
    pf::MeshRouterConfig mesh{};
};
inline MeshRouter mesh_router(pf::MeshDirection dir, uint32_t rows = 4, uint32_t cols = 4,
                              uint32_t device = 5) {
    MeshRouter r;
    r.config = line_config();
    r.config.topology = static_cast<uint32_t>(pf::Topology::Mesh);
    r.config.has_downstream = 0;
    r.config.receiver_slots[0] = 8;
    const uint32_t d = static_cast<uint32_t>(dir);
    for (uint32_t f = 0; f < pf::kMeshDirections; ++f) {
        const bool other = f != d;
        r.config.sender_slots[pf::kMeshVc0Channel0 + f] = other ? 4 : 0;
        r.config.sender_slots[pf::kMeshVc1Channel0 + f] = 0;
        r.mesh.neighbor[f] = other ? pf::kMeshNeighborPresent | (f + 1) : 0;  // core (f + 1, 0)
    }
    r.mesh.magic = pf::kMeshConfigMagic;
    r.mesh.dir = d;
    r.mesh.mesh_rows = rows;
    r.mesh.mesh_cols = cols;
    r.mesh.device_id = device;
    return r;
}

inline uint32_t code(pf::BadPacket b) {
    return static_cast<uint32_t>(b);
}

// A header of `type` with the magic, `bytes` of payload, from sender channel `src`, on `route`.
inline pf::PacketHeader header(pf::NocSendType type, uint32_t route, uint32_t bytes = 64,
                               uint32_t src = 0) {
    pf::PacketHeader h{};
    h.magic = pf::kHeaderMagic;
    h.ttl = pf::kDefaultTtl;
    h.send_type = static_cast<uint8_t>(type);
    h.payload_bytes = static_cast<uint16_t>(bytes);
    h.src_channel = static_cast<uint8_t>(src);
    h.route = route;
    h.cmd.write.dst = {0x20000, 1, 1, 0};
    return h;
}

}  // namespace fw_test
