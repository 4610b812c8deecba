// A fake device whose "routers" follow a script, and a line of three t3k chips planned on it: the
// FabricRunner's tests (host_fabric_runner_test.cpp) and the traffic verdict's
// (host_traffic_verdict_test.cpp) run the control plane against it.
#pragma once

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fabric/cluster_descriptor.h"
#include "fabric/device.h"
#include "fabric/fabric_plan.h"
#include "fabric/fabric_runner.h"
#include "fabric/soc_descriptor.h"
#include "hal/status.h"
#include "protocol/fabric.h"
#include "test_elf.h"

namespace fabric::test {

namespace pf = protocol::fabric;

inline const std::string kDir = FABRIC_SOC_DESCRIPTOR_DIR;

inline const fabric::SocDescriptor& wh_soc() {
    static const auto s = fabric::SocDescriptor::load_file(kDir + "/wormhole_b0_80_arch.yaml");
    return s;
}

// What a scripted router does.
enum class Script {
    Normal,             // handshake after 500 cycles, ready on the ready word, exit on termination
    StuckHandshaking,   // stays in Handshaking
    HandshakeTimeout,   // reports Timeout (stuck at handshake_reply, detail hal Timeout), exits 3
    Trap,               // traps at 300 cycles
    IgnoreReady,        // never leaves HandshakeComplete
    IgnoreTermination,  // keeps running after the termination word
    InFlight,           // sent[0] = 5, completed[0] = 3 forever
    Undrained,          // graceful termination leaves 2 packets
    FaultLater,  // 2000 cycles after start: Fault (stuck at noc_cmd_buf, detail hal BadArg), exit 3
    InFlightCh4,  // 2D: sent[4] = 5, completed[4] = 3, received[0] = 5 forever (the totals
                  // balance; only channel 4 is unsettled)
};

struct FakeCore {
    uint64_t released_at = 0;
    bool released = false;
    bool exited = false;
    bool trapped = false;
    uint32_t exit_status = 0;
};

class FakeFabricDevice : public fabric::Device {
  public:
    std::string description() const override { return "fake fabric"; }
    uint32_t chip_count() const override { return 8; }
    const fabric::SocDescriptor& soc(fabric::ChipId) const override { return wh_soc(); }
    void write(const CoreLocation& c, uint64_t addr, std::span<const uint8_t> d) override {
        for (size_t i = 0; i < d.size(); ++i) mem[{c, addr + i}] = d[i];
        if (addr == hal::common::kSoftResetReg && d.size() == 4) {
            const uint32_t v = read32(c, addr);
            FakeCore& k = cores[c];
            if ((v & hal::common::kSoftResetErisc0) == 0 && !k.released) {
                k = FakeCore{};
                k.released = true;
                k.released_at = now;
            } else if ((v & hal::common::kSoftResetErisc0) != 0) {
                k = FakeCore{};
            }
        }
        writes.push_back({c, addr});
    }
    void read(const CoreLocation& c, uint64_t addr, std::span<uint8_t> d) override {
        for (size_t i = 0; i < d.size(); ++i) {
            const auto it = mem.find({c, addr + i});
            d[i] = it == mem.end() ? 0 : it->second;
        }
    }
    uint64_t advance(uint64_t cycles) override {
        if (frozen) return 0;
        now += cycles;
        for (auto& [core, k] : cores) step(core, k);
        return cycles;
    }
    uint64_t cycles() const override { return now; }
    CoreStatus core_status(const CoreLocation& c) override {
        CoreStatus s;
        const FakeCore& k = cores[c];
        s.pc = 0x9100;
        if (!k.released) {
            s.state = CoreRunState::Reset;
        } else if (k.trapped) {
            s.state = CoreRunState::Trapped;
            s.trap_cause = 2;
            s.trap_name = "illegal instruction";
            s.trap_pc = 0x9abc;
        } else if (k.exited) {
            s.state = CoreRunState::Exited;
            s.exit_status = k.exit_status;
        } else {
            s.state = CoreRunState::Running;
        }
        return s;
    }

    // The scripted routers and workers.
    void add_router(const fabric::RouterPlacement& r, Script s) { routers[r.core] = {r.layout, s}; }
    std::map<CoreLocation, uint64_t> worker_run;  // worker core -> cycles until it exits 0

    pf::RouterStatusBlock block(const CoreLocation& c, const pf::RouterLayout& l) {
        pf::RouterStatusBlock b{};
        std::vector<uint8_t> raw(sizeof(b));
        read(c, l.status, raw);
        std::memcpy(&b, raw.data(), sizeof(b));
        return b;
    }
    void put(const CoreLocation& c, const pf::RouterLayout& l, const pf::RouterStatusBlock& b) {
        std::vector<uint8_t> raw(sizeof(b));
        std::memcpy(raw.data(), &b, sizeof(b));
        for (size_t i = 0; i < raw.size(); ++i) mem[{c, l.status + i}] = raw[i];
    }

    std::map<std::pair<CoreLocation, uint64_t>, uint8_t> mem;
    std::map<CoreLocation, FakeCore> cores;
    std::map<CoreLocation, std::pair<pf::RouterLayout, Script>> routers;
    std::vector<std::pair<CoreLocation, uint64_t>> writes;
    uint64_t now = 0;
    bool frozen = false;          // advance() runs no cycles (a backend whose clock is stuck)
    std::set<CoreLocation> hung;  // cores that stop executing (their heartbeat stops)

  private:
    void step(const CoreLocation& c, FakeCore& k) {
        if (!k.released || k.exited || k.trapped || hung.count(c)) return;
        const uint64_t age = now - k.released_at;
        if (const auto w = worker_run.find(c); w != worker_run.end()) {
            if (age >= w->second) k.exited = true;
            return;
        }
        const auto it = routers.find(c);
        if (it == routers.end()) return;
        const auto& [l, script] = it->second;
        pf::RouterStatusBlock b = block(c, l);
        using S = pf::RouterStatus;
        const auto set = [&](S st) {
            b.status = static_cast<uint32_t>(st);
            b.stage = static_cast<uint32_t>(st);
        };
        // A router's heartbeat is its iteration count: a step is a poll interval, in which a
        // running router passes a counter publish (protocol/fabric.h kRouterPublishEvery).
        b.heartbeat += pf::kRouterPublishEvery;
        if (script == Script::Trap && age >= 300) {
            k.trapped = true;
            return;
        }
        if (b.status == 0) set(S::Handshaking);
        if (b.status == static_cast<uint32_t>(S::Handshaking) && age >= 500) {
            if (script == Script::HandshakeTimeout) {
                b.status = static_cast<uint32_t>(S::Timeout);
                b.stuck_at = static_cast<uint32_t>(pf::RouterWait::HandshakeReply);
                b.detail = static_cast<uint32_t>(hal::Status::Timeout);
                k.exited = true;
                k.exit_status = 3;
            } else if (script != Script::StuckHandshaking) {
                set(S::HandshakeComplete);
            }
        }
        if (b.status == static_cast<uint32_t>(S::HandshakeComplete) &&
            script != Script::IgnoreReady && read32(c, l.ready) == pf::kReadyMagic) {
            set(S::ReadyForTraffic);
        }
        if (b.status == static_cast<uint32_t>(S::ReadyForTraffic) && script == Script::FaultLater &&
            age >= 2'000) {
            b.status = static_cast<uint32_t>(S::Fault);
            b.stuck_at = static_cast<uint32_t>(pf::RouterWait::NocCmdBuf);
            b.detail = static_cast<uint32_t>(hal::Status::BadArg);
            k.exited = true;
            k.exit_status = 3;
        }
        if (b.status == static_cast<uint32_t>(S::ReadyForTraffic) && script == Script::InFlight) {
            b.sent[0] = 5;
            b.completed[0] = 3;
        }
        if (b.status == static_cast<uint32_t>(S::ReadyForTraffic) &&
            script == Script::InFlightCh4) {
            b.sent[4] = 5;
            b.completed[4] = 3;
            b.received[0] = 5;
        }
        if (read32(c, l.termination) != 0 && script != Script::IgnoreTermination) {
            set(S::Terminated);
            if (script == Script::Undrained) b.undrained = 2;
            k.exited = true;
        }
        put(c, l, b);
    }
};

inline fabric::ElfImage router_elf(uint32_t data_at = 0x9200) {
    TestElf e;
    e.entry = 0x9040;
    e.segments.push_back({.paddr = 0x9040, .data = words_to_bytes({0x13, 0x13})});
    e.segments.push_back({.paddr = data_at, .data = {7}, .memsz = 8, .flags = kPfR | kPfW});
    return fabric::ElfImage::parse(e.build(), "router.elf");
}

inline fabric::FabricPlan line_plan() {
    static const auto t3k = fabric::ClusterDescriptor::load_file(kDir + "/t3k_cluster.yaml");
    fabric::FabricOptions o;
    o.chips = {0, 1, 2};
    return fabric::plan_fabric(t3k, wh_soc(), o);
}

// A fake device with the line's routers, router `odd` (chip, dir) following `script`.
struct Rig {
    explicit Rig(std::optional<std::pair<fabric::ChipId, FabricDir>> odd = std::nullopt,
                 Script script = Script::Normal)
        : plan(line_plan()) {
        for (const auto& r : plan.routers) {
            const bool is_odd = odd && odd->first == r.chip && odd->second == r.dir;
            dev.add_router(r, is_odd ? script : Script::Normal);
        }
    }
    fabric::FabricPlan plan;
    FakeFabricDevice dev;
};

}  // namespace fabric::test
