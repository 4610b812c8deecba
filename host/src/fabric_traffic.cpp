#include "fabric/fabric_traffic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "fabric/error.h"
#include "protocol/fabric.h"
#include "protocol/test_mailbox.h"

namespace fabric {

namespace pf = protocol::fabric;

namespace {

// The kernel's destination table sits in front of the connection words (the top of the header).
constexpr uint32_t kConnOffset = 0x300;
constexpr uint32_t kSrcOffset = 0x400;
static_assert(protocol::kFabricMaxDests * sizeof(protocol::FabricDest) <= kConnOffset);
static_assert(kConnOffset + protocol::kFabricConnL1Bytes <= kSrcOffset);

template <typename T>
void write_struct(Device& dev, const CoreLocation& core, uint32_t addr, const T& value) {
    std::vector<uint8_t> bytes(sizeof(T));
    std::memcpy(bytes.data(), &value, sizeof(T));
    dev.write(core, addr, bytes);
}

// The worker cores that are workers on every chip of `chips` (a multicast writes one core
// position on all of them), in the first chip's descriptor order.
std::vector<CoreCoord> workers_on_every_chip(const ChipSocs& socs,
                                             const std::vector<ChipId>& chips) {
    std::vector<CoreCoord> out;
    for (const CoreCoord& c : socs(chips.front()).cores(CoreType::Worker)) {
        const bool everywhere = std::all_of(chips.begin(), chips.end(), [&](ChipId chip) {
            return socs(chip).core_type(c) == CoreType::Worker;
        });
        if (everywhere) out.push_back(c);
    }
    return out;
}

// The third of `cores` (the workers every chip has; `soc`, the first chip's, names them).
CoreCoord sink_of(const std::vector<CoreCoord>& cores, const SocDescriptor& soc) {
    if (cores.size() < 3) {
        fail(ErrorCategory::BadInput,
             "{}: fabric traffic needs 3 worker cores that every chip has, {} has {} (harvesting "
             "applied)",
             soc.source(), soc.source(), cores.size());
    }
    return cores[2];
}

}  // namespace

CoreCoord fabric_traffic_sink(const ChipSocs& socs, const std::vector<ChipId>& chips) {
    return sink_of(workers_on_every_chip(socs, chips), socs(chips.front()));
}

namespace {

// Chip `i`'s kernels: (direction, how many chips its route writes).
struct Send {
    FabricDir dir;
    uint32_t hops;
};
std::vector<Send> sends_of(FabricTrafficPattern pattern, bool ring, size_t i, size_t n) {
    const auto hops = [](size_t h) { return static_cast<uint32_t>(h); };
    if (pattern == FabricTrafficPattern::Neighbour) {
        return {ring || i + 1 < n ? Send{FabricDir::East, 1} : Send{FabricDir::West, 1}};
    }
    if (ring) return {{FabricDir::East, hops(n - 1)}};
    std::vector<Send> out;
    if (i + 1 < n) out.push_back({FabricDir::East, hops(n - 1 - i)});
    if (i > 0) out.push_back({FabricDir::West, hops(i)});
    return out;
}

}  // namespace

std::string_view fabric_traffic_pattern_name(FabricTrafficPattern p) {
    return p == FabricTrafficPattern::AllToAll ? "all-to-all" : "neighbour";
}

std::optional<FabricTrafficPattern> parse_fabric_traffic_pattern(std::string_view text) {
    if (text == "neighbour") return FabricTrafficPattern::Neighbour;
    if (text == "all-to-all") return FabricTrafficPattern::AllToAll;
    return std::nullopt;
}

FabricTrafficL1 fabric_traffic_l1(hal::Arch arch) {
    const uint32_t base = protocol::test_l1_base(arch);
    return {base, base + kConnOffset, base + kSrcOffset, protocol::test_mailbox_addr(arch)};
}

uint32_t fabric_sink_base(hal::Arch arch) {
    return pf::align_up(
        protocol::test_mailbox_addr(arch) + static_cast<uint32_t>(sizeof(protocol::TestMailbox)),
        4096);
}

uint64_t FabricTraffic::deliveries() const {
    uint64_t n = 0;
    for (const auto& w : workers) n += uint64_t{packets} * w.dests.size();
    return n;
}

FabricTraffic plan_fabric_traffic(const FabricPlan& plan, const ChipSocs& socs,
                                  const ElfImage& traffic_elf, const FabricTrafficOptions& o) {
    const uint32_t payload = plan.routers.empty() ? 0 : plan.routers.front().config.payload_bytes;
    if (o.packet_bytes == 0 || o.packet_bytes % 16 != 0 || o.packet_bytes > payload) {
        fail(ErrorCategory::BadInput,
             "fabric traffic: packets of {} B: must be a non-zero multiple of 16 and at most the "
             "routers' payload of {} B",
             o.packet_bytes, payload);
    }
    if (o.packets == 0) fail(ErrorCategory::BadInput, "fabric traffic: 0 packets per worker");
    if (o.packets > protocol::kTrafficSeqMaxPackets) {
        fail(ErrorCategory::BadInput,
             "fabric traffic: {} packets per worker: a packet's seq word numbers at most {}",
             o.packets, protocol::kTrafficSeqMaxPackets);
    }
    const std::vector<CoreCoord> cores = workers_on_every_chip(socs, plan.chips);
    const SocDescriptor& soc = socs(plan.chips.front());
    FabricTraffic t;
    t.arch = plan.arch;
    t.sink = sink_of(cores, soc);
    t.packets = o.packets;
    t.packet_bytes = o.packet_bytes;
    t.slots = std::min(o.packets, kFabricTrafficMaxSlots);
    t.count_deliveries = o.count_deliveries;
    t.send_type = o.send_type.value_or(o.count_deliveries ? TrafficSendType::FusedWriteAtomicInc
                                                          : TrafficSendType::UnicastWrite);
    check_traffic_send_type("fabric traffic", t.send_type, o.packet_bytes, o.packets, t.slots,
                            o.count_deliveries);
    const size_t n = plan.chips.size();
    const bool ring = plan.topology == pf::Topology::Ring;
    const FabricTrafficL1 l1 = fabric_traffic_l1(plan.arch);
    const uint32_t sink_base = fabric_sink_base(plan.arch);
    auto rules = erisc_placement(hal::arch_map(plan.arch), soc.worker_l1_size());
    rules.target = fmt::format("{} worker core", arch_name(plan.arch));
    for (size_t i = 0; i < n; ++i) {
        for (const Send& send : sends_of(o.pattern, ring, i, n)) {
            FabricTrafficWorker w;
            w.dir = send.dir;
            w.target = {
                {plan.chips[i], cores[send.dir == FabricDir::East ? 0 : 1]}, &traffic_elf, rules};
            for (uint32_t h = 1; h <= send.hops; ++h) {
                const size_t j = send.dir == FabricDir::East ? (i + h) % n : (i + n - h) % n;
                w.dests.push_back(plan.chips[j]);
            }
            w.name = fmt::format("worker {} ({})", w.target.core.str(), dir_name(w.dir));
            const uint32_t index = static_cast<uint32_t>(t.workers.size());
            const pf::Route route =
                pf::Route{send.hops == 1 ? pf::route_unicast(1) : pf::route_multicast(1, send.hops)}
                    .with_ttl(plan.ttl());
            w.dest.route = route.hops;
            w.dest.flags_word = route.flags_word;
            w.dest.x = t.sink.x;
            w.dest.y = t.sink.y;
            w.dest.addr = sink_base + index * t.region_stride();
            w.dest.seed = 0x1000u * (index + 1);
            w.dest.seq_base = protocol::traffic_seq(index, 0);
            if (o.count_deliveries) set_counter(w.dest, t.region_bytes(), t.send_type);
            auto& a = w.args;
            a.channel = plan.worker_channel(plan.chips[i], w.dir);
            set_send_type(a, t.send_type);
            a.packet_bytes = o.packet_bytes;
            a.packet_count = o.packets;
            a.num_dests = 1;
            a.dest_slots = t.slots;
            a.dests_addr = l1.dests;
            a.conn_l1 = l1.conn;
            a.src_addr = l1.src;
            a.timeout_us = o.timeout_us;
            t.workers.push_back(std::move(w));
        }
    }
    if (uint64_t{l1.src} + t.region_bytes() > l1.src_end) {
        fail(ErrorCategory::BadInput,
             "fabric traffic: {} positions of {} B do not fit the sending worker's L1 below the "
             "mailbox",
             t.slots, t.packet_bytes);
    }
    const uint64_t sink_end = uint64_t{sink_base} + uint64_t{t.region_stride()} * t.workers.size();
    if (sink_end > soc.worker_l1_size()) {
        fail(ErrorCategory::BadInput,
             "fabric traffic: {} B x {} positions x {} workers do not fit the receiving worker's "
             "L1 ({} B from {})",
             t.packet_bytes, t.slots, t.workers.size(), soc.worker_l1_size(), hex32(sink_base));
    }
    return t;
}

FabricTraffic plan_fabric_traffic(const FabricPlan& plan, const SocDescriptor& soc,
                                  const ElfImage& traffic_elf, const FabricTrafficOptions& o) {
    return plan_fabric_traffic(
        plan, [&soc](ChipId) -> const SocDescriptor& { return soc; }, traffic_elf, o);
}

void load_fabric_worker(Device& device, hal::Arch arch, const FabricTrafficWorker& w) {
    write_struct(device, w.target.core, w.args.dests_addr, w.dest);
    protocol::TestMailbox m{};
    m.magic = protocol::kTestMailboxMagic;
    m.role = static_cast<uint32_t>(protocol::KernelRole::Master);
    m.num_args = sizeof(w.args) / 4;
    std::memcpy(m.args, &w.args, sizeof(w.args));
    write_struct(device, w.target.core, protocol::test_mailbox_addr(arch), m);
}

void zero_fabric_sinks(Device& device, const FabricPlan& plan, const FabricTraffic& t) {
    const std::vector<uint8_t> zeros(size_t{t.region_stride()} * t.workers.size(), 0);
    for (ChipId c : plan.chips) device.write({c, t.sink}, fabric_sink_base(t.arch), zeros);
}

FabricTrafficRun run_fabric_traffic(FabricRunner& runner, const FabricTraffic& t,
                                    const LaunchOptions& options) {
    Device& dev = runner.device();
    zero_fabric_sinks(dev, runner.plan(), t);
    std::vector<LaunchTarget> targets;
    for (const auto& w : t.workers) targets.push_back(w.target);
    size_t next = 0;
    const std::vector<LaunchResult> launches = runner.run_workers(
        targets, options,
        [&](const LaunchTarget&) { load_fabric_worker(dev, t.arch, t.workers[next++]); });
    FabricTrafficRun run;
    for (size_t i = 0; i < launches.size(); ++i) {
        run.workers.push_back(
            read_worker_outcome(dev, t.arch, t.workers[i].target.core, launches[i]));
        run.cycles = std::max(run.cycles, launches[i].cycles);
    }
    return run;
}

std::vector<FabricLandedMismatch> check_fabric_landed(Device& device, const FabricTraffic& t) {
    std::vector<FabricLandedMismatch> out;
    for (size_t k = 0; k < t.workers.size(); ++k) {
        const FabricTrafficWorker& w = t.workers[k];
        for (ChipId c : w.dests) {
            std::vector<uint8_t> got(t.region_bytes());
            device.read({c, t.sink}, w.dest.addr, got);
            const PatternCheck check =
                check_region(got, t.send_type, t.packet_bytes, t.slots, w.dest.seed);
            if (check.bad_words) out.push_back({k, c, w.dest.addr, check});
        }
    }
    return out;
}

namespace {

// The packets of worker `w` the sink on chip `chip` counted (TrafficSendType: its counter, or
// its positions intact).
uint32_t delivered_on(Device& device, const FabricTraffic& t, const FabricTrafficWorker& w,
                      ChipId chip) {
    if (counted_by_increment(t.send_type)) return device.read32({chip, t.sink}, w.dest.sem_addr);
    std::vector<uint8_t> got(t.region_bytes());
    device.read({chip, t.sink}, w.dest.addr, got);
    const PatternCheck check = check_region(got, t.send_type, t.packet_bytes, t.slots, w.dest.seed);
    return delivered_count(t.send_type, t.slots, check, 0);
}

}  // namespace

std::vector<std::vector<uint32_t>> read_fabric_delivered(Device& device, const FabricTraffic& t) {
    if (!t.count_deliveries) {
        fail(ErrorCategory::BadInput,
             "fabric traffic: deliveries are counted only with count_deliveries");
    }
    std::vector<std::vector<uint32_t>> out;
    for (const FabricTrafficWorker& w : t.workers) {
        std::vector<uint32_t>& per_chip = out.emplace_back();
        for (ChipId c : w.dests) per_chip.push_back(delivered_on(device, t, w, c));
    }
    return out;
}

std::vector<FlowTally> fabric_flow_tallies(const FabricTraffic& t,
                                           std::span<const MeshWorkerOutcome> outcomes,
                                           const std::vector<std::vector<uint32_t>>& delivered) {
    std::vector<FlowTally> tallies;
    for (size_t k = 0; k < t.workers.size(); ++k) {
        const FabricTrafficWorker& w = t.workers[k];
        const uint64_t sent = k < outcomes.size() ? outcomes[k].results.packets_sent : 0;
        std::vector<ChipId> on_the_way;
        for (size_t j = 0; j < w.dests.size(); ++j) {
            on_the_way.push_back(w.dests[j]);
            FlowTally f;
            f.name = fmt::format("{} -> chip {}", w.name, w.dests[j]);
            f.id = static_cast<uint32_t>(k);
            f.sent = sent;
            f.delivered = k < delivered.size() && j < delivered[k].size() ? delivered[k][j] : 0;
            f.drop_chips = on_the_way;
            tallies.push_back(std::move(f));
        }
    }
    return tallies;
}

}  // namespace fabric
