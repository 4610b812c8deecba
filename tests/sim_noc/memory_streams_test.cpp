// Plain/sparse memories, the address map, and the overlay stream registers.
#include <array>
#include <catch2/catch.hpp>
#include <cstring>

#include "hal/arch_map.h"
#include "hal/encoding.h"
#include "noc/memory.h"
#include "noc/stream_regs.h"

namespace {

std::span<const uint8_t> bytes_of(const uint32_t& v) {
    return {reinterpret_cast<const uint8_t*>(&v), 4};
}

}  // namespace

TEST_CASE("PlainMemory: byte-exact inside, refused (and unchanged) outside", "[sim_noc][memory]") {
    sim::PlainMemory m(64, 0x1000);
    const std::array<uint8_t, 4> w{1, 2, 3, 4};
    CHECK(m.write(0x1000, w));
    CHECK(m.write(0x103C, w));
    CHECK_FALSE(m.write(0x103D, w));            // crosses the end
    CHECK_FALSE(m.write(0x0FFF, w));            // starts below
    CHECK_FALSE(m.write(~uint64_t{0} - 1, w));  // wraps the address space
    std::array<uint8_t, 4> r{};
    CHECK(m.read(0x103C, r));
    CHECK(r == w);
    CHECK(m.data()[0x3D] == 2);
    CHECK(m.data()[0x3F] == 4);
    CHECK_FALSE(m.read(0x1040, r));
    CHECK(m.word(0x1000) == 0x04030201u);
}

TEST_CASE("SparseMemory: pages on demand, zeros elsewhere, bounds like PlainMemory",
          "[sim_noc][memory]") {
    sim::SparseMemory m(uint64_t{2} << 30);  // a Wormhole DRAM bank
    std::vector<uint8_t> data(10000);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<uint8_t>(i * 7);
    }
    const uint64_t addr = (uint64_t{1} << 30) + 4090;  // straddles several pages
    CHECK(m.write(addr, data));
    CHECK(m.pages_allocated() == 4);
    std::vector<uint8_t> back(data.size());
    CHECK(m.read(addr, back));
    CHECK(back == data);
    std::array<uint8_t, 8> z{1, 1, 1, 1, 1, 1, 1, 1};
    CHECK(m.read(0, z));
    CHECK(z == std::array<uint8_t, 8>{});
    CHECK_FALSE(m.write((uint64_t{2} << 30) - 4, data));
    CHECK_FALSE(m.read(uint64_t{2} << 30, z));
}

TEST_CASE("AddressMap: decodes by range, refuses gaps, straddles and overlaps",
          "[sim_noc][memory]") {
    sim::PlainMemory a(0x100, 0);
    sim::PlainMemory b(0x100, 0x1000);
    sim::AddressMap map;
    CHECK(map.add(0, 0x100, &a));
    CHECK(map.add(0x1000, 0x100, &b));
    CHECK_FALSE(map.add(0x80, 0x100, &b));  // overlaps a
    CHECK_FALSE(map.add(0x2000, 0x10, nullptr));
    const uint32_t v = 0xA5A5F00D;
    CHECK(map.write(0x10, bytes_of(v)));
    CHECK(map.write(0x1010, bytes_of(v)));
    CHECK(a.word(0x10) == v);
    CHECK(b.word(0x1010) == v);
    CHECK_FALSE(map.write(0x200, bytes_of(v)));  // gap
    CHECK_FALSE(map.write(0xFE, bytes_of(v)));   // straddles the end of a
}

TEST_CASE("StreamRegs: inc-on-write words-free counter, per arch indices", "[sim_noc][streams]") {
    for (const hal::ArchMap* a : {&hal::kWormholeB0, &hal::kBlackhole}) {
        INFO(a->name);
        sim::StreamRegs s(*a, a->eth_streams);
        CHECK(s.num_streams() == 32);
        const uint32_t upd =
            hal::stream::reg_addr(5, a->stream.remote_dest_buf_space_available_update);
        const uint32_t cnt = hal::stream::reg_addr(5, a->stream.remote_dest_buf_space_available);
        const uint32_t size = hal::stream::reg_addr(5, a->stream.remote_dest_buf_size);
        const uint32_t scratch = hal::stream::reg_addr(5, a->stream.remote_src);

        CHECK(s.mmio_read(cnt) == 0u);
        CHECK(s.mmio_write(upd, hal::stream::encode_words_free_delta(3)));
        CHECK(s.mmio_write(upd, hal::stream::encode_words_free_delta(4)));
        CHECK(s.mmio_read(cnt) == 7u);
        CHECK(s.words_free(5) == 7u);
        CHECK(s.words_free(4) == 0u);  // other streams untouched
        // Negative deltas are two's complement in the 17-bit field.
        CHECK(s.mmio_write(upd, hal::stream::encode_words_free_delta(-2)));
        CHECK(s.mmio_read(cnt) == 5u);
        // Bits above the field and below the shift are ignored.
        CHECK(s.mmio_write(upd, hal::stream::encode_words_free_delta(1) | 0x3Fu | 0xFF800000u));
        CHECK(s.mmio_read(cnt) == 6u);
        // Wraps mod 2^17.
        CHECK(s.mmio_write(upd, hal::stream::encode_words_free_delta(-7)));
        CHECK(s.mmio_read(cnt) == hal::stream::kWordsFreeMask);
        // DEST_BUF_SIZE reloads the counter; the update register itself reads 0.
        CHECK(s.mmio_write(size, 0x12345));
        CHECK(s.mmio_read(cnt) == 0x12345u);
        CHECK(s.mmio_read(size) == 0x12345u);
        CHECK(s.mmio_read(upd) == 0u);
        // The counter register is read-only.
        CHECK_FALSE(s.mmio_write(cnt, 1));
        // Plain storage elsewhere.
        CHECK(s.mmio_read(scratch) == 0u);
        CHECK(s.mmio_write(scratch, 0xCAFEF00D));
        CHECK(s.mmio_read(scratch) == 0xCAFEF00Du);
        // Window bounds and alignment.
        CHECK_FALSE(s.mmio_read(hal::stream::reg_addr(32, 0)).has_value());
        CHECK_FALSE(s.mmio_read(upd + 1).has_value());
        CHECK_FALSE(s.mmio_write(hal::common::kStreamRegsBase - 4, 0));
        CHECK(s.update_writes() == 5);
        // The running sums of the updates (+3 +4 +1, -2 -7; the DEST_BUF_SIZE reload is no update).
        CHECK(s.added(5) == 8u);
        CHECK(s.subtracted(5) == 9u);
        CHECK(s.added(4) == 0u);
        CHECK(s.subtracted(40) == 0u);  // no such stream
    }
}

TEST_CASE("StreamRegs: the NOC side applies whole words like the core side", "[sim_noc][streams]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    sim::StreamRegs s(a, hal::stream::kNumStreamsTensix);
    CHECK(s.num_streams() == 64);
    const uint32_t upd = hal::stream::reg_addr(63, a.stream.remote_dest_buf_space_available_update);
    const uint32_t cnt = hal::stream::reg_addr(63, a.stream.remote_dest_buf_space_available);
    const uint32_t v = hal::stream::encode_words_free_delta(9);
    CHECK(s.write(upd, bytes_of(v)));
    CHECK(s.write(upd, bytes_of(v)));
    uint32_t r = 0;
    CHECK(s.read(cnt, {reinterpret_cast<uint8_t*>(&r), 4}));
    CHECK(r == 18u);
    // Partial words, misaligned, and writes to the read-only counter are refused without effect.
    CHECK_FALSE(s.write(upd, bytes_of(v).first(2)));
    CHECK_FALSE(s.write(upd + 2, bytes_of(v)));
    CHECK_FALSE(s.write(cnt, bytes_of(v)));
    CHECK(s.words_free(63) == 18u);
}
