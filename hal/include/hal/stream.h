// Overlay stream registers used as hardware counters (credits).
//
// Each stream has a 17-bit "words free" counter with increment-on-write semantics: writing
// delta << 6 to its *_SPACE_AVAILABLE_UPDATE register adds delta (mod 2^17; negative deltas
// subtract), whoever writes it: this core, a NoC inline write from another core, or the peer
// through an Ethernet remote register write. Reading *_SPACE_AVAILABLE returns the counter (the
// upper bits carry other state on Blackhole, so reads are masked to 17 bits). Writing
// *_DEST_BUF_SIZE reloads the counter with a value (reset).
//
// Register indices differ per arch (ArchMap::stream); the code here is the same for both.
#pragma once

#include <stdint.h>

#include "hal/arch_map.h"
#include "hal/encoding.h"
#include "hal/mmio.h"
#include "hal/status.h"

namespace hal {

template <const ArchMap& A>
struct Streams;

// A stream number checked against the arch's stream count when it was made.
class StreamId {
  public:
    constexpr uint32_t value() const { return v_; }
    constexpr bool operator==(const StreamId&) const = default;

  private:
    template <const ArchMap& A>
    friend struct Streams;
    constexpr explicit StreamId(uint32_t v) : v_(v) {}
    uint32_t v_;
};

template <const ArchMap& A>
struct Streams {
    static constexpr uint32_t kCount = A.eth_streams;

    // A stream ID known at compile time (fails to compile when out of range).
    template <uint32_t N>
    static constexpr StreamId id() {
        static_assert(N < kCount, "stream ID out of range for this arch");
        return StreamId(N);
    }
    // A stream ID known at run time.
    [[nodiscard]] static constexpr Result<StreamId> make_id(uint32_t n) {
        if (n >= kCount) {
            return Result<StreamId>{Status::OutOfRange, StreamId(0)};
        }
        return Result<StreamId>{Status::Ok, StreamId(n)};
    }

    // Address of register `index` (an ArchMap::stream field) of stream `s`.
    static constexpr uint32_t reg_addr(StreamId s, uint32_t index) {
        return stream::reg_addr(s.value(), index);
    }
    // The increment-on-write register, for remote updates (NoC inline write, Ethernet remote
    // register write) with a value from encode_delta().
    static constexpr uint32_t update_reg_addr(StreamId s) {
        return reg_addr(s, A.stream.remote_dest_buf_space_available_update);
    }
    // The value that adds `delta` when written to update_reg_addr().
    [[nodiscard]] static constexpr Result<uint32_t> encode_delta(int32_t delta) {
        if (!stream::delta_ok(delta)) {
            return make_error<uint32_t>(Status::BadArg);
        }
        return make_result(stream::encode_words_free_delta(delta));
    }

    // The counter (17 bits).
    [[nodiscard]] static uint32_t read(StreamId s) {
        return mmio::read32(reg_addr(s, A.stream.remote_dest_buf_space_available)) &
               stream::kWordsFreeMask;
    }
    // Add `delta` (-65536..65535) to the counter.
    [[nodiscard]] static Status add(StreamId s, int32_t delta) {
        if (!stream::delta_ok(delta)) {
            return Status::BadArg;
        }
        mmio::write32(update_reg_addr(s), stream::encode_words_free_delta(delta));
        return Status::Ok;
    }
    // Set the counter to `value` (0..2^17-1).
    [[nodiscard]] static Status reset(StreamId s, uint32_t value = 0) {
        if (value > stream::kWordsFreeMask) {
            return Status::BadArg;
        }
        mmio::write32(reg_addr(s, A.stream.remote_dest_buf_size), value);
        return Status::Ok;
    }

    // The per-stream scratch word (STREAM_REMOTE_SRC, unused by the fabric's streams), e.g. for
    // multi-core handshakes.
    [[nodiscard]] static uint32_t read_scratch(StreamId s) {
        return mmio::read32(reg_addr(s, A.stream.remote_src));
    }
    static void write_scratch(StreamId s, uint32_t value) {
        mmio::write32(reg_addr(s, A.stream.remote_src), value);
    }
};

}  // namespace hal
