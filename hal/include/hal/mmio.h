// The one MMIO seam. Every register access and every access to memory that another agent writes
// behind the compiler's back (the host, the peer core over Ethernet, the NoC) goes through the
// functions in this file; no other file in the project uses `volatile`.
//
// Two backends, chosen at compile time for the whole program:
//
//   hardware (the default when compiling for RISC-V): read32/write32 are single volatile 32-bit
//     loads and stores at the given address; l1_ptr is the identity map. They are always-inline
//     and add no code beyond the load or store itself.
//
//   fake (define FABRIC_HAL_FAKE_MMIO, e.g. by linking the CMake target hal_fake_mmio): accesses go
//     to a test-installed mmio::Backend (see hal/testing/fake_mmio.h), which records writes,
//     scripts reads, runs side effects and provides host memory that stands in for L1. A host build
//     that includes this header without choosing the fake backend is an error: real addresses such
//     as 0xFFB20000 mean nothing in a host process.
//
// Mixing the backends in one program is not supported (the macro must be the same for every
// translation unit of a binary; the CMake targets take care of that).
#pragma once

#include <stdint.h>

#if defined(FABRIC_HAL_FAKE_MMIO)
#define FABRIC_HAL_MMIO_FAKE 1
#elif defined(__riscv)
#define FABRIC_HAL_MMIO_FAKE 0
#else
#error "hal/mmio.h: host builds must define FABRIC_HAL_FAKE_MMIO (link hal_fake_mmio)"
#endif

namespace hal::mmio {

// The unit of every volatile access below on hardware: a word (or byte) wrapped in a type of its
// own, so that type-based alias analysis knows a register or shared-memory store cannot change
// an ordinary uint32_t object (the router's state, on the stack): without it, every field is
// loaded again after each MMIO store.
struct Word32 {
    uint32_t v;
};
struct Word8 {
    uint8_t v;
};

#if FABRIC_HAL_MMIO_FAKE
// What a fake register file implements. Addresses are the core's 32-bit physical addresses.
class Backend {
  public:
    virtual uint32_t read32(uint32_t addr) = 0;
    virtual void write32(uint32_t addr, uint32_t value) = 0;
    // Host memory standing in for the core's L1 (byte address 0 = l1_base()[0]).
    virtual uint8_t* l1_base() = 0;
    virtual uint32_t l1_size() const = 0;

  protected:
    ~Backend() = default;
};

// The installed backend (ScopedFakeMmio in hal/testing/fake_mmio.h sets and restores it).
inline Backend* g_backend = nullptr;

inline Backend& backend() {
    if (g_backend == nullptr) {
        __builtin_trap();  // a HAL call in a host test that installed no fake register file
    }
    return *g_backend;
}
#endif

// Read the 32-bit register at `addr`.
[[nodiscard, gnu::always_inline]] inline uint32_t read32(uint32_t addr) {
#if FABRIC_HAL_MMIO_FAKE
    return backend().read32(addr);
#else
    return reinterpret_cast<const volatile Word32*>(static_cast<uintptr_t>(addr))->v;
#endif
}

// Write the 32-bit register at `addr`. Stores are issued in program order relative to other
// read32/write32 calls (volatile accesses are not reordered by the compiler).
[[gnu::always_inline]] inline void write32(uint32_t addr, uint32_t value) {
#if FABRIC_HAL_MMIO_FAKE
    backend().write32(addr, value);
#else
    reinterpret_cast<volatile Word32*>(static_cast<uintptr_t>(addr))->v = value;
#endif
}

// Load a memory word that another agent may change at any time (host-written termination word,
// a counter the peer updates over Ethernet). Never cached in a register by the compiler.
[[nodiscard, gnu::always_inline]] inline uint32_t load_shared(const uint32_t* p) {
    return reinterpret_cast<const volatile Word32*>(p)->v;
}

// Store a memory word another agent reads (status word, heartbeat).
[[gnu::always_inline]] inline void store_shared(uint32_t* p, uint32_t value) {
    reinterpret_cast<volatile Word32*>(p)->v = value;
}
// The same for one byte of such memory (a field of a header another agent reads).
[[gnu::always_inline]] inline void store_shared(uint8_t* p, uint8_t value) {
    reinterpret_cast<volatile Word8*>(p)->v = value;
}

// A pointer to local L1 at byte address `addr`. On hardware this is the identity map; under the
// fake it points into the fake's L1 buffer (and traps if the object does not fit in it).
template <typename T>
[[nodiscard, gnu::always_inline]] inline T* l1_ptr(uint32_t addr) {
#if FABRIC_HAL_MMIO_FAKE
    Backend& b = backend();
    if (static_cast<uint64_t>(addr) + sizeof(T) > b.l1_size()) {
        __builtin_trap();
    }
    return reinterpret_cast<T*>(b.l1_base() + addr);
#else
    return reinterpret_cast<T*>(static_cast<uintptr_t>(addr));
#endif
}

// The L1 byte address of an object in local L1 (the inverse of l1_ptr), for handing buffers to the
// NoC or the Ethernet queues.
[[nodiscard, gnu::always_inline]] inline uint32_t l1_addr(const void* p) {
#if FABRIC_HAL_MMIO_FAKE
    return static_cast<uint32_t>(static_cast<const uint8_t*>(p) - backend().l1_base());
#else
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
#endif
}

// Stop the compiler from moving ordinary memory accesses across this point (no instruction is
// emitted; the WH ERISC executes `fence` as a no-op anyway).
[[gnu::always_inline]] inline void compiler_barrier() {
    asm volatile("" ::: "memory");
}

}  // namespace hal::mmio
