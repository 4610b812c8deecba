// Stopping long work when the user asks (SIGINT / SIGTERM in fabricctl), without doing any of it
// in a signal handler.
//
//   flag         request_interrupt(signal) is async-signal-safe (one lock-free atomic store): a
//                handler calls it and returns. interrupt_requested() reads it.
//   device       InterruptibleDevice wraps any Device; its advance() throws Interrupted once the
//                flag is set. Every wait of the library (launch, FabricRunner, HealthMonitor)
//                advances the device in polls of about a thousand cycles, and a longer advance is
//                cut into slices of kInterruptSliceCycles, so work over it stops within one slice.
//   cleanup      the caller catches Interrupted, clears the flag (clear_interrupt), undoes what it
//                started on hardware (FabricRunner::terminate, stop_cores_after_interrupt) and
//                exits. A second signal during
//                the cleanup interrupts that too.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabric/device.h"
#include "fabric/fabric_runner.h"

namespace fabric {

// The most cycles one InterruptibleDevice::advance hands to the device between two looks at the
// flag.
inline constexpr uint64_t kInterruptSliceCycles = 10'000;

// Set the flag to `signal` (non-zero). Async-signal-safe.
void request_interrupt(int signal) noexcept;
// The signal that asked to stop, or 0.
int interrupt_requested() noexcept;
void clear_interrupt() noexcept;

// "SIGINT", "SIGTERM", else "signal N".
std::string signal_name(int signal);

// Thrown by InterruptibleDevice::advance (and throw_if_interrupted) once the flag is set. Not a
// fabric::Error: no handler of a device or fabric failure may take it for one.
class Interrupted : public std::runtime_error {
  public:
    explicit Interrupted(int signal);
    int signal() const { return signal_; }

  private:
    int signal_;
};

void throw_if_interrupted();

// Every call forwarded to `inner`; advance() checks the flag before each slice.
class InterruptibleDevice final : public Device {
  public:
    explicit InterruptibleDevice(Device& inner) : inner_(inner) {}
    // Owning `inner` (a command's device, held as the interface).
    explicit InterruptibleDevice(std::unique_ptr<Device> inner)
        : inner_(*inner), owned_(std::move(inner)) {}

    std::string description() const override { return inner_.description(); }
    uint32_t chip_count() const override { return inner_.chip_count(); }
    const SocDescriptor& soc(ChipId chip) const override { return inner_.soc(chip); }
    void write(const CoreLocation& core, uint64_t addr, std::span<const uint8_t> data) override;
    void read(const CoreLocation& core, uint64_t addr, std::span<uint8_t> data) override;
    void write32(const CoreLocation& core, uint64_t addr, uint32_t value) override;
    uint32_t read32(const CoreLocation& core, uint64_t addr) override;
    void assert_risc_reset(const CoreLocation& core, uint32_t riscs) override;
    void deassert_risc_reset(const CoreLocation& core, uint32_t riscs) override;
    // Slices of at most kInterruptSliceCycles, the flag checked before each; stops early like the
    // inner device does (a slice that ran short). Throws Interrupted.
    uint64_t advance(uint64_t cycles) override;
    uint64_t cycles() const override { return inner_.cycles(); }
    CoreStatus core_status(const CoreLocation& core) override { return inner_.core_status(core); }
    LaunchMethod launch_method(const CoreLocation& core) override {
        return inner_.launch_method(core);
    }

    Device& inner() { return inner_; }
    // Called after every slice with the device's cycles (e.g. to redraw a progress line).
    void after_each_slice(std::function<void(uint64_t cycles)> hook) { hook_ = std::move(hook); }

  private:
    Device& inner_;
    std::unique_ptr<Device> owned_;
    std::function<void(uint64_t)> hook_;
};

// After Interrupted reached a caller whose routers run on hardware (they outlive the process):
// clear the flag, stop every router `runner` started (immediate termination within
// `timeout_cycles`) and return what happened, one line for stderr: "SIGINT: terminated the 40
// routers this command started on <device>", or why they may still be running (the termination
// failed, or a second signal interrupted it). Nothing to do (nullopt-like empty string) if the
// runner started nothing.
std::string terminate_after_interrupt(FabricRunner& runner, const Interrupted& interrupt,
                                      uint64_t timeout_cycles);

// The same for kernels a command launched itself (`pcie run`, `flash --wait`): clear the flag and
// hold every core started through its reset PC in soft reset again; a core started through the
// base firmware's launch flag (a Wormhole active eth core) cannot be stopped without resetting
// that firmware and is named as left running. One line for stderr: "SIGINT: held the 2 cores this
// command started in reset on <device>", plus what was left running or failed.
std::string stop_cores_after_interrupt(Device& device, const std::vector<CoreLocation>& cores,
                                       const std::vector<LaunchMethod>& methods,
                                       const Interrupted& interrupt);

}  // namespace fabric
