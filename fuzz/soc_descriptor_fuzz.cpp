// Fuzz target: the SoC descriptor loader, and harvesting of what it accepts.
#include "fabric/input_file.h"
#include "fabric/soc_descriptor.h"
#include "fuzz_target.h"
#include "yaml_dictionary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fabric::kSocDescriptorInput.max_bytes) return 0;  // load_file refuses these
    fabric::fuzz::accept_or_refuse([&] {
        const auto soc =
            fabric::SocDescriptor::parse(fabric::fuzz::as_text(data, size), "fuzz.yaml");
        // Harvesting takes a mask from the cluster descriptor: any 32-bit value.
        const uint32_t mask = size >= 4 ? uint32_t(data[0]) | uint32_t(data[size - 1]) << 8 : 0;
        try {
            (void)soc.harvested(mask);
        } catch (const fabric::Error&) {
        }
    });
    return 0;
}

namespace fabric::fuzz {

std::vector<std::string> builtin_seeds() {
    return {};
}

std::vector<std::string> dictionary() {
    return yaml_tokens({"grid:",
                        "x_size: ",
                        "y_size: ",
                        "arc: ",
                        "pcie: ",
                        "dram: ",
                        "eth: ",
                        "functional_workers: ",
                        "harvested_workers: ",
                        "router_only: ",
                        "security: ",
                        "l2cpu: ",
                        "worker_l1_size: ",
                        "eth_l1_size: ",
                        "dram_bank_size: ",
                        "arch_name: ",
                        "wormhole_b0",
                        "BLACKHOLE",
                        "features:",
                        "noc0_x_to_noc1_x: ",
                        "dram_address_offsets: "});
}

}  // namespace fabric::fuzz
