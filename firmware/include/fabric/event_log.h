// The firmware side of a router's event log (protocol/fabric.h RouterEventLog): records written
// into the ring in L1 without ever waiting for the host. Like a credit word, the host's `consumed`
// is read only when the room counted since the last look is used up, so a record is its stores.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/clock.h"
#include "hal/mmio.h"
#include "protocol/fabric.h"

namespace fabric {

class EventLog {
  public:
    using Log = protocol::fabric::RouterEventLog;
    using Kind = protocol::fabric::RouterEventKind;
    static constexpr uint32_t kRecords = protocol::fabric::kRouterEventRecords;
    static constexpr uint32_t kRecordBytes = sizeof(protocol::fabric::RouterEvent);
    static constexpr uint32_t kFirst = offsetof(Log, records);
    static constexpr uint32_t kEnd = kFirst + kRecords * kRecordBytes;

    explicit EventLog(uint32_t base) : base_(base) {}

    // Empty, with its capacity for the host to check. Before the host looks (start-up).
    void reset() {
        written_ = dropped_ = 0;
        room_ = kRecords;
        next_ = kFirst;
        put(offsetof(Log, written), 0);
        put(offsetof(Log, dropped), 0);
        put(offsetof(Log, capacity), kRecords);
        put(offsetof(Log, consumed), 0);
    }

    // One record, or one more `dropped` when the host has left no room. Never waits. (Out of
    // line: events are rare, and one copy instead of one per caller keeps the images in their
    // windows.)
    [[gnu::noinline]] void record(Kind kind, uint32_t channel, uint32_t code, uint32_t value) {
        if (!has_room()) {
            put(offsetof(Log, dropped), ++dropped_);
            return;
        }
        const uint32_t at = next_;
        put(at, hal::wall_clock_lo());
        put(at + 4, static_cast<uint32_t>(kind) | channel << 16);
        put(at + 8, code);
        put(at + 12, value);
        put(offsetof(Log, written), ++written_);  // last: the record is whole when the host sees it
        --room_;
        next_ = at + kRecordBytes == kEnd ? kFirst : at + kRecordBytes;
    }

    // A record written now would fit (for a writer that waits rather than lose one: a drain's
    // per-packet reports).
    bool has_room() {
        if (room_ == 0) room_ = kRecords - (written_ - get(offsetof(Log, consumed)));
        return room_ != 0;
    }

  private:
    uint32_t get(uint32_t offset) const {
        return hal::mmio::load_shared(hal::mmio::l1_ptr<const uint32_t>(base_ + offset));
    }
    void put(uint32_t offset, uint32_t value) const {
        hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(base_ + offset), value);
    }

    uint32_t base_;
    uint32_t written_ = 0;  // what the L1 word says (only we write it)
    uint32_t dropped_ = 0;
    uint32_t room_ = 0;  // records that fit before `consumed` must be read again
    // The next record's offset: a cursor, as a modulo would be a division (tens of cycles).
    uint32_t next_ = kFirst;
};

static_assert(offsetof(protocol::fabric::RouterEvent, kind) == 4 &&
              offsetof(protocol::fabric::RouterEvent, channel) == 6);

}  // namespace fabric
