// The producer side of a worker connection, as a router's ch0 and every mux channel serve it
// (protocol/fabric.h: WorkerConnectionInfo; the client is fabric/worker_adapter.h):
//
//   RemoteWords  writes one 32-bit word into another core's L1 (a client's credit or teardown
//                word): an inline NoC write where the arch allows it; on Blackhole, where inline
//                writes to L1 are unsafe, a 4-B write from a staging line of our L1 (Busy while
//                an earlier staged write may still be read from it).
//   WorkerPort   one connection block: publishes the endpoint's line, accepts an Open, tells
//                the connected client its freed count, answers a CloseRequested (last credit,
//                `freed` recorded for the next opener, state Closed, teardown word 1). Nothing here
//                waits: a step that cannot write now returns and is retried on a later pass.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/arch.h"
#include "hal/mmio.h"
#include "hal/noc.h"
#include "hal/status.h"
#include "protocol/fabric.h"

namespace fabric {

namespace pf = protocol::fabric;

using PortNoc = hal::Noc<hal::kArch>;

// A 32-bit word in another core's L1.
struct NocWord {
    uint32_t x, y, addr;
};

// kTrid tags every write (and nothing else of the core may use it); a template argument, so the
// HAL's checks of it fold away on the hot path.
template <uint32_t kTrid>
class RemoteWords {
  public:
    using Noc = PortNoc;
    static constexpr bool kStaged = hal::kArch.noc.inline_to_l1_unsafe;
    static_assert(kTrid <= hal::noc::kMaxTransactionId);

    // `staging`: 16-B aligned lines of our L1 for the staged writes.
    RemoteWords(Noc& noc, uint32_t staging) : noc_(noc), staging_(staging) {}

    // Every staged write has been read out of its line (always true where writes are inline).
    bool ready() const {
        if constexpr (kStaged) return noc_.trid_writes_sent(kTrid);
        return true;
    }

    // `value` to `addr` on core (x, y); `line`: the byte offset of the staging line to use.
    hal::Status write(uint32_t x, uint32_t y, uint32_t addr, uint32_t value, uint32_t line) {
        if constexpr (!kStaged) {
            (void)line;
            return noc_.write_inline({x, y, addr}, value, {.posted = true, .trid = kTrid});
        } else {
            return write_staged(x, y, addr, value, line);
        }
    }

  private:
    // Out of line: one copy serves every call site (the router's image is tight on Blackhole).
    [[gnu::noinline]] hal::Status write_staged(uint32_t x, uint32_t y, uint32_t addr,
                                               uint32_t value, uint32_t line) {
        if (!ready()) return hal::Status::Busy;
        // A NoC write's source and destination must agree mod 16: the word sits at the
        // destination's offset within the line.
        const uint32_t src = staging_ + line + addr % 16;
        hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(src), value);
        return noc_.write(src, {x, y, addr}, 4, {.posted = true, .trid = kTrid});
    }

    Noc& noc_;
    uint32_t staging_;
};

class WorkerPort {
  public:
    // The block at `info` (our L1), zeroed: state Closed, pushed = freed = 0. Staging lines
    // `credit_line` and `teardown_line` of the RemoteWords are this port's own.
    void reset(uint32_t info, uint32_t credit_line, uint32_t teardown_line) {
        info_ = info;
        credit_line_ = credit_line;
        teardown_line_ = teardown_line;
        connected_ = false;
        for (uint32_t off = 0; off < sizeof(pf::WorkerConnectionInfo); off += 4) st(info_ + off, 0);
    }

    // The endpoint's line (protocol/fabric.h LineInfo), for every client that opens: written
    // once after reset(), before the endpoint lets clients in.
    void publish_line(const pf::LineInfo& line) {
        const pf::LineInfoWords u{line};
        const uint32_t at = field(offsetof(pf::WorkerConnectionInfo, line));
        for (uint32_t i = 0; i < sizeof(u.w) / 4; ++i) st(at + 4 * i, u.w[i]);
    }

    bool connected() const { return connected_; }
    // The connected client's credit word (valid while connected()).
    NocWord credit_word() const { return {x_, y_, credit_addr_}; }
    // With nobody connected: `freed` kept in the block for the next opener.
    void record_freed(uint32_t freed) {
        st(field(offsetof(pf::WorkerConnectionInfo, freed)), freed);
    }

    // The client's credit word gets `freed` (Busy: try later); with nobody connected the count
    // is recorded in the block for the next opener.
    template <typename Words>
    hal::Status send_credit(Words& w, uint32_t freed) {
        if (!connected_) {
            record_freed(freed);
            return hal::Status::Ok;
        }
        return w.write(x_, y_, credit_addr_, freed, credit_line_);
    }

    enum class Event { None, Opened, Closed };

    // Look at the block once. An Open is accepted (the caller then owes the client a credit:
    // `credit_dirty` is set); a CloseRequested is answered once the last credit is out (same NoC
    // path, so it lands before the teardown word). `freed`: this channel's freed count.
    template <typename Words>
    hal::Status poll(Words& w, uint32_t freed, bool& credit_dirty, Event& event) {
        event = Event::None;
        const uint32_t state = ld(field(offsetof(pf::WorkerConnectionInfo, state)));
        if (state == static_cast<uint32_t>(pf::ConnectionState::Open)) {
            if (connected_) return hal::Status::Ok;
            const uint32_t xy = ld(field(offsetof(pf::WorkerConnectionInfo, worker_xy)));
            x_ = xy & 0xFFFF;
            y_ = xy >> 16;
            credit_addr_ = ld(field(offsetof(pf::WorkerConnectionInfo, credit_addr)));
            if (credit_addr_ % 4 != 0 || !hal::noc::coord_ok(x_) || !hal::noc::coord_ok(y_)) {
                return hal::Status::Ok;  // not a usable connection: its open never sees credits
            }
            connected_ = true;
            credit_dirty = true;
            event = Event::Opened;
            return hal::Status::Ok;
        }
        if (state != static_cast<uint32_t>(pf::ConnectionState::CloseRequested))
            return hal::Status::Ok;
        if (!w.ready()) return hal::Status::Ok;
        if (connected_ && credit_dirty) {
            const hal::Status s = w.write(x_, y_, credit_addr_, freed, credit_line_);
            if (s == hal::Status::Busy) return hal::Status::Ok;
            HAL_TRY(s);
            credit_dirty = false;
        }
        if (!w.ready()) return hal::Status::Ok;
        const uint32_t xy = ld(field(offsetof(pf::WorkerConnectionInfo, worker_xy)));
        const uint32_t teardown = ld(field(offsetof(pf::WorkerConnectionInfo, teardown_addr)));
        st(field(offsetof(pf::WorkerConnectionInfo, freed)), freed);
        st(field(offsetof(pf::WorkerConnectionInfo, state)),
           static_cast<uint32_t>(pf::ConnectionState::Closed));
        connected_ = false;
        event = Event::Closed;
        if (teardown % 4 != 0 || !hal::noc::coord_ok(xy & 0xFFFF) ||
            !hal::noc::coord_ok(xy >> 16)) {
            return hal::Status::Ok;
        }
        return w.write(xy & 0xFFFF, xy >> 16, teardown, 1, teardown_line_);
    }

  private:
    static uint32_t ld(uint32_t a) {
        return hal::mmio::load_shared(hal::mmio::l1_ptr<const uint32_t>(a));
    }
    static void st(uint32_t a, uint32_t v) {
        hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(a), v);
    }
    uint32_t field(size_t off) const { return info_ + static_cast<uint32_t>(off); }

    uint32_t info_ = 0;
    uint32_t credit_line_ = 0;
    uint32_t teardown_line_ = 0;
    bool connected_ = false;
    uint32_t x_ = 0, y_ = 0, credit_addr_ = 0;
};

}  // namespace fabric
