// The system-call layer under PcieDevice: open a Tenstorrent device node, issue tt-kmd ioctls on
// it, map its BARs and TLB windows, and move bytes through a mapping. This is the ONLY code that
// differs between silicon and the model:
//
//   LinuxKmdPort   open("/dev/tenstorrent/N"), ioctl(2), mmap(2); a mapping is a pointer into a
//                  BAR, accessed with 32-bit volatile loads and stores (host-and-pcie §2.2).
//   SimKmdPort     (sim_kmd_port.h) a driver written against the same ABI structs whose BAR0 is the
//                  model's PCIe tile (sim/model/pcie_tlb.h): TLB config registers and windows that
//                  turn window accesses into NOC accesses to the target core of a sim::Chip.
//
// Everything above it (which window to allocate, how to configure it, splitting accesses at window
// edges, reset and launch) is PcieDevice, written once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fabric {

// A mmap()ed region of a device (a TLB window or part of a BAR). Offsets are from its start.
// Accesses are whole 32-bit words underneath (the PCIe MMIO granule UMD uses on Wormhole); the
// byte-granular read/write do read-modify-write of the edge words. Throws Error(Device) when the
// access faults (SIGBUS on silicon, a refused NOC access in the model) or leaves the region.
class KmdMapping {
  public:
    virtual ~KmdMapping() = default;
    virtual uint64_t size() const = 0;
    virtual void write(uint64_t offset, std::span<const uint8_t> bytes) = 0;
    virtual void read(uint64_t offset, std::span<uint8_t> bytes) = 0;
    virtual void write32(uint64_t offset, uint32_t value) = 0;
    virtual uint32_t read32(uint64_t offset) = 0;
    // Order earlier writes before later ones (sfence after write-combined copies).
    virtual void flush() {}
};

// One open device node (one file descriptor).
class KmdFile {
  public:
    virtual ~KmdFile() = default;
    virtual const std::string& path() const = 0;
    // ioctl(fd, request, arg): 0 on success, -errno on failure (never throws for a driver refusal).
    virtual int ioctl(unsigned long request, void* arg) = 0;
    // mmap(fd, size, PROT_READ|PROT_WRITE, MAP_SHARED, offset); nullptr with `error` = errno.
    virtual std::unique_ptr<KmdMapping> map(uint64_t offset, uint64_t size, int& error) = 0;
};

class KmdPort {
  public:
    virtual ~KmdPort() = default;
    // "/dev/tenstorrent", "sim (wormhole_b0, 2 chips)": for messages.
    virtual std::string description() const = 0;
    // Device ordinals present (the N of /dev/tenstorrent/N), ascending. Empty when there are none,
    // including when the directory does not exist.
    virtual std::vector<uint32_t> list_devices() = 0;
    // Open device N (O_RDWR | O_CLOEXEC). Throws Error(Device) naming the node and errno.
    virtual std::unique_ptr<KmdFile> open(uint32_t ordinal) = 0;
    // Let `cycles` device clocks pass: the model steps its clock; silicon sleeps the equivalent
    // wall time at `clock_mhz`. Returns the cycles that passed.
    virtual uint64_t advance(uint64_t cycles, uint32_t clock_mhz) = 0;
    // Device clocks since the port was opened (the model's clock; silicon: wall time x clock).
    virtual uint64_t cycles(uint32_t clock_mhz) const = 0;
    // Let exactly `cycles` clocks pass even when nothing is busy (e.g. to wait for a base
    // firmware's heartbeat). Silicon: the same as advance().
    virtual uint64_t step(uint64_t cycles, uint32_t clock_mhz) {
        return advance(cycles, clock_mhz);
    }
    // Whether the firmware's simulator-control words (hal::simctrl) answer through a window: the
    // model reports a core's run state there (sim/model/pcie_tlb.h), silicon has no such block.
    virtual bool has_sim_control() const { return false; }
};

// The real driver: /dev/tenstorrent/<N> (or another directory, for tests).
class LinuxKmdPort final : public KmdPort {
  public:
    explicit LinuxKmdPort(std::string dir = "/dev/tenstorrent");
    std::string description() const override { return dir_; }
    std::vector<uint32_t> list_devices() override;
    std::unique_ptr<KmdFile> open(uint32_t ordinal) override;
    uint64_t advance(uint64_t cycles, uint32_t clock_mhz) override;
    uint64_t cycles(uint32_t clock_mhz) const override;

  private:
    std::string dir_;
    uint64_t start_ns_;
};

}  // namespace fabric
