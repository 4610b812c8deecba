// The cycle-counted NOC model of one chip: two NOCs over the chip's grid, each a 2D torus that is
// unidirectional per dimension (NOC0 routes +x then +y, NOC1 -x then -y, in NOC0 coordinates), with
// a wormhole router per node (input buffers per virtual channel, route computation, round-robin
// switch allocation, switch traversal, credit-based flow control) and, per attached core, the NIU:
// the command-buffer registers the HAL driver (hal/noc.h) writes and the status counters it reads.
// Each stage is a class of its own (input_unit.h, switch_allocator.h, link_traversal.h,
// niu_injection.h, niu_ejection.h); Network owns them and steps them in order.
//
//   sim::noc::Network net(10, 12, hal::kWormholeB0);
//   sim::PlainMemory l1(hal::kWormholeB0.eth_l1_size);
//   sim::noc::Niu& niu = net.attach_core(1, 0, &l1);     // a core: endpoint + NIU
//   sim::SparseMemory dram(2ull << 30);
//   net.attach(0, 0, &dram, sim::noc::EndpointKind::Other);  // a DRAM port: endpoint only
//   niu.mmio_write(addr, value);  ...  net.step();          // one NOC clock per step()
//
// Everything is deterministic: the same register writes at the same cycles give the same cycle
// counts. See README.md in this folder for what is modelled, the parameters and the
// simplifications; the timing rules are in NocParams below.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "endpoint.h"
#include "hal/arch_map.h"

namespace sim::noc {

// Physical grid coordinate (NOC0 coordinate space).
struct Coord {
    uint32_t x = 0;
    uint32_t y = 0;
    bool operator==(const Coord&) const = default;
};

// How the alignment rules classify addresses at an endpoint (ISA doc, "NoC Address Alignment"):
// in a Tile, addresses below noc::kMmioStart are L1 and the rest MMIO; everything in Other (DRAM,
// PCIe) is "other". Inline writes and atomics are not possible to Other endpoints.
enum class EndpointKind : uint8_t { Tile, Other };

// Router ports. As an input: from the upstream router in X, in Y, or from the NIU (injection).
// As an output: to the downstream router in X, in Y, or to the NIU (ejection). "X" is the
// direction this NOC travels in x: +x for NOC0, -x for NOC1 (in NOC0 coordinates).
enum class Port : uint8_t { X = 0, Y = 1, Local = 2 };
inline constexpr uint32_t kNumPorts = 3;

// Timing and sizing. Zero-load latency of a packet of F flits over H router-to-router links
// (H + 1 routers, source and destination router included):
//     (H + 1) * (router_cycles + link_cycles) + (F - 1)
// counted from the cycle its first flit is injected to the cycle its last flit reaches the target.
// One flit (ArchMap::noc_word_bytes) per link per cycle. A VC sustains one flit per cycle only when
// vc_buffer_flits >= router_cycles + link_cycles + credit_cycles (the credit round trip).
struct NocParams {
    uint32_t router_cycles = 3;    // buffer write + route computation + switch allocation/traversal
    uint32_t link_cycles = 1;      // wire between routers (and router -> NIU)
    uint32_t credit_cycles = 1;    // a freed buffer slot is visible upstream after this many cycles
    uint32_t vc_buffer_flits = 8;  // input buffer depth per VC
};

enum class NocErrorKind : uint8_t {
    NoEndpoint,        // nothing attached at the destination coordinate
    AddressRefused,    // the endpoint refused the access (outside its memory / registers)
    Misaligned,        // violates the NoC alignment rules (see README)
    BurstTooLong,      // length > ArchMap::noc_max_burst_bytes (the HAL splits; the NIU does not)
    BadLength,         // zero length
    CoordOutsideGrid,  // a coordinate outside the chip's grid
    CmdBufBusy,        // NOC_CMD_CTRL written while that command buffer was still busy
    Unsupported,       // a request the hardware cannot do (inline write to DRAM, atomic to MMIO,
                       // multicast read/atomic, unknown opcode) or the model does not implement
    SourceRefused,     // the issuing core's own memory refused the read of the write data
};
const char* to_string(NocErrorKind kind);

// One recorded bus error. src/dst are physical (NOC0) coordinates; for CoordOutsideGrid dst is
// the coordinate as programmed. addr is the address the failing access was for.
struct NocError {
    uint64_t cycle = 0;
    uint32_t noc = 0;
    Coord src;
    Coord dst;
    uint64_t addr = 0;
    NocErrorKind kind = NocErrorKind::NoEndpoint;
    std::string detail;
};
std::string to_string(const NocError& e);

// A request that has landed at its target, for an observer (e.g. a packet trace): a write
// whose last data flit was written, an inline write or an atomic that was served. src/dst are
// physical coordinates; `data` is a write's payload (empty otherwise), `value` an inline write's
// or atomic's AT_DATA. Valid only during the call.
enum class LandedKind : uint8_t { Write, InlineWrite, Atomic };
struct Landed {
    LandedKind kind = LandedKind::Write;
    uint32_t noc = 0;
    Coord src;
    uint64_t src_addr = 0;  // writes: the source's local address
    Coord dst;
    uint64_t dst_addr = 0;
    uint32_t len = 0;
    const uint8_t* data = nullptr;
    uint32_t value = 0;
    uint64_t cycle = 0;  // the NOC clock at which it landed
};
class LandingObserver {
  public:
    virtual ~LandingObserver() = default;
    virtual void landed(const Landed& request) = 0;
};

// Per router output port: flits and packets that left through it. A link carries at most one
// flit per cycle, so flits == busy cycles; utilisation = flits / cycles observed.
struct LinkStats {
    uint64_t flits = 0;
    uint64_t packets = 0;
};

class Network;

// The NIU of one core: both NOCs' command buffers and counters. Reached by the tile's external
// MMIO port for core addresses [common::kNocRegsBase, + 2 * kNocInstanceStride). Whole 32-bit
// words only: the tile should fault sub-word stores rather than pass them here.
//
// Register behaviour (offsets from the command buffer, hal/arch_map.h):
//   TARG/RET_ADDR_*, PACKET_TAG, CTRL, AT_LEN_BE(_1), AT_DATA, unknown offsets: plain storage
//   CMD_CTRL      write kCmdCtrlSend: launch the request described by the buffer; reads
//                 kCmdCtrlReady once the buffer may be reprogrammed, non-zero while its request
//                 is still being sent (until its last flit has entered the router)
//   NODE_ID       read-only: this core's x/y in this NOC's coordinate space (NOC1 is mirrored)
//   ENDPOINT_ID   read-only: 0
//   CLEAR_OUTSTANDING_REQ_CNT  write a mask: zero REQS_OUTSTANDING_ID(id) for each set bit
//   NOC_CFG(n)    (buffer 0 window) plain storage
//   NOC_STATUS(n) (buffer 0 window) read-only counters
class Niu {
  public:
    static bool contains(uint32_t core_addr);
    bool mmio_write(uint32_t core_addr, uint32_t value);
    std::optional<uint32_t> mmio_read(uint32_t core_addr) const;

    // Test/debug views.
    uint32_t counter(uint32_t noc, uint32_t index) const;
    bool cmd_buf_busy(uint32_t noc, uint32_t buf) const;
    Coord coord() const;  // physical

  private:
    friend class Network;
    Niu(Network& net, uint32_t node) : net_(net), node_(node) {}
    Network& net_;
    uint32_t node_;
};

class Network {
  public:
    // `grid_x` x `grid_y` nodes (SoC descriptor grid), both 1..64.
    Network(uint32_t grid_x, uint32_t grid_y, const hal::ArchMap& arch, NocParams params = {});
    ~Network();
    Network(const Network&) = delete;
    Network& operator=(const Network&) = delete;

    // Attach what answers NOC requests at physical (x, y). Replaces a previous endpoint there.
    // The pointer must outlive the network. Returns false for a coordinate outside the grid or a
    // null endpoint.
    bool attach(uint32_t x, uint32_t y, Endpoint* endpoint, EndpointKind kind = EndpointKind::Tile);
    // A core at (x, y): attaches `endpoint` as a Tile (its L1 and registers, also the source of the
    // data it writes) and creates its NIU. Throws std::out_of_range outside the grid and
    // std::invalid_argument for a null endpoint.
    Niu& attach_core(uint32_t x, uint32_t y, Endpoint* endpoint);
    Niu* niu(uint32_t x, uint32_t y);
    // Called when a request reaches a coordinate with nothing attached, before it is refused as
    // NoEndpoint: the hook may attach something there (a chip whose cores exist before anyone
    // touches them). Unset: the request is refused.
    void on_missing_endpoint(std::function<void(Coord)> hook);

    // Advance one NOC clock.
    void step();
    // Advance the clock by `cycles` while idle(): an idle step only counts the cycle, so this is
    // the same as `cycles` step()s in O(1). Throws std::logic_error if anything is in flight.
    void advance_idle(uint64_t cycles);
    // Step until `done()` holds (checked before each step) or `max_cycles` steps have run.
    // Returns the number of steps run.
    uint64_t run_until(const std::function<bool()>& done, uint64_t max_cycles);
    // Nothing in flight: no flit in a router, nothing waiting to be injected or delivered.
    bool idle() const;
    // Cycles stepped since construction.
    uint64_t cycle() const;
    // What is in flight, one line per non-empty router buffer, pending injection and delivery
    // (for "why did it not drain" reports). Empty when idle().
    std::string describe_in_flight() const;

    // Bus errors, in the order they happened. The optional hook sees each one as it is recorded
    // (e.g. to stop a simulation at the first one).
    const std::vector<NocError>& errors() const;
    void clear_errors();
    void on_error(std::function<void(const NocError&)> hook);

    // Every request that lands from now on goes to `observer` (nullptr: none, the default; the
    // check is one pointer test per landing). The observer must outlive the network or be reset.
    void observe_landings(LandingObserver* observer);

    // The node at physical (x, y) stops (true) or starts again (false) taking what the NOC
    // delivers to it, on both NOCs: its routers grant nothing to their Local output, so requests
    // to it and everything behind them back up (a destination that never accepts). Returns false
    // outside the grid.
    bool hold_ejection(uint32_t x, uint32_t y, bool hold);
    bool ejection_held(uint32_t x, uint32_t y) const;

    // Statistics of router (x, y) (physical) on `noc`, output `port`.
    LinkStats link_stats(uint32_t noc, uint32_t x, uint32_t y, Port port) const;
    // Zero every link counter; stats_cycles() counts from here.
    void reset_stats();
    uint64_t stats_cycles() const;

    uint32_t grid_x() const;
    uint32_t grid_y() const;
    const hal::ArchMap& arch() const;
    const NocParams& params() const;
    // Coordinate conversion: NOC1's coordinate space is NOC0's mirrored in both axes.
    Coord to_noc(uint32_t noc, Coord physical) const;
    Coord to_physical(uint32_t noc, Coord noc_coord) const;
    // Links a unicast packet crosses from src to dst (physical) on `noc`.
    uint32_t hops(uint32_t noc, Coord src, Coord dst) const;

    // The model's parts, one class per pipeline stage (network_impl.h). Declared public so that
    // the stages' tests can assemble them as the network does.
    struct Impl;

  private:
    friend class Niu;
    std::unique_ptr<Impl> impl_;
};

}  // namespace sim::noc
