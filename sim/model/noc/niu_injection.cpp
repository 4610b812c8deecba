#include "noc/niu_injection.h"

#include <algorithm>
#include <span>

namespace sim::noc {

bool Injector::oldest_on_vc(uint32_t src) const {
    const Source& me = cmd[src];
    for (uint32_t o = 0; o < cmd.size(); ++o) {
        const Source& s = cmd[o];
        if (o != src && s.pkt != kNone && s.next == 0 && s.seq < me.seq && s.vc == me.vc) {
            return false;
        }
    }
    return true;
}

bool Injector::pending() const {
    return !responses.empty() ||
           std::any_of(cmd.begin(), cmd.end(), [](const Source& s) { return s.pkt != kNone; });
}

NiuInjection::NiuInjection(const Grid& grid, const hal::ArchMap& arch, const NocParams& params,
                           NodeTable& nodes, PacketPool& packets, InputUnit& inputs,
                           PathReservation& reservations, ErrorLog& errors)
    : grid_(grid),
      arch_(arch),
      params_(params),
      nodes_(nodes),
      packets_(packets),
      inputs_(inputs),
      reservations_(reservations),
      errors_(errors),
      decoder_(grid, arch, errors),
      injectors_(grid.nodes()) {
    for (auto& per_noc : injectors_) {
        for (Injector& j : per_noc) {
            j.credits.fill(static_cast<int32_t>(params.vc_buffer_flits));
            j.owner.fill(kNone);
        }
    }
}

void NiuInjection::launch(uint32_t node, uint32_t noc, uint32_t buf) {
    using namespace hal::noc::status;
    Injector& j = injectors_[node][noc];
    if (j.cmd[buf].pkt != kNone) {
        errors_.record(
            noc, node, grid_.coord(node), 0, NocErrorKind::CmdBufBusy,
            "NOC_CMD_CTRL written while command buffer " + std::to_string(buf) + " was busy");
        return;
    }
    std::optional<Packet> request = decoder_.decode(nodes_, node, noc, buf);
    if (!request) {
        return;
    }
    const uint32_t id = packets_.allocate();
    packets_.assign(id, std::move(*request));
    Packet& p = packets_[id];
    if (p.type == PktType::Write) {
        p.data.assign(p.len, 0);
        p.data_flits = p.byte_enable ? 1 : data_flits_for(arch_.noc_word_bytes, p.dst_addr, p.len);
    }
    j.cmd[buf] = Source{id, 0, j.launches++, p.vc};
    mark_active(node, noc);

    nodes_.count(node, noc, kMstCmdAccepted);
    if (p.type == PktType::Read || !p.posted) {
        nodes_.count_trid(node, noc, mst_reqs_outstanding_id(p.trid), 1);
    }
    if (p.type == PktType::Write) {
        nodes_.count_trid(node, noc, mst_write_reqs_outgoing_id(p.trid), 1);
    }
}

void NiuInjection::queue_response(uint32_t node, uint32_t noc, uint32_t pkt) {
    injectors_[node][noc].responses.push_back(pkt);
    mark_active(node, noc);
}

void NiuInjection::mark_active(uint32_t node, uint32_t noc) {
    Injector& j = injectors_[node][noc];
    if (!j.active) {
        j.active = true;
        active_.emplace_back(node, noc);
    }
}

void NiuInjection::inject(uint64_t now) {
    if (active_.empty()) {
        return;
    }
    // Indexed, over the injectors active now: an error hook that launches a request appends one.
    const std::size_t n = active_.size();
    for (std::size_t i = 0; i < n; ++i) {
        inject_one(active_[i].first, active_[i].second, now);
    }
    std::erase_if(active_, [this](const std::pair<uint32_t, uint32_t>& a) {
        Injector& j = injectors_[a.first][a.second];
        if (!j.pending()) {
            j.active = false;
            return true;
        }
        return false;
    });
}

bool NiuInjection::may_send(Injector& j, uint32_t src, uint32_t pkt_id, uint32_t next) {
    Packet& p = packets_[pkt_id];
    const uint32_t slot = p.vc * 2u;
    if (j.credits[slot] <= 0) {
        return false;
    }
    // The injection port's VC carries one packet at a time, header to tail.
    if (next == 0 ? j.owner[slot] != kNone : j.owner[slot] != src) {
        return false;
    }
    if (next == 0 && src != Injector::kResponseSource && !j.oldest_on_vc(src)) {
        return false;
    }
    // Last, as it claims the tree: part of it may be in use by another multicast (then wait).
    return !(next == 0 && p.mcast && p.path_reserve && !reservations_.try_reserve(p, pkt_id));
}

void NiuInjection::inject_one(uint32_t node, uint32_t noc, uint64_t now) {
    Injector& j = injectors_[node][noc];
    for (uint32_t k = 0; k < Injector::kSources; ++k) {
        const uint32_t src = (j.rr + k) % Injector::kSources;
        const bool response = src == Injector::kResponseSource;
        if (response ? j.responses.empty() : j.cmd[src].pkt == kNone) {
            continue;
        }
        const uint32_t pkt_id = response ? j.responses.front() : j.cmd[src].pkt;
        const uint32_t next = response ? j.response_next : j.cmd[src].next;
        if (!may_send(j, src, pkt_id, next)) {
            continue;
        }
        Packet& p = packets_[pkt_id];
        const uint32_t slot = p.vc * 2u;
        const bool head = next == 0;
        const bool tail = p.is_tail(next);
        if (head) {
            p.live = 1;
        }
        if (p.type == PktType::Write && !head) {
            read_write_data(node, noc, p, next);
        }
        inputs_.write(noc, grid_.router_of_node(noc, node), kPortLocal, slot,
                      Flit{pkt_id, next, now + params_.router_cycles, kBranchToStart});
        --j.credits[slot];
        j.owner[slot] = tail ? kNone : src;
        j.rr = (src + 1) % Injector::kSources;
        count_injected(node, noc, p, head, tail);
        if (response) {
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

void NiuInjection::read_write_data(uint32_t node, uint32_t noc, Packet& p, uint32_t k) {
    if (p.failed) {
        return;
    }
    const auto [lo, hi] = p.byte_enable ? std::pair<uint32_t, uint32_t>{0, p.len}
                                        : flit_range(arch_.noc_word_bytes, p, k);
    Endpoint* ep = nodes_.endpoint(node);
    std::span<uint8_t> out(p.data.data() + lo, hi - lo);
    if (ep == nullptr || !ep->read(p.src_addr + lo, out)) {
        p.failed = true;
        errors_.record_noc(noc, node, p.dst, p.src_addr + lo, NocErrorKind::SourceRefused,
                           "the issuing core's memory refused the read of the write data");
    }
}

void NiuInjection::count_injected(uint32_t node, uint32_t noc, const Packet& p, bool head,
                                  bool tail) {
    using namespace hal::noc::status;
    const auto count = [&](uint32_t index) { nodes_.count(node, noc, index); };
    switch (p.type) {
        case PktType::Write:
        case PktType::InlineWrite:
            if (head) {
                count(p.posted ? kMstPostedWrReqStarted : kMstNonpostedWrReqStarted);
            } else {
                count(p.posted ? kMstPostedWrDataWordSent : kMstNonpostedWrDataWordSent);
            }
            if (tail) {
                count(p.posted ? kMstPostedWrReqSent : kMstNonpostedWrReqSent);
                if (p.type == PktType::Write) {
                    nodes_.count_trid(node, noc, mst_write_reqs_outgoing_id(p.trid), -1);
                }
            }
            break;
        case PktType::Read:
            if (head) {
                count(kMstRdReqStarted);
            }
            if (tail) {
                count(kMstRdReqSent);
            }
            break;
        case PktType::Atomic:
            if (head && !p.posted) {
                count(kMstNonpostedAtomicStarted);
            }
            if (tail) {
                count(p.posted ? kMstPostedAtomicSent : kMstNonpostedAtomicSent);
            }
            break;
        case PktType::WriteAck:
            if (tail) {
                count(kSlvWrAckSent);
            }
            break;
        case PktType::ReadResp:
            if (!head) {
                count(kSlvRdDataWordSent);
            }
            if (tail) {
                count(kSlvRdRespSent);
            }
            break;
        case PktType::AtomicResp:
            if (tail) {
                count(kSlvAtomicRespSent);
            }
            break;
        default:
            break;
    }
}

}  // namespace sim::noc
