// The register port of a core's NIU (class Niu in network.h): what the core's MMIO accesses to
// 0xFFB20000.. do. Launches go to the NIU's injection stage; counters live in the node table.
#include <optional>

#include "hal/encoding.h"
#include "noc/network.h"
#include "noc/network_impl.h"

namespace sim::noc {

namespace {

// A core address decoded into NOC, command buffer and offset in the buffer's window.
struct NiuAddr {
    uint32_t noc;
    uint32_t buf;
    uint32_t off;
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

// NOC_CFG(n) and NOC_STATUS(n) sit in command buffer 0's window.
bool in_cfg(const NiuAddr& n) {
    return n.buf == 0 && n.off >= hal::noc::kCfgBase &&
           n.off < hal::noc::kCfgBase + 4 * kNumCfgRegs;
}
bool in_status(const NiuAddr& n) {
    return n.buf == 0 && n.off >= hal::noc::kStatusBase &&
           n.off < hal::noc::kStatusBase + 4 * hal::noc::status::kCount;
}

}  // namespace

bool Niu::contains(uint32_t a) {
    return a >= hal::common::kNocRegsBase &&
           a - hal::common::kNocRegsBase < hal::noc::kNumNocs * hal::common::kNocInstanceStride;
}

bool Niu::mmio_write(uint32_t core_addr, uint32_t value) {
    Network::Impl& I = *net_.impl_;
    const auto n = decode_niu(I.arch, core_addr);
    if (!n) {
        return false;
    }
    NiuRegs& R = I.nodes.regs(node_, n->noc);
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
            I.injection.launch(node_, n->noc, n->buf);
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
    const NiuRegs& R = I.nodes.regs(node_, n->noc);
    if (in_cfg(*n)) {
        return R.cfg[(n->off - hal::noc::kCfgBase) / 4];
    }
    if (in_status(*n)) {
        return R.status[(n->off - hal::noc::kStatusBase) / 4];
    }
    if (n->off == I.arch.noc.cmd_ctrl) {
        return I.injection.busy(node_, n->noc, n->buf) ? hal::noc::kCmdCtrlSend
                                                       : hal::noc::kCmdCtrlReady;
    }
    if (n->off == I.arch.noc.node_id) {
        const Coord c = I.grid.to_noc(n->noc, I.grid.coord(node_));
        return hal::noc::unicast_coord(c.x, c.y);
    }
    if (n->off == I.arch.noc.endpoint_id || n->off == I.arch.noc.clear_outstanding_req_cnt) {
        return 0u;
    }
    return R.cmd[(n->buf * I.arch.noc_cmd_buf_stride + n->off) / 4];
}

uint32_t Niu::counter(uint32_t noc, uint32_t index) const {
    if (noc >= hal::noc::kNumNocs || index >= hal::noc::status::kCount) {
        return 0;
    }
    return net_.impl_->nodes.regs(node_, noc).status[index];
}

bool Niu::cmd_buf_busy(uint32_t noc, uint32_t buf) const {
    return noc < hal::noc::kNumNocs && buf < hal::noc::kNumCmdBufs &&
           net_.impl_->injection.busy(node_, noc, buf);
}

Coord Niu::coord() const {
    return net_.impl_->grid.coord(node_);
}

}  // namespace sim::noc
