// L1 words a firmware shares with other agents (the host, a peer over Ethernet, producers over the
// NoC), read and written through the MMIO seam so the compiler never caches them, and whole
// structs copied word by word.
#pragma once

#include <stdint.h>

#include "hal/mmio.h"

namespace fabric {

inline uint32_t ld(uint32_t addr) {
    return hal::mmio::load_shared(hal::mmio::l1_ptr<const uint32_t>(addr));
}
inline void st(uint32_t addr, uint32_t value) {
    hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(addr), value);
}

// A struct and its words. Copies between L1 and a struct go word by word through the union
// (GCC defines reading the other member): a memcpy would be a call to picolibc's byte loop,
// ~6 instructions per byte (a router reads a 64-B header per packet).
template <typename T>
union Words {
    static_assert(sizeof(T) % 4 == 0);
    T s;
    uint32_t w[sizeof(T) / 4];
};
// Unrolled: the loads are independent, so they overlap (an L1 load is 7 cycles to its data); as a
// loop each waits for the one before (a handshake message: ~70 cycles instead of ~280).
template <typename T>
void load_struct(T& out, uint32_t addr) {
    Words<T> u;
#pragma GCC unroll 32
    for (uint32_t i = 0; i < sizeof(T) / 4; ++i) u.w[i] = ld(addr + 4 * i);
    out = u.s;
}
template <typename T>
void store_struct(uint32_t addr, const T& in) {
    Words<T> u;
    u.s = in;
    for (uint32_t i = 0; i < sizeof(T) / 4; ++i) st(addr + 4 * i, u.w[i]);
}

}  // namespace fabric
