// A behavioural NIU on top of FakeRegisterFile, for host tests that need NoC requests to *happen*:
// writing NOC_CMD_CTRL = 1 decodes the command buffer, performs the request when it targets this
// core (L1 copy, inline store, atomic add), records it, and moves the NIU counters the way the
// hardware does (ISA doc, "NIU counters"), so the HAL's barriers and flushed checks see real
// completions. Requests to other tiles are recorded (requests()) and handed to an optional hook.
//
//   FakeRegisterFile fake;  ScopedFakeMmio use(fake);
//   FakeNiu<hal::kWormholeB0> niu(fake, /*noc=*/0, {.x = 1, .y = 1});
//   niu.set_auto_complete(false);   // hold completions: barriers now time out ...
//   niu.complete_all();             // ... until this
//
// Simplifications: completion is instantaneous (or manual), multicast ack counts assume a
// rectangle that does not wrap, and hardware request splitting is not modelled (the HAL never
// issues a request longer than the arch's maximum burst).
#pragma once

#include <stdint.h>

#include <cstring>
#include <functional>
#include <vector>

#include "hal/arch_map.h"
#include "hal/encoding.h"
#include "hal/testing/fake_mmio.h"

namespace hal::testing {

// One decoded NoC request.
struct NocRequest {
    uint32_t cmd_buf;
    uint32_t ctrl;
    uint32_t trid;
    uint64_t targ_addr;
    uint32_t targ_coord;  // unicast x/y field (or 24-bit rectangle)
    uint64_t ret_addr;
    uint32_t ret_coord;
    uint32_t at_len_be;
    uint32_t at_data;

    uint32_t type() const { return ctrl & hal::noc::kCtrlCmdMask; }
    bool is_read() const { return type() == hal::noc::kCtrlCmdRead; }
    bool is_atomic() const { return type() == hal::noc::kCtrlCmdAtomic; }
    bool is_write() const { return type() == hal::noc::kCtrlCmdWrite; }
    bool is_inline() const { return is_write() && (ctrl & hal::noc::kCtrlWrInline) != 0; }
    bool is_mcast() const { return (ctrl & hal::noc::kCtrlBrcstPacket) != 0; }
    bool posted() const { return (ctrl & hal::noc::kCtrlRespMarked) == 0; }
    uint32_t vc() const { return hal::noc::ctrl_vc(ctrl); }
};

template <const ArchMap& A>
class FakeNiu {
  public:
    // Called for every request whose destination is not (only) this core.
    using RemoteHook = std::function<void(const NocRequest&)>;

    FakeNiu(FakeRegisterFile& fake, uint32_t noc_id, NocXY self)
        : fake_(fake), noc_(noc_id), self_(self) {
        fake_.set(hal::noc::cmd_buf_base(A, noc_, 0) + A.noc.node_id,
                  hal::noc::unicast_coord(self.x, self.y));
        for (uint32_t buf = 0; buf < hal::noc::kNumCmdBufs; ++buf) {
            const uint32_t cmd_ctrl = hal::noc::cmd_buf_base(A, noc_, buf) + A.noc.cmd_ctrl;
            fake_.self_clearing(cmd_ctrl);
            fake_.on_write(cmd_ctrl, [this, buf](uint32_t v) {
                if ((v & hal::noc::kCmdCtrlSend) != 0) {
                    launch(buf);
                }
            });
        }
        fake_.on_write(hal::noc::niu_base(noc_) + A.noc.clear_outstanding_req_cnt,
                       [this](uint32_t mask) {
                           for (uint32_t id = 0; id < hal::noc::kNumTransactionIds; ++id) {
                               if ((mask >> id) & 1u) {
                                   set_counter(hal::noc::status::mst_reqs_outstanding_id(id), 0);
                               }
                           }
                       });
    }

    // The hooks it installs on `fake` capture this object: keep it in place while fake is in use.
    FakeNiu(const FakeNiu&) = delete;
    FakeNiu& operator=(const FakeNiu&) = delete;

    // true (default): requests complete as soon as they are launched.
    void set_auto_complete(bool on) { auto_complete_ = on; }
    void set_remote_hook(RemoteHook hook) { remote_ = std::move(hook); }

    // Complete every launched request still pending.
    void complete_all() {
        std::vector<NocRequest> todo;
        todo.swap(pending_);
        for (const NocRequest& r : todo) {
            complete(r);
        }
    }

    const std::vector<NocRequest>& requests() const { return requests_; }
    const std::vector<NocRequest>& pending() const { return pending_; }
    uint32_t counter(uint32_t index) const { return fake_.get(hal::noc::status_addr(noc_, index)); }
    void set_counter(uint32_t index, uint32_t v) {
        fake_.set(hal::noc::status_addr(noc_, index), v);
    }

  private:
    uint32_t reg(uint32_t buf, uint32_t offset) const {
        return fake_.get(hal::noc::cmd_buf_base(A, noc_, buf) + offset);
    }

    hal::noc::DecodedAddr addr(uint32_t buf, uint32_t lo_offset) const {
        const hal::noc::AddrRegs r{reg(buf, lo_offset), reg(buf, lo_offset + 4),
                                   reg(buf, lo_offset + 8)};
        return hal::noc::decode_addr(A, r);
    }

    void bump(uint32_t index, uint32_t by = 1) { set_counter(index, counter(index) + by); }

    // Acks a write produces: one per destination tile.
    uint32_t acks_of(const NocRequest& r) const {
        if (!r.is_mcast() || r.is_inline()) {
            return 1;
        }
        const NocRect rect = hal::noc::decode_mcast_coord(r.ret_coord);
        uint32_t n = (rect.x_end - rect.x_start + 1) * (rect.y_end - rect.y_start + 1);
        const bool self_inside = self_.x >= rect.x_start && self_.x <= rect.x_end &&
                                 self_.y >= rect.y_start && self_.y <= rect.y_end;
        if (self_inside && (r.ctrl & hal::noc::kCtrlBrcstSrcInclude) == 0) {
            n -= 1;
        }
        return n;
    }

    void launch(uint32_t buf) {
        NocRequest r{};
        r.cmd_buf = buf;
        r.ctrl = reg(buf, hal::noc::kCtrl);
        r.trid = hal::noc::tag_trid(reg(buf, hal::noc::kPacketTag));
        const auto targ = addr(buf, hal::noc::kTargAddrLo);
        const auto ret = addr(buf, hal::noc::kRetAddrLo);
        r.targ_addr = targ.local;
        r.targ_coord = targ.coord_field;
        r.ret_addr = ret.local;
        r.ret_coord = ret.coord_field;
        r.at_len_be = reg(buf, hal::noc::kAtLenBe);
        r.at_data = reg(buf, A.noc.at_data);
        requests_.push_back(r);
        // Increments made as NOC_CMD_CTRL is written.
        if (!r.posted() || r.is_read()) {
            bump(hal::noc::status::mst_reqs_outstanding_id(r.trid));
        }
        if (r.is_write() && !r.is_inline()) {
            bump(hal::noc::status::mst_write_reqs_outgoing_id(r.trid));
        }
        if (auto_complete_) {
            complete(r);
        } else {
            pending_.push_back(r);
        }
    }

    bool to_self(uint32_t coord) const {
        return coord == hal::noc::unicast_coord(self_.x, self_.y);
    }

    void complete(const NocRequest& r) {
        using namespace hal::noc::status;
        uint8_t* l1 = fake_.l1_base();
        if (r.is_read()) {
            if (to_self(r.targ_coord)) {
                std::memmove(l1 + r.ret_addr, l1 + r.targ_addr, r.at_len_be);
            } else if (remote_) {
                remote_(r);
            }
            bump(kMstRdReqSent);
            bump(kMstRdRespReceived);
            dec_outstanding(r.trid, 1);
            return;
        }
        if (r.is_atomic()) {
            if (to_self(r.targ_coord)) {
                uint32_t old;
                std::memcpy(&old, l1 + r.targ_addr, 4);
                const uint32_t wrap = (r.at_len_be >> hal::noc::kAtWrapShift) & 0x1F;
                const uint64_t mask = (uint64_t{1} << (wrap + 1)) - 1;
                const uint32_t sum = static_cast<uint32_t>(((old & mask) + r.at_data) & mask) |
                                     static_cast<uint32_t>(old & ~mask);
                std::memcpy(l1 + r.targ_addr, &sum, 4);
                if (!r.posted()) {
                    std::memcpy(l1 + r.ret_addr, &old, 4);
                }
            } else if (remote_) {
                remote_(r);
            }
            if (r.posted()) {
                bump(kMstPostedAtomicSent);
            } else {
                bump(kMstNonpostedAtomicSent);
                bump(kMstAtomicRespReceived);
                dec_outstanding(r.trid, 1);
            }
            return;
        }
        // Writes.
        const uint32_t dest_coord = r.is_inline() ? r.targ_coord : r.ret_coord;
        bool local = false;
        if (r.is_mcast()) {
            const NocRect rect = hal::noc::decode_mcast_coord(dest_coord);
            local = (r.ctrl & hal::noc::kCtrlBrcstSrcInclude) != 0 && self_.x >= rect.x_start &&
                    self_.x <= rect.x_end && self_.y >= rect.y_start && self_.y <= rect.y_end;
            if (remote_) {
                remote_(r);
            }
        } else if (to_self(dest_coord)) {
            local = true;
        } else if (remote_) {
            remote_(r);
        }
        if (local) {
            if (r.is_inline()) {
                if (r.targ_addr >= hal::noc::kMmioStart) {
                    fake_.write32(static_cast<uint32_t>(r.targ_addr), r.at_data);
                } else {
                    std::memcpy(l1 + (r.targ_addr & ~uint64_t{3}), &r.at_data, 4);
                }
            } else {
                std::memmove(l1 + r.ret_addr, l1 + r.targ_addr, r.at_len_be);
            }
        }
        const uint32_t acks = acks_of(r);
        if (r.posted()) {
            bump(kMstPostedWrReqSent);
        } else {
            bump(kMstNonpostedWrReqSent);
            bump(kMstWrAckReceived, acks);
            dec_outstanding(r.trid, acks);
        }
        if (!r.is_inline()) {
            set_counter(mst_write_reqs_outgoing_id(r.trid),
                        counter(mst_write_reqs_outgoing_id(r.trid)) - 1);
        }
    }

    void dec_outstanding(uint32_t trid, uint32_t by) {
        const uint32_t idx = hal::noc::status::mst_reqs_outstanding_id(trid);
        set_counter(idx, (counter(idx) - by) & 0xFF);  // 8-bit counter
    }

    FakeRegisterFile& fake_;
    uint32_t noc_;
    NocXY self_;
    bool auto_complete_ = true;
    RemoteHook remote_;
    std::vector<NocRequest> requests_;
    std::vector<NocRequest> pending_;
};

}  // namespace hal::testing
