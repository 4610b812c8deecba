// Stage 4a, the NIU's sending half: a core's command buffers launching requests, and every node's
// queue of responses to send; each cycle each NIU puts at most one flit per NOC into its router's
// local input.
//
// Per node and NOC, an injector arbitrates round-robin over the 4 command buffers and the
// response queue. A packet is contiguous on its VC (the injection port's VC is held from header
// to tail), and on each VC command buffers start their packets in launch order, so requests from
// one source to one destination on one NOC and VC arrive in issue order. The injector keeps
// credits for the router's local input buffers, returned by link traversal.
//
// Write data is read from the issuing core's memory as each flit is sent (so reusing the source
// buffer before WRITE_REQS_OUTGOING_ID reaches 0 sends the new bytes, as on silicon).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <ostream>
#include <utility>
#include <vector>

#include "hal/arch_map.h"
#include "noc/error_log.h"
#include "noc/grid.h"
#include "noc/input_unit.h"
#include "noc/node_table.h"
#include "noc/packet.h"
#include "noc/path_reservation.h"
#include "noc/request_decoder.h"

namespace sim::noc {

// A command buffer's request being sent.
struct Source {
    uint32_t pkt = kNone;  // packet being injected
    uint32_t next = 0;     // next flit index
    uint64_t seq = 0;      // launch order (requests on one VC leave in this order)
    uint32_t vc = 0;
};

// One node's injection port on one NOC (also used by nodes without a core, for responses).
struct Injector {
    static constexpr uint32_t kResponseSource = hal::noc::kNumCmdBufs;  // after the cmd bufs
    static constexpr uint32_t kSources = hal::noc::kNumCmdBufs + 1;

    std::array<Source, hal::noc::kNumCmdBufs> cmd{};
    std::deque<uint32_t> responses;
    uint32_t response_next = 0;
    std::array<int32_t, kSlots> credits{};
    std::array<uint32_t, kSlots> owner{};  // source injecting a packet on that VC, or kNone
    uint32_t rr = 0;
    uint64_t launches = 0;
    bool active = false;

    // A command buffer may start its packet only when no older launched packet on the same VC
    // is still waiting to start.
    bool oldest_on_vc(uint32_t src) const;
    bool pending() const;
};

class NiuInjection {
  public:
    NiuInjection(const Grid& grid, const hal::ArchMap& arch, const NocParams& params,
                 NodeTable& nodes, PacketPool& packets, InputUnit& inputs,
                 PathReservation& reservations, ErrorLog& errors);

    // NOC_CMD_CTRL written: decode command buffer `buf` of `node`'s NIU on `noc` and queue its
    // packet (counters MST_CMD_ACCEPTED, REQS_OUTSTANDING_ID, WRITE_REQS_OUTGOING_ID move now).
    void launch(uint32_t node, uint32_t noc, uint32_t buf);
    // The buffer's request has not fully entered the router yet.
    bool busy(uint32_t node, uint32_t noc, uint32_t buf) const {
        return injectors_[node][noc].cmd[buf].pkt != kNone;
    }
    // A target's response (ack, read data, atomic return) to be sent from `node`.
    void queue_response(uint32_t node, uint32_t noc, uint32_t pkt);
    // A local input buffer slot of `node`'s router is free again.
    void return_credit(uint32_t node, uint32_t noc, uint32_t slot) {
        ++injectors_[node][noc].credits[slot];
    }

    // One cycle: every injector with something to send offers one flit.
    void inject(uint64_t now);
    bool idle() const { return active_.empty(); }

    // The injectors with something to send, as (node, noc), and their state (for reports).
    const std::vector<std::pair<uint32_t, uint32_t>>& active() const { return active_; }
    const Injector& injector(uint32_t node, uint32_t noc) const { return injectors_[node][noc]; }

  private:
    void mark_active(uint32_t node, uint32_t noc);
    void inject_one(uint32_t node, uint32_t noc, uint64_t now);
    // Whether `src` of the injector can send its next flit (of packet `pkt_id`) now.
    bool may_send(Injector& j, uint32_t src, uint32_t pkt_id, uint32_t next);
    void read_write_data(uint32_t node, uint32_t noc, Packet& p, uint32_t k);
    void count_injected(uint32_t node, uint32_t noc, const Packet& p, bool head, bool tail);

    const Grid& grid_;
    const hal::ArchMap& arch_;
    const NocParams& params_;
    NodeTable& nodes_;
    PacketPool& packets_;
    InputUnit& inputs_;
    PathReservation& reservations_;
    ErrorLog& errors_;
    RequestDecoder decoder_;
    std::vector<std::array<Injector, hal::noc::kNumNocs>> injectors_;  // per physical node
    std::vector<std::pair<uint32_t, uint32_t>> active_;                // (node, noc)
};

}  // namespace sim::noc
