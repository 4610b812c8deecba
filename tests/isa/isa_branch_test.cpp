// Control transfer: every branch taken and not taken, forward and backward; jal and jalr link
// values, jalr clearing bit 0, jalr with rd == rs1, calls and returns, loops.
#include "isa_harness.h"

using namespace rv;
using isa::Check;

namespace {

enum class B { Eq, Ne, Lt, Ge, Ltu, Geu };

struct BranchCase {
    B op;
    uint32_t a, b;
    bool taken;
    const char* name;
};

// Emit "branch to label" for op.
void branch(rv::Program& p, B op, const std::string& l) {
    switch (op) {
        case B::Eq:
            p.beq(x1, x2, l);
            break;
        case B::Ne:
            p.bne(x1, x2, l);
            break;
        case B::Lt:
            p.blt(x1, x2, l);
            break;
        case B::Ge:
            p.bge(x1, x2, l);
            break;
        case B::Ltu:
            p.bltu(x1, x2, l);
            break;
        case B::Geu:
            p.bgeu(x1, x2, l);
            break;
        default:
            throw std::logic_error("branch kind");
    }
}

const BranchCase kCases[] = {
    {B::Eq, 5, 5, true, "beq equal"},
    {B::Eq, 5, 6, false, "beq different"},
    {B::Eq, 0x80000000, 0, false, "beq INT_MIN vs 0"},
    {B::Ne, 5, 6, true, "bne different"},
    {B::Ne, 0xFFFFFFFF, 0xFFFFFFFF, false, "bne equal"},
    {B::Lt, 0xFFFFFFFF, 0, true, "blt -1 < 0"},
    {B::Lt, 0, 0xFFFFFFFF, false, "blt 0 < -1"},
    {B::Lt, 0x80000000, 0x7FFFFFFF, true, "blt INT_MIN < INT_MAX"},
    {B::Lt, 3, 3, false, "blt equal"},
    {B::Ge, 3, 3, true, "bge equal"},
    {B::Ge, 0, 0xFFFFFFFF, true, "bge 0 >= -1"},
    {B::Ge, 0xFFFFFFFF, 0, false, "bge -1 >= 0"},
    {B::Ge, 0x7FFFFFFF, 0x80000000, true, "bge INT_MAX >= INT_MIN"},
    {B::Ltu, 0, 0xFFFFFFFF, true, "bltu 0 < 0xffffffff"},
    {B::Ltu, 0xFFFFFFFF, 0, false, "bltu 0xffffffff < 0"},
    {B::Ltu, 0x7FFFFFFF, 0x80000000, true, "bltu"},
    {B::Ltu, 9, 9, false, "bltu equal"},
    {B::Geu, 9, 9, true, "bgeu equal"},
    {B::Geu, 0xFFFFFFFF, 0, true, "bgeu 0xffffffff >= 0"},
    {B::Geu, 0, 0xFFFFFFFF, false, "bgeu 0 >= 0xffffffff"},
};

}  // namespace

TEST_CASE("branches, forward: taken and not taken", "[isa][branch]") {
    Check c;
    int n = 0;
    for (const BranchCase& bc : kCases) {
        const std::string id = std::to_string(n++);
        c.p.li(x1, bc.a).li(x2, bc.b).li(x3, 0);
        branch(c.p, bc.op, "taken" + id);
        c.p.emit(addi(x3, x0, 1));  // fall-through path
        c.p.j("done" + id);
        c.p.label("taken" + id).emit(addi(x3, x0, 2));
        c.p.label("done" + id);
        c.expect(x3, bc.taken ? 2 : 1, std::string(bc.name) + " (forward)");
    }
    c.run();
}

TEST_CASE("branches, backward: taken and not taken", "[isa][branch]") {
    Check c;
    int n = 0;
    for (const BranchCase& bc : kCases) {
        const std::string id = std::to_string(n++);
        c.p.li(x1, bc.a).li(x2, bc.b).li(x3, 0);
        c.p.j("test" + id);
        c.p.label("back" + id).emit(addi(x3, x0, 2));
        c.p.j("done" + id);
        c.p.label("test" + id);
        branch(c.p, bc.op, "back" + id);
        c.p.emit(addi(x3, x0, 1));
        c.p.label("done" + id);
        c.expect(x3, bc.taken ? 2 : 1, std::string(bc.name) + " (backward)");
    }
    c.run();
}

TEST_CASE("branches with the largest aligned offsets (+4092, -4096)", "[isa][branch]") {
    Check c;
    // +4092 into a run of 1100 increments: lands on increment 1022, so 78 of them execute.
    c.p.li(x3, 0);
    c.p.emit(beq(x0, x0, 4092));
    for (int i = 0; i < 1100; ++i) c.p.emit(addi(x3, x3, 1));
    c.expect(x3, 1100 - 1022, "increments executed after a +4092 branch");
    // -4096: target, then 1022 padding words, then the branch (jal gets over the padding).
    c.p.li(x4, 0);
    c.p.j("setup");
    const uint32_t target = c.p.pc();
    c.p.emit(addi(x4, x4, 7));
    c.p.j("done");
    while (c.p.pc() < target + 4096) c.p.emit(addi(x4, x4, 100));  // never executed
    c.p.label("setup");
    REQUIRE(c.p.pc() == target + 4096);
    c.p.emit(bne(x3, x0, -4096));
    c.p.emit(addi(x4, x4, 1000));  // not reached
    c.p.label("done");
    c.expect(x4, 7, "a -4096 branch reached its target");
    c.run();
}

TEST_CASE("jal and jalr: link values, targets, bit 0 cleared", "[isa][branch]") {
    Check c;
    // jal forward over one instruction
    c.p.li(x6, 0);
    const uint32_t pj = c.p.pc();
    c.p.emit(jal(x5, 8)).emit(addi(x6, x0, 1));
    c.expect(x5, pj + 4, "jal link = pc + 4");
    c.expect(x6, 0, "jal skipped the next instruction");
    // jalr: target = rs1 + imm
    const uint32_t pa = c.p.pc();
    c.p.emit(auipc(x7, 0)).emit(jalr(x5, x7, 12)).emit(addi(x6, x0, 2));
    c.expect(x5, pa + 8, "jalr link");
    c.expect(x6, 0, "jalr skipped the next instruction");
    // jalr with an odd sum: bit 0 is cleared, no trap
    const uint32_t pb = c.p.pc();
    c.p.emit(auipc(x7, 0)).emit(jalr(x5, x7, 13)).emit(addi(x6, x0, 3));
    c.expect(x5, pb + 8, "jalr odd target link");
    c.expect(x6, 0, "jalr odd target skipped");
    // jalr with rd == rs1: the target uses the old value
    const uint32_t pc0 = c.p.pc();
    c.p.emit(auipc(x7, 0)).emit(jalr(x7, x7, 12)).emit(addi(x6, x0, 4));
    c.expect(x7, pc0 + 8, "jalr x7, x7: link");
    c.expect(x6, 0, "jalr x7, x7: jumped");
    // jalr with a negative offset (backward), via a forward jump first
    c.p.li(x8, 0);
    c.p.j("over");
    const uint32_t back = c.p.pc();
    c.p.emit(addi(x8, x8, 5)).j("after");
    c.p.label("over");
    const uint32_t pd = c.p.pc();
    c.p.emit(auipc(x9, 0))
        .emit(jalr(x5, x9, static_cast<int32_t>(back) - static_cast<int32_t>(pd)));
    c.p.emit(addi(x8, x8, 100));  // skipped
    c.p.label("after");
    c.expect(x8, 5, "jalr backward");
    c.expect(x5, pd + 8, "jalr backward link");
    // jal backward (a loop) and jal with a large forward offset
    c.p.li(x10, 0).li(x11, 10);
    c.p.label("loop").emit(addi(x10, x10, 3)).emit(addi(x11, x11, -1));
    c.p.bne(x11, x0, "loop");
    c.expect(x10, 30, "bne loop");
    c.run();
}

TEST_CASE("call and return", "[isa][branch]") {
    Check c;
    c.p.li(a0, 7);
    c.p.jal(ra, "square");
    c.expect(a0, 49, "square(7)");
    c.p.li(a0, 12);
    c.p.jal(ra, "square");
    c.expect(a0, 144, "square(12)");
    c.p.j("end");
    c.p.label("square").emit(mul(a0, a0, a0)).emit(ret());
    c.p.label("end");
    c.run();
}

TEST_CASE("a loop: sum of 1..100", "[isa][branch]") {
    Check c;
    c.p.li(x5, 0).li(x6, 100);
    c.p.label("loop").emit(add(x5, x5, x6)).emit(addi(x6, x6, -1));
    c.p.blt(x0, x6, "loop");
    c.expect(x5, 5050, "sum");
    c.expect(x6, 0, "counter");
    c.run();
}
