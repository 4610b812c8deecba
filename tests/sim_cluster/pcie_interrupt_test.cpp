// An interrupted command on hardware stops the routers it started (fabric/interrupt.h): the 1D
// fabric on two PCIe-attached p150s, driven through PcieDevice over the simulated tt-kmd driver
// (the path `fabricctl mesh ... --target pcie` takes on silicon), interrupted while it comes up.

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <memory>

#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/interrupt.h"
#include "fabric/pcie_device.h"
#include "fabric/sim_device.h"
#include "fabric/sim_kmd_port.h"
#include "protocol/fabric.h"

namespace pf = protocol::fabric;

TEST_CASE("PcieDevice (sim): an interrupted bring-up terminates the routers it started",
          "[pcie][sim][interrupt]") {
    const std::string router_path =
        std::string(FABRIC_FIRMWARE_DIR) + "/blackhole/fabric_router.elf";
    if (!std::filesystem::exists(router_path)) {
        WARN("skipped: fabric_router.elf is not built yet (build the firmware)");
        return;
    }
    const auto soc = fabric::SocDescriptor::load_file(std::string(FABRIC_SOC_DESCRIPTOR_DIR) +
                                                      "/blackhole_140_arch.yaml");
    const auto cluster = fabric::ClusterDescriptor::load_file(
        std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/clusters/p150_x4_cluster.yaml");
    fabric::SimDeviceOptions so;
    so.cluster = cluster;
    auto sim = std::make_shared<fabric::SimDevice>(soc, hal::Arch::Blackhole, std::move(so));
    fabric::PcieDevice pcie(std::make_shared<fabric::SimKmdPort>(sim), soc);
    fabric::InterruptibleDevice dev(pcie);

    fabric::FabricOptions fo;
    fo.chips = {0, 2};  // neighbours, both PCIe-attached
    const fabric::FabricPlan plan = fabric::plan_fabric(cluster, soc, fo);
    fabric::FabricRunner runner(dev, plan, fabric::ElfImage::load_file(router_path));

    // The signal arrived just as the command began: the routers are loaded and started, the
    // first wait is interrupted.
    fabric::request_interrupt(SIGINT);
    std::optional<fabric::Interrupted> caught;
    try {
        runner.bring_up(1'000'000);
    } catch (const fabric::Interrupted& e) {
        caught = e;
    }
    REQUIRE(caught);
    REQUIRE(runner.started());
    for (const auto& r : plan.routers) {
        CHECK(pcie.core_status(r.core).state == fabric::CoreRunState::Running);
    }

    const std::string done = fabric::terminate_after_interrupt(runner, *caught, 1'000'000);
    CHECK(done == "SIGINT: terminated the " + std::to_string(plan.routers.size()) +
                      " routers this command started on " + pcie.description());
    CHECK(fabric::interrupt_requested() == 0);
    for (const auto& r : plan.routers) {
        INFO("router chip " << r.chip << " eth " << r.eth_channel);
        CHECK(pcie.core_status(r.core).state == fabric::CoreRunState::Exited);
    }
}

TEST_CASE("interrupt: a runner that started nothing has nothing to terminate", "[interrupt]") {
    const auto soc = fabric::SocDescriptor::load_file(std::string(FABRIC_SOC_DESCRIPTOR_DIR) +
                                                      "/blackhole_140_arch.yaml");
    const auto cluster = fabric::ClusterDescriptor::load_file(
        std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/clusters/p150_x4_cluster.yaml");
    const std::string router_path =
        std::string(FABRIC_FIRMWARE_DIR) + "/blackhole/fabric_router.elf";
    if (!std::filesystem::exists(router_path)) {
        WARN("skipped: fabric_router.elf is not built yet (build the firmware)");
        return;
    }
    fabric::SimDeviceOptions so;
    so.cluster = cluster;
    fabric::SimDevice sim(soc, hal::Arch::Blackhole, std::move(so));
    fabric::FabricOptions fo;
    fo.chips = {0, 2};
    fabric::FabricRunner runner(sim, fabric::plan_fabric(cluster, soc, fo),
                                fabric::ElfImage::load_file(router_path));
    fabric::request_interrupt(SIGTERM);
    CHECK(fabric::terminate_after_interrupt(runner, fabric::Interrupted(SIGTERM), 1'000) == "");
    CHECK(fabric::interrupt_requested() == SIGTERM);  // left for the caller
    fabric::clear_interrupt();
}
