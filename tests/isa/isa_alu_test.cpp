// RV32I integer computational instructions: lui, auipc, register-immediate and register-register
// ALU operations, x0 semantics, forwarding between back-to-back dependent instructions.
#include "isa_harness.h"

using namespace rv;
using isa::Check;

TEST_CASE("lui and auipc", "[isa][alu]") {
    Check c;
    c.p.emit(lui(x3, 0x12345));
    c.expect(x3, 0x12345000, "lui 0x12345");
    c.p.emit(lui(x3, 0xFFFFF));
    c.expect(x3, 0xFFFFF000, "lui 0xfffff");
    c.p.emit(lui(x3, 0));
    c.expect(x3, 0, "lui 0");
    const uint32_t pc = c.p.pc();
    c.p.emit(auipc(x3, 0));
    c.expect(x3, pc, "auipc 0 = its own pc");
    const uint32_t pc2 = c.p.pc();
    c.p.emit(auipc(x3, 0x10));
    c.expect(x3, pc2 + 0x10000, "auipc 0x10");
    const uint32_t pc3 = c.p.pc();
    c.p.emit(auipc(x3, 0xFFFFF));
    c.expect(x3, pc3 - 0x1000, "auipc -1 page (wraps)");
    c.run();
}

TEST_CASE("register-immediate arithmetic and logic", "[isa][alu]") {
    Check c;
    // addi: sign-extended 12-bit immediate, wrap-around
    c.ri(addi, 5, 7, 12, "addi");
    c.ri(addi, 5, -7, 0xFFFFFFFE, "addi");
    c.ri(addi, 0, 2047, 2047, "addi max imm");
    c.ri(addi, 0, -2048, 0xFFFFF800, "addi min imm");
    c.ri(addi, 0x7FFFFFFF, 1, 0x80000000, "addi overflow");
    c.ri(addi, 0xFFFFFFFF, 1, 0, "addi carry out");
    // slti / sltiu: signed vs unsigned, sign-extended immediate compared unsigned
    c.ri(slti, 0xFFFFFFFF, 0, 1, "slti -1 < 0");
    c.ri(slti, 0, -1, 0, "slti 0 < -1");
    c.ri(slti, 0x80000000, -2048, 1, "slti INT_MIN");
    c.ri(slti, 5, 5, 0, "slti equal");
    c.ri(sltiu, 0xFFFFFFFF, 0, 0, "sltiu 0xffffffff < 0");
    c.ri(sltiu, 0, -1, 1, "sltiu 0 < 0xffffffff (imm sign-extended)");
    c.ri(sltiu, 0xFFFFFFFE, -1, 1, "sltiu");
    c.ri(sltiu, 0, 1, 1, "sltiu seqz idiom");
    c.ri(sltiu, 1, 1, 0, "sltiu");
    // xori / ori / andi with negative immediates (sign extension)
    c.ri(xori, 0x00FF00FF, -1, 0xFF00FF00, "xori -1 = not");
    c.ri(xori, 0x12345678, 0x7FF, 0x12345187, "xori");
    c.ri(ori, 0x12340000, -2048, 0xFFFFF800, "ori");
    c.ri(ori, 0x12340000, 0x0F0, 0x123400F0, "ori");
    c.ri(andi, 0x12345678, -16, 0x12345670, "andi");
    c.ri(andi, 0xFFFFFFFF, 0x7FF, 0x7FF, "andi");
    c.run();
}

TEST_CASE("shifts by immediate and by register", "[isa][alu]") {
    Check c;
    auto sli = [&](uint32_t (*op)(unsigned, unsigned, unsigned), uint32_t a, unsigned sh,
                   uint32_t want, const char* what) {
        c.p.li(x1, a).emit(op(x3, x1, sh));
        c.expect(x3, want, std::string(what) + " " + Check::hexs(a) + " by " + std::to_string(sh));
    };
    sli(slli, 0x80000001, 0, 0x80000001, "slli");
    sli(slli, 0x80000001, 1, 0x00000002, "slli");
    sli(slli, 0x00000001, 31, 0x80000000, "slli");
    sli(slli, 0x12345678, 4, 0x23456780, "slli");
    sli(srli, 0x80000000, 0, 0x80000000, "srli");
    sli(srli, 0x80000000, 1, 0x40000000, "srli");
    sli(srli, 0x80000000, 31, 0x00000001, "srli");
    sli(srli, 0xFFFFFFFF, 31, 0x00000001, "srli");
    sli(srai, 0x80000000, 0, 0x80000000, "srai");
    sli(srai, 0x80000000, 1, 0xC0000000, "srai");
    sli(srai, 0x80000000, 31, 0xFFFFFFFF, "srai");
    sli(srai, 0x7FFFFFFF, 31, 0x00000000, "srai");
    sli(srai, 0x7FFFFFF0, 4, 0x07FFFFFF, "srai");
    // register shifts use only the low 5 bits of rs2
    c.rr(sll, 0x00000001, 0, 0x00000001, "sll");
    c.rr(sll, 0x00000001, 31, 0x80000000, "sll");
    c.rr(sll, 0x00000001, 32, 0x00000001, "sll by 32 = by 0");
    c.rr(sll, 0x00000003, 0xFFFFFFE1, 0x00000006, "sll by ...e1 = by 1");
    c.rr(srl, 0x80000000, 0, 0x80000000, "srl");
    c.rr(srl, 0x80000000, 31, 0x00000001, "srl");
    c.rr(srl, 0x80000000, 33, 0x40000000, "srl by 33 = by 1");
    c.rr(sra, 0x80000000, 0, 0x80000000, "sra");
    c.rr(sra, 0x80000000, 31, 0xFFFFFFFF, "sra");
    c.rr(sra, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFF, "sra by -1 = by 31");
    c.rr(sra, 0x40000000, 30, 0x00000001, "sra positive");
    c.run();
}

TEST_CASE("register-register arithmetic, compares and logic", "[isa][alu]") {
    Check c;
    c.rr(add, 1, 2, 3, "add");
    c.rr(add, 0xFFFFFFFF, 1, 0, "add wrap");
    c.rr(add, 0x7FFFFFFF, 1, 0x80000000, "add signed overflow");
    c.rr(add, 0x80000000, 0x80000000, 0, "add");
    c.rr(sub, 3, 5, 0xFFFFFFFE, "sub");
    c.rr(sub, 0, 1, 0xFFFFFFFF, "sub borrow");
    c.rr(sub, 0x80000000, 1, 0x7FFFFFFF, "sub signed overflow");
    c.rr(sub, 7, 7, 0, "sub");
    c.rr(slt, 0xFFFFFFFF, 1, 1, "slt -1 < 1");
    c.rr(slt, 1, 0xFFFFFFFF, 0, "slt 1 < -1");
    c.rr(slt, 0x80000000, 0x7FFFFFFF, 1, "slt INT_MIN < INT_MAX");
    c.rr(slt, 0x7FFFFFFF, 0x80000000, 0, "slt");
    c.rr(slt, 0xFFFFFFFE, 0xFFFFFFFF, 1, "slt -2 < -1");
    c.rr(slt, 5, 5, 0, "slt equal");
    c.rr(sltu, 0xFFFFFFFF, 1, 0, "sltu");
    c.rr(sltu, 1, 0xFFFFFFFF, 1, "sltu");
    c.rr(sltu, 0x80000000, 0x7FFFFFFF, 0, "sltu");
    c.rr(sltu, 0, 0, 0, "sltu equal");
    c.rr(sltu, 0, 1, 1, "sltu snez idiom");
    c.rr(xor_, 0xFF00FF00, 0x0FF00FF0, 0xF0F0F0F0, "xor");
    c.rr(or_, 0xFF00FF00, 0x0FF00FF0, 0xFFF0FFF0, "or");
    c.rr(and_, 0xFF00FF00, 0x0FF00FF0, 0x0F000F00, "and");
    c.run();
}

TEST_CASE("x0 is hardwired to zero as destination and source", "[isa][alu]") {
    Check c;
    c.p.emit(addi(x0, x0, 5));
    c.p.emit(add(x3, x0, x0));  // back-to-back: must not forward the discarded 5
    c.expect(x3, 0, "addi x0 then read x0");
    c.p.emit(lui(x0, 0x12345)).emit(addi(x3, x0, 1));
    c.expect(x3, 1, "lui x0 then x0+1");
    c.p.li(x4, 0x1234).li(x30, isa::kDataBase).emit(sw(x4, x30, 0));  // a non-zero word
    c.p.emit(lw(x0, x30, 0)).emit(or_(x3, x0, x0));
    c.expect(x3, 0, "lw x0 then read x0");
    c.p.emit(jal(x0, 4)).emit(add(x3, x0, x0));
    c.expect(x3, 0, "jal x0 (no link)");
    c.p.emit(csrr(x0, csr::mcycle)).emit(add(x3, x0, x0));
    c.expect(x3, 0, "csrr x0");
    c.p.li(x1, 77).emit(sub(x3, x1, x0));
    c.expect(x3, 77, "x0 as rs2");
    c.p.emit(sub(x3, x0, x1));
    c.expect(x3, static_cast<uint32_t>(-77), "x0 as rs1");
    c.expect(x0, 0, "store x0");
    c.run();
}

TEST_CASE("every register holds its own value, and forwarding chains", "[isa][alu]") {
    Check c(x1);  // results through x1, so x2..x31 can all be checked
    for (unsigned r = 2; r < 32; ++r) c.p.li(r, 0x01010101u * r);
    for (unsigned r = 2; r < 32; ++r) c.expect(r, 0x01010101u * r, isa::label("x", r));
    // a dependency chain where every instruction uses the previous result at once
    c.p.li(x5, 1);
    for (int i = 0; i < 10; ++i) c.p.emit(add(x5, x5, x5));
    c.expect(x5, 1024, "add chain");
    // rs1 == rs2 == rd
    c.p.li(x6, 3).emit(mul(x6, x6, x6));
    c.expect(x6, 9, "mul x6, x6, x6");
    // forwarding of the older of two in-flight writes must lose to the newer
    c.p.li(x7, 10).emit(addi(x7, x7, 1)).emit(addi(x7, x7, 1)).emit(add(x8, x7, x7));
    c.expect(x8, 24, "back-to-back writes of one register");
    c.run();
}

TEST_CASE("fence and fence.i execute as no-ops", "[isa][alu]") {
    Check c;
    c.p.li(x3, 42).emit(fence()).emit(fence_i()).emit(fence(0x1, 0x2)).emit(addi(x3, x3, 1));
    c.expect(x3, 43, "value across fences");
    c.run();
}
