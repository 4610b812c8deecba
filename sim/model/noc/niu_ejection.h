// Stage 4b, the NIU's receiving half: what happens as each flit reaches the NIU of its node.
//
// At a target: write data lands flit by flit (checked once at the header: endpoint present,
// alignment), inline writes, reads and atomics are served when their header arrives and a
// response is queued on the target's injector when one is asked for. At a requester: acks, read
// data and atomic returns land and the requester's counters move. A request that fails at the
// target is recorded and still completes (ack or response returned, counters moving) so one bad
// request does not also hang the firmware.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hal/arch_map.h"
#include "noc/alignment.h"
#include "noc/error_log.h"
#include "noc/grid.h"
#include "noc/link_traversal.h"
#include "noc/niu_injection.h"
#include "noc/node_table.h"
#include "noc/packet.h"

namespace sim::noc {

class NiuEjection {
  public:
    NiuEjection(const Grid& grid, const hal::ArchMap& arch, NodeTable& nodes, PacketPool& packets,
                NiuInjection& injection, ErrorLog& errors);

    // A flit reaches the NIU of its node. The packet's last flit releases this copy.
    void deliver(const Arrival& a);
    // See Network::observe_landings; `now` is the network's clock.
    void observe(LandingObserver* observer, const uint64_t* now) {
        observer_ = observer;
        now_ = now;
    }
    // See Network::on_missing_endpoint.
    void on_missing_endpoint(std::function<void(Coord)> hook) { missing_ = std::move(hook); }

  private:
    // A packet whose data flits are landing at a node: whether they may still be written.
    struct Delivery {
        uint32_t pkt = 0;
        bool ok = true;
    };

    void deliver_write(const Arrival& a, Packet& p);
    // Tell the observer that `p` landed at `node` (ok: the target took it).
    void report_landing(uint32_t node, const Packet& p);
    void write_data_flit(uint32_t node, uint32_t noc, const Packet& p, uint32_t k, Delivery& d);
    // Writes each run of bytes of [base, base + span) whose bit is set in `mask`, from `bytes`.
    // Stops at the first refusal, recorded with `refused_detail`, and returns false.
    bool write_enabled_bytes(uint32_t node, uint32_t noc, const Packet& p, uint64_t base,
                             const uint8_t* bytes, uint32_t span, uint32_t mask,
                             const char* refused_detail);
    void serve_inline(uint32_t node, uint32_t noc, const Packet& p);
    void serve_read(uint32_t node, uint32_t noc, const Packet& p);
    void serve_atomic(uint32_t node, uint32_t noc, const Packet& p);
    bool atomic_checks(uint32_t node, uint32_t noc, const Packet& p, uint32_t opcode);
    void deliver_read_resp(const Arrival& a, Packet& p);
    void deliver_atomic_resp(uint32_t node, uint32_t noc, const Packet& p);

    bool check_endpoint(uint32_t node, uint32_t noc, const Packet& p, uint64_t addr);
    AddrClass addr_class_at(uint32_t node, uint64_t addr) const {
        return addr_class(nodes_.kind(node), addr);
    }
    // Records an error of request / response `p` at `node`.
    void record(uint32_t node, uint32_t noc, const Packet& p, uint64_t addr, NocErrorKind kind,
                std::string detail);
    // A response to request `req`, sent from `from_node` back to the request's reply node.
    uint32_t make_response(PktType type, uint32_t noc, uint32_t from_node, const Packet& req);
    std::vector<Delivery>& open(uint32_t node, uint32_t noc) { return deliveries_[node][noc]; }
    Delivery* find_delivery(uint32_t node, uint32_t noc, uint32_t pkt);
    void end_delivery(uint32_t node, uint32_t noc, uint32_t pkt);

    const Grid& grid_;
    const hal::ArchMap& arch_;
    NodeTable& nodes_;
    PacketPool& packets_;
    NiuInjection& injection_;
    LandingObserver* observer_ = nullptr;
    std::function<void(Coord)> missing_;
    const uint64_t* now_ = nullptr;
    ErrorLog& errors_;
    std::vector<std::array<std::vector<Delivery>, hal::noc::kNumNocs>> deliveries_;
};

}  // namespace sim::noc
