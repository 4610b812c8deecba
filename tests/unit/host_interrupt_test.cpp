// fabric/interrupt.h: the flag a signal handler raises, and InterruptibleDevice, which stops the
// work over a device at its next slice once the flag is up.

#include <catch2/catch.hpp>
#include <csignal>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fabric/error.h"
#include "fabric/interrupt.h"
#include "hal/arch_map.h"

namespace {

// A device that only keeps time: records every advance, runs `busy_until` cycles at most, and
// calls `on_advance` after each (a signal arriving while the device runs).
class ClockDevice : public fabric::Device {
  public:
    std::vector<uint64_t> advances;
    uint64_t busy_until = UINT64_MAX;
    std::function<void()> on_advance;

    std::string description() const override { return "clock"; }
    uint32_t chip_count() const override { return 1; }
    const fabric::SocDescriptor& soc(fabric::ChipId) const override {
        throw std::logic_error("no descriptor");
    }
    void write(const fabric::CoreLocation&, uint64_t, std::span<const uint8_t>) override {}
    void read(const fabric::CoreLocation&, uint64_t, std::span<uint8_t>) override {}
    uint64_t advance(uint64_t cycles) override {
        advances.push_back(cycles);
        const uint64_t ran = std::min(cycles, busy_until - now_);
        now_ += ran;
        if (on_advance) on_advance();
        return ran;
    }
    uint64_t cycles() const override { return now_; }
    fabric::CoreStatus core_status(const fabric::CoreLocation&) override { return {}; }

  private:
    uint64_t now_ = 0;
};

// Every test leaves the flag down for the next.
struct FlagDown {
    FlagDown() { fabric::clear_interrupt(); }
    ~FlagDown() { fabric::clear_interrupt(); }
};

}  // namespace

TEST_CASE("interrupt: the flag holds the signal until cleared", "[interrupt]") {
    FlagDown down;
    CHECK(fabric::interrupt_requested() == 0);
    fabric::request_interrupt(SIGTERM);
    CHECK(fabric::interrupt_requested() == SIGTERM);
    CHECK_THROWS_WITH(fabric::throw_if_interrupted(), "interrupted by SIGTERM");
    fabric::clear_interrupt();
    CHECK_NOTHROW(fabric::throw_if_interrupted());
    CHECK(fabric::signal_name(SIGINT) == "SIGINT");
    CHECK(fabric::signal_name(SIGHUP) == "signal 1");
}

TEST_CASE("interrupt: a long advance is cut into slices", "[interrupt]") {
    FlagDown down;
    ClockDevice clock;
    fabric::InterruptibleDevice dev(clock);
    CHECK(dev.advance(25'000) == 25'000);
    CHECK(clock.advances == std::vector<uint64_t>{10'000, 10'000, 5'000});
    clock.advances.clear();
    CHECK(dev.advance(1'000) == 1'000);  // a poll: handed over whole
    CHECK(clock.advances == std::vector<uint64_t>{1'000});
    CHECK(dev.cycles() == 26'000);
}

TEST_CASE("interrupt: an advance stops early when the device does", "[interrupt]") {
    FlagDown down;
    ClockDevice clock;
    clock.busy_until = 12'345;
    fabric::InterruptibleDevice dev(clock);
    CHECK(dev.advance(50'000) == 12'345);
    CHECK(clock.advances == std::vector<uint64_t>{10'000, 10'000});
}

TEST_CASE("interrupt: the raised flag stops the next slice", "[interrupt]") {
    FlagDown down;
    ClockDevice clock;
    fabric::InterruptibleDevice dev(clock);
    clock.on_advance = [&] {
        if (clock.cycles() == 20'000) fabric::request_interrupt(SIGINT);
    };
    try {
        dev.advance(100'000);
        FAIL("no Interrupted");
    } catch (const fabric::Interrupted& e) {
        CHECK(e.signal() == SIGINT);
        CHECK(std::string(e.what()) == "interrupted by SIGINT");
    }
    CHECK(dev.cycles() == 20'000);
    CHECK_THROWS_AS(dev.advance(1), fabric::Interrupted);  // until cleared
    CHECK(dev.cycles() == 20'000);
    fabric::clear_interrupt();
    CHECK(dev.advance(1) == 1);
}

namespace {

// A device that records the soft-reset bits asserted per core (and may refuse them).
class ResetDevice : public ClockDevice {
  public:
    std::vector<std::pair<fabric::CoreLocation, uint32_t>> held;
    bool refuse = false;
    void assert_risc_reset(const fabric::CoreLocation& core, uint32_t riscs) override {
        if (refuse) fabric::fail(fabric::ErrorCategory::Device, "the reset register is not there");
        held.emplace_back(core, riscs);
    }
};

}  // namespace

TEST_CASE("interrupt: kernels a command launched are held in reset, or named as left running",
          "[interrupt]") {
    FlagDown down;
    ResetDevice dev;
    const fabric::CoreLocation a{0, {1, 0}}, b{0, {2, 0}}, c{1, {1, 0}};
    using fabric::LaunchMethod;
    fabric::request_interrupt(SIGTERM);
    const fabric::Interrupted e(SIGTERM);
    const std::string done = fabric::stop_cores_after_interrupt(
        dev, {a, b, c}, {LaunchMethod::ResetPc, LaunchMethod::LaunchFlag, LaunchMethod::ResetPc},
        e);
    CHECK(done ==
          "SIGTERM: held the 2 cores this command started in reset on clock; left running "
          "(started through the base firmware, which only a board reset stops): " +
              b.str());
    CHECK(fabric::interrupt_requested() == 0);
    REQUIRE(dev.held.size() == 2);
    CHECK(dev.held[0].first.str() == a.str());
    CHECK(dev.held[1].first.str() == c.str());
    CHECK(dev.held[0].second == hal::common::kSoftResetErisc0);

    CHECK(fabric::stop_cores_after_interrupt(dev, {}, {}, e).empty());  // nothing started
    dev.refuse = true;
    CHECK(fabric::stop_cores_after_interrupt(dev, {a}, {LaunchMethod::ResetPc}, e) ==
          "SIGTERM: holding " + a.str() +
              " in reset failed, the kernels this command started may still be running: the "
              "reset register is not there");
}
