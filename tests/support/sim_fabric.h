// Sim-test helpers for firmware on a fabric in the model: the firmware ELFs the firmware sub-build
// made (FABRIC_FIRMWARE_DIR, defined by each sim test target), and a cluster in the model with a
// runner over a fabric plan (1D, or a MeshPlan's), its routers brought up.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "descriptors.h"
#include "fabric/elf.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/sim_device.h"
#include "fabric/soc_descriptor.h"

namespace fabric::test {

// build/firmware/<arch>/<name>.elf, or nullopt when the firmware sub-build has not made it.
inline std::optional<ElfImage> firmware_elf(const std::string& name,
                                            hal::Arch arch = hal::Arch::WormholeB0) {
    const std::string path =
        std::string(FABRIC_FIRMWARE_DIR) + "/" + std::string(arch_name(arch)) + "/" + name + ".elf";
    if (!std::filesystem::exists(path)) return std::nullopt;
    return ElfImage::load_file(path);
}

// The model of `cluster_file` with `plan`'s routers brought up within `bring_up_cycles`.
struct SimFabric {
    SimDevice dev;
    FabricRunner runner;
    SimFabric(const std::string& cluster_file, const FabricPlan& plan, const ElfImage& router,
              uint64_t bring_up_cycles, const SocDescriptor& soc = wh_soc())
        : dev(soc, soc.arch(), SimDeviceOptions{cluster(cluster_file), std::nullopt}),
          runner(dev, plan, router) {
        runner.bring_up(bring_up_cycles);
    }
};

}  // namespace fabric::test
