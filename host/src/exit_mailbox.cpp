#include "fabric/exit_mailbox.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "fabric/error.h"
#include "fabric/soc_descriptor.h"
#include "protocol/exit_mailbox.h"

namespace fabric {

namespace {

using protocol::ExitMailbox;
using protocol::ExitState;
using protocol::kConsoleRingBytes;

// Between two reads a console grows by less than 2 GiB: a larger step is a count that went back.
constexpr uint32_t kCountWentBack = 1u << 31;

uint32_t word_at(std::span<const uint8_t> bytes, size_t offset) {
    uint32_t w;
    std::memcpy(&w, bytes.data() + offset, sizeof w);
    return w;
}

ExitMailboxHeader decode_header(std::span<const uint8_t> raw) {
    ExitMailboxHeader h;
    h.magic = word_at(raw, offsetof(ExitMailbox, magic));
    h.raw_state = word_at(raw, offsetof(ExitMailbox, state));
    h.exit_code = word_at(raw, offsetof(ExitMailbox, exit_code));
    h.written = word_at(raw, offsetof(ExitMailbox, written));
    if (h.magic == 0) {
        h.state = ExitMailboxState::NotSetUp;
    } else if (h.magic != protocol::kExitMailboxMagic) {
        h.state = ExitMailboxState::Foreign;
    } else if (h.raw_state == static_cast<uint32_t>(ExitState::Running)) {
        h.state = ExitMailboxState::Running;
    } else if (h.raw_state == static_cast<uint32_t>(ExitState::Exited)) {
        h.state = ExitMailboxState::Exited;
    } else {
        h.state = ExitMailboxState::Foreign;
    }
    return h;
}

[[noreturn]] void foreign(const CoreLocation& core, uint32_t addr, const ExitMailboxHeader& h) {
    if (h.magic != protocol::kExitMailboxMagic) {
        fail(ErrorCategory::Device,
             "exit mailbox of {} at {}: magic {} is not {} (firmware without the fabric runtime, "
             "or an image that wrote over the mailbox)",
             core.str(), hex32(addr), hex32(h.magic), hex32(protocol::kExitMailboxMagic));
    }
    fail(ErrorCategory::Device,
         "exit mailbox of {} at {}: state {} is neither running ({}) nor exited ({})", core.str(),
         hex32(addr), hex32(h.raw_state), hex32(static_cast<uint32_t>(ExitState::Running)),
         hex32(static_cast<uint32_t>(ExitState::Exited)));
}

}  // namespace

std::string_view exit_mailbox_state_name(ExitMailboxState s) {
    switch (s) {
        case ExitMailboxState::NotSetUp:
            return "not set up";
        case ExitMailboxState::Foreign:
            return "foreign";
        case ExitMailboxState::Running:
            return "running";
        case ExitMailboxState::Exited:
            return "exited";
        default:
            return "invalid";
    }
}

uint32_t exit_mailbox_address(Device& device, const CoreLocation& core) {
    return protocol::exit_mailbox_addr(device.soc(core.chip).arch());
}

void clear_exit_mailbox(Device& device, const CoreLocation& core) {
    const std::array<uint8_t, protocol::kExitMailboxHeaderBytes> zeros{};
    device.write(core, exit_mailbox_address(device, core), zeros);
}

ExitMailboxHeader read_exit_mailbox_header(Device& device, const CoreLocation& core) {
    std::array<uint8_t, protocol::kExitMailboxHeaderBytes> raw{};
    device.read(core, exit_mailbox_address(device, core), raw);
    return decode_header(raw);
}

ExitMailboxReport read_exit_mailbox(Device& device, const CoreLocation& core, uint32_t since) {
    const uint32_t addr = exit_mailbox_address(device, core);
    std::array<uint8_t, sizeof(ExitMailbox)> raw{};
    device.read(core, addr, raw);
    ExitMailboxReport r;
    r.header = decode_header(raw);
    r.next = since;
    if (r.header.state == ExitMailboxState::NotSetUp) return r;
    if (r.header.state == ExitMailboxState::Foreign) foreign(core, addr, r.header);

    // Positions are counted from `since`, mod 2^32 like `written` itself; a count more than half
    // the range ahead is one that went back.
    const uint32_t published = r.header.written - since;
    if (published > kCountWentBack) {
        fail(ErrorCategory::Device,
             "exit mailbox of {} at {}: the console is at byte {}, before byte {} read earlier "
             "(the firmware restarted)",
             core.str(), hex32(addr), r.header.written, since);
    }
    // Whatever the firmware wrote up to the second read may have overwritten the ring while it
    // was read: only the last kConsoleRingBytes before that count are surely intact.
    const uint32_t written_after =
        std::max(device.read32(core, addr + offsetof(ExitMailbox, written)) - since, published);
    const uint32_t first =
        written_after > kConsoleRingBytes ? written_after - kConsoleRingBytes : 0;
    r.console_lost = first;
    for (uint32_t p = first; p < published; ++p) {
        r.console.push_back(static_cast<char>(
            raw[offsetof(ExitMailbox, console) + (since + p) % kConsoleRingBytes]));
    }
    r.next = since + std::max(first, published);
    return r;
}

std::optional<CoreStatus> exit_mailbox_core_status(const ExitMailboxHeader& header) {
    CoreStatus s;
    switch (header.state) {
        case ExitMailboxState::Running:
            s.state = CoreRunState::Running;
            return s;
        case ExitMailboxState::Exited:
            s.state = CoreRunState::Exited;
            s.exit_status = header.exit_code;
            return s;
        case ExitMailboxState::NotSetUp:
        case ExitMailboxState::Foreign:
            return std::nullopt;
        default:
            fail(ErrorCategory::Internal, "exit mailbox: unknown state {}",
                 static_cast<int>(header.state));
    }
}

}  // namespace fabric
