// Sockets over the fabric, worker side (layout and protocol: protocol/socket.h): a sender and a
// receiver endpoint, each over a FabricConnection to a router on its own chip (the sender's
// carries pages, counter increments and its close; the receiver's its acknowledgements and
// close). Header-only, for worker kernels.
//
//   fabric::SocketSender tx(conn, args.socket, stream_l1);  // conn open, socket words zeroed
//   while (...) s = tx.send_page(src_l1, bytes, bound);      // waits (bounded) for ring room
//   s = tx.wait_acked(bound);  or  s = tx.close(bound);
//
//   fabric::SocketReceiver rx(conn, args.socket);
//   while (rx.wait_page(want, bound) == SocketStatus::Ok) {
//       ... rx.page_l1(), rx.page_bytes() ...;  s = rx.release_page(bound);
//   }
//   s = rx.acknowledge(bound);  or  s = rx.close(bound);
//
// Counters move in batches: the sender raises the receiver's byte counter once per half ring of
// pages and before it waits for room; the receiver acknowledges once per half ring and before it
// waits for data (each increment is a packet the routers take on their general path, several
// times a page's cost). Neither side waits for something the other has not been told.
//
// Every wait is bounded by the Bound's timeout and escapes on its termination word, and every
// wait also watches the peer's close word: a close ends it with PeerClosed (once the counts say
// nothing more is coming), never with a timeout.
#pragma once

#include <stdint.h>

#include "fabric/worker_adapter.h"
#include "hal/clock.h"
#include "hal/mmio.h"
#include "hal/status.h"
#include "hal/wait.h"
#include "protocol/socket.h"

namespace fabric {

namespace socket_detail {

using protocol::SocketStatus;

inline uint32_t ld(uint32_t a) {
    return hal::mmio::load_shared(hal::mmio::l1_ptr<const uint32_t>(a));
}

inline pf::Route route_of(const protocol::SocketPeer& p) {
    return pf::Route{p.route, p.route_ext, p.flags_word, p.dst_node};
}

inline pf::NocTarget target(const protocol::SocketPeer& p, uint32_t addr) {
    return pf::NocTarget{addr, static_cast<uint8_t>(p.x), static_cast<uint8_t>(p.y), 0};
}

// A wait's end as a socket status: a timeout names the wait (`timeout`).
inline SocketStatus waited(hal::Status s, SocketStatus timeout) {
    switch (s) {
        case hal::Status::Ok:
            return SocketStatus::Ok;
        case hal::Status::Timeout:
            return timeout;
        case hal::Status::Terminated:
            return SocketStatus::Terminated;
        default:
            return SocketStatus::FabricError;
    }
}

inline bool config_ok(const protocol::SocketConfig& c) {
    return c.ring_pages != 0 && c.page_bytes != 0 && c.page_bytes % 16 == 0 &&
           c.ring_addr % 16 == 0 && c.words_addr % 16 == 0 &&
           uint64_t{c.ring_pages} * c.page_bytes <= protocol::kSocketMaxBytes;
}

// What an endpoint shares: its connection, config, the peer's close word and the last adapter
// status.
class Endpoint {
  public:
    Endpoint(FabricConnection& conn, const protocol::SocketConfig& c) : conn_(conn), c_(c) {}

    // The hal::Status of the last adapter call or wait (Ok when none failed).
    hal::Status last_hal_status() const { return last_hal_; }
    // The peer's close word: kSocketClosed | its byte count once it closed, else 0.
    uint32_t peer_close() const { return ld(c_.words_addr + protocol::kSocketCloseOffset); }
    bool peer_closed() const { return (peer_close() & protocol::kSocketClosed) != 0; }
    uint32_t peer_count() const { return peer_close() & ~protocol::kSocketClosed; }
    bool closed() const { return closed_; }

  protected:
    uint32_t counter() const { return ld(c_.words_addr + protocol::kSocketCounterOffset); }
    // The peer's counter word (the receiver's bytes received, the sender's acknowledged).
    pf::NocTarget peer_counter() const {
        return target(c_.peer, c_.words_addr + protocol::kSocketCounterOffset);
    }
    // The ring slot after `slot` (a cursor: no division).
    uint32_t next_slot(uint32_t slot) const {
        const uint32_t next = slot + c_.page_bytes;
        return next == c_.ring_addr + c_.ring_pages * c_.page_bytes ? c_.ring_addr : next;
    }
    // How far a counter may lag behind: half the ring, at least a page.
    uint32_t half_ring() const { return (c_.ring_pages + 1) / 2 * c_.page_bytes; }
    hal::Deadline deadline(const FabricConnection::Bound& b) const {
        return hal::Deadline::after_us(hal::kArch, b.timeout_us);
    }
    // An adapter call's status kept, as a socket status.
    SocketStatus fabric(hal::Status s) {
        last_hal_ = s;
        if (s == hal::Status::Ok) return SocketStatus::Ok;
        return s == hal::Status::Terminated ? SocketStatus::Terminated : SocketStatus::FabricError;
    }
    SocketStatus wait(hal::Status s, SocketStatus timeout) {
        last_hal_ = s;
        return waited(s, timeout);
    }
    // Our close: kSocketClosed | `count` into the peer's close word, through the fabric.
    SocketStatus send_close(uint32_t count, const FabricConnection::Bound& b) {
        if (closed_) return SocketStatus::BadConfig;
        closed_ = true;
        return fabric(conn_.inline_write(
            route_of(c_.peer), target(c_.peer, c_.words_addr + protocol::kSocketCloseOffset),
            protocol::kSocketClosed | count, deadline(b), b.term));
    }

    FabricConnection& conn_;
    const protocol::SocketConfig c_;
    hal::Status last_hal_ = hal::Status::Ok;
    bool closed_ = false;
};

}  // namespace socket_detail

class SocketSender : public socket_detail::Endpoint {
  public:
    using SocketStatus = protocol::SocketStatus;
    // `stream_l1`: 64 B of L1 (16-B aligned) for the stream header of whole pages, or 0 for
    // general sends only.
    SocketSender(FabricConnection& conn, const protocol::SocketConfig& c, uint32_t stream_l1 = 0)
        : Endpoint(conn, c),
          ring_bytes_(c.ring_pages * c.page_bytes),
          announce_bytes_(half_ring()),
          stream_l1_(stream_l1) {}

    uint32_t bytes_sent() const { return sent_; }
    // The receiver's acknowledgements so far (its atomic increments of our counter word).
    uint32_t bytes_acked() const { return counter(); }
    uint32_t pages_sent() const { return pages_; }

    // One page of `bytes` (1..page_bytes, a multiple of 16; less than page_bytes only for the
    // stream's last page) from `src_l1` into the next ring slot, once the ring has room for it
    // (page_bytes above the router's payload go as several packets); every half ring of pages,
    // the receiver's byte counter is raised by them (announce). The source may be read by the
    // NoC until the next page is sent (or wait_acked returns).
    // PeerClosed: the receiver closed while we waited, nothing was written.
    [[nodiscard]] SocketStatus send_page(uint32_t src_l1, uint32_t bytes,
                                         const FabricConnection::Bound& b) {
        if (!socket_detail::config_ok(c_) || bytes == 0 || bytes > c_.page_bytes ||
            bytes % 16 != 0 || src_l1 % 16 != 0 || closed_ ||
            uint64_t{sent_} + bytes > protocol::kSocketMaxBytes) {
            return SocketStatus::BadConfig;
        }
        const SocketStatus room = wait_for_room(b);
        if (room != SocketStatus::Ok) return room;
        const SocketStatus s =
            streamable(bytes) ? stream_page(src_l1, bytes, b) : general_page(src_l1, bytes, b);
        if (s != SocketStatus::Ok) return s;
        sent_ += bytes;
        ++pages_;
        slot_ = next_slot(slot_);
        return sent_ - announced_ >= announce_bytes_ ? announce(b) : SocketStatus::Ok;
    }

    // Tell the receiver about every page written so far (send_page does every half ring, and
    // before it waits for room; wait_acked and close do it first).
    [[nodiscard]] SocketStatus announce(const FabricConnection::Bound& b) {
        if (sent_ == announced_) return SocketStatus::Ok;
        const SocketStatus s =
            fabric(conn_.atomic_inc(socket_detail::route_of(c_.peer), peer_counter(),
                                    sent_ - announced_, true, deadline(b), b.term, pages_));
        if (s == SocketStatus::Ok) announced_ = sent_;
        return s;
    }

    // Wait until every byte sent is acknowledged. PeerClosed: the receiver closed first; it is
    // returned once what the receiver consumed is acknowledged.
    [[nodiscard]] SocketStatus wait_acked(const FabricConnection::Bound& b) {
        SocketStatus a = announce(b);
        // The last page's source may still be read by the NoC (a stream send returns before).
        if (a == SocketStatus::Ok) a = fabric(conn_.wait_sent(deadline(b), b.term));
        if (a != SocketStatus::Ok) return a;
        const hal::Status s = hal::wait_until(
            [this] { return bytes_acked() == sent_ || (peer_closed() && peer_acked()); },
            deadline(b), b.term);
        const SocketStatus st = wait(s, SocketStatus::AcksTimeout);
        if (st != SocketStatus::Ok) return st;
        return bytes_acked() == sent_ ? SocketStatus::Ok : SocketStatus::PeerClosed;
    }

    // Close in the middle of a stream: tell the receiver how many bytes we sent (it consumes
    // them all), then wait until they are acknowledged.
    [[nodiscard]] SocketStatus close(const FabricConnection::Bound& b) {
        SocketStatus s = announce(b);
        if (s == SocketStatus::Ok) s = send_close(sent_, b);
        if (s != SocketStatus::Ok) return s;
        return wait_acked(b);
    }

  private:
    // A page is a plain write (the router's fast path); the receiver's byte counter is raised
    // by the pages written since the last time, flushed (the router issues the increment once the
    // channel's earlier writes have landed, so the counter never runs ahead of the data). One
    // increment per half ring, not per page: a flushed increment costs the routers several
    // times a page's write. With stream headers (stream_l1) a page's write is prepared once (its
    // destination moves with the slot), about a third of a general send's cost.
    bool streamable(uint32_t bytes) const {
        return stream_l1_ != 0 && bytes == c_.page_bytes && bytes <= conn_.payload_bytes();
    }
    SocketStatus stream_page(uint32_t src_l1, uint32_t bytes, const FabricConnection::Bound& b) {
        if (write_.l1 == 0) {
            const SocketStatus s = fabric(
                conn_.prepare_unicast_write(write_, stream_l1_, socket_detail::route_of(c_.peer),
                                            socket_detail::target(c_.peer, slot_), bytes, b));
            if (s != SocketStatus::Ok) return s;
        }
        return fabric(conn_.send(write_, src_l1, slot_, pages_, b));
    }
    SocketStatus general_page(uint32_t src_l1, uint32_t bytes, const FabricConnection::Bound& b) {
        return fabric(conn_.unicast_write(socket_detail::route_of(c_.peer),
                                          socket_detail::target(c_.peer, slot_), src_l1, bytes,
                                          deadline(b), b.term, pages_));
    }
    // What the receiver consumed before its close is acknowledged (its acks may land after the
    // close word).
    bool peer_acked() const { return bytes_acked() == peer_count(); }

    SocketStatus wait_for_room(const FabricConnection::Bound& b) {
        const auto room = [this] { return sent_ - bytes_acked() + c_.page_bytes <= ring_bytes_; };
        if (room() && !peer_closed()) return SocketStatus::Ok;
        // The receiver acknowledges only what it was told of.
        const SocketStatus a = announce(b);
        if (a != SocketStatus::Ok) return a;
        const hal::Status s =
            hal::wait_until([&] { return peer_closed() || room(); }, deadline(b), b.term);
        const SocketStatus st = wait(s, SocketStatus::RoomTimeout);
        if (st != SocketStatus::Ok) return st;
        return peer_closed() ? SocketStatus::PeerClosed : SocketStatus::Ok;
    }

    const uint32_t ring_bytes_;
    const uint32_t announce_bytes_;  // half the ring (at least a page)
    const uint32_t stream_l1_;
    FabricConnection::Template write_;  // the stream header (prepared at the first page)
    uint32_t sent_ = 0;
    uint32_t announced_ = 0;  // the bytes the receiver's counter was raised by
    uint32_t pages_ = 0;
    uint32_t slot_ = c_.ring_addr;  // the next page's slot in the receiver's ring
};

class SocketReceiver : public socket_detail::Endpoint {
  public:
    using SocketStatus = protocol::SocketStatus;
    SocketReceiver(FabricConnection& conn, const protocol::SocketConfig& c)
        : Endpoint(conn, c), ack_bytes_(half_ring()) {}

    // The sender's increments so far.
    uint32_t bytes_received() const { return counter(); }
    uint32_t bytes_consumed() const { return consumed_; }
    uint32_t pages_consumed() const { return pages_; }
    // The page wait_page found: its slot in the ring and its bytes.
    uint32_t page_l1() const { return slot_; }
    uint32_t page_bytes() const { return page_; }

    // Wait until the next page holds `want` bytes (1..page_bytes: a whole page, or what is left
    // of a stream whose length the caller knows). PeerClosed: the sender closed and everything it
    // sent is consumed; a closed sender's last page may be shorter than `want`.
    [[nodiscard]] SocketStatus wait_page(uint32_t want, const FabricConnection::Bound& b) {
        if (!socket_detail::config_ok(c_) || want == 0 || want > c_.page_bytes || closed_) {
            return SocketStatus::BadConfig;
        }
        const auto arrived = [&] { return bytes_received() - consumed_ >= want; };
        const auto sender_done = [&] { return peer_closed() && bytes_received() == peer_count(); };
        if (!arrived()) {  // the sender may be waiting for room: give it what we consumed
            const SocketStatus a = acknowledge(b);
            if (a != SocketStatus::Ok) return a;
        }
        const hal::Status s =
            hal::wait_until([&] { return arrived() || sender_done(); }, deadline(b), b.term);
        const SocketStatus st = wait(s, SocketStatus::DataTimeout);
        if (st != SocketStatus::Ok) return st;
        const uint32_t there = bytes_received() - consumed_;
        if (there == 0) return SocketStatus::PeerClosed;
        page_ = there < want ? there : want;
        return SocketStatus::Ok;
    }

    // The page wait_page found is consumed: move to the next slot. Its bytes are acknowledged to
    // the sender (an atomic increment through the fabric) with the others of every half ring,
    // and before the receiver waits for data: an increment costs the routers several times a
    // page's write.
    [[nodiscard]] SocketStatus release_page(const FabricConnection::Bound& b) {
        if (page_ == 0) return SocketStatus::BadConfig;
        consumed_ += page_;
        ++pages_;
        page_ = 0;
        slot_ = next_slot(slot_);
        return consumed_ - acked_ >= ack_bytes_ ? acknowledge(b) : SocketStatus::Ok;
    }

    // Acknowledge every byte consumed so far (at the end of a stream; close does it first).
    [[nodiscard]] SocketStatus acknowledge(const FabricConnection::Bound& b) {
        if (consumed_ == acked_) return SocketStatus::Ok;
        const SocketStatus s =
            fabric(conn_.atomic_inc(socket_detail::route_of(c_.peer), peer_counter(),
                                    consumed_ - acked_, false, deadline(b), b.term, pages_));
        if (s == SocketStatus::Ok) acked_ = consumed_;
        return s;
    }

    // Close in the middle of a stream: acknowledge what we consumed and tell the sender how much
    // that is (it stops and waits for those acknowledgements).
    [[nodiscard]] SocketStatus close(const FabricConnection::Bound& b) {
        const SocketStatus s = acknowledge(b);
        return s != SocketStatus::Ok ? s : send_close(consumed_, b);
    }

  private:
    const uint32_t ack_bytes_;  // half the ring (at least a page)
    uint32_t consumed_ = 0;
    uint32_t acked_ = 0;  // the bytes acknowledged to the sender
    uint32_t pages_ = 0;
    uint32_t page_ = 0;             // bytes of the page wait_page found (0: none)
    uint32_t slot_ = c_.ring_addr;  // the next page's slot
};

}  // namespace fabric
