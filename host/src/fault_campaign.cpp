#include "fabric/fault_campaign.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>

#include "fabric/cluster_descriptor.h"
#include "fabric/error.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_traffic.h"
#include "fabric/mesh_graph.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "fabric/soc_descriptor.h"

extern char** environ;

namespace fabric {

namespace {

namespace pf = protocol::fabric;

// The order of t3k's 8-chip ring (its 2 x 4 grid walked around); every line is a piece of it.
constexpr std::array<ChipId, 8> kT3kRing{0, 1, 2, 3, 7, 6, 5, 4};

// Weights (per 1,000 iterations): the CI mix (docs/RELIABILITY.md "Fault campaigns"), mostly
// the small fabrics (0.04 s a run on an idle machine for n300, 0.2 s for t3k lines and rings,
// 0.8 s for t3k's two-plane mesh) and a few of the spec's 36-chip cluster (about 20 s each:
// 0.96 M device cycles, 0.89 M of them traffic in 3 rounds).
// Windows: about the traffic's span in device cycles as drawn (measured), so most faults land
// while packets move and the rest while the fabric terminates. Budgets: several times bring-up
// plus traffic plus the longest stall; a run that needs more has hung.
constexpr std::array<CampaignTopologyInfo, kCampaignTopologies> kTopologies{{
    {CampaignTopology::N300Line, false, 450, "n300_cluster.yaml", "", 16'000, 3'000'000, 8},
    {CampaignTopology::T3kLine, false, 250, "t3k_cluster.yaml", "", 24'000, 4'000'000, 8},
    {CampaignTopology::T3kRing, false, 200, "t3k_cluster.yaml", "", 16'000, 5'000'000, 6},
    {CampaignTopology::T3kMesh, true, 96, "t3k_cluster.yaml", "t3k_mesh_graph.yaml", 30'000,
     8'000'000, 3},
    {CampaignTopology::Spec4Mesh, true, 4, "spec_4mesh_3x3_cluster.yaml",
     "spec_4mesh_3x3_mesh_graph.yaml", 600'000, 3'000'000, 1},
}};

constexpr std::array<std::string_view, kCampaignTopologies> kTopologyNames{
    "n300-line", "t3k-line", "t3k-ring", "t3k-mesh", "spec-4mesh"};

// splitmix64: a small generator whose sequence is fixed by its definition (the standard
// library's distributions are not), so a seed draws the same iteration everywhere.
class Draw {
  public:
    explicit Draw(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [lo, hi] (the modulo's bias is below 2^-40 for these ranges).
    uint64_t between(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }
    bool chance(uint32_t percent) { return between(1, 100) <= percent; }
    template <typename T>
    const T& pick(const std::vector<T>& from) {
        return from[next() % from.size()];
    }

  private:
    uint64_t state_;
};

// The iteration's own seed: the campaign's seed and the index, mixed.
uint64_t iteration_seed(uint64_t campaign_seed, uint64_t index) {
    Draw d(campaign_seed ^ (index * 0xD1B54A32D192ED03ull));
    return d.next();
}

std::string path_in(const std::string& dir, const char* file) {
    return dir.empty() ? std::string(file) : dir + "/" + file;
}

// The routers of `plan`; `sink(chip)`: where the traffic lands on that chip.
template <typename Sink>
std::vector<CampaignPort> router_ports(const FabricPlan& plan, const ClusterDescriptor& cluster,
                                       Sink sink) {
    std::vector<CampaignPort> out;
    for (const RouterPlacement& r : plan.routers) {
        const auto peer = cluster.peer({r.chip, r.eth_channel});
        out.push_back({r.chip, r.eth_channel, peer ? peer->chip : r.chip, peer ? peer->chan : 0,
                       r.core.core, sink(r.chip)});
    }
    return out;
}

std::vector<CampaignPort> plan_ports(const CampaignTopologyInfo& t, const std::string& dir) {
    const ClusterDescriptor cluster = ClusterDescriptor::load_file(path_in(dir, t.cluster));
    const SocDescriptor soc = SocDescriptor::load_file(path_in(dir, "wormhole_b0_80_arch.yaml"));
    const HarvestedSocs socs(soc, cluster);
    if (t.mesh) {
        MeshFabricOptions mo;
        mo.planes = {0, 1};
        if (t.topology == CampaignTopology::Spec4Mesh) mo.planes = {0};
        const MeshGraph graph = MeshGraph::load_file(path_in(dir, t.mesh_graph));
        return router_ports(plan_mesh(graph, cluster, soc, mo).fabric, cluster,
                            [&](ChipId chip) { return mesh_traffic_sink(socs(chip), chip); });
    }
    // t3k's lines are pieces of its ring, some across the ring's wrap: the ring's routers.
    FabricOptions fo;
    fo.topology =
        t.topology == CampaignTopology::N300Line ? pf::Topology::Line : pf::Topology::Ring;
    fo.chips = t.topology == CampaignTopology::N300Line
                   ? std::vector<ChipId>{0, 1}
                   : std::vector<ChipId>(kT3kRing.begin(), kT3kRing.end());
    // (A drawn t3k line's sink: the third worker core its chips share; the ring's, unless
    // their harvesting differs.)
    const CoreCoord sink = fabric_traffic_sink(std::cref(socs), fo.chips);
    return router_ports(plan_fabric(cluster, soc, fo), cluster, [&](ChipId) { return sink; });
}

std::vector<CampaignTopology> drawn_topologies(const CampaignOptions& o) {
    if (!o.topologies.empty()) return o.topologies;
    std::vector<CampaignTopology> all;
    for (const auto& t : kTopologies) all.push_back(t.topology);
    return all;
}

CampaignTopology draw_topology(const CampaignOptions& o, Draw& d) {
    const std::vector<CampaignTopology> from = drawn_topologies(o);
    uint64_t total = 0;
    for (CampaignTopology t : from) total += campaign_topology_info(t).weight;
    uint64_t at = d.next() % total;
    for (CampaignTopology t : from) {
        const uint32_t w = campaign_topology_info(t).weight;
        if (at < w) return t;
        at -= w;
    }
    return from.back();
}

std::vector<FaultKind> drawn_kinds(const CampaignOptions& o) {
    if (!o.kinds.empty()) return o.kinds;
    return {FaultKind::LinkFlap, FaultKind::LinkDrop, FaultKind::LinkDelay, FaultKind::RouterStall,
            FaultKind::LinkDown};
}

// The chips of a fabric run: n300's two, a piece of t3k's ring of 3..8 chips, or the ring.
std::vector<ChipId> draw_chips(CampaignTopology t, Draw& d) {
    switch (t) {
        case CampaignTopology::N300Line:
            return {0, 1};
        case CampaignTopology::T3kLine: {
            const auto length = static_cast<size_t>(d.between(3, kT3kRing.size()));
            const auto start = static_cast<size_t>(d.between(0, kT3kRing.size() - 1));
            std::vector<ChipId> chips;
            for (size_t i = 0; i < length; ++i) chips.push_back(kT3kRing[(start + i) % 8]);
            return chips;
        }
        case CampaignTopology::T3kRing:
            return {kT3kRing.begin(), kT3kRing.end()};
        default:
            return {};
    }
}

// The ports an iteration's faults may hit: the routers between its chips (a mesh: all).
std::vector<CampaignPort> usable_ports(const std::vector<CampaignPort>& all,
                                       const std::vector<ChipId>& chips) {
    if (chips.empty()) return all;
    const auto in = [&](ChipId c) {
        return std::find(chips.begin(), chips.end(), c) != chips.end();
    };
    std::vector<CampaignPort> out;
    for (const CampaignPort& p : all) {
        if (in(p.chip) && in(p.peer)) out.push_back(p);
    }
    return out;
}

// A stall this long (cycles: 60 us at 1 GHz, three times the longest packet timeout drawn) may
// be met with the routers' packet timeout.
constexpr uint64_t kLongStall = 60'000;

// A fault's amount: flap period, drop rate, added delay or stall length (fault_plan.h).
uint64_t draw_amount(FaultKind kind, Draw& d) {
    switch (kind) {
        case FaultKind::LinkFlap:
            return d.between(200, 4'000);
        case FaultKind::LinkDrop:
            return d.between(1'000, 100'000);
        case FaultKind::LinkDelay:
            return d.between(10, 5'000);
        case FaultKind::RouterStall:  // a quarter long enough for the packet timeout's drops
            return d.chance(25) ? d.between(kLongStall, 250'000) : d.between(100, 40'000);
        case FaultKind::NocHold:  // a router core: within the routers' 200-us NoC bound
            return d.between(1'000, 100'000);
        case FaultKind::LinkDown:
        default:
            return 0;
    }
}

FaultSpec draw_fault(const std::vector<FaultKind>& kinds, const std::vector<CampaignPort>& ports,
                     uint64_t window, bool link_returns, Draw& d) {
    const FaultKind kind = d.pick(kinds);
    const CampaignPort& port = d.pick(ports);
    const uint64_t at = d.between(0, window - 1);
    uint64_t amount = draw_amount(kind, d);
    if (kind == FaultKind::LinkDown && link_returns) amount = d.between(5'000, 60'000);
    // noc-hold: the router core's NOC ejection (workers' pushes and other routers' forwards), or
    // half the time the chip's sink core (a destination that stops accepting: for good a third of
    // those, else up to 300 us).
    CoreCoord core = port.core;
    if (kind == FaultKind::NocHold && d.chance(50)) {
        core = port.sink;
        amount = d.chance(33) ? 0 : d.between(1'000, 300'000);
    }
    const std::string place = fault_on_core(kind) ? core.str() : std::to_string(port.eth);
    std::string text = fmt::format("{}:{}:{}@{}", fault_kind_name(kind), port.chip, place, at);
    if (amount != 0) text += fmt::format("/{}", amount);
    return parse_fault(text);
}

// The send type and packet size. A scatter-write has two chunks of 16 B at least; the mesh
// kernels' source buffers hold every position of a type counted by position only for packets of
// 1 KiB or less.
void draw_traffic(Iteration& it, Draw& d) {
    static const std::vector<TrafficSendType> kTypes{
        TrafficSendType::UnicastWrite, TrafficSendType::InlineWrite, TrafficSendType::AtomicInc,
        TrafficSendType::FusedWriteAtomicInc, TrafficSendType::ScatterWrite};
    static const std::vector<uint32_t> kBytes{16, 64, 256, 1024, 2048, 4096};
    const TrafficSendType type = d.pick(kTypes);
    it.send_type = traffic_send_type_name(type);
    it.bytes = d.pick(kBytes);
    if (type == TrafficSendType::ScatterWrite)
        it.bytes = std::max(it.bytes, 16 * kTrafficScatterChunks);
    if (campaign_topology_info(it.topology).mesh && !counted_by_increment(type))
        it.bytes = std::min<uint32_t>(it.bytes, 1024);
}

// Whether faults `a` and `b` are on the same link (either end of it).
bool same_link(const FaultSpec& a, const FaultSpec& b, const std::vector<CampaignPort>& ports) {
    if (a.chip == b.chip && a.eth == b.eth) return true;
    return std::any_of(ports.begin(), ports.end(), [&](const CampaignPort& p) {
        return p.chip == a.chip && p.eth == a.eth && p.peer == b.chip && p.peer_eth == b.eth;
    });
}

// A flapping link whose added delay is longer than half its up window never carries a frame
// and its acknowledgement within one: it is a link down for good, which the link-down fault
// draws as such (its runs drain it). Such a delay is cut to half the flap's period.
void keep_flaps_passable(std::vector<FaultSpec>& faults, const std::vector<CampaignPort>& ports) {
    for (const FaultSpec& flap : faults) {
        if (flap.kind != FaultKind::LinkFlap) continue;
        for (FaultSpec& delay : faults) {
            if (delay.kind != FaultKind::LinkDelay || !same_link(flap, delay, ports)) continue;
            const uint64_t most = std::max<uint64_t>(flap.amount / 2, 1);
            if (delay.amount > most) {
                delay = parse_fault(
                    fmt::format("link-delay:{}:{}@{}/{}", delay.chip, delay.eth, delay.at, most));
            }
        }
    }
}

// Whether `f` holds a sink core of `ports`' chips (a destination that stops accepting).
bool holds_sink(const FaultSpec& f, const std::vector<CampaignPort>& ports) {
    return f.kind == FaultKind::NocHold &&
           std::any_of(ports.begin(), ports.end(),
                       [&](const CampaignPort& p) { return p.chip == f.chip && p.sink == f.core; });
}

// The routers' packet timeout, drawn for an iteration with a long stall or a link down; always,
// dropping, with a sink held (what is not accepted is dropped or the run would end only at the
// workers' send timeout).
void draw_packet_timeout(Iteration& it, const std::vector<CampaignPort>& ports, Draw& d) {
    if (std::any_of(it.faults.begin(), it.faults.end(),
                    [&](const FaultSpec& f) { return holds_sink(f, ports); })) {
        it.packet_timeout_us = static_cast<uint32_t>(d.between(5, 20));
        it.on_packet_timeout = "drop";
        return;
    }
    const bool needs = std::any_of(it.faults.begin(), it.faults.end(), [](const FaultSpec& f) {
        return f.kind == FaultKind::LinkDown ||
               (f.kind == FaultKind::RouterStall && f.amount >= kLongStall);
    });
    if (!needs || !d.chance(70)) return;
    it.packet_timeout_us = static_cast<uint32_t>(d.between(5, 20));
    it.on_packet_timeout = d.chance(50) ? "drop" : "hold";
}

std::string shell_quote(const std::string& s) {
    const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("-_./:@,=+").find(c) != std::string_view::npos;
    });
    if (plain) return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

}  // namespace

std::string_view campaign_topology_name(CampaignTopology t) {
    return kTopologyNames.at(static_cast<size_t>(t));
}

std::optional<CampaignTopology> parse_campaign_topology(std::string_view text) {
    for (size_t i = 0; i < kTopologyNames.size(); ++i) {
        if (kTopologyNames[i] == text) return static_cast<CampaignTopology>(i);
    }
    return std::nullopt;
}

const CampaignTopologyInfo& campaign_topology_info(CampaignTopology t) {
    return kTopologies.at(static_cast<size_t>(t));
}

CampaignPorts campaign_ports(const CampaignOptions& options) {
    CampaignPorts out;
    for (CampaignTopology t : drawn_topologies(options))
        out[t] = plan_ports(campaign_topology_info(t), options.descriptor_dir);
    return out;
}

Iteration draw_iteration(const CampaignOptions& o, const CampaignPorts& ports, uint64_t index) {
    Iteration it;
    it.index = index;
    it.seed = iteration_seed(o.seed, index);
    Draw d(it.seed);
    it.topology = draw_topology(o, d);
    const CampaignTopologyInfo& info = campaign_topology_info(it.topology);
    const auto found = ports.find(it.topology);
    if (found == ports.end() || found->second.empty()) {
        fail(ErrorCategory::BadInput, "fault campaign: no router ports planned for {}",
             campaign_topology_name(it.topology));
    }
    it.chips = draw_chips(it.topology, d);
    if (!info.mesh) it.pattern = d.chance(50) ? "neighbour" : "all-to-all";
    it.packets = static_cast<uint32_t>(d.between(1, info.max_packets));
    draw_traffic(it, d);
    const std::vector<CampaignPort> usable = usable_ports(found->second, it.chips);
    const std::vector<FaultKind> kinds = drawn_kinds(o);
    const auto count = static_cast<size_t>(d.chance(70) ? 1 : d.between(2, 3));
    for (size_t i = 0; i < count; ++i)
        it.faults.push_back(draw_fault(kinds, usable, info.traffic_window, o.link_returns, d));
    keep_flaps_passable(it.faults, usable);
    draw_packet_timeout(it, usable, d);
    it.run_seed = d.between(1, 1'000'000);
    it.max_cycles = info.max_cycles;
    return it;
}

std::vector<std::string> Iteration::args(const std::string& dir) const {
    const CampaignTopologyInfo& info = campaign_topology_info(topology);
    std::vector<std::string> a;
    if (info.mesh) {
        a = {"mesh",         "run",
             "--cluster",    path_in(dir, info.cluster),
             "--mesh-graph", path_in(dir, info.mesh_graph)};
        if (topology == CampaignTopology::T3kMesh) a.insert(a.end(), {"--planes", "0,1"});
    } else {
        a = {"fabric",     "run",
             "--cluster",  path_in(dir, info.cluster),
             "--topology", topology == CampaignTopology::T3kRing ? "ring" : "line",
             "--chips",    fmt::format("{}", fmt::join(chips, ",")),
             "--pattern",  pattern};
    }
    a.insert(a.end(), {"--send-type", send_type, "--packets", std::to_string(packets), "--bytes",
                       std::to_string(bytes)});
    for (const FaultSpec& f : faults) a.insert(a.end(), {"--fault", f.text});
    // A link down for good: the host drains its ends at once, so the run ends with every packet
    // named; the other faults are ridden out (no drain, whatever the CLI's default).
    const auto dies = [](const FaultSpec& f) { return f.kind == FaultKind::LinkDown; };
    const bool drain = std::any_of(faults.begin(), faults.end(), dies);
    a.insert(a.end(), {"--on-link-down", drain ? "drain" : "none"});
    if (packet_timeout_us != 0) {
        a.insert(a.end(), {"--packet-timeout-us", std::to_string(packet_timeout_us),
                           "--on-packet-timeout", on_packet_timeout});
    }
    a.insert(a.end(),
             {"--seed", std::to_string(run_seed), "--max-cycles", std::to_string(max_cycles)});
    return a;
}

std::string Iteration::replay(const std::string& dir) const {
    std::string out = "fabricctl";
    for (const std::string& a : args(dir)) out += " " + shell_quote(a);
    return out;
}

std::string Iteration::describe() const {
    std::vector<std::string> specs;
    for (const FaultSpec& f : faults) specs.push_back(f.text);
    std::string out = fmt::format("{}{}{} {} {} x {} B; {}", campaign_topology_name(topology),
                                  pattern.empty() ? "" : " ", pattern, send_type, packets, bytes,
                                  fmt::join(specs, ", "));
    if (packet_timeout_us != 0)
        out += fmt::format("; packet timeout {} us ({})", packet_timeout_us, on_packet_timeout);
    return out + fmt::format(" (seed {})", run_seed);
}

// ---- running a child -------------------------------------------------------------------------

namespace {

// A pipe whose ends close with it.
struct Pipe {
    int fd[2] = {-1, -1};
    Pipe() {
        if (::pipe2(fd, O_CLOEXEC) != 0)
            fail(ErrorCategory::Internal, "fault campaign: pipe: {}", std::strerror(errno));
    }
    ~Pipe() {
        for (int f : fd) {
            if (f >= 0) ::close(f);
        }
    }
    void close_end(int i) {
        ::close(fd[i]);
        fd[i] = -1;
    }
};

pid_t spawn(const std::string& program, const std::vector<std::string>& args, Pipe& out,
            Pipe& err) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out.fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err.fd[1], STDERR_FILENO);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, program.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fail(ErrorCategory::Internal, "fault campaign: cannot start {}: {}", program,
             std::strerror(rc));
    }
    out.close_end(1);
    err.close_end(1);
    return pid;
}

// Reads both pipes until they close or `deadline` passes; false on the deadline.
bool drain(Pipe& out, Pipe& err, ChildRun& run, std::chrono::steady_clock::time_point deadline) {
    std::array<pollfd, 2> fds{{{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}}};
    std::array<std::string*, 2> into{&run.out, &run.err};
    char buf[65536];
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR)
            return false;
        for (size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                into[i]->append(buf, static_cast<size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
            }
        }
    }
    return true;
}

}  // namespace

ChildRun run_child(const std::string& program, const std::vector<std::string>& args,
                   double wall_limit_s) {
    const auto start = std::chrono::steady_clock::now();
    Pipe out, err;
    const pid_t pid = spawn(program, args, out, err);
    ChildRun run;
    const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(wall_limit_s));
    if (!drain(out, err, run, deadline)) {
        ::kill(pid, SIGKILL);
        run.timed_out = true;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return run;
}

// ---- judging ---------------------------------------------------------------------------------

namespace {

constexpr int kExitFabric = 108;  // fabricctl: fabric failure (drops reported, all accounted)
constexpr int kExitBudget = 105;  // fabricctl: cycle budget exhausted

std::string last_line(const std::string& text) {
    std::string t = text;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    const size_t nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

bool ends_with(const std::string& s, std::string_view end) {
    return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

// The account's promise, flow by flow.
void judge_account(const nlohmann::json& account, std::vector<std::string>& failures) {
    for (const nlohmann::json& f : account.at("flows")) {
        const uint64_t sent = f.at("sent"), delivered = f.at("delivered"),
                       dropped = f.at("dropped");
        if (f.at("lost") != 0 || f.at("duplicated") != 0 || delivered + dropped != sent) {
            failures.push_back(
                fmt::format("flow {}: sent {}, delivered {}, dropped {} (lost {}, duplicated {})",
                            f.at("flow").get<std::string>(), sent, delivered, dropped,
                            f.at("lost").get<uint64_t>(), f.at("duplicated").get<uint64_t>()));
        }
    }
    if (account.at("unrecorded_events") != 0) {
        failures.push_back(fmt::format("{} event records not written: drops may be missing",
                                       account.at("unrecorded_events").get<uint64_t>()));
    }
    if (!account.at("stray_drops").empty()) {
        failures.push_back(
            fmt::format("{} dropped packets name no flow", account.at("stray_drops").size()));
    }
}

// "routers delivered X packets, expected Y" (traffic_verdict.h check_router_counters) where the
// deliveries missing are exactly the packets dropped (`dropped`: those the routers did not count
// as delivered; a packet not accepted was issued, so they did).
bool deliveries_short_by(const std::string& line, uint64_t dropped) {
    unsigned long long delivered = 0, expected = 0;
    return std::sscanf(line.c_str(), "routers delivered %llu packets, expected %llu", &delivered,
                       &expected) == 2 &&
           delivered + dropped == expected;
}

// Packets of `account` dropped as not accepted by their destination (those named so, less those
// that landed late: they count as delivered).
uint64_t not_accepted(const nlohmann::json& account) {
    uint64_t n = 0;
    for (const nlohmann::json& flow : account.at("flows")) {
        for (const nlohmann::json& d : flow.at("drops")) {
            if (d.at("reason") == "not_accepted") n += d.at("packets").size();
        }
        n -= flow.value("landed_late", uint64_t{0});
    }
    return n;
}

// The problems a run that kept the promise may have: drops all accounted for, and where packets
// were dropped, the data missing, the routers' rejections and exactly that many deliveries short.
void judge_problems(const nlohmann::json& report, uint64_t dropped,
                    std::vector<std::string>& failures) {
    const uint64_t issued = not_accepted(report.at("account"));
    for (const nlohmann::json& p : report.at("problems")) {
        const std::string line = p.get<std::string>();
        const bool accounted = line.find(" dropped by routers in ") != std::string::npos &&
                               ends_with(line, "(all accounted for)");
        const bool of_drops =
            dropped != 0 &&
            (line.rfind("data from ", 0) == 0 ||
             (line.rfind("chip ", 0) == 0 && line.find(" rejected ") != std::string::npos) ||
             deliveries_short_by(line, dropped - issued));
        if (!accounted && !of_drops) failures.push_back(line);
    }
}

}  // namespace

IterationVerdict judge_iteration(const ChildRun& run, const nlohmann::json* report) {
    IterationVerdict v;
    if (run.timed_out) {
        v.failures.push_back(
            fmt::format("hang: killed after {:.1f} s of wall time", run.wall_seconds));
        return v;
    }
    if (report == nullptr || !report->is_object() || !report->contains("account")) {
        v.failures.push_back(
            fmt::format("exit {} without an account: {}", run.exit_code, last_line(run.err)));
        return v;
    }
    const nlohmann::json& account = report->at("account");
    v.figures = {account.at("sent"), account.at("delivered"), account.at("dropped")};
    if (run.exit_code == kExitBudget) {
        v.failures.push_back("cycle budget exhausted (the run did not end in bounded time): " +
                             report->value("verdict", std::string()));
    } else if (run.exit_code != 0 && run.exit_code != kExitFabric) {
        v.failures.push_back(
            fmt::format("exit {}: {}", run.exit_code, report->value("verdict", std::string())));
    }
    judge_account(account, v.failures);
    judge_problems(*report, v.figures.dropped, v.failures);
    if (v.figures.dropped == 0 && report->value("data_mismatch_words", uint64_t{0}) != 0) {
        v.failures.push_back(fmt::format("{} words differ with nothing dropped",
                                         report->at("data_mismatch_words").get<uint64_t>()));
    }
    return v;
}

// ---- summary ---------------------------------------------------------------------------------

void CampaignSummary::add(const Iteration& it, const IterationVerdict& v, double wall_s) {
    ++iterations;
    failed += v.passed() ? 0 : 1;
    packets.sent += v.figures.sent;
    packets.delivered += v.figures.delivered;
    packets.dropped += v.figures.dropped;
    child_seconds += wall_s;
    const auto count = [&](CampaignTally& t) {
        ++t.iterations;
        t.failed += v.passed() ? 0 : 1;
    };
    count(by_topology[std::string(campaign_topology_name(it.topology))]);
    std::vector<std::string> kinds;
    for (const FaultSpec& f : it.faults) kinds.emplace_back(fault_kind_name(f.kind));
    std::sort(kinds.begin(), kinds.end());
    kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
    for (const std::string& k : kinds) count(by_fault[k]);
}

std::vector<std::string> CampaignSummary::lines() const {
    const double rate = wall_seconds > 0 ? static_cast<double>(iterations) / wall_seconds : 0;
    std::vector<std::string> out{fmt::format(
        "campaign: {} iterations, {} failed, {:.1f} s of runs in {:.1f} s ({:.2f} iterations/s); "
        "packets sent {}, delivered {}, dropped {}",
        iterations, failed, child_seconds, wall_seconds, rate, packets.sent, packets.delivered,
        packets.dropped)};
    for (const auto& [name, t] : by_topology)
        out.push_back(fmt::format("  topology {:<10} {:>7} iterations, {} failed", name,
                                  t.iterations, t.failed));
    for (const auto& [name, t] : by_fault)
        out.push_back(fmt::format("  fault    {:<12} {:>5} iterations, {} failed", name,
                                  t.iterations, t.failed));
    return out;
}

nlohmann::json CampaignSummary::json() const {
    const auto tallies = [](const std::map<std::string, CampaignTally>& m) {
        nlohmann::json j = nlohmann::json::object();
        for (const auto& [name, t] : m)
            j[name] = {{"iterations", t.iterations}, {"failed", t.failed}};
        return j;
    };
    return {{"iterations", iterations},
            {"failed", failed},
            {"sent", packets.sent},
            {"delivered", packets.delivered},
            {"dropped", packets.dropped},
            {"wall_seconds", wall_seconds},
            {"run_seconds", child_seconds},
            {"iterations_per_second",
             wall_seconds > 0 ? static_cast<double>(iterations) / wall_seconds : 0.0},
            {"by_topology", tallies(by_topology)},
            {"by_fault", tallies(by_fault)}};
}

}  // namespace fabric
