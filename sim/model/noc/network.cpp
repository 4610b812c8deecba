// The NOC model. Structure of one cycle (Network::step), in this order:
//   1. credits    buffer slots freed credit_cycles ago become visible to the upstream sender
//   2. delivery   flits that left a router towards its NIU link_cycles ago reach the NIU: writes
//                 land, requests are served at the target, responses update the requester's counters
//   3. injection  each node's NIU puts at most one flit per NOC into its router's local input
//   4. routers    each router with buffered flits runs switch allocation and traversal: at most one
//                 flit per output port and per input port; a flit entering a buffer in cycle t may
//                 leave it at t + router_cycles at the earliest
// Every effect a router has on another component is delayed by at least one cycle, so the order in
// which routers are visited within a cycle does not change the result.
#include "noc/network.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <deque>
#include <sstream>
#include <stdexcept>

#include "hal/encoding.h"

namespace sim::noc {

namespace {

// ---- TODO(hal): move to arch_map.h ------------------------------------------------------------------
// NoC facts the model needs that hal/arch_map.h does not carry (yet). Sources: fabric-protocol.md
// §5.5 ("16 NoC VCs; bcast VCs start 4") and the ISA doc's NoC pages (alignment table, atomics).
constexpr uint32_t kNumVcNumbers = 8;    // NOC_CTRL static VC field is 3 bits (bits 15..13)
constexpr uint32_t kNumVcs = 16;         // VCs per port: VC number x dateline bit
constexpr uint32_t kResponseVc = 6;      // class 0b11: responses (acks, read data, atomic returns).
                                         // ASSUMPTION: the class is reserved for responses; the
                                         // exact response VC of the silicon is not documented here.
constexpr uint32_t kToStartVc = 7;       // MODEL-INTERNAL: a multicast's unicast leg to its start
                                         // corner travels on VC number 7 so that leg and the tree
                                         // never share a buffer (each crosses a ring's wrap link at
                                         // most once, which the dateline needs). Not a silicon fact.
constexpr uint32_t kOtherAlignment = 32;  // data from a non-L1/MMIO address to L1/other: C32
constexpr uint32_t kMmioWordBytes = 4;    // MMIO accesses: 4-byte aligned, 4 bytes
constexpr uint32_t kBeWriteBytes = 32;    // NOC_CMD_WR_BE (not inline): 32-byte-aligned, 32-bit mask
constexpr uint32_t kInlineL1Bytes = 16;   // inline write to L1: aligned 16-byte range (DA16)
constexpr uint32_t kAtomicRegionBytes = 16;  // atomics act on a word of an aligned 16-byte region
constexpr uint32_t kAtInd32Mask = 0x3;    // NOC_AT_IND_32 field width
constexpr uint32_t kAtWrapMask = 0x1F;    // NOC_AT_WRAP field width
constexpr uint32_t kAtInsMask = 0xF;      // NOC_AT_INS field width
constexpr uint32_t kNumCfgRegs = 64;      // NOC_CFG(0..63) between kCfgBase and kStatusBase
constexpr uint32_t kTridCounterMask = 0xFF;  // per-transaction-ID counters are 8 bits
// ------------------------------------------------------------------------------------------------

static_assert(hal::noc::kCfgBase + 4 * kNumCfgRegs <= hal::noc::kStatusBase);
static_assert(hal::noc::kVcMulticastMax < kResponseVc && kResponseVc < kToStartVc && kToStartVc < kNumVcNumbers);

constexpr uint32_t kPortX = 0;
constexpr uint32_t kPortY = 1;
constexpr uint32_t kPortLocal = 2;
constexpr uint32_t kSlots = kNumVcs;            // buffers per input port (VC number * 2 + dateline)
constexpr uint32_t kInputs = kNumPorts * kSlots;  // input buffers per router
constexpr uint32_t kNumSources = hal::noc::kNumCmdBufs + 1;  // cmd bufs + the response queue
constexpr uint32_t kResponseSource = hal::noc::kNumCmdBufs;
constexpr uint32_t kNone = 0xFFFFFFFF;

static_assert(kSlots <= 32, "input-port occupancy is kept in a 32-bit mask");
static_assert(kInputs <= 256, "candidate inputs are kept in bytes");

// Number of output ports in a 3-bit port mask.
constexpr uint32_t ports_in(uint32_t mask) { return (mask & 1u) + ((mask >> 1) & 1u) + ((mask >> 2) & 1u); }

enum class PktType : uint8_t { Write, InlineWrite, Read, Atomic, WriteAck, ReadResp, AtomicResp };

enum class AddrClass : uint8_t { L1, Mmio, Other };

// Multicast progress carried with each copy of a flit: heading for the rectangle's start corner,
// on the trunk (major axis) or on a branch (minor axis).
constexpr uint8_t kBranchToStart = 0;
constexpr uint8_t kBranchTrunk = 1;
constexpr uint8_t kBranchLeaf = 2;

struct Packet {
    PktType type = PktType::Write;
    uint8_t noc = 0;
    uint8_t vc = 0;
    bool posted = false;
    bool mcast = false;
    bool y_major = false;
    bool src_include = false;
    bool byte_enable = false;  // NOC_CMD_WR_BE write
    bool failed = false;       // write: source read failed; response: request failed at target
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
    uint32_t live = 0;        // copies of the packet still travelling (multicast forks)
    std::vector<uint8_t> data;

    uint32_t flits() const { return 1 + data_flits; }
};

struct Flit {
    uint32_t pkt = 0;
    uint32_t idx = 0;     // 0 = header
    uint64_t ready = 0;   // first cycle it may leave the buffer it is in
    uint8_t branch = 0;   // multicast progress of this copy
};

// One input buffer (VC) of a router, and the route of the packet at its head.
struct InVc {
    uint64_t head_ready = 0;  // ready cycle of the head flit (kept here: no FIFO access to test it)
    uint16_t head = 0;
    uint16_t count = 0;
    bool routed = false;
    uint8_t mask = 0;  // output ports of the packet at the head (bit per port); 0 = drop
    std::array<uint8_t, 2> out_slot{};    // downstream buffer for X and Y outputs
    std::array<uint8_t, 2> out_branch{};  // multicast progress of the copy sent there
};

// An output VC: credits for the downstream buffer and the packet holding it (wormhole).
struct OutVc {
    int32_t credits = 0;
    uint32_t owner = kNone;  // input index of the packet currently holding this VC
};

struct Router {
    uint32_t x = 0;  // NOC coordinates
    uint32_t y = 0;
    uint32_t phys = 0;  // physical node index
    std::array<InVc, kInputs> in{};
    std::array<OutVc, 2 * kSlots> out{};       // X and Y outputs
    std::array<uint32_t, kNumPorts> occupied{};  // per input port: bit per non-empty slot
    std::array<uint32_t, kNumPorts> rr{};        // per output port: round-robin pointer
    std::array<LinkStats, kNumPorts> stats{};
    uint32_t flits = 0;
    bool active = false;
};

struct Source {
    uint32_t pkt = kNone;  // packet being injected
    uint32_t next = 0;     // next flit index
    uint64_t seq = 0;      // launch order (requests on one VC leave in this order)
    uint32_t vc = 0;
};

// Per node and NOC: the NIU's injection side (also used by nodes without a core, for responses).
struct Injector {
    std::array<Source, hal::noc::kNumCmdBufs> cmd{};
    std::deque<uint32_t> responses;
    uint32_t response_next = 0;
    std::array<int32_t, kSlots> credits{};
    std::array<uint32_t, kSlots> owner{};  // source injecting a packet on that VC, or kNone
    uint32_t rr = 0;
    uint64_t launches = 0;
    bool active = false;

    // A command buffer may start its packet only when no older launched packet on the same VC is
    // still waiting to start: requests between one source and destination on one VC stay ordered.
    bool oldest_on_vc(uint32_t src) const {
        const Source& me = cmd[src];
        for (uint32_t o = 0; o < cmd.size(); ++o) {
            const Source& s = cmd[o];
            if (o != src && s.pkt != kNone && s.next == 0 && s.seq < me.seq && s.vc == me.vc) {
                return false;
            }
        }
        return true;
    }

    bool pending() const {
        if (!responses.empty()) {
            return true;
        }
        return std::any_of(cmd.begin(), cmd.end(), [](const Source& s) { return s.pkt != kNone; });
    }
};

// The NIU registers of one core for one NOC.
struct NiuRegs {
    std::vector<uint32_t> cmd;  // kNumCmdBufs * stride / 4 words
    std::array<uint32_t, kNumCfgRegs> cfg{};
    std::array<uint32_t, hal::noc::status::kCount> status{};
};

struct Delivery {
    uint32_t pkt = 0;
    bool ok = true;
};

struct Node {
    Endpoint* ep = nullptr;
    EndpointKind kind = EndpointKind::Tile;
    std::unique_ptr<Niu> niu;
    std::array<NiuRegs, hal::noc::kNumNocs> regs;
    std::array<Injector, hal::noc::kNumNocs> inj;
    std::array<std::vector<Delivery>, hal::noc::kNumNocs> deliveries;
};

struct CreditEvent {
    uint64_t due;
    uint32_t noc;
    uint32_t target;  // router index (port X/Y) or physical node (injector)
    uint8_t port;     // kPortX / kPortY: router output; kPortLocal: the node's injector
    uint8_t slot;
};

struct DeliveryEvent {
    uint64_t due;
    uint32_t noc;
    uint32_t node;  // physical
    uint32_t pkt;
    uint32_t idx;
};

}  // namespace

// =================================================================================================

struct Network::Impl {
    Impl(uint32_t gx, uint32_t gy, const hal::ArchMap& a, NocParams p)
        : gx(gx), gy(gy), arch(a), params(p), nodes(gx * gy) {
        const uint32_t words = hal::noc::kNumCmdBufs * arch.noc_cmd_buf_stride / 4;
        for (uint32_t n = 0; n < nodes.size(); ++n) {
            for (uint32_t noc = 0; noc < hal::noc::kNumNocs; ++noc) {
                nodes[n].regs[noc].cmd.assign(words, 0);
                Injector& j = nodes[n].inj[noc];
                j.credits.fill(static_cast<int32_t>(params.vc_buffer_flits));
                j.owner.fill(kNone);
            }
        }
        for (uint32_t noc = 0; noc < hal::noc::kNumNocs; ++noc) {
            routers[noc].resize(gx * gy);
            res_owner[noc].assign(2 * gx * gy, kNone);
            res_count[noc].assign(2 * gx * gy, 0);
            fifo[noc].resize(static_cast<std::size_t>(gx) * gy * kInputs * params.vc_buffer_flits);
            for (uint32_t y = 0; y < gy; ++y) {
                for (uint32_t x = 0; x < gx; ++x) {
                    Router& r = routers[noc][y * gx + x];
                    r.x = x;
                    r.y = y;
                    const Coord p = phys_of(noc, {x, y});
                    r.phys = p.y * gx + p.x;
                    for (OutVc& o : r.out) {
                        o.credits = static_cast<int32_t>(params.vc_buffer_flits);
                    }
                }
            }
        }
    }

    uint32_t gx;
    uint32_t gy;
    const hal::ArchMap& arch;
    NocParams params;
    uint64_t now = 0;
    uint64_t stats_start = 0;

    std::vector<Node> nodes;  // physical index y * gx + x
    std::array<std::vector<Router>, hal::noc::kNumNocs> routers;  // NOC index y * gx + x
    std::array<std::vector<Flit>, hal::noc::kNumNocs> fifo;
    std::array<std::vector<uint32_t>, hal::noc::kNumNocs> active_routers;
    std::vector<std::pair<uint32_t, uint32_t>> active_injectors;  // (node, noc)

    std::deque<Packet> packets;  // stable references
    std::vector<uint32_t> free_packets;

    std::array<std::vector<uint32_t>, hal::noc::kNumNocs> res_owner;  // per link (router * 2 + port)
    std::array<std::vector<uint32_t>, hal::noc::kNumNocs> res_count;  // traversals still to come
    std::vector<uint32_t> scratch_links;

    std::deque<CreditEvent> credit_events;      // due times non-decreasing (fixed delay)
    std::deque<DeliveryEvent> delivery_events;  // likewise

    std::vector<NocError> errors;
    std::function<void(const NocError&)> error_hook;

    // ---- coordinates ----------------------------------------------------------------------------

    Coord phys_of(uint32_t noc, Coord c) const {
        return noc == 0 ? c : Coord{gx - 1 - c.x, gy - 1 - c.y};
    }
    Coord noc_of(uint32_t noc, Coord p) const { return phys_of(noc, p); }  // an involution
    Coord phys_coord(uint32_t node) const { return {node % gx, node / gx}; }
    uint32_t node_index(Coord p) const { return p.y * gx + p.x; }
    uint32_t node_of_noc(uint32_t noc, Coord c) const { return node_index(phys_of(noc, c)); }
    bool in_grid(Coord c) const { return c.x < gx && c.y < gy; }

    // ---- errors -----------------------------------------------------------------------------------

    void error(uint32_t noc, uint32_t src_node, Coord dst_phys, uint64_t addr, NocErrorKind kind,
               std::string detail) {
        NocError e;
        e.cycle = now;
        e.noc = noc;
        e.src = phys_coord(src_node);
        e.dst = dst_phys;
        e.addr = addr;
        e.kind = kind;
        e.detail = std::move(detail);
        errors.push_back(e);
        if (error_hook) {
            error_hook(errors.back());
        }
    }
    // dst given in NOC coordinates (reported physical when inside the grid, raw otherwise).
    void error_noc(uint32_t noc, uint32_t src_node, Coord dst_noc, uint64_t addr, NocErrorKind kind,
                   std::string detail) {
        error(noc, src_node, in_grid(dst_noc) ? phys_of(noc, dst_noc) : dst_noc, addr, kind, std::move(detail));
    }

    // ---- packets ----------------------------------------------------------------------------------

    uint32_t alloc_packet() {
        if (!free_packets.empty()) {
            const uint32_t id = free_packets.back();
            free_packets.pop_back();
            Packet& p = packets[id];
            std::vector<uint8_t> keep = std::move(p.data);
            p = Packet{};
            p.data = std::move(keep);
            p.data.clear();
            return id;
        }
        packets.emplace_back();
        return static_cast<uint32_t>(packets.size() - 1);
    }
    void release_copy(uint32_t id) {
        Packet& p = packets[id];
        if (--p.live == 0) {
            free_packets.push_back(id);
        }
    }

    uint32_t word_bytes() const { return arch.noc_word_bytes; }
    // Data flits for `len` bytes landing at `addr`: flits are aligned NOC words.
    uint32_t data_flits_for(uint64_t addr, uint32_t len) const {
        if (len == 0) {
            return 0;
        }
        const uint32_t w = word_bytes();
        const uint64_t a = addr % w;
        return static_cast<uint32_t>((a + len + w - 1) / w);
    }
    // Payload byte range [lo, hi) carried by data flit k (1-based).
    std::pair<uint32_t, uint32_t> flit_range(const Packet& p, uint32_t k) const {
        const uint32_t w = word_bytes();
        const uint32_t a = static_cast<uint32_t>(p.dst_addr % w);  // flits are aligned where data lands
        const uint32_t lo = k == 1 ? 0 : (k - 1) * w - a;
        const uint32_t hi = std::min<uint32_t>(p.len, k * w - a);
        return {lo, hi};
    }

    // ---- NIU counters -------------------------------------------------------------------------------

    NiuRegs* niu_regs(uint32_t node, uint32_t noc) {
        return nodes[node].niu ? &nodes[node].regs[noc] : nullptr;
    }
    void bump(uint32_t node, uint32_t noc, uint32_t index, uint32_t by = 1) {
        if (NiuRegs* r = niu_regs(node, noc)) {
            r->status[index] += by;
        }
    }
    void bump_trid(uint32_t node, uint32_t noc, uint32_t index, int32_t by) {
        if (NiuRegs* r = niu_regs(node, noc)) {
            r->status[index] = (r->status[index] + static_cast<uint32_t>(by)) & kTridCounterMask;
        }
    }

    // ---- alignment ------------------------------------------------------------------------------------

    AddrClass addr_class(uint32_t node, uint64_t addr) const {
        if (nodes[node].kind == EndpointKind::Other) {
            return AddrClass::Other;
        }
        return addr >= hal::noc::kMmioStart ? AddrClass::Mmio : AddrClass::L1;
    }

    // Requests whose NOC_AT_LEN_BE is a length (reads, plain writes): the ISA doc's table.
    static bool length_alignment_ok(AddrClass sc, uint64_t src, AddrClass dc, uint64_t dst, uint32_t len) {
        const auto al4 = [&] {
            return src % kMmioWordBytes == 0 && dst % kMmioWordBytes == 0 && len == kMmioWordBytes;
        };
        const auto congruent = [&](uint32_t m) { return src % m == dst % m; };
        if (sc == AddrClass::Mmio) {
            if (dc == AddrClass::Mmio) {
                return al4();
            }
            return len <= kMmioWordBytes - src % kMmioWordBytes && congruent(kMmioWordBytes);
        }
        if (dc == AddrClass::Mmio) {
            return al4() && congruent(hal::noc::kL1Alignment);
        }
        if (sc == AddrClass::L1) {
            return congruent(hal::noc::kL1Alignment);
        }
        return congruent(kOtherAlignment);
    }

    // ---- injection ------------------------------------------------------------------------------------

    void mark_injector(uint32_t node, uint32_t noc) {
        Injector& j = nodes[node].inj[noc];
        if (!j.active) {
            j.active = true;
            active_injectors.emplace_back(node, noc);
        }
    }

    void mark_router(uint32_t noc, uint32_t r) {
        Router& rt = routers[noc][r];
        if (!rt.active) {
            rt.active = true;
            active_routers[noc].push_back(r);
        }
    }

    Flit* fifo_base(uint32_t noc, uint32_t r, uint32_t input) {
        return &fifo[noc][(static_cast<std::size_t>(r) * kInputs + input) * params.vc_buffer_flits];
    }

    void push_flit(uint32_t noc, uint32_t r, uint32_t port, uint32_t slot, const Flit& f) {
        Router& rt = routers[noc][r];
        const uint32_t input = port * kSlots + slot;
        InVc& v = rt.in[input];
        Flit* base = fifo_base(noc, r, input);
        base[(v.head + v.count) % params.vc_buffer_flits] = f;
        if (v.count == 0) {
            v.head_ready = f.ready;
        }
        ++v.count;
        rt.occupied[port] |= 1u << slot;
        ++rt.flits;
        mark_router(noc, r);
    }

    void inject(uint32_t node, uint32_t noc) {
        Node& nd = nodes[node];
        Injector& j = nd.inj[noc];
        for (uint32_t k = 0; k < kNumSources; ++k) {
            const uint32_t src = (j.rr + k) % kNumSources;
            uint32_t pkt_id = kNone;
            uint32_t next = 0;
            if (src == kResponseSource) {
                if (j.responses.empty()) {
                    continue;
                }
                pkt_id = j.responses.front();
                next = j.response_next;
            } else {
                pkt_id = j.cmd[src].pkt;
                next = j.cmd[src].next;
                if (pkt_id == kNone) {
                    continue;
                }
            }
            Packet& p = packets[pkt_id];
            const uint32_t slot = p.vc * 2u;
            if (j.credits[slot] <= 0) {
                continue;
            }
            if (next == 0 ? j.owner[slot] != kNone : j.owner[slot] != src) {
                continue;
            }
            if (next == 0 && src != kResponseSource && !j.oldest_on_vc(src)) {
                continue;
            }
            if (next == 0 && p.mcast && p.path_reserve && !try_reserve(noc, pkt_id)) {
                continue;  // part of the tree is in use by another multicast: wait
            }
            const bool head = next == 0;
            const bool tail = next + 1 == p.flits();
            if (head) {
                p.live = 1;
            }
            if (p.type == PktType::Write && !head) {
                read_write_data(node, noc, p, next);
            }
            const Coord me = noc_of(noc, phys_coord(node));
            const uint32_t r = me.y * gx + me.x;
            push_flit(noc, r, kPortLocal, slot, Flit{pkt_id, next, now + params.router_cycles, kBranchToStart});
            --j.credits[slot];
            j.owner[slot] = tail ? kNone : src;
            j.rr = (src + 1) % kNumSources;
            count_injected(node, noc, p, head, tail);
            if (src == kResponseSource) {
                j.response_next = tail ? 0 : next + 1;
                if (tail) {
                    j.responses.pop_front();
                }
            } else {
                j.cmd[src].next = next + 1;
                if (tail) {
                    j.cmd[src] = Source{};
                }
            }
            return;
        }
    }

    // Write data is read from the issuing core's memory as each flit is sent (so the source buffer
    // must not be reused before WRITE_REQS_OUTGOING_ID says so, as on silicon).
    void read_write_data(uint32_t node, uint32_t noc, Packet& p, uint32_t k) {
        if (p.failed) {
            return;
        }
        const auto [lo, hi] = p.byte_enable ? std::pair<uint32_t, uint32_t>{0, p.len} : flit_range(p, k);
        Endpoint* ep = nodes[node].ep;
        std::span<uint8_t> out(p.data.data() + lo, hi - lo);
        if (ep == nullptr || !ep->read(p.src_addr + lo, out)) {
            p.failed = true;
            error_noc(noc, node, p.dst, p.src_addr + lo, NocErrorKind::SourceRefused,
                      "the issuing core's memory refused the read of the write data");
        }
    }

    void count_injected(uint32_t node, uint32_t noc, const Packet& p, bool head, bool tail) {
        using namespace hal::noc::status;
        switch (p.type) {
            case PktType::Write:
            case PktType::InlineWrite:
                if (head) {
                    bump(node, noc, p.posted ? kMstPostedWrReqStarted : kMstNonpostedWrReqStarted);
                } else {
                    bump(node, noc, p.posted ? kMstPostedWrDataWordSent : kMstNonpostedWrDataWordSent);
                }
                if (tail) {
                    bump(node, noc, p.posted ? kMstPostedWrReqSent : kMstNonpostedWrReqSent);
                    if (p.type == PktType::Write) {
                        bump_trid(node, noc, mst_write_reqs_outgoing_id(p.trid), -1);
                    }
                }
                break;
            case PktType::Read:
                if (head) {
                    bump(node, noc, kMstRdReqStarted);
                }
                if (tail) {
                    bump(node, noc, kMstRdReqSent);
                }
                break;
            case PktType::Atomic:
                if (head && !p.posted) {
                    bump(node, noc, kMstNonpostedAtomicStarted);
                }
                if (tail) {
                    bump(node, noc, p.posted ? kMstPostedAtomicSent : kMstNonpostedAtomicSent);
                }
                break;
            case PktType::WriteAck:
                if (tail) {
                    bump(node, noc, kSlvWrAckSent);
                }
                break;
            case PktType::ReadResp:
                if (!head) {
                    bump(node, noc, kSlvRdDataWordSent);
                }
                if (tail) {
                    bump(node, noc, kSlvRdRespSent);
                }
                break;
            case PktType::AtomicResp:
                if (tail) {
                    bump(node, noc, kSlvAtomicRespSent);
                }
                break;
            default:
                break;
        }
    }

    // ---- routing ----------------------------------------------------------------------------------------

    // The downstream buffer (VC number * 2 + dateline bit) for a flit leaving through `out_port` on
    // VC `out_vc`. Dateline: the bit is set once the flit crosses the ring's wrap link and kept only
    // while it stays in the same ring on the same VC; entering a ring (injection, an X-to-Y turn, a
    // multicast switching from its leg to its tree) starts with 0.
    uint8_t out_slot(const Router& rt, uint32_t in_port, uint32_t in_slot, uint32_t out_port, uint32_t out_vc) const {
        const uint32_t in_vc = in_slot / 2;
        const uint32_t dl = in_slot % 2;
        const uint32_t keep = (in_port == out_port && in_vc == out_vc) ? dl : 0u;
        const bool wrap = out_port == kPortX ? rt.x == gx - 1 : rt.y == gy - 1;
        return static_cast<uint8_t>(out_vc * 2 + (keep | (wrap ? 1u : 0u)));
    }

    // Where a packet goes from router (x, y) (NOC coordinates, physical node `phys`) with
    // multicast progress `branch`: the output ports and the progress of each copy. The one routing
    // function: used per router as head flits arrive, and to walk a multicast tree for PATH_RESERVE.
    struct RouteOut {
        uint8_t mask = 0;
        std::array<uint8_t, 2> branch{};
    };
    RouteOut route_of(const Packet& p, uint32_t x, uint32_t y, uint32_t phys, uint8_t branch) const {
        RouteOut ro;
        const auto add = [&](uint32_t port, uint8_t b) {
            ro.mask |= static_cast<uint8_t>(1u << port);
            if (port != kPortLocal) {
                ro.branch[port] = b;
            }
        };
        const auto unicast = [&](Coord d) {  // dimension order: X first, then Y
            if (x != d.x) {
                add(kPortX, kBranchToStart);
            } else if (y != d.y) {
                add(kPortY, kBranchToStart);
            } else {
                add(kPortLocal, kBranchToStart);
            }
        };
        if (!p.mcast) {
            unicast(p.dst);
            return ro;
        }
        if (branch == kBranchToStart) {
            if (x != p.dst.x || y != p.dst.y) {
                unicast(p.dst);  // to the start corner first, delivering nothing on the way
                return ro;
            }
            branch = kBranchTrunk;
        }
        if (!(phys == p.src_node && !p.src_include)) {
            add(kPortLocal, branch);
        }
        const bool x_more = x != p.dst_end.x;
        const bool y_more = y != p.dst_end.y;
        if (!p.y_major) {  // trunk along x, a branch down every column
            if (y_more) {
                add(kPortY, kBranchLeaf);
            }
            if (branch == kBranchTrunk && x_more) {
                add(kPortX, kBranchTrunk);
            }
        } else {  // trunk along y, a branch along every row
            if (x_more) {
                add(kPortX, kBranchLeaf);
            }
            if (branch == kBranchTrunk && y_more) {
                add(kPortY, kBranchTrunk);
            }
        }
        return ro;
    }

    void compute_route(Router& rt, uint32_t input, const Flit& f) {
        InVc& v = rt.in[input];
        const Packet& p = packets[f.pkt];
        const RouteOut ro = route_of(p, rt.x, rt.y, rt.phys, f.branch);
        v.mask = ro.mask;
        for (uint32_t q = kPortX; q <= kPortY; ++q) {
            if ((ro.mask & (1u << q)) != 0) {
                const uint32_t vc = p.mcast && ro.branch[q] == kBranchToStart ? kToStartVc : p.vc;
                v.out_slot[q] = out_slot(rt, input / kSlots, input % kSlots, q, vc);
                v.out_branch[q] = ro.branch[q];
            }
        }
        v.routed = true;
    }

    // ---- multicast path reservation ---------------------------------------------------------------
    // A multicast launched with NOC_CMD_PATH_RESERVE claims every router-to-router link of its tree
    // (for multicast traffic) before its header is injected, all or nothing, and frees each link as
    // its tail crosses it. Multicasts therefore never wait for each other inside the network (they
    // use their own VCs, so unicasts never share their buffers): no tree-saturation deadlock.
    // Without PATH_RESERVE, trees fork wormhole-style and can deadlock under contention, as on
    // silicon. The reservation is made with global knowledge in one cycle (a simplification of the
    // silicon's distributed reservation).
    void tree_links(uint32_t noc, const Packet& p, std::vector<uint32_t>& out) const {
        struct At {
            uint32_t x;
            uint32_t y;
            uint8_t branch;
        };
        out.clear();
        const Coord s = noc_of(noc, phys_coord(p.src_node));
        std::vector<At> todo{{s.x, s.y, kBranchToStart}};
        const std::size_t limit = 4u * gx * gy + 4u * (gx + gy);  // far above any tree
        while (!todo.empty() && out.size() < limit) {
            const At c = todo.back();
            todo.pop_back();
            const RouteOut ro = route_of(p, c.x, c.y, node_of_noc(noc, {c.x, c.y}), c.branch);
            for (uint32_t q = kPortX; q <= kPortY; ++q) {
                if ((ro.mask & (1u << q)) != 0) {
                    out.push_back((c.y * gx + c.x) * 2 + q);
                    todo.push_back(q == kPortX ? At{(c.x + 1) % gx, c.y, ro.branch[q]}
                                               : At{c.x, (c.y + 1) % gy, ro.branch[q]});
                }
            }
        }
    }

    bool try_reserve(uint32_t noc, uint32_t pkt_id) {
        Packet& p = packets[pkt_id];
        tree_links(noc, p, scratch_links);
        for (uint32_t l : scratch_links) {
            if (res_owner[noc][l] != kNone) {
                return false;
            }
        }
        for (uint32_t l : scratch_links) {
            res_owner[noc][l] = pkt_id;
            ++res_count[noc][l];
        }
        p.reserved = true;
        return true;
    }

    void release_link(uint32_t noc, uint32_t r, uint32_t q) {
        const uint32_t l = r * 2 + q;
        if (res_count[noc][l] > 0 && --res_count[noc][l] == 0) {
            res_owner[noc][l] = kNone;
        }
    }

    void traverse(uint32_t noc, uint32_t r, uint32_t input, uint32_t& out_used) {
        Router& rt = routers[noc][r];
        InVc& v = rt.in[input];
        Flit* base = fifo_base(noc, r, input);
        const Flit f = base[v.head];
        Packet& p = packets[f.pkt];
        const bool head = f.idx == 0;
        const bool tail = f.idx + 1 == p.flits();
        const uint32_t in_port = input / kSlots;
        const uint32_t in_slot = input % kSlots;
        const uint32_t fanout = ports_in(v.mask);
        if (head && fanout > 1) {
            p.live += fanout - 1;
        }
        for (uint32_t q = 0; q < kNumPorts; ++q) {
            if ((v.mask & (1u << q)) == 0) {
                continue;
            }
            out_used |= 1u << q;
            rt.rr[q] = (input + 1) % kInputs;
            LinkStats& st = rt.stats[q];
            ++st.flits;
            if (head) {
                ++st.packets;
            }
            if (q == kPortLocal) {
                delivery_events.push_back({now + params.link_cycles, noc, rt.phys, f.pkt, f.idx});
                continue;
            }
            OutVc& ov = rt.out[q * kSlots + v.out_slot[q]];
            --ov.credits;
            ov.owner = tail ? kNone : input;
            if (tail && p.reserved) {
                release_link(noc, r, q);
            }
            const uint32_t dx = q == kPortX ? (rt.x + 1) % gx : rt.x;
            const uint32_t dy = q == kPortY ? (rt.y + 1) % gy : rt.y;
            push_flit(noc, dy * gx + dx, q, v.out_slot[q],
                      Flit{f.pkt, f.idx, now + params.link_cycles + params.router_cycles, v.out_branch[q]});
        }
        if (fanout == 0 && tail) {
            release_copy(f.pkt);
        }
        // Pop and return the credit upstream.
        v.head = static_cast<uint16_t>((v.head + 1) % params.vc_buffer_flits);
        --v.count;
        if (v.count == 0) {
            rt.occupied[in_port] &= ~(1u << in_slot);
        } else {
            v.head_ready = base[v.head].ready;
        }
        --rt.flits;
        if (tail) {
            v.routed = false;
        }
        CreditEvent ce{now + params.credit_cycles, noc, 0, static_cast<uint8_t>(in_port), static_cast<uint8_t>(in_slot)};
        if (in_port == kPortX) {
            ce.target = rt.y * gx + (rt.x + gx - 1) % gx;
        } else if (in_port == kPortY) {
            ce.target = ((rt.y + gy - 1) % gy) * gx + rt.x;
        } else {
            ce.target = rt.phys;
        }
        credit_events.push_back(ce);
    }

    // Switch allocation and traversal for one router. First every buffer whose head flit is ready
    // is examined once: its route (computed when a header reaches the head) and whether every
    // output it needs has a credit and is free of other packets (wormhole: a header may claim an
    // output VC only when no packet holds it; body flits follow their header). Then each output
    // port, in turn, grants the requester nearest after its round-robin pointer, subject to one
    // flit per input port and per output port; a multicast flit needs all its outputs at once.
    // Granting never invalidates another requester's checks: an output carries one flit a cycle.
    void route_cycle(uint32_t noc, uint32_t r) {
        Router& rt = routers[noc][r];
        std::array<uint8_t, kInputs> cand_input{};
        std::array<uint8_t, kInputs> cand_mask{};
        uint32_t n = 0;
        uint32_t in_used = 0;
        for (uint32_t port = 0; port < kNumPorts; ++port) {
            uint32_t m = rt.occupied[port];
            while (m != 0) {
                const uint32_t slot = static_cast<uint32_t>(std::countr_zero(m));
                m &= m - 1;
                const uint32_t input = port * kSlots + slot;
                InVc& v = rt.in[input];
                if (v.head_ready > now) {
                    continue;
                }
                const Flit& f = fifo_base(noc, r, input)[v.head];
                if (!v.routed) {
                    compute_route(rt, input, f);
                }
                if (v.mask == 0) {
                    // A multicast copy with nowhere to go (e.g. a one-node rectangle that
                    // excludes its source): drained, using only its input port.
                    if ((in_used & (1u << port)) == 0) {
                        in_used |= 1u << port;
                        uint32_t unused = 0;
                        traverse(noc, r, input, unused);
                    }
                    continue;
                }
                bool ok = true;
                for (uint32_t q = kPortX; q <= kPortY && ok; ++q) {
                    if ((v.mask & (1u << q)) != 0) {
                        const OutVc& ov = rt.out[q * kSlots + v.out_slot[q]];
                        ok = ov.credits > 0 && (f.idx == 0 ? ov.owner == kNone : ov.owner == input);
                    }
                }
                if (ok) {
                    cand_input[n] = static_cast<uint8_t>(input);
                    cand_mask[n] = v.mask;
                    ++n;
                }
            }
        }
        uint32_t out_used = 0;
        for (uint32_t o = 0; o < kNumPorts && n != 0; ++o) {
            if ((out_used & (1u << o)) != 0) {
                continue;
            }
            uint32_t best = kNone;
            uint32_t best_dist = kInputs;
            for (uint32_t i = 0; i < n; ++i) {
                const uint32_t input = cand_input[i];
                if ((cand_mask[i] & (1u << o)) == 0 || (cand_mask[i] & out_used) != 0 ||
                    (in_used & (1u << (input / kSlots))) != 0) {
                    continue;
                }
                const uint32_t dist = (input + kInputs - rt.rr[o]) % kInputs;
                if (dist < best_dist) {
                    best = input;
                    best_dist = dist;
                }
            }
            if (best != kNone) {
                in_used |= 1u << (best / kSlots);
                traverse(noc, r, best, out_used);
            }
        }
    }

    // ---- delivery (target side and requester side) ---------------------------------------------------------

    Delivery* find_delivery(uint32_t node, uint32_t noc, uint32_t pkt) {
        for (Delivery& d : nodes[node].deliveries[noc]) {
            if (d.pkt == pkt) {
                return &d;
            }
        }
        return nullptr;
    }
    void end_delivery(uint32_t node, uint32_t noc, uint32_t pkt) {
        auto& v = nodes[node].deliveries[noc];
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (v[i].pkt == pkt) {
                v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
                return;
            }
        }
    }

    void queue_response(uint32_t node, uint32_t noc, uint32_t pkt) {
        nodes[node].inj[noc].responses.push_back(pkt);
        mark_injector(node, noc);
    }

    uint32_t make_response(PktType type, uint32_t noc, uint32_t from_node, const Packet& req) {
        const uint32_t id = alloc_packet();
        Packet& r = packets[id];
        r.type = type;
        r.noc = static_cast<uint8_t>(noc);
        r.vc = kResponseVc;
        r.trid = req.trid;
        r.src_node = from_node;
        r.reply_node = req.reply_node;
        r.dst = noc_of(noc, phys_coord(req.reply_node));
        return id;
    }

    void deliver(const DeliveryEvent& e) {
        Packet& p = packets[e.pkt];
        const bool tail = e.idx + 1 == p.flits();
        switch (p.type) {
            case PktType::Write:
                deliver_write(e, p);
                break;
            case PktType::InlineWrite:
                serve_inline(e.node, e.noc, p);
                break;
            case PktType::Read:
                serve_read(e.node, e.noc, p);
                break;
            case PktType::Atomic:
                serve_atomic(e.node, e.noc, p);
                break;
            case PktType::WriteAck:
                bump(e.node, e.noc, hal::noc::status::kMstWrAckReceived);
                bump_trid(e.node, e.noc, hal::noc::status::mst_reqs_outstanding_id(p.trid), -1);
                break;
            case PktType::ReadResp:
                deliver_read_resp(e, p);
                break;
            case PktType::AtomicResp:
                deliver_atomic_resp(e.node, e.noc, p);
                break;
            default:
                break;
        }
        if (tail) {
            release_copy(e.pkt);
        }
    }

    bool check_endpoint(uint32_t node, uint32_t noc, const Packet& p, uint64_t addr) {
        if (nodes[node].ep != nullptr) {
            return true;
        }
        error(noc, p.src_node, phys_coord(node), addr, NocErrorKind::NoEndpoint,
              "nothing is attached at the destination coordinate");
        return false;
    }

    void deliver_write(const DeliveryEvent& e, Packet& p) {
        using namespace hal::noc::status;
        const uint32_t node = e.node;
        const uint32_t noc = e.noc;
        const bool tail = e.idx + 1 == p.flits();
        if (e.idx == 0) {
            bool ok = check_endpoint(node, noc, p, p.dst_addr);
            if (ok) {
                const AddrClass sc = addr_class(p.src_node, p.src_addr);
                const AddrClass dc = addr_class(node, p.dst_addr);
                bool aligned = true;
                if (p.byte_enable) {
                    aligned = dc == AddrClass::Mmio
                                  ? p.dst_addr % kMmioWordBytes == 0 &&
                                        p.src_addr % hal::noc::kL1Alignment == p.dst_addr % hal::noc::kL1Alignment
                                  : p.dst_addr % kBeWriteBytes == 0 && p.src_addr % kBeWriteBytes == 0;
                } else {
                    aligned = length_alignment_ok(sc, p.src_addr, dc, p.dst_addr, p.len);
                }
                if (!aligned) {
                    error(noc, p.src_node, phys_coord(node), p.dst_addr, NocErrorKind::Misaligned,
                          "write source/destination violate the NoC alignment rules");
                    ok = false;
                }
            }
            nodes[node].deliveries[noc].push_back({e.pkt, ok});
            bump(node, noc, kSlvReqAccepted);
            bump(node, noc, p.posted ? kSlvPostedWrReqStarted : kSlvNonpostedWrReqStarted);
        } else {
            bump(node, noc, p.posted ? kSlvPostedWrDataWordReceived : kSlvNonpostedWrDataWordReceived);
            Delivery* d = find_delivery(node, noc, e.pkt);
            if (d != nullptr && d->ok && !p.failed) {
                write_data_flit(node, noc, p, e.idx, *d);
            }
        }
        if (tail) {
            end_delivery(node, noc, e.pkt);
            bump(node, noc, p.posted ? kSlvPostedWrReqReceived : kSlvNonpostedWrReqReceived);
            if (!p.posted) {
                queue_response(node, noc, make_response(PktType::WriteAck, noc, node, p));
            }
        }
    }

    void write_data_flit(uint32_t node, uint32_t noc, const Packet& p, uint32_t k, Delivery& d) {
        Endpoint* ep = nodes[node].ep;
        if (p.byte_enable) {
            // Write each run of enabled bytes of the 32-byte (or, to MMIO, 4-byte) word.
            const uint32_t span = addr_class(node, p.dst_addr) == AddrClass::Mmio ? kMmioWordBytes : kBeWriteBytes;
            const uint32_t mask = span == kMmioWordBytes ? 0xFu : p.at_len_be;
            uint32_t i = 0;
            while (i < span) {
                if (((mask >> i) & 1u) == 0) {
                    ++i;
                    continue;
                }
                uint32_t j = i;
                while (j < span && ((mask >> j) & 1u) != 0) {
                    ++j;
                }
                if (!ep->write(p.dst_addr + i, std::span<const uint8_t>(p.data.data() + i, j - i))) {
                    error(noc, p.src_node, phys_coord(node), p.dst_addr + i, NocErrorKind::AddressRefused,
                          "the destination refused the write");
                    d.ok = false;
                    return;
                }
                i = j;
            }
            return;
        }
        const auto [lo, hi] = flit_range(p, k);
        if (!ep->write(p.dst_addr + lo, std::span<const uint8_t>(p.data.data() + lo, hi - lo))) {
            error(noc, p.src_node, phys_coord(node), p.dst_addr + lo, NocErrorKind::AddressRefused,
                  "the destination refused the write");
            d.ok = false;
        }
    }

    void serve_inline(uint32_t node, uint32_t noc, const Packet& p) {
        using namespace hal::noc::status;
        bump(node, noc, kSlvReqAccepted);
        bump(node, noc, p.posted ? kSlvPostedWrReqReceived : kSlvNonpostedWrReqReceived);
        if (check_endpoint(node, noc, p, p.dst_addr)) {
            const AddrClass dc = addr_class(node, p.dst_addr);
            Endpoint* ep = nodes[node].ep;
            uint8_t bytes[4];
            std::memcpy(bytes, &p.at_data, 4);
            if (dc == AddrClass::Other) {
                error(noc, p.src_node, phys_coord(node), p.dst_addr, NocErrorKind::Unsupported,
                      "inline writes cannot target a non-tile endpoint");
            } else if (dc == AddrClass::Mmio) {
                // DA4: a 4-byte write, byte enables ignored.
                if (p.dst_addr % kMmioWordBytes != 0) {
                    error(noc, p.src_node, phys_coord(node), p.dst_addr, NocErrorKind::Misaligned,
                          "inline write to MMIO must be 4-byte aligned");
                } else if (!ep->write(p.dst_addr, std::span<const uint8_t>(bytes, 4))) {
                    error(noc, p.src_node, phys_coord(node), p.dst_addr, NocErrorKind::AddressRefused,
                          "the destination refused the inline write");
                }
            } else {
                // DA16: the address is rounded down to 16; the low and high halves of the 32-bit
                // byte-enable mask each select bytes of that range, every byte lane carrying byte
                // (i % 4) of AT_DATA.
                const uint64_t base = p.dst_addr & ~uint64_t{kInlineL1Bytes - 1};
                const uint32_t mask = (p.at_len_be & 0xFFFFu) | (p.at_len_be >> 16);
                uint8_t lane[kInlineL1Bytes];
                for (uint32_t i = 0; i < kInlineL1Bytes; ++i) {
                    lane[i] = bytes[i % 4];
                }
                uint32_t i = 0;
                while (i < kInlineL1Bytes) {
                    if (((mask >> i) & 1u) == 0) {
                        ++i;
                        continue;
                    }
                    uint32_t j = i;
                    while (j < kInlineL1Bytes && ((mask >> j) & 1u) != 0) {
                        ++j;
                    }
                    if (!ep->write(base + i, std::span<const uint8_t>(lane + i, j - i))) {
                        error(noc, p.src_node, phys_coord(node), base + i, NocErrorKind::AddressRefused,
                              "the destination refused the inline write");
                        break;
                    }
                    i = j;
                }
            }
        }
        if (!p.posted) {
            queue_response(node, noc, make_response(PktType::WriteAck, noc, node, p));
        }
    }

    void serve_read(uint32_t node, uint32_t noc, const Packet& p) {
        using namespace hal::noc::status;
        bump(node, noc, kSlvReqAccepted);
        bump(node, noc, kSlvRdReqReceived);
        const uint32_t id = make_response(PktType::ReadResp, noc, node, p);
        Packet& r = packets[id];
        r.dst_addr = p.ret_addr;
        r.len = p.len;
        r.data_flits = data_flits_for(p.ret_addr, p.len);
        r.data.assign(p.len, 0);
        bool ok = check_endpoint(node, noc, p, p.src_addr);
        if (ok) {
            const AddrClass sc = addr_class(node, p.src_addr);
            const AddrClass dc = addr_class(p.reply_node, p.ret_addr);
            if (!length_alignment_ok(sc, p.src_addr, dc, p.ret_addr, p.len)) {
                error(noc, p.src_node, phys_coord(node), p.src_addr, NocErrorKind::Misaligned,
                      "read source/destination violate the NoC alignment rules");
                ok = false;
            }
        }
        if (ok && !nodes[node].ep->read(p.src_addr, std::span<uint8_t>(r.data.data(), r.data.size()))) {
            error(noc, p.src_node, phys_coord(node), p.src_addr, NocErrorKind::AddressRefused,
                  "the target refused the read");
            ok = false;
        }
        r.failed = !ok;
        queue_response(node, noc, id);
    }

    void serve_atomic(uint32_t node, uint32_t noc, const Packet& p) {
        using namespace hal::noc::status;
        bump(node, noc, kSlvReqAccepted);
        bump(node, noc, p.posted ? kSlvPostedAtomicReceived : kSlvNonpostedAtomicReceived);
        const uint32_t ins = (p.at_len_be >> hal::noc::kAtInsShift) & kAtInsMask;
        const uint32_t ind = (p.at_len_be >> hal::noc::kAtInd32Shift) & kAtInd32Mask;
        const uint32_t wrap = (p.at_len_be >> hal::noc::kAtWrapShift) & kAtWrapMask;
        const uint64_t word_addr = (p.dst_addr & ~uint64_t{kAtomicRegionBytes - 1}) + 4u * ind;
        bool ok = check_endpoint(node, noc, p, p.dst_addr);
        if (ok && addr_class(node, p.dst_addr) != AddrClass::L1) {
            error(noc, p.src_node, phys_coord(node), p.dst_addr, NocErrorKind::Unsupported,
                  "atomics only operate on tile L1");
            ok = false;
        }
        if (ok && ins != hal::noc::kAtInsIncrGet) {
            error(noc, p.src_node, phys_coord(node), p.dst_addr, NocErrorKind::Unsupported,
                  "atomic opcode " + std::to_string(ins) + " is not modelled (only INCR_GET)");
            ok = false;
        }
        if (ok && !p.posted &&
            (p.ret_addr % 4 != 0 || addr_class(p.reply_node, p.ret_addr) != AddrClass::L1)) {
            error(noc, p.src_node, phys_coord(node), p.ret_addr, NocErrorKind::Misaligned,
                  "atomic response address must be a 4-byte-aligned L1 address");
            ok = false;
        }
        uint32_t old = 0;
        if (ok) {
            Endpoint* ep = nodes[node].ep;
            uint8_t b[4];
            if (!ep->read(word_addr, std::span<uint8_t>(b, 4))) {
                error(noc, p.src_node, phys_coord(node), word_addr, NocErrorKind::AddressRefused,
                      "the target refused the atomic");
                ok = false;
            } else {
                std::memcpy(&old, b, 4);
                const uint32_t mask = wrap >= 31 ? 0xFFFFFFFFu : ((1u << (wrap + 1)) - 1);
                const uint32_t sum = ((old + p.at_data) & mask) | (old & ~mask);
                std::memcpy(b, &sum, 4);
                if (!ep->write(word_addr, std::span<const uint8_t>(b, 4))) {
                    error(noc, p.src_node, phys_coord(node), word_addr, NocErrorKind::AddressRefused,
                          "the target refused the atomic");
                    ok = false;
                }
            }
        }
        if (!p.posted) {
            const uint32_t id = make_response(PktType::AtomicResp, noc, node, p);
            Packet& r = packets[id];
            r.dst_addr = p.ret_addr;
            r.len = 4;
            r.data.resize(4);
            std::memcpy(r.data.data(), &old, 4);
            r.failed = !ok;
            queue_response(node, noc, id);
        }
    }

    void deliver_read_resp(const DeliveryEvent& e, Packet& p) {
        using namespace hal::noc::status;
        const uint32_t node = e.node;
        const uint32_t noc = e.noc;
        const bool tail = e.idx + 1 == p.flits();
        if (e.idx == 0) {
            bool ok = !p.failed;
            if (ok && nodes[node].ep == nullptr) {
                error(noc, p.src_node, phys_coord(node), p.dst_addr, NocErrorKind::NoEndpoint,
                      "read response for a coordinate with nothing attached");
                ok = false;
            }
            nodes[node].deliveries[noc].push_back({e.pkt, ok});
        } else {
            bump(node, noc, kMstRdDataWordReceived);
            Delivery* d = find_delivery(node, noc, e.pkt);
            if (d != nullptr && d->ok) {
                const auto [lo, hi] = flit_range(p, e.idx);
                if (!nodes[node].ep->write(p.dst_addr + lo, std::span<const uint8_t>(p.data.data() + lo, hi - lo))) {
                    error(noc, p.src_node, phys_coord(node), p.dst_addr + lo, NocErrorKind::AddressRefused,
                          "the requester refused the read data");
                    d->ok = false;
                }
            }
        }
        if (tail) {
            end_delivery(node, noc, e.pkt);
            bump(node, noc, kMstRdRespReceived);
            bump_trid(node, noc, mst_reqs_outstanding_id(p.trid), -1);
        }
    }

    void deliver_atomic_resp(uint32_t node, uint32_t noc, const Packet& p) {
        using namespace hal::noc::status;
        if (!p.failed) {
            if (nodes[node].ep == nullptr) {
                error(noc, p.src_node, phys_coord(node), p.dst_addr, NocErrorKind::NoEndpoint,
                      "atomic response for a coordinate with nothing attached");
            } else if (!nodes[node].ep->write(p.dst_addr, std::span<const uint8_t>(p.data.data(), 4))) {
                error(noc, p.src_node, phys_coord(node), p.dst_addr, NocErrorKind::AddressRefused,
                      "the requester refused the atomic's returned value");
            }
        }
        bump(node, noc, kMstAtomicRespReceived);
        bump_trid(node, noc, mst_reqs_outstanding_id(p.trid), -1);
    }

    // ---- NIU launch ----------------------------------------------------------------------------------------

    uint32_t reg(const NiuRegs& r, uint32_t buf, uint32_t offset) const {
        return r.cmd[(buf * arch.noc_cmd_buf_stride + offset) / 4];
    }

    void launch(uint32_t node, uint32_t noc, uint32_t buf) {
        using namespace hal::noc;
        NiuRegs& R = nodes[node].regs[noc];
        Injector& J = nodes[node].inj[noc];
        if (J.cmd[buf].pkt != kNone) {
            error(noc, node, phys_coord(node), 0, NocErrorKind::CmdBufBusy,
                  "NOC_CMD_CTRL written while command buffer " + std::to_string(buf) + " was busy");
            return;
        }
        const uint32_t ctrl = reg(R, buf, kCtrl);
        const uint32_t tag = reg(R, buf, kPacketTag);
        const uint32_t at_len_be = reg(R, buf, kAtLenBe);
        const uint32_t at_len_be_1 =
            arch.noc.at_len_be_1 != hal::kNoRegister ? reg(R, buf, arch.noc.at_len_be_1) : 0;
        const uint32_t at_data = reg(R, buf, arch.noc.at_data);
        const DecodedAddr targ = decode_addr(
            arch, {reg(R, buf, kTargAddrLo), reg(R, buf, kTargAddrMid), reg(R, buf, kTargAddrHi)});
        const DecodedAddr ret = decode_addr(
            arch, {reg(R, buf, kRetAddrLo), reg(R, buf, kRetAddrMid), reg(R, buf, kRetAddrHi)});
        const uint32_t type = ctrl & kCtrlCmdMask;
        const bool mcast = (ctrl & kCtrlBrcstPacket) != 0;
        const bool posted = (ctrl & kCtrlRespMarked) == 0;
        const uint32_t vc = (ctrl & kCtrlVcStatic) != 0 ? ctrl_vc(ctrl)
                                                        : (mcast ? kDefaultMulticastVc : kDefaultUnicastVc);
        const uint32_t trid = tag_trid(tag);

        const auto unicast_xy = [](uint32_t field) {
            const hal::NocXY c = decode_unicast_coord(field);
            return Coord{c.x, c.y};
        };
        const auto check_coord = [&](Coord c, uint64_t addr, const char* what) {
            if (in_grid(c)) {
                return true;
            }
            error(noc, node, c, addr, NocErrorKind::CoordOutsideGrid,
                  std::string(what) + " coordinate (" + std::to_string(c.x) + "," + std::to_string(c.y) +
                      ") is outside the " + std::to_string(gx) + "x" + std::to_string(gy) + " grid");
            return false;
        };
        const auto check_len = [&](uint32_t len, Coord dst, uint64_t addr) {
            if (at_len_be_1 != 0 || len > arch.noc_max_burst_bytes) {
                error_noc(noc, node, dst, addr, NocErrorKind::BurstTooLong,
                          "request of " + (at_len_be_1 != 0 ? std::string(">4 GiB") : std::to_string(len)) +
                              " bytes exceeds the " + std::to_string(arch.noc_max_burst_bytes) +
                              "-byte maximum burst");
                return false;
            }
            if (len == 0) {
                error_noc(noc, node, dst, addr, NocErrorKind::BadLength, "zero-length request");
                return false;
            }
            return true;
        };
        const auto unsupported = [&](Coord dst, uint64_t addr, const char* what) {
            error_noc(noc, node, dst, addr, NocErrorKind::Unsupported, what);
        };

        Packet tmpl;
        tmpl.noc = static_cast<uint8_t>(noc);
        tmpl.vc = static_cast<uint8_t>(vc);
        tmpl.posted = posted;
        tmpl.trid = trid;
        tmpl.src_node = node;
        tmpl.at_len_be = at_len_be;
        tmpl.at_data = at_data;

        if (type == kCtrlCmdRead) {
            const Coord src = unicast_xy(targ.coord_field);
            const Coord dst = unicast_xy(ret.coord_field);
            if (mcast) {
                unsupported(src, targ.local, "multicast read");
                return;
            }
            if (!check_coord(src, targ.local, "read source") || !check_coord(dst, ret.local, "read return") ||
                !check_len(at_len_be, src, targ.local)) {
                return;
            }
            tmpl.type = PktType::Read;
            tmpl.posted = false;
            tmpl.dst = src;
            tmpl.src_addr = targ.local;
            tmpl.ret_addr = ret.local;
            tmpl.reply_node = node_of_noc(noc, dst);
            tmpl.len = at_len_be;
        } else if (type == kCtrlCmdAtomic) {
            const Coord dst = unicast_xy(targ.coord_field);
            if (mcast) {
                unsupported(dst, targ.local, "multicast atomic");
                return;
            }
            if (!check_coord(dst, targ.local, "atomic target")) {
                return;
            }
            tmpl.type = PktType::Atomic;
            tmpl.dst = dst;
            tmpl.dst_addr = targ.local;
            if (!posted) {
                const Coord back = unicast_xy(ret.coord_field);
                if (!check_coord(back, ret.local, "atomic return")) {
                    return;
                }
                tmpl.reply_node = node_of_noc(noc, back);
                tmpl.ret_addr = ret.local;
            }
        } else if (type == kCtrlCmdWrite) {
            if ((ctrl & kCtrlWrInline) != 0) {
                const Coord dst = unicast_xy(targ.coord_field);
                if (mcast) {
                    unsupported(dst, targ.local, "multicast inline write");
                    return;
                }
                if (!check_coord(dst, targ.local, "inline write target")) {
                    return;
                }
                tmpl.type = PktType::InlineWrite;
                tmpl.dst = dst;
                tmpl.dst_addr = targ.local;
                tmpl.reply_node = node;
            } else {
                // TARG = local source (its coordinate is where acks go), RET = destination.
                const Coord ack_to = unicast_xy(targ.coord_field);
                if (!check_coord(ack_to, targ.local, "write source")) {
                    return;
                }
                tmpl.type = PktType::Write;
                tmpl.src_addr = targ.local;
                tmpl.dst_addr = ret.local;
                tmpl.reply_node = node_of_noc(noc, ack_to);
                tmpl.byte_enable = (ctrl & kCtrlWrBe) != 0;
                if (mcast) {
                    const hal::NocRect rect = decode_mcast_coord(ret.coord_field);
                    tmpl.mcast = true;
                    tmpl.dst = {rect.x_start, rect.y_start};
                    tmpl.dst_end = {rect.x_end, rect.y_end};
                    tmpl.y_major = (ctrl & kCtrlBrcstYMajor) != 0;
                    tmpl.src_include = (ctrl & kCtrlBrcstSrcInclude) != 0;
                    tmpl.path_reserve = (ctrl & kCtrlPathReserve) != 0;
                    if (!check_coord(tmpl.dst, ret.local, "multicast start") ||
                        !check_coord(tmpl.dst_end, ret.local, "multicast end")) {
                        return;
                    }
                } else {
                    tmpl.dst = unicast_xy(ret.coord_field);
                    if (!check_coord(tmpl.dst, ret.local, "write destination")) {
                        return;
                    }
                }
                if (tmpl.byte_enable) {
                    tmpl.len = kBeWriteBytes;
                } else {
                    if (!check_len(at_len_be, tmpl.dst, ret.local)) {
                        return;
                    }
                    tmpl.len = at_len_be;
                }
            }
        } else {
            error(noc, node, phys_coord(node), 0, NocErrorKind::Unsupported,
                  "NOC_CTRL request type 3 is not a request");
            return;
        }

        const uint32_t id = alloc_packet();
        Packet& p = packets[id];
        std::vector<uint8_t> keep = std::move(p.data);
        p = std::move(tmpl);
        p.data = std::move(keep);
        if (p.type == PktType::Write) {
            p.data.assign(p.len, 0);
            p.data_flits = p.byte_enable ? 1 : data_flits_for(p.dst_addr, p.len);
        }
        J.cmd[buf] = Source{id, 0, J.launches++, p.vc};
        mark_injector(node, noc);

        using namespace hal::noc::status;
        bump(node, noc, kMstCmdAccepted);
        if (p.type == PktType::Read || !p.posted) {
            bump_trid(node, noc, mst_reqs_outstanding_id(trid), 1);
        }
        if (p.type == PktType::Write) {
            bump_trid(node, noc, mst_write_reqs_outgoing_id(trid), 1);
        }
    }

    // ---- the cycle -----------------------------------------------------------------------------------------------

    void step() {
        while (!credit_events.empty() && credit_events.front().due <= now) {
            const CreditEvent ce = credit_events.front();
            credit_events.pop_front();
            if (ce.port == kPortLocal) {
                ++nodes[ce.target].inj[ce.noc].credits[ce.slot];
            } else {
                ++routers[ce.noc][ce.target].out[ce.port * kSlots + ce.slot].credits;
            }
        }
        while (!delivery_events.empty() && delivery_events.front().due <= now) {
            const DeliveryEvent de = delivery_events.front();
            delivery_events.pop_front();
            deliver(de);
        }
        if (!active_injectors.empty()) {
            const std::size_t n = active_injectors.size();
            for (std::size_t i = 0; i < n; ++i) {
                const auto [node, noc] = active_injectors[i];
                inject(node, noc);
            }
            std::erase_if(active_injectors, [this](const std::pair<uint32_t, uint32_t>& a) {
                Injector& j = nodes[a.first].inj[a.second];
                if (!j.pending()) {
                    j.active = false;
                    return true;
                }
                return false;
            });
        }
        for (uint32_t noc = 0; noc < hal::noc::kNumNocs; ++noc) {
            auto& act = active_routers[noc];
            if (act.empty()) {
                continue;
            }
            const std::size_t n = act.size();
            for (std::size_t i = 0; i < n; ++i) {
                route_cycle(noc, act[i]);
            }
            std::erase_if(act, [this, noc](uint32_t r) {
                Router& rt = routers[noc][r];
                if (rt.flits == 0) {
                    rt.active = false;
                    return true;
                }
                return false;
            });
        }
        ++now;
    }

    bool idle() const {
        return active_injectors.empty() && active_routers[0].empty() && active_routers[1].empty() &&
               delivery_events.empty() && credit_events.empty();
    }
};

// =================================================================================================
// Niu

bool Niu::contains(uint32_t a) {
    return a >= hal::common::kNocRegsBase &&
           a - hal::common::kNocRegsBase < hal::noc::kNumNocs * hal::common::kNocInstanceStride;
}

namespace {
struct NiuAddr {
    uint32_t noc;
    uint32_t buf;
    uint32_t off;  // offset in the command buffer window
};
std::optional<NiuAddr> decode_niu(const hal::ArchMap& arch, uint32_t a) {
    if (!Niu::contains(a) || a % 4 != 0) {
        return std::nullopt;
    }
    const uint32_t rel = a - hal::common::kNocRegsBase;
    const uint32_t noc = rel / hal::common::kNocInstanceStride;
    const uint32_t in = rel % hal::common::kNocInstanceStride;
    const uint32_t buf = in / arch.noc_cmd_buf_stride;
    if (buf >= hal::noc::kNumCmdBufs) {
        return std::nullopt;
    }
    return NiuAddr{noc, buf, in % arch.noc_cmd_buf_stride};
}
bool in_cfg(const NiuAddr& n) {
    return n.buf == 0 && n.off >= hal::noc::kCfgBase && n.off < hal::noc::kCfgBase + 4 * kNumCfgRegs;
}
bool in_status(const NiuAddr& n) {
    return n.buf == 0 && n.off >= hal::noc::kStatusBase &&
           n.off < hal::noc::kStatusBase + 4 * hal::noc::status::kCount;
}
}  // namespace

bool Niu::mmio_write(uint32_t core_addr, uint32_t value) {
    Network::Impl& I = *net_.impl_;
    const auto n = decode_niu(I.arch, core_addr);
    if (!n) {
        return false;
    }
    NiuRegs& R = I.nodes[node_].regs[n->noc];
    if (in_cfg(*n)) {
        R.cfg[(n->off - hal::noc::kCfgBase) / 4] = value;
        return true;
    }
    if (in_status(*n)) {
        return false;  // counters are read-only
    }
    if (n->off == I.arch.noc.clear_outstanding_req_cnt) {
        for (uint32_t id = 0; id < hal::noc::kNumTransactionIds; ++id) {
            if (((value >> id) & 1u) != 0) {
                R.status[hal::noc::status::mst_reqs_outstanding_id(id)] = 0;
            }
        }
        return true;
    }
    if (n->off == I.arch.noc.cmd_ctrl) {
        if ((value & hal::noc::kCmdCtrlSend) != 0) {
            I.launch(node_, n->noc, n->buf);
        }
        return true;
    }
    if (n->off == I.arch.noc.node_id || n->off == I.arch.noc.endpoint_id) {
        return false;  // read-only
    }
    R.cmd[(n->buf * I.arch.noc_cmd_buf_stride + n->off) / 4] = value;
    return true;
}

std::optional<uint32_t> Niu::mmio_read(uint32_t core_addr) const {
    const Network::Impl& I = *net_.impl_;
    const auto n = decode_niu(I.arch, core_addr);
    if (!n) {
        return std::nullopt;
    }
    const NiuRegs& R = I.nodes[node_].regs[n->noc];
    if (in_cfg(*n)) {
        return R.cfg[(n->off - hal::noc::kCfgBase) / 4];
    }
    if (in_status(*n)) {
        return R.status[(n->off - hal::noc::kStatusBase) / 4];
    }
    if (n->off == I.arch.noc.cmd_ctrl) {
        return I.nodes[node_].inj[n->noc].cmd[n->buf].pkt != kNone ? hal::noc::kCmdCtrlSend
                                                                    : hal::noc::kCmdCtrlReady;
    }
    if (n->off == I.arch.noc.node_id) {
        const Coord c = I.noc_of(n->noc, I.phys_coord(node_));
        return hal::noc::unicast_coord(c.x, c.y);
    }
    if (n->off == I.arch.noc.endpoint_id || n->off == I.arch.noc.clear_outstanding_req_cnt) {
        return 0u;
    }
    return R.cmd[(n->buf * I.arch.noc_cmd_buf_stride + n->off) / 4];
}

uint32_t Niu::counter(uint32_t noc, uint32_t index) const {
    const Network::Impl& I = *net_.impl_;
    if (noc >= hal::noc::kNumNocs || index >= hal::noc::status::kCount) {
        return 0;
    }
    return I.nodes[node_].regs[noc].status[index];
}

bool Niu::cmd_buf_busy(uint32_t noc, uint32_t buf) const {
    const Network::Impl& I = *net_.impl_;
    return noc < hal::noc::kNumNocs && buf < hal::noc::kNumCmdBufs && I.nodes[node_].inj[noc].cmd[buf].pkt != kNone;
}

Coord Niu::coord() const { return net_.impl_->phys_coord(node_); }

// =================================================================================================
// Network

Network::Network(uint32_t grid_x, uint32_t grid_y, const hal::ArchMap& arch, NocParams params) {
    if (grid_x == 0 || grid_y == 0 || grid_x > hal::noc::kCoordLimit || grid_y > hal::noc::kCoordLimit) {
        throw std::invalid_argument("sim::noc::Network: grid must be 1..64 in each dimension");
    }
    if (params.vc_buffer_flits == 0 || params.vc_buffer_flits > 0xFFFF || params.router_cycles == 0 ||
        params.link_cycles == 0 || params.credit_cycles == 0) {
        throw std::invalid_argument(
            "sim::noc::Network: router/link/credit cycles must be >= 1 and the VC buffer 1..65535 flits");
    }
    impl_ = std::make_unique<Impl>(grid_x, grid_y, arch, params);
}

Network::~Network() = default;

bool Network::attach(uint32_t x, uint32_t y, Endpoint* endpoint, EndpointKind kind) {
    if (endpoint == nullptr || x >= impl_->gx || y >= impl_->gy) {
        return false;
    }
    Node& n = impl_->nodes[y * impl_->gx + x];
    n.ep = endpoint;
    n.kind = kind;
    return true;
}

Niu& Network::attach_core(uint32_t x, uint32_t y, Endpoint* endpoint) {
    if (x >= impl_->gx || y >= impl_->gy) {
        throw std::out_of_range("sim::noc::Network::attach_core: (" + std::to_string(x) + "," +
                                std::to_string(y) + ") is outside the grid");
    }
    if (endpoint == nullptr) {
        throw std::invalid_argument("sim::noc::Network::attach_core: null endpoint");
    }
    const uint32_t idx = y * impl_->gx + x;
    Node& n = impl_->nodes[idx];
    n.ep = endpoint;
    n.kind = EndpointKind::Tile;
    if (!n.niu) {
        n.niu.reset(new Niu(*this, idx));
    }
    return *n.niu;
}

Niu* Network::niu(uint32_t x, uint32_t y) {
    if (x >= impl_->gx || y >= impl_->gy) {
        return nullptr;
    }
    return impl_->nodes[y * impl_->gx + x].niu.get();
}

void Network::step() { impl_->step(); }

void Network::advance_idle(uint64_t cycles) {
    if (!impl_->idle()) {
        throw std::logic_error("sim::noc::Network::advance_idle: traffic is in flight:\n" +
                               describe_in_flight());
    }
    impl_->now += cycles;
}

uint64_t Network::run_until(const std::function<bool()>& done, uint64_t max_cycles) {
    uint64_t n = 0;
    while (n < max_cycles && !done()) {
        impl_->step();
        ++n;
    }
    return n;
}

bool Network::idle() const { return impl_->idle(); }

std::string Network::describe_in_flight() const {
    const Impl& I = *impl_;
    std::ostringstream os;
    static const char* kPortName[] = {"X", "Y", "L"};
    const auto pkt_str = [&](uint32_t id) {
        const Packet& p = I.packets[id];
        std::ostringstream ps;
        const Coord src = I.phys_coord(p.src_node);
        ps << "pkt " << id << " type " << static_cast<int>(p.type) << (p.mcast ? " mcast" : "") << " vc "
           << int(p.vc) << " from (" << src.x << "," << src.y << ") to noc(" << p.dst.x << "," << p.dst.y
           << ") flits " << p.flits();
        return ps.str();
    };
    for (uint32_t noc = 0; noc < hal::noc::kNumNocs; ++noc) {
        for (uint32_t r = 0; r < I.routers[noc].size(); ++r) {
            const Router& rt = I.routers[noc][r];
            for (uint32_t in = 0; in < kInputs; ++in) {
                const InVc& v = rt.in[in];
                if (v.count == 0) {
                    continue;
                }
                const Flit& f = I.fifo[noc][(static_cast<std::size_t>(r) * kInputs + in) * I.params.vc_buffer_flits + v.head];
                const Coord p = I.phys_coord(rt.phys);
                os << "NOC" << noc << " router (" << p.x << "," << p.y << ") in " << kPortName[in / kSlots]
                   << " slot " << in % kSlots << ": " << v.count << " flits, head flit " << f.idx << " of "
                   << pkt_str(f.pkt) << " mask " << int(v.mask) << (v.routed ? "" : " (unrouted)");
                for (uint32_t q = 0; q < 2; ++q) {
                    if ((v.mask & (1u << q)) != 0) {
                        const OutVc& ov = rt.out[q * kSlots + v.out_slot[q]];
                        os << " out" << kPortName[q] << "[slot " << int(v.out_slot[q]) << " credits " << ov.credits
                           << " owner " << (ov.owner == kNone ? -1 : int(ov.owner)) << "]";
                    }
                }
                os << "\n";
            }
        }
    }
    for (const auto& [node, noc] : I.active_injectors) {
        const Injector& j = I.nodes[node].inj[noc];
        const Coord p = I.phys_coord(node);
        for (uint32_t b = 0; b < j.cmd.size(); ++b) {
            if (j.cmd[b].pkt != kNone) {
                os << "NOC" << noc << " node (" << p.x << "," << p.y << ") cmd buf " << b << " next flit "
                   << j.cmd[b].next << " of " << pkt_str(j.cmd[b].pkt) << "\n";
            }
        }
        if (!j.responses.empty()) {
            os << "NOC" << noc << " node (" << p.x << "," << p.y << ") " << j.responses.size()
               << " responses queued, head " << pkt_str(j.responses.front()) << "\n";
        }
    }
    if (!I.delivery_events.empty()) {
        os << I.delivery_events.size() << " flits on their way to an NIU\n";
    }
    return os.str();
}
uint64_t Network::cycle() const { return impl_->now; }
const std::vector<NocError>& Network::errors() const { return impl_->errors; }
void Network::clear_errors() { impl_->errors.clear(); }
void Network::on_error(std::function<void(const NocError&)> hook) { impl_->error_hook = std::move(hook); }

LinkStats Network::link_stats(uint32_t noc, uint32_t x, uint32_t y, Port port) const {
    if (noc >= hal::noc::kNumNocs || x >= impl_->gx || y >= impl_->gy) {
        return {};
    }
    const Coord c = impl_->noc_of(noc, {x, y});
    return impl_->routers[noc][c.y * impl_->gx + c.x].stats[static_cast<uint32_t>(port)];
}

void Network::reset_stats() {
    for (auto& rs : impl_->routers) {
        for (Router& r : rs) {
            r.stats.fill(LinkStats{});
        }
    }
    impl_->stats_start = impl_->now;
}

uint64_t Network::stats_cycles() const { return impl_->now - impl_->stats_start; }
uint32_t Network::grid_x() const { return impl_->gx; }
uint32_t Network::grid_y() const { return impl_->gy; }
const hal::ArchMap& Network::arch() const { return impl_->arch; }
const NocParams& Network::params() const { return impl_->params; }
Coord Network::to_noc(uint32_t noc, Coord physical) const { return impl_->noc_of(noc, physical); }
Coord Network::to_physical(uint32_t noc, Coord noc_coord) const { return impl_->phys_of(noc, noc_coord); }

uint32_t Network::hops(uint32_t noc, Coord src, Coord dst) const {
    const Coord s = impl_->noc_of(noc, src);
    const Coord d = impl_->noc_of(noc, dst);
    return (d.x + impl_->gx - s.x) % impl_->gx + (d.y + impl_->gy - s.y) % impl_->gy;
}

// =================================================================================================

const char* to_string(NocErrorKind kind) {
    switch (kind) {
        case NocErrorKind::NoEndpoint:
            return "no-endpoint";
        case NocErrorKind::AddressRefused:
            return "address-refused";
        case NocErrorKind::Misaligned:
            return "misaligned";
        case NocErrorKind::BurstTooLong:
            return "burst-too-long";
        case NocErrorKind::BadLength:
            return "bad-length";
        case NocErrorKind::CoordOutsideGrid:
            return "coord-outside-grid";
        case NocErrorKind::CmdBufBusy:
            return "cmd-buf-busy";
        case NocErrorKind::Unsupported:
            return "unsupported";
        case NocErrorKind::SourceRefused:
            return "source-refused";
        default:
            return "unknown";
    }
}

std::string to_string(const NocError& e) {
    std::ostringstream os;
    os << "cycle " << e.cycle << " NOC" << e.noc << " (" << e.src.x << "," << e.src.y << ") -> (" << e.dst.x
       << "," << e.dst.y << ") addr 0x" << std::hex << e.addr << std::dec << ": " << to_string(e.kind);
    if (!e.detail.empty()) {
        os << ": " << e.detail;
    }
    return os.str();
}

}  // namespace sim::noc
