// Running the test and benchmark kernels (firmware/tests, firmware/benchmarks) in the model: a
// fabric::SimDevice of chips built from the shipped SoC descriptor (the Device the host's control
// plane drives, so FabricRunner runs on the same chips), the kernels' ELFs loaded the way the host
// loads them (segments into L1, reset PC, release ERISC0), and the test mailbox
// (protocol/test_mailbox.h) for arguments, results and termination. Used by the sim tests
// (tests/sim) and the Ethernet microbenchmarks (benchmarks/eth_bench).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "chip.h"
#include "cluster.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/launch.h"
#include "fabric/sim_device.h"
#include "fabric/soc_descriptor.h"
#include "hal/arch_map.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"

namespace simfw {

// A core of a cluster: chip and NOC0 coordinates.
struct Core {
    uint32_t chip = 0;
    uint32_t x = 0;
    uint32_t y = 0;
    bool operator==(const Core&) const = default;
    std::string str() const;  // "chip 0 core 9-0"
    // The same core as the host's control plane names it.
    fabric::CoreLocation location() const { return {chip, {x, y}}; }
    static Core at(const fabric::CoreLocation& l) { return {l.chip, l.core.x, l.core.y}; }
};

// The shipped SoC descriptor of `arch` (soc_descriptors/), loaded once.
const fabric::SocDescriptor& soc_descriptor(hal::Arch arch);

// Path of a kernel ELF built by this tree (<build>/firmware/<arch>/<name>.elf).
std::string firmware_path(hal::Arch arch, const std::string& name);
// That ELF, loaded once and checked to fit an eth core's application range.
const fabric::ElfImage& firmware(hal::Arch arch, const std::string& name);

// A kernel's argument struct as the mailbox's argument words.
template <typename Args>
std::vector<uint32_t> mailbox_args(const Args& args) {
    static_assert(sizeof(Args) <= sizeof(uint32_t) * protocol::kTestMaxArgs);
    static_assert(sizeof(Args) % 4 == 0);
    std::vector<uint32_t> words(sizeof(Args) / 4);
    std::memcpy(words.data(), &args, sizeof(Args));
    return words;
}

class Rig {
  public:
    // `chips` chips of the shipped descriptor, no connections yet. Bare-metal launch (no WH base
    // firmware): a kernel is loaded into a core held in reset and released at its entry.
    explicit Rig(uint32_t chips, hal::Arch arch = hal::Arch::WormholeB0);
    // The chips and every Ethernet link of a cluster descriptor, bare metal as above.
    explicit Rig(const fabric::ClusterDescriptor& cluster);

    // The chips as the host's control plane sees them (FabricRunner, launch).
    fabric::SimDevice& device() { return device_; }
    sim::Cluster& cluster() { return cluster_; }
    sim::Chip& chip(uint32_t id) { return cluster_.chip(id); }
    const hal::ArchMap& arch() const { return arch_; }
    uint32_t mailbox_addr() const { return protocol::test_mailbox_addr(arch_.arch); }
    uint32_t l1_base() const { return protocol::test_l1_base(arch_.arch); }

    // The eth core of a channel.
    Core eth(uint32_t chip, uint32_t channel);
    // Join two channels with a link.
    void connect(uint32_t chip_a, uint32_t chan_a, uint32_t chip_b, uint32_t chan_b);
    // The link of a connected port (fault hooks, statistics).
    sim::eth::Link& link(Core c);

    // Load kernel `name` into `c` (held in reset first), set up its mailbox (magic, role, args,
    // everything else zero). Not released.
    template <typename Args>
    void load(Core c, const std::string& name, protocol::KernelRole role, const Args& args) {
        load_words(c, name, role, mailbox_args(args));
    }
    // Load an ELF into `c` (held in reset first) with no mailbox set up: firmware that takes its
    // configuration elsewhere (the fabric mux reads MuxConfig from its own L1 block). Not
    // released.
    void load_image(Core c, const std::string& name);
    void release(Core c);
    template <typename Args>
    void launch(Core c, const std::string& name, protocol::KernelRole role, const Args& args) {
        load(c, name, role, args);
        release(c);
    }

    // Step until no core is busy or the budget runs out; the report of the last run.
    sim::RunReport run(uint64_t max_cycles);
    // Step until `done()` holds (checked every `granularity` cycles) or the budget runs out.
    // Returns whether done() held.
    template <typename F>
    bool run_until(F&& done, uint64_t max_cycles, uint64_t granularity = 64) {
        const uint64_t end = cluster_.cycle() + max_cycles;
        while (!done()) {
            if (cluster_.cycle() >= end) {
                return false;
            }
            cluster_.step(granularity);
        }
        return true;
    }
    // Step until every instantiated link is idle (everything sent has landed and been acked).
    bool drain_links(uint64_t max_cycles = 1'000'000);

    // ---- the mailbox of a core ----
    protocol::TestMailbox mailbox(Core c);
    template <typename R>
    R results(Core c) {
        const protocol::TestMailbox m = mailbox(c);
        R r;
        std::memcpy(&r, m.results, sizeof(R));
        return r;
    }
    void terminate(Core c, uint32_t value = 1);

    // ---- state ----
    sim::RunState state(Core c);
    uint32_t exit_code(Core c);
    // Exited with 0 and mailbox status Done.
    bool passed(Core c);
    // One line per fact for a failure message: run state, exit code or trap, mailbox status,
    // stuck_at, TestFailure, console output.
    std::string describe(Core c);

    // L1 of a core (host path).
    std::vector<uint8_t> read(Core c, uint32_t addr, uint32_t bytes);
    std::vector<uint32_t> read_words(Core c, uint32_t addr, uint32_t words);
    uint32_t read32(Core c, uint32_t addr);
    void write(Core c, uint32_t addr, const std::vector<uint8_t>& bytes);
    void write32(Core c, uint32_t addr, uint32_t value);
    void zero(Core c, uint32_t addr, uint32_t bytes);
    // Words at addr that differ from protocol::pattern_word(seed, i), i < bytes / 4.
    uint32_t pattern_mismatches(Core c, uint32_t addr, uint32_t bytes, uint32_t seed);
    void fill_pattern(Core c, uint32_t addr, uint32_t bytes, uint32_t seed);

    // Kernel `name` on `c` as the host's launch (and FabricRunner::run_workers) takes it: the
    // image, and the application range of `c`'s L1 (eth or Tensix) as its placement.
    fabric::LaunchTarget target(Core c, const std::string& name);
    // Write `c`'s mailbox as load() does (magic, role, args, everything else zero) and nothing
    // else: for a kernel someone else loads (FabricRunner::run_workers).
    void write_mailbox(Core c, protocol::KernelRole role, const std::vector<uint32_t>& args);

  private:
    void load_words(Core c, const std::string& name, protocol::KernelRole role,
                    const std::vector<uint32_t>& args);

    const hal::ArchMap& arch_;
    fabric::SimDevice device_;
    sim::Cluster& cluster_;  // device_'s model
};

// Catch2: require that a kernel passed, with the whole story when it did not.
#define REQUIRE_KERNEL_PASSED(rig, core) \
    do {                                 \
        INFO((rig).describe(core));      \
        REQUIRE((rig).passed(core));     \
    } while (false)

}  // namespace simfw
