// M extension: mul/mulh/mulhsu/mulhu with every sign combination, div/divu/rem/remu including
// division by zero and INT_MIN / -1 exactly as the RISC-V spec defines them (no trap).
#include "isa_harness.h"

using namespace rv;
using isa::Check;

namespace {

struct MulCase {
    uint32_t a, b, mul, mulh, mulhsu, mulhu;
};

// Expected values computed from the spec's definitions (64-bit products of the sign- or
// zero-extended operands).
const MulCase kMul[] = {
    {0x00000003, 0x00000007, 0x00000015, 0x00000000, 0x00000000, 0x00000000},
    {0xFFFFFFFD, 0x00000007, 0xFFFFFFEB, 0xFFFFFFFF, 0xFFFFFFFF, 0x00000006},  // -3 * 7
    {0x80000000, 0xFFFFFFFF, 0x80000000, 0x00000000, 0x80000000, 0x7FFFFFFF},  // INT_MIN * -1
    {0xFFFFFFFF, 0xFFFFFFFF, 0x00000001, 0x00000000, 0xFFFFFFFF, 0xFFFFFFFE},  // -1 * -1
    {0x12345678, 0x9ABCDEF0, 0x242D2080, 0xF8CC93D6, 0x0B00EA4E, 0x0B00EA4E},
    {0x80000000, 0x80000000, 0x00000000, 0x40000000, 0xC0000000, 0x40000000},
    {0x7FFFFFFF, 0x7FFFFFFF, 0x00000001, 0x3FFFFFFF, 0x3FFFFFFF, 0x3FFFFFFF},
    {0x80000000, 0x7FFFFFFF, 0x80000000, 0xC0000000, 0xC0000000, 0x3FFFFFFF},
    {0xFFFFFFFF, 0x00000001, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0x00000000},  // -1 * 1
    {0x00000001, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0x00000000,
     0x00000000},  // 1 * -1 (unsigned b)
    {0xFFFFFFFE, 0x00000002, 0xFFFFFFFC, 0xFFFFFFFF, 0xFFFFFFFF, 0x00000001},
    {0x00000000, 0xFFFFFFFF, 0x00000000, 0x00000000, 0x00000000, 0x00000000},
    {0x80000000, 0x00000002, 0x00000000, 0xFFFFFFFF, 0xFFFFFFFF, 0x00000001},
};

struct DivCase {
    uint32_t a, b, div, divu, rem, remu;
};

const DivCase kDiv[] = {
    {20, 3, 6, 6, 2, 2},
    {static_cast<uint32_t>(-20), 3, static_cast<uint32_t>(-6), 0x5555554E,
     static_cast<uint32_t>(-2), 2},
    {20, static_cast<uint32_t>(-3), static_cast<uint32_t>(-6), 0, 2, 20},
    {static_cast<uint32_t>(-20), static_cast<uint32_t>(-3), 6, 0, static_cast<uint32_t>(-2),
     0xFFFFFFEC},
    // division by zero: quotient all ones, remainder the dividend
    {20, 0, 0xFFFFFFFF, 0xFFFFFFFF, 20, 20},
    {static_cast<uint32_t>(-20), 0, 0xFFFFFFFF, 0xFFFFFFFF, static_cast<uint32_t>(-20),
     static_cast<uint32_t>(-20)},
    {0, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0},
    {0x80000000, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0x80000000, 0x80000000},
    // signed overflow: INT_MIN / -1 = INT_MIN, remainder 0
    {0x80000000, 0xFFFFFFFF, 0x80000000, 0, 0, 0x80000000},
    {0x80000000, 1, 0x80000000, 0x80000000, 0, 0},
    {0x80000000, 2, 0xC0000000, 0x40000000, 0, 0},
    {0xFFFFFFFF, 2, 0, 0x7FFFFFFF, 0xFFFFFFFF, 1},
    {0xFFFFFFFF, 10, 0, 0x19999999, 0xFFFFFFFF, 5},
    {7, 7, 1, 1, 0, 0},
    {3, 7, 0, 0, 3, 3},
};

}  // namespace

TEST_CASE("mul, mulh, mulhsu, mulhu", "[isa][muldiv]") {
    Check c;
    for (const MulCase& m : kMul) {
        c.rr(mul, m.a, m.b, m.mul, "mul");
        c.rr(mulh, m.a, m.b, m.mulh, "mulh");
        c.rr(mulhsu, m.a, m.b, m.mulhsu, "mulhsu");
        c.rr(mulhu, m.a, m.b, m.mulhu, "mulhu");
    }
    c.run();
}

TEST_CASE("div, divu, rem, remu including by zero and INT_MIN / -1", "[isa][muldiv]") {
    Check c;
    for (const DivCase& d : kDiv) {
        c.rr(div, d.a, d.b, d.div, "div");
        c.rr(divu, d.a, d.b, d.divu, "divu");
        c.rr(rem, d.a, d.b, d.rem, "rem");
        c.rr(remu, d.a, d.b, d.remu, "remu");
    }
    c.run();
}

TEST_CASE("division results forward to dependent instructions", "[isa][muldiv]") {
    Check c;
    c.p.li(x1, 100).li(x2, 7);
    c.p.emit(div(x3, x1, x2)).emit(rem(x4, x1, x2)).emit(mul(x5, x3, x2)).emit(add(x5, x5, x4));
    c.expect(x5, 100, "q * d + r == n");
    c.p.emit(div(x6, x1, x2)).emit(div(x6, x6, x2));
    c.expect(x6, 2, "back-to-back dependent divides");
    c.run();
}
