// The host's reader of the exit/console mailbox (fabric/exit_mailbox.h) on a memory-only device:
// the firmware side is played by the test with the runtime's own steps (firmware/runtime), so the
// exit code, the console, a wrapped ring's lost bytes and a mailbox that is not ours are checked
// exactly, without the model.
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <map>

#include "expect_error.h"
#include "fabric/exit_mailbox.h"
#include "fabric/soc_descriptor.h"
#include "protocol/exit_mailbox.h"

using fabric::CoreLocation;
using fabric::ErrorCategory;
using fabric::ExitMailboxState;
namespace ft = fabric::test;

namespace {

const std::string kDir = FABRIC_SOC_DESCRIPTOR_DIR;

const fabric::SocDescriptor& soc_of(hal::Arch arch) {
    static const auto wh = fabric::SocDescriptor::load_file(kDir + "/wormhole_b0_80_arch.yaml");
    static const auto bh = fabric::SocDescriptor::load_file(kDir + "/blackhole_140_arch.yaml");
    return arch == hal::Arch::Blackhole ? bh : wh;
}

// Bytes per core, nothing else; `after_read` runs after every read (a firmware that writes while
// the host reads).
class MemoryDevice final : public fabric::Device {
  public:
    explicit MemoryDevice(hal::Arch arch) : arch_(arch) {}
    std::string description() const override { return "memory"; }
    uint32_t chip_count() const override { return 1; }
    const fabric::SocDescriptor& soc(fabric::ChipId) const override { return soc_of(arch_); }
    void write(const CoreLocation& c, uint64_t addr, std::span<const uint8_t> d) override {
        for (size_t i = 0; i < d.size(); ++i) mem[{c, addr + i}] = d[i];
    }
    void read(const CoreLocation& c, uint64_t addr, std::span<uint8_t> d) override {
        for (size_t i = 0; i < d.size(); ++i) d[i] = mem[{c, addr + i}];
        ++reads;
        if (after_read) after_read();
    }
    uint64_t advance(uint64_t cycles) override { return cycles; }
    uint64_t cycles() const override { return 0; }
    fabric::CoreStatus core_status(const CoreLocation&) override { return {}; }

    std::map<std::pair<CoreLocation, uint64_t>, uint8_t> mem;
    std::function<void()> after_read;
    int reads = 0;

  private:
    hal::Arch arch_;
};

// The runtime's side, step for step as firmware/runtime/console_exit.cpp does it, on the device's
// memory directly (not through read/write, so no after_read runs).
class Firmware {
  public:
    Firmware(MemoryDevice& dev, const CoreLocation& core)
        : dev_(dev), core_(core), base_(protocol::exit_mailbox_addr(dev.soc(0).arch())) {}
    void open() {
        put(offsetof(protocol::ExitMailbox, written), 0);
        put(offsetof(protocol::ExitMailbox, exit_code), 0);
        put(offsetof(protocol::ExitMailbox, state),
            static_cast<uint32_t>(protocol::ExitState::Running));
        put(offsetof(protocol::ExitMailbox, magic), protocol::kExitMailboxMagic);
    }
    void print(const std::string& text) {
        for (const char c : text) {
            const uint32_t n = get(offsetof(protocol::ExitMailbox, written));
            dev_.mem[{core_, base_ + offsetof(protocol::ExitMailbox, console) +
                                 n % protocol::kConsoleRingBytes}] = static_cast<uint8_t>(c);
            put(offsetof(protocol::ExitMailbox, written), n + 1);
        }
    }
    void exit(uint32_t code) {
        put(offsetof(protocol::ExitMailbox, exit_code), code);
        put(offsetof(protocol::ExitMailbox, state),
            static_cast<uint32_t>(protocol::ExitState::Exited));
    }
    void put(size_t offset, uint32_t v) {
        for (uint32_t i = 0; i < 4; ++i)
            dev_.mem[{core_, base_ + offset + i}] = uint8_t(v >> 8 * i);
    }
    uint32_t get(size_t offset) {
        uint32_t v = 0;
        for (uint32_t i = 0; i < 4; ++i)
            v |= uint32_t{dev_.mem[{core_, base_ + offset + i}]} << 8 * i;
        return v;
    }

  private:
    MemoryDevice& dev_;
    CoreLocation core_;
    uint32_t base_;
};

// "line 0000 ...": numbered lines, so a byte out of place shows.
std::string numbered_text(size_t bytes) {
    std::string s;
    for (int line = 0; s.size() < bytes; ++line)
        s += fmt::format("line {:04} of the console\n", line);
    s.resize(bytes);
    return s;
}

const CoreLocation kCore{0, {9, 0}};

}  // namespace

TEST_CASE("exit mailbox: the address per arch, below the usable top, above the test mailbox",
          "[exit_mailbox]") {
    MemoryDevice wh(hal::Arch::WormholeB0), bh(hal::Arch::Blackhole);
    CHECK(fabric::exit_mailbox_address(wh, kCore) == 0x3FDC0);
    CHECK(fabric::exit_mailbox_address(bh, kCore) == 0x6FDE0);
    CHECK(0x3FDC0 + sizeof(protocol::ExitMailbox) == hal::kWormholeB0.eth_l1_usable_top);
    CHECK(0x6FDE0 + sizeof(protocol::ExitMailbox) == hal::kBlackhole.eth_l1_usable_top);
    CHECK(protocol::kTestMailboxWormholeB0 + sizeof(protocol::TestMailbox) <= 0x3FDC0);
    CHECK(protocol::kTestMailboxBlackhole + sizeof(protocol::TestMailbox) <= 0x6FDE0);
}

TEST_CASE("exit mailbox: the exact exit code and console of a run", "[exit_mailbox]") {
    MemoryDevice dev(hal::Arch::WormholeB0);
    Firmware fw(dev, kCore);
    fw.open();
    fw.print("hello from the core\nsecond line, no newline");
    auto r = fabric::read_exit_mailbox(dev, kCore);
    CHECK(r.header.state == ExitMailboxState::Running);
    CHECK(r.console == "hello from the core\nsecond line, no newline");
    CHECK(r.console_lost == 0);
    CHECK(r.next == 43);
    const auto running = fabric::exit_mailbox_core_status(r.header);
    REQUIRE(running);
    CHECK(running->state == fabric::CoreRunState::Running);

    fw.print("!\n");
    fw.exit(0xC0DE0042);
    r = fabric::read_exit_mailbox(dev, kCore, r.next);  // from where the last read stopped
    CHECK(r.header.state == ExitMailboxState::Exited);
    CHECK(r.header.exit_code == 0xC0DE0042);
    CHECK(r.header.written == 45);
    CHECK(r.console == "!\n");
    CHECK(r.console_lost == 0);
    CHECK(r.next == 45);
    const auto exited =
        fabric::exit_mailbox_core_status(fabric::read_exit_mailbox_header(dev, kCore));
    REQUIRE(exited);
    CHECK(exited->state == fabric::CoreRunState::Exited);
    CHECK(exited->exit_status == 0xC0DE0042);
    // The whole console again, from the start.
    CHECK(fabric::read_exit_mailbox(dev, kCore).console ==
          "hello from the core\nsecond line, no newline!\n");
}

TEST_CASE("exit mailbox: a wrapped ring keeps the last 512 bytes and counts the lost ones",
          "[exit_mailbox]") {
    MemoryDevice dev(hal::Arch::Blackhole);
    Firmware fw(dev, kCore);
    fw.open();
    const std::string text = numbered_text(1300);
    fw.print(text);
    fw.exit(7);
    auto r = fabric::read_exit_mailbox(dev, kCore);
    CHECK(r.header.state == ExitMailboxState::Exited);
    CHECK(r.header.exit_code == 7);
    CHECK(r.console == text.substr(1300 - 512));
    CHECK(r.console_lost == 1300 - 512);
    CHECK(r.next == 1300);
    // A reader that had read up to byte 100 lost 688; one at byte 1000 lost nothing.
    r = fabric::read_exit_mailbox(dev, kCore, 100);
    CHECK(r.console == text.substr(788));
    CHECK(r.console_lost == 688);
    r = fabric::read_exit_mailbox(dev, kCore, 1000);
    CHECK(r.console == text.substr(1000));
    CHECK(r.console_lost == 0);
    r = fabric::read_exit_mailbox(dev, kCore, 1300);
    CHECK(r.console.empty());
    CHECK(r.next == 1300);
}

TEST_CASE("exit mailbox: bytes the firmware overwrites while the ring is read count as lost",
          "[exit_mailbox]") {
    MemoryDevice dev(hal::Arch::WormholeB0);
    Firmware fw(dev, kCore);
    fw.open();
    const std::string text = numbered_text(700);
    fw.print(text.substr(0, 600));
    // After the host's read of header and ring, the firmware prints 100 more bytes: the ring
    // positions of bytes 88..187 were overwritten by the time the count is read again.
    bool printed = false;
    dev.after_read = [&] {
        if (!printed) fw.print(text.substr(600));
        printed = true;
    };
    const auto r = fabric::read_exit_mailbox(dev, kCore);
    CHECK(r.header.written == 600);
    CHECK(r.console == text.substr(188, 600 - 188));
    CHECK(r.console_lost == 188);
    CHECK(r.next == 600);
    // The next read picks up the 100 bytes printed meanwhile.
    const auto more = fabric::read_exit_mailbox(dev, kCore, r.next);
    CHECK(more.console == text.substr(600));
    CHECK(more.console_lost == 0);
}

TEST_CASE("exit mailbox: the write count wraps at 2^32 and keeps its ring position",
          "[exit_mailbox]") {
    MemoryDevice dev(hal::Arch::WormholeB0);
    Firmware fw(dev, kCore);
    fw.open();
    fw.put(offsetof(protocol::ExitMailbox, written), 0xFFFFFFF0u);
    fw.print("0123456789abcdefXYZ");  // 16 bytes before the wrap, 3 after
    const auto r = fabric::read_exit_mailbox(dev, kCore, 0xFFFFFFF0u);
    CHECK(r.header.written == 3);
    CHECK(r.console == "0123456789abcdefXYZ");
    CHECK(r.console_lost == 0);
    CHECK(r.next == 3);
}

TEST_CASE("exit mailbox: not set up, cleared, and mailboxes that are not ours", "[exit_mailbox]") {
    MemoryDevice dev(hal::Arch::WormholeB0);
    // Nothing there yet (the host cleared it; the firmware has not started).
    auto r = fabric::read_exit_mailbox(dev, kCore);
    CHECK(r.header.state == ExitMailboxState::NotSetUp);
    CHECK(r.console.empty());
    CHECK_FALSE(fabric::exit_mailbox_core_status(r.header));

    Firmware fw(dev, kCore);
    fw.open();
    fw.print("old run\n");
    fw.exit(3);
    fabric::clear_exit_mailbox(dev, kCore);
    CHECK(fabric::read_exit_mailbox_header(dev, kCore).state == ExitMailboxState::NotSetUp);

    fw.put(offsetof(protocol::ExitMailbox, magic), 0x12345678);
    const auto foreign = fabric::read_exit_mailbox_header(dev, kCore);
    CHECK(foreign.state == ExitMailboxState::Foreign);
    CHECK(foreign.magic == 0x12345678);
    CHECK_FALSE(fabric::exit_mailbox_core_status(foreign));
    CHECK(ft::expect_error(ErrorCategory::Device, [&] { fabric::read_exit_mailbox(dev, kCore); }) ==
          "exit mailbox of chip 0 core 9-0 at 0x0003fdc0: magic 0x12345678 is not 0xe417b0c5 "
          "(firmware without the fabric runtime, or an image that wrote over the mailbox)");

    fw.open();
    fw.put(offsetof(protocol::ExitMailbox, state), 5);
    CHECK(fabric::read_exit_mailbox_header(dev, kCore).state == ExitMailboxState::Foreign);
    CHECK(ft::expect_error(ErrorCategory::Device, [&] { fabric::read_exit_mailbox(dev, kCore); }) ==
          "exit mailbox of chip 0 core 9-0 at 0x0003fdc0: state 0x00000005 is neither running "
          "(0x52554e21) nor exited (0xe4173d00)");

    // A console that went back: the firmware restarted since the host read up to byte 40.
    fw.open();
    fw.print("restarted\n");
    CHECK(ft::expect_error(ErrorCategory::Device,
                           [&] { fabric::read_exit_mailbox(dev, kCore, 40); }) ==
          "exit mailbox of chip 0 core 9-0 at 0x0003fdc0: the console is at byte 10, before byte "
          "40 read earlier (the firmware restarted)");
}
