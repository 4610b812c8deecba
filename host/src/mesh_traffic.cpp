#include "fabric/mesh_traffic.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <utility>

#include "fabric/error.h"
#include "protocol/test_mailbox.h"

namespace fabric {

namespace pf = protocol::fabric;

namespace {

// The worker's L1 (the top of mesh_traffic.h): the start word just past the largest dests table.
constexpr uint32_t kStartOffset = protocol::kFabricMaxDests * sizeof(protocol::FabricDest);
constexpr uint32_t kConnOffset = 0x400;
constexpr uint32_t kSrcOffset = 0x800;
static_assert(kStartOffset + 4 <= kConnOffset &&
              kConnOffset + protocol::kFabricConnL1Bytes <= kSrcOffset);

// The last word the kernel fills before it waits for its start word, and its value then.
uint32_t last_src_word(const MeshTrafficWorker& w) {
    return w.args.src_addr + w.args.num_dests * w.args.dest_slots * w.args.packet_bytes - 4;
}
uint32_t last_src_value(const MeshTrafficWorker& w) {
    return protocol::pattern_word(w.dests.back().seed + w.args.dest_slots - 1,
                                  w.args.packet_bytes / 4 - 1);
}

template <typename T>
std::vector<uint8_t> bytes_of(const T* data, size_t count) {
    std::vector<uint8_t> out(count * sizeof(T));
    std::memcpy(out.data(), data, out.size());
    return out;
}

}  // namespace

namespace {

constexpr std::array<std::string_view, 5> kSendTypeNames{
    "unicast-write", "inline-write", "atomic-inc", "fused-write-atomic-inc", "scatter-write"};

}  // namespace

std::string_view traffic_send_type_name(TrafficSendType t) {
    return kSendTypeNames.at(static_cast<size_t>(t));
}

std::optional<TrafficSendType> parse_traffic_send_type(std::string_view text) {
    for (size_t i = 0; i < kSendTypeNames.size(); ++i) {
        if (kSendTypeNames[i] == text) return static_cast<TrafficSendType>(i);
    }
    return std::nullopt;
}

std::string traffic_send_type_names() {
    return fmt::format("{}", fmt::join(kSendTypeNames, ", "));
}

pf::NocSendType noc_send_type(TrafficSendType t) {
    switch (t) {
        case TrafficSendType::InlineWrite:
            return pf::NocSendType::InlineWrite;
        case TrafficSendType::AtomicInc:
            return pf::NocSendType::AtomicInc;
        case TrafficSendType::FusedWriteAtomicInc:
            return pf::NocSendType::FusedWriteAtomicInc;
        case TrafficSendType::ScatterWrite:
            return pf::NocSendType::ScatterWrite;
        case TrafficSendType::UnicastWrite:
        default:
            return pf::NocSendType::UnicastWrite;
    }
}

bool counted_by_increment(TrafficSendType t) {
    return t == TrafficSendType::AtomicInc || t == TrafficSendType::FusedWriteAtomicInc;
}

void check_traffic_send_type(std::string_view what, TrafficSendType type, uint32_t packet_bytes,
                             uint32_t packets, uint32_t slots, bool count) {
    const uint32_t scatter_min = kTrafficScatterChunks * 16;
    if (type == TrafficSendType::ScatterWrite && packet_bytes < scatter_min) {
        fail(ErrorCategory::BadInput,
             "{}: scatter-write packets of {} B: at least {} B ({} chunks of 16)", what,
             packet_bytes, scatter_min, kTrafficScatterChunks);
    }
    if (count && !counted_by_increment(type) && packets > slots) {
        fail(ErrorCategory::BadInput,
             "{}: {} packets are counted by the positions they land in: {} packets per flow need "
             "as many positions, there are {}",
             what, traffic_send_type_name(type), packets, slots);
    }
}

uint32_t mesh_worker_source_bytes(hal::Arch arch) {
    return protocol::test_mailbox_addr(arch) - protocol::test_l1_base(arch) - kSrcOffset;
}

CoreCoord mesh_traffic_sink(const SocDescriptor& soc, ChipId chip, uint32_t index) {
    const auto& cores = soc.cores(CoreType::Worker);
    if (index >= cores.size()) {
        fail(ErrorCategory::BadInput,
             "mesh traffic: sink core index {} (chip {} has {} worker cores)", index, chip,
             cores.size());
    }
    return cores[index];
}

uint32_t mesh_sink_base(hal::Arch arch) {
    return pf::align_up(
        protocol::test_mailbox_addr(arch) + static_cast<uint32_t>(sizeof(protocol::TestMailbox)),
        4096);
}

std::vector<std::vector<MeshFlow>> mesh_traffic_rounds(const MeshPlan& plan,
                                                       std::span<const MeshFlow> flows) {
    std::vector<std::vector<MeshFlow>> rounds;
    std::map<const RouterPlacement*, uint32_t> through;
    for (const MeshFlow& f : flows) {
        const size_t round =
            through[plan.send(f.src, f.dst, f.plane).router]++ / protocol::kFabricMaxDests;
        if (rounds.size() <= round) rounds.resize(round + 1);
        rounds[round].push_back(f);
    }
    return rounds;
}

namespace {

// A chip's worker cores and where a kernel may load on them, looked up once per chip.
struct ChipWorkers {
    const std::vector<CoreCoord>* cores = nullptr;
    PlacementRules placement;
    uint32_t l1_size = 0;
};

class WorkerPlacer {
  public:
    WorkerPlacer(const ChipSocs& socs, hal::Arch arch) : socs_(socs), arch_(arch) {}

    const ChipWorkers& chip(ChipId chip) {
        auto it = chips_.find(chip);
        if (it != chips_.end()) return it->second;
        const SocDescriptor& soc = socs_(chip);
        ChipWorkers w;
        w.cores = &soc.cores(CoreType::Worker);
        w.placement = erisc_placement(hal::arch_map(arch_), soc.worker_l1_size());
        w.l1_size = soc.worker_l1_size();
        return chips_.emplace(chip, std::move(w)).first->second;
    }

    // The sink core of a chip: worker core `index` of that chip.
    CoreCoord sink(ChipId chip, uint32_t index) {
        return mesh_traffic_sink(socs_(chip), chip, index);
    }

  private:
    const ChipSocs& socs_;
    hal::Arch arch_;
    std::map<ChipId, ChipWorkers> chips_;
};

void check_traffic_options(const MeshTrafficOptions& o, uint32_t slots) {
    if (o.packets == 0) fail(ErrorCategory::BadInput, "mesh traffic: packets must be at least 1");
    if (o.packet_bytes == 0 || o.packet_bytes % 16 != 0) {
        fail(ErrorCategory::BadInput,
             "mesh traffic: packet size {} is not a positive multiple of 16", o.packet_bytes);
    }
    // A position no packet reaches would hold zeros and fail the check.
    if (slots > o.packets) {
        fail(ErrorCategory::BadInput, "mesh traffic: {} slots for {} packets per flow", slots,
             o.packets);
    }
    if (o.packets > protocol::kTrafficSeqMaxPackets) {
        fail(ErrorCategory::BadInput,
             "mesh traffic: {} packets per flow: a packet's seq word numbers at most {} per flow",
             o.packets, protocol::kTrafficSeqMaxPackets);
    }
    // A region is addressed with 32 bits (region_bytes()); any region this large misses L1 anyway.
    if (uint64_t{slots} * o.packet_bytes > UINT32_MAX - 16) {
        fail(ErrorCategory::BadInput, "mesh traffic: {} slots of {} B do not fit in any L1", slots,
             o.packet_bytes);
    }
}

}  // namespace

void set_send_type(protocol::FabricTrafficArgs& a, TrafficSendType type) {
    a.send_type = static_cast<uint32_t>(noc_send_type(type));
    if (type == TrafficSendType::ScatterWrite) {
        a.scatter_chunks = kTrafficScatterChunks;
        a.scatter_gap = 0;
    }
}

void set_counter(protocol::FabricDest& d, uint32_t region_bytes, TrafficSendType type) {
    d.sem_x = d.x;
    d.sem_y = d.y;
    d.sem_addr = type == TrafficSendType::AtomicInc ? d.addr : d.addr + region_bytes;
}

namespace {

void set_counter(protocol::FabricDest& d, const MeshTraffic& t) {
    set_counter(d, t.region_bytes(), t.send_type);
}

void check_flow_ids(const MeshTrafficOptions& o, size_t flows) {
    if (uint64_t{o.first_flow_id} + flows > protocol::kTrafficSeqMaxFlows) {
        fail(ErrorCategory::BadInput,
             "mesh traffic: flows {} to {}: a packet's seq word names at most {} flows",
             o.first_flow_id, uint64_t{o.first_flow_id} + flows - 1, protocol::kTrafficSeqMaxFlows);
    }
}

// Traffic that could deadlock is refused before anything runs: a hang is worse than no run.
void refuse_deadlock(const MeshPlan& plan, std::span<const MeshFlow> flows) {
    std::map<uint32_t, std::vector<std::pair<MeshNode, MeshNode>>> by_plane;
    for (const MeshFlow& f : flows) by_plane[f.plane].push_back({f.src, f.dst});
    for (const auto& [plane, pairs] : by_plane) {
        if (const auto cycle = plan.wait_cycle(pairs, plane)) {
            fail(ErrorCategory::Fabric,
                 "mesh traffic: these flows can deadlock on plane {}, so they are not started: "
                 "these links "
                 "wait on each other in a cycle (firmware/router/README.md, \"Deadlock freedom\"): "
                 "{}",
                 plane, *cycle);
        }
    }
}

}  // namespace

MeshTraffic plan_mesh_traffic(const MeshPlan& plan, const ChipSocs& socs,
                              const ElfImage& traffic_elf, std::vector<MeshFlow> flows,
                              const MeshTrafficOptions& o) {
    MeshTraffic t;
    t.arch = plan.fabric.arch;
    t.flows = std::move(flows);
    t.packets = o.packets;
    t.packet_bytes = o.packet_bytes;
    t.slots = o.slots != 0 ? o.slots : std::min<uint32_t>(o.packets, 4);
    t.start_together = o.start_together;
    t.count_deliveries = o.count_deliveries;
    t.first_flow_id = o.first_flow_id;
    t.send_type = o.send_type.value_or(o.count_deliveries ? TrafficSendType::FusedWriteAtomicInc
                                                          : TrafficSendType::UnicastWrite);
    check_traffic_options(o, t.slots);
    check_traffic_send_type("mesh traffic", t.send_type, o.packet_bytes, o.packets, t.slots,
                            o.count_deliveries);
    check_flow_ids(o, t.flows.size());
    refuse_deadlock(plan, t.flows);
    WorkerPlacer placer(socs, t.arch);
    const uint32_t l1 = protocol::test_l1_base(t.arch);
    const uint32_t mailbox = protocol::test_mailbox_addr(t.arch);
    const uint32_t sink_base = mesh_sink_base(t.arch);

    std::map<const RouterPlacement*, size_t> by_router;
    std::map<ChipId, uint32_t> workers_on_chip, flows_into_chip;
    for (size_t k = 0; k < t.flows.size(); ++k) {
        const MeshFlow& f = t.flows[k];
        const MeshSend s = plan.send(f.src, f.dst, f.plane);
        auto [it, added] = by_router.try_emplace(s.router, t.workers.size());
        if (added) {
            const ChipId chip = s.router->chip;
            const uint32_t index = workers_on_chip[chip]++;
            if (index >= o.sink_core_index) {
                fail(ErrorCategory::BadInput,
                     "mesh traffic: chip {} needs worker core {}, the sink core", chip, index);
            }
            const ChipWorkers& on_chip = placer.chip(chip);
            placer.sink(chip, o.sink_core_index);  // the chip has its sink core, so this worker too
            MeshTrafficWorker w;
            w.target = {{chip, (*on_chip.cores)[index]}, &traffic_elf, on_chip.placement};
            auto& a = w.args;
            a.channel = plan.worker_channel(*s.router);
            set_send_type(a, t.send_type);
            a.packet_bytes = o.packet_bytes;
            a.dest_slots = t.slots;
            a.dests_addr = l1;
            a.conn_l1 = l1 + kConnOffset;
            a.src_addr = l1 + kSrcOffset;
            a.timeout_us = o.timeout_us;
            a.start_addr = o.start_together ? l1 + kStartOffset : 0;
            t.workers.push_back(std::move(w));
        }
        MeshTrafficWorker& w = t.workers[it->second];
        if (w.dests.size() == protocol::kFabricMaxDests) {
            fail(ErrorCategory::BadInput, "mesh traffic: more than {} flows through {}",
                 protocol::kFabricMaxDests, router_component_name(*s.router));
        }
        const ChipId dst_chip = plan.chip_of(f.dst);
        const CoreCoord sink = placer.sink(dst_chip, o.sink_core_index);
        const uint64_t addr = sink_base + uint64_t(flows_into_chip[dst_chip]++) * t.region_stride();
        if (addr + t.region_stride() > placer.chip(dst_chip).l1_size) {
            fail(ErrorCategory::BadInput,
                 "mesh traffic: the sink regions of chip {} ({} B each) pass the end of L1",
                 dst_chip, t.region_stride());
        }
        protocol::FabricDest d{};
        d.route = s.route.hops;
        d.route_ext = s.route.ext;
        d.flags_word = s.route.flags_word;
        d.dst_node = s.route.dst_node;
        d.x = sink.x;
        d.y = sink.y;
        d.addr = static_cast<uint32_t>(addr);
        d.seed = 0x1000u * static_cast<uint32_t>(k + 1);
        d.seq_base = protocol::traffic_seq(t.flow_id(k), 0);
        if (o.count_deliveries) set_counter(d, t);
        w.dests.push_back(d);
        w.flows.push_back(k);
        w.sinks.push_back({dst_chip, sink});
    }
    for (auto& w : t.workers) {
        w.args.num_dests = static_cast<uint32_t>(w.dests.size());
        const uint64_t packet_count = uint64_t{o.packets} * w.args.num_dests;
        if (packet_count > UINT32_MAX) {
            fail(ErrorCategory::BadInput,
                 "mesh traffic: {} packets for the worker on {} (at most {})", packet_count,
                 w.target.core.str(), UINT32_MAX);
        }
        w.args.packet_count = static_cast<uint32_t>(packet_count);
        if (w.args.src_addr + uint64_t(w.args.num_dests) * t.region_bytes() > mailbox) {
            fail(ErrorCategory::BadInput,
                 "mesh traffic: {} flows x {} slots x {} B do not fit below the mailbox of {}",
                 w.args.num_dests, t.slots, t.packet_bytes, w.target.core.str());
        }
    }
    return t;
}

MeshTraffic plan_mesh_traffic(const MeshPlan& plan, const Device& device,
                              const ElfImage& traffic_elf, std::vector<MeshFlow> flows,
                              const MeshTrafficOptions& options) {
    const ChipSocs socs = [&](ChipId chip) -> const SocDescriptor& { return device.soc(chip); };
    return plan_mesh_traffic(plan, socs, traffic_elf, std::move(flows), options);
}

MeshTraffic plan_mesh_traffic(const MeshPlan& plan, const SocDescriptor& soc,
                              const ElfImage& traffic_elf, std::vector<MeshFlow> flows,
                              const MeshTrafficOptions& options) {
    const ChipSocs socs = [&](ChipId) -> const SocDescriptor& { return soc; };
    return plan_mesh_traffic(plan, socs, traffic_elf, std::move(flows), options);
}

void load_mesh_worker(Device& device, hal::Arch arch, const MeshTrafficWorker& w) {
    device.write(w.target.core, w.args.dests_addr, bytes_of(w.dests.data(), w.dests.size()));
    protocol::TestMailbox m{};
    m.magic = protocol::kTestMailboxMagic;
    m.role = static_cast<uint32_t>(protocol::KernelRole::Master);
    m.num_args = sizeof(w.args) / 4;
    std::memcpy(m.args, &w.args, sizeof(w.args));
    device.write(w.target.core, protocol::test_mailbox_addr(arch), bytes_of(&m, 1));
    // A previous run on this core may have left the same pattern: the fill must be seen anew.
    device.write32(w.target.core, last_src_word(w), ~last_src_value(w));
    if (w.args.start_addr != 0) device.write32(w.target.core, w.args.start_addr, 0);
}

void zero_mesh_sinks(Device& device, const MeshTraffic& t) {
    const std::vector<uint8_t> zeros(t.region_stride(), 0);
    for (const auto& w : t.workers) {
        for (size_t j = 0; j < w.dests.size(); ++j)
            device.write(w.sinks[j], w.dests[j].addr, zeros);
    }
}

protocol::TestMailbox read_test_mailbox(Device& device, hal::Arch arch, const CoreLocation& core) {
    protocol::TestMailbox mb{};
    std::vector<uint8_t> raw(sizeof(mb));
    device.read(core, protocol::test_mailbox_addr(arch), raw);
    std::memcpy(&mb, raw.data(), sizeof(mb));
    return mb;
}

MeshWorkerOutcome read_worker_outcome(Device& device, hal::Arch arch, const CoreLocation& core,
                                      const LaunchResult& launch) {
    MeshWorkerOutcome o;
    o.launch = launch;
    const protocol::TestMailbox mb = read_test_mailbox(device, arch, core);
    o.status = mb.status;
    o.stuck_at = mb.stuck_at;
    std::memcpy(&o.results, mb.results, sizeof(o.results));
    return o;
}

std::vector<MeshWorkerOutcome> read_mesh_outcomes(Device& device, const MeshTraffic& t,
                                                  std::span<const LaunchResult> launches) {
    std::vector<MeshWorkerOutcome> out;
    for (size_t i = 0; i < launches.size() && i < t.workers.size(); ++i) {
        out.push_back(read_worker_outcome(device, t.arch, t.workers[i].target.core, launches[i]));
    }
    return out;
}

bool MeshWorkerOutcome::passed(const MeshTrafficWorker& w) const {
    return launch.outcome == LaunchOutcome::Exited &&
           status == static_cast<uint32_t>(protocol::TestStatus::Done) &&
           results.packets_sent == w.args.packet_count;
}

bool MeshTrafficRun::passed(const MeshTraffic& t) const {
    if (workers.size() != t.workers.size()) return false;
    for (size_t i = 0; i < workers.size(); ++i) {
        if (!workers[i].passed(t.workers[i])) return false;
    }
    return true;
}

namespace {

// start_together: launch, write every start word once every worker has filled its source (or
// stopped), wait for all of them.
std::vector<LaunchResult> run_together(FabricRunner& runner, const MeshTraffic& t,
                                       std::span<const LaunchTarget> targets,
                                       const LaunchOptions& options, uint64_t& released_at) {
    if (!runner.up()) fail(ErrorCategory::BadInput, "mesh traffic: the fabric is not up");
    Device& dev = runner.device();
    const auto methods = load_many(dev, targets);
    for (const auto& w : t.workers) load_mesh_worker(dev, t.arch, w);
    start_many(dev, targets, methods);
    bool released = false;
    return wait_many(dev, targets, methods, options, [&] {
        runner.check_health();
        if (released) return;
        for (const auto& w : t.workers) {
            if (dev.read32(w.target.core, last_src_word(w)) != last_src_value(w) &&
                dev.core_status(w.target.core).state == CoreRunState::Running) {
                return;
            }
        }
        for (const auto& w : t.workers) dev.write32(w.target.core, w.args.start_addr, 1);
        released = true;
        released_at = dev.cycles();
    });
}

}  // namespace

MeshTrafficRun run_mesh_traffic(FabricRunner& runner, const MeshTraffic& t,
                                const LaunchOptions& options) {
    Device& dev = runner.device();
    zero_mesh_sinks(dev, t);
    std::vector<LaunchTarget> targets;
    std::map<CoreLocation, size_t> by_core;
    for (size_t i = 0; i < t.workers.size(); ++i) {
        targets.push_back(t.workers[i].target);
        by_core[t.workers[i].target.core] = i;
    }
    MeshTrafficRun run;
    uint64_t start = dev.cycles();
    std::vector<LaunchResult> res;
    if (t.start_together) {
        res = run_together(runner, t, targets, options, start);
    } else {
        res = runner.run_workers(targets, options, [&](const LaunchTarget& target) {
            load_mesh_worker(dev, t.arch, t.workers.at(by_core.at(target.core)));
        });
    }
    run.cycles = dev.cycles() - start;
    run.workers = read_mesh_outcomes(dev, t, res);
    return run;
}

PatternCheck check_pattern(std::span<const uint8_t> got, uint32_t packet_bytes, uint32_t slots,
                           uint32_t seed) {
    if (got.size() < size_t(slots) * packet_bytes) {
        fail(ErrorCategory::BadInput, "pattern check: {} B for {} positions of {} B", got.size(),
             slots, packet_bytes);
    }
    PatternCheck c;
    for (uint32_t p = 0; p < slots; ++p) {
        const uint32_t before = c.bad_words;
        for (uint32_t wd = 0; wd < packet_bytes / 4; ++wd) {
            const size_t at = size_t(p) * packet_bytes + 4 * wd;
            uint32_t v;
            std::memcpy(&v, got.data() + at, 4);
            if (v == protocol::pattern_word(seed + p, wd)) continue;
            if (c.bad_words == 0) c.first_bad = static_cast<uint32_t>(at);
            ++c.bad_words;
        }
        if (c.bad_words != before) c.bad_positions.push_back(p);
    }
    return c;
}

namespace {

// Records a word that differs at byte `at` of position `p`.
void note_bad(PatternCheck& c, uint32_t at, uint32_t p) {
    if (c.bad_words == 0) c.first_bad = at;
    ++c.bad_words;
    if (c.bad_positions.empty() || c.bad_positions.back() != p) c.bad_positions.push_back(p);
}

uint32_t word_at(std::span<const uint8_t> got, size_t at) {
    uint32_t v;
    std::memcpy(&v, got.data() + at, 4);
    return v;
}

}  // namespace

PatternCheck check_region(std::span<const uint8_t> got, TrafficSendType type, uint32_t packet_bytes,
                          uint32_t slots, uint32_t seed) {
    if (type != TrafficSendType::InlineWrite && type != TrafficSendType::AtomicInc)
        return check_pattern(got, packet_bytes, slots, seed);
    if (got.size() < size_t(slots) * packet_bytes) {
        fail(ErrorCategory::BadInput, "pattern check: {} B for {} positions of {} B", got.size(),
             slots, packet_bytes);
    }
    PatternCheck c;
    if (type == TrafficSendType::InlineWrite) {
        for (uint32_t p = 0; p < slots; ++p) {
            if (word_at(got, 4 * p) != protocol::pattern_word(seed, p)) note_bad(c, 4 * p, p);
        }
        return c;
    }
    // Atomic increments: word 0 is the counter, nothing else is written.
    for (uint32_t at = 4; at < slots * packet_bytes; at += 4) {
        if (word_at(got, at) != 0) note_bad(c, at, at / packet_bytes);
    }
    return c;
}

uint32_t delivered_count(TrafficSendType type, uint32_t slots, const PatternCheck& check,
                         uint32_t counter) {
    if (counted_by_increment(type)) return counter;
    return slots - static_cast<uint32_t>(check.bad_positions.size());
}

std::vector<PatternCheck> check_mesh_regions(Device& device, const MeshTraffic& t) {
    std::vector<PatternCheck> checks(t.flows.size());
    std::vector<uint8_t> got(t.region_bytes());
    for (const auto& w : t.workers) {
        for (size_t i = 0; i < w.dests.size(); ++i) {
            device.read(w.sinks[i], w.dests[i].addr, got);
            checks[w.flows[i]] =
                check_region(got, t.send_type, t.packet_bytes, t.slots, w.dests[i].seed);
        }
    }
    return checks;
}

std::vector<uint32_t> check_mesh_landed(Device& device, const MeshTraffic& t) {
    std::vector<uint32_t> bad;
    for (const PatternCheck& c : check_mesh_regions(device, t)) bad.push_back(c.bad_words);
    return bad;
}

uint32_t last_packet_at(uint32_t packets, uint32_t slots, uint32_t position) {
    return position + (packets - 1 - position) / slots * slots;
}

std::string packets_at(uint32_t packets, uint32_t slots, std::span<const uint32_t> positions) {
    std::string out = positions.size() == 1 ? "packet " : "packets ";
    for (size_t i = 0; i < positions.size(); ++i) {
        if (i != 0) out += ", ";
        out += std::to_string(last_packet_at(packets, slots, positions[i]));
    }
    return out;
}

std::vector<uint32_t> read_mesh_delivered(Device& device, const MeshTraffic& t) {
    if (!t.count_deliveries) {
        fail(ErrorCategory::BadInput,
             "mesh traffic: deliveries are counted only with "
             "count_deliveries");
    }
    const std::vector<PatternCheck> checks = counted_by_increment(t.send_type)
                                                 ? std::vector<PatternCheck>(t.flows.size())
                                                 : check_mesh_regions(device, t);
    std::vector<uint32_t> delivered(t.flows.size(), 0);
    for (const auto& w : t.workers) {
        for (size_t i = 0; i < w.dests.size(); ++i) {
            const uint32_t counter = counted_by_increment(t.send_type)
                                         ? device.read32(w.sinks[i], w.dests[i].sem_addr)
                                         : 0;
            delivered[w.flows[i]] =
                delivered_count(t.send_type, t.slots, checks[w.flows[i]], counter);
        }
    }
    return delivered;
}

uint64_t sent_to_dest(uint64_t packets_sent, uint32_t num_dests, uint32_t dest) {
    return packets_sent / num_dests + (dest < packets_sent % num_dests ? 1 : 0);
}

std::vector<FlowTally> mesh_flow_tallies(const MeshTraffic& t,
                                         std::span<const MeshWorkerOutcome> outcomes,
                                         std::span<const uint32_t> delivered) {
    std::vector<FlowTally> tallies(t.flows.size());
    for (size_t k = 0; k < t.flows.size(); ++k) {
        const MeshFlow& f = t.flows[k];
        tallies[k].name = fmt::format("{} -> {} plane {}", f.src.str(), f.dst.str(), f.plane);
        tallies[k].id = t.flow_id(k);
        tallies[k].delivered = k < delivered.size() ? delivered[k] : 0;
    }
    for (size_t i = 0; i < outcomes.size() && i < t.workers.size(); ++i) {
        const MeshTrafficWorker& w = t.workers[i];
        for (size_t j = 0; j < w.flows.size(); ++j) {
            tallies[w.flows[j]].sent = sent_to_dest(outcomes[i].results.packets_sent,
                                                    w.args.num_dests, static_cast<uint32_t>(j));
        }
    }
    return tallies;
}

}  // namespace fabric
