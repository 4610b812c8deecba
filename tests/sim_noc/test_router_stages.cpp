// The router's pipeline stages one at a time, as Network assembles them (noc/network_impl.h):
// input buffering and route computation (InputUnit), switch allocation (SwitchAllocator), and
// switch / link traversal with the credits going back (LinkTraversal). Flits are written into
// buffers directly, so each stage is seen on its own, cycle by cycle.
#include <catch2/catch.hpp>
#include <vector>

#include "noc/network_impl.h"

using namespace sim::noc;

namespace {

constexpr uint8_t bit(uint32_t port) {
    return static_cast<uint8_t>(1u << port);
}
constexpr uint32_t input_of(uint32_t port, uint32_t slot) {
    return port * kSlots + slot;
}
constexpr uint32_t kVc1 = 2;  // slot of VC 1 (dateline bit clear)
constexpr uint32_t kVc2 = 4;
constexpr uint32_t kVc4 = 8;

// A unicast packet of `flits` flits from physical node `src` to NOC coordinate `dst`.
uint32_t unicast(Network::Impl& I, uint32_t src, Coord dst, uint32_t flits, uint32_t vc = 1) {
    const uint32_t id = I.packets.allocate();
    Packet& p = I.packets[id];
    p.src_node = src;
    p.dst = dst;
    p.vc = static_cast<uint8_t>(vc);
    p.data_flits = flits - 1;
    p.live = 1;
    return id;
}

uint32_t multicast(Network::Impl& I, uint32_t src, Coord start, Coord end) {
    const uint32_t id = I.packets.allocate();
    Packet& p = I.packets[id];
    p.mcast = true;
    p.src_node = src;
    p.dst = start;
    p.dst_end = end;
    p.vc = 4;
    p.live = 1;
    return id;
}

Flit header(uint32_t pkt, uint64_t ready, uint8_t branch = kBranchToStart) {
    return Flit{pkt, 0, ready, branch};
}

std::vector<uint32_t> granted(const Grants& g) {
    return std::vector<uint32_t>(g.inputs.begin(), g.inputs.begin() + g.count);
}

}  // namespace

TEST_CASE("input unit: one FIFO per VC, the head's ready cycle, a header routed as it becomes head",
          "[sim_noc][stages][input]") {
    Network::Impl I(4, 4, hal::kWormholeB0, {});
    const uint32_t r = I.grid.router({0, 0});
    const uint32_t a = unicast(I, 0, {2, 0}, 3);
    const uint32_t b = unicast(I, 0, {0, 2}, 1);
    const uint32_t in = input_of(kPortLocal, kVc1);
    const InputVc& v = I.inputs.router(0, r).vcs[in];

    I.inputs.write(0, r, kPortLocal, kVc1, header(a, 10));
    CHECK(v.count == 1);
    CHECK(v.head_ready == 10);
    CHECK(v.head_is_header);
    CHECK(v.mask == bit(kPortX));
    CHECK(v.out_slot[kPortX] == kVc1);
    CHECK(I.inputs.router(0, r).occupied[kPortLocal] == 1u << kVc1);
    CHECK(I.inputs.active(0) == std::vector<uint32_t>{r});

    I.inputs.write(0, r, kPortLocal, kVc1, Flit{a, 1, 11, kBranchToStart});
    I.inputs.write(0, r, kPortLocal, kVc1, Flit{a, 2, 12, kBranchToStart});
    I.inputs.write(0, r, kPortLocal, kVc1, header(b, 13));
    CHECK(v.count == 4);
    CHECK(v.head_ready == 10);  // the head's, not the last written

    I.inputs.pop(0, r, in);
    CHECK(v.head_ready == 11);
    CHECK_FALSE(v.head_is_header);
    CHECK(v.mask == bit(kPortX));  // body flits follow their header's route
    I.inputs.pop(0, r, in);
    I.inputs.pop(0, r, in);
    CHECK(I.inputs.head(0, r, in).pkt == b);
    CHECK(v.head_is_header);
    CHECK(v.mask == bit(kPortY));  // b's route, computed as it became head
    CHECK(v.head_ready == 13);

    I.inputs.pop(0, r, in);
    CHECK(v.count == 0);
    CHECK(I.inputs.router(0, r).occupied[kPortLocal] == 0);
    CHECK(I.inputs.router(0, r).flits == 0);
    I.inputs.retire_empty(0);
    CHECK(I.inputs.empty());
}

TEST_CASE("switch allocator: round-robin among inputs that want the same output",
          "[sim_noc][stages][allocation]") {
    Network::Impl I(4, 4, hal::kWormholeB0, {});
    const uint32_t r = I.grid.router({1, 0});
    I.inputs.write(0, r, kPortX, kVc1, header(unicast(I, 0, {3, 0}, 1), 0));
    I.inputs.write(0, r, kPortLocal, kVc1, header(unicast(I, 1, {3, 0}, 1), 0));
    // One output: one grant, to the input nearest after the pointer; the pointer moves past it.
    CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 0)) ==
          std::vector<uint32_t>{input_of(kPortX, kVc1)});
    CHECK(I.allocator.pointer(0, r, kPortX) == input_of(kPortX, kVc1) + 1);
    CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 0)) ==
          std::vector<uint32_t>{input_of(kPortLocal, kVc1)});
    CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 0)) ==
          std::vector<uint32_t>{input_of(kPortX, kVc1)});
}

TEST_CASE("switch allocator: ready cycle, wormhole ownership and credits gate a request",
          "[sim_noc][stages][allocation]") {
    Network::Impl I(4, 4, hal::kWormholeB0, {});
    const uint32_t r = I.grid.router({1, 0});
    const uint32_t local = input_of(kPortLocal, kVc1);
    I.inputs.write(0, r, kPortX, kVc1, header(unicast(I, 0, {3, 0}, 1), 5));
    CHECK(I.allocator.allocate(0, r, I.inputs, I.outputs, 4).count == 0);  // not ready yet

    // A two-flit packet on the local input goes first and holds the output VC to its tail.
    const uint32_t holder = unicast(I, 1, {3, 0}, 2);
    I.inputs.write(0, r, kPortLocal, kVc1, header(holder, 0));
    I.inputs.write(0, r, kPortLocal, kVc1, Flit{holder, 1, 0, kBranchToStart});
    CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 4)) ==
          std::vector<uint32_t>{local});
    I.links.traverse(0, r, local, 4);
    CHECK(I.outputs.vc(0, r, kPortX, kVc1).owner == local);
    // The other header is ready now but must wait; the holder's body flit follows its header.
    CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 5)) ==
          std::vector<uint32_t>{local});

    // Without a credit for the downstream buffer nothing goes, not even the holder.
    while (I.outputs.vc(0, r, kPortX, kVc1).credits > 0) {
        I.outputs.send(0, r, kPortX, kVc1, local, false);
    }
    CHECK(I.allocator.allocate(0, r, I.inputs, I.outputs, 5).count == 0);
    I.outputs.return_credit(0, r, kPortX, kVc1);
    CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 5)) ==
          std::vector<uint32_t>{local});
}

TEST_CASE("switch allocator: one flit per input port and per output, a multicast needs all outputs",
          "[sim_noc][stages][allocation]") {
    Network::Impl I(4, 4, hal::kWormholeB0, {});
    SECTION("two buffers of one input port: only one goes") {
        const uint32_t r = I.grid.router({1, 1});
        I.inputs.write(0, r, kPortLocal, kVc1, header(unicast(I, 5, {3, 1}, 1), 0));
        I.inputs.write(0, r, kPortLocal, kVc2, header(unicast(I, 5, {1, 3}, 1, 2), 0));
        CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 0)) ==
              std::vector<uint32_t>{input_of(kPortLocal, kVc1)});
    }
    SECTION("a trunk-end copy (X branch and eject) cannot take the local output alone") {
        // Y-major tree: the trunk runs down column 1 and ends at (1,2), which delivers and
        // starts the last branch along X.
        const uint32_t r = I.grid.router({1, 2});
        const uint32_t m = multicast(I, I.grid.node({0, 0}), {1, 1}, {2, 2});
        I.packets[m].y_major = true;
        I.inputs.write(0, r, kPortY, kVc4, header(m, 0, kBranchTrunk));
        I.inputs.write(0, r, kPortX, kVc1, header(unicast(I, 4, {3, 2}, 1), 0));
        CHECK(I.inputs.router(0, r).vcs[input_of(kPortY, kVc4)].mask ==
              (bit(kPortX) | bit(kPortLocal)));
        // The unicast is nearer X's pointer and takes X; the local output stays unused.
        CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 0)) ==
              std::vector<uint32_t>{input_of(kPortX, kVc1)});
        I.links.traverse(0, r, input_of(kPortX, kVc1), 0);
        CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 0)) ==
              std::vector<uint32_t>{input_of(kPortY, kVc4)});
    }
    SECTION("a copy with nowhere to go is drained on its input port alone") {
        const uint32_t r = I.grid.router({1, 1});
        const uint32_t m = multicast(I, I.grid.node({1, 1}), {1, 1}, {1, 1});
        I.inputs.write(0, r, kPortLocal, kVc4, header(m, 0));
        I.inputs.write(0, r, kPortX, kVc1, header(unicast(I, 4, {1, 1}, 1), 0));
        CHECK(I.inputs.router(0, r).vcs[input_of(kPortLocal, kVc4)].mask == 0);
        CHECK(granted(I.allocator.allocate(0, r, I.inputs, I.outputs, 0)) ==
              std::vector<uint32_t>{input_of(kPortLocal, kVc4), input_of(kPortX, kVc1)});
    }
}

TEST_CASE(
    "link traversal: next router after link + router cycles, credits back after credit cycles",
    "[sim_noc][stages][traversal]") {
    const NocParams params{.router_cycles = 5, .link_cycles = 2, .credit_cycles = 3};
    Network::Impl I(4, 4, hal::kWormholeB0, params);
    const uint32_t src = I.grid.node({0, 0});
    const uint32_t pkt = unicast(I, src, {2, 0}, 1);
    const uint32_t r0 = I.grid.router({0, 0});
    const uint32_t r1 = I.grid.router({1, 0});
    const uint32_t r2 = I.grid.router({2, 0});
    const int32_t buffer = static_cast<int32_t>(params.vc_buffer_flits);

    I.inputs.write(0, r0, kPortLocal, kVc1, header(pkt, 0));
    I.links.traverse(0, r0, input_of(kPortLocal, kVc1), 0);
    CHECK(I.inputs.router(0, r0).flits == 0);
    CHECK(I.inputs.head(0, r1, input_of(kPortX, kVc1)).pkt == pkt);
    CHECK(I.inputs.router(0, r1).vcs[input_of(kPortX, kVc1)].head_ready == 7);
    CHECK(I.outputs.vc(0, r0, kPortX, kVc1).credits == buffer - 1);
    CHECK(I.outputs.vc(0, r0, kPortX, kVc1).owner == kNone);  // a one-flit packet's tail
    CHECK(I.outputs.stats(0, r0, kPortX).flits == 1);
    CHECK(I.outputs.stats(0, r0, kPortX).packets == 1);
    // The slot it left goes back to the NIU's injection port.
    const int32_t injector_credits = I.injection.injector(src, 0).credits[kVc1];
    I.links.return_credits(2, I.injection);
    CHECK(I.injection.injector(src, 0).credits[kVc1] == injector_credits);
    I.links.return_credits(3, I.injection);
    CHECK(I.injection.injector(src, 0).credits[kVc1] == injector_credits + 1);

    I.links.traverse(0, r1, input_of(kPortX, kVc1), 7);
    CHECK(I.inputs.router(0, r2).vcs[input_of(kPortX, kVc1)].head_ready == 14);
    I.links.return_credits(9, I.injection);
    CHECK(I.outputs.vc(0, r0, kPortX, kVc1).credits == buffer - 1);
    I.links.return_credits(10, I.injection);
    CHECK(I.outputs.vc(0, r0, kPortX, kVc1).credits == buffer);

    // Ejected at (2,0): the NIU has it link_cycles later.
    I.links.traverse(0, r2, input_of(kPortX, kVc1), 14);
    CHECK(I.outputs.stats(0, r2, kPortLocal).flits == 1);
    Arrival a;
    CHECK_FALSE(I.links.next_arrival(15, a));
    REQUIRE(I.links.next_arrival(16, a));
    CHECK(a.pkt == pkt);
    CHECK(a.idx == 0);
    CHECK(a.node == I.grid.node({2, 0}));
    CHECK_FALSE(I.links.next_arrival(16, a));
}

TEST_CASE("link traversal: a multicast copy forks into one copy per output",
          "[sim_noc][stages][traversal]") {
    Network::Impl I(4, 4, hal::kWormholeB0, {});
    const uint32_t m = multicast(I, I.grid.node({0, 0}), {1, 1}, {2, 2});
    const uint32_t r = I.grid.router({1, 1});
    I.inputs.write(0, r, kPortY, kToStartVc * 2, header(m, 0));
    I.links.traverse(0, r, input_of(kPortY, kToStartVc * 2), 0);
    CHECK(I.packets[m].live == 3);  // local, trunk and branch
    const Flit& trunk = I.inputs.head(0, I.grid.router({2, 1}), input_of(kPortX, kVc4));
    const Flit& branch = I.inputs.head(0, I.grid.router({1, 2}), input_of(kPortY, kVc4));
    CHECK(trunk.branch == kBranchTrunk);
    CHECK(branch.branch == kBranchLeaf);
    Arrival a;
    CHECK(I.links.next_arrival(I.params.link_cycles, a));
    CHECK(a.node == I.grid.node({1, 1}));
}
