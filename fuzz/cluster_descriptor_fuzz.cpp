// Fuzz target: the cluster descriptor loader (parse and lint), and what the host asks of a loaded
// descriptor.
#include <stdexcept>

#include "fabric/cluster_descriptor.h"
#include "fabric/input_file.h"
#include "fuzz_target.h"
#include "yaml_dictionary.h"

namespace {

void use(const fabric::ClusterDescriptor& d) {
    for (fabric::ChipId chip = 0; chip < d.chip_count(); ++chip) {
        for (const uint32_t chan : d.connected_channels(chip)) {
            if (!d.peer({chip, chan})) throw std::logic_error("connected channel without a peer");
        }
        (void)d.harvesting(chip);
        (void)d.board(chip);
    }
    (void)d.tensix_harvest_masks();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fabric::kClusterDescriptorInput.max_bytes) return 0;  // load_file refuses these
    const auto text = fabric::fuzz::as_text(data, size);
    fabric::fuzz::accept_or_refuse(
        [&] { use(fabric::ClusterDescriptor::parse(text, "fuzz.yaml")); });
    const bool parsed = fabric::fuzz::g_last_accepted;
    fabric::fuzz::accept_or_refuse([&] {
        const auto report = fabric::ClusterDescriptor::lint(text, "fuzz.yaml");
        use(report.usable);
        // What parse() accepts has nothing to lint but chips cabled to themselves, which it allows.
        for (const auto& f : report.findings) {
            if (parsed && f.kind != fabric::ClusterLintKind::SelfConnection) {
                throw std::logic_error("lint finds a problem in a file parse() accepts");
            }
        }
    });
    fabric::fuzz::g_last_accepted = parsed;
    return 0;
}

namespace fabric::fuzz {

std::vector<std::string> builtin_seeds() {
    return {};
}

std::vector<std::string> dictionary() {
    return yaml_tokens({"arch:",
                        "chips:",
                        "ethernet_connections:",
                        "chips_with_mmio:",
                        "harvesting:",
                        "boards:",
                        "chip_unique_ids:",
                        "asic_locations:",
                        "chip_to_boardtype:",
                        "ethernet_connections_to_remote_devices:",
                        "{chip: 0, chan: 8}",
                        "{chip: 1, chan: 0}",
                        "{routing_enabled: true}",
                        "noc_translation: true",
                        "harvest_mask: ",
                        "eth_harvesting_mask: ",
                        "wormhole_b0",
                        "blackhole",
                        "Wormhole",
                        "- board_id: 1",
                        "- board_type: n300",
                        "- chips: [0, 1]"});
}

}  // namespace fabric::fuzz
