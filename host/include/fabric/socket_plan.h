// Sockets over a fabric that is up (seeds/000 §5; worker side: firmware/include/fabric/socket.h,
// protocol/socket.h): plan a socket pair between a worker core of one chip and a worker core of
// another, on a 1D fabric (FabricPlan: line or ring) or a 2D one (MeshPlan: mesh, torus, between
// meshes), run the socket_stream kernels at both ends through FabricRunner::run_workers, read
// what each end reports and check every byte the receiver wrote out. Over any Device; no output.
//
//   routes    sender -> receiver for the pages and the sender's close, receiver -> sender for the
//             acknowledgements and the receiver's close: each end sends through a router on its
//             own chip (1D: the direction with fewer hops; 2D: MeshPlan::send on `plane`).
//   L1        the same on both ends, from protocol::test_l1_base: the socket words (32 B), the
//             fabric connection and the sender's stream header (protocol::socket_stream_l1),
//             then from base + kSocketBufferOffset to the test mailbox the
//             receiver's ring or the sender's source (a NoC source or ring must lie where the
//             core's NoC reaches locally); the receiver's output (the whole stream) from
//             mesh_sink_base up to the end of its L1.
//   source    a whole number of pages (as many as fit, fewer than the stream when it is longer,
//             never a multiple of the ring, so a page in the wrong slot cannot pass the check):
//             word w is pattern_word(seed, w); stream word w is source word w % source words.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/coord.h"
#include "fabric/device.h"
#include "fabric/elf.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/launch.h"
#include "fabric/mesh_plan.h"
#include "fabric/mesh_traffic.h"
#include "protocol/socket.h"

namespace fabric {

enum class SocketSide { Sender, Receiver };
// "sender", "receiver"; parse: nullopt for anything else.
std::string_view socket_side_name(SocketSide s);
std::optional<SocketSide> parse_socket_side(std::string_view text);
// protocol::SocketStatus as snake_case ("ok", "peer_closed", "room_timeout", "data_timeout",
// "acks_timeout", "terminated", "fabric_error", "bad_config"); anything else "unknown(N)".
std::string socket_status_name(uint32_t status);
// protocol::SocketEnd: "complete", "closed here", "closed by its peer"; else "unknown(N)".
std::string socket_end_name(uint32_t end);

inline constexpr uint32_t kSocketBufferOffset = 0x400;  // from test_l1_base: ring or source

struct SocketOptions {
    uint32_t bytes = 64 * 1024;  // the stream: a positive multiple of 16, < 2^31
    uint32_t page_bytes = 2048;  // a positive multiple of 16
    uint32_t ring_pages = 4;
    uint32_t consume_delay = 0;  // receiver: cycles per page (a slow receiver)
    uint32_t close_after = 0;    // pages after which `close_from` closes (0: no close)
    SocketSide close_from = SocketSide::Sender;
    uint32_t plane = 0;            // 2D: the routing plane both routes use
    uint32_t timeout_us = 20'000;  // every wait of either end
    uint32_t seed = 0x5000;        // the source's pattern
};

// One end: its kernel, arguments and route.
struct SocketEndPlan {
    LaunchTarget target;
    protocol::SocketStreamArgs args{};
    uint32_t hops = 0;  // links crossed to the other end's chip (between meshes too)
    std::string name;   // "sender chip 0 core 1-1", for messages
};

struct SocketPlan {
    hal::Arch arch = hal::Arch::WormholeB0;
    SocketOptions options;
    SocketEndPlan sender, receiver;

    uint32_t pages() const;  // in the whole stream
    uint32_t ring_bytes() const { return options.ring_pages * options.page_bytes; }
    uint32_t source_bytes() const { return sender.args.source_bytes; }
    uint32_t output_addr() const { return receiver.args.data_addr; }
};

// The plans (see the top of the file). Pure. Error(BadInput) naming the option or core for: a
// chip not in the fabric, a core that is not a worker core of its chip (harvesting applied), both
// ends on one chip (a socket crosses the fabric) or on the same core, a stream or page size that
// is 0 or not a multiple of 16, a stream of 2^31 B or more, no ring page, a ring that does not fit
// below the receiver's mailbox, an output past the end of the receiver's L1, a close after as
// many pages as the stream has (or more), and no route.
SocketPlan plan_socket(const FabricPlan& plan, const ChipSocs& socs, const ElfImage& kernel,
                       const CoreLocation& from, const CoreLocation& to,
                       const SocketOptions& options = {});
SocketPlan plan_socket(const MeshPlan& plan, const ChipSocs& socs, const ElfImage& kernel,
                       const CoreLocation& from, const CoreLocation& to,
                       const SocketOptions& options = {});

// Write an end's mailbox and zero its socket words (and, for the sender, its source; for the
// receiver, its output), before either end starts.
void load_socket_end(Device& device, const SocketPlan& plan, SocketSide side);

struct SocketEndOutcome {
    LaunchResult launch;
    uint32_t status = 0;    // TestMailbox::status
    uint32_t stuck_at = 0;  // TestMailbox::stuck_at
    protocol::SocketStreamResults results{};
    bool passed() const;  // exited with status Done
};

struct SocketRun {
    SocketEndOutcome sender, receiver;
    // Device cycles from the start of run_workers (load included) until both ends exited.
    uint64_t cycles = 0;
};

// Load both ends, run them to their end on the fabric, read each one's outcome. A failing end is
// reported in its outcome, not thrown; the runner's Error(Fabric) passes through.
SocketRun run_socket(FabricRunner& runner, const SocketPlan& plan, const LaunchOptions& options);

// What the ends must report, from the plan alone: bytes the receiver consumes (the whole stream,
// or close_after pages), pages, and the end each sees.
struct SocketExpect {
    uint32_t bytes = 0;  // consumed by the receiver, acknowledged to the sender
    uint32_t pages = 0;
    protocol::SocketEnd sender_end = protocol::SocketEnd::Complete;
    protocol::SocketEnd receiver_end = protocol::SocketEnd::Complete;
};
SocketExpect socket_expect(const SocketPlan& plan);

// Every way a run differs from socket_expect, one line each (empty: it did what it should): an
// end that failed (status, stuck_at, socket status), byte and page counts, ends, a sender that
// sent more than the ring could hold past what was acknowledged.
std::vector<std::string> socket_problems(const SocketPlan& plan, const SocketRun& run);

// The receiver's output compared word by word with the stream it should hold (the first
// `bytes` of it); bad_positions are page indices.
PatternCheck check_socket_output(Device& device, const SocketPlan& plan, uint32_t bytes);
// Stream word w's value.
uint32_t socket_stream_word(const SocketPlan& plan, uint32_t w);

}  // namespace fabric
