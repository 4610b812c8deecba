#include "mesh_snapshot_cmd.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabric/error.h"
#include "fabric/fabric_page.h"
#include "fabric/fabric_runner.h"
#include "fabric_common.h"
#include "mesh_mapping.h"
#include "mesh_session.h"

namespace fabricctl {

namespace {

namespace pf = protocol::fabric;
using fabric::ErrorCategory;
using fabric::MeshNode;
using fabric::RouterPlacement;
using fabric::RouterSnapshot;
using nlohmann::json;

constexpr const char* kFormat = "erisc-fabric snapshot";
constexpr uint32_t kVersion = 1;

json chips_json(const fabric::ClusterDescriptor& c) {
    json chips = json::array();
    for (fabric::ChipId id = 0; id < c.chip_count(); ++id) {
        json chip{{"chip", id}, {"mmio", c.is_mmio(id)}};
        if (const auto b = c.board(id)) chip["board"] = {{"id", b->id}, {"type", b->type}};
        if (const auto h = c.harvesting(id)) chip["tensix_harvest_mask"] = h->tensix_mask;
        chips.push_back(std::move(chip));
    }
    return chips;
}

// Every Ethernet connection of the descriptor, and the state of the fabric link on it.
json cluster_json(const fabric::ClusterDescriptor& c, const fabric::FabricPlan& plan,
                  const std::vector<RouterSnapshot>& snaps) {
    const std::vector<fabric::RouterPair> pairs = fabric::router_pairs(plan);
    const auto on_port = [&](const RouterPlacement& r, const fabric::EthPortRef& p) {
        return r.chip == p.chip && r.eth_channel == p.chan;
    };
    json links = json::array();
    for (const fabric::EthConnection& e : c.connections()) {
        std::string on = "unused";
        for (const fabric::RouterPair& p : pairs) {
            const RouterPlacement& a = plan.routers[p.a];
            const RouterPlacement& b = plan.routers[p.b];
            if ((on_port(a, e.a) && on_port(b, e.b)) || (on_port(a, e.b) && on_port(b, e.a)))
                on = fabric::link_state(snaps[p.a], snaps[p.b]);
        }
        links.push_back({{"chip", e.a.chip},
                         {"chan", e.a.chan},
                         {"peer_chip", e.b.chip},
                         {"peer_chan", e.b.chan},
                         {"fabric_link", on}});
    }
    return {{"source", c.source()},
            {"arch", fabric::arch_name(c.arch())},
            {"chips", chips_json(c)},
            {"ethernet_connections", std::move(links)}};
}

// Per node: the route to every other device of its mesh and the exit towards every other mesh.
json tables_json(const fabric::MeshPlan& plan) {
    const fabric::RoutingTables& t = plan.tables;
    json nodes = json::array();
    for (const fabric::MeshSpec& m : t.graph().meshes()) {
        for (uint32_t src = 0; src < m.device_count(); ++src) {
            json l0 = json::object();
            for (uint32_t dst = 0; dst < m.device_count(); ++dst) {
                if (dst != src) l0[MeshNode{m.id, dst}.str()] = t.l0_string(m.id, src, dst);
            }
            json l1 = json::object();
            for (const fabric::MeshSpec& other : t.graph().meshes()) {
                if (other.id == m.id) continue;
                const auto e = t.l1_exit(m.id, src, other.id);
                l1[std::to_string(other.id)] =
                    e ? json{{"exit", MeshNode{m.id, e->exit}.str()},
                             {"dir", std::string(1, fabric::dir_letter(e->dir))},
                             {"next_mesh", e->next_mesh}}
                      : json(nullptr);
            }
            nodes.push_back({{"node", MeshNode{m.id, src}.str()},
                             {"chip", plan.chip_of({m.id, src})},
                             {"l0", std::move(l0)},
                             {"l1", std::move(l1)}});
        }
    }
    return nodes;
}

// The exit table a router holds, read from its L1.
std::vector<uint32_t> held_exit_table(fabric::Device& dev, const RouterPlacement& r) {
    const uint32_t count = r.mesh->config.exit_count;
    std::vector<uint8_t> raw(4 * count);
    if (count != 0) dev.read(r.core, r.layout.exit_table, raw);
    std::vector<uint32_t> words(count);
    for (uint32_t i = 0; i < count; ++i) {
        words[i] = raw[4 * i] | raw[4 * i + 1] << 8 | raw[4 * i + 2] << 16 |
                   static_cast<uint32_t>(raw[4 * i + 3]) << 24;
    }
    return words;
}

// A router's buffers: its sender channels against what its peer took, its receiver channels.
json buffers_json(const RouterPlacement& p, const RouterSnapshot& s, const RouterSnapshot* peer) {
    json senders = json::array();
    for (uint32_t c = 0; c < pf::kMaxSenderChannels; ++c) {
        if (p.config.sender_slots[c] == 0) continue;
        const uint32_t sent = s.block.sent[c], completed = s.block.completed[c];
        json ch{{"channel", c},
                {"slots", p.config.sender_slots[c]},
                {"sent", sent},
                {"completed", completed}};
        if (peer != nullptr) {
            const uint32_t taken = peer->control.taken[c];
            ch["taken_by_peer"] = taken;
            ch["on_link_or_waiting"] = sent - taken;
            ch["being_delivered"] = taken - completed;
        }
        senders.push_back(std::move(ch));
    }
    json receivers = json::array();
    for (uint32_t r = 0; r < pf::kNumReceiverChannels; ++r) {
        if (p.config.receiver_slots[r] == 0) continue;
        receivers.push_back({{"channel", r},
                             {"vc", r},
                             {"slots", p.config.receiver_slots[r]},
                             {"taken", s.block.received[r]}});
    }
    return {{"senders", std::move(senders)},
            {"receivers", std::move(receivers)},
            {"held", s.control.held},
            {"control_state", s.control.state},
            {"cut", s.control.cut != 0},
            {"reroute", fabric::reroute_state_name(s.control.reroute)}};
}

json routers_json(fabric::Device& dev, const fabric::FabricPlan& plan,
                  const std::vector<RouterSnapshot>& snaps) {
    std::vector<std::optional<size_t>> peer(plan.routers.size());
    for (const fabric::RouterPair& p : fabric::router_pairs(plan)) {
        peer[p.a] = p.b;
        peer[p.b] = p.a;
    }
    json out = json::array();
    for (size_t i = 0; i < plan.routers.size(); ++i) {
        const RouterPlacement& p = plan.routers[i];
        json r = router_json(snaps[i], p, 0, 0);
        r["buffers"] = buffers_json(p, snaps[i], peer[i] ? &snaps[*peer[i]] : nullptr);
        if (p.mesh) r["exit_table"] = held_exit_table(dev, p);
        out.push_back(std::move(r));
    }
    return out;
}

class MeshSnapshot final : public MeshFabricCommand {
  public:
    MeshSnapshot(CLI::App& app, bool& as_json)
        : MeshFabricCommand(app, as_json, "snapshot",
                            "Write the fabric's state as one JSON document: the chips and links, "
                            "the mesh mapping, the routing tables, every router's buffers per "
                            "channel (sim: brings the fabric up first, terminates it after)") {
        cmd_->add_option("-o,--output", output_, "Write the snapshot to FILE (default: stdout)");
    }

    int run() const override {
        MeshSession s(args_, "snapshot", as_json_);
        return run_without_traffic(s, [&] {
            s.show_live = true;
            if (!s.pcie()) s.bring_up_and_watch();
            s.read_live();
            const json doc = snapshot(s);
            if (!s.pcie()) s.terminate();  // a model of its own: the fabric ends with the command
            return report(s, doc);
        });
    }

  private:
    static json snapshot(MeshSession& s) {
        const fabric::MeshPlan& plan = s.plan();
        return {{"format", kFormat},
                {"version", kVersion},
                {"device_cycle", s.device().cycles()},
                {"cluster", cluster_json(s.cluster(), plan.fabric, s.shown())},
                {"mapping", map_json(*plan.map, s.graph_path().empty())},
                {"routing", tables_json(plan)},
                {"routers", routers_json(s.device(), plan.fabric, s.shown())}};
    }

    int report(MeshSession& s, const json& doc) const {
        if (!output_.empty()) {
            std::ofstream out(output_, std::ios::binary);
            out << doc.dump(1) << "\n";
            if (!out) fabric::fail(ErrorCategory::BadInput, "-o {}: cannot write", output_);
        }
        RunReport r;
        r.add_json = [&](json& j) { j["snapshot"] = doc; };
        r.print_body = [&] {
            if (output_.empty()) {
                fmt::print("{}\n", doc.dump(1));
                return;
            }
            fmt::print("snapshot written to {}: {} chips, {} Ethernet connections, {} routers\n",
                       output_, doc["cluster"]["chips"].size(),
                       doc["cluster"]["ethernet_connections"].size(), doc["routers"].size());
        };
        return s.report(r);
    }

    std::string output_;
};

}  // namespace

CliCommandPtr add_mesh_snapshot_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshSnapshot>(app, as_json);
}

}  // namespace fabricctl
