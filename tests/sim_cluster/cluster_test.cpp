// sim::Cluster: connections, Ethernet traffic between chips issued by core programs through the TX
// queue registers, fault hooks, run-until-done reports, determinism and lazy link stepping.
#include <catch2/catch.hpp>

#include "cluster_test_util.h"
#include "hal/encoding.h"

using simtest::Asm;
using simtest::small_spec;
namespace he = hal::eth;

namespace {

std::vector<sim::ChipSpec> two_chips(hal::Arch arch = hal::Arch::WormholeB0) {
    return {small_spec(arch, "c0"), small_spec(arch, "c1")};
}

// Send `size` bytes from local `src` to the peer's `dst` on TXQ `q` and wait until the queue has
// taken the command.
void send(Asm& p, const hal::ArchMap& a, uint32_t q, uint32_t src, uint32_t dst, uint32_t size) {
    p.store(he::txq_reg(q, he::kTxqTransferStartAddr), src)
        .store(he::txq_reg(q, he::kTxqTransferSizeBytes), size)
        .store(he::txq_reg(q, he::kTxqDestAddr), dst)
        .store(he::txq_reg(q, he::kTxqCmd), he::kCmdDataPacket)
        .wait_eq(he::txq_reg(q, a.eth.txq_busy_reg), 0, a.eth.txq_busy_mask);
}

void remote_reg_write(Asm& p, const hal::ArchMap& a, uint32_t q, uint32_t reg, uint32_t value) {
    p.store(he::txq_reg(q, he::kTxqDestAddr), reg)
        .store(he::txq_reg(q, he::kTxqRemoteRegData), value)
        .store(he::txq_reg(q, he::kTxqCmd), he::kCmdRemoteRegWrite)
        .wait_eq(he::txq_reg(q, a.eth.txq_busy_reg), 0, a.eth.txq_busy_mask);
}

std::vector<uint8_t> pattern(uint32_t n, uint32_t seed) {
    std::vector<uint8_t> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 131 + seed * 17) >> 1);
    return v;
}

}  // namespace

TEST_CASE("cluster: connect validates chips, channels and reuse", "[cluster]") {
    sim::Cluster c(two_chips());
    CHECK(c.chip_count() == 2);
    CHECK_THROWS_WITH(c.connect(0, 0, 2, 0), Catch::Contains("chip 2 does not exist"));
    CHECK_THROWS_WITH(c.connect(0, 2, 1, 0),
                      Catch::Contains("chip 0 eth channel 2 does not exist"));
    CHECK_THROWS_WITH(c.connect(0, 0, 0, 0), Catch::Contains("joined to itself"));
    c.connect(0, 0, 1, 1);
    CHECK_THROWS_WITH(c.connect(1, 1, 0, 1),
                      Catch::Contains("chip 1 eth channel 1 is already connected"));
    c.connect(0, 1, 0 + 1, 0);
    CHECK(c.connection_count() == 2);
    CHECK(c.peer(0, 0) == sim::EthPort{1, 1});
    CHECK(c.peer(1, 0) == sim::EthPort{0, 1});
    CHECK_THROWS_AS(c.link(1, 5), std::out_of_range);
    CHECK(c.links_instantiated() == 0);
    CHECK(c.chip(0).tile_count() == 0);  // nothing instantiated until used
    c.chip(1).tile(2, 0);                // channel 1 of chip 1: builds its link and the peer core
    CHECK(c.links_instantiated() == 1);
    CHECK(c.chip(0).instantiated(1, 0));
    CHECK_THROWS_WITH(
        sim::Cluster({small_spec(hal::Arch::WormholeB0), small_spec(hal::Arch::Blackhole)}),
        Catch::Contains("different arches"));
    CHECK_THROWS_AS(sim::Cluster({}), std::invalid_argument);
}

TEST_CASE(
    "cluster: an Ethernet send and a remote register write by a core program land in the peer",
    "[cluster][eth]") {
    for (const hal::Arch arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
        const hal::ArchMap& a = hal::arch_map(arch);
        INFO(a.name);
        sim::Cluster c(two_chips(arch));
        c.connect(0, 0, 1, 1);
        const auto data = pattern(5000, 1);  // 5000 -> 4992 B sent (multiple of 16): 4 frames
        const uint32_t size = 4992;
        c.chip(0).write(1, 0, 0x20000, data);
        const uint32_t update =
            hal::stream::reg_addr(2, a.stream.remote_dest_buf_space_available_update);
        Asm p(a.app_fw_base);
        send(p, a, 0, 0x20000, 0x30000, size);
        remote_reg_write(p, a, 0, update, hal::stream::encode_words_free_delta(5));
        p.exit(0);
        simtest::load_and_release(c.chip(0), 1, 0, p);
        const auto r = c.run_until_done(100'000);
        REQUIRE(r.done);
        REQUIRE(c.chip(0).tile(1, 0).state() == sim::RunState::Exited);
        CHECK(c.chip(0).tile(1, 0).exit_code() == 0);
        // The frames are still on the wire: run until the link has delivered everything.
        for (int i = 0; i < 10'000 && !c.link(0, 0).idle(); ++i) c.step(10);
        REQUIRE(c.link(0, 0).idle());
        std::vector<uint8_t> got(size + 16);
        c.chip(1).read(2, 0, 0x30000, got);
        CHECK(std::vector<uint8_t>(got.begin(), got.begin() + size) ==
              std::vector<uint8_t>(data.begin(), data.begin() + size));
        CHECK(std::vector<uint8_t>(got.begin() + size, got.end()) == std::vector<uint8_t>(16, 0));
        CHECK(c.chip(1).streams(2, 0).words_free(2) == 5);
        const auto& st = c.link(0, 0).stats(sim::eth::Dir::AtoB);
        CHECK(st.bytes_delivered == size);
        CHECK(st.reg_writes_delivered == 1);
        CHECK(st.commands_completed == 2);
        CHECK(c.chip(0).txq(1, 0)->errors().empty());
        CHECK(c.chip(1).txq(2, 0)->errors().empty());
        // The data landed when the link model says: completions carry the cycle.
        const auto& comp = c.link(0, 0).completions(sim::eth::Dir::AtoB);
        REQUIRE(comp.size() == 2);
        CHECK(comp[0].size == size);
        CHECK(comp[0].cycle > 500);
        CHECK(comp[0].cycle < c.cycle());
    }
}

namespace {

struct PingPong {
    uint64_t round_trip = 0;
    uint64_t cycles = 0;
    std::vector<sim::eth::Completion> ab, ba;
    std::vector<uint8_t> l1_a, l1_b;
};

// Core A (chip 0 chan 0) sends a 16-B token to core B (chip 1 chan 1), which answers with its own;
// A measures the round trip with mcycle. `threads` 2: each chip on its own thread.
PingPong ping_pong(bool lazy, uint32_t extra_delay = 0, uint32_t threads = 1) {
    const hal::ArchMap& a = hal::kWormholeB0;
    sim::ClusterOptions o;
    o.lazy_links = lazy;
    o.threads = threads;
    sim::Cluster c(two_chips(), o);
    c.connect(0, 0, 1, 1);
    if (extra_delay) c.link(0, 0).set_extra_delay(extra_delay);
    constexpr uint32_t kToken = 0x30000, kInbox = 0x31000, kResult = 0x32000;
    for (uint32_t chip : {0u, 1u})
        c.chip(chip).write32(chip == 0 ? 1 : 2, 0, kToken, 0x600D0000 + chip);
    Asm pa(a.app_fw_base);
    pa.program().emit(rv::csrr(rv::s0, rv::csr::mcycle));
    send(pa, a, 0, kToken, kInbox, 16);
    pa.wait_eq(kInbox, 0x600D0001);
    pa.program().emit(rv::csrr(rv::s1, rv::csr::mcycle)).emit(rv::sub(rv::s1, rv::s1, rv::s0));
    pa.program().li(rv::t0, kResult).emit(rv::sw(rv::s1, rv::t0, 0));
    pa.exit(0);
    Asm pb(a.app_fw_base);
    pb.wait_eq(kInbox, 0x600D0000);
    send(pb, a, 0, kToken, kInbox, 16);
    pb.exit(0);
    simtest::load_and_release(c.chip(0), 1, 0, pa);
    simtest::load_and_release(c.chip(1), 2, 0, pb);
    const auto r = c.run_until_done(100'000);
    REQUIRE(r.done);
    for (const auto& core : r.cores) {
        INFO(core.describe());
        CHECK(core.state == sim::RunState::Exited);
        CHECK(core.exit_code == 0);
    }
    PingPong out;
    out.round_trip = c.chip(0).read32(1, 0, kResult);
    out.cycles = r.cycles;
    out.ab = c.link(0, 0).completions(sim::eth::Dir::AtoB);
    out.ba = c.link(0, 0).completions(sim::eth::Dir::BtoA);
    out.l1_a.resize(0x1000);
    out.l1_b.resize(0x1000);
    c.chip(0).read(1, 0, 0x30000, out.l1_a);
    c.chip(1).read(2, 0, 0x30000, out.l1_b);
    return out;
}

}  // namespace

TEST_CASE("cluster: ping-pong between two chips, deterministic, lazy link stepping exact",
          "[cluster][eth]") {
    const PingPong lazy = ping_pong(true);
    // Two one-way trips of a 16-B frame (506 cycles each, sim/model/eth/README.md) plus the
    // firmware's own polling and register writes.
    CHECK(lazy.round_trip > 2 * 506);
    CHECK(lazy.round_trip < 2 * 506 + 200);
    const PingPong again = ping_pong(true);
    CHECK(again.round_trip == lazy.round_trip);
    CHECK(again.cycles == lazy.cycles);
    CHECK(again.ab == lazy.ab);
    CHECK(again.l1_a == lazy.l1_a);
    const PingPong eager = ping_pong(false);
    CHECK(eager.round_trip == lazy.round_trip);
    CHECK(eager.cycles == lazy.cycles);
    CHECK(eager.ab == lazy.ab);
    CHECK(eager.ba == lazy.ba);
    CHECK(eager.l1_b == lazy.l1_b);
    // The fault hook's extra delay shows up one for one in each direction (give or take where in
    // its ~12-cycle polling loop each core sees the token arrive).
    const PingPong slow = ping_pong(true, 1000);
    CHECK(slow.round_trip >= lazy.round_trip + 2000 - 12);
    CHECK(slow.round_trip <= lazy.round_trip + 2000 + 12);
}

TEST_CASE("cluster: each chip on its own thread gives the same ping-pong, to the cycle",
          "[cluster][eth][parallel]") {
    // B exits right after it answers, A one trip later: the stop falls inside a window in which
    // one partition is no longer busy, and must still be the cycle A exits at.
    for (const bool lazy : {true, false}) {
        for (const uint32_t delay : {0u, 1000u}) {
            INFO("lazy " << lazy << " extra delay " << delay);
            const PingPong serial = ping_pong(lazy, delay);
            const PingPong parallel = ping_pong(lazy, delay, 2);
            CHECK(parallel.round_trip == serial.round_trip);
            CHECK(parallel.cycles == serial.cycles);
            CHECK(parallel.ab == serial.ab);
            CHECK(parallel.ba == serial.ba);
            CHECK(parallel.l1_a == serial.l1_a);
            CHECK(parallel.l1_b == serial.l1_b);
        }
    }
}

TEST_CASE("cluster: threads are checked: at least one, and links with latency to run apart",
          "[cluster][parallel]") {
    sim::ClusterOptions none;
    none.threads = 0;
    CHECK_THROWS_WITH(sim::Cluster(two_chips(), none), "sim::Cluster: threads must be at least 1");
    sim::ClusterOptions instant;
    instant.threads = 2;
    instant.link = sim::eth::LinkConfig::for_arch(hal::kWormholeB0);
    instant.link->latency_cycles = 0;
    CHECK_THROWS_WITH(sim::Cluster(two_chips(), instant),
                      "sim::Cluster: 2 threads need links of at least 1 cycle of latency (the "
                      "window the partitions run alone), got 0");
    instant.threads = 1;  // one partition steps both sides of every link together: no window
    CHECK_NOTHROW(sim::Cluster(two_chips(), instant));
    sim::ClusterOptions many;
    many.threads = 16;  // more threads than chips: one partition per chip
    sim::Cluster c(two_chips(), many);
    c.step(1000);
    CHECK(c.cycle() == 1000);
}

TEST_CASE("cluster: the link status word follows the link on both ends", "[cluster][eth]") {
    for (const hal::Arch arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
        const hal::EthLinkStatus& w = hal::arch_map(arch).link_status;
        INFO(hal::arch_map(arch).name);
        sim::Cluster c(two_chips(arch));
        c.connect(0, 0, 1, 1);  // chip 0 core 1-0 <-> chip 1 core 2-0
        const auto word = [&](uint32_t chip, uint32_t x) {
            return c.chip(chip).read32(x, 0, w.addr);
        };
        c.chip(0).tile(1, 0);  // builds the link and its other end
        c.chip(0).tile(2, 0);  // channel 1: not connected
        CHECK(word(0, 1) == w.up);
        CHECK(word(1, 2) == w.up);
        CHECK(word(0, 2) == w.down);
        c.step(100);
        c.link(0, 0).set_up(false);
        CHECK(word(0, 1) == w.down);
        CHECK(word(1, 2) == w.down);
        c.step(1000);  // it stays down while the clock runs
        CHECK(word(0, 1) == w.down);
        CHECK(word(1, 2) == w.down);
        c.link(1, 1).set_up(true);  // either end's port names the same link
        CHECK(word(0, 1) == w.up);
        CHECK(word(1, 2) == w.up);
        CHECK(word(0, 2) == w.down);
        // A port connected after its core exists comes up then, and so does its new peer.
        c.connect(0, 1, 1, 0);
        CHECK(word(0, 2) == w.up);
        CHECK(word(1, 1) == w.up);
    }
}

TEST_CASE("cluster: a link held down delays delivery until it comes back up", "[cluster][eth]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    sim::Cluster c(two_chips());
    c.connect(0, 1, 1, 0);
    c.link(0, 1).set_up(false);
    c.chip(0).write32(2, 0, 0x30000, 0xFEEDF00D);
    Asm p(a.app_fw_base);
    send(p, a, 0, 0x30000, 0x30000, 16);
    p.exit(0);
    simtest::load_and_release(c.chip(0), 2, 0, p);
    c.step(5000);
    // No frame starts while the link is down, so the queue stays busy and the core keeps polling.
    CHECK(c.chip(0).tile(2, 0).state() == sim::RunState::Running);
    CHECK(c.chip(0).txq(2, 0)->busy(0));
    CHECK(c.chip(1).read32(1, 0, 0x30000) == 0);
    c.link(0, 1).set_up(true);
    c.step(1000);
    CHECK(c.chip(0).tile(2, 0).state() == sim::RunState::Exited);
    CHECK(c.chip(1).read32(1, 0, 0x30000) == 0xFEEDF00D);
}

TEST_CASE("cluster: run_until_done reports where a still-running core is stuck", "[cluster]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    sim::Cluster c(two_chips());
    Asm spin(a.app_fw_base);
    spin.program().emit(rv::nop());
    spin.spin();
    Asm quit(a.app_fw_base);
    quit.exit(3);
    simtest::load_and_release(c.chip(1), 2, 2, spin);
    simtest::load_and_release(c.chip(0), 1, 1, quit);
    const auto r = c.run_until_done(20'000);
    CHECK_FALSE(r.done);
    CHECK(r.cycles == 20'000);
    REQUIRE(r.cores.size() == 2);
    CHECK(r.cores[0].describe() == "chip 0 core 1-1: exited with status 3");
    const auto stuck = r.stuck();
    REQUIRE(stuck.size() == 1);
    CHECK(stuck[0].describe() == "chip 1 core 2-2: running at pc 0x00009044");
    // A second call stops at once once nothing is busy: put the spinning core back in reset.
    c.chip(1).write32(2, 2, hal::common::kSoftResetReg, hal::common::kSoftResetAllRiscs);
    const auto r2 = c.run_until_done(20'000);
    CHECK(r2.done);
    CHECK(r2.cycles == 0);
}

TEST_CASE("cluster: an idle cluster skips to its next link event", "[cluster]") {
    sim::Cluster c(two_chips());
    c.connect(0, 0, 1, 0);
    c.link(0, 0);
    c.step(50'000'000);  // nothing running: only counts cycles
    CHECK(c.cycle() == 50'000'000);
    CHECK(c.chip(1).cycle() == 50'000'000);
    CHECK(c.link(0, 0).cycle() == 50'000'000);
}
