// One simulated RISC-V tile: our RV32IM core (sim/rtl, Verilated) with its L1, local data RAM and
// core-local register blocks. The L1 storage lives here in C++ so the host, and later the NOC and
// Ethernet models, reach it with plain memory copies; the RTL sees it through its memory port with
// the configured latency (sim/README.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hal/arch_map.h"

namespace sim {

// Core timing knobs, in core clock cycles. Defaults follow the Wormhole ERISC (fabric-protocol
// §5.1).
struct CoreTiming {
    uint32_t l1_load_latency = 7;    // L1 load: issue to data back
    uint32_t l1_store_interval = 5;  // at most one L1 store every N cycles
    uint32_t ldm_load_latency = 2;   // local data RAM load
    uint32_t div_latency = 16;       // DIV/REM occupancy (MUL is single cycle)
    uint32_t branch_penalty = 1;     // bubbles after a taken branch or jump
};

struct TileConfig {
    hal::Arch arch = hal::Arch::WormholeB0;
    uint32_t l1_size = 256 * 1024;  // from the SoC descriptor (eth_l1_size / worker_l1_size)
    uint32_t ldm_size = 4 * 1024;   // local data RAM at 0xFFB00000
    CoreTiming timing{};
    uint32_t hartid = 0;        // the core's mhartid CSR
    std::string name = "tile";  // used in messages and as the trace scope
};

// Why a core stopped. Trap causes use the RISC-V mcause encoding.
enum class RunState : uint8_t {
    Reset,  // held in soft reset
    Running,
    Exited,   // firmware wrote the sim-control exit register
    Trapped,  // ecall, ebreak, illegal instruction, misaligned or faulting access
};

struct TrapInfo {
    uint32_t cause =
        0;  // mcause: 0 misaligned fetch, 1 fetch fault, 2 illegal, 3 ebreak,
            // 4 misaligned load, 5 load fault, 6 misaligned store, 7 store fault, 11 ecall
    uint32_t pc = 0;    // the faulting instruction
    uint32_t tval = 0;  // faulting address or instruction bits
};

const char* trap_cause_name(uint32_t cause);

// The tile's external MMIO port: a core load or store in the core-local window
// (0xFFB00000-0xFFFFFFFF) that no block of the tile itself decodes (local data RAM, soft reset,
// reset PCs, wall clock) is handed to these functions: that is where the NOC, Ethernet and stream
// register models plug in. The core stalls until the function returns, then continues one cycle
// later. addr is the word-aligned address; byte_enable has one bit per byte lane (bit 0 = addr+0);
// store data sits in its lanes (a byte store to addr+1 is in bits 15:8). Loads return the whole
// word and the core picks its lanes. A read returning std::nullopt, a write returning false, or a
// missing function means nothing answers there: the core takes an access fault (cause 5 or 7).
// Called from inside Tile::step (and Tile::write/read, which clock the tile for register
// accesses); the handler must not call back into the same Tile.
struct MmioHandler {
    std::function<std::optional<uint32_t>(uint32_t addr, uint32_t byte_enable)> read;
    std::function<bool(uint32_t addr, uint32_t data, uint32_t byte_enable)> write;
};

class Tile {
  public:
    explicit Tile(const TileConfig& cfg);
    ~Tile();
    Tile(const Tile&) = delete;
    Tile& operator=(const Tile&) = delete;

    const TileConfig& config() const;

    // The NOC-side access path (what a NOC read/write or the host's TLB window reaches): L1 and the
    // tile's memory-mapped registers (soft reset, reset PC, wall clock). Throws std::out_of_range
    // for an address nothing answers at, naming it. Writes to L1 are byte-exact.
    // L1 accesses are plain memory copies and take no simulated time. Register accesses go through
    // the tile's NOC-side register port and take one clock cycle each (the core runs that cycle
    // too, as it would while a NOC write lands); they must be 4-byte aligned whole words.
    void write(uint32_t addr, std::span<const uint8_t> bytes);
    void read(uint32_t addr, std::span<uint8_t> bytes);
    void write32(uint32_t addr, uint32_t value);
    uint32_t read32(uint32_t addr);

    // Advance the clock. Returns the number of cycles actually run: fewer when the core
    // exited or trapped first (the cycle of the exit or trap is counted); 0 when it had already
    // stopped. A core held in reset runs the clock (the wall clock advances) for all the cycles.
    uint64_t step(uint64_t cycles);

    RunState state() const;
    uint32_t exit_code() const;  // valid when state() == Exited
    TrapInfo trap() const;       // valid when state() == Trapped
    uint64_t cycles() const;     // clock cycles since construction
    uint64_t instret() const;    // instructions retired since the core left reset
    uint32_t pc() const;         // PC of the next instruction to execute (the reset PC while held
                                 // in reset), for "stuck at" reports

    // Console output from the sim-control block, one character at a time (default: buffered and
    // readable through console(); once a sink is installed characters go to the sink only).
    void on_console(std::function<void(char)> sink);
    const std::string& console() const;

    // Install the external MMIO handler (replaces the previous one; default: everything faults).
    void set_mmio_handler(MmioHandler handler);

    // Waveform tracing to FST (off unless called). Throws if the model was built without tracing.
    void trace_to(const std::string& fst_path);

    // Whether this build can trace (trace_to works).
    static bool tracing_available();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace sim
