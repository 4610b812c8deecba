// What travels through the NOC model: packets (a header flit plus data flits), the flits that
// refer to them, and the pool that owns every packet in flight.
//
// A packet is created when an NIU launches a request (or a target answers one) and stays in the
// pool until its last copy has been delivered or dropped; flits in router buffers carry only its
// id. Multicast copies share one packet: `live` counts the copies still travelling.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "noc/network.h"

namespace sim::noc {

enum class PktType : uint8_t { Write, InlineWrite, Read, Atomic, WriteAck, ReadResp, AtomicResp };
const char* to_string(PktType type);

// Multicast progress carried with each copy of a flit: heading for the rectangle's start corner,
// on the trunk (major axis) or on a branch (minor axis). Unicast flits stay at kBranchToStart.
inline constexpr uint8_t kBranchToStart = 0;
inline constexpr uint8_t kBranchTrunk = 1;
inline constexpr uint8_t kBranchLeaf = 2;

struct Packet {
    PktType type = PktType::Write;
    uint8_t noc = 0;
    uint8_t vc = 0;
    bool posted = false;
    bool mcast = false;
    bool y_major = false;
    bool src_include = false;
    bool byte_enable = false;   // NOC_CMD_WR_BE write
    bool failed = false;        // write: source read failed; response: request failed at target
    bool path_reserve = false;  // multicast: reserve the tree before sending (NOC_CMD_PATH_RESERVE)
    bool reserved = false;      // the tree is reserved (released link by link by the tail)
    uint32_t trid = 0;
    uint32_t src_node = 0;    // physical node that sent this packet
    uint32_t reply_node = 0;  // requests: physical node the ack / response goes to
    Coord dst;                // NOC coordinates: unicast destination, or multicast start corner
    Coord dst_end;            // multicast end corner
    uint64_t src_addr = 0;    // Write: local source; Read: remote source
    uint64_t dst_addr = 0;    // where the data / operation goes at the destination
    uint64_t ret_addr = 0;    // Read: local destination; Atomic: where the old value goes
    uint32_t len = 0;         // payload bytes
    uint32_t at_len_be = 0;
    uint32_t at_data = 0;
    uint32_t data_flits = 0;
    uint32_t live = 0;  // copies of the packet still travelling (multicast forks)
    std::vector<uint8_t> data;

    uint32_t flits() const { return 1 + data_flits; }
    bool is_tail(uint32_t flit_index) const { return flit_index + 1 == flits(); }
};

struct Flit {
    uint32_t pkt = 0;
    uint32_t idx = 0;    // 0 = header
    uint64_t ready = 0;  // first cycle it may leave the buffer it is in
    uint8_t branch = 0;  // multicast progress of this copy
};

// Every packet in flight, by id. Ids are reused once a packet's last copy is released; references
// stay valid while the pool grows (a deque), so a stage may hold a Packet& across allocations.
class PacketPool {
  public:
    // A fresh packet (default fields, empty data whose capacity is kept from an earlier use).
    uint32_t allocate();
    // Replace packet `id` by `p`, keeping the capacity of its data buffer.
    void assign(uint32_t id, Packet&& p);
    // One copy of `id` has been delivered or dropped; the last one frees the id.
    void release_copy(uint32_t id);

    Packet& operator[](uint32_t id) { return packets_[id]; }
    const Packet& operator[](uint32_t id) const { return packets_[id]; }

  private:
    std::deque<Packet> packets_;
    std::vector<uint32_t> free_;
};

// Data flits are aligned NOC words of the address the data lands at: a payload of `len` bytes
// landing at `addr` needs this many.
uint32_t data_flits_for(uint32_t word_bytes, uint64_t addr, uint32_t len);
// The payload byte range [lo, hi) carried by data flit k (1-based) of `p`.
std::pair<uint32_t, uint32_t> flit_range(uint32_t word_bytes, const Packet& p, uint32_t k);

}  // namespace sim::noc
