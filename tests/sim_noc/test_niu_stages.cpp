// The NIU's stages one at a time, as Network assembles them (noc/network_impl.h): the launch
// decode of a command buffer (RequestDecoder), the alignment rules the target checks, the
// injection port's arbitration (NiuInjection) and what an arriving flit does (NiuEjection).
#include <catch2/catch.hpp>

#include "hal/encoding.h"
#include "noc/memory.h"
#include "noc/network_impl.h"

using namespace sim::noc;
namespace st = hal::noc::status;

namespace {

const hal::ArchMap& kArch = hal::kWormholeB0;

// Writes a command-buffer register as the core would (the register file only; no launch).
void set_reg(Network::Impl& I, uint32_t node, uint32_t buf, uint32_t offset, uint32_t value) {
    I.nodes.regs(node, 0).cmd[(buf * kArch.noc_cmd_buf_stride + offset) / 4] = value;
}

// Programs buffer `buf` of `node` (NOC0) with a write of `len` bytes from its own `src_addr` to
// `dst_addr` at `dst` (NOC0 coordinates), as hal/noc.h would.
void program_write(Network::Impl& I, uint32_t node, uint32_t buf, uint32_t src_addr, Coord dst,
                   uint32_t dst_addr, uint32_t len, uint32_t ctrl_extra = 0) {
    using namespace hal::noc;
    const Coord me = I.grid.coord(node);
    const AddrRegs targ = encode_addr(kArch, src_addr, unicast_coord(me.x, me.y));
    const AddrRegs ret = encode_addr(kArch, dst_addr, unicast_coord(dst.x, dst.y));
    set_reg(I, node, buf, kTargAddrLo, targ.lo);
    set_reg(I, node, buf, kTargAddrMid, targ.mid);
    set_reg(I, node, buf, kTargAddrHi, targ.hi);
    set_reg(I, node, buf, kRetAddrLo, ret.lo);
    set_reg(I, node, buf, kRetAddrMid, ret.mid);
    set_reg(I, node, buf, kRetAddrHi, ret.hi);
    set_reg(I, node, buf, kPacketTag, packet_tag(3));
    set_reg(I, node, buf, kCtrl, kCtrlCmdWrite | kCtrlRespMarked | ctrl_extra);
    set_reg(I, node, buf, kAtLenBe, len);
}

}  // namespace

TEST_CASE("request decoder: a write's registers become its packet", "[sim_noc][stages][niu]") {
    Network::Impl I(4, 4, kArch, {});
    const uint32_t node = I.grid.node({1, 2});
    program_write(I, node, 1, 0x1010, {3, 0}, 0x2010, 1000);
    const RequestDecoder decoder(I.grid, kArch, I.errors);
    const std::optional<Packet> p = decoder.decode(I.nodes, node, 0, 1);
    REQUIRE(p.has_value());
    CHECK(p->type == PktType::Write);
    CHECK(p->vc == hal::noc::kDefaultUnicastVc);
    CHECK_FALSE(p->posted);
    CHECK(p->trid == 3);
    CHECK(p->src_node == node);
    CHECK(p->reply_node == node);  // acks go to TARG's coordinate
    CHECK(p->dst == Coord{3, 0});
    CHECK(p->src_addr == 0x1010);
    CHECK(p->dst_addr == 0x2010);
    CHECK(p->len == 1000);
    CHECK(I.errors.all().empty());
}

TEST_CASE("request decoder: a request that cannot be sent is recorded, not decoded",
          "[sim_noc][stages][niu]") {
    Network::Impl I(4, 4, kArch, {});
    const uint32_t node = I.grid.node({1, 2});
    const RequestDecoder decoder(I.grid, kArch, I.errors);
    SECTION("zero length") {
        program_write(I, node, 0, 0x1000, {3, 0}, 0x2000, 0);
        CHECK_FALSE(decoder.decode(I.nodes, node, 0, 0).has_value());
        REQUIRE(I.errors.all().size() == 1);
        CHECK(to_string(I.errors.all()[0]) ==
              "cycle 0 NOC0 (1,2) -> (3,0) addr 0x2000: bad-length: zero-length request");
    }
    SECTION("a destination outside the grid") {
        program_write(I, node, 0, 0x1000, {4, 0}, 0x2000, 64);
        CHECK_FALSE(decoder.decode(I.nodes, node, 0, 0).has_value());
        REQUIRE(I.errors.all().size() == 1);
        CHECK(to_string(I.errors.all()[0]) ==
              "cycle 0 NOC0 (1,2) -> (4,0) addr 0x2000: coord-outside-grid: write destination "
              "coordinate (4,0) is outside the 4x4 grid");
    }
    SECTION("request type 3") {
        set_reg(I, node, 0, hal::noc::kCtrl, 0x3);
        CHECK_FALSE(decoder.decode(I.nodes, node, 0, 0).has_value());
        REQUIRE(I.errors.all().size() == 1);
        CHECK(to_string(I.errors.all()[0]) ==
              "cycle 0 NOC0 (1,2) -> (1,2) addr 0x0: unsupported: NOC_CTRL request type 3 is "
              "not a request");
    }
}

TEST_CASE("alignment rules: the ISA table for lengths, byte-enable writes",
          "[sim_noc][stages][niu]") {
    using A = AddrClass;
    CHECK(addr_class(EndpointKind::Tile, 0x1000) == A::L1);
    CHECK(addr_class(EndpointKind::Tile, 0xFFB40000) == A::Mmio);
    CHECK(addr_class(EndpointKind::Other, 0x1000) == A::Other);
    // L1 source: congruent mod 16.
    CHECK(length_alignment_ok(A::L1, 0x1010, A::L1, 0x2010, 100));
    CHECK(length_alignment_ok(A::L1, 0x1010, A::Other, 0x2030, 100));
    CHECK_FALSE(length_alignment_ok(A::L1, 0x1010, A::L1, 0x2018, 100));
    // Other source: congruent mod 32.
    CHECK(length_alignment_ok(A::Other, 0x1020, A::L1, 0x2020, 100));
    CHECK_FALSE(length_alignment_ok(A::Other, 0x1010, A::L1, 0x2020, 100));
    // MMIO: 4-byte words (from MMIO also a part of one word, congruent mod 4).
    CHECK(length_alignment_ok(A::Mmio, 0xFFB40004, A::Mmio, 0xFFB40008, 4));
    CHECK_FALSE(length_alignment_ok(A::Mmio, 0xFFB40004, A::Mmio, 0xFFB40008, 8));
    CHECK(length_alignment_ok(A::Mmio, 0xFFB40005, A::L1, 0x2001, 3));
    CHECK_FALSE(length_alignment_ok(A::Mmio, 0xFFB40005, A::L1, 0x2001, 4));
    CHECK(length_alignment_ok(A::L1, 0x1004, A::Mmio, 0xFFB40004, 4));
    CHECK_FALSE(length_alignment_ok(A::L1, 0x1008, A::Mmio, 0xFFB40004, 4));
    // NOC_CMD_WR_BE.
    CHECK(byte_enable_alignment_ok(A::L1, 0x1020, 0x2040));
    CHECK_FALSE(byte_enable_alignment_ok(A::L1, 0x1010, 0x2040));
    CHECK(byte_enable_alignment_ok(A::Mmio, 0x1014, 0xFFB40004));
    CHECK_FALSE(byte_enable_alignment_ok(A::Mmio, 0x1018, 0xFFB40004));
}

TEST_CASE("NIU injection: one flit per cycle, on one VC packets start in launch order",
          "[sim_noc][stages][niu]") {
    Network::Impl I(4, 4, kArch, {});
    sim::PlainMemory l1(kArch.eth_l1_size);
    const uint32_t node = I.grid.node({1, 2});
    I.nodes.attach(node, &l1, EndpointKind::Tile);
    I.nodes.add_niu(node);
    program_write(I, node, 2, 0x1000, {3, 0}, 0x2000, 64);  // header + 2 flits
    program_write(I, node, 0, 0x1000, {0, 3}, 0x2000, 32);  // header + 1 flit
    I.injection.launch(node, 0, 2);
    I.injection.launch(node, 0, 0);
    const uint32_t first = I.injection.injector(node, 0).cmd[2].pkt;
    const uint32_t second = I.injection.injector(node, 0).cmd[0].pkt;
    CHECK(I.nodes.regs(node, 0).status[st::kMstCmdAccepted] == 2);
    CHECK(I.nodes.regs(node, 0).status[st::mst_write_reqs_outgoing_id(3)] == 2);

    // Round-robin starts at buffer 0, but buffer 2 launched first on the same VC: it goes first
    // and keeps the injection VC to its tail.
    const uint32_t router = I.grid.router_of_node(0, node);
    const uint32_t input = kPortLocal * kSlots + hal::noc::kDefaultUnicastVc * 2;
    std::vector<std::pair<uint32_t, uint32_t>> sent;  // (packet, flit) in injection order
    for (uint64_t now = 0; now < 5; ++now) {
        I.injection.inject(now);
        const uint32_t count = I.inputs.router(0, router).vcs[input].count;
        REQUIRE(count == now + 1);
    }
    for (uint32_t i = 0; i < 5; ++i) {
        const Flit& f = I.inputs.head(0, router, input);
        sent.emplace_back(f.pkt, f.idx);
        I.inputs.pop(0, router, input);
    }
    CHECK(sent == std::vector<std::pair<uint32_t, uint32_t>>{
                      {first, 0}, {first, 1}, {first, 2}, {second, 0}, {second, 1}});
    CHECK(I.injection.injector(node, 0).credits[hal::noc::kDefaultUnicastVc * 2] ==
          static_cast<int32_t>(I.params.vc_buffer_flits) - 5);
    CHECK(I.nodes.regs(node, 0).status[st::mst_write_reqs_outgoing_id(3)] == 0);
    CHECK(I.injection.idle());
}

TEST_CASE("NIU ejection: write data lands flit by flit, the tail queues the ack",
          "[sim_noc][stages][niu]") {
    Network::Impl I(4, 4, kArch, {});
    sim::PlainMemory src_l1(kArch.eth_l1_size);
    sim::PlainMemory dst_l1(kArch.eth_l1_size);
    const uint32_t src = I.grid.node({1, 2});
    const uint32_t dst = I.grid.node({3, 0});
    I.nodes.attach(src, &src_l1, EndpointKind::Tile);
    I.nodes.add_niu(src);
    I.nodes.attach(dst, &dst_l1, EndpointKind::Tile);
    I.nodes.add_niu(dst);
    for (uint32_t i = 0; i < 64; ++i) {
        src_l1.data()[0x1000 + i] = static_cast<uint8_t>(i + 1);
    }
    program_write(I, src, 0, 0x1000, {3, 0}, 0x2000, 64);
    I.injection.launch(src, 0, 0);
    const uint32_t pkt = I.injection.injector(src, 0).cmd[0].pkt;
    for (uint64_t now = 0; now < 3; ++now) {
        I.injection.inject(now);  // reads the write data from the source as each flit goes
    }
    I.ejection.deliver(Arrival{0, 0, dst, pkt, 0});
    I.ejection.deliver(Arrival{0, 0, dst, pkt, 1});
    CHECK(dst_l1.data()[0x2000] == 1);
    CHECK(dst_l1.data()[0x2020] == 0);  // the second flit has not arrived
    CHECK(I.nodes.regs(dst, 0).status[st::kSlvNonpostedWrDataWordReceived] == 1);
    CHECK(I.injection.idle());
    I.ejection.deliver(Arrival{0, 0, dst, pkt, 2});
    CHECK(dst_l1.data()[0x203F] == 64);
    CHECK(I.nodes.regs(dst, 0).status[st::kSlvNonpostedWrReqReceived] == 1);
    // The ack waits on the target's injector, addressed to the writer.
    REQUIRE(I.injection.injector(dst, 0).responses.size() == 1);
    const Packet& ack = I.packets[I.injection.injector(dst, 0).responses.front()];
    CHECK(ack.type == PktType::WriteAck);
    CHECK(ack.dst == Coord{1, 2});
    CHECK(ack.trid == 3);
}
