// Anything a NOC transaction or an Ethernet frame can land in: a tile's L1 and registers, a DRAM
// bank. The NOC and Ethernet models talk to targets only through this interface, so they are
// tested on plain memories and run unchanged against Verilated tiles.
#pragma once

#include <cstdint>
#include <span>

namespace sim {

class Endpoint {
  public:
    virtual ~Endpoint() = default;
    // Each returns false when nothing answers at [addr, addr + size): the caller records a bus
    // error. Accesses are byte-exact; no partial effect on failure.
    virtual bool write(uint64_t addr, std::span<const uint8_t> bytes) = 0;
    virtual bool read(uint64_t addr, std::span<uint8_t> bytes) = 0;
};

}  // namespace sim
