#include "fabric/remote_access.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "fabric/device.h"
#include "fabric/error.h"
#include "hal/arch_map.h"
#include "protocol/erisc_remote_access.h"

namespace fabric {

namespace {

namespace ra = protocol::remote_access;

// Register words go one at a time: a block is for L1.
bool in_registers(uint64_t addr) {
    return addr >= hal::common::kLocalDataRamBase;
}

std::string flags_text(uint32_t flags) {
    std::string s;
    const auto add = [&](uint32_t bit, const char* name) {
        if ((flags & bit) != 0) s += (s.empty() ? "" : ", ") + std::string(name);
    };
    add(ra::kFlagDestUnreachable,
        "destination unreachable (not this chip or its link peer, the link is down, or the peer "
        "did not answer)");
    add(ra::kFlagBlockUnavailable, "the access failed (bad size or address, NoC or link error)");
    return s.empty() ? fmt::format("flags {:#x}", flags) : s;
}

}  // namespace

RemoteAccess::RemoteAccess(Device& mmio, CoreLocation gateway, uint32_t target_coord,
                           std::string who, std::function<void(uint64_t)> wait,
                           uint64_t timeout_cycles)
    : mmio_(mmio),
      gateway_(gateway),
      target_coord_(target_coord),
      who_(std::move(who)),
      wait_(std::move(wait)),
      timeout_(timeout_cycles) {}

std::string RemoteAccess::where() const {
    return fmt::format("{} (through the gateway {})", who_, gateway_.str());
}

uint64_t RemoteAccess::sys_addr(CoreCoord core, uint64_t addr) const {
    return ra::sys_addr({target_coord_ & 0xFF, target_coord_ >> 8 & 0xFF, core.x, core.y, addr});
}

void RemoteAccess::fail_reported(std::string_view what, uint32_t flags, uint64_t sys) const {
    const ra::SysAddr a = ra::decode_sys_addr(sys);
    fail(ErrorCategory::Device,
         "{}: {} at core {}-{} {:#x}: the gateway's base firmware reports {}", where(), what,
         a.noc_x, a.noc_y, a.offset, flags_text(flags));
}

// Poll `done` every kRemotePollCycles until it holds; `timed_out` (which throws) once timeout_
// cycles have passed.
template <typename Done, typename TimedOut>
void RemoteAccess::await(Done&& done, TimedOut&& timed_out) {
    for (uint64_t waited = 0; !done(); waited += kRemotePollCycles) {
        if (waited >= timeout_) timed_out();
        wait_(kRemotePollCycles);
    }
}

// Queue one command (and a write's block); returns the slot it took.
uint32_t RemoteAccess::push(uint32_t flags, uint64_t sys, uint32_t data,
                            std::span<const uint8_t> block) {
    uint32_t wptr = 0, rptr = 0;
    await(
        [&] {
            wptr = mmio_.read32(gateway_, ra::wptr_addr(ra::kRequestQueue));
            rptr = mmio_.read32(gateway_, ra::rptr_addr(ra::kRequestQueue));
            return !ra::queue_full(wptr, rptr);
        },
        [&] {
            fail(ErrorCategory::Timeout,
                 "{}: the gateway took no command from its full queue within {} cycles (write "
                 "pointer {}, read pointer {}): is the Wormhole base firmware running on it?",
                 where(), timeout_, wptr, rptr);
        });
    const uint32_t slot = wptr % ra::kQueueSlots;
    if (!block.empty()) mmio_.write(gateway_, ra::request_block(slot), block);
    ra::RoutingCmd c{};
    c.sys_addr = sys;
    c.data = data;
    c.flags = flags;
    mmio_.write(gateway_, ra::cmd_addr(ra::kRequestQueue, wptr),
                std::span(reinterpret_cast<const uint8_t*>(&c), sizeof c));
    mmio_.write32(gateway_, ra::wptr_addr(ra::kRequestQueue), ra::next_ptr(wptr));
    return slot;
}

void RemoteAccess::wait_writes(uint32_t done_before, uint32_t errors_before, uint32_t count) {
    uint32_t done = 0;
    await(
        [&] {
            done = mmio_.read32(gateway_, ra::counter_addr(ra::kWritesDone)) - done_before;
            return done >= count;
        },
        [&] {
            fail(ErrorCategory::Timeout,
                 "{}: {} of {} writes done after {} cycles: the gateway's base firmware or its "
                 "link peer is not answering",
                 where(), done, count, timeout_);
        });
    if (mmio_.read32(gateway_, ra::counter_addr(ra::kErrors)) != errors_before) {
        const uint64_t sys =
            mmio_.read32(gateway_, ra::counter_addr(ra::kLastErrorAddrLo)) |
            uint64_t{mmio_.read32(gateway_, ra::counter_addr(ra::kLastErrorAddrHi))} << 32;
        fail_reported("write", mmio_.read32(gateway_, ra::counter_addr(ra::kLastErrorFlags)), sys);
    }
}

void RemoteAccess::write(CoreCoord core, uint64_t addr, std::span<const uint8_t> data) {
    const uint32_t done_before = mmio_.read32(gateway_, ra::counter_addr(ra::kWritesDone));
    const uint32_t errors_before = mmio_.read32(gateway_, ra::counter_addr(ra::kErrors));
    uint32_t count = 0;
    size_t i = 0;
    while (i < data.size()) {
        const uint64_t at = addr + i;
        const size_t left = data.size() - i;
        if (at % ra::kBlockAlign == 0 && left >= ra::kBlockAlign && !in_registers(at)) {
            const size_t n = std::min<size_t>(ra::kMaxBlockBytes, left & ~size_t{3});
            push(ra::kFlagWrReq | ra::kFlagDataBlock, sys_addr(core, at), static_cast<uint32_t>(n),
                 data.subspan(i, n));
            ++count;
            i += n;
            continue;
        }
        const uint64_t word_at = at & ~uint64_t{3};
        const size_t lead = at - word_at;
        const size_t n = std::min<size_t>(4 - lead, left);
        uint32_t w = 0;
        if (n != 4) {
            wait_writes(done_before, errors_before, count);  // the word as written so far
            w = read_word(core, word_at);
        }
        std::memcpy(reinterpret_cast<uint8_t*>(&w) + lead, data.data() + i, n);
        push(ra::kFlagWrReq, sys_addr(core, word_at), w, {});
        ++count;
        i += n;
    }
    wait_writes(done_before, errors_before, count);
}

// One read command of 4 bytes (a word) or a 32-B aligned block of up to 1 KiB.
void RemoteAccess::read_piece(CoreCoord core, uint64_t addr, std::span<uint8_t> out) {
    const bool block = out.size() != 4;
    const uint64_t sys = sys_addr(core, addr);
    push(ra::kFlagRdReq | (block ? ra::kFlagDataBlock : 0), sys,
         block ? static_cast<uint32_t>(out.size()) : 0, {});
    uint32_t rptr = 0;
    await(
        [&] {
            rptr = mmio_.read32(gateway_, ra::rptr_addr(ra::kResponseQueue));
            return !ra::queue_empty(mmio_.read32(gateway_, ra::wptr_addr(ra::kResponseQueue)),
                                    rptr);
        },
        [&] {
            fail(ErrorCategory::Timeout,
                 "{}: no answer to a read at core {} {:#x} within {} cycles: the gateway's base "
                 "firmware or its link peer is not answering",
                 where(), core.str(), addr, timeout_);
        });
    ra::RoutingCmd c{};
    mmio_.read(gateway_, ra::cmd_addr(ra::kResponseQueue, rptr),
               std::span(reinterpret_cast<uint8_t*>(&c), sizeof c));
    const uint32_t errors = c.flags & (ra::kFlagDestUnreachable | ra::kFlagBlockUnavailable);
    if (errors == 0 && block) mmio_.read(gateway_, ra::response_block(rptr % ra::kQueueSlots), out);
    mmio_.write32(gateway_, ra::rptr_addr(ra::kResponseQueue), ra::next_ptr(rptr));
    if (errors != 0) fail_reported("read", c.flags, sys);
    if (!block) std::memcpy(out.data(), &c.data, 4);
}

uint32_t RemoteAccess::read_word(CoreCoord core, uint64_t addr) {
    uint32_t w = 0;
    read_piece(core, addr, std::span(reinterpret_cast<uint8_t*>(&w), 4));
    return w;
}

void RemoteAccess::read(CoreCoord core, uint64_t addr, std::span<uint8_t> data) {
    const uint64_t lo = addr & ~uint64_t{3};
    const uint64_t hi = (addr + data.size() + 3) & ~uint64_t{3};
    std::vector<uint8_t> buf;
    for (uint64_t p = lo; p < hi;) {
        const bool block =
            p % ra::kBlockAlign == 0 && hi - p >= ra::kBlockAlign && !in_registers(p);
        const uint64_t n = block ? std::min<uint64_t>(ra::kMaxBlockBytes, hi - p) : 4;
        buf.resize(n);
        read_piece(core, p, buf);
        // The part of [p, p + n) inside [addr, addr + size).
        const uint64_t from = std::max(p, addr);
        const uint64_t to = std::min(p + n, addr + data.size());
        if (from < to) std::memcpy(data.data() + (from - addr), buf.data() + (from - p), to - from);
        p += n;
    }
}

}  // namespace fabric
