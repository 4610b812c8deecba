// What the worker-kernel benchmarks (socket_bench, ccl_bench) load: the Wormhole SoC and the
// T3000 cluster descriptors shipped in soc_descriptors/, and a kernel of this build's firmware.
#pragma once

#include <string>

#include "fabric/cluster_descriptor.h"
#include "fabric/elf.h"
#include "fabric/mesh_traffic.h"
#include "fabric/soc_descriptor.h"

namespace bench {

inline std::string shipped(const char* dir, const std::string& file) {
    return std::string(dir) + "/" + file;
}

// The T3000 and one Wormhole kernel, `name`.elf.
struct T3kSetup {
    explicit T3kSetup(const std::string& kernel_name)
        : kernel(fabric::ElfImage::load_file(
              shipped(FABRIC_FIRMWARE_DIR, "wormhole_b0/" + kernel_name + ".elf"))) {}

    fabric::SocDescriptor soc = fabric::SocDescriptor::load_file(
        shipped(FABRIC_SOC_DESCRIPTOR_DIR, "wormhole_b0_80_arch.yaml"));
    fabric::ClusterDescriptor cluster = fabric::ClusterDescriptor::load_file(
        shipped(FABRIC_SOC_DESCRIPTOR_DIR, "t3k_cluster.yaml"));
    fabric::ElfImage kernel;
    fabric::ChipSocs socs = [this](fabric::ChipId) -> const fabric::SocDescriptor& { return soc; };
};

}  // namespace bench
