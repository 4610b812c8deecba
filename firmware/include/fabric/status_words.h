// The status head every long-running fabric component writes into its own L1 for the host
// (protocol/fabric.h ComponentStatusHead: status, stage, stuck_at, detail, heartbeat), with the
// RouterStatus / RouterWait values the router and the mux share.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "hal/mmio.h"
#include "protocol/fabric.h"

namespace fabric {

class StatusWords {
  public:
    explicit StatusWords(uint32_t block) : block_(block) {}

    void store(uint32_t offset, uint32_t value) const {
        hal::mmio::store_shared(hal::mmio::l1_ptr<uint32_t>(block_ + offset), value);
    }

    // A start-up or run stage: stage and status both.
    void set_stage(protocol::fabric::RouterStatus s) const {
        store(kStage, static_cast<uint32_t>(s));
        store(kStatus, static_cast<uint32_t>(s));
    }

    // The end: where it stopped and why, then the status (last: the host reads it first). Returns
    // the exit code: 0 for Terminated, else the status's low byte.
    int finish(protocol::fabric::RouterStatus s, protocol::fabric::RouterWait where,
               uint32_t detail) const {
        store(kStuckAt, static_cast<uint32_t>(where));
        store(kDetail, detail);
        store(kStatus, static_cast<uint32_t>(s));
        return s == protocol::fabric::RouterStatus::Terminated
                   ? 0
                   : static_cast<int>(static_cast<uint32_t>(s) & 0xFF);
    }

    static constexpr uint32_t kStatus = offsetof(protocol::fabric::ComponentStatusHead, status);
    static constexpr uint32_t kStage = offsetof(protocol::fabric::ComponentStatusHead, stage);
    static constexpr uint32_t kStuckAt = offsetof(protocol::fabric::ComponentStatusHead, stuck_at);
    static constexpr uint32_t kDetail = offsetof(protocol::fabric::ComponentStatusHead, detail);

  private:
    uint32_t block_;
};

}  // namespace fabric
