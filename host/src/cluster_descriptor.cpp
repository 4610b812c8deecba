#include "yaml_fields.h"
#include "fabric/cluster_descriptor.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "fabric/error.h"
#include "fabric/soc_descriptor.h"

namespace fabric {

uint32_t arch_eth_channels(hal::Arch arch) {
    switch (arch) {
        case hal::Arch::WormholeB0:
            return 16;  // 8 along y = 0 and 8 along y = 6 (wormhole_b0_80_arch.yaml)
        case hal::Arch::Blackhole:
            return 14;  // along y = 1 (blackhole_140_arch.yaml)
        default:
            return 0;
    }
}

std::string EthPortRef::str() const {
    return fmt::format("chip {} chan {}", chip, chan);
}

namespace {

// Cluster descriptors spell arches the tt-umd way ("Wormhole", "wormhole_b0", "blackhole", ...).
std::optional<hal::Arch> parse_cluster_arch(std::string_view s) {
    if (const auto a = parse_arch(s)) return a;
    if (s == "Wormhole" || s == "wormhole" || s == "WORMHOLE") return hal::Arch::WormholeB0;
    if (s == "Blackhole") return hal::Arch::Blackhole;
    return std::nullopt;
}

}  // namespace

class ClusterDescriptorParser : YamlFields {
  public:
    explicit ClusterDescriptorParser(const std::string& source) : YamlFields(source) {}

    ClusterDescriptor parse(const YAML::Node& root) {
        if (!root.IsMap()) {
            bad(root, "",
                fmt::format("the document must be a mapping of fields, got {}", kind(root)));
        }
        d_.source_ = source_;
        archs(required(root, "arch"));
        if (root["chips"]) chips(root["chips"]);
        connections(required(root, "ethernet_connections"));
        mmio(required(root, "chips_with_mmio"));
        for (const char* key : {"ethernet_connections_to_remote_devices", "boards"}) {
            const YAML::Node n = root[key];
            if (n && !n.IsSequence() && !n.IsNull()) {
                bad(n, key, fmt::format("expected a list, got {}", kind(n)));
            }
        }
        return std::move(d_);
    }

  private:
    ChipId known_chip(const YAML::Node& n, std::string_view field) const {
        const uint32_t id = u32(n, field);
        if (id >= d_.chip_count_) {
            bad(n, field,
                fmt::format("unknown chip {} (the descriptor's 'arch' lists chips 0..{})", id,
                            d_.chip_count_ - 1));
        }
        return id;
    }

    void archs(const YAML::Node& n) {
        if (!n.IsMap() || n.size() == 0) {
            bad(n, "arch", fmt::format("expected a mapping of chip id to arch, got {}", kind(n)));
        }
        std::map<uint32_t, YAML::Node> ids;
        std::optional<hal::Arch> arch;
        for (const auto& kv : n) {
            const uint32_t id = u32(kv.first, "arch");
            if (!ids.emplace(id, kv.first).second)
                bad(kv.first, "arch", fmt::format("chip {} is listed twice", id));
            const std::string field = fmt::format("arch.{}", id);
            if (!kv.second.IsScalar())
                bad(kv.second, field,
                    fmt::format("expected an arch name, got {}", kind(kv.second)));
            const auto a = parse_cluster_arch(kv.second.Scalar());
            if (!a) {
                bad(kv.second, field,
                    fmt::format("unknown arch '{}' (known: wormhole_b0, Wormhole, blackhole)",
                                kv.second.Scalar()));
            }
            if (arch && *a != *arch) {
                bad(kv.second, field,
                    fmt::format("chip {} is {} but chip {} is {}: one arch per cluster", id,
                                arch_name(*a), ids.begin()->first, arch_name(*arch)));
            }
            arch = a;
        }
        uint32_t expect = 0;
        for (const auto& [id, node] : ids) {
            if (id != expect) {
                bad(node, "arch",
                    fmt::format("chip ids must be 0..{} without gaps; chip {} is missing",
                                ids.size() - 1, expect));
            }
            ++expect;
        }
        d_.arch_ = *arch;
        d_.chip_count_ = static_cast<uint32_t>(ids.size());
        d_.coords_.assign(d_.chip_count_, std::nullopt);
    }

    void chips(const YAML::Node& n) {
        if (n.IsNull()) return;
        if (!n.IsMap())
            bad(n, "chips",
                fmt::format("expected a mapping of chip id to coordinates, got {}", kind(n)));
        for (const auto& kv : n) {
            const ChipId id = known_chip(kv.first, "chips");
            const std::string field = fmt::format("chips.{}", id);
            const YAML::Node& v = kv.second;
            if (v.IsNull() || (v.IsMap() && v.size() == 0) || (v.IsSequence() && v.size() == 0))
                continue;  // BH: {}
            if (!v.IsSequence() || v.size() != 4) {
                bad(v, field, fmt::format("expected [x, y, rack, shelf], got {}", kind(v)));
            }
            d_.coords_[id] =
                EthCoord{u32(v[0], field), u32(v[1], field), u32(v[2], field), u32(v[3], field)};
        }
    }

    EthPortRef port(const YAML::Node& n, const std::string& field) {
        if (!n.IsMap())
            bad(n, field, fmt::format("expected {{chip: N, chan: N}}, got {}", kind(n)));
        EthPortRef p;
        p.chip = known_chip(required(n, "chip", field + "."), field + ".chip");
        const YAML::Node chan = required(n, "chan", field + ".");
        p.chan = u32(chan, field + ".chan");
        const uint32_t channels = arch_eth_channels(d_.arch_);
        if (p.chan >= channels) {
            bad(chan, field + ".chan",
                fmt::format("channel {} is out of range for {} (channels 0..{})", p.chan,
                            arch_name(d_.arch_), channels - 1));
        }
        return p;
    }

    void connections(const YAML::Node& list) {
        if (list.IsNull()) return;
        if (!list.IsSequence()) {
            bad(list, "ethernet_connections",
                fmt::format("expected a list of connections, got {}", kind(list)));
        }
        std::map<EthPortRef, std::string> used;  // port -> field that first used it
        for (size_t i = 0; i < list.size(); ++i) {
            const YAML::Node c = list[i];
            const std::string field = fmt::format("ethernet_connections[{}]", i);
            if (!c.IsSequence() || c.size() < 2 || c.size() > 3) {
                bad(c, field,
                    fmt::format("expected [{{chip, chan}}, {{chip, chan}}] with an optional "
                                "{{routing_enabled}}, got {}",
                                c.IsSequence() ? fmt::format("a list of {}", c.size()) : kind(c)));
            }
            EthConnection conn;
            conn.a = port(c[0], field + "[0]");
            conn.b = port(c[1], field + "[1]");
            if (conn.a == conn.b)
                bad(c, field, fmt::format("{} is connected to itself", conn.a.str()));
            for (int side = 0; side < 2; ++side) {
                const EthPortRef& p = side == 0 ? conn.a : conn.b;
                const std::string f = fmt::format("{}[{}]", field, side);
                const auto [it, inserted] = used.emplace(p, f);
                if (!inserted)
                    bad(c[side], f, fmt::format("{} is already used by {}", p.str(), it->second));
            }
            if (c.size() == 3) {
                const YAML::Node opt = c[2];
                if (!opt.IsMap())
                    bad(opt, field + "[2]",
                        fmt::format("expected {{routing_enabled: bool}}, got {}", kind(opt)));
                if (const YAML::Node r = opt["routing_enabled"]) {
                    bool v = false;
                    if (!r.IsScalar() || !YAML::convert<bool>::decode(r, v)) {
                        bad(r, field + "[2].routing_enabled",
                            fmt::format("expected true or false, got {}", kind(r)));
                    }
                    conn.routing_enabled = v;
                }
            }
            d_.connections_.push_back(conn);
        }
    }

    void mmio_entry(const YAML::Node& map, const std::string& field) {
        for (const auto& kv : map) {
            const ChipId id = known_chip(kv.first, field);
            const uint32_t pci = u32(kv.second, fmt::format("{}.{}", field, id));
            for (const auto& [c, p] : d_.mmio_chips_) {
                if (c == id) bad(kv.first, field, fmt::format("chip {} is listed twice", id));
            }
            d_.mmio_chips_.emplace_back(id, pci);
        }
    }

    void mmio(const YAML::Node& n) {
        if (n.IsNull()) return;
        if (n.IsMap()) {  // {0: 0, 1: 1}
            mmio_entry(n, "chips_with_mmio");
        } else if (n.IsSequence()) {  // [{0: 0}, {1: 1}] (tt-umd)
            for (size_t i = 0; i < n.size(); ++i) {
                const std::string field = fmt::format("chips_with_mmio[{}]", i);
                if (!n[i].IsMap())
                    bad(n[i], field,
                        fmt::format("expected {{chip id: PCIe index}}, got {}", kind(n[i])));
                mmio_entry(n[i], field);
            }
        } else {
            bad(n, "chips_with_mmio",
                fmt::format("expected a list of {{chip id: PCIe index}}, got {}", kind(n)));
        }
    }

    ClusterDescriptor d_;
};

ClusterDescriptor ClusterDescriptor::parse(std::string_view yaml_text, const std::string& source) {
    const YAML::Node root = load_yaml(yaml_text, source);
    try {
        return ClusterDescriptorParser(source).parse(root);
    } catch (const YAML::Exception& e) {  // defensive: yaml-cpp access errors
        fail(ErrorCategory::BadDescriptor, "{}: invalid cluster descriptor: {}", source, e.msg);
    }
}

ClusterDescriptor ClusterDescriptor::load_file(const std::string& path) {
    return parse(read_text_file(path, "cluster descriptor"), path);
}

ClusterDescriptor ClusterDescriptor::unconnected(hal::Arch arch, uint32_t chips) {
    if (chips == 0) fail(ErrorCategory::BadInput, "a cluster needs at least one chip");
    ClusterDescriptor d;
    d.source_ =
        fmt::format("{} unconnected {} chip{}", chips, arch_name(arch), chips == 1 ? "" : "s");
    d.arch_ = arch;
    d.chip_count_ = chips;
    d.coords_.assign(chips, std::nullopt);
    for (ChipId c = 0; c < chips; ++c) d.mmio_chips_.emplace_back(c, c);
    return d;
}

bool ClusterDescriptor::is_mmio(ChipId chip) const {
    return std::any_of(mmio_chips_.begin(), mmio_chips_.end(),
                       [&](const auto& m) { return m.first == chip; });
}

std::optional<EthCoord> ClusterDescriptor::eth_coord(ChipId chip) const {
    return chip < coords_.size() ? coords_[chip] : std::nullopt;
}

std::optional<EthPortRef> ClusterDescriptor::peer(EthPortRef port) const {
    for (const auto& c : connections_) {
        if (c.a == port) return c.b;
        if (c.b == port) return c.a;
    }
    return std::nullopt;
}

std::vector<uint32_t> ClusterDescriptor::connected_channels(ChipId chip) const {
    std::vector<uint32_t> out;
    for (const auto& c : connections_) {
        if (c.a.chip == chip) out.push_back(c.a.chan);
        if (c.b.chip == chip) out.push_back(c.b.chan);
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace fabric
