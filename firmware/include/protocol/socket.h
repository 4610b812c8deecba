// Sockets over the fabric (seeds/000 §5): a sender and a receiver endpoint on worker cores of two
// chips, shared by the worker side (fabric/socket.h), the socket_stream kernel
// (firmware/tests/socket_stream.cpp) and the host plan (host/include/fabric/socket_plan.h).
//
//   receiver L1   ring        ring_pages x page_bytes the sender writes pages into (fabric writes)
//                 words +0    bytes received: the sender's atomic increments add the bytes of
//                             the pages it wrote since the last one, flushed (issued by the
//                             destination router once those writes have landed)
//                 words +16   close word: the sender's close (an inline write through the fabric)
//   sender L1     words +0    bytes acknowledged: the receiver adds the bytes it consumed since
//                             the last one (an atomic increment back over the reverse route)
//                 words +16   close word: the receiver's close
// Both raise a counter every half ring, and before they wait for the other (fabric/socket.h).
//
// Flow control: the sender writes a page only when sent - acked + page_bytes <= ring bytes, so it
// never overwrites a page the receiver has not consumed. Pages are written in order into ring
// slot (page index % ring_pages); every page is full except perhaps the last of a stream.
//
// Close: kSocketClosed | the closing side's byte count (sender: bytes sent, receiver: bytes
// consumed). The word may land before that side's last increments (they take another path through
// the destination's NoC), so the other side compares counts, never the word's arrival: a receiver
// consumes until it has received what the sender sent, a sender waits until what the receiver
// consumed is acknowledged. Byte counts therefore stay below 2^31.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "protocol/fabric.h"
#include "protocol/test_kernels.h"

namespace protocol {

inline constexpr uint32_t kSocketClosed = 0x80000000u;
inline constexpr uint32_t kSocketMaxBytes = kSocketClosed - 1;  // what a close word can carry

// The 16-B lines of an endpoint's socket words (SocketConfig::words_addr, the same on both ends).
inline constexpr uint32_t kSocketCounterOffset = 0;  // receiver: bytes received; sender: acked
inline constexpr uint32_t kSocketCloseOffset = 16;   // the peer's close word
inline constexpr uint32_t kSocketWordsBytes = 32;
// The socket_stream kernel's fabric connection (kFabricConnL1Bytes) follows its socket words,
// then the sender's stream header (kSocketStreamL1Bytes).
constexpr uint32_t socket_conn_l1(uint32_t words_addr) {
    return words_addr + kSocketWordsBytes;
}
constexpr uint32_t socket_stream_l1(uint32_t words_addr) {
    return socket_conn_l1(words_addr) + kFabricConnL1Bytes;
}
inline constexpr uint32_t kSocketStreamL1Bytes = sizeof(fabric::PacketHeader);
inline constexpr uint32_t kSocketEndpointL1Bytes =
    kSocketWordsBytes + kFabricConnL1Bytes + kSocketStreamL1Bytes;
static_assert(socket_stream_l1(0) % 16 == 0 && kSocketEndpointL1Bytes == 288);

// What a socket call ended with. Each timeout names the wait that ran out.
enum class SocketStatus : uint32_t {
    Ok = 0,
    PeerClosed = 1,   // the other side closed: nothing more will come (or be acknowledged)
    RoomTimeout = 2,  // sender: the ring stayed full (no acknowledgement came)
    DataTimeout = 3,  // receiver: no page came
    AcksTimeout = 4,  // sender: the last pages were never acknowledged
    Terminated = 5,   // a wait saw the termination word
    FabricError = 6,  // an adapter or NoC call failed (last_hal_status says how)
    BadConfig = 7,    // a config the endpoint cannot run with (page size, ring, addresses)
};

// Where an endpoint's peer is: its core (NOC0, on the peer's chip) and the fabric route there.
struct SocketPeer {
    uint32_t route;       // pf::Route::hops
    uint32_t route_ext;   // pf::Route::ext
    uint32_t flags_word;  // pf::Route::flags_word (ttl | branch_hops << 8)
    uint32_t dst_node;    // pf::Route::dst_node (2D; 0 on a line or ring)
    uint32_t x, y;        // the peer's worker core
};
static_assert(sizeof(SocketPeer) == 24);

// Both ends hold the same ring and word addresses; each its own peer.
struct SocketConfig {
    SocketPeer peer;
    uint32_t ring_addr;   // receiver L1, 16-B aligned
    uint32_t ring_pages;  // >= 1
    uint32_t page_bytes;  // a multiple of 16
    uint32_t words_addr;  // kSocketWordsBytes on each end, 16-B aligned
};
static_assert(sizeof(SocketConfig) == 40);
static_assert(offsetof(SocketConfig, ring_addr) == 24 && offsetof(SocketConfig, words_addr) == 36);

// ---- socket_stream (firmware/tests/socket_stream.cpp): TestMailbox::role is Master for the
// sender, Subordinate for the receiver.
//   sender    streams total_bytes in pages from a host-written source of source_bytes at data_addr
//             (a whole number of pages; stream offset o is read from data_addr + o % source_bytes,
//             so a stream may be longer than the L1 a NoC source can lie in); with
//             close_after_pages it closes after that many pages; else it waits until everything
//             is acknowledged.
//   receiver  copies every page out of the ring to data_addr + its stream offset (the host checks
//             every byte), waits consume_delay cycles per page (a slow receiver), acknowledges it;
//             with close_after_pages it closes after that many pages.
struct SocketStreamArgs {
    fabric::WorkerChannel channel;  // the router on this endpoint's chip toward the peer
    SocketConfig socket;
    uint32_t total_bytes;        // 1..kSocketMaxBytes, a multiple of 16
    uint32_t data_addr;          // sender: source (source_bytes); receiver: output (total_bytes)
    uint32_t source_bytes;       // sender: a multiple of page_bytes
    uint32_t consume_delay;      // receiver: cycles per page before it is acknowledged
    uint32_t close_after_pages;  // 0: no close in the middle
    uint32_t timeout_us;         // every wait
};
static_assert(sizeof(SocketStreamArgs) == 32 + 40 + 24);
static_assert(sizeof(SocketStreamArgs) <= sizeof(uint32_t) * kTestMaxArgs);

enum class SocketStreamStep : uint32_t { Args = 1, Init, Open, Stream, Drain, Close, Disconnect };

enum SocketStreamStuck : uint32_t {
    kSocketStuckOpen = 0x901,
    kSocketStuckStream = 0x902,  // detail: page index
    kSocketStuckDrain = 0x903,   // sender: the final acknowledgements
    kSocketStuckClose = 0x904,
    kSocketStuckDisconnect = 0x905,  // closing the fabric connection
};

// Who ended a stream.
enum class SocketEnd : uint32_t { Complete = 0, ClosedHere = 1, ClosedByPeer = 2 };

struct SocketStreamResults {
    TestFailure failure;
    uint32_t socket_status;  // SocketStatus of the last socket call
    uint32_t last_hal_status;
    uint32_t end;             // SocketEnd
    uint32_t pages;           // pages sent (sender) or consumed (receiver)
    uint32_t bytes_sent;      // sender
    uint32_t bytes_acked;     // sender: acknowledged at the end
    uint32_t bytes_received;  // receiver: the counter at the end
    uint32_t bytes_consumed;  // receiver
    uint32_t cycles;          // first page .. stream done (sender: all acknowledged)
};
static_assert(sizeof(SocketStreamResults) == 16 + 9 * 4);

static_assert(sizeof(SocketStreamResults) <= sizeof(uint32_t) * kTestMaxResults);

}  // namespace protocol
