// Device: the one seam between the control plane and a set of chips. It is about memory and reset
// only: read and write any core's address space by (chip, x, y, address), and hold or release its
// RISCs. Backends: SimDevice (the Verilated SoC model) today; a PCIe backend over tt-kmd TLB
// windows later, where write()/read() become TLB-window copies and the reset helpers become writes
// of the same soft-reset register through the same windows. The control plane never asks which
// backend it has.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "fabric/coord.h"

namespace fabric {

class SocDescriptor;

// What a core is doing, as far as the backend can tell.
enum class CoreRunState {
    Unknown,  // the backend cannot tell (e.g. no status word published yet)
    Reset,    // held in soft reset
    Running,
    Exited,   // firmware finished and reported an exit status
    Trapped,  // the core took an exception it cannot return from
};

std::string_view run_state_name(CoreRunState s);

// How firmware is started on a core (launch.h does either).
enum class LaunchMethod {
    ResetPc,     // bare metal: hold the RISC in soft reset, load, set its reset PC, release it
    LaunchFlag,  // a WH active eth core running base firmware: never reset it; load the
                 // application at the firmware base and set the launch flag (host-and-pcie §2.4)
};

struct CoreStatus {
    CoreRunState state = CoreRunState::Unknown;
    uint32_t exit_status = 0;    // valid when Exited
    uint32_t trap_cause = 0;     // valid when Trapped: RISC-V mcause
    std::string trap_name;       // valid when Trapped: "illegal instruction"
    uint32_t trap_pc = 0;        // valid when Trapped: the faulting instruction
    uint32_t trap_tval = 0;      // valid when Trapped: faulting address or instruction bits
    std::optional<uint32_t> pc;  // where the core is now, if the backend can read it
};

// "core running at pc 0x00009abc", "core exited with status 3", "core trapped: illegal
// instruction (mcause 2) at pc 0x00009abc": what a core is doing, for messages.
std::string describe_core(const CoreStatus& s);

class Device {
  public:
    virtual ~Device() = default;

    // "sim wormhole_b0 (1 chip)", for messages.
    virtual std::string description() const = 0;
    virtual uint32_t chip_count() const = 0;
    virtual const SocDescriptor& soc(ChipId chip) const = 0;

    // Copy bytes to / from a core's address space (L1 and its memory-mapped registers). Throws
    // Error(Device) naming the core and address when nothing answers there, Error(BadInput) for a
    // core that does not exist.
    virtual void write(const CoreLocation& core, uint64_t addr, std::span<const uint8_t> data) = 0;
    virtual void read(const CoreLocation& core, uint64_t addr, std::span<uint8_t> data) = 0;

    // One aligned 32-bit access (registers need these). Defaults go through write()/read().
    virtual void write32(const CoreLocation& core, uint64_t addr, uint32_t value);
    virtual uint32_t read32(const CoreLocation& core, uint64_t addr);

    // Hold / release RISCs of a core: `riscs` is a mask of soft-reset bits
    // (hal::common::kSoftResetErisc0, ...). Defaults read-modify-write the soft-reset register.
    virtual void assert_risc_reset(const CoreLocation& core, uint32_t riscs);
    virtual void deassert_risc_reset(const CoreLocation& core, uint32_t riscs);

    // Let device time pass: at most `cycles` core-clock cycles. A simulator steps its clock; a
    // hardware backend waits the equivalent wall time. Returns the cycles that passed (fewer when
    // nothing on the device can make progress any more).
    virtual uint64_t advance(uint64_t cycles) = 0;
    // Core-clock cycles since the device was opened.
    virtual uint64_t cycles() const = 0;

    // What a core is doing. A hardware backend derives this from the firmware status word and the
    // RISC PC snapshot registers; the simulator knows it directly.
    virtual CoreStatus core_status(const CoreLocation& core) = 0;

    // How firmware is started on this core. Default: bare metal through the reset PC. A backend
    // whose WH eth cores run base firmware (silicon with active links, the simulator with a base
    // firmware image) answers LaunchFlag for them.
    virtual LaunchMethod launch_method(const CoreLocation& core);
};

}  // namespace fabric
