#include "fabric/ccl_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>

#include "fabric/error.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"

namespace fabric {

namespace pf = protocol::fabric;

namespace {

// From the connection's base (test_l1_base): the counters' 16-B lines (an all-reduce uses two)
// above the connection's words, then the input and right behind it the output. Everything a rank
// sends from lies where its NoC reaches locally (below the mailbox): a chunk is forwarded from its
// output slot.
constexpr uint32_t kCounterOffset = 0x300;
constexpr uint32_t kInputOffset = 0x400;
static_assert(protocol::kFabricConnL1Bytes <= kCounterOffset &&
              protocol::ccl_gather_counter(kCounterOffset) + 16 <= kInputOffset);

struct RankL1 {
    uint32_t conn = 0, counter = 0, input = 0, output = 0;
};
RankL1 rank_l1(hal::Arch arch, uint32_t input_bytes) {
    RankL1 l;
    l.conn = protocol::test_l1_base(arch);
    l.counter = l.conn + kCounterOffset;
    l.input = l.conn + kInputOffset;
    l.output = l.input + input_bytes;
    return l;
}

void check_options(hal::Arch arch, const CclOptions& o, size_t ranks) {
    const std::string_view op = ccl_op_name(o.op);
    if (ranks < 2 || ranks > protocol::kCclMaxRanks) {
        fail(ErrorCategory::BadInput,
             "{}: a ring of {} ranks: 2 at least, and a line route reaches at most {} chips", op,
             ranks, protocol::kCclMaxRanks);
    }
    if (o.workers_per_direction == 0 ||
        (o.through_mux && o.workers_per_direction > pf::kMuxMaxChannels)) {
        fail(ErrorCategory::BadInput, "{}: {} workers a direction: 1..{} (through a mux)", op,
             o.workers_per_direction, pf::kMuxMaxChannels);
    }
    if (o.workers_per_direction > 1 && !o.through_mux) {
        fail(ErrorCategory::BadInput,
             "{}: {} workers a direction need a mux (--mux): a router's worker channel takes one "
             "worker at a time",
             op, o.workers_per_direction);
    }
    const uint32_t rings = o.rings();
    if (o.chunk_bytes == 0 || o.chunk_bytes % (16 * rings) != 0) {
        fail(ErrorCategory::BadInput,
             "{}: chunk size {} is not a positive multiple of {}{} (--bytes)", op, o.chunk_bytes,
             16 * rings, rings == 1 ? "" : fmt::format(", 16 for each of {} rings", rings));
    }
    const uint32_t chunk = o.chunk_bytes / rings;
    const RankL1 l = rank_l1(arch, 0);
    const uint32_t room = protocol::test_mailbox_addr(arch) - l.input;
    const uint64_t input_chunks = o.op == protocol::CclOp::AllGather ? 1 : ranks;
    const uint64_t output_chunks = (o.op == protocol::CclOp::AllReduce ? 2 : 1) * ranks;
    if ((input_chunks + output_chunks) * chunk > room) {
        fail(ErrorCategory::BadInput,
             "{}: the input and the output of {} ranks ({} x {} B) do not fit the {} B below a "
             "rank's mailbox",
             op, ranks, input_chunks + output_chunks, chunk, room);
    }
    if (o.timeout_us == 0) fail(ErrorCategory::BadInput, "{}: the timeout is 0 us", op);
}

// The router a rank on `chip` sends through to reach `next`, the next rank's chip: its line's
// first chip is `next`.
using RouterPick = std::function<const RouterPlacement&(ChipId chip, ChipId next, bool reverse)>;

void require_leads(const RouterPlacement& r, const std::vector<ChipId>& line, ChipId next) {
    if (line.empty() || line.front() != next) {
        fail(ErrorCategory::Internal, "ccl: router {} of chip {} does not lead to chip {}",
             r.core.str(), r.chip, next);
    }
}

// The chips of a ring round the cycle: forward as it is, back from the same first chip the
// other way round.
std::vector<ChipId> ring_order(const std::vector<ChipId>& cycle, bool reverse) {
    std::vector<ChipId> order(cycle.size());
    for (size_t i = 0; i < cycle.size(); ++i) {
        order[i] = reverse ? cycle[(cycle.size() - i) % cycle.size()] : cycle[i];
    }
    return order;
}

CoreLocation worker_core(const ChipSocs& socs, ChipId chip, uint32_t index) {
    const auto& workers = socs(chip).cores(CoreType::Worker);
    if (index >= workers.size()) {
        fail(ErrorCategory::BadInput, "ccl: chip {} has {} worker cores, {} are needed", chip,
             workers.size(), index + 1);
    }
    return {chip, workers[index]};
}

// What every rank of every ring shares; channel, rank and next are the ring's.
protocol::CclRingArgs common_args(const CclPlan& p) {
    const RankL1 l = rank_l1(p.arch, p.input_bytes());
    protocol::CclRingArgs a{};
    a.conn_l1 = l.conn;
    a.op = static_cast<uint32_t>(p.options.op);
    a.ranks = p.ranks();
    a.chunk_bytes = p.ring_chunk_bytes();
    a.input_addr = l.input;
    a.output_addr = l.output;
    a.counter_addr = l.counter;
    a.timeout_us = p.options.timeout_us;
    return a;
}

// A chip's mux for one direction: on the worker core after the rings', a channel per ring.
MuxPlacement plan_ccl_mux(const FabricPlan& fabric, const ChipSocs& socs, const CclPlan& p,
                          const RouterPlacement& router, uint32_t direction) {
    MuxOptions mo;
    mo.full_channels = p.options.workers_per_direction;
    mo.full_slots = p.options.mux_slots;
    const uint32_t core = p.options.rings() + direction;
    return plan_mux(fabric, socs(router.chip), router, worker_core(socs, router.chip, core).core,
                    mo);
}

// The rings of one direction, and their muxes.
void plan_direction(const FabricPlan& fabric, const ChipSocs& socs, const ElfImage& kernel,
                    const RouterPick& pick, bool reverse, CclPlan& p) {
    const std::vector<ChipId> order = ring_order(p.cycle, reverse);
    const uint32_t n = p.ranks();
    std::vector<const RouterPlacement*> routers;
    std::vector<size_t> mux_of;  // the index in p.muxes of each rank's mux
    for (uint32_t r = 0; r < n; ++r) {
        routers.push_back(&pick(order[r], order[(r + 1) % n], reverse));
        if (!p.options.through_mux) continue;
        mux_of.push_back(p.muxes.size());
        p.muxes.push_back(plan_ccl_mux(fabric, socs, p, *routers.back(), reverse ? 1 : 0));
    }
    const protocol::CclRingArgs common = common_args(p);
    for (uint32_t w = 0; w < p.options.workers_per_direction; ++w) {
        const uint32_t ring = static_cast<uint32_t>(p.rings.size());
        CclRing& out = p.rings.emplace_back();
        out.reverse = reverse;
        for (uint32_t r = 0; r < n; ++r) {
            const SocDescriptor& soc = socs(order[r]);
            CclRank rank;
            rank.ring = ring;
            rank.router = routers[r];
            rank.target = {worker_core(socs, order[r], ring), &kernel,
                           erisc_placement(hal::arch_map(p.arch), soc.worker_l1_size())};
            const CoreLocation next = worker_core(socs, order[(r + 1) % n], ring);
            rank.args = common;
            rank.args.channel =
                p.options.through_mux
                    ? p.muxes[mux_of[r]].channel(w)
                    : pf::worker_channel(hal::arch_map(p.arch), routers[r]->config,
                                         routers[r]->core.core.x, routers[r]->core.core.y);
            // A reducing piece: one packet of the path (the mux's channel, or the router's).
            rank.args.piece_bytes = p.options.through_mux
                                        ? p.muxes[mux_of[r]].config.full_payload_bytes
                                        : routers[r]->config.payload_bytes;
            rank.args.rank = r;
            rank.args.next_x = next.core.x;
            rank.args.next_y = next.core.y;
            out.ranks.push_back(rank);
        }
    }
}

// The plan of the rings round `cycle` (rank 0 on its first chip).
CclPlan plan_cycle(const FabricPlan& fabric, const std::vector<ChipId>& cycle,
                   const RouterPick& pick, const ChipSocs& socs, const ElfImage& kernel,
                   const CclOptions& o) {
    check_options(fabric.arch, o, cycle.size());
    CclPlan p;
    p.arch = fabric.arch;
    p.options = o;
    p.cycle = cycle;
    plan_direction(fabric, socs, kernel, pick, false, p);
    if (o.bidirectional) plan_direction(fabric, socs, kernel, pick, true, p);
    return p;
}

const RouterPlacement* find_router(const MeshPlan& plan, MeshNode node, MeshDir dir,
                                   uint32_t plane) {
    for (const RouterPlacement& r : plan.fabric.routers) {
        if (r.mesh && r.mesh->node == node && r.mesh->dir == dir && r.mesh->plane == plane)
            return &r;
    }
    return nullptr;
}

// The router of `chip` on `plane` whose line leads first to `next`: `preferred` first, then
// N, E, S, W.
const RouterPlacement& mesh_router_towards(const MeshPlan& plan, uint32_t plane, ChipId chip,
                                           ChipId next, std::optional<MeshDir> preferred) {
    const MeshNode node = plan.node_of(chip);
    std::vector<MeshDir> order{MeshDir::N, MeshDir::E, MeshDir::S, MeshDir::W};
    if (preferred) order.insert(order.begin(), *preferred);
    for (MeshDir d : order) {
        const RouterPlacement* r = find_router(plan, node, d, plane);
        if (r == nullptr) continue;
        const std::vector<ChipId> line = plan.line_chips(*r);
        if (!line.empty() && line.front() == next) return *r;
    }
    fail(ErrorCategory::BadInput, "ccl: no router of {} (chip {}) on plane {} leads to chip {}",
         node.str(), chip, plane, next);
}

template <typename T>
std::vector<uint8_t> bytes_of(const T& v) {
    std::vector<uint8_t> out(sizeof(T));
    std::memcpy(out.data(), &v, sizeof(T));
    return out;
}

std::vector<uint8_t> words_to_bytes(const std::vector<uint32_t>& words) {
    std::vector<uint8_t> out(4 * words.size());
    std::memcpy(out.data(), words.data(), out.size());
    return out;
}

constexpr std::array<std::string_view, 3> kOpNames{"all-gather", "reduce-scatter", "all-reduce"};

}  // namespace

std::string_view ccl_op_name(protocol::CclOp op) {
    const auto i = static_cast<size_t>(op);
    return i < kOpNames.size() ? kOpNames[i] : "unknown";
}

std::optional<protocol::CclOp> parse_ccl_op(std::string_view text) {
    for (size_t i = 0; i < kOpNames.size(); ++i) {
        if (kOpNames[i] == text) return static_cast<protocol::CclOp>(i);
    }
    return std::nullopt;
}

CclPlan plan_ccl(const FabricPlan& plan, const ChipSocs& socs, const ElfImage& kernel,
                 const CclOptions& options) {
    if (plan.topology != pf::Topology::Ring) {
        fail(ErrorCategory::BadInput,
             "{}: the 1D fabric is a {}: a ring {} needs a ring (--topology ring)",
             ccl_op_name(options.op),
             plan.topology == pf::Topology::Line ? "line" : "2D fabric (plan it as a mesh)",
             ccl_op_name(options.op));
    }
    const RouterPick pick = [&](ChipId chip, ChipId next, bool reverse) -> const RouterPlacement& {
        const RouterPlacement& r = plan.router(chip, reverse ? FabricDir::West : FabricDir::East);
        require_leads(r, plan.line_chips(r), next);
        return r;
    };
    return plan_cycle(plan, plan.chips, pick, socs, kernel, options);
}

CclPlan plan_ccl(const MeshPlan& plan, MeshNode node, MeshDir dir, uint32_t plane,
                 const ChipSocs& socs, const ElfImage& kernel, const CclOptions& options) {
    const RouterPlacement& first = plan.router(node, dir, plane);
    const std::vector<ChipId> line = plan.line_chips(first);
    // A ring's line goes on round the wrap link: its last chip's router leads back to the first.
    const RouterPlacement* last =
        line.empty() ? nullptr : find_router(plan, plan.node_of(line.back()), dir, plane);
    const std::vector<ChipId> back = last ? plan.line_chips(*last) : std::vector<ChipId>{};
    if (back.empty() || back.front() != first.chip) {
        fail(ErrorCategory::BadInput,
             "{}: the line of {} is not a ring (a dimension that does not wrap, or an inter-mesh "
             "port)",
             ccl_op_name(options.op), first.mesh->port().str());
    }
    std::vector<ChipId> cycle{first.chip};
    cycle.insert(cycle.end(), line.begin(), line.end());
    const RouterPick pick = [&](ChipId chip, ChipId next, bool reverse) -> const RouterPlacement& {
        return mesh_router_towards(plan, plane, chip, next, reverse ? opposite(dir) : dir);
    };
    return plan_cycle(plan.fabric, cycle, pick, socs, kernel, options);
}

std::vector<MeshNode> ccl_mesh_cycle(const MeshPlan& plan, MeshId mesh) {
    const MeshSpec& spec = plan.map->graph().mesh(mesh);
    const bool by_rows = spec.rows % 2 == 0;  // else snake over the columns (transposed)
    if (spec.rows < 2 || spec.cols < 2 || (!by_rows && spec.cols % 2 != 0)) {
        fail(ErrorCategory::BadInput,
             "ccl: mesh {} is {}x{}: a ring through every chip without wrap links needs at least "
             "2 rows and 2 columns, and an even number of one of them",
             mesh, spec.rows, spec.cols);
    }
    // In (major, minor) terms, major the snaking dimension: along minor 0 .. M-1 at major 0, then
    // back and forth over minors M-1 .. 1 for majors 1 .. last, and back along minor 0.
    const uint32_t majors = by_rows ? spec.rows : spec.cols;
    const uint32_t minors = by_rows ? spec.cols : spec.rows;
    const auto node = [&](uint32_t major, uint32_t minor) {
        const uint32_t row = by_rows ? major : minor, col = by_rows ? minor : major;
        return MeshNode{mesh, row * spec.cols + col};
    };
    std::vector<MeshNode> cycle;
    for (uint32_t m = 0; m < minors; ++m) cycle.push_back(node(0, m));
    for (uint32_t j = 1; j < majors; ++j) {
        for (uint32_t k = 1; k < minors; ++k) cycle.push_back(node(j, j % 2 == 1 ? minors - k : k));
    }
    for (uint32_t j = majors - 1; j >= 1; --j) cycle.push_back(node(j, 0));
    return cycle;
}

CclPlan plan_ccl(const MeshPlan& plan, MeshId mesh, uint32_t plane, const ChipSocs& socs,
                 const ElfImage& kernel, const CclOptions& options) {
    std::vector<ChipId> cycle;
    for (MeshNode n : ccl_mesh_cycle(plan, mesh)) cycle.push_back(plan.chip_of(n));
    const RouterPick pick = [&](ChipId chip, ChipId next, bool) -> const RouterPlacement& {
        return mesh_router_towards(plan, plane, chip, next, std::nullopt);
    };
    return plan_cycle(plan.fabric, cycle, pick, socs, kernel, options);
}

std::vector<uint32_t> ccl_input(const CclPlan& plan, uint32_t ring, uint32_t rank) {
    std::vector<uint32_t> out(plan.input_bytes() / 4);
    const uint32_t seed = plan.options.seed + 0x100 * ring + rank;
    for (uint32_t w = 0; w < out.size(); ++w) out[w] = protocol::pattern_word(seed, w);
    return out;
}

namespace {

// Chunk c's words summed over `count` ranks of `ring` from `first` on round it, into `slot`.
void add_chunk(const CclPlan& plan, uint32_t ring, uint32_t c, uint32_t first, uint32_t count,
               uint32_t* slot) {
    const uint32_t n = plan.ranks();
    const uint32_t words = plan.ring_chunk_bytes() / 4;
    for (uint32_t j = 0; j < count; ++j) {
        const std::vector<uint32_t> in = ccl_input(plan, ring, (first + j) % n);
        for (uint32_t w = 0; w < words; ++w) slot[w] += in[c * words + w];
    }
}

}  // namespace

std::vector<uint32_t> ccl_expected(const CclPlan& plan, uint32_t ring, uint32_t rank) {
    const uint32_t n = plan.ranks();
    const uint32_t words = plan.ring_chunk_bytes() / 4;
    std::vector<uint32_t> out(plan.output_bytes() / 4, 0);
    for (uint32_t c = 0; c < n; ++c) {
        uint32_t* slot = out.data() + c * words;
        if (plan.options.op == protocol::CclOp::AllGather) {
            const std::vector<uint32_t> in = ccl_input(plan, ring, c);
            std::copy(in.begin(), in.end(), slot);
            continue;
        }
        // Reducing: chunk c's chain starts at rank c + 1, which sends its input as it is (its
        // slot c stays 0); rank `rank` holds the sum over the ranks from c + 1 round to itself.
        if (rank != (c + 1) % n) add_chunk(plan, ring, c, c + 1, (rank + n - c - 1) % n + 1, slot);
        // An all-reduce's second half: every chunk's whole sum.
        if (plan.options.op == protocol::CclOp::AllReduce)
            add_chunk(plan, ring, c, 0, n, slot + n * words);
    }
    return out;
}

void load_rank(Device& device, const CclPlan& plan, const CclRank& rank) {
    protocol::TestMailbox m{};
    m.magic = protocol::kTestMailboxMagic;
    m.num_args = sizeof(rank.args) / 4;
    std::memcpy(m.args, &rank.args, sizeof(rank.args));
    const CoreLocation& at = rank.target.core;
    device.write(at, protocol::test_mailbox_addr(plan.arch), bytes_of(m));
    device.write(at, rank.args.input_addr,
                 words_to_bytes(ccl_input(plan, rank.ring, rank.args.rank)));
    device.write(at, rank.args.counter_addr, std::vector<uint8_t>(32, 0));  // an all-reduce: two
    device.write(at, rank.args.output_addr, std::vector<uint8_t>(plan.output_bytes(), 0));
}

uint32_t CclRun::slowest_cycles() const {
    uint32_t most = 0;
    for (const CclRankOutcome& r : ranks) most = std::max(most, r.results.cycles);
    return most;
}

namespace {

std::vector<const CclRank*> all_ranks(const CclPlan& plan) {
    std::vector<const CclRank*> out;
    for (const CclRing& ring : plan.rings) {
        for (const CclRank& r : ring.ranks) out.push_back(&r);
    }
    return out;
}

void start_muxes(FabricRunner& runner, const CclPlan& plan, const ElfImage* image) {
    if (plan.muxes.empty()) return;
    if (image == nullptr)
        fail(ErrorCategory::BadInput, "ccl: a plan through muxes needs their image");
    Device& dev = runner.device();
    for (const MuxPlacement& m : plan.muxes)
        runner.watch(mux_component(m, start_mux(dev, m, dev.soc(m.chip), *image)));
}

}  // namespace

CclRun run_ccl(FabricRunner& runner, const CclPlan& plan, const LaunchOptions& options,
               const ElfImage* mux_image) {
    Device& dev = runner.device();
    const std::vector<const CclRank*> ranks = all_ranks(plan);
    std::vector<LaunchTarget> targets;
    for (const CclRank* r : ranks) targets.push_back(r->target);
    const uint64_t start = dev.cycles();
    start_muxes(runner, plan, mux_image);
    // run_workers sets every rank up before it starts any: a chunk may reach the next rank at once.
    const auto launched = runner.run_workers(targets, options, [&](const LaunchTarget& t) {
        for (const CclRank* r : ranks) {
            if (r->target.core == t.core) load_rank(dev, plan, *r);
        }
    });
    CclRun run;
    for (size_t i = 0; i < ranks.size(); ++i) {
        CclRankOutcome out;
        out.ring = ranks[i]->ring;
        out.rank = ranks[i]->args.rank;
        out.launch = launched.at(i);
        const protocol::TestMailbox mb = read_test_mailbox(dev, plan.arch, targets[i].core);
        out.status = mb.status;
        out.stuck_at = mb.stuck_at;
        std::memcpy(&out.results, mb.results, sizeof(out.results));
        run.ranks.push_back(out);
    }
    for (const MuxPlacement& m : plan.muxes)
        run.muxes.push_back(stop_mux(dev, m, options.max_cycles, options.poll_cycles));
    run.cycles = dev.cycles() - start;
    return run;
}

uint32_t ccl_path_payload(const CclPlan& plan) {
    return plan.options.through_mux ? plan.muxes.front().config.full_payload_bytes
                                    : plan.rings.front().ranks.front().router->config.payload_bytes;
}

uint32_t ccl_packets_per_rank(const CclPlan& plan) {
    const uint32_t payload = ccl_path_payload(plan);
    const uint32_t writes = (plan.ring_chunk_bytes() + payload - 1) / payload;
    const uint32_t steps = plan.ranks() - 1;
    // Whole chunks: one fused packet, or the writes and then the increment.
    const uint32_t gather = steps * (writes == 1 ? 1 : writes + 1);
    const uint32_t reduce = steps * writes;        // a fused packet a piece
    switch (plan.options.op) {
        case protocol::CclOp::AllGather:
            return gather;
        case protocol::CclOp::ReduceScatter:
            return reduce;
        case protocol::CclOp::AllReduce:
            return reduce + gather;
    }
    return 0;
}

namespace {

// A rank's status and counts; its output against the host's.
void rank_problems(Device& device, const CclPlan& plan, const CclRankOutcome& got,
                   std::vector<std::string>& out) {
    const CclRank& rank = plan.rings.at(got.ring).ranks.at(got.rank);
    const uint32_t steps = plan.phases() * (plan.ranks() - 1);
    const std::string who =
        fmt::format("ring {} rank {} ({})", got.ring, got.rank, rank.target.core.str());
    if (got.status != static_cast<uint32_t>(protocol::TestStatus::Done)) {
        out.push_back(
            fmt::format("{}: status 0x{:08x}, stuck_at 0x{:x}, step {}, hal status {}, detail {}",
                        who, got.status, got.stuck_at, got.results.failure.step,
                        got.results.failure.hal_status, got.results.failure.detail));
    }
    if (got.results.sent != steps || got.results.received != steps) {
        out.push_back(fmt::format("{}: sent {} and received {} chunks, not {}", who,
                                  got.results.sent, got.results.received, steps));
    }
    const std::vector<uint32_t> want = ccl_expected(plan, got.ring, got.rank);
    std::vector<uint8_t> raw(plan.output_bytes());
    device.read(rank.target.core, rank.args.output_addr, raw);
    uint32_t bad = 0, first = 0;
    for (uint32_t w = 0; w < want.size(); ++w) {
        uint32_t v = 0;
        std::memcpy(&v, raw.data() + 4 * w, 4);
        if (v != want[w] && bad++ == 0) first = w;
    }
    if (bad != 0) {
        out.push_back(
            fmt::format("{}: {} output words differ from the host's, the first word {} (chunk {})",
                        who, bad, first, first / (plan.ring_chunk_bytes() / 4)));
    }
}

// Every mux forwarded each of its channels' packets, refused none and ended empty.
void mux_problems(const CclPlan& plan, const CclRun& run, std::vector<std::string>& out) {
    const uint32_t packets = ccl_packets_per_rank(plan);
    for (size_t i = 0; i < plan.muxes.size() && i < run.muxes.size(); ++i) {
        const pf::MuxStatusBlock& b = run.muxes[i];
        bool wrong = b.bad_packets != 0 || b.undrained != 0;
        for (uint32_t ch = 0; ch < plan.muxes[i].channels(); ++ch)
            wrong = wrong || b.forwarded[ch] != packets;
        if (wrong) {
            out.push_back(fmt::format("{} packets a channel expected; {}", packets,
                                      describe_mux(plan.muxes[i], b)));
        }
    }
}

}  // namespace

std::vector<std::string> ccl_problems(Device& device, const CclPlan& plan, const CclRun& run) {
    std::vector<std::string> out;
    for (const CclRankOutcome& got : run.ranks) rank_problems(device, plan, got, out);
    mux_problems(plan, run, out);
    return out;
}

double ccl_bus_bandwidth(const CclPlan& plan, const CclRun& run) {
    const uint32_t cycles = run.slowest_cycles();
    if (cycles == 0 || plan.ranks() == 0) return 0;
    return static_cast<double>(plan.phases()) * (plan.ranks() - 1) * plan.options.chunk_bytes /
           cycles;
}

}  // namespace fabric
