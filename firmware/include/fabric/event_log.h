// The firmware side of a router's event log (protocol/fabric.h RouterEventLog): records written
// into the ring in L1 without ever waiting for the host. Events are rare (state changes, dropped
// packets), so each record reads the two counters from L1 rather than keeping them in registers.
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

    constexpr explicit EventLog(uint32_t base) : base_(base) {}

    // Empty, with its capacity for the host to check. Before the host looks (start-up).
    void reset() const {
        put(offsetof(Log, written), 0);
        put(offsetof(Log, dropped), 0);
        put(offsetof(Log, capacity), protocol::fabric::kRouterEventRecords);
        put(offsetof(Log, consumed), 0);
    }

    // One record, or one more `dropped` when the host has left no room. Never waits.
    void record(Kind kind, uint32_t channel, uint32_t code, uint32_t value) const {
        const uint32_t written = get(offsetof(Log, written));
        const uint32_t consumed = get(offsetof(Log, consumed));
        if (written - consumed >= protocol::fabric::kRouterEventRecords) {
            put(offsetof(Log, dropped), get(offsetof(Log, dropped)) + 1);
            return;
        }
        const uint32_t at =
            offsetof(Log, records) + sizeof(protocol::fabric::RouterEvent) *
                                         (written % protocol::fabric::kRouterEventRecords);
        put(at, hal::wall_clock_lo());
        put(at + 4, static_cast<uint32_t>(kind) | channel << 16);
        put(at + 8, code);
        put(at + 12, value);
        put(offsetof(Log, written),
            written + 1);  // last: the record is whole when the host sees it
    }

  private:
    uint32_t get(uint32_t offset) const {
        return hal::mmio::load_shared(hal::mmio::l1_ptr<const uint32_t>(base_ + offset));
    }
    void put(uint32_t offset, uint32_t value) const {
        hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(base_ + offset), value);
    }

    uint32_t base_;
};

static_assert(offsetof(protocol::fabric::RouterEvent, kind) == 4 &&
              offsetof(protocol::fabric::RouterEvent, channel) == 6);

}  // namespace fabric
