// fabric_hello: a user's program over a fabric that is already up (`fabricctl mesh up` left its
// routers running). It opens the device as it would open silicon (tt-kmd through PcieDevice;
// with FABRIC_SIM_SOCKET or --socket, the simulated driver of a `fabricctl sim serve`), takes
// over the running fabric, launches its own worker kernel (kernel.cpp) on a Tensix core of a
// chip (mesh device 0 unless --from says), which sends a message one chip on (east unless --dir
// says) over the fabric, then checks every byte that landed and prints what the kernel said (its
// exit mailbox). The fabric stays up (`mesh down` ends it). Chips that are not PCIe-attached
// (a T3K's chips 4-7) are reached as on silicon, through an eth core of a chip that is.
//
//   fabric_hello --cluster FILE [--mesh-graph FILE] [--socket PATH] [--bytes N]
//                [--from DEVICE] [--dir N|E|S|W] [--kernel ELF] [--router-elf ELF]
//
// Exit: 0 every byte arrived; 1 it did not, or the kernel failed; 2 bad usage or an error.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/error.h"
#include "fabric/fabric_runner.h"
#include "fabric/kmd_port.h"
#include "fabric/kmd_socket.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "fabric/pcie_device.h"
#include "fabric/soc_descriptor.h"
#include "fabric/topology_map.h"
#include "fabric_hello_args.h"
#include "protocol/test_kernels.h"

namespace {

using fabric::CoreLocation;
using fabric::ErrorCategory;

struct Options {
    std::string cluster, mesh_graph, socket, kernel, router_elf;
    uint32_t bytes = 4096;
    uint32_t from = 0;  // mesh device of mesh 0
    fabric::MeshDir dir = fabric::MeshDir::E;
};

// --name VALUE pairs; anything else is a usage error.
Options parse(int argc, char** argv) {
    Options o;
    std::map<std::string, std::string*> text{{"--cluster", &o.cluster},
                                             {"--mesh-graph", &o.mesh_graph},
                                             {"--socket", &o.socket},
                                             {"--kernel", &o.kernel},
                                             {"--router-elf", &o.router_elf}};
    for (int i = 1; i < argc; i += 2) {
        const std::string name = argv[i];
        if (i + 1 >= argc) fabric::fail(ErrorCategory::BadInput, "{} needs a value", name);
        if (name == "--bytes") {
            o.bytes = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
        } else if (name == "--from") {
            o.from = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
        } else if (name == "--dir") {
            const std::string d = argv[i + 1];
            const auto dir = d.size() == 1 ? fabric::parse_mesh_dir(d[0]) : std::nullopt;
            if (!dir) fabric::fail(ErrorCategory::BadInput, "--dir {}: one of N, E, S, W", d);
            o.dir = *dir;
        } else if (const auto it = text.find(name); it != text.end()) {
            *it->second = argv[i + 1];
        } else {
            fabric::fail(ErrorCategory::BadInput, "unknown option {}", name);
        }
    }
    if (o.cluster.empty()) fabric::fail(ErrorCategory::BadInput, "--cluster FILE is required");
    if (o.bytes == 0 || o.bytes % 16 != 0 || o.bytes > 64 * 1024) {
        fabric::fail(ErrorCategory::BadInput, "--bytes {}: a multiple of 16, 16 to 65536", o.bytes);
    }
    if (o.socket.empty()) o.socket = fabric::default_sim_socket();
    return o;
}

// The device, opened as on silicon: the real driver, or a sim server's simulated one.
std::unique_ptr<fabric::PcieDevice> open_device(const Options& o) {
    std::shared_ptr<fabric::KmdPort> port;
    if (o.socket.empty()) {
        port = std::make_shared<fabric::LinuxKmdPort>();
    } else {
        port = std::make_shared<fabric::RemoteKmdPort>(o.socket);
    }
    const auto found = fabric::discover_devices(*port);
    if (found.empty() || !found.front().arch) {
        fabric::fail(ErrorCategory::Device, "no Wormhole or Blackhole device under {}",
                     port->description());
    }
    const hal::Arch arch = *found.front().arch;
    const std::string soc =
        std::string(FABRIC_SOC_DESCRIPTOR_DIR) +
        (arch == hal::Arch::Blackhole ? "/blackhole_140_arch.yaml" : "/wormhole_b0_80_arch.yaml");
    return std::make_unique<fabric::PcieDevice>(port, fabric::SocDescriptor::load_file(soc));
}

std::string firmware(const std::string& given, hal::Arch arch, const std::string& name) {
    if (!given.empty()) return given;
    return fmt::format("{}/{}/{}.elf", FABRIC_FIRMWARE_DIR, fabric::arch_name(arch), name);
}

// Where the message goes: a worker core of the destination chip, a counter, then the bytes
// (above the test mailbox, where kernels' sinks live: mesh_sink_base).
struct Landing {
    CoreLocation core;
    uint32_t counter = 0;
    uint32_t data = 0;
};

fabric_hello::Args kernel_args(const fabric::MeshPlan& plan, const fabric::RouterPlacement& r,
                               const Landing& to, hal::Arch arch, uint32_t bytes) {
    const uint32_t base = protocol::test_l1_base(arch);
    fabric_hello::Args a{};
    a.channel = plan.worker_channel(r);
    a.conn_l1 = base;
    a.src_addr = base + 0x400;
    a.dst_addr = to.data;
    a.dst_x = to.core.core.x;
    a.dst_y = to.core.core.y;
    a.counter_addr = to.counter;
    a.hops = 1;
    a.bytes = bytes;
    a.seed = 0x4E110;
    a.timeout_us = 20'000;
    return a;
}

void write_args(fabric::Device& dev, const CoreLocation& core, hal::Arch arch,
                const fabric_hello::Args& a) {
    protocol::TestMailbox m{};
    m.magic = protocol::kTestMailboxMagic;
    m.num_args = sizeof(a) / 4;
    std::memcpy(m.args, &a, sizeof(a));
    std::vector<uint8_t> raw(sizeof(m));
    std::memcpy(raw.data(), &m, sizeof(m));
    dev.write(core, protocol::test_mailbox_addr(arch), raw);
}

// Words of the landing that differ from the kernel's message.
uint32_t wrong_words(fabric::Device& dev, const Landing& to, const fabric_hello::Args& a) {
    std::vector<uint8_t> raw(a.bytes);
    dev.read(to.core, to.data, raw);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < a.bytes / 4; ++i) {
        uint32_t w;
        std::memcpy(&w, raw.data() + 4 * i, 4);
        wrong += w != protocol::pattern_word(a.seed, i) ? 1 : 0;
    }
    return wrong;
}

int run(const Options& o) {
    const auto dev = open_device(o);
    const fabric::SocDescriptor& soc = dev->soc(0);
    const hal::Arch arch = soc.arch();
    const auto cluster = fabric::ClusterDescriptor::load_file(o.cluster);
    const fabric::MeshGraph graph = o.mesh_graph.empty()
                                        ? fabric::derive_mesh_graph(cluster)
                                        : fabric::MeshGraph::load_file(o.mesh_graph);
    // The plan `fabricctl mesh up` made with its defaults: attach checks every router holds it.
    const fabric::MeshPlan plan = fabric::plan_mesh(graph, cluster, soc, {});
    fabric::FabricRunner runner(
        *dev, plan.fabric,
        fabric::ElfImage::load_file(firmware(o.router_elf, arch, "fabric_router_2d")));
    runner.attach();

    // From the mesh device one hop on, through its router that way on plane 0.
    const fabric::MeshNode from{0, o.from};  // (no router that way: a clear BadInput error)
    const fabric::RouterPlacement& router = plan.router(from, o.dir, 0);
    const fabric::ChipId dst_chip = plan.line_chips(router).at(0);
    const auto& workers = soc.cores(fabric::CoreType::Worker);
    const uint32_t sink = fabric::mesh_sink_base(arch);
    const Landing to{{dst_chip, workers.at(1)}, sink, sink + 256};
    const fabric_hello::Args a = kernel_args(plan, router, to, arch, o.bytes);
    dev->write(to.core, to.counter, std::vector<uint8_t>(256 + a.bytes, 0));

    const auto kernel = fabric::ElfImage::load_file(firmware(o.kernel, arch, "fabric_hello"));
    const fabric::LaunchTarget target{
        {router.chip, workers.at(0)},
        &kernel,
        fabric::erisc_placement(hal::arch_map(arch), soc.worker_l1_size())};
    fabric::LaunchOptions lo;
    lo.max_cycles = 20'000'000;
    const fabric::LaunchResult r =
        runner
            .run_workers(std::span(&target, 1), lo,
                         [&](const fabric::LaunchTarget& t) { write_args(*dev, t.core, arch, a); })
            .front();
    fmt::print("{}", r.mailbox.console);
    if (r.outcome != fabric::LaunchOutcome::Exited || r.status.exit_status != 0) {
        fmt::print(stderr, "fabric_hello: the kernel on {} did not succeed: {}\n",
                   target.core.str(), fabric::describe_core(r.status));
        return 1;
    }
    const uint32_t count = dev->read32(to.core, to.counter);
    const uint32_t wrong = wrong_words(*dev, to, a);
    fmt::print(
        "fabric_hello: {} bytes from chip {} ({}) to chip {} ({}) over the live fabric: "
        "{}, counter {}\n",
        a.bytes, router.chip, target.core.core.str(), dst_chip, to.core.core.str(),
        wrong == 0 ? "every byte checked" : fmt::format("{} words wrong", wrong), count);
    return wrong == 0 && count == 1 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parse(argc, argv));
    } catch (const fabric::Error& e) {
        fmt::print(stderr, "fabric_hello: error: {}\n", e.what());
        return 2;
    }
}
