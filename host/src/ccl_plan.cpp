#include "fabric/ccl_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

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
    if (ranks > protocol::kCclMaxRanks) {
        fail(ErrorCategory::BadInput,
             "{}: a ring of {} ranks: a line route reaches at most {} chips", op, ranks,
             protocol::kCclMaxRanks);
    }
    if (o.chunk_bytes == 0 || o.chunk_bytes % 16 != 0) {
        fail(ErrorCategory::BadInput,
             "{}: chunk size {} is not a positive multiple of 16 (--bytes)", op, o.chunk_bytes);
    }
    const RankL1 l = rank_l1(arch, 0);
    const uint32_t room = protocol::test_mailbox_addr(arch) - l.input;
    const uint64_t input_chunks = o.op == protocol::CclOp::AllGather ? 1 : ranks;
    const uint64_t output_chunks = (o.op == protocol::CclOp::AllReduce ? 2 : 1) * ranks;
    if ((input_chunks + output_chunks) * o.chunk_bytes > room) {
        fail(ErrorCategory::BadInput,
             "{}: the input and the output of {} ranks ({} x {} B) do not fit the {} B below a "
             "rank's mailbox",
             op, ranks, input_chunks + output_chunks, o.chunk_bytes, room);
    }
    if (o.timeout_us == 0) fail(ErrorCategory::BadInput, "{}: the timeout is 0 us", op);
}

// The plan of a ring whose routers are `ring` (in order; each one's line leads to the next).
CclPlan plan_ring(hal::Arch arch, const std::vector<const RouterPlacement*>& ring,
                  const ChipSocs& socs, const ElfImage& kernel, const CclOptions& o) {
    check_options(arch, o, ring.size());
    CclPlan p;
    p.arch = arch;
    p.options = o;
    const uint32_t n = static_cast<uint32_t>(ring.size());
    const RankL1 l = rank_l1(arch, protocol::ccl_input_bytes(o.op, n, o.chunk_bytes));
    const auto worker_of = [&](ChipId chip) {
        return CoreLocation{chip, socs(chip).cores(CoreType::Worker).at(0)};
    };
    for (uint32_t r = 0; r < n; ++r) {
        const RouterPlacement& via = *ring[r];
        const SocDescriptor& soc = socs(via.chip);
        CclRank rank;
        rank.router = &via;
        rank.target = {worker_of(via.chip), &kernel,
                       erisc_placement(hal::arch_map(arch), soc.worker_l1_size())};
        const CoreLocation next = worker_of(ring[(r + 1) % n]->chip);
        auto& a = rank.args;
        a.channel =
            pf::worker_channel(hal::arch_map(arch), via.config, via.core.core.x, via.core.core.y);
        a.conn_l1 = l.conn;
        a.op = static_cast<uint32_t>(o.op);
        a.rank = r;
        a.ranks = n;
        a.chunk_bytes = o.chunk_bytes;
        a.input_addr = l.input;
        a.output_addr = l.output;
        a.counter_addr = l.counter;
        a.next_x = next.core.x;
        a.next_y = next.core.y;
        a.timeout_us = o.timeout_us;
        p.ranks.push_back(rank);
    }
    return p;
}

// Each router's line must start at the next rank's chip (a ring's lines do).
void check_ring(const std::vector<const RouterPlacement*>& ring,
                const std::vector<std::vector<ChipId>>& lines) {
    for (size_t r = 0; r < ring.size(); ++r) {
        const ChipId next = ring[(r + 1) % ring.size()]->chip;
        if (lines[r].empty() || lines[r].front() != next) {
            fail(ErrorCategory::Internal,
                 "ccl: router {} of rank {} does not lead to chip {}, the next rank's",
                 ring[r]->core.str(), r, next);
        }
    }
}

const RouterPlacement* find_router(const MeshPlan& plan, MeshNode node, MeshDir dir,
                                   uint32_t plane) {
    for (const RouterPlacement& r : plan.fabric.routers) {
        if (r.mesh && r.mesh->node == node && r.mesh->dir == dir && r.mesh->plane == plane)
            return &r;
    }
    return nullptr;
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
    std::vector<const RouterPlacement*> ring;
    std::vector<std::vector<ChipId>> lines;
    for (ChipId chip : plan.chips) {
        ring.push_back(&plan.router(chip, FabricDir::East));
        lines.push_back(plan.line_chips(*ring.back()));
    }
    check_options(plan.arch, options, ring.size());
    check_ring(ring, lines);
    return plan_ring(plan.arch, ring, socs, kernel, options);
}

CclPlan plan_ccl(const MeshPlan& plan, MeshNode node, MeshDir dir, uint32_t plane,
                 const ChipSocs& socs, const ElfImage& kernel, const CclOptions& options) {
    const RouterPlacement& first = plan.router(node, dir, plane);
    const std::vector<ChipId> line = plan.line_chips(first);
    const std::string port = first.mesh->port().str();
    std::vector<const RouterPlacement*> ring{&first};
    std::vector<std::vector<ChipId>> lines{line};
    for (ChipId chip : line) {
        const RouterPlacement* r = find_router(plan, plan.node_of(chip), dir, plane);
        if (r == nullptr) {
            fail(ErrorCategory::BadInput,
                 "{}: the line of {} is not a ring: it ends at chip {} (a dimension that does "
                 "not wrap)",
                 ccl_op_name(options.op), port, chip);
        }
        ring.push_back(r);
        lines.push_back(plan.line_chips(*r));
    }
    if (line.empty() || lines.back().empty() || lines.back().front() != first.chip) {
        fail(ErrorCategory::BadInput,
             "{}: the line of {} is not a ring (a dimension that does not wrap, or an inter-mesh "
             "port)",
             ccl_op_name(options.op), port);
    }
    check_options(plan.fabric.arch, options, ring.size());
    check_ring(ring, lines);
    return plan_ring(plan.fabric.arch, ring, socs, kernel, options);
}

std::vector<uint32_t> ccl_input(const CclPlan& plan, uint32_t rank) {
    std::vector<uint32_t> out(plan.input_bytes() / 4);
    for (uint32_t w = 0; w < out.size(); ++w) {
        out[w] = protocol::pattern_word(plan.options.seed + rank, w);
    }
    return out;
}

namespace {

// Chunk c's words summed over `count` ranks from `first` on round the ring, into `slot`.
void add_chunk(const CclPlan& plan, uint32_t c, uint32_t first, uint32_t count, uint32_t* slot) {
    const uint32_t n = static_cast<uint32_t>(plan.ranks.size());
    const uint32_t words = plan.options.chunk_bytes / 4;
    for (uint32_t j = 0; j < count; ++j) {
        const std::vector<uint32_t> in = ccl_input(plan, (first + j) % n);
        for (uint32_t w = 0; w < words; ++w) slot[w] += in[c * words + w];
    }
}

}  // namespace

std::vector<uint32_t> ccl_expected(const CclPlan& plan, uint32_t rank) {
    const uint32_t n = static_cast<uint32_t>(plan.ranks.size());
    const uint32_t words = plan.options.chunk_bytes / 4;
    std::vector<uint32_t> out(plan.output_bytes() / 4, 0);
    for (uint32_t c = 0; c < n; ++c) {
        uint32_t* slot = out.data() + c * words;
        if (plan.options.op == protocol::CclOp::AllGather) {
            const std::vector<uint32_t> in = ccl_input(plan, c);
            std::copy(in.begin(), in.end(), slot);
            continue;
        }
        // Reducing: chunk c's chain starts at rank c + 1, which sends its input as it is (its
        // slot c stays 0); rank `rank` holds the sum over the ranks from c + 1 round to itself.
        if (rank != (c + 1) % n) add_chunk(plan, c, c + 1, (rank + n - c - 1) % n + 1, slot);
        // An all-reduce's second half: every chunk's whole sum.
        if (plan.options.op == protocol::CclOp::AllReduce)
            add_chunk(plan, c, 0, n, slot + n * words);
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
    device.write(at, rank.args.input_addr, words_to_bytes(ccl_input(plan, rank.args.rank)));
    device.write(at, rank.args.counter_addr, std::vector<uint8_t>(32, 0));  // an all-reduce: two
    device.write(at, rank.args.output_addr, std::vector<uint8_t>(plan.output_bytes(), 0));
}

uint32_t CclRun::slowest_cycles() const {
    uint32_t most = 0;
    for (const CclRankOutcome& r : ranks) most = std::max(most, r.results.cycles);
    return most;
}

CclRun run_ccl(FabricRunner& runner, const CclPlan& plan, const LaunchOptions& options) {
    Device& dev = runner.device();
    std::vector<LaunchTarget> targets;
    for (const CclRank& r : plan.ranks) targets.push_back(r.target);
    const uint64_t start = dev.cycles();
    // run_workers sets every rank up before it starts any: a chunk may reach the next rank at once.
    const auto launched = runner.run_workers(targets, options, [&](const LaunchTarget& t) {
        for (const CclRank& r : plan.ranks) {
            if (r.target.core == t.core) load_rank(dev, plan, r);
        }
    });
    CclRun run;
    run.cycles = dev.cycles() - start;
    for (size_t i = 0; i < plan.ranks.size(); ++i) {
        CclRankOutcome out;
        out.launch = launched.at(i);
        const protocol::TestMailbox mb = read_test_mailbox(dev, plan.arch, targets[i].core);
        out.status = mb.status;
        out.stuck_at = mb.stuck_at;
        std::memcpy(&out.results, mb.results, sizeof(out.results));
        run.ranks.push_back(out);
    }
    return run;
}

std::vector<std::string> ccl_problems(Device& device, const CclPlan& plan, const CclRun& run) {
    std::vector<std::string> out;
    const uint32_t steps = plan.phases() * (static_cast<uint32_t>(plan.ranks.size()) - 1);
    for (size_t i = 0; i < plan.ranks.size(); ++i) {
        const CclRank& rank = plan.ranks[i];
        const CclRankOutcome& got = run.ranks.at(i);
        const std::string who = fmt::format("rank {} ({})", i, rank.target.core.str());
        if (got.status != static_cast<uint32_t>(protocol::TestStatus::Done)) {
            out.push_back(fmt::format(
                "{}: status 0x{:08x}, stuck_at 0x{:x}, step {}, hal status {}, detail {}", who,
                got.status, got.stuck_at, got.results.failure.step, got.results.failure.hal_status,
                got.results.failure.detail));
        }
        if (got.results.sent != steps || got.results.received != steps) {
            out.push_back(fmt::format("{}: sent {} and received {} chunks, not {}", who,
                                      got.results.sent, got.results.received, steps));
        }
        const std::vector<uint32_t> want = ccl_expected(plan, static_cast<uint32_t>(i));
        std::vector<uint8_t> raw(plan.output_bytes());
        device.read(rank.target.core, rank.args.output_addr, raw);
        uint32_t bad = 0, first = 0;
        for (uint32_t w = 0; w < want.size(); ++w) {
            uint32_t v = 0;
            std::memcpy(&v, raw.data() + 4 * w, 4);
            if (v != want[w] && bad++ == 0) first = w;
        }
        if (bad != 0) {
            out.push_back(fmt::format(
                "{}: {} output words differ from the host's, the first word {} (chunk {})", who,
                bad, first, first / (plan.options.chunk_bytes / 4)));
        }
    }
    return out;
}

double ccl_bus_bandwidth(const CclPlan& plan, const CclRun& run) {
    const uint32_t cycles = run.slowest_cycles();
    if (cycles == 0 || plan.ranks.empty()) return 0;
    return static_cast<double>(plan.phases()) * static_cast<double>(plan.ranks.size() - 1) *
           plan.options.chunk_bytes / cycles;
}

}  // namespace fabric
