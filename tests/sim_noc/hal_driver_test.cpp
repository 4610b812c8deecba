// The real HAL drivers (hal/noc.h, hal/stream.h), compiled for the host with FABRIC_HAL_FAKE_MMIO,
// driving the NOC model: every register access the driver makes goes through a mmio::Backend that
// forwards it to the core's NIU, its stream registers or the wall clock of the model, and costs
// one NOC cycle (the core stalls on an MMIO access). If this passes, the HAL and the model agree on
// the register protocol: addresses, field encodings, counter semantics, NOC1 coordinates.
#include <catch2/catch.hpp>

#include "hal/mmio.h"
#include "hal/noc.h"
#include "hal/stream.h"
#include "noc_test_util.h"

using namespace noc_test;
namespace st = hal::noc::status;

namespace {

// One core as the HAL sees it.
class ModelCoreMmio : public hal::mmio::Backend {
  public:
    ModelCoreMmio(Chip& chip, Core& core, uint32_t l1_size)
        : chip_(chip), core_(core), l1_size_(l1_size) {}

    uint32_t read32(uint32_t addr) override {
        chip_.net.step();
        const uint64_t now = chip_.net.cycle();
        if (addr == hal::common::kWallClockLo) {
            hi_at_ = static_cast<uint32_t>(now >> 32);
            return static_cast<uint32_t>(now);
        }
        if (addr == hal::common::kWallClockHiAt) {
            return hi_at_;
        }
        if (addr == hal::common::kWallClockHi) {
            return static_cast<uint32_t>(now >> 32);
        }
        std::optional<uint32_t> v;
        if (Niu::contains(addr)) {
            v = core_.niu->mmio_read(addr);
        } else if (core_.streams.contains(addr)) {
            v = core_.streams.mmio_read(addr);
        }
        if (!v) {
            bus_errors_.push_back(addr);
            return 0xDEADBEEF;
        }
        return *v;
    }

    void write32(uint32_t addr, uint32_t value) override {
        chip_.net.step();
        bool ok = false;
        if (Niu::contains(addr)) {
            ok = core_.niu->mmio_write(addr, value);
        } else if (core_.streams.contains(addr)) {
            ok = core_.streams.mmio_write(addr, value);
        }
        if (!ok) {
            bus_errors_.push_back(addr);
        }
    }

    uint8_t* l1_base() override { return core_.bytes(); }
    uint32_t l1_size() const override { return l1_size_; }

    const std::vector<uint32_t>& bus_errors() const { return bus_errors_; }

  private:
    Chip& chip_;
    Core& core_;
    uint32_t l1_size_;
    uint32_t hi_at_ = 0;
    std::vector<uint32_t> bus_errors_;
};

// Run `f` with hal::mmio routed to `core`.
template <typename F>
auto on(ModelCoreMmio& core, F&& f) {
    hal::mmio::Backend* prev = hal::mmio::g_backend;
    hal::mmio::g_backend = &core;
    auto r = f();
    hal::mmio::g_backend = prev;
    return r;
}

struct Wh {
    static constexpr const hal::ArchMap& A = hal::kWormholeB0;
    static constexpr uint32_t kGridX = 10;
};
struct Bh {
    static constexpr const hal::ArchMap& A = hal::kBlackhole;
    static constexpr uint32_t kGridX = 17;
};

template <typename T>
struct HalRig {
    static constexpr const hal::ArchMap& A = T::A;
    using Noc = hal::Noc<T::A>;
    using Streams = hal::Streams<T::A>;
    static constexpr uint32_t kAtomicRet = 0x3FF00;

    HalRig() : chip(T::kGridX, 12, A) {}

    ModelCoreMmio& add(uint32_t x, uint32_t y) {
        Core& c = chip.add_core(x, y);
        mmio.push_back(std::make_unique<ModelCoreMmio>(chip, c, A.eth_l1_size));
        return *mmio.back();
    }
    Core& core(std::size_t i) { return *chip.cores[i]; }

    Chip chip;
    std::vector<std::unique_ptr<ModelCoreMmio>> mmio;
};

hal::Deadline soon(const hal::ArchMap& a) {
    return hal::Deadline::after_us(a, hal::timeouts::kNocBarrierUs);
}

}  // namespace

TEMPLATE_TEST_CASE("HAL Noc driver against the model: init, coordinates, unicast write and read",
                   "[sim_noc][hal]", Wh, Bh) {
    HalRig<TestType> rig;
    using Noc = typename HalRig<TestType>::Noc;
    constexpr const hal::ArchMap& A = TestType::A;
    ModelCoreMmio& m0 = rig.add(1, 2);
    ModelCoreMmio& m1 = rig.add(7, 9);
    Core& c0 = rig.core(0);
    Core& c1 = rig.core(1);

    for (hal::NocId id : {hal::NocId::Noc0, hal::NocId::Noc1}) {
        const uint32_t noc = static_cast<uint32_t>(id);
        INFO("NOC" << noc);
        Noc n0{id};
        Noc n1{id};
        REQUIRE(on(m0, [&] { return n0.init(); }) == hal::Status::Ok);
        REQUIRE(on(m1, [&] { return n1.init(); }) == hal::Status::Ok);
        const Coord self0 = rig.chip.net.to_noc(noc, c0.at);
        CHECK(n0.self().x == self0.x);
        CHECK(n0.self().y == self0.y);
        const Coord peer = rig.chip.net.to_noc(noc, c1.at);
        const uint32_t src = 0x20000 + 0x10 * noc;
        const uint32_t dst = 0x28000 + 0x10 * noc;

        // A write larger than the maximum burst: the HAL splits it, the model sees legal requests.
        const uint32_t len = 2 * A.noc_max_burst_bytes + 48;
        fill(c0, src, len, 21 + noc);
        REQUIRE(on(m0, [&] {
                    return n0.write(src, {peer.x, peer.y, dst}, len, {.trid = 3});
                }) == hal::Status::Ok);
        CHECK(on(m0, [&] { return n0.write_barrier(soon(A)); }) == hal::Status::Ok);
        CHECK(same(c0, src, c1, dst, len));
        CHECK(on(m0, [&] { return n0.trid_flushed(3); }));
        CHECK(on(m0, [&] { return n0.trid_writes_sent(3); }));
        CHECK(counter(c0, noc, st::kMstNonpostedWrReqSent) == 3);
        CHECK(n0.counters().nonposted_wr_req_issued == 3);

        // Posted write.
        REQUIRE(on(m0, [&] {
                    return n0.write(src, {peer.x, peer.y, dst + 0x8000}, 256, {.posted = true});
                }) == hal::Status::Ok);
        CHECK(on(m0, [&] { return n0.write_barrier(soon(A)); }) == hal::Status::Ok);
        rig.chip.drain();
        CHECK(same(c0, src, c1, dst + 0x8000, 256));

        // Read it back from the peer into another buffer.
        const uint32_t back = 0x10000 + 0x10 * noc;
        REQUIRE(on(m0, [&] {
                    return n0.read({peer.x, peer.y, dst}, back, 4096, {.trid = 7});
                }) == hal::Status::Ok);
        CHECK(on(m0, [&] { return n0.read_barrier(soon(A)); }) == hal::Status::Ok);
        CHECK(same(c0, back, c1, dst, 4096));
        CHECK(on(m0, [&] { return n0.trid_barrier(7, soon(A)); }) == hal::Status::Ok);
    }
    CHECK(m0.bus_errors().empty());
    CHECK(m1.bus_errors().empty());
    CHECK(rig.chip.net.errors().empty());
}

TEMPLATE_TEST_CASE("HAL: remote credits by inline write to a stream register, local stream API",
                   "[sim_noc][hal]", Wh, Bh) {
    HalRig<TestType> rig;
    using Noc = typename HalRig<TestType>::Noc;
    using Streams = typename HalRig<TestType>::Streams;
    constexpr const hal::ArchMap& A = TestType::A;
    ModelCoreMmio& sender = rig.add(3, 0);
    ModelCoreMmio& receiver = rig.add(8, 0);
    Core& rx = rig.core(1);
    Noc noc{hal::NocId::Noc1};
    REQUIRE(on(sender, [&] { return noc.init(); }) == hal::Status::Ok);
    const auto s = Streams::template id<5>();
    // The receiver resets its counter through the local API.
    CHECK(on(receiver, [&] { return Streams::reset(s, 0); }) == hal::Status::Ok);
    const Coord peer = rig.chip.net.to_noc(1, rx.at);
    for (int32_t delta : {4, 4, -1, 10}) {
        const auto enc = Streams::encode_delta(delta);
        REQUIRE(enc.status == hal::Status::Ok);
        REQUIRE(on(sender, [&] {
                    return noc.write_inline({peer.x, peer.y, Streams::update_reg_addr(s)},
                                            enc.value, {.posted = true});
                }) == hal::Status::Ok);
    }
    CHECK(on(sender, [&] { return noc.write_barrier(soon(A)); }) == hal::Status::Ok);
    rig.chip.drain();
    CHECK(on(receiver, [&] { return Streams::read(s); }) == 17u);
    CHECK(on(receiver, [&] { return Streams::add(s, -7); }) == hal::Status::Ok);
    CHECK(rx.streams.words_free(5) == 10u);
    CHECK(sender.bus_errors().empty());
    CHECK(receiver.bus_errors().empty());
    CHECK(rig.chip.net.errors().empty());
}

TEMPLATE_TEST_CASE("HAL: atomics from two cores and a counted multicast", "[sim_noc][hal]", Wh,
                   Bh) {
    HalRig<TestType> rig;
    using Noc = typename HalRig<TestType>::Noc;
    constexpr const hal::ArchMap& A = TestType::A;
    constexpr uint32_t kRet = HalRig<TestType>::kAtomicRet;
    ModelCoreMmio& ma = rig.add(0, 0);
    ModelCoreMmio& mb = rig.add(4, 6);
    // Targets: a 3 x 2 rectangle of cores at x 5..7, y 3..4.
    for (uint32_t y = 3; y <= 4; ++y) {
        for (uint32_t x = 5; x <= 7; ++x) {
            rig.add(x, y);
        }
    }
    Core& target = rig.core(2);  // (5,3)
    Noc na{hal::NocId::Noc0, {.atomic_return_l1_addr = kRet}};
    Noc nb{hal::NocId::Noc0, {.atomic_return_l1_addr = kRet}};
    REQUIRE(on(ma, [&] { return na.init(); }) == hal::Status::Ok);
    REQUIRE(on(mb, [&] { return nb.init(); }) == hal::Status::Ok);
    const uint32_t ctr = 0x2004;
    for (int i = 0; i < 10; ++i) {
        REQUIRE(on(ma, [&] { return na.atomic_inc({5, 3, ctr}, 1); }) == hal::Status::Ok);
        REQUIRE(on(mb, [&] {
                    return nb.atomic_inc({5, 3, ctr}, 100, {.posted = true});
                }) == hal::Status::Ok);
    }
    CHECK(on(ma, [&] { return na.atomic_barrier(soon(A)); }) == hal::Status::Ok);
    CHECK(on(mb, [&] { return nb.atomic_barrier(soon(A)); }) == hal::Status::Ok);
    rig.chip.drain();
    CHECK(target.word(ctr) == 10u * 1 + 10u * 100);
    CHECK(counter(rig.core(0), 0, st::kMstAtomicRespReceived) == 10);
    CHECK(counter(rig.core(1), 0, st::kMstPostedAtomicSent) == 10);
    // The last returned old value is one of the sums seen before the final increment.
    const uint32_t last_old = rig.core(0).word(kRet);
    CHECK(last_old % 100 == 9);

    // Multicast from A to the whole rectangle, non-posted: the HAL expects one ack per
    // destination and the barrier returns only when the model delivered all six.
    fill(rig.core(0), 0x8000, 4096, 33);
    REQUIRE(on(ma, [&] {
                return na.multicast_write(
                    0x8000, {.x_start = 5, .y_start = 3, .x_end = 7, .y_end = 4}, 0x9000, 4096, 6);
            }) == hal::Status::Ok);
    CHECK(on(ma, [&] { return na.write_barrier(soon(A)); }) == hal::Status::Ok);
    CHECK(na.counters().wr_ack_expected == counter(rig.core(0), 0, st::kMstWrAckReceived));
    for (std::size_t i = 2; i < rig.chip.cores.size(); ++i) {
        CHECK(same(rig.core(0), 0x8000, rig.core(i), 0x9000, 4096));
    }
    CHECK(all_zero(rig.core(1), 0x9000, 4096));
    for (const auto& m : rig.mmio) {
        CHECK(m->bus_errors().empty());
    }
    CHECK(rig.chip.net.errors().empty());
}

TEMPLATE_TEST_CASE(
    "HAL: an unreachable destination is a recorded NOC error, the barrier still ends",
    "[sim_noc][hal]", Wh, Bh) {
    HalRig<TestType> rig;
    using Noc = typename HalRig<TestType>::Noc;
    constexpr const hal::ArchMap& A = TestType::A;
    ModelCoreMmio& m = rig.add(2, 2);
    Noc n{hal::NocId::Noc0};
    REQUIRE(on(m, [&] { return n.init(); }) == hal::Status::Ok);
    REQUIRE(on(m, [&] { return n.write(0x1000, {6, 6, 0x1000}, 512); }) == hal::Status::Ok);
    CHECK(on(m, [&] { return n.write_barrier(soon(A)); }) == hal::Status::Ok);
    REQUIRE(rig.chip.net.errors().size() == 1);
    CHECK(rig.chip.net.errors()[0].kind == sim::noc::NocErrorKind::NoEndpoint);
    CHECK(rig.chip.net.errors()[0].dst == Coord{6, 6});
}
