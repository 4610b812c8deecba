// The NIU's launch decode: what a command buffer's registers ask for when NOC_CMD_CTRL is written.
// Turns TARG/RET addresses, NOC_CTRL, PACKET_TAG, AT_LEN_BE and AT_DATA into a packet, or records
// why the request cannot be sent (then nothing is sent and no counter moves, so the issuing
// firmware's barrier times out as a second symptom).
//
// Request semantics (README.md): a write's TARG is its local source (whose coordinate is where
// acks go) and RET its destination (unicast or multicast rectangle); an inline write's TARG is its
// destination; a read's TARG is the remote source and RET where the data goes; an atomic's TARG is
// its target word and RET where a non-posted one returns the old value.
#pragma once

#include <cstdint>
#include <optional>

#include "hal/arch_map.h"
#include "hal/encoding.h"
#include "noc/error_log.h"
#include "noc/grid.h"
#include "noc/node_table.h"
#include "noc/packet.h"

namespace sim::noc {

class RequestDecoder {
  public:
    RequestDecoder(const Grid& grid, const hal::ArchMap& arch, ErrorLog& errors)
        : grid_(grid), arch_(arch), errors_(errors) {}

    // The packet command buffer `buf` of physical node `node`'s NIU on `noc` describes (its
    // payload not yet read), or nullopt after recording the error.
    std::optional<Packet> decode(const NodeTable& nodes, uint32_t node, uint32_t noc,
                                 uint32_t buf) const;

  private:
    // The registers of one command buffer as read at launch.
    struct CmdBuf {
        uint32_t noc = 0;
        uint32_t node = 0;
        uint32_t ctrl = 0;
        uint32_t at_len_be = 0;
        uint32_t at_len_be_1 = 0;  // BH: any non-zero value is a length above 4 GiB
        hal::noc::DecodedAddr targ{};
        hal::noc::DecodedAddr ret{};
    };

    bool decode_read(const CmdBuf& c, Packet& p) const;
    bool decode_atomic(const CmdBuf& c, Packet& p) const;
    bool decode_inline_write(const CmdBuf& c, Packet& p) const;
    bool decode_write(const CmdBuf& c, Packet& p) const;
    bool decode_write_destination(const CmdBuf& c, Packet& p) const;

    bool check_coord(const CmdBuf& c, Coord at, uint64_t addr, const char* what) const;
    bool check_len(const CmdBuf& c, uint32_t len, Coord dst, uint64_t addr) const;
    void unsupported(const CmdBuf& c, Coord dst, uint64_t addr, const char* what) const;

    const Grid& grid_;
    const hal::ArchMap& arch_;
    ErrorLog& errors_;
};

}  // namespace sim::noc
