// A cluster descriptor with its chip ids and each chip's channel numbers permuted: the same wiring
// as a user's cluster would present it (enumeration order, crossed cabling). For the topology
// mapping's property tests and the model runs on the result.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fmt/format.h"

namespace fabric::test {

struct ScrambledCluster {
    std::string yaml;                         // tt-umd cluster descriptor text
    std::vector<ChipId> chip;                 // chip[old id] = new id
    std::vector<std::vector<uint32_t>> chan;  // chan[old id][old channel] = new channel
};

inline std::string arch_spelling(hal::Arch a) {
    return a == hal::Arch::Blackhole ? "blackhole" : "wormhole_b0";
}

// `c` renamed: chip ids by a random permutation, each chip's channels by its own random
// permutation of the arch's channels (seeded, so a failing seed can be replayed).
inline ScrambledCluster scramble(const ClusterDescriptor& c, uint32_t seed) {
    std::mt19937 rng(seed);
    ScrambledCluster s;
    s.chip.resize(c.chip_count());
    std::iota(s.chip.begin(), s.chip.end(), 0);
    std::shuffle(s.chip.begin(), s.chip.end(), rng);
    const uint32_t channels = arch_eth_channels(c.arch());
    for (ChipId i = 0; i < c.chip_count(); ++i) {
        std::vector<uint32_t> perm(channels);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        s.chan.push_back(perm);
    }
    std::string& y = s.yaml;
    y += fmt::format("# {} scrambled with seed {}\narch:\n", c.source(), seed);
    for (ChipId i = 0; i < c.chip_count(); ++i)
        y += fmt::format("  {}: {}\n", i, arch_spelling(c.arch()));
    y += "chips: {}\nethernet_connections:\n";
    for (const EthConnection& e : c.connections()) {
        y += fmt::format("  - [{{chip: {}, chan: {}}}, {{chip: {}, chan: {}}}]\n", s.chip[e.a.chip],
                         s.chan[e.a.chip][e.a.chan], s.chip[e.b.chip], s.chan[e.b.chip][e.b.chan]);
    }
    y += "chips_with_mmio:\n";
    for (const auto& [chip, pci] : c.mmio_chips())
        y += fmt::format("  - {}: {}\n", s.chip[chip], pci);
    return s;
}

// How many seeds a property test runs: `ci` by default, FABRIC_PROPERTY_SEEDS for a longer
// campaign (host/README.md records the last one).
inline uint32_t property_seeds(uint32_t ci) {
    const char* env = std::getenv("FABRIC_PROPERTY_SEEDS");
    return env && std::atoi(env) > 0 ? static_cast<uint32_t>(std::atoi(env)) : ci;
}

}  // namespace fabric::test
