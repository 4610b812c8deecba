// sim::Chip: core MMIO routing (NIU, stream registers, TX queues, faults), NOC traffic between two
// cores issued by core programs, bus errors, the host access path, lazy tiles and stepping.
#include <catch2/catch.hpp>
#include <cstring>

#include "cluster_test_util.h"
#include "hal/encoding.h"

using simtest::Asm;
using simtest::small_spec;
namespace hn = hal::noc;
namespace hc = hal::common;

namespace {

constexpr uint32_t kResult = 0x20000;  // L1 words the programs write their observations to

void run_until_stopped(sim::Chip& chip, uint32_t x, uint32_t y, uint64_t budget = 200'000) {
    for (uint64_t i = 0; i < budget && chip.tile(x, y).state() == sim::RunState::Running; ++i)
        chip.step(1);
}

}  // namespace

TEST_CASE("chip: spec validation", "[chip]") {
    auto s = small_spec();
    s.grid_x = 0;
    CHECK_THROWS_AS(sim::Chip(s), std::invalid_argument);
    s = small_spec();
    s.cores.push_back({1, 1, sim::CoreKind::Worker, 4096});
    CHECK_THROWS_WITH(sim::Chip(s), Catch::Contains("core 1-1 is listed twice"));
    s = small_spec();
    s.cores.push_back({4, 0, sim::CoreKind::Worker, 4096});
    CHECK_THROWS_WITH(sim::Chip(s), Catch::Contains("outside the grid"));
    s = small_spec();
    s.cores[0].l1_size = 3;
    CHECK_THROWS_WITH(sim::Chip(s), Catch::Contains("L1 size 3"));
    s = small_spec();
    s.dram_channels = {{{1, 1}}};
    CHECK_THROWS_WITH(sim::Chip(s), Catch::Contains("DRAM port 1-1 is listed twice"));
}

TEST_CASE("chip: tiles are instantiated lazily, eth channels map to cores", "[chip]") {
    sim::Chip chip(small_spec());
    CHECK(chip.tile_count() == 0);
    CHECK(chip.eth_channels() == 2);
    CHECK(chip.eth_core(1) == sim::noc::Coord{2, 0});
    CHECK(chip.eth_channel(1, 0) == 0u);
    CHECK_FALSE(chip.eth_channel(1, 1).has_value());
    CHECK_THROWS_AS(chip.eth_core(2), std::out_of_range);
    CHECK_THROWS_WITH(chip.tile(3, 0), Catch::Contains("no core at 3-0"));
    CHECK(chip.find_tile(1, 0) == nullptr);
    sim::Tile& t = chip.tile(1, 0);
    CHECK(chip.tile_count() == 1);
    CHECK(t.state() == sim::RunState::Reset);
    CHECK(t.config().l1_size == hal::kWormholeB0.eth_l1_size);
    CHECK(chip.txq(1, 0) != nullptr);
    CHECK(chip.txq(1, 1) == nullptr);  // a worker has no TX queues
    CHECK(chip.streams(1, 0).num_streams() == hal::kWormholeB0.eth_streams);
    CHECK(chip.streams(1, 1).num_streams() == hal::stream::kNumStreamsTensix);
    CHECK(chip.tile_count() == 2);
    CHECK(chip.tile(1, 1).config().l1_size == 1024 * 1024);
}

TEST_CASE("chip: core MMIO reaches the NIU and the stream registers and reads them back",
          "[chip]") {
    for (const hal::Arch arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
        const hal::ArchMap& a = hal::arch_map(arch);
        sim::Chip chip(small_spec(arch));
        const uint32_t buf0 = hn::cmd_buf_base(a, 0, 0);
        const uint32_t buf1_noc1 = hn::cmd_buf_base(a, 1, 1);
        const uint32_t scratch = hal::stream::reg_addr(5, a.stream.remote_src);
        const uint32_t bufsize = hal::stream::reg_addr(7, a.stream.remote_dest_buf_size);
        const uint32_t update =
            hal::stream::reg_addr(7, a.stream.remote_dest_buf_space_available_update);
        const uint32_t space = hal::stream::reg_addr(7, a.stream.remote_dest_buf_space_available);
        Asm p(a.app_fw_base);
        p.store(buf0 + hn::kTargAddrLo, 0x12345670)
            .store(buf1_noc1 + hn::kRetAddrLo, 0xCAFE0010)
            .store(scratch, 0xA5A5F00D)
            .store(bufsize, 100)
            .store(update, hal::stream::encode_words_free_delta(-30))
            .copy(buf0 + hn::kTargAddrLo, kResult + 0)
            .copy(buf1_noc1 + hn::kRetAddrLo, kResult + 4)
            .copy(scratch, kResult + 8)
            .copy(space, kResult + 12)
            .copy(buf0 + a.noc.node_id, kResult + 16)
            .copy(hn::cmd_buf_base(a, 1, 0) + a.noc.node_id, kResult + 20)
            .exit(0);
        simtest::load_and_release(chip, 2, 1, p);
        run_until_stopped(chip, 2, 1);
        INFO(a.name);
        REQUIRE(chip.tile(2, 1).state() == sim::RunState::Exited);
        CHECK(chip.tile(2, 1).exit_code() == 0);
        CHECK(chip.read32(2, 1, kResult + 0) == 0x12345670);
        CHECK(chip.read32(2, 1, kResult + 4) == 0xCAFE0010);
        CHECK(chip.read32(2, 1, kResult + 8) == 0xA5A5F00D);
        CHECK(chip.read32(2, 1, kResult + 12) == 70);
        CHECK(chip.read32(2, 1, kResult + 16) == hn::unicast_coord(2, 1));
        CHECK(chip.read32(2, 1, kResult + 20) ==
              hn::unicast_coord(4 - 1 - 2, 3 - 1 - 1));  // NOC1 mirrored
        // The same registers seen from C++ and through the host path.
        CHECK(chip.streams(2, 1).words_free(7) == 70);
        CHECK(chip.read32(2, 1, scratch) == 0xA5A5F00D);
        CHECK(chip.niu(2, 1).mmio_read(buf0 + hn::kTargAddrLo) == 0x12345670u);
        chip.write32(2, 1, buf0 + hn::kRetAddrLo, 0x777);
        CHECK(chip.read32(2, 1, buf0 + hn::kRetAddrLo) == 0x777);
    }
}

TEST_CASE("chip: MMIO that nothing answers, and sub-word NIU stores, fault the core", "[chip]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    struct Case {
        const char* what;
        std::vector<uint32_t> code;
        uint32_t cause;
        uint32_t tval;
    };
    const uint32_t niu = hn::cmd_buf_base(a, 0, 0);
    const std::vector<Case> cases{
        {"load from an unmodelled block",
         {rv::lui(rv::t0, 0xFFB80), rv::lw(rv::t1, rv::t0, 0)},
         5,
         0xFFB80000},
        {"store to an unmodelled block",
         {rv::lui(rv::t0, 0xFFB80), rv::sw(rv::t1, rv::t0, 4)},
         7,
         0xFFB80004},
        {"byte store to the NIU",
         {rv::lui(rv::t0, niu >> 12), rv::sb(rv::t1, rv::t0, 1)},
         7,
         niu + 1},
        {"TX queue on a worker",
         {rv::lui(rv::t0, hc::kEthTxqBase >> 12), rv::lw(rv::t1, rv::t0, 4)},
         5,
         hc::kEthTxqBase + 4},
        {"stream beyond the worker's 64",
         {rv::lui(rv::t0, (hc::kStreamRegsBase + 64 * hc::kStreamRegSpace) >> 12),
          rv::lw(rv::t1, rv::t0, 0)},
         5,
         hc::kStreamRegsBase + 64 * hc::kStreamRegSpace},
    };
    for (const Case& c : cases) {
        INFO(c.what);
        sim::Chip chip(small_spec());
        Asm p(a.app_fw_base);
        for (uint32_t w : c.code) p.program().emit(w);
        p.exit(0);
        simtest::load_and_release(chip, 1, 1, p);
        run_until_stopped(chip, 1, 1, 1000);
        REQUIRE(chip.tile(1, 1).state() == sim::RunState::Trapped);
        CHECK(chip.tile(1, 1).trap().cause == c.cause);
        CHECK(chip.tile(1, 1).trap().tval == c.tval);
    }
}

namespace {

// A program that writes `len` bytes from its L1 `src` to (dx, dy) L1 `dst` on `noc` with command
// buffer 0, non-posted, and waits for the write ack before exiting with 0.
Asm noc_write_program(const hal::ArchMap& a, uint32_t sx, uint32_t sy, uint32_t noc, uint32_t src,
                      uint32_t dx, uint32_t dy, uint32_t dst, uint32_t len) {
    const uint32_t b = hn::cmd_buf_base(a, noc, 0);
    // NOC1 programs coordinates in its mirrored space.
    auto nx = [&](uint32_t x) { return noc == 0 ? x : 4 - 1 - x; };
    auto ny = [&](uint32_t y) { return noc == 0 ? y : 3 - 1 - y; };
    const auto targ = hn::encode_addr(a, src, hn::unicast_coord(nx(sx), ny(sy)));
    const auto ret = hn::encode_addr(a, dst, hn::unicast_coord(nx(dx), ny(dy)));
    Asm p(a.app_fw_base);
    p.store(b + hn::kTargAddrLo, targ.lo)
        .store(b + hn::kTargAddrMid, targ.mid)
        .store(b + hn::kTargAddrHi, targ.hi)
        .store(b + hn::kRetAddrLo, ret.lo)
        .store(b + hn::kRetAddrMid, ret.mid)
        .store(b + hn::kRetAddrHi, ret.hi)
        .store(b + hn::kCtrl, hn::kCtrlCmdWrite | hn::kCtrlRespMarked)
        .store(b + hn::kAtLenBe, len)
        .store(b + a.noc.cmd_ctrl, hn::kCmdCtrlSend)
        .wait_eq(hn::status_addr(noc, hn::status::kMstWrAckReceived), 1)
        .exit(0);
    return p;
}

}  // namespace

TEST_CASE("chip: a NOC write issued by a core program lands byte-exact in another core's L1",
          "[chip]") {
    for (const hal::Arch arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
        for (uint32_t noc = 0; noc < 2; ++noc) {
            const hal::ArchMap& a = hal::arch_map(arch);
            INFO(a.name << " noc " << noc);
            sim::Chip chip(small_spec(arch));
            const uint32_t src = 0x30010, dst = 0x40010, len = 1000;
            std::vector<uint8_t> data(len);
            for (uint32_t i = 0; i < len; ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
            chip.write(1, 1, src, data);
            chip.tile(2, 2);  // the destination must exist
            auto p = noc_write_program(a, 1, 1, noc, src, 2, 2, dst, len);
            simtest::load_and_release(chip, 1, 1, p);
            run_until_stopped(chip, 1, 1);
            REQUIRE(chip.tile(1, 1).state() == sim::RunState::Exited);
            CHECK(chip.tile(1, 1).exit_code() == 0);
            std::vector<uint8_t> got(len + 32);
            chip.read(2, 2, dst - 16, got);
            CHECK(std::vector<uint8_t>(got.begin(), got.begin() + 16) ==
                  std::vector<uint8_t>(16, 0));
            CHECK(std::vector<uint8_t>(got.begin() + 16, got.begin() + 16 + len) == data);
            CHECK(std::vector<uint8_t>(got.begin() + 16 + len, got.end()) ==
                  std::vector<uint8_t>(16, 0));
            CHECK(chip.network().errors().empty());
            CHECK(chip.network().cycle() == chip.cycle());
        }
    }
}

TEST_CASE("chip: a NOC access to a coordinate with nothing instantiated is a recorded bus error",
          "[chip]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    for (const auto& [dx, dy, what] : {std::tuple{2u, 2u, "worker never instantiated"},
                                       std::tuple{3u, 1u, "no core in the spec"}}) {
        INFO(what);
        sim::Chip chip(small_spec());
        auto p = noc_write_program(a, 1, 1, 0, 0x30000, dx, dy, 0x40000, 64);
        simtest::load_and_release(chip, 1, 1, p);
        run_until_stopped(chip, 1, 1);
        // The request still completes (acked), so the program exits; the error is recorded.
        REQUIRE(chip.tile(1, 1).state() == sim::RunState::Exited);
        CHECK(chip.tile(1, 1).exit_code() == 0);
        const auto& errs = chip.network().errors();
        REQUIRE(errs.size() == 1);
        CHECK(errs[0].kind == sim::noc::NocErrorKind::NoEndpoint);
        CHECK(errs[0].dst == sim::noc::Coord{dx, dy});
        CHECK(errs[0].src == sim::noc::Coord{1, 1});
        CHECK(errs[0].addr == 0x40000);
        CHECK(chip.find_tile(dx, dy) == nullptr);  // the model did not invent a tile
    }
}

TEST_CASE("chip: NOC writes beyond L1 are refused by the endpoint, DRAM answers", "[chip]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    sim::Chip chip(small_spec());
    chip.tile(2, 2);
    // Into the top of the 1 MiB worker L1 and beyond it: refused (AddressRefused), no throw.
    auto p = noc_write_program(a, 1, 1, 0, 0x30000, 2, 2, 1024 * 1024 - 32, 64);
    simtest::load_and_release(chip, 1, 1, p);
    run_until_stopped(chip, 1, 1);
    REQUIRE(chip.tile(1, 1).state() == sim::RunState::Exited);
    REQUIRE(chip.network().errors().size() == 1);
    CHECK(chip.network().errors()[0].kind == sim::noc::NocErrorKind::AddressRefused);
    // DRAM channel 0 answers at both ports.
    sim::Chip chip2(small_spec());
    std::vector<uint8_t> data(64, 0x5A);
    chip2.write(1, 1, 0x30000, data);
    auto q = noc_write_program(a, 1, 1, 0, 0x30000, 0, 1, 0x1000, 64);
    simtest::load_and_release(chip2, 1, 1, q);
    run_until_stopped(chip2, 1, 1);
    REQUIRE(chip2.tile(1, 1).state() == sim::RunState::Exited);
    CHECK(chip2.network().errors().empty());
    std::vector<uint8_t> got(64);
    REQUIRE(chip2.dram().channel(0).read(0x1000, got));
    CHECK(got == data);
}

TEST_CASE("chip: remote stream credit by NOC inline write lands in the peer's stream register",
          "[chip]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    sim::Chip chip(small_spec());
    chip.tile(2, 1);
    const uint32_t update =
        hal::stream::reg_addr(3, a.stream.remote_dest_buf_space_available_update);
    const uint32_t b = hn::cmd_buf_base(a, 0, 0);
    const auto targ = hn::encode_addr(a, update, hn::unicast_coord(2, 1));
    Asm p(a.app_fw_base);
    p.store(b + hn::kTargAddrLo, targ.lo)
        .store(b + hn::kTargAddrMid, targ.mid)
        .store(b + a.noc.at_data, hal::stream::encode_words_free_delta(9))
        .store(b + hn::kCtrl, hn::kCtrlCmdWrite | hn::kCtrlWrInline | hn::kCtrlRespMarked)
        .store(b + hn::kAtLenBe, 0xF)
        .store(b + a.noc.cmd_ctrl, hn::kCmdCtrlSend)
        .wait_eq(hn::status_addr(0, hn::status::kMstWrAckReceived), 1)
        .exit(0);
    simtest::load_and_release(chip, 1, 1, p);
    run_until_stopped(chip, 1, 1);
    REQUIRE(chip.tile(1, 1).state() == sim::RunState::Exited);
    CHECK(chip.tile(1, 1).exit_code() == 0);
    CHECK(chip.network().errors().empty());
    CHECK(chip.streams(2, 1).words_free(3) == 9);
}

TEST_CASE("chip: host access path and its errors", "[chip]") {
    sim::Chip chip(small_spec());
    std::vector<uint8_t> b(8, 0);
    CHECK_THROWS_WITH(chip.read(1, 0, 0x3FFFC, b), Catch::Contains("neither inside L1"));
    CHECK_THROWS_WITH(chip.read32(1, 0, 0xFFB80000),
                      Catch::Contains("nothing answers a read at 0xffb80000"));
    // The space-available counter is read-only.
    const uint32_t space =
        hal::stream::reg_addr(0, hal::kWormholeB0.stream.remote_dest_buf_space_available);
    CHECK_THROWS_WITH(chip.write32(1, 0, space, 1), Catch::Contains("nothing answers a write"));
    CHECK_THROWS_WITH(chip.read32(0, 2, 0), Catch::Contains("no core at 0-2"));
    // TX queue registers of an eth core through the host path.
    chip.write32(1, 0, hal::eth::txq_reg(0, hal::eth::kTxqDestAddr), 0x1230);
    CHECK(chip.read32(1, 0, hal::eth::txq_reg(0, hal::eth::kTxqDestAddr)) == 0x1230);
    CHECK(chip.read32(1, 0, hal::eth::txq_reg(0, hal::eth::kTxqMaxPktSizeBytes)) == 1500);
    // The tile's own register block.
    CHECK(chip.read32(1, 0, hc::kSoftResetReg) == hc::kSoftResetAllRiscs);
}

TEST_CASE("chip: idle chips only count cycles, a core held in reset catches up its clock",
          "[chip]") {
    sim::Chip chip(small_spec());
    chip.tile(1, 1);
    chip.step(100'000);
    CHECK(chip.cycle() == 100'000);
    CHECK(chip.quiescent());
    CHECK(chip.tile(1, 1).cycles() == 0);  // not clocked while held in reset...
    (void)chip.read32(1, 1, hc::kWallClockLo);
    CHECK(chip.tile(1, 1).cycles() ==
          100'001);  // ...until its registers are touched (one clock each)
    CHECK(chip.network().cycle() == 100'000);
}

TEST_CASE("chip: busy() follows running cores and the idle word", "[chip]") {
    const hal::ArchMap& a = hal::kWormholeB0;
    sim::Chip chip(small_spec());
    CHECK_FALSE(chip.busy());
    Asm p(a.app_fw_base);
    p.spin();
    simtest::load_and_release(chip, 1, 0, p);
    CHECK(chip.busy());
    chip.set_idle_word(1, 0, a.launch_app_flag);
    CHECK_FALSE(chip.busy());
    chip.write32(1, 0, a.launch_app_flag, 1);
    CHECK(chip.busy());
    CHECK(chip.core_busy(1, 0));
    chip.step(10);
    CHECK(chip.tile(1, 0).pc() == a.app_fw_base);
}
