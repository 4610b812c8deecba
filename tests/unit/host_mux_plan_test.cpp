// The fabric mux as the host plans it (fabric/mux.h): the config and layout it computes, what a
// client of each channel opens, and every bad option refused with a message naming it.
#include <catch2/catch.hpp>
#include <string>

#include "expect_error.h"
#include "fabric/cluster_descriptor.h"
#include "fabric/fabric_plan.h"
#include "fabric/mux.h"
#include "fabric/soc_descriptor.h"
#include "protocol/fabric_mux.h"

using Catch::Matchers::Contains;
using fabric::CoreCoord;
using fabric::ErrorCategory;
using fabric::FabricDir;
using fabric::MuxOptions;
using fabric::test::expect_error;
namespace pf = protocol::fabric;

namespace {

const std::string kDir = FABRIC_SOC_DESCRIPTOR_DIR;

struct Setup {
    fabric::SocDescriptor soc =
        fabric::SocDescriptor::load_file(kDir + "/wormhole_b0_80_arch.yaml");
    fabric::ClusterDescriptor cluster =
        fabric::ClusterDescriptor::load_file(kDir + "/n300_cluster.yaml");
    fabric::FabricPlan plan = [this] {
        fabric::FabricOptions o;
        o.chips = {0, 1};
        o.payload_bytes = 2048;
        return fabric::plan_fabric(cluster, soc, o);
    }();
    CoreCoord tensix() const { return soc.cores(fabric::CoreType::Worker)[1]; }
};

std::string bad(const Setup& s, const MuxOptions& o, CoreCoord core, fabric::ChipId chip = 0,
                FabricDir dir = FabricDir::East) {
    return expect_error(ErrorCategory::BadInput,
                        [&] { (void)fabric::plan_mux(s.plan, s.soc, chip, dir, core, o); });
}

}  // namespace

TEST_CASE("mux plan: config, layout and client channels", "[mux]") {
    const Setup s;
    MuxOptions o;
    o.full_channels = 3;
    o.full_slots = 2;
    o.header_channels = 2;
    o.header_slots = 4;
    const fabric::MuxPlacement m =
        fabric::plan_mux(s.plan, s.soc, 0, FabricDir::East, s.tensix(), o);
    const fabric::RouterPlacement& r = s.plan.router(0, FabricDir::East);
    CHECK(m.config.magic == pf::kMuxConfigMagic);
    CHECK(m.config.full_payload_bytes == 2048);  // the router's, when not given
    CHECK(m.config.router_status_addr == r.layout.status);
    CHECK(m.config.downstream.router_x == r.core.core.x);
    CHECK(m.config.downstream.router_y == r.core.core.y);
    CHECK(m.config.downstream.connection == r.layout.connection);
    CHECK(m.channels() == 5);
    CHECK(m.layout.fits);
    CHECK(m.layout.status == pf::endpoint_status_addr(hal::kWormholeB0));
    // Slots: three full-size channels of 2 x (64 + 2048), then two header-only of 4 x 64.
    CHECK(m.layout.full_slot_bytes == 64 + 2048);
    CHECK(m.layout.slots[1] == m.layout.slots[0] + 2 * (64 + 2048));
    CHECK(m.layout.slots[3] == m.layout.slots[0] + 6 * (64 + 2048));
    CHECK(m.layout.slots[4] == m.layout.slots[3] + 4 * 64);
    CHECK(m.layout.end == m.layout.slots[4] + 4 * 64);
    const pf::WorkerChannel full = m.channel(2), header = m.channel(4);
    CHECK(full.router_x == s.tensix().x);
    CHECK(full.router_y == s.tensix().y);
    CHECK(full.slots_base == m.layout.slots[2]);
    CHECK(full.num_slots == 2);
    CHECK(full.payload_bytes == 2048);
    CHECK(full.pushed_stream == pf::kMuxStreamPushed0 + 2);
    CHECK(full.connection == m.layout.connection + 2 * sizeof(pf::WorkerConnectionInfo));
    CHECK(header.num_slots == 4);
    CHECK(header.slot_bytes == 64);
    CHECK(header.payload_bytes == 0);
    CHECK_THAT(expect_error(ErrorCategory::BadInput, [&] { (void)m.channel(5); }),
               Contains("no channel 5"));
}

TEST_CASE("mux plan: bad options are refused with a clear message", "[mux]") {
    const Setup s;
    const MuxOptions good;
    MuxOptions o = good;
    o.full_channels = 0;
    CHECK_THAT(bad(s, o, s.tensix()), Contains("1..16 in all"));
    o = good;
    o.full_channels = 10;
    o.header_channels = 7;
    CHECK_THAT(bad(s, o, s.tensix()), Contains("1..16 in all"));
    o = good;
    o.full_slots = 17;
    CHECK_THAT(bad(s, o, s.tensix()), Contains("slots per channel"));
    o = good;
    o.full_payload_bytes = 4096;
    CHECK_THAT(bad(s, o, s.tensix()), Contains("at most the router's 2048 B"));
    o = good;
    o.full_payload_bytes = 100;
    CHECK_THAT(bad(s, o, s.tensix()), Contains("multiple of 16"));
    o = good;
    o.header_every = 0;
    CHECK_THAT(bad(s, o, s.tensix()), Contains("header_every"));
    o = good;
    o.drain_timeout_us = 0;
    CHECK_THAT(bad(s, o, s.tensix()), Contains("timeouts"));
    o = good;
    o.full_channels = 16;
    o.full_slots = 16;
    CHECK_THAT(bad(s, o, s.tensix()), Contains("use fewer or smaller slots"));
    // Not a Tensix or Ethernet core; the router's own core; a router the plan does not have.
    CHECK_THAT(bad(s, good, CoreCoord{0, 0}), Contains("not a Tensix or Ethernet core"));
    const fabric::RouterPlacement& r = s.plan.router(0, FabricDir::East);
    CHECK_THAT(bad(s, good, r.core.core), Contains("runs the east router"));
    CHECK_FALSE(bad(s, good, s.tensix(), 0, FabricDir::West).empty());
}
