// Helpers for the NOC model tests: a chip of plain-memory cores, and a register-level request
// issuer that programs a command buffer exactly as the HAL driver does (same encodings from
// hal/encoding.h), so the tests exercise the register protocol, not a side door.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "hal/arch_map.h"
#include "hal/encoding.h"
#include "noc/memory.h"
#include "noc/network.h"
#include "noc/stream_regs.h"

namespace noc_test {

using sim::noc::Coord;
using sim::noc::Network;
using sim::noc::Niu;

// A memory that logs each write (cycle taken from the network) on top of a PlainMemory.
class RecordingMemory : public sim::Endpoint {
  public:
    struct Write {
        uint64_t cycle;
        uint64_t addr;
        std::size_t size;
    };
    RecordingMemory(const Network*& net, uint64_t size) : net_(net), mem_(size) {}
    bool write(uint64_t addr, std::span<const uint8_t> bytes) override {
        log_.push_back({net_ != nullptr ? net_->cycle() : 0, addr, bytes.size()});
        return mem_.write(addr, bytes);
    }
    bool read(uint64_t addr, std::span<uint8_t> bytes) override { return mem_.read(addr, bytes); }
    const std::vector<Write>& log() const { return log_; }
    sim::PlainMemory& mem() { return mem_; }

  private:
    const Network*& net_;
    sim::PlainMemory mem_;
    std::vector<Write> log_;
};

// One core: L1 (recording), stream registers, and the address map the NOC sees.
struct Core {
    Core(const Network*& net, const hal::ArchMap& a, uint32_t l1_size)
        : l1(net, l1_size), streams(a, a.eth_streams) {
        map.add(0, l1_size, &l1);
        map.add(streams.base(), streams.window_bytes(), &streams);
    }
    RecordingMemory l1;
    sim::StreamRegs streams;
    sim::AddressMap map;
    Niu* niu = nullptr;
    Coord at;

    uint8_t* bytes() { return l1.mem().data(); }
    uint32_t word(uint64_t addr) { return l1.mem().word(addr); }
};

class Chip {
  public:
    Chip(uint32_t gx, uint32_t gy, const hal::ArchMap& a, sim::noc::NocParams p = {})
        : arch(a), net(gx, gy, a, p) {
        net_ptr = &net;
    }

    Core& add_core(uint32_t x, uint32_t y, uint32_t l1_size = 0) {
        cores.push_back(
            std::make_unique<Core>(net_ptr, arch, l1_size == 0 ? arch.eth_l1_size : l1_size));
        Core& c = *cores.back();
        c.niu = &net.attach_core(x, y, &c.map);
        c.at = {x, y};
        return c;
    }

    uint64_t run_until(const std::function<bool()>& done, uint64_t max = 1'000'000) {
        return net.run_until(done, max);
    }
    uint64_t drain(uint64_t max = 1'000'000) {
        return net.run_until([this] { return net.idle(); }, max);
    }

    const hal::ArchMap& arch;
    Network net;
    const Network* net_ptr = nullptr;
    std::vector<std::unique_ptr<Core>> cores;
};

// Fill [addr, addr + len) of a core's L1 with a pattern derived from `seed`.
inline void fill(Core& c, uint32_t addr, uint32_t len, uint32_t seed) {
    for (uint32_t i = 0; i < len; ++i) {
        c.bytes()[addr + i] = static_cast<uint8_t>((i * 131u + seed * 7u + (i >> 8)) & 0xFF);
    }
}
inline bool same(Core& a, uint32_t a_addr, Core& b, uint32_t b_addr, uint32_t len) {
    return std::memcmp(a.bytes() + a_addr, b.bytes() + b_addr, len) == 0;
}
inline bool all_zero(Core& c, uint32_t addr, uint32_t len) {
    for (uint32_t i = 0; i < len; ++i) {
        if (c.bytes()[addr + i] != 0) {
            return false;
        }
    }
    return true;
}

// ---- register-level request issue (what hal/noc.h's issue() writes)
// ---------------------------------

struct Regs {
    uint32_t noc = 0;
    uint32_t buf = 0;
    hal::noc::AddrRegs targ{};
    hal::noc::AddrRegs ret{};
    uint32_t tag = 0;
    uint32_t ctrl = 0;
    uint32_t at_len_be = 0;
    uint32_t at_data = 0;
};

inline void program(const hal::ArchMap& A, Niu& niu, const Regs& r) {
    const uint32_t base = hal::noc::cmd_buf_base(A, r.noc, r.buf);
    niu.mmio_write(base + hal::noc::kTargAddrLo, r.targ.lo);
    niu.mmio_write(base + hal::noc::kTargAddrMid, r.targ.mid);
    niu.mmio_write(base + hal::noc::kTargAddrHi, r.targ.hi);
    niu.mmio_write(base + hal::noc::kRetAddrLo, r.ret.lo);
    niu.mmio_write(base + hal::noc::kRetAddrMid, r.ret.mid);
    niu.mmio_write(base + hal::noc::kRetAddrHi, r.ret.hi);
    niu.mmio_write(base + hal::noc::kPacketTag, r.tag);
    niu.mmio_write(base + hal::noc::kCtrl, r.ctrl);
    niu.mmio_write(base + hal::noc::kAtLenBe, r.at_len_be);
    niu.mmio_write(base + A.noc.at_data, r.at_data);
    niu.mmio_write(base + A.noc.cmd_ctrl, hal::noc::kCmdCtrlSend);
}

struct Opts {
    uint32_t noc = 0;
    uint32_t buf = 0;
    bool posted = false;
    uint32_t vc = hal::noc::kDefaultUnicastVc;
    uint32_t trid = 0;
};

// Coordinates are in the coordinate space of the NOC used (like the HAL).
inline Coord self_on(const Network& net, const Core& c, uint32_t noc) {
    return net.to_noc(noc, c.at);
}

inline void write(Chip& chip, Core& src, uint32_t src_addr, Coord dst, uint64_t dst_addr,
                  uint32_t len, Opts o = {}) {
    const Coord me = self_on(chip.net, src, o.noc);
    Regs r;
    r.noc = o.noc;
    r.buf = o.buf;
    r.targ = hal::noc::encode_addr(chip.arch, src_addr, hal::noc::unicast_coord(me.x, me.y));
    r.ret = hal::noc::encode_addr(chip.arch, dst_addr, hal::noc::unicast_coord(dst.x, dst.y));
    r.tag = hal::noc::packet_tag(o.trid);
    r.ctrl = hal::noc::kCtrlCmdWrite | hal::noc::static_vc(o.vc) |
             (o.posted ? 0u : hal::noc::kCtrlRespMarked);
    r.at_len_be = len;
    program(chip.arch, *src.niu, r);
}

inline void read(Chip& chip, Core& me_core, Coord src, uint64_t src_addr, uint32_t dst_addr,
                 uint32_t len, Opts o = {}) {
    const Coord me = self_on(chip.net, me_core, o.noc);
    Regs r;
    r.noc = o.noc;
    r.buf = o.buf;
    r.targ = hal::noc::encode_addr(chip.arch, src_addr, hal::noc::unicast_coord(src.x, src.y));
    r.ret = hal::noc::encode_addr(chip.arch, dst_addr, hal::noc::unicast_coord(me.x, me.y));
    r.tag = hal::noc::packet_tag(o.trid);
    r.ctrl = hal::noc::kCtrlCmdRead | hal::noc::static_vc(o.vc);
    r.at_len_be = len;
    program(chip.arch, *me_core.niu, r);
}

inline void inline_write(Chip& chip, Core& src, Coord dst, uint64_t dst_addr, uint32_t value,
                         uint32_t be4, Opts o = {}) {
    Regs r;
    r.noc = o.noc;
    r.buf = o.buf;
    r.targ = hal::noc::encode_addr(chip.arch, dst_addr, hal::noc::unicast_coord(dst.x, dst.y));
    r.tag = hal::noc::packet_tag(o.trid);
    r.ctrl = hal::noc::kCtrlCmdWrite | hal::noc::kCtrlWrInline | hal::noc::static_vc(o.vc) |
             (o.posted ? 0u : hal::noc::kCtrlRespMarked);
    r.at_len_be = hal::noc::inline_byte_enable(dst_addr, be4);
    r.at_data = value;
    program(chip.arch, *src.niu, r);
}

inline void atomic_inc(Chip& chip, Core& src, Coord dst, uint64_t dst_addr, uint32_t incr,
                       uint32_t ret_addr, Opts o = {}, uint32_t wrap = hal::noc::kAtWrap32) {
    const Coord me = self_on(chip.net, src, o.noc);
    Regs r;
    r.noc = o.noc;
    r.buf = o.buf;
    r.targ = hal::noc::encode_addr(chip.arch, dst_addr, hal::noc::unicast_coord(dst.x, dst.y));
    r.ret = hal::noc::encode_addr(chip.arch, ret_addr, hal::noc::unicast_coord(me.x, me.y));
    r.tag = hal::noc::packet_tag(o.trid);
    r.ctrl = hal::noc::kCtrlCmdAtomic | hal::noc::static_vc(o.vc) |
             (o.posted ? 0u : hal::noc::kCtrlRespMarked);
    r.at_len_be = hal::noc::atomic_incr_len_be(dst_addr, wrap);
    r.at_data = incr;
    program(chip.arch, *src.niu, r);
}

struct McastOpts {
    uint32_t noc = 0;
    uint32_t buf = 0;
    bool posted = false;
    uint32_t vc = hal::noc::kDefaultMulticastVc;
    bool include_self = false;
    bool y_major = false;
};

inline void mcast_write(Chip& chip, Core& src, uint32_t src_addr, hal::NocRect rect,
                        uint64_t dst_addr, uint32_t len, McastOpts o = {}) {
    const Coord me = self_on(chip.net, src, o.noc);
    Regs r;
    r.noc = o.noc;
    r.buf = o.buf;
    r.targ = hal::noc::encode_addr(chip.arch, src_addr, hal::noc::unicast_coord(me.x, me.y));
    r.ret = hal::noc::encode_addr(chip.arch, dst_addr, hal::noc::mcast_coord(rect));
    r.ctrl = hal::noc::kCtrlCmdWrite | hal::noc::static_vc(o.vc) | hal::noc::kCtrlBrcstPacket |
             hal::noc::kCtrlPathReserve | (o.include_self ? hal::noc::kCtrlBrcstSrcInclude : 0u) |
             (o.y_major ? hal::noc::kCtrlBrcstYMajor : 0u) |
             (o.posted ? 0u : hal::noc::kCtrlRespMarked);
    r.at_len_be = len;
    program(chip.arch, *src.niu, r);
}

inline uint32_t counter(Core& c, uint32_t noc, uint32_t index) {
    return c.niu->counter(noc, index);
}

// Data flits of `len` bytes landing at `addr` (flits are aligned NOC words).
inline uint32_t data_flits(const hal::ArchMap& a, uint64_t addr, uint32_t len) {
    const uint64_t w = a.noc_word_bytes;
    return static_cast<uint32_t>((addr % w + len + w - 1) / w);
}

// Cycles per router on the path (router pipeline + the link after it).
inline uint64_t per_hop(const Network& n) {
    return n.params().router_cycles + n.params().link_cycles;
}

}  // namespace noc_test
