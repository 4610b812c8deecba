#include "fabric/interrupt.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <csignal>

#include "fabric/error.h"
#include "hal/arch_map.h"

namespace fabric {

namespace {
// Lock-free, so a signal handler may store to it.
std::atomic<int> requested_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
}  // namespace

void request_interrupt(int signal) noexcept {
    requested_signal.store(signal, std::memory_order_relaxed);
}

int interrupt_requested() noexcept {
    return requested_signal.load(std::memory_order_relaxed);
}

void clear_interrupt() noexcept {
    requested_signal.store(0, std::memory_order_relaxed);
}

std::string signal_name(int signal) {
    if (signal == SIGINT) return "SIGINT";
    if (signal == SIGTERM) return "SIGTERM";
    return fmt::format("signal {}", signal);
}

Interrupted::Interrupted(int signal)
    : std::runtime_error(fmt::format("interrupted by {}", signal_name(signal))), signal_(signal) {}

void throw_if_interrupted() {
    if (const int s = interrupt_requested()) throw Interrupted(s);
}

void InterruptibleDevice::write(const CoreLocation& core, uint64_t addr,
                                std::span<const uint8_t> data) {
    inner_.write(core, addr, data);
}

void InterruptibleDevice::read(const CoreLocation& core, uint64_t addr, std::span<uint8_t> data) {
    inner_.read(core, addr, data);
}

void InterruptibleDevice::write32(const CoreLocation& core, uint64_t addr, uint32_t value) {
    inner_.write32(core, addr, value);
}

uint32_t InterruptibleDevice::read32(const CoreLocation& core, uint64_t addr) {
    return inner_.read32(core, addr);
}

void InterruptibleDevice::assert_risc_reset(const CoreLocation& core, uint32_t riscs) {
    inner_.assert_risc_reset(core, riscs);
}

void InterruptibleDevice::deassert_risc_reset(const CoreLocation& core, uint32_t riscs) {
    inner_.deassert_risc_reset(core, riscs);
}

uint64_t InterruptibleDevice::advance(uint64_t cycles) {
    uint64_t ran = 0;
    while (ran < cycles) {
        throw_if_interrupted();
        const uint64_t slice = std::min(cycles - ran, kInterruptSliceCycles);
        const uint64_t r = inner_.advance(slice);
        ran += r;
        if (hook_) hook_(inner_.cycles());
        if (r < slice) break;  // nothing on the device can make progress any more
    }
    return ran;
}

std::string terminate_after_interrupt(FabricRunner& runner, const Interrupted& interrupt,
                                      uint64_t timeout_cycles) {
    if (!runner.started()) return {};
    clear_interrupt();
    const std::string what =
        fmt::format("the {} router{} this command started on {}", runner.plan().routers.size(),
                    runner.plan().routers.size() == 1 ? "" : "s", runner.device().description());
    const std::string sig = signal_name(interrupt.signal());
    try {
        (void)runner.terminate(protocol::fabric::Termination::Immediate, timeout_cycles);
        return fmt::format("{}: terminated {}", sig, what);
    } catch (const Interrupted& again) {
        request_interrupt(again.signal());  // still asked to stop
        return fmt::format("{}: terminating {} was interrupted by {}: they may still be running",
                           sig, what, signal_name(again.signal()));
    } catch (const Error& e) {
        return fmt::format("{}: terminating {} failed, they may still be running: {}", sig, what,
                           e.what());
    }
}

std::string stop_cores_after_interrupt(Device& device, const std::vector<CoreLocation>& cores,
                                       const std::vector<LaunchMethod>& methods,
                                       const Interrupted& interrupt) {
    if (cores.empty()) return {};
    clear_interrupt();
    const std::string sig = signal_name(interrupt.signal());
    std::vector<std::string> flagged;
    size_t held = 0;
    for (size_t i = 0; i < cores.size(); ++i) {
        if (i < methods.size() && methods[i] == LaunchMethod::LaunchFlag) {
            flagged.push_back(cores[i].str());
            continue;
        }
        try {
            device.assert_risc_reset(cores[i], hal::common::kSoftResetErisc0);
            ++held;
        } catch (const Error& e) {
            return fmt::format(
                "{}: holding {} in reset failed, the kernels this command started "
                "may still be running: {}",
                sig, cores[i].str(), e.what());
        }
    }
    std::string out = fmt::format("{}: held the {} core{} this command started in reset on {}", sig,
                                  held, held == 1 ? "" : "s", device.description());
    if (!flagged.empty()) {
        out += fmt::format(
            "; left running (started through the base firmware, which only a "
            "board reset stops): {}",
            fmt::join(flagged, ", "));
    }
    return out;
}

}  // namespace fabric
