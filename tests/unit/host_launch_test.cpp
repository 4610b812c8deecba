// Device defaults and the launch sequence, on a fake device that records every access: the
// control-plane logic is checked without the simulator.
#include <catch2/catch.hpp>
#include <map>

#include "expect_error.h"
#include "fabric/launch.h"
#include "fabric/soc_descriptor.h"
#include "protocol/exit_mailbox.h"
#include "test_elf.h"

using Catch::Matchers::Contains;
using fabric::CoreLocation;
using fabric::CoreRunState;
using fabric::CoreStatus;
using fabric::ErrorCategory;
namespace t = fabric::test;

namespace {

struct Access {
    bool write;
    uint64_t addr;
    std::vector<uint8_t> bytes;
};

// Byte-addressed memory per core plus a scripted run: after ERISC0 is released the core runs for
// `run_cycles`, then ends in `final_state`.
class FakeDevice : public fabric::Device {
  public:
    std::string description() const override { return "fake"; }
    uint32_t chip_count() const override { return 1; }
    const fabric::SocDescriptor& soc(fabric::ChipId) const override {
        static const auto wh = fabric::SocDescriptor::load_file(
            std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/wormhole_b0_80_arch.yaml");
        return wh;
    }
    void write(const CoreLocation& c, uint64_t addr, std::span<const uint8_t> d) override {
        log.push_back({true, addr, {d.begin(), d.end()}});
        for (size_t i = 0; i < d.size(); ++i) mem[{c, addr + i}] = d[i];
    }
    void read(const CoreLocation& c, uint64_t addr, std::span<uint8_t> d) override {
        for (size_t i = 0; i < d.size(); ++i) d[i] = mem[{c, addr + i}];
    }
    uint64_t advance(uint64_t cycles) override {
        advances.push_back(cycles);
        if (!released()) return cycles;
        const uint64_t left = run_cycles > ran ? run_cycles - ran : 0;
        const uint64_t n = final_state != CoreRunState::Running ? std::min(cycles, left) : cycles;
        ran += n;
        now += n;
        return n;
    }
    uint64_t cycles() const override { return now; }
    CoreStatus core_status(const CoreLocation&) override {
        CoreStatus s;
        s.pc = 0x9044;
        if (!released()) {
            s.state = CoreRunState::Reset;
        } else if (final_state == CoreRunState::Running || ran < run_cycles) {
            s.state = CoreRunState::Running;
        } else {
            s.state = final_state;
            s.exit_status = 42;
            s.trap_cause = 2;
            s.trap_name = "illegal instruction";
            s.trap_pc = 0x9048;
        }
        return s;
    }

    bool released() {
        const CoreLocation core{0, {9, 0}};
        return (read32(core, hal::common::kSoftResetReg) & hal::common::kSoftResetErisc0) == 0 &&
               !log.empty();
    }
    uint32_t word(uint64_t addr) { return read32({0, {9, 0}}, addr); }

    std::map<std::pair<CoreLocation, uint64_t>, uint8_t> mem;
    std::vector<Access> log;
    std::vector<uint64_t> advances;
    uint64_t run_cycles = 0;
    uint64_t ran = 0;
    uint64_t now = 0;
    CoreRunState final_state = CoreRunState::Exited;
};

std::vector<uint8_t> le32(uint32_t v) {
    return {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
            static_cast<uint8_t>(v >> 24)};
}

fabric::ElfImage image() {
    t::TestElf e;
    e.entry = 0x9040;
    e.segments.push_back({.paddr = 0x9040, .data = t::words_to_bytes({0x13, 0x13})});
    e.segments.push_back({.paddr = 0x9200, .data = {7}, .memsz = 8, .flags = t::kPfR | t::kPfW});
    return fabric::ElfImage::parse(e.build(), "fw.elf");
}

const CoreLocation kCore{0, {9, 0}};
const auto kRules = fabric::erisc_placement(hal::kWormholeB0, 262144);

}  // namespace

TEST_CASE("Device reset helpers read-modify-write the soft-reset register", "[launch]") {
    FakeDevice d;
    d.write32(kCore, hal::common::kSoftResetReg, 0x1000);
    d.assert_risc_reset(kCore, hal::common::kSoftResetErisc0);
    CHECK(d.word(hal::common::kSoftResetReg) == 0x1800);
    d.deassert_risc_reset(kCore, hal::common::kSoftResetErisc1);
    CHECK(d.word(hal::common::kSoftResetReg) == 0x0800);
    d.write32(kCore, 0x100, 0xDEADBEEF);
    CHECK(d.mem[{kCore, 0x100}] == 0xEF);  // little-endian
    CHECK(d.mem[{kCore, 0x103}] == 0xDE);
}

TEST_CASE("launch: reset, load, reset PC, release ERISC0, run to exit", "[launch]") {
    FakeDevice d;
    d.run_cycles = 12345;
    const auto r = fabric::launch(d, kCore, image(), kRules);

    REQUIRE(d.log.size() == 6);
    CHECK(d.log[0].addr == 0xFFB121B0);
    CHECK(d.log[0].bytes == le32(0x47800));  // every RISC held
    CHECK(d.log[1].addr == 0x3FDC0);
    CHECK(d.log[1].bytes == std::vector<uint8_t>(32, 0));  // the exit mailbox's header cleared
    CHECK(d.log[2].addr == 0x9040);
    CHECK(d.log[2].bytes == t::words_to_bytes({0x13, 0x13}));
    CHECK(d.log[3].addr == 0x9200);
    CHECK(d.log[3].bytes == std::vector<uint8_t>{7, 0, 0, 0, 0, 0, 0, 0});  // bss zeroed
    CHECK(d.log[4].addr == 0xFFB14000);
    CHECK(d.log[4].bytes == le32(0x9040));  // ERISC0 reset PC = entry
    CHECK(d.log[5].addr == 0xFFB121B0);
    CHECK(d.log[5].bytes == le32(0x47000));  // ERISC0 (bit 11) released, others held

    CHECK(r.outcome == fabric::LaunchOutcome::Exited);
    CHECK(r.status.exit_status == 42);
    CHECK(r.cycles == 12345);
    CHECK(d.advances == std::vector<uint64_t>{10000, 10000});
}

TEST_CASE("launch: cycle budget exhausted reports where the core is", "[launch]") {
    FakeDevice d;
    d.final_state = CoreRunState::Running;
    fabric::LaunchOptions o;
    o.max_cycles = 25000;
    const auto r = fabric::launch(d, kCore, image(), kRules, o);
    CHECK(r.outcome == fabric::LaunchOutcome::Timeout);
    CHECK(r.cycles == 25000);
    CHECK(d.advances == std::vector<uint64_t>{10000, 10000, 5000});
    REQUIRE(r.status.pc.has_value());
    CHECK(*r.status.pc == 0x9044);
}

TEST_CASE("launch: trap", "[launch]") {
    FakeDevice d;
    d.run_cycles = 3;
    d.final_state = CoreRunState::Trapped;
    const auto r = fabric::launch(d, kCore, image(), kRules);
    CHECK(r.outcome == fabric::LaunchOutcome::Trapped);
    CHECK(r.status.trap_pc == 0x9048);
    CHECK(r.cycles == 3);
}

TEST_CASE("launch: a misplaced image never touches the device", "[launch]") {
    FakeDevice d;
    t::TestElf e;
    e.entry = 0x40000;
    e.segments.push_back({.paddr = 0x40000, .data = t::words_to_bytes({0x13})});
    const auto img = fabric::ElfImage::parse(e.build(), "fw.elf");
    CHECK_THAT(
        t::expect_error(ErrorCategory::BadElf, [&] { fabric::launch(d, kCore, img, kRules); }),
        Contains("lies outside the loadable L1 range"));
    CHECK(d.log.empty());
}

TEST_CASE("launch: a core that stays in reset is a device error", "[launch]") {
    struct StuckInReset : FakeDevice {
        CoreStatus core_status(const CoreLocation&) override {
            CoreStatus s;
            s.state = CoreRunState::Reset;
            return s;
        }
    } d;
    CHECK_THAT(
        t::expect_error(ErrorCategory::Device, [&] { fabric::launch(d, kCore, image(), kRules); }),
        Contains("still in reset"));
}

TEST_CASE("launch: where the device cannot tell (silicon), the exit mailbox ends the run",
          "[launch]") {
    // A backend whose run state is Unknown once the core is out of reset; the firmware publishes
    // its mailbox (as the runtime does) when it has run for 12345 cycles.
    struct Silicon : FakeDevice {
        CoreStatus core_status(const CoreLocation& c) override {
            CoreStatus s = FakeDevice::core_status(c);
            if (s.state != CoreRunState::Reset) s.state = CoreRunState::Unknown;
            return s;
        }
        uint64_t advance(uint64_t cycles) override {
            const uint64_t n = FakeDevice::advance(cycles);
            if (released() && ran >= run_cycles && !published) publish();
            return n;
        }
        void publish() {
            published = true;
            const uint32_t box = protocol::exit_mailbox_addr(hal::kWormholeB0);
            const std::string console = "done\n";
            for (size_t i = 0; i < console.size(); ++i)
                mem[{kCore, box + offsetof(protocol::ExitMailbox, console) + i}] = console[i];
            const std::pair<size_t, uint32_t> words[] = {
                {offsetof(protocol::ExitMailbox, written), uint32_t(console.size())},
                {offsetof(protocol::ExitMailbox, exit_code), 9},
                {offsetof(protocol::ExitMailbox, state),
                 static_cast<uint32_t>(protocol::ExitState::Exited)},
                {offsetof(protocol::ExitMailbox, magic), protocol::kExitMailboxMagic}};
            for (const auto& [offset, value] : words) {
                for (uint32_t i = 0; i < 4; ++i)
                    mem[{kCore, box + offset + i}] = uint8_t(value >> 8 * i);
            }
        }
        bool published = false;
    } d;
    d.run_cycles = 12345;
    d.final_state = CoreRunState::Running;  // the fake's own state never ends the run
    const auto r = fabric::launch(d, kCore, image(), kRules);
    CHECK(r.outcome == fabric::LaunchOutcome::Exited);
    CHECK(r.status.exit_status == 9);
    CHECK(r.cycles == 20000);  // seen at the second poll
    CHECK(r.mailbox.header.state == fabric::ExitMailboxState::Exited);
    CHECK(r.mailbox.console == "done\n");
    CHECK(r.mailbox.console_lost == 0);
}
