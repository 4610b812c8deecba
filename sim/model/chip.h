// One simulated chip: Verilated RISC-V tiles (sim::Tile) on the chip's two NOCs
// (sim::noc::Network), with their stream registers, Ethernet TX queues (eth cores) and DRAM
// channels, stepped in lockstep one core clock at a time.
//
//   sim::ChipSpec spec = ...;                 // grid, cores, DRAM (host: from the SoC descriptor)
//   sim::Chip chip(spec);
//   sim::Tile& t = chip.tile(9, 0);           // created on first use, held in reset
//   chip.write(9, 0, 0x9040, program_bytes);  // the host's path: L1, registers
//   chip.write32(9, 0, hal::common::kErisc0ResetPcReg, 0x9040);
//   chip.write32(9, 0, hal::common::kSoftResetReg, hal::common::kSoftResetAllRiscs &
//   ~kSoftResetErisc0); chip.step(10'000);
//
// What a tile is wired to (sim/README.md, "Chip and Cluster"):
//   core MMIO port   NOC0/NOC1 NIU registers -> noc::Niu, stream registers -> StreamRegs,
//                    eth TX queues -> eth::TxQueues (eth cores), anything else -> access fault;
//                    whole 32-bit words only (a byte or halfword store there faults)
//   NOC endpoint     L1 (byte-exact), the stream registers and single words of the tile's own
//                    register block (soft reset, reset PCs); anything else is refused, which
//                    the Network records as a bus error (AddressRefused)
// A NOC access to a coordinate where nothing is instantiated is the Network's NoEndpoint error.
//
// The model does not depend on the host's YAML parser: the host turns its SocDescriptor into a
// ChipSpec. Deterministic: no threads, no clocks, no unordered iteration.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "endpoint.h"
#include "eth/txq.h"
#include "hal/arch_map.h"
#include "noc/dram.h"
#include "noc/network.h"
#include "noc/stream_regs.h"
#include "packet_tap.h"
#include "tile.h"

namespace sim {

enum class CoreKind : uint8_t { Worker, Eth };
const char* to_string(CoreKind k);

struct CoreSpec {
    uint32_t x = 0;  // physical (NOC0) coordinate
    uint32_t y = 0;
    CoreKind kind = CoreKind::Worker;
    uint32_t l1_size = 0;  // bytes of L1 at address 0 (multiple of 4)
};

struct ChipSpec {
    hal::Arch arch = hal::Arch::WormholeB0;
    uint32_t grid_x = 0;  // 1..64
    uint32_t grid_y = 0;
    // Cores that can be instantiated as tiles. Ethernet channel n is the n-th Eth core of this
    // list.
    std::vector<CoreSpec> cores;
    // DRAM channels, each the list of its NOC ports (physical coordinates), and the bank size.
    std::vector<std::vector<noc::Coord>> dram_channels;
    uint64_t dram_bank_size = 0;
    std::string name = "chip";  // prefix of tile names ("chip_x9_y0") in messages and traces
    CoreTiming timing{};
    noc::NocParams noc{};
};

class Chip {
  public:
    // Throws std::invalid_argument for an inconsistent spec (grid out of 1..64, a core or DRAM port
    // outside the grid or listed twice, a zero or unaligned L1 size, DRAM ports without a size).
    explicit Chip(ChipSpec spec);
    ~Chip();
    Chip(const Chip&) = delete;
    Chip& operator=(const Chip&) = delete;

    const ChipSpec& spec() const { return spec_; }
    const hal::ArchMap& arch() const { return arch_; }
    const std::string& name() const { return spec_.name; }

    // ---- cores -------------------------------------------------------------------------------
    // The spec of the core at (x, y); nullptr if the spec lists none there.
    const CoreSpec* core_spec(uint32_t x, uint32_t y) const;
    uint32_t eth_channels() const { return static_cast<uint32_t>(eth_cores_.size()); }
    // Eth channel -> coordinate. Throws std::out_of_range for a channel the chip does not have.
    noc::Coord eth_core(uint32_t channel) const;
    std::optional<uint32_t> eth_channel(uint32_t x, uint32_t y) const;

    // The tile of the core at (x, y), instantiated on first use: its core held in soft reset,
    // L1 zeroed, attached to both NOCs (NIU), stream registers, TX queues on eth cores. Throws
    // std::out_of_range when the spec lists no core there.
    Tile& tile(uint32_t x, uint32_t y);
    // nullptr when (x, y) has no instantiated tile (does not instantiate).
    Tile* find_tile(uint32_t x, uint32_t y);
    const Tile* find_tile(uint32_t x, uint32_t y) const;
    bool instantiated(uint32_t x, uint32_t y) const { return find_tile(x, y) != nullptr; }
    std::size_t tile_count() const { return tile_count_; }
    // Instantiated cores in spec order (for reports).
    std::vector<noc::Coord> instantiated_cores() const;

    // Parts of an instantiated tile (each instantiates the tile like tile()).
    StreamRegs& streams(uint32_t x, uint32_t y);
    noc::Niu& niu(uint32_t x, uint32_t y);
    // The TX queues of an eth core (nullptr for a worker). Calls the TXQ access hook first, so a
    // Cluster can bring the core's link up to the current cycle.
    eth::TxQueues* txq(uint32_t x, uint32_t y);
    // What the NOC and an Ethernet peer reach at this core: L1 and the stream registers.
    Endpoint& endpoint(uint32_t x, uint32_t y);

    // ---- the host's access path (what a TLB window reaches) ----------------------------------
    // L1 is a plain copy (no simulated time). Outside L1 the access must be whole aligned 32-bit
    // words, each routed like a core access: NIU registers, stream registers, TX queues, and the
    // tile's own register block (soft reset, reset PCs, wall clock; one tile clock per word, see
    // sim/README.md). Throws std::out_of_range naming the core and address when nothing answers
    // (or a register refuses the write), std::out_of_range when there is no core at (x, y).
    void write(uint32_t x, uint32_t y, uint32_t addr, std::span<const uint8_t> bytes);
    void read(uint32_t x, uint32_t y, uint32_t addr, std::span<uint8_t> bytes);
    void write32(uint32_t x, uint32_t y, uint32_t addr, uint32_t value);
    uint32_t read32(uint32_t x, uint32_t y, uint32_t addr);

    // ---- time --------------------------------------------------------------------------------
    // Advance n core clocks. Each cycle: every tile whose core is running steps one clock, then
    // the network steps one clock. Tiles held in reset or halted are not clocked (their wall
    // clock is brought up to date before the host next touches their registers); the network is
    // not stepped while idle (it is brought up to date before the next NIU access).
    void step(uint64_t cycles = 1);
    uint64_t cycle() const { return cycle_; }
    // Nothing will change until the host (or an Ethernet peer) touches the chip: no core running,
    // nothing in flight on the NOCs. Stepping a quiescent chip only counts cycles.
    bool quiescent() const { return active_.empty() && !net_busy_ && !active_dirty_; }

    // Cores whose core is running and not idle (see set_idle_word), for "run until done".
    bool busy() const;
    // Whether the core at (x, y) counts as busy (instantiated, running, not idle).
    bool core_busy(uint32_t x, uint32_t y) const;
    // On: a NOC request reaching a core of the spec that is not instantiated yet instantiates it
    // (held in reset, as the host's first touch would) instead of being refused as NoEndpoint:
    // a chip the host reaches only through the NOC (a remote chip), whose cores exist from
    // power-on on silicon. Off (default): such a request is NoEndpoint.
    void create_cores_on_noc_access(bool on);

    // Mark the core at (x, y) as a supervisor loop (the WH base firmware): while it runs, it counts
    // as idle whenever the L1 word at `l1_addr` (the launch flag) is 0.
    void set_idle_word(uint32_t x, uint32_t y, std::optional<uint32_t> l1_addr);

    // ---- fault hook: a core that stops making progress --------------------------------------
    // Freeze the core at (x, y): its RISC's clock is gated from now on (it executes nothing, its
    // PC and registers hold, its wall clock stops) while the rest of the chip runs: its L1 and
    // stream registers still answer the NOC and Ethernet, the host still reads and writes it, and
    // its run state stays what it was (a frozen running core still counts as busy). Unfreezing
    // resumes it where it stopped; the frozen cycles are not made up. A host access to the tile's
    // own register block (soft reset, reset PC) still clocks it once, as for any parked tile.
    // Instantiates the tile like tile().
    void set_frozen(uint32_t x, uint32_t y, bool frozen);
    bool frozen(uint32_t x, uint32_t y) const;

    // The chip's NOCs (brought up to date with the chip's cycle first) and DRAM.
    noc::Network& network();
    noc::DramChannels& dram() { return *dram_; }

    // ---- hooks for the Cluster ---------------------------------------------------------------
    // Called right after a tile is instantiated (its core still in reset).
    void on_tile_created(std::function<void(uint32_t x, uint32_t y)> hook);
    // Called before every access to the TX queues of the eth core at (x, y) (core MMIO, host
    // access, txq()).
    void set_txq_hook(uint32_t x, uint32_t y, std::function<void()> hook);

    // Packet tracing (packet_tap.h): this chip's NOC landings and its cores' stream register
    // stores go to `tap` as chip `chip_id` (nullptr: off, the default).
    void set_packet_tap(PacketTap* tap, uint32_t chip_id);

    struct Slot;  // one instantiated core (chip.cpp)

  private:
    int32_t index_of(uint32_t x, uint32_t y) const;
    Slot& slot(uint32_t x, uint32_t y);
    Slot* find_slot(uint32_t x, uint32_t y) const;
    void rebuild_active();
    void sync_network();
    void catch_up(Slot& s);
    bool slot_busy(const Slot& s) const;
    std::optional<uint32_t> core_mmio_read(Slot& s, uint32_t addr);
    bool core_mmio_write(Slot& s, uint32_t addr, uint32_t value);
    void host_word(Slot& s, uint32_t addr, uint32_t* value, bool write);
    bool tile_register(Slot& s, uint32_t addr, uint32_t* value, bool write);
    std::string where(const Slot& s) const;

    ChipSpec spec_;
    const hal::ArchMap& arch_;
    noc::Network net_;
    // Packet tracing: the tap and what this chip is to it.
    class TapLandings;
    PacketTap* tap_ = nullptr;
    uint32_t tap_chip_ = 0;
    std::unique_ptr<TapLandings> tap_landings_;
    std::unique_ptr<noc::DramChannels> dram_;
    std::vector<int32_t> core_at_;              // grid_x * y + x -> index into spec_.cores, or -1
    std::vector<uint32_t> eth_cores_;           // channel -> index into spec_.cores
    std::vector<int32_t> eth_channel_of_;       // core index -> channel, or -1
    std::vector<std::unique_ptr<Slot>> slots_;  // by core index, null until instantiated
    std::size_t tile_count_ = 0;
    std::vector<Slot*> active_;  // running cores, stepped every cycle
    bool active_dirty_ = false;
    std::vector<Slot*> frozen_;  // slots with the fault hook set (set_frozen)
    bool net_busy_ = false;
    uint64_t cycle_ = 0;
    std::function<void(uint32_t, uint32_t)> on_created_;
};

}  // namespace sim
