#include "noc/niu_ejection.h"

#include <cstring>
#include <span>
#include <string>

namespace sim::noc {

NiuEjection::NiuEjection(const Grid& grid, const hal::ArchMap& arch, NodeTable& nodes,
                         PacketPool& packets, NiuInjection& injection, ErrorLog& errors)
    : grid_(grid),
      arch_(arch),
      nodes_(nodes),
      packets_(packets),
      injection_(injection),
      errors_(errors),
      deliveries_(grid.nodes()) {}

void NiuEjection::deliver(const Arrival& a) {
    using namespace hal::noc::status;
    Packet& p = packets_[a.pkt];
    const bool tail = p.is_tail(a.idx);
    switch (p.type) {
        case PktType::Write:
            deliver_write(a, p);
            break;
        case PktType::InlineWrite:
            serve_inline(a.node, a.noc, p);
            break;
        case PktType::Read:
            serve_read(a.node, a.noc, p);
            break;
        case PktType::Atomic:
            serve_atomic(a.node, a.noc, p);
            break;
        case PktType::WriteAck:
            nodes_.count(a.node, a.noc, kMstWrAckReceived);
            nodes_.count_trid(a.node, a.noc, mst_reqs_outstanding_id(p.trid), -1);
            break;
        case PktType::ReadResp:
            deliver_read_resp(a, p);
            break;
        case PktType::AtomicResp:
            deliver_atomic_resp(a.node, a.noc, p);
            break;
        default:
            break;
    }
    if (tail) {
        if (observer_ != nullptr) report_landing(a.node, p);
        packets_.release_copy(a.pkt);
    }
}

void NiuEjection::report_landing(uint32_t node, const Packet& p) {
    Landed l;
    switch (p.type) {
        case PktType::Write:
            l.kind = LandedKind::Write;
            l.data = p.data.data();
            break;
        case PktType::InlineWrite:
            l.kind = LandedKind::InlineWrite;
            break;
        case PktType::Atomic:
            l.kind = LandedKind::Atomic;
            break;
        default:
            return;  // reads and responses carry no new data to the target
    }
    l.noc = p.noc;
    l.src = grid_.coord(p.src_node);
    l.src_addr = p.src_addr;
    l.dst = grid_.coord(node);
    l.dst_addr = p.dst_addr;
    l.len = p.len;
    l.value = p.at_data;
    l.cycle = *now_;
    observer_->landed(l);
}

void NiuEjection::record(uint32_t node, uint32_t noc, const Packet& p, uint64_t addr,
                         NocErrorKind kind, std::string detail) {
    errors_.record(noc, p.src_node, grid_.coord(node), addr, kind, std::move(detail));
}

bool NiuEjection::check_endpoint(uint32_t node, uint32_t noc, const Packet& p, uint64_t addr) {
    if (nodes_.endpoint(node) == nullptr && missing_) missing_(grid_.coord(node));
    if (nodes_.endpoint(node) != nullptr) {
        return true;
    }
    record(node, noc, p, addr, NocErrorKind::NoEndpoint,
           "nothing is attached at the destination coordinate");
    return false;
}

// ---- writes -------------------------------------------------------------------------------------

void NiuEjection::deliver_write(const Arrival& a, Packet& p) {
    using namespace hal::noc::status;
    const uint32_t node = a.node;
    const uint32_t noc = a.noc;
    if (a.idx == 0) {
        bool ok = check_endpoint(node, noc, p, p.dst_addr);
        if (ok) {
            const AddrClass dst_class = addr_class_at(node, p.dst_addr);
            const bool aligned =
                p.byte_enable ? byte_enable_alignment_ok(dst_class, p.src_addr, p.dst_addr)
                              : length_alignment_ok(addr_class_at(p.src_node, p.src_addr),
                                                    p.src_addr, dst_class, p.dst_addr, p.len);
            if (!aligned) {
                record(node, noc, p, p.dst_addr, NocErrorKind::Misaligned,
                       "write source/destination violate the NoC alignment rules");
                ok = false;
            }
        }
        open(node, noc).push_back({a.pkt, ok});
        nodes_.count(node, noc, kSlvReqAccepted);
        nodes_.count(node, noc, p.posted ? kSlvPostedWrReqStarted : kSlvNonpostedWrReqStarted);
    } else {
        nodes_.count(node, noc,
                     p.posted ? kSlvPostedWrDataWordReceived : kSlvNonpostedWrDataWordReceived);
        Delivery* d = find_delivery(node, noc, a.pkt);
        if (d != nullptr && d->ok && !p.failed) {
            write_data_flit(node, noc, p, a.idx, *d);
        }
    }
    if (p.is_tail(a.idx)) {
        end_delivery(node, noc, a.pkt);
        nodes_.count(node, noc, p.posted ? kSlvPostedWrReqReceived : kSlvNonpostedWrReqReceived);
        if (!p.posted) {
            injection_.queue_response(node, noc, make_response(PktType::WriteAck, noc, node, p));
        }
    }
}

void NiuEjection::write_data_flit(uint32_t node, uint32_t noc, const Packet& p, uint32_t k,
                                  Delivery& d) {
    if (p.byte_enable) {
        // The enabled bytes of the 32-byte word (to MMIO: the whole 4-byte word).
        const bool mmio = addr_class_at(node, p.dst_addr) == AddrClass::Mmio;
        const uint32_t span = mmio ? kMmioWordBytes : kBeWriteBytes;
        const uint32_t mask = mmio ? 0xFu : p.at_len_be;
        d.ok = write_enabled_bytes(node, noc, p, p.dst_addr, p.data.data(), span, mask,
                                   "the destination refused the write");
        return;
    }
    const auto [lo, hi] = flit_range(arch_.noc_word_bytes, p, k);
    std::span<const uint8_t> bytes(p.data.data() + lo, hi - lo);
    if (!nodes_.endpoint(node)->write(p.dst_addr + lo, bytes)) {
        record(node, noc, p, p.dst_addr + lo, NocErrorKind::AddressRefused,
               "the destination refused the write");
        d.ok = false;
    }
}

bool NiuEjection::write_enabled_bytes(uint32_t node, uint32_t noc, const Packet& p, uint64_t base,
                                      const uint8_t* bytes, uint32_t span, uint32_t mask,
                                      const char* refused_detail) {
    Endpoint* ep = nodes_.endpoint(node);
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
        if (!ep->write(base + i, std::span<const uint8_t>(bytes + i, j - i))) {
            record(node, noc, p, base + i, NocErrorKind::AddressRefused, refused_detail);
            return false;
        }
        i = j;
    }
    return true;
}

void NiuEjection::serve_inline(uint32_t node, uint32_t noc, const Packet& p) {
    using namespace hal::noc::status;
    nodes_.count(node, noc, kSlvReqAccepted);
    nodes_.count(node, noc, p.posted ? kSlvPostedWrReqReceived : kSlvNonpostedWrReqReceived);
    if (check_endpoint(node, noc, p, p.dst_addr)) {
        uint8_t value[4];
        std::memcpy(value, &p.at_data, 4);
        const AddrClass dst_class = addr_class_at(node, p.dst_addr);
        if (dst_class == AddrClass::Other) {
            record(node, noc, p, p.dst_addr, NocErrorKind::Unsupported,
                   "inline writes cannot target a non-tile endpoint");
        } else if (dst_class == AddrClass::Mmio) {
            // DA4: a 4-byte write, byte enables ignored.
            if (p.dst_addr % kMmioWordBytes != 0) {
                record(node, noc, p, p.dst_addr, NocErrorKind::Misaligned,
                       "inline write to MMIO must be 4-byte aligned");
            } else if (!nodes_.endpoint(node)->write(p.dst_addr,
                                                     std::span<const uint8_t>(value, 4))) {
                record(node, noc, p, p.dst_addr, NocErrorKind::AddressRefused,
                       "the destination refused the inline write");
            }
        } else {
            // DA16: the address is rounded down to 16; the low and high halves of the 32-bit
            // byte-enable mask each select bytes of that range, every byte lane carrying byte
            // (i % 4) of AT_DATA.
            const uint64_t base = p.dst_addr & ~uint64_t{kInlineL1Bytes - 1};
            const uint32_t mask = (p.at_len_be & 0xFFFFu) | (p.at_len_be >> 16);
            uint8_t lanes[kInlineL1Bytes];
            for (uint32_t i = 0; i < kInlineL1Bytes; ++i) {
                lanes[i] = value[i % 4];
            }
            write_enabled_bytes(node, noc, p, base, lanes, kInlineL1Bytes, mask,
                                "the destination refused the inline write");
        }
    }
    if (!p.posted) {
        injection_.queue_response(node, noc, make_response(PktType::WriteAck, noc, node, p));
    }
}

// ---- reads and atomics
// ----------------------------------------------------------------------------

void NiuEjection::serve_read(uint32_t node, uint32_t noc, const Packet& p) {
    using namespace hal::noc::status;
    nodes_.count(node, noc, kSlvReqAccepted);
    nodes_.count(node, noc, kSlvRdReqReceived);
    const uint32_t id = make_response(PktType::ReadResp, noc, node, p);
    Packet& r = packets_[id];
    r.dst_addr = p.ret_addr;
    r.len = p.len;
    r.data_flits = data_flits_for(arch_.noc_word_bytes, p.ret_addr, p.len);
    r.data.assign(p.len, 0);
    bool ok = check_endpoint(node, noc, p, p.src_addr);
    if (ok && !length_alignment_ok(addr_class_at(node, p.src_addr), p.src_addr,
                                   addr_class_at(p.reply_node, p.ret_addr), p.ret_addr, p.len)) {
        record(node, noc, p, p.src_addr, NocErrorKind::Misaligned,
               "read source/destination violate the NoC alignment rules");
        ok = false;
    }
    if (ok && !nodes_.endpoint(node)->read(p.src_addr,
                                           std::span<uint8_t>(r.data.data(), r.data.size()))) {
        record(node, noc, p, p.src_addr, NocErrorKind::AddressRefused,
               "the target refused the read");
        ok = false;
    }
    r.failed = !ok;
    injection_.queue_response(node, noc, id);
}

bool NiuEjection::atomic_checks(uint32_t node, uint32_t noc, const Packet& p, uint32_t opcode) {
    if (!check_endpoint(node, noc, p, p.dst_addr)) {
        return false;
    }
    if (addr_class_at(node, p.dst_addr) != AddrClass::L1) {
        record(node, noc, p, p.dst_addr, NocErrorKind::Unsupported,
               "atomics only operate on tile L1");
        return false;
    }
    if (opcode != hal::noc::kAtInsIncrGet) {
        record(node, noc, p, p.dst_addr, NocErrorKind::Unsupported,
               "atomic opcode " + std::to_string(opcode) + " is not modelled (only INCR_GET)");
        return false;
    }
    if (!p.posted &&
        (p.ret_addr % 4 != 0 || addr_class_at(p.reply_node, p.ret_addr) != AddrClass::L1)) {
        record(node, noc, p, p.ret_addr, NocErrorKind::Misaligned,
               "atomic response address must be a 4-byte-aligned L1 address");
        return false;
    }
    return true;
}

void NiuEjection::serve_atomic(uint32_t node, uint32_t noc, const Packet& p) {
    using namespace hal::noc::status;
    nodes_.count(node, noc, kSlvReqAccepted);
    nodes_.count(node, noc, p.posted ? kSlvPostedAtomicReceived : kSlvNonpostedAtomicReceived);
    const uint32_t opcode = (p.at_len_be >> hal::noc::kAtInsShift) & kAtInsMask;
    const uint32_t index = (p.at_len_be >> hal::noc::kAtInd32Shift) & kAtInd32Mask;
    const uint32_t wrap = (p.at_len_be >> hal::noc::kAtWrapShift) & kAtWrapMask;
    const uint64_t word_addr = (p.dst_addr & ~uint64_t{kAtomicRegionBytes - 1}) + 4u * index;
    bool ok = atomic_checks(node, noc, p, opcode);
    uint32_t old = 0;
    if (ok) {
        Endpoint* ep = nodes_.endpoint(node);
        uint8_t b[4];
        if (!ep->read(word_addr, std::span<uint8_t>(b, 4))) {
            record(node, noc, p, word_addr, NocErrorKind::AddressRefused,
                   "the target refused the atomic");
            ok = false;
        } else {
            // INCR_GET: add within the low wrap + 1 bits, the bits above them unchanged.
            std::memcpy(&old, b, 4);
            const uint32_t mask = wrap >= 31 ? 0xFFFFFFFFu : ((1u << (wrap + 1)) - 1);
            const uint32_t sum = ((old + p.at_data) & mask) | (old & ~mask);
            std::memcpy(b, &sum, 4);
            if (!ep->write(word_addr, std::span<const uint8_t>(b, 4))) {
                record(node, noc, p, word_addr, NocErrorKind::AddressRefused,
                       "the target refused the atomic");
                ok = false;
            }
        }
    }
    if (!p.posted) {
        const uint32_t id = make_response(PktType::AtomicResp, noc, node, p);
        Packet& r = packets_[id];
        r.dst_addr = p.ret_addr;
        r.len = 4;
        r.data.resize(4);
        std::memcpy(r.data.data(), &old, 4);
        r.failed = !ok;
        injection_.queue_response(node, noc, id);
    }
}

// ---- responses at the requester ---------------------------------------------------------------

void NiuEjection::deliver_read_resp(const Arrival& a, Packet& p) {
    using namespace hal::noc::status;
    const uint32_t node = a.node;
    const uint32_t noc = a.noc;
    if (a.idx == 0) {
        bool ok = !p.failed;
        if (ok && nodes_.endpoint(node) == nullptr) {
            record(node, noc, p, p.dst_addr, NocErrorKind::NoEndpoint,
                   "read response for a coordinate with nothing attached");
            ok = false;
        }
        open(node, noc).push_back({a.pkt, ok});
    } else {
        nodes_.count(node, noc, kMstRdDataWordReceived);
        Delivery* d = find_delivery(node, noc, a.pkt);
        if (d != nullptr && d->ok) {
            const auto [lo, hi] = flit_range(arch_.noc_word_bytes, p, a.idx);
            std::span<const uint8_t> bytes(p.data.data() + lo, hi - lo);
            if (!nodes_.endpoint(node)->write(p.dst_addr + lo, bytes)) {
                record(node, noc, p, p.dst_addr + lo, NocErrorKind::AddressRefused,
                       "the requester refused the read data");
                d->ok = false;
            }
        }
    }
    if (p.is_tail(a.idx)) {
        end_delivery(node, noc, a.pkt);
        nodes_.count(node, noc, kMstRdRespReceived);
        nodes_.count_trid(node, noc, mst_reqs_outstanding_id(p.trid), -1);
    }
}

void NiuEjection::deliver_atomic_resp(uint32_t node, uint32_t noc, const Packet& p) {
    using namespace hal::noc::status;
    if (!p.failed) {
        Endpoint* ep = nodes_.endpoint(node);
        if (ep == nullptr) {
            record(node, noc, p, p.dst_addr, NocErrorKind::NoEndpoint,
                   "atomic response for a coordinate with nothing attached");
        } else if (!ep->write(p.dst_addr, std::span<const uint8_t>(p.data.data(), 4))) {
            record(node, noc, p, p.dst_addr, NocErrorKind::AddressRefused,
                   "the requester refused the atomic's returned value");
        }
    }
    nodes_.count(node, noc, kMstAtomicRespReceived);
    nodes_.count_trid(node, noc, mst_reqs_outstanding_id(p.trid), -1);
}

// ---- bookkeeping ------------------------------------------------------------------------------

uint32_t NiuEjection::make_response(PktType type, uint32_t noc, uint32_t from_node,
                                    const Packet& req) {
    const uint32_t id = packets_.allocate();
    Packet& r = packets_[id];
    r.type = type;
    r.noc = static_cast<uint8_t>(noc);
    r.vc = kResponseVc;
    r.trid = req.trid;
    r.src_node = from_node;
    r.reply_node = req.reply_node;
    r.dst = grid_.to_noc(noc, grid_.coord(req.reply_node));
    return id;
}

NiuEjection::Delivery* NiuEjection::find_delivery(uint32_t node, uint32_t noc, uint32_t pkt) {
    for (Delivery& d : open(node, noc)) {
        if (d.pkt == pkt) {
            return &d;
        }
    }
    return nullptr;
}

void NiuEjection::end_delivery(uint32_t node, uint32_t noc, uint32_t pkt) {
    std::vector<Delivery>& v = open(node, noc);
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i].pkt == pkt) {
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
            return;
        }
    }
}

}  // namespace sim::noc
