#include "pcie_port.h"

#include "cli_common.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/error.h"
#include "fabric/kmd_socket.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#include "fabric/sim_kmd_port.h"
#endif

namespace fabricctl {

using fabric::ErrorCategory;

std::shared_ptr<fabric::KmdPort> open_kmd_port(const std::string& dir, const SimSetup& sim) {
    if (sim.arch.empty()) return std::make_shared<fabric::LinuxKmdPort>(dir);
    if (const std::string socket = sim.socket.empty() ? fabric::default_sim_socket() : sim.socket;
        !socket.empty()) {
        return std::make_shared<fabric::RemoteKmdPort>(socket);
    }
    return open_model_port(sim);
}

std::shared_ptr<fabric::KmdPort> open_model_port(const SimSetup& sim) {
#ifndef FABRIC_HAVE_SIM
    fabric::fail(ErrorCategory::Unsupported,
                 "this fabricctl was built without the simulator; --sim / --target sim are "
                 "unavailable");
#else
    const auto arch = fabric::parse_arch(sim.arch);
    if (!arch) {
        fabric::fail(ErrorCategory::BadInput, "unknown arch '{}' (known: wormhole_b0, blackhole)",
                     sim.arch);
    }
    fabric::SimDeviceOptions o;
    o.threads = sim_threads(sim.threads);
    if (!sim.cluster.empty()) {
        o.cluster = fabric::ClusterDescriptor::load_file(sim.cluster);
        if (o.cluster->arch() != *arch) {
            fabric::fail(ErrorCategory::BadInput, "{}: cluster is {} but the arch is {}",
                         sim.cluster, fabric::arch_name(o.cluster->arch()),
                         fabric::arch_name(*arch));
        }
    }
    if (auto fw = choose_base_firmware("", !sim.no_base_fw && !sim.cluster.empty(), *arch))
        o.wh_base_firmware = std::move(fw->image);
    auto model = std::make_shared<fabric::SimDevice>(
        fabric::SocDescriptor::load_file(find_default_descriptor(*arch)), *arch, std::move(o));
    return std::make_shared<fabric::SimKmdPort>(model, sim.sim_control);
#endif
}

}  // namespace fabricctl
