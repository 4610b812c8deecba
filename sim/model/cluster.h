// Several chips joined by Ethernet links, stepped in lockstep one global core clock at a time.
//
//   sim::Cluster cluster({spec0, spec1}, options);           // chips from the host's descriptors
//   cluster.connect(0, 8, 1, 0);                              // chip 0 chan 8 <-> chip 1 chan 0
//   sim::Chip& c0 = cluster.chip(0);                          // load, release as on one chip
//   ...
//   sim::RunReport r = cluster.run_until_done(1'000'000);    // every started core exits or traps
//   for (const auto& c : r.stuck()) std::cerr << c.describe() << "\n";
//   cluster.link(0, 8).set_up(false);                         // fault hooks of the sim::eth::Link
//
// A connection becomes a sim::eth::Link when one of its two eth cores is instantiated (both are
// then instantiated): side A is the first-named port's TX queues with the peer's L1 and registers
// as the frames' destination, so TT-link data lands in the peer's L1 and remote register writes in
// its registers (e.g. stream UPDATE registers, as credits). Cores that no run touches cost nothing.
//
// Wormhole active Ethernet boot (ClusterOptions::wh_base_firmware): every WH eth core boots that
// image from reset PC 0 when it is instantiated, after the model has written the link-training
// results into its L1 (what link training does on silicon; see firmware/include/protocol/
// erisc_base_fw.h): train status 0x1104 = 1 and link error 0x1440 = 0 on a connected channel, 2
// and 13 (port not populated) on an unconnected one, plus the local and remote ids and Ethernet
// coordinates (chip c at x = c % 64, y = c / 64; protocol/erisc_remote_access.h). The host then
// loads an application at 0x9040 and writes the launch flag 0x9004, as on silicon. Blackhole eth
// cores (and WH without the option) come up held in reset and are launched through the reset PC.
//
// Link status word (hal::ArchMap::link_status: WH 0x1ED4, 6 up / 1 down; BH port_status 0x7CC04,
// 1 up / 2 down): the model keeps it current in every instantiated eth core's L1, as the base
// firmware does on silicon. Up for a connected port whose link is up, written when the core is
// instantiated; both ends change when eth::Link::set_up changes the link; the down value on a port
// that is not connected. On a WH core running the base firmware the training status 0x1104 follows
// too (Ok / Fail), because that firmware republishes the word from it at every heartbeat.
//
// Deterministic: chips, cores and links are visited in index order; the same inputs give the same
// cycle counts.
//
// Parallel simulation (ClusterOptions::threads = N > 1): the chips are split into N partitions of
// consecutive chips, each stepped by its own thread (the caller's thread steps the first). A link
// whose two ends are in different partitions is split (eth::Link "Sides"): each partition steps
// the side of its chip. What one side does at cycle t reaches the other at t + latency_cycles at
// the earliest (the lookahead), so every partition advances a window of latency_cycles cycles on
// its own; at the window's end the threads meet, the frames and ACK/NAKs that crossed are handed
// over, and the next window starts. Everything is the same as with one thread: cycle counts, L1,
// registers, link statistics. run_while_busy stays exact to the cycle: a partition that is not
// busy at a cycle waits there until the others say whether they are (rounds within a window), so
// no partition runs past the cycle where the whole cluster stops. The host's calls (fault hooks,
// reads, writes) happen between runs, when every partition is at cycle(). The one visible
// difference: a DestRefused error found by the receiving partition joins the sender's
// TxQueues::errors() at the end of the window, in cycle order (ties with errors of the same cycle
// may come in another order). threads = 1 is one partition: the same code, no windows.
#pragma once

#include <compare>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chip.h"
#include "eth/link.h"

namespace sim {

// An image to place in L1 before a core is released (the host turns an ELF into this).
struct BootImage {
    struct Segment {
        uint32_t addr = 0;
        std::vector<uint8_t> bytes;
    };
    uint32_t entry = 0;
    std::vector<Segment> segments;
};

// One Ethernet port of the cluster.
struct EthPort {
    uint32_t chip = 0;
    uint32_t channel = 0;
    auto operator<=>(const EthPort&) const = default;
};

struct ClusterOptions {
    // Wormhole B0: the base firmware every eth core boots (see above). Its segments must lie in the
    // base firmware region [0, 0x9000) of L1.
    std::optional<BootImage> wh_base_firmware;
    // Link parameters (default: eth::LinkConfig::for_arch of the chips' arch).
    std::optional<eth::LinkConfig> link;
    // Step an idle link only when its next event is due (default). false steps every link every
    // cycle: slower, and the same cycle counts (tests compare the two).
    bool lazy_links = true;
    // Threads stepping the chips (see "Parallel simulation" above); at most one per chip is used.
    // More than one needs links of at least one cycle of latency.
    uint32_t threads = 1;
};

// One instantiated core at the end of a run.
struct CoreReport {
    uint32_t chip = 0;
    noc::Coord core;
    CoreKind kind = CoreKind::Worker;
    std::optional<uint32_t> eth_channel;
    RunState state = RunState::Reset;
    uint32_t pc = 0;             // where the core is (the faulting instruction when trapped)
    uint32_t exit_code = 0;      // valid when Exited
    TrapInfo trap;               // valid when Trapped
    bool base_firmware = false;  // runs the WH base firmware (idle when its launch flag is 0)
    bool busy = false;           // running and not an idle base firmware: what a run waits for
    // "chip 0 core 9-0 (eth 0): running at pc 0x00009044"
    std::string describe() const;
};

struct RunReport {
    uint64_t cycles = 0;            // cycles this call ran
    bool done = false;              // no core was busy any more (else the budget ran out)
    std::vector<CoreReport> cores;  // every instantiated core that has left reset, chip by chip
    std::vector<CoreReport> stuck() const;  // the busy ones
};

class Cluster {
  public:
    // Throws std::invalid_argument for no chips, chips of different arches, or a base firmware
    // image outside [0, 0x9000).
    explicit Cluster(std::vector<ChipSpec> chips, ClusterOptions options = {});
    ~Cluster();
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    uint32_t chip_count() const { return static_cast<uint32_t>(chips_.size()); }
    // Throws std::out_of_range for an id >= chip_count(). Do not step a chip of a cluster on its
    // own: Cluster::step keeps chips and links on one clock.
    Chip& chip(uint32_t id);
    const ClusterOptions& options() const { return options_; }

    // Join chip_a's eth channel chan_a with chip_b's chan_b. Throws std::invalid_argument for an
    // unknown chip or channel, a port joined to itself, or a port that is already connected.
    void connect(uint32_t chip_a, uint32_t chan_a, uint32_t chip_b, uint32_t chan_b);
    std::size_t connection_count() const { return links_.size(); }
    std::optional<EthPort> peer(uint32_t chip, uint32_t channel) const;
    // The link of a connected port (instantiating both eth cores and the link), brought up to
    // the current cycle: fault hooks (set_up, set_extra_delay, drop_frame, set_drop_rate) and
    // statistics. Throws std::out_of_range if the port is not connected.
    eth::Link& link(uint32_t chip, uint32_t channel);
    std::size_t links_instantiated() const { return built_.size(); }

    // Advance every chip and link by `cycles` global clocks: each cycle steps every chip (tiles,
    // then its network) in chip order, then every link.
    void step(uint64_t cycles = 1);
    uint64_t cycle() const { return cycle_; }

    // Some core is busy: running and not an idle base firmware (Chip::busy).
    bool busy() const;
    // Step until no core is busy or `max_cycles` have run; exact to the cycle. Returns the cycles
    // run (0 when nothing was busy).
    uint64_t run_while_busy(uint64_t max_cycles);
    // The same, with a report of every core that has left reset (stuck() = the busy ones).
    RunReport run_until_done(uint64_t max_cycles);
    // Every instantiated core that has left reset, chip by chip, in spec order.
    std::vector<CoreReport> report();
    CoreReport report(uint32_t chip, uint32_t x, uint32_t y);  // one instantiated core

    // Parallel simulation: how many partitions, how often their threads met so far (one meeting
    // per round; a window takes one round, more while run_while_busy waits for a partition that
    // is not busy), the wall time of the rounds and of the waits at their ends (summed over the
    // threads), and the CPU time of the partitions' work: all of it, and the slowest partition's
    // of each round summed (the critical path). All 0 on one thread. On a machine with a core per
    // thread to spare, cpu_seconds / critical_cpu_seconds is the speed-up the split allows.
    struct ThreadMeetings {
        uint32_t partitions = 1;
        uint64_t windows = 0;
        uint64_t rounds = 0;
        double round_seconds = 0;
        double waited_seconds = 0;
        double cpu_seconds = 0;
        double critical_cpu_seconds = 0;
    };
    ThreadMeetings thread_meetings() const;

    // Called after a tile is instantiated and set up (links built, base firmware booted), e.g. to
    // attach a console sink. Tiles the cluster instantiates itself (link peers) are included.
    void on_tile_created(std::function<void(uint32_t chip, uint32_t x, uint32_t y)> hook);
    // Packet tracing (packet_tap.h): every chip's NOC landings and core stream stores, and every
    // link's landed commands (as the receiving port's), from now on go to `tap` (nullptr: off).
    // Links built later get it too. Call between runs; the tap must outlive its use.
    void set_packet_tap(PacketTap* tap);

    // Whether the eth core on (chip, channel) runs the WH base firmware.
    bool runs_base_firmware(uint32_t chip, uint32_t channel) const;

  private:
    class TapLink;  // a link's landings, passed on to the packet tap (cluster.cpp)
    struct LinkSlot {
        EthPort a;
        EthPort b;
        std::unique_ptr<eth::Link> link;
        std::shared_ptr<TapLink> tap;  // while a packet tap is set
        // The first cycle whose step has something to do: of both sides ([0]) when they are in
        // one partition, else of side A ([0]) and side B ([1]).
        uint64_t next[2] = {0, 0};
        uint32_t partition[2] = {0, 0};  // of side A's chip, of side B's chip
        bool split() const { return partition[0] != partition[1]; }
        // The sides partition p steps (an eth::Link side mask; 0 for none).
        uint8_t sides_in(uint32_t p) const;
        uint64_t& next_of(uint8_t sides) { return next[sides == eth::Link::kSideB ? 1 : 0]; }
    };
    // Chips stepped by one thread, and the links (or link sides) it steps with them.
    struct alignas(64) Partition {  // its own cache lines: each thread writes its cycle a lot
        uint32_t index = 0;
        std::vector<uint32_t> chips;
        std::vector<uint32_t> links;  // built links with a side here, in build order
        uint64_t cycle = 0;
        // run_while_busy, per cycle of the current window: the partition was busy at its start.
        std::vector<uint8_t> busy_at;
        uint64_t known_until = 0;  // busy_at is final below this cycle (the last round's start)
        std::exception_ptr error;
    };
    class Workers;  // the threads of partitions 1..N-1 (cluster.cpp)

    void partition_chips();
    void tile_created(uint32_t chip, uint32_t x, uint32_t y);
    void build_link(uint32_t index);
    void tap_link(LinkSlot& l);
    void boot_base_firmware(uint32_t chip, uint32_t x, uint32_t y, uint32_t channel);
    void publish_training(uint32_t chip, uint32_t channel);
    // A connected port whose link is up (a link not built yet is up).
    bool port_up(uint32_t chip, uint32_t channel) const;
    // The link status word of an instantiated eth core (see the top of this file).
    void publish_link_status(uint32_t chip, uint32_t channel);
    void sync_link(LinkSlot& l, uint8_t sides, uint64_t cycle);
    void sync_links();
    void wake_links();
    // Step every partition to cycle() + cycles, or (only_while_busy) to the first cycle at which no
    // core is busy. Returns the cycles run.
    uint64_t advance(uint64_t cycles, bool only_while_busy);
    // One window of the parallel run: every partition to `end` or to the cluster's stop.
    bool run_window(uint64_t end, bool only_while_busy);
    void run_partitions(uint64_t end, bool only_while_busy);
    void run_partition(Partition& p, uint64_t end, bool only_while_busy);
    // run_while_busy: how far partition p may run before it looks at its busy state again (one
    // cycle while busy; while not, as far as another partition is known to be busy). p.cycle
    // means stop there: the cluster's stop on one thread, else wait for the others' word.
    uint64_t busy_limit(Partition& p, uint64_t end, uint64_t& may_run_until);
    // Nothing running and nothing in flight on p's NOCs: jump towards its next link event, at
    // most to `limit`. Whether it moved.
    bool skip_quiet(Partition& p, uint64_t limit);
    // The first cycle >= c at which no partition but p is known to be busy.
    uint64_t others_busy_until(const Partition& p, uint64_t c) const;
    bool partition_busy(const Partition& p) const;
    bool partition_quiet(const Partition& p) const;
    void step_links(Partition& p);
    void exchange_links();
    bool base_firmware_on(uint32_t chip) const;

    ClusterOptions options_;
    std::vector<std::unique_ptr<Chip>> chips_;
    std::vector<LinkSlot> links_;            // one per connection, in connect() order
    std::map<EthPort, uint32_t> link_of_;    // port -> index into links_
    std::vector<uint32_t> built_;            // indices of instantiated links, in build order
    std::vector<std::vector<bool>> booted_;  // [chip][channel]: runs the base firmware
    std::function<void(uint32_t, uint32_t, uint32_t)> user_created_;
    std::vector<Partition> parts_;
    std::vector<uint32_t> partition_of_;  // chip -> partition
    uint64_t window_ = UINT64_MAX;        // cycles a partition runs alone (the lookahead)
    uint64_t window_start_ = 0;
    uint64_t windows_ = 0;  // thread_meetings()
    uint64_t rounds_ = 0;
    std::unique_ptr<Workers> workers_;
    uint64_t cycle_ = 0;
    PacketTap* tap_ = nullptr;
};

}  // namespace sim
