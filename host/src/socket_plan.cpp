#include "fabric/socket_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>

#include "fabric/error.h"
#include "hal/status.h"
#include "protocol/test_kernels.h"
#include "protocol/test_mailbox.h"

namespace fabric {

namespace pf = protocol::fabric;
using protocol::SocketEnd;

namespace {

constexpr std::array<std::string_view, 2> kSideNames{"sender", "receiver"};
// An end's words, connection and stream header lie below its ring or source.
static_assert(protocol::kSocketEndpointL1Bytes <= kSocketBufferOffset);

// One direction of a socket: the router an end sends through and the route to the other end.
struct SocketRoute {
    pf::WorkerChannel channel{};
    pf::Route route;
    uint32_t hops = 0;
};
using RouteFinder = std::function<SocketRoute(ChipId from, ChipId to)>;

template <typename T>
std::vector<uint8_t> bytes_of(const T& v) {
    std::vector<uint8_t> out(sizeof(T));
    std::memcpy(out.data(), &v, sizeof(T));
    return out;
}

void check_sizes(const SocketOptions& o) {
    if (o.bytes == 0 || o.bytes % 16 != 0) {
        fail(ErrorCategory::BadInput, "socket: stream size {} is not a positive multiple of 16",
             o.bytes);
    }
    if (o.bytes > protocol::kSocketMaxBytes) {
        fail(ErrorCategory::BadInput, "socket: stream size {} B: a close word carries at most {} B",
             o.bytes, protocol::kSocketMaxBytes);
    }
    if (o.page_bytes == 0 || o.page_bytes % 16 != 0) {
        fail(ErrorCategory::BadInput, "socket: page size {} is not a positive multiple of 16",
             o.page_bytes);
    }
    if (o.ring_pages == 0) fail(ErrorCategory::BadInput, "socket: the ring needs at least 1 page");
}

void check_close(const SocketOptions& o, uint32_t pages) {
    if (o.close_after != 0 && o.close_after >= pages) {
        fail(ErrorCategory::BadInput,
             "socket: close after {} pages: the stream has only {} pages of {} B, so it ends first",
             o.close_after, pages, o.page_bytes);
    }
}

// The end's core is a worker core of its chip (harvested ones are not).
void check_worker(const ChipSocs& socs, const CoreLocation& at, std::string_view side) {
    const auto& workers = socs(at.chip).cores(CoreType::Worker);
    if (std::find(workers.begin(), workers.end(), at.core) == workers.end()) {
        fail(ErrorCategory::BadInput, "socket: the {} core {} of chip {} is not a worker core",
             side, at.core.str(), at.chip);
    }
}

void check_ends(const CoreLocation& from, const CoreLocation& to) {
    if (from == to) {
        fail(ErrorCategory::BadInput, "socket: sender and receiver are the same core ({})",
             from.str());
    }
    if (from.chip == to.chip) {
        fail(ErrorCategory::BadInput,
             "socket: sender and receiver are both on chip {}: a socket crosses the fabric "
             "between two chips",
             from.chip);
    }
}

uint32_t pages_of(uint32_t bytes, uint32_t page_bytes) {
    return static_cast<uint32_t>((uint64_t{bytes} + page_bytes - 1) / page_bytes);
}

// The source: as many pages as fit (at most the stream's; the ring fits the same room, so a page
// does), never a multiple of the ring when it wraps, so a page in the wrong ring slot cannot hold
// the bytes expected there.
uint32_t source_pages(const SocketOptions& o, uint32_t room) {
    const uint32_t fit = room / o.page_bytes;
    const uint32_t pages = pages_of(o.bytes, o.page_bytes);
    if (pages <= fit) return pages;
    return fit % o.ring_pages == 0 && fit > 1 ? fit - 1 : fit;
}

// Where both ends keep their words, ring or source, and the receiver its output (the top of
// socket_plan.h); Error(BadInput) when the ring or the output does not fit.
struct SocketL1 {
    uint32_t words = 0;   // socket words, connection, stream header
    uint32_t buffer = 0;  // the receiver's ring, the sender's source
    uint32_t room = 0;    // bytes from buffer to the mailbox
    uint32_t output = 0;  // the receiver's output
};
SocketL1 socket_l1(hal::Arch arch, const SocketOptions& o, const CoreLocation& to,
                   uint32_t to_l1_size) {
    SocketL1 l1;
    l1.words = protocol::test_l1_base(arch);
    l1.buffer = l1.words + kSocketBufferOffset;
    l1.room = protocol::test_mailbox_addr(arch) - l1.buffer;
    l1.output = mesh_sink_base(arch);
    if (uint64_t{o.ring_pages} * o.page_bytes > l1.room) {
        fail(ErrorCategory::BadInput,
             "socket: the ring of {} pages of {} B does not fit the receiver's {} B below its "
             "mailbox",
             o.ring_pages, o.page_bytes, l1.room);
    }
    if (uint64_t{l1.output} + o.bytes > to_l1_size) {
        fail(ErrorCategory::BadInput,
             "socket: the receiver's output of {} B from 0x{:x} passes the end of its L1 ({} B, "
             "{})",
             o.bytes, l1.output, to_l1_size, to.str());
    }
    return l1;
}

// One end's kernel and arguments: on `at`, sending through `r` to `peer`.
SocketEndPlan end_plan(const SocketPlan& p, SocketSide side, const CoreLocation& at,
                       const CoreLocation& peer, const SocketRoute& r, const SocketL1& l1,
                       const SocDescriptor& soc, const ElfImage& kernel) {
    const SocketOptions& o = p.options;
    SocketEndPlan e;
    e.target = {at, &kernel, erisc_placement(hal::arch_map(p.arch), soc.worker_l1_size())};
    e.hops = r.hops;
    e.name = fmt::format("{} {}", socket_side_name(side), at.str());
    auto& a = e.args;
    a.channel = r.channel;
    a.socket.peer = {r.route.hops,     r.route.ext, r.route.flags_word,
                     r.route.dst_node, peer.core.x, peer.core.y};
    a.socket.ring_addr = l1.buffer;
    a.socket.ring_pages = o.ring_pages;
    a.socket.page_bytes = o.page_bytes;
    a.socket.words_addr = l1.words;
    a.total_bytes = o.bytes;
    a.timeout_us = o.timeout_us;
    a.close_after_pages = o.close_from == side ? o.close_after : 0;
    if (side == SocketSide::Sender) {
        a.data_addr = l1.buffer;
        a.source_bytes = source_pages(o, l1.room) * o.page_bytes;
    } else {
        a.data_addr = l1.output;
        a.consume_delay = o.consume_delay;
    }
    return e;
}

SocketPlan plan_with(hal::Arch arch, const ChipSocs& socs, const ElfImage& kernel,
                     const CoreLocation& from, const CoreLocation& to, const SocketOptions& o,
                     const RouteFinder& route) {
    check_sizes(o);
    check_ends(from, to);
    check_worker(socs, from, "sender");
    check_worker(socs, to, "receiver");
    SocketPlan p;
    p.arch = arch;
    p.options = o;
    check_close(o, p.pages());
    const SocketL1 l1 = socket_l1(arch, o, to, socs(to.chip).worker_l1_size());
    p.sender = end_plan(p, SocketSide::Sender, from, to, route(from.chip, to.chip), l1,
                        socs(from.chip), kernel);
    p.receiver = end_plan(p, SocketSide::Receiver, to, from, route(to.chip, from.chip), l1,
                          socs(to.chip), kernel);
    return p;
}

// Error(BadInput) unless `chip` is one of the fabric's.
void check_in_fabric(const std::vector<ChipId>& chips, ChipId chip) {
    if (std::find(chips.begin(), chips.end(), chip) == chips.end())
        fail(ErrorCategory::BadInput, "socket: chip {} is not in the fabric", chip);
}

// The direction with fewer hops (a line has one).
SocketRoute route_1d(const FabricPlan& plan, ChipId from, ChipId to) {
    check_in_fabric(plan.chips, from);
    check_in_fabric(plan.chips, to);
    std::optional<SocketRoute> best;
    for (FabricDir dir : {FabricDir::East, FabricDir::West}) {
        uint32_t hops = 0;
        try {
            hops = plan.hops(from, to, dir);
        } catch (const Error&) {
            continue;  // not that way on a line
        }
        if (best && best->hops <= hops) continue;
        best = SocketRoute{plan.worker_channel(from, dir),
                           pf::Route{pf::route_unicast(hops)}.with_ttl(plan.ttl()), hops};
    }
    if (!best) fail(ErrorCategory::BadInput, "socket: no route from chip {} to chip {}", from, to);
    return *best;
}

SocketRoute route_2d(const MeshPlan& plan, ChipId from, ChipId to, uint32_t plane) {
    check_in_fabric(plan.fabric.chips, from);
    check_in_fabric(plan.fabric.chips, to);
    const MeshNode src = plan.node_of(from), dst = plan.node_of(to);
    const MeshSend s = plan.send(src, dst, plane);
    // Every link on the way (MeshSend::hops stops at the first entry node between meshes).
    const auto hops = static_cast<uint32_t>(plan.links(src, dst, plane).size());
    return SocketRoute{plan.worker_channel(*s.router), s.route, hops};
}

}  // namespace

std::string_view socket_side_name(SocketSide s) {
    return kSideNames.at(static_cast<size_t>(s));
}

std::optional<SocketSide> parse_socket_side(std::string_view text) {
    for (size_t i = 0; i < kSideNames.size(); ++i) {
        if (kSideNames[i] == text) return static_cast<SocketSide>(i);
    }
    return std::nullopt;
}

static_assert(static_cast<uint32_t>(protocol::SocketStatus::BadConfig) == 7 &&
                  static_cast<uint32_t>(protocol::SocketEnd::ClosedByPeer) == 2,
              "the names below follow the protocol's values");

std::string socket_status_name(uint32_t status) {
    static constexpr std::array<std::string_view, 8> kNames{
        "ok",           "peer_closed", "room_timeout", "data_timeout",
        "acks_timeout", "terminated",  "fabric_error", "bad_config"};
    if (status < kNames.size()) return std::string(kNames[status]);
    return fmt::format("unknown({})", status);
}

std::string socket_end_name(uint32_t end) {
    static constexpr std::array<std::string_view, 3> kNames{"complete", "closed here",
                                                            "closed by its peer"};
    if (end < kNames.size()) return std::string(kNames[end]);
    return fmt::format("unknown({})", end);
}

uint32_t SocketPlan::pages() const {
    return pages_of(options.bytes, options.page_bytes);
}

SocketPlan plan_socket(const FabricPlan& plan, const ChipSocs& socs, const ElfImage& kernel,
                       const CoreLocation& from, const CoreLocation& to,
                       const SocketOptions& options) {
    return plan_with(plan.arch, socs, kernel, from, to, options,
                     [&](ChipId a, ChipId b) { return route_1d(plan, a, b); });
}

SocketPlan plan_socket(const MeshPlan& plan, const ChipSocs& socs, const ElfImage& kernel,
                       const CoreLocation& from, const CoreLocation& to,
                       const SocketOptions& options) {
    return plan_with(plan.fabric.arch, socs, kernel, from, to, options,
                     [&](ChipId a, ChipId b) { return route_2d(plan, a, b, options.plane); });
}

uint32_t socket_stream_word(const SocketPlan& plan, uint32_t w) {
    return protocol::pattern_word(plan.options.seed, w % (plan.source_bytes() / 4));
}

void load_socket_end(Device& device, const SocketPlan& plan, SocketSide side) {
    const SocketEndPlan& e = side == SocketSide::Sender ? plan.sender : plan.receiver;
    protocol::TestMailbox m{};
    m.magic = protocol::kTestMailboxMagic;
    m.role = static_cast<uint32_t>(side == SocketSide::Sender ? protocol::KernelRole::Master
                                                              : protocol::KernelRole::Subordinate);
    m.num_args = sizeof(e.args) / 4;
    std::memcpy(m.args, &e.args, sizeof(e.args));
    device.write(e.target.core, protocol::test_mailbox_addr(plan.arch), bytes_of(m));
    device.write(e.target.core, e.args.socket.words_addr,
                 std::vector<uint8_t>(protocol::kSocketWordsBytes, 0));
    if (side == SocketSide::Sender) {
        std::vector<uint8_t> src(plan.source_bytes());
        for (uint32_t w = 0; w < src.size() / 4; ++w) {
            const uint32_t v = protocol::pattern_word(plan.options.seed, w);
            std::memcpy(src.data() + 4 * w, &v, 4);
        }
        device.write(e.target.core, e.args.data_addr, src);
    } else {
        device.write(e.target.core, e.args.data_addr, std::vector<uint8_t>(plan.options.bytes, 0));
    }
}

bool SocketEndOutcome::passed() const {
    return launch.outcome == LaunchOutcome::Exited &&
           status == static_cast<uint32_t>(protocol::TestStatus::Done);
}

SocketRun run_socket(FabricRunner& runner, const SocketPlan& plan, const LaunchOptions& options) {
    Device& dev = runner.device();
    const std::array<LaunchTarget, 2> targets{plan.sender.target, plan.receiver.target};
    const uint64_t start = dev.cycles();
    const auto res = runner.run_workers(targets, options, [&](const LaunchTarget& t) {
        load_socket_end(
            dev, plan,
            t.core == plan.sender.target.core ? SocketSide::Sender : SocketSide::Receiver);
    });
    SocketRun run;
    run.cycles = dev.cycles() - start;
    const auto outcome = [&](const SocketEndPlan& e, const LaunchResult& launch) {
        SocketEndOutcome out;
        out.launch = launch;
        const protocol::TestMailbox mb = read_test_mailbox(dev, plan.arch, e.target.core);
        out.status = mb.status;
        out.stuck_at = mb.stuck_at;
        std::memcpy(&out.results, mb.results, sizeof(out.results));
        return out;
    };
    run.sender = outcome(plan.sender, res.at(0));
    run.receiver = outcome(plan.receiver, res.at(1));
    return run;
}

SocketExpect socket_expect(const SocketPlan& plan) {
    const SocketOptions& o = plan.options;
    SocketExpect e;
    if (o.close_after == 0) {
        e.bytes = o.bytes;
        e.pages = plan.pages();
        return e;
    }
    e.pages = o.close_after;
    e.bytes = o.close_after * o.page_bytes;  // every page before the last is whole
    const bool sender_closes = o.close_from == SocketSide::Sender;
    e.sender_end = sender_closes ? SocketEnd::ClosedHere : SocketEnd::ClosedByPeer;
    e.receiver_end = sender_closes ? SocketEnd::ClosedByPeer : SocketEnd::ClosedHere;
    return e;
}

namespace {

void check_end(const SocketEndPlan& e, const SocketEndOutcome& o, std::vector<std::string>& out) {
    if (!o.passed()) {
        out.push_back(fmt::format(
            "{}: {} with status 0x{:08x}, stuck_at 0x{:x}, socket status {}, hal status {}", e.name,
            outcome_name(o.launch.outcome), o.status, o.stuck_at,
            socket_status_name(o.results.socket_status),
            hal::to_string(static_cast<hal::Status>(o.results.last_hal_status))));
    }
}

void expect_eq(std::vector<std::string>& out, const SocketEndPlan& e, std::string_view what,
               uint64_t got, uint64_t want) {
    if (got != want) out.push_back(fmt::format("{}: {} {}, expected {}", e.name, what, got, want));
}

}  // namespace

std::vector<std::string> socket_problems(const SocketPlan& plan, const SocketRun& run) {
    std::vector<std::string> out;
    check_end(plan.sender, run.sender, out);
    check_end(plan.receiver, run.receiver, out);
    if (!out.empty()) return out;
    const SocketExpect x = socket_expect(plan);
    const auto& s = run.sender.results;
    const auto& r = run.receiver.results;
    expect_eq(out, plan.receiver, "bytes consumed", r.bytes_consumed, x.bytes);
    expect_eq(out, plan.receiver, "pages consumed", r.pages, x.pages);
    expect_eq(out, plan.sender, "bytes acknowledged", s.bytes_acked, x.bytes);
    if (x.sender_end == SocketEnd::ClosedByPeer) {
        // It may have sent up to a ring past what the receiver consumed before its close.
        if (s.bytes_sent < x.bytes || s.bytes_sent > x.bytes + plan.ring_bytes()) {
            out.push_back(fmt::format("{}: sent {} B, expected {} to {}", plan.sender.name,
                                      s.bytes_sent, x.bytes, x.bytes + plan.ring_bytes()));
        }
    } else {
        expect_eq(out, plan.sender, "bytes sent", s.bytes_sent, x.bytes);
        expect_eq(out, plan.sender, "pages sent", s.pages, x.pages);
        expect_eq(out, plan.receiver, "bytes received", r.bytes_received, x.bytes);
    }
    for (const auto& [e, got, want] :
         {std::tuple{&plan.sender, s.end, x.sender_end}, {&plan.receiver, r.end, x.receiver_end}}) {
        if (got != static_cast<uint32_t>(want)) {
            out.push_back(fmt::format("{}: ended {}, expected {}", e->name, socket_end_name(got),
                                      socket_end_name(static_cast<uint32_t>(want))));
        }
    }
    return out;
}

PatternCheck check_socket_output(Device& device, const SocketPlan& plan, uint32_t bytes) {
    std::vector<uint8_t> got(bytes);
    device.read(plan.receiver.target.core, plan.output_addr(), got);
    PatternCheck c;
    const uint32_t page = plan.options.page_bytes;
    for (uint32_t w = 0; w < bytes / 4; ++w) {
        uint32_t v;
        std::memcpy(&v, got.data() + 4 * w, 4);
        if (v == socket_stream_word(plan, w)) continue;
        if (c.bad_words == 0) c.first_bad = 4 * w;
        ++c.bad_words;
        const uint32_t p = 4 * w / page;
        if (c.bad_positions.empty() || c.bad_positions.back() != p) c.bad_positions.push_back(p);
    }
    return c;
}

}  // namespace fabric
