// hal::Streams on the fake register file: per-arch register indices, increment-on-write
// encoding (value << 6), the 17-bit read mask, reset, and argument errors.
#include "hal/stream.h"

#include <catch2/catch.hpp>

#include "arch_facts.h"
#include "hal/testing/fake_mmio.h"

using facts::RegWrite;
using hal::Status;
using hal::testing::FakeRegisterFile;
using hal::testing::ScopedFakeMmio;

namespace {
constexpr uint32_t stream_reg(uint32_t s, uint32_t index) {
    return 0xFFB40000 + s * 0x1000 + index * 4;
}
}  // namespace

TEMPLATE_TEST_CASE("stream counter add writes delta << 6 to the update register", "[stream]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    using Streams = hal::Streams<F::map>;
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    constexpr auto s17 = Streams::template id<17>();
    const uint32_t update = stream_reg(17, F::stream_update);

    REQUIRE(Streams::add(s17, 1) == Status::Ok);
    REQUIRE(Streams::add(s17, -1) == Status::Ok);
    REQUIRE(Streams::add(s17, 5) == Status::Ok);
    REQUIRE(Streams::add(s17, -65536) == Status::Ok);
    REQUIRE(Streams::add(s17, 65535) == Status::Ok);
    CHECK(fake.writes() == std::vector<RegWrite>{{update, 1u << 6},
                                                 {update, 0x1FFFFu << 6},  // -1 in the 17-bit field
                                                 {update, 5u << 6},
                                                 {update, 0x10000u << 6},
                                                 {update, 0xFFFFu << 6}});
    CHECK(Streams::update_reg_addr(s17) == update);

    fake.clear_log();
    CHECK(Streams::add(s17, 65536) == Status::BadArg);
    CHECK(Streams::add(s17, -65537) == Status::BadArg);
    CHECK(fake.accesses().empty());

    const auto enc = Streams::encode_delta(-2);
    REQUIRE(enc.ok());
    CHECK(enc.value == (0x1FFFEu << 6));
    CHECK(Streams::encode_delta(1 << 16).status == Status::BadArg);
    // What the hardware adds for a written value (the model uses the same decode).
    CHECK(hal::stream::words_free_delta_of(enc.value) == 0x1FFFE);
    CHECK(((7 + hal::stream::words_free_delta_of(enc.value)) & 0x1FFFF) == 5);
}

TEMPLATE_TEST_CASE("stream counter read is masked to 17 bits", "[stream]", facts::Wormhole,
                   facts::Blackhole) {
    using F = TestType;
    using Streams = hal::Streams<F::map>;
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    const auto s = Streams::make_id(31);
    REQUIRE(s.ok());
    fake.set(stream_reg(31, F::stream_avail), 0xABC00000u | 0x1234u);  // upper bits: other state
    CHECK(Streams::read(s.value) == 0x1234u);
    fake.set(stream_reg(31, F::stream_avail), 0x1FFFF);
    CHECK(Streams::read(s.value) == 0x1FFFF);
    CHECK(fake.accesses().size() == 2);
    CHECK(fake.accesses()[0].addr == stream_reg(31, F::stream_avail));
}

TEMPLATE_TEST_CASE("stream reset reloads the counter through DEST_BUF_SIZE", "[stream]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    using Streams = hal::Streams<F::map>;
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    constexpr auto s0 = Streams::template id<0>();
    REQUIRE(Streams::reset(s0) == Status::Ok);
    REQUIRE(Streams::reset(s0, 8) == Status::Ok);
    CHECK(fake.writes() == std::vector<RegWrite>{{stream_reg(0, F::stream_buf_size), 0},
                                                 {stream_reg(0, F::stream_buf_size), 8}});
    fake.clear_log();
    CHECK(Streams::reset(s0, 0x20000) == Status::BadArg);
    CHECK(fake.accesses().empty());
}

TEMPLATE_TEST_CASE("stream scratch register and ID range", "[stream]", facts::Wormhole,
                   facts::Blackhole) {
    using F = TestType;
    using Streams = hal::Streams<F::map>;
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    constexpr auto s = Streams::template id<31>();
    Streams::write_scratch(s, 0x0fed);
    CHECK(fake.writes() == std::vector<RegWrite>{{stream_reg(31, F::stream_scratch), 0x0fed}});
    CHECK(Streams::read_scratch(s) == 0x0fed);

    CHECK(Streams::kCount == 32);
    CHECK(Streams::make_id(32).status == Status::OutOfRange);
    CHECK(Streams::make_id(0xFFFFFFFF).status == Status::OutOfRange);
    CHECK(Streams::make_id(0).ok());
}
