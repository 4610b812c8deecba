#include "noc/request_decoder.h"

#include <string>

namespace sim::noc {

namespace {

Coord unicast_xy(uint32_t coord_field) {
    const hal::NocXY c = hal::noc::decode_unicast_coord(coord_field);
    return Coord{c.x, c.y};
}

}  // namespace

std::optional<Packet> RequestDecoder::decode(const NodeTable& nodes, uint32_t node, uint32_t noc,
                                             uint32_t buf) const {
    using namespace hal::noc;
    const auto reg = [&](uint32_t offset) { return nodes.cmd_reg(node, noc, buf, offset); };
    CmdBuf c;
    c.noc = noc;
    c.node = node;
    c.ctrl = reg(kCtrl);
    c.at_len_be = reg(kAtLenBe);
    c.at_len_be_1 = arch_.noc.at_len_be_1 != hal::kNoRegister ? reg(arch_.noc.at_len_be_1) : 0;
    c.targ = decode_addr(arch_, {reg(kTargAddrLo), reg(kTargAddrMid), reg(kTargAddrHi)});
    c.ret = decode_addr(arch_, {reg(kRetAddrLo), reg(kRetAddrMid), reg(kRetAddrHi)});

    const bool mcast = (c.ctrl & kCtrlBrcstPacket) != 0;
    Packet p;
    p.noc = static_cast<uint8_t>(noc);
    p.vc = static_cast<uint8_t>((c.ctrl & kCtrlVcStatic) != 0
                                    ? ctrl_vc(c.ctrl)
                                    : (mcast ? kDefaultMulticastVc : kDefaultUnicastVc));
    p.posted = (c.ctrl & kCtrlRespMarked) == 0;
    p.trid = tag_trid(reg(kPacketTag));
    p.src_node = node;
    p.at_len_be = c.at_len_be;
    p.at_data = reg(arch_.noc.at_data);

    bool ok = false;
    switch (c.ctrl & kCtrlCmdMask) {
        case kCtrlCmdRead:
            ok = decode_read(c, p);
            break;
        case kCtrlCmdAtomic:
            ok = decode_atomic(c, p);
            break;
        case kCtrlCmdWrite:
            ok = (c.ctrl & kCtrlWrInline) != 0 ? decode_inline_write(c, p) : decode_write(c, p);
            break;
        default:
            errors_.record(noc, node, grid_.coord(node), 0, NocErrorKind::Unsupported,
                           "NOC_CTRL request type 3 is not a request");
            break;
    }
    return ok ? std::optional<Packet>(std::move(p)) : std::nullopt;
}

bool RequestDecoder::decode_read(const CmdBuf& c, Packet& p) const {
    const Coord src = unicast_xy(c.targ.coord_field);
    const Coord dst = unicast_xy(c.ret.coord_field);
    if ((c.ctrl & hal::noc::kCtrlBrcstPacket) != 0) {
        unsupported(c, src, c.targ.local, "multicast read");
        return false;
    }
    if (!check_coord(c, src, c.targ.local, "read source") ||
        !check_coord(c, dst, c.ret.local, "read return") ||
        !check_len(c, c.at_len_be, src, c.targ.local)) {
        return false;
    }
    p.type = PktType::Read;
    p.posted = false;
    p.dst = src;
    p.src_addr = c.targ.local;
    p.ret_addr = c.ret.local;
    p.reply_node = grid_.node_of_noc(c.noc, dst);
    p.len = c.at_len_be;
    return true;
}

bool RequestDecoder::decode_atomic(const CmdBuf& c, Packet& p) const {
    const Coord dst = unicast_xy(c.targ.coord_field);
    if ((c.ctrl & hal::noc::kCtrlBrcstPacket) != 0) {
        unsupported(c, dst, c.targ.local, "multicast atomic");
        return false;
    }
    if (!check_coord(c, dst, c.targ.local, "atomic target")) {
        return false;
    }
    p.type = PktType::Atomic;
    p.dst = dst;
    p.dst_addr = c.targ.local;
    if (!p.posted) {
        const Coord back = unicast_xy(c.ret.coord_field);
        if (!check_coord(c, back, c.ret.local, "atomic return")) {
            return false;
        }
        p.reply_node = grid_.node_of_noc(c.noc, back);
        p.ret_addr = c.ret.local;
    }
    return true;
}

bool RequestDecoder::decode_inline_write(const CmdBuf& c, Packet& p) const {
    const Coord dst = unicast_xy(c.targ.coord_field);
    if ((c.ctrl & hal::noc::kCtrlBrcstPacket) != 0) {
        unsupported(c, dst, c.targ.local, "multicast inline write");
        return false;
    }
    if (!check_coord(c, dst, c.targ.local, "inline write target")) {
        return false;
    }
    p.type = PktType::InlineWrite;
    p.dst = dst;
    p.dst_addr = c.targ.local;
    p.reply_node = c.node;
    return true;
}

bool RequestDecoder::decode_write(const CmdBuf& c, Packet& p) const {
    const Coord ack_to = unicast_xy(c.targ.coord_field);
    if (!check_coord(c, ack_to, c.targ.local, "write source")) {
        return false;
    }
    p.type = PktType::Write;
    p.src_addr = c.targ.local;
    p.dst_addr = c.ret.local;
    p.reply_node = grid_.node_of_noc(c.noc, ack_to);
    p.byte_enable = (c.ctrl & hal::noc::kCtrlWrBe) != 0;
    if (!decode_write_destination(c, p)) {
        return false;
    }
    if (p.byte_enable) {
        p.len = kBeWriteBytes;
        return true;
    }
    if (!check_len(c, c.at_len_be, p.dst, c.ret.local)) {
        return false;
    }
    p.len = c.at_len_be;
    return true;
}

bool RequestDecoder::decode_write_destination(const CmdBuf& c, Packet& p) const {
    using namespace hal::noc;
    if ((c.ctrl & kCtrlBrcstPacket) == 0) {
        p.dst = unicast_xy(c.ret.coord_field);
        return check_coord(c, p.dst, c.ret.local, "write destination");
    }
    const hal::NocRect rect = decode_mcast_coord(c.ret.coord_field);
    p.mcast = true;
    p.dst = {rect.x_start, rect.y_start};
    p.dst_end = {rect.x_end, rect.y_end};
    p.y_major = (c.ctrl & kCtrlBrcstYMajor) != 0;
    p.src_include = (c.ctrl & kCtrlBrcstSrcInclude) != 0;
    p.path_reserve = (c.ctrl & kCtrlPathReserve) != 0;
    return check_coord(c, p.dst, c.ret.local, "multicast start") &&
           check_coord(c, p.dst_end, c.ret.local, "multicast end");
}

bool RequestDecoder::check_coord(const CmdBuf& c, Coord at, uint64_t addr, const char* what) const {
    if (grid_.contains(at)) {
        return true;
    }
    errors_.record(c.noc, c.node, at, addr, NocErrorKind::CoordOutsideGrid,
                   std::string(what) + " coordinate (" + std::to_string(at.x) + "," +
                       std::to_string(at.y) + ") is outside the " + std::to_string(grid_.x_size()) +
                       "x" + std::to_string(grid_.y_size()) + " grid");
    return false;
}

bool RequestDecoder::check_len(const CmdBuf& c, uint32_t len, Coord dst, uint64_t addr) const {
    if (c.at_len_be_1 != 0 || len > arch_.noc_max_burst_bytes) {
        const std::string size = c.at_len_be_1 != 0 ? ">4 GiB" : std::to_string(len);
        errors_.record_noc(c.noc, c.node, dst, addr, NocErrorKind::BurstTooLong,
                           "request of " + size + " bytes exceeds the " +
                               std::to_string(arch_.noc_max_burst_bytes) + "-byte maximum burst");
        return false;
    }
    if (len == 0) {
        errors_.record_noc(c.noc, c.node, dst, addr, NocErrorKind::BadLength,
                           "zero-length request");
        return false;
    }
    return true;
}

void RequestDecoder::unsupported(const CmdBuf& c, Coord dst, uint64_t addr,
                                 const char* what) const {
    errors_.record_noc(c.noc, c.node, dst, addr, NocErrorKind::Unsupported, what);
}

}  // namespace sim::noc
