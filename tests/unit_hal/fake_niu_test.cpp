// The HAL's NoC driver against the behavioural fake NIU: requests to this core really move data,
// NIU counters move as on silicon, and the software counts stay equal to the hardware counters
// (the invariant whose violation caused tt-metal #28446).
#include "hal/testing/fake_niu.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "arch_facts.h"
#include "hal/noc.h"
#include "hal/testing/fake_mmio.h"

using hal::Status;
using hal::testing::FakeNiu;
using hal::testing::FakeRegisterFile;
using hal::testing::NocRequest;
using hal::testing::ScopedFakeMmio;

namespace {
constexpr hal::NocXY kSelf{2, 3};
constexpr uint32_t kRet = 0x1F000;

template <const hal::ArchMap& A>
void check_counts_match(const hal::Noc<A>& noc, const FakeNiu<A>& niu) {
    namespace st = hal::noc::status;
    CHECK(noc.counters().rd_req_issued == niu.counter(st::kMstRdRespReceived));
    CHECK(noc.counters().nonposted_wr_req_issued == niu.counter(st::kMstNonpostedWrReqSent));
    CHECK(noc.counters().wr_ack_expected == niu.counter(st::kMstWrAckReceived));
    CHECK(noc.counters().posted_wr_req_issued == niu.counter(st::kMstPostedWrReqSent));
    CHECK(noc.counters().atomic_resp_expected == niu.counter(st::kMstAtomicRespReceived));
    CHECK(noc.counters().posted_atomic_issued == niu.counter(st::kMstPostedAtomicSent));
}
}  // namespace

TEMPLATE_TEST_CASE("loopback traffic moves data and keeps counts consistent", "[noc][fake_niu]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    fake.use_wall_clock(0, 10);
    FakeNiu<F::map> niu(fake, 1, kSelf);
    // Counters that start non-zero (earlier firmware used the NIU).
    niu.set_counter(hal::noc::status::kMstNonpostedWrReqSent, 100);
    niu.set_counter(hal::noc::status::kMstWrAckReceived, 100);
    hal::Noc<F::map> noc(hal::NocId::Noc1, {.atomic_return_l1_addr = kRet});
    REQUIRE(noc.init() == Status::Ok);
    CHECK(noc.self().x == kSelf.x);
    CHECK(noc.self().y == kSelf.y);
    const auto deadline = [] { return hal::Deadline::after_cycles(10'000); };

    // A 40 KiB payload: several bursts on either arch.
    std::vector<uint8_t> payload(40 * 1024);
    for (std::size_t i = 0; i < payload.size(); ++i) {
        payload[i] = static_cast<uint8_t>(i * 7 + 1);
    }
    fake.write_l1(0x10000, payload.data(), static_cast<uint32_t>(payload.size()));

    const hal::NocAddr me{kSelf.x, kSelf.y, 0x30000};
    REQUIRE(noc.write(0x10000, me, static_cast<uint32_t>(payload.size()), {.trid = 4}) ==
            Status::Ok);
    REQUIRE(noc.write_barrier(deadline()) == Status::Ok);
    CHECK(noc.trid_flushed(4));
    CHECK(noc.trid_writes_sent(4));
    std::vector<uint8_t> got(payload.size());
    fake.read_l1(0x30000, got.data(), static_cast<uint32_t>(got.size()));
    CHECK(got == payload);

    REQUIRE(noc.read({kSelf.x, kSelf.y, 0x30000}, 0x3B000, 4096) == Status::Ok);
    REQUIRE(noc.read_barrier(deadline()) == Status::Ok);
    CHECK(std::memcmp(fake.l1_base() + 0x3B000, payload.data(), 4096) == 0);

    fake.set_l1_word(0x3C010, 41);
    REQUIRE(noc.atomic_inc({kSelf.x, kSelf.y, 0x3C010}, 1) == Status::Ok);
    REQUIRE(noc.atomic_inc({kSelf.x, kSelf.y, 0x3C010}, 2, {.posted = true}) == Status::Ok);
    REQUIRE(noc.atomic_barrier(deadline()) == Status::Ok);
    CHECK(fake.l1_word(0x3C010) == 44);
    CHECK(fake.l1_word(kRet) == 41);  // old value of the non-posted one

    // Inline write to one of this core's stream registers (MMIO: allowed on both arches).
    const uint32_t reg =
        hal::stream::reg_addr(3, F::map.stream.remote_dest_buf_space_available_update);
    REQUIRE(noc.write_inline({kSelf.x, kSelf.y, reg}, 5u << 6) == Status::Ok);
    CHECK(fake.get(reg) == (5u << 6));

    REQUIRE(noc.full_barrier(deadline()) == Status::Ok);
    check_counts_match(noc, niu);
}

TEMPLATE_TEST_CASE("held completions: barrier times out until the NIU completes", "[noc][fake_niu]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    fake.use_wall_clock(0, 10);
    FakeNiu<F::map> niu(fake, 0, kSelf);
    niu.set_auto_complete(false);
    hal::Noc<F::map> noc(hal::NocId::Noc0);
    REQUIRE(noc.init() == Status::Ok);

    REQUIRE(noc.write(0x100, {9, 9, 0x100}, 64, {.trid = 7}) == Status::Ok);
    REQUIRE(noc.write(0x100, {9, 9, 0x200}, 64, {.posted = true}) == Status::Ok);
    CHECK(niu.pending().size() == 2);
    CHECK_FALSE(noc.trid_flushed(7));
    CHECK_FALSE(noc.trid_writes_sent(7));
    CHECK(noc.write_barrier(hal::Deadline::after_cycles(1000)) == Status::Timeout);
    CHECK(noc.trid_barrier(7, hal::Deadline::after_cycles(1000)) == Status::Timeout);

    niu.complete_all();
    CHECK(noc.trid_flushed(7));
    CHECK(noc.write_barrier(hal::Deadline::after_cycles(1000)) == Status::Ok);
    check_counts_match(noc, niu);
}

TEMPLATE_TEST_CASE("requests to other tiles reach the remote hook", "[noc][fake_niu]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    FakeRegisterFile fake;
    ScopedFakeMmio use(fake);
    fake.use_wall_clock(0, 10);
    FakeNiu<F::map> niu(fake, 0, kSelf);
    std::vector<NocRequest> seen;
    niu.set_remote_hook([&](const NocRequest& r) { seen.push_back(r); });
    hal::Noc<F::map> noc(hal::NocId::Noc0);
    REQUIRE(noc.init() == Status::Ok);

    REQUIRE(noc.write(0x1000, {10, 11, 0x2'0000'1000ull}, 128, {.vc = 2, .trid = 9}) == Status::Ok);
    REQUIRE(noc.multicast_write(0x1000, {1, 1, 3, 2}, 0x1000, 64, 6) == Status::Ok);
    REQUIRE(seen.size() == 2);
    CHECK(seen[0].is_write());
    CHECK_FALSE(seen[0].posted());
    CHECK(seen[0].vc() == 2);
    CHECK(seen[0].trid == 9);
    CHECK(seen[0].targ_addr == 0x1000);
    CHECK(seen[0].targ_coord == hal::noc::unicast_coord(kSelf.x, kSelf.y));
    CHECK(seen[0].ret_addr == 0x2'0000'1000ull);
    CHECK(seen[0].ret_coord == hal::noc::unicast_coord(10, 11));
    CHECK(seen[0].at_len_be == 128);
    CHECK(seen[1].is_mcast());
    CHECK(seen[1].vc() == 4);
    REQUIRE(noc.write_barrier(hal::Deadline::after_cycles(1000)) == Status::Ok);
    CHECK(noc.counters().wr_ack_expected == 1 + 6);
    check_counts_match(noc, niu);
}
