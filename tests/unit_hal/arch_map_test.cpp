// The arch map's per-arch data and the pure encodings, checked against the reference facts.
#include "hal/arch_map.h"

#include <catch2/catch.hpp>
#include <string>

#include "arch_facts.h"
#include "hal/encoding.h"
#include "hal/status.h"

TEMPLATE_TEST_CASE("arch map NoC, stream and Ethernet data match the reference", "[arch_map]",
                   facts::Wormhole, facts::Blackhole) {
    using F = TestType;
    const hal::ArchMap& a = F::map;
    CHECK(std::string(a.name) == F::name);
    CHECK(a.noc_cmd_buf_stride == F::cmd_buf_stride);
    CHECK(a.noc.at_data == F::at_data);
    CHECK(a.noc.cmd_ctrl == F::cmd_ctrl);
    CHECK(a.noc.node_id == F::node_id);
    CHECK(a.noc.clear_outstanding_req_cnt == F::clear_trid);
    CHECK(a.noc_max_burst_bytes == F::max_burst);
    CHECK(a.noc.inline_to_l1_unsafe == F::inline_l1_refused);
    CHECK(a.stream.remote_src == F::stream_scratch);
    CHECK(a.stream.remote_dest_buf_size == F::stream_buf_size);
    CHECK(a.stream.remote_dest_buf_space_available_update == F::stream_update);
    CHECK(a.stream.remote_dest_buf_space_available == F::stream_avail);
    CHECK(a.eth_tx_queues == F::eth_queues);
    CHECK(a.eth.remote_reg_write_queues == 0x1);
    CHECK(&hal::arch_map(a.arch) == &a);
}

TEST_CASE("arch map per-arch details", "[arch_map]") {
    using hal::kBlackhole;
    using hal::kWormholeB0;
    CHECK(kWormholeB0.stream.remote_dest_buf_start == 3);
    CHECK(kBlackhole.stream.remote_dest_buf_start == 8);
    CHECK(kWormholeB0.stream.buf_space_available == 28);
    CHECK(kBlackhole.stream.buf_space_available == 260);
    CHECK(kWormholeB0.stream.firmware_scratch == 247);
    CHECK(kBlackhole.stream.firmware_scratch == 208);
    CHECK(kWormholeB0.stream.phase_auto_cfg_ptr == 12);
    CHECK(kBlackhole.stream.phase_auto_cfg_ptr == hal::kNoRegister);
    CHECK(kWormholeB0.eth.rxq_base == 0xFFB92000);
    CHECK(kBlackhole.eth.rxq_base == 0xFFB94000);
    CHECK(kWormholeB0.eth.txq_busy_reg == 0x04);
    CHECK(kBlackhole.eth.txq_busy_reg == 0x08);
    CHECK(kBlackhole.eth.txq_busy_mask == (1u << 16));
    CHECK_FALSE(kWormholeB0.eth.txq_busy_cmd_readback);
    CHECK(kBlackhole.eth.txq_busy_cmd_readback);
    CHECK(kWormholeB0.noc.at_len_be_1 == hal::kNoRegister);
    CHECK(kBlackhole.noc.at_len_be_1 == 0x24);
    CHECK(kWormholeB0.noc.endpoint_id == 0x30);
    CHECK(kBlackhole.noc.endpoint_id == 0x48);
    // Fields other parts of the project already use keep their values.
    CHECK(kWormholeB0.eth_l1_size == 256 * 1024);
    CHECK(kBlackhole.eth_l1_size == 512 * 1024);
    CHECK(kWormholeB0.app_fw_base == 0x9040);
    CHECK(kWormholeB0.launch_app_flag == 0x9004);
}

TEST_CASE("arch map router windows: WH the application window, BH unreserved L1", "[arch_map]") {
    using hal::kBlackhole;
    using hal::kWormholeB0;
    // Wormhole: FIRMWARE_BASE up to ROUTING_FW_RESERVED_BASE, the application window itself.
    CHECK(kWormholeB0.router_fw.base == 0x9040);
    CHECK(kWormholeB0.router_fw.end() == 0x11000);
    CHECK(kWormholeB0.router_fw.base == kWormholeB0.app_fw_base);
    CHECK(kWormholeB0.router_fw.size == kWormholeB0.app_fw_size);
    // ERISC_L1_UNRESERVED_BASE with the routing firmware's 28 KiB kept free.
    CHECK(kWormholeB0.l1_unreserved_base == 0x11000 + 28 * 1024);
    // Blackhole: 48 KiB from ERISC_L1_UNRESERVED_BASE = align64(MAP_END 0xF330 + 25 KiB), above
    // the AERISC firmware (0x3330, 24 KiB) and the subordinate's firmware (0x9330, 24 KiB).
    CHECK(kBlackhole.l1_unreserved_base == 0x15740);
    CHECK(kBlackhole.l1_unreserved_base == (0xF330 + 25 * 1024 + 63) / 64 * 64);
    CHECK(kBlackhole.router_fw.base == 0x15740);
    CHECK(kBlackhole.router_fw.size == 0xC000);
    CHECK(kBlackhole.router_fw.end() == 0x21740);
    CHECK(kBlackhole.app_fw_base == 0x3330);
    CHECK(kBlackhole.app_fw_base + kBlackhole.app_fw_size == 0x9330);
    CHECK(hal::router_window_ok(kWormholeB0));
    CHECK(hal::router_window_ok(kBlackhole));
}

namespace {
// `a` with one of its L1 windows replaced.
hal::ArchMap with(hal::ArchMap a, hal::L1Window hal::ArchMap::*window, hal::L1Window w) {
    a.*window = w;
    return a;
}
}  // namespace

TEST_CASE("arch map cold windows: WH 2 KiB above the router block, BH none", "[arch_map]") {
    using hal::kBlackhole;
    using hal::kWormholeB0;
    CHECK(kWormholeB0.router_cold.base == 0x3F3E0);
    CHECK(kWormholeB0.router_cold.size == 0x800);
    CHECK(kBlackhole.router_cold.base == 0);
    CHECK(kBlackhole.router_cold.size == 0);
    CHECK(hal::router_cold_window_ok(kWormholeB0));
    CHECK(hal::router_cold_window_ok(kBlackhole));
    auto with_cold = [](hal::L1Window w) {
        return with(hal::kWormholeB0, &hal::ArchMap::router_cold, w);
    };
    // Over the router window, in the reserved low L1, into the syseng area, misaligned, an empty
    // window that names an address: refused.
    CHECK_FALSE(hal::router_cold_window_ok(with_cold({.base = 0x10000, .size = 0x800})));
    CHECK_FALSE(hal::router_cold_window_ok(with_cold({.base = 0x12000, .size = 0x800})));
    CHECK_FALSE(hal::router_cold_window_ok(with_cold({.base = 0x3FC00, .size = 0x800})));
    CHECK_FALSE(hal::router_cold_window_ok(with_cold({.base = 0x3F3E8, .size = 0x800})));
    CHECK_FALSE(hal::router_cold_window_ok(with_cold({.base = 0x3F3E0, .size = 0})));
    CHECK_FALSE(hal::router_window_ok(with_cold({.base = 0x3F3E0, .size = 0x808})));
    CHECK(hal::router_cold_window_ok(with_cold({.base = 0x20000, .size = 0x1000})));
}

TEST_CASE("arch map router window check refuses misplaced windows", "[arch_map]") {
    auto with_window = [](hal::L1Window w) {
        return with(hal::kBlackhole, &hal::ArchMap::router_fw, w);
    };
    // Over the subordinate ERISC's firmware (below the unreserved base), over the application
    // window, into the syseng area, misaligned, empty.
    CHECK_FALSE(hal::router_window_ok(with_window({.base = 0x9330, .size = 0x10000})));
    CHECK_FALSE(hal::router_window_ok(with_window({.base = 0x3330, .size = 0x10000})));
    CHECK_FALSE(hal::router_window_ok(with_window({.base = 0x68000, .size = 0x10000})));
    CHECK_FALSE(hal::router_window_ok(with_window({.base = 0x15748, .size = 0x10000})));
    CHECK_FALSE(hal::router_window_ok(with_window({.base = 0x15740, .size = 0})));
    // The application window itself, or the top of usable L1, are accepted.
    CHECK(hal::router_window_ok(with_window({.base = 0x3330, .size = 24 * 1024})));
    CHECK(hal::router_window_ok(with_window({.base = 0x60000, .size = 0x10000})));
    // A link status word inside the window (WH's lies low in L1): refused.
    hal::ArchMap wh = hal::kWormholeB0;
    wh.link_status.addr = 0x9100;
    CHECK_FALSE(hal::router_window_ok(wh));
    hal::ArchMap flag_inside = hal::kBlackhole;
    flag_inside.launch_app_flag = 0x15800;
    CHECK_FALSE(hal::router_window_ok(flag_inside));
}

TEST_CASE("common NoC encodings", "[arch_map][encoding]") {
    namespace noc = hal::noc;
    CHECK(noc::kCtrlCmdWrite == 2);
    CHECK(noc::kCtrlRespMarked == 0x10);
    CHECK(noc::kCtrlVcStatic == 0x80);
    CHECK(noc::static_vc(1) == (0x80u | (1u << 13)));
    CHECK(noc::static_vc(5) == (0x80u | (5u << 13)));
    CHECK(noc::ctrl_vc(noc::static_vc(5)) == 5);
    CHECK(noc::packet_tag(15) == (15u << 10));
    CHECK(noc::tag_trid(noc::packet_tag(9)) == 9);
    CHECK(noc::status::mst_reqs_outstanding_id(3) == 0x13);
    CHECK(noc::status::mst_write_reqs_outgoing_id(15) == 0x2F);
    CHECK(noc::status::kMstNonpostedWrReqSent == 0xA);
    CHECK(noc::status::kMstWrAckReceived == 0x1);
    CHECK(noc::status::kMstRdRespReceived == 0x2);
    CHECK(noc::status_addr(1, 0xA) == 0xFFB30228);
    CHECK(noc::cmd_buf_base(hal::kWormholeB0, 1, 3) == 0xFFB30C00);
    CHECK(noc::cmd_buf_base(hal::kBlackhole, 1, 3) == 0xFFB31800);
    CHECK(noc::unicast_coord(5, 7) == (5u | (7u << 6)));
    CHECK(noc::mcast_coord({.x_start = 1, .y_start = 2, .x_end = 3, .y_end = 4}) ==
          (3u | (4u << 6) | (1u << 12) | (2u << 18)));
    CHECK(noc::inline_byte_enable(0x1000C, 0xF) == 0xF000);
    CHECK(noc::atomic_incr_len_be(0x100C, 31) == ((1u << 12) | (31u << 2) | 3u));
}

TEST_CASE("NoC address registers round-trip on both arches", "[encoding]") {
    for (const hal::ArchMap* a : {&hal::kWormholeB0, &hal::kBlackhole}) {
        for (uint64_t local : {0ull, 0x1234ull, 0xF'FFFF'FFF0ull, 0x8'0000'0000ull}) {
            for (uint32_t coord :
                 {0u, hal::noc::unicast_coord(63, 63), hal::noc::mcast_coord({63, 1, 2, 63})}) {
                const auto regs = hal::noc::encode_addr(*a, local, coord);
                const auto back = hal::noc::decode_addr(*a, regs);
                CHECK(back.local == local);
                CHECK(back.coord_field == coord);
                if (a->arch == hal::Arch::WormholeB0) {
                    CHECK(regs.hi == 0);
                    CHECK(regs.mid == (static_cast<uint32_t>(local >> 32) | (coord << 4)));
                } else {
                    CHECK(regs.mid == static_cast<uint32_t>(local >> 32));
                    CHECK(regs.hi == coord);
                }
            }
        }
    }
    const hal::NocRect r{7, 8, 9, 10};
    const hal::NocRect back = hal::noc::decode_mcast_coord(hal::noc::mcast_coord(r));
    CHECK(back.x_start == 7);
    CHECK(back.y_start == 8);
    CHECK(back.x_end == 9);
    CHECK(back.y_end == 10);
}

TEST_CASE("status names", "[status]") {
    CHECK(std::string(hal::to_string(hal::Status::Ok)) == "ok");
    CHECK(std::string(hal::to_string(hal::Status::Timeout)) == "timeout");
    CHECK(std::string(hal::to_string(hal::Status::Terminated)) == "terminated");
    CHECK(std::string(hal::to_string(hal::Status::Unsupported)) == "unsupported");
    CHECK(std::string(hal::to_string(static_cast<hal::Status>(200))) == "unknown-status");
}
