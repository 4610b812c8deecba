#include "fabric/device.h"

#include <array>

#include "fabric/error.h"
#include "hal/arch_map.h"

namespace fabric {

std::string_view run_state_name(CoreRunState s) {
    switch (s) {
        case CoreRunState::Unknown:
            return "unknown";
        case CoreRunState::Reset:
            return "reset";
        case CoreRunState::Running:
            return "running";
        case CoreRunState::Exited:
            return "exited";
        case CoreRunState::Trapped:
            return "trapped";
        default:
            return "invalid";
    }
}

std::string describe_core(const CoreStatus& s) {
    switch (s.state) {
        case CoreRunState::Trapped:
            return fmt::format("core trapped: {} (mcause {}) at pc {}", s.trap_name, s.trap_cause,
                               hex32(s.trap_pc));
        case CoreRunState::Exited:
            return fmt::format("core exited with status {}", s.exit_status);
        default: {
            std::string out = fmt::format("core {}", run_state_name(s.state));
            if (s.pc) out += fmt::format(" at pc {}", hex32(*s.pc));
            return out;
        }
    }
}

void Device::write32(const CoreLocation& core, uint64_t addr, uint32_t value) {
    const std::array<uint8_t, 4> b{static_cast<uint8_t>(value), static_cast<uint8_t>(value >> 8),
                                   static_cast<uint8_t>(value >> 16),
                                   static_cast<uint8_t>(value >> 24)};
    write(core, addr, b);
}

uint32_t Device::read32(const CoreLocation& core, uint64_t addr) {
    std::array<uint8_t, 4> b{};
    read(core, addr, b);
    return uint32_t{b[0]} | (uint32_t{b[1]} << 8) | (uint32_t{b[2]} << 16) | (uint32_t{b[3]} << 24);
}

void Device::assert_risc_reset(const CoreLocation& core, uint32_t riscs) {
    const uint32_t v = read32(core, hal::common::kSoftResetReg);
    write32(core, hal::common::kSoftResetReg, v | riscs);
}

void Device::deassert_risc_reset(const CoreLocation& core, uint32_t riscs) {
    const uint32_t v = read32(core, hal::common::kSoftResetReg);
    write32(core, hal::common::kSoftResetReg, v & ~riscs);
}

}  // namespace fabric

namespace fabric {

LaunchMethod Device::launch_method(const CoreLocation&) {
    return LaunchMethod::ResetPc;
}

}  // namespace fabric
