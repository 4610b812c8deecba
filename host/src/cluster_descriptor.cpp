#include "fabric/cluster_descriptor.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <set>

#include "fabric/error.h"
#include "fabric/soc_descriptor.h"
#include "yaml_fields.h"

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

std::string_view cluster_lint_kind_name(ClusterLintKind kind) {
    switch (kind) {
        case ClusterLintKind::DuplicateConnection:
            return "duplicate_connection";
        case ClusterLintKind::AsymmetricConnection:
            return "asymmetric_connection";
        case ClusterLintKind::SelfConnection:
            return "self_connection";
        case ClusterLintKind::UnknownChip:
            return "unknown_chip";
        case ClusterLintKind::ChannelOutOfRange:
            return "channel_out_of_range";
        default:
            return "unknown";
    }
}

namespace {

// Cluster descriptors spell arches the tt-umd way ("Wormhole", "wormhole_b0", "blackhole", ...).
std::optional<hal::Arch> parse_cluster_arch(std::string_view s) {
    if (const auto a = parse_arch(s)) return a;
    if (s == "Wormhole" || s == "wormhole" || s == "WORMHOLE") return hal::Arch::WormholeB0;
    if (s == "Blackhole") return hal::Arch::Blackhole;
    return std::nullopt;
}

// Top-level keys: tt-umd's schema, and chip_to_boardtype, which tt-umd writes and reads but its
// schema omits.
const std::initializer_list<std::string_view> kClusterKeys = {
    "cluster_id",
    "arch",
    "chips",
    "chip_unique_ids",
    "ethernet_connections",
    "ethernet_connections_to_remote_devices",
    "chips_with_mmio",
    "io_device_type",
    "harvesting",
    "chip_to_boardtype",
    "chip_to_bus_id",
    "boards",
    "asic_locations",
    "chip_pci_bdfs"};

const std::initializer_list<std::string_view> kHarvestingKeys = {
    "noc_translation",     "harvest_mask",         "dram_harvesting_mask",
    "eth_harvesting_mask", "pcie_harvesting_mask", "l2cpu_harvesting_mask"};

// How many units of each kind an arch can harvest: the bits a mask may have.
struct HarvestUnits {
    uint32_t dram, eth, pcie, l2cpu;
};
HarvestUnits harvest_units(hal::Arch arch) {
    if (arch == hal::Arch::Blackhole) return {8, 14, 2, 4};  // blackhole_140_arch.yaml
    return {6, 16, 1, 0};                                    // wormhole_b0_80_arch.yaml
}

// The same link whichever end is written first.
std::pair<EthPortRef, EthPortRef> link_key(EthPortRef a, EthPortRef b) {
    return a < b ? std::pair(a, b) : std::pair(b, a);
}

}  // namespace

class ClusterDescriptorParser : YamlFields {
  public:
    // With `findings`, wiring problems are recorded there and the entry skipped (lint); without,
    // the first one is thrown.
    ClusterDescriptorParser(const std::string& source, std::vector<ClusterLintFinding>* findings)
        : YamlFields(source), findings_(findings) {}

    ClusterDescriptor parse(const YAML::Node& root) {
        if (!root.IsMap()) {
            bad(root, "",
                fmt::format("the document must be a mapping of fields, got {}", kind(root)));
        }
        d_.source_ = source_;
        check_keys(root, kClusterKeys, "");
        archs(required(root, "arch"));
        if (root["chips"]) chips(root["chips"]);
        connections(required(root, "ethernet_connections"));
        mmio(required(root, "chips_with_mmio"));
        if (root["harvesting"]) harvesting(root["harvesting"]);
        if (root["boards"]) boards(root["boards"]);
        if (root["asic_locations"]) {
            for_each_chip(root["asic_locations"], "asic_locations",
                          [&](ChipId id, auto& v, auto& f) { d_.asic_locations_[id] = u32(v, f); });
        }
        if (root["chip_unique_ids"]) {
            for_each_chip(root["chip_unique_ids"], "chip_unique_ids",
                          [&](ChipId id, auto& v, auto& f) { d_.unique_ids_[id] = u64(v, f); });
        }
        if (root["chip_to_bus_id"]) {
            for_each_chip(root["chip_to_bus_id"], "chip_to_bus_id",
                          [&](ChipId id, auto& v, auto& f) { d_.bus_ids_[id] = u32(v, f); });
        }
        for (const char* key : {"chip_to_boardtype", "chip_pci_bdfs"}) {
            if (root[key]) {
                for_each_chip(root[key], key, [&](ChipId, auto& v, auto& f) { scalar(v, f); });
            }
        }
        for (const char* key : {"io_device_type", "cluster_id"}) {
            if (root[key]) scalar(root[key], key);
        }
        if (const YAML::Node n = root["ethernet_connections_to_remote_devices"]) {
            if (!n.IsSequence() && !n.IsNull()) {
                bad(n, "ethernet_connections_to_remote_devices",
                    fmt::format("expected a list, got {}", kind(n)));
            }
        }
        return std::move(d_);
    }

  private:
    // A wiring problem: thrown, or recorded for lint. Returns so the caller skips the entry.
    void problem(ClusterLintKind k, const YAML::Node& n, const std::string& field,
                 const std::string& message) {
        if (!findings_) bad(n, field, message);
        const YAML::Mark m = n.Mark();
        findings_->push_back(
            {k, m.is_null() ? 0u : static_cast<uint32_t>(m.line + 1), field, message});
    }

    std::optional<ChipId> known_chip(const YAML::Node& n, const std::string& field) {
        const uint32_t id = u32(n, field);
        if (id < d_.chip_count_) return id;
        problem(ClusterLintKind::UnknownChip, n, field,
                fmt::format("unknown chip {} (the descriptor's 'arch' lists chips 0..{})", id,
                            d_.chip_count_ - 1));
        return std::nullopt;
    }

    // Outside the wiring an unknown chip is always an error.
    ChipId chip_id(const YAML::Node& n, const std::string& field) {
        const uint32_t id = u32(n, field);
        if (id >= d_.chip_count_) {
            bad(n, field,
                fmt::format("unknown chip {} (the descriptor's 'arch' lists chips 0..{})", id,
                            d_.chip_count_ - 1));
        }
        return id;
    }

    // A mapping of chip id -> value: each key a known chip, listed once (also as 1 and 0x1).
    template <typename F>
    void for_each_chip(const YAML::Node& map, std::string_view field, F&& each) {
        if (map.IsNull()) return;
        if (!map.IsMap()) {
            bad(map, field,
                fmt::format("expected a mapping of chip id to value, got {}", kind(map)));
        }
        std::map<ChipId, int> seen;
        for (const auto& kv : map) {
            const ChipId id = chip_id(kv.first, std::string(field));
            const int line = kv.first.Mark().line + 1;
            if (const auto [it, inserted] = seen.emplace(id, line); !inserted) {
                bad(kv.first, field,
                    fmt::format("chip {} is listed twice (lines {} and {})", id, it->second, line));
            }
            const std::string f = fmt::format("{}.{}", field, id);
            each(id, kv.second, f);
        }
    }

    void archs(const YAML::Node& n) {
        if (!n.IsMap() || n.size() == 0) {
            bad(n, "arch", fmt::format("expected a mapping of chip id to arch, got {}", kind(n)));
        }
        if (n.size() > kMaxClusterChips) {
            bad(n, "arch",
                fmt::format("{} chips; a cluster descriptor has at most {}", n.size(),
                            kMaxClusterChips));
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
                    fmt::format("unknown arch {} (known: wormhole_b0, Wormhole, blackhole)",
                                quoted(kv.second.Scalar())));
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
    }

    void chips(const YAML::Node& n) {
        for_each_chip(n, "chips", [&](ChipId id, const YAML::Node& v, const std::string& field) {
            if (v.IsNull() || (v.IsMap() && v.size() == 0) || (v.IsSequence() && v.size() == 0))
                return;  // BH: {}
            if (!v.IsSequence() || v.size() != 4) {
                bad(v, field, fmt::format("expected [x, y, rack, shelf], got {}", kind(v)));
            }
            d_.coords_[id] =
                EthCoord{u32(v[0], field), u32(v[1], field), u32(v[2], field), u32(v[3], field)};
        });
    }

    std::optional<EthPortRef> port(const YAML::Node& n, const std::string& field) {
        if (!n.IsMap())
            bad(n, field, fmt::format("expected {{chip: N, chan: N}}, got {}", kind(n)));
        check_keys(n, {"chip", "chan"}, field);
        const YAML::Node chip = required(n, "chip", field + ".");
        const YAML::Node chan = required(n, "chan", field + ".");
        const auto id = known_chip(chip, field + ".chip");
        const uint32_t c = u32(chan, field + ".chan");
        const uint32_t channels = arch_eth_channels(d_.arch_);
        if (c >= channels) {
            problem(ClusterLintKind::ChannelOutOfRange, chan, field + ".chan",
                    fmt::format("channel {} is out of range for {} (channels 0..{})", c,
                                arch_name(d_.arch_), channels - 1));
            return std::nullopt;
        }
        if (!id) return std::nullopt;
        return EthPortRef{*id, c};
    }

    std::optional<bool> routing_enabled(const YAML::Node& opt, const std::string& field) {
        if (!opt.IsMap())
            bad(opt, field, fmt::format("expected {{routing_enabled: bool}}, got {}", kind(opt)));
        check_keys(opt, {"routing_enabled"}, field);
        const YAML::Node r = opt["routing_enabled"];
        if (!r) return std::nullopt;
        bool v = false;
        if (!r.IsScalar() || !YAML::convert<bool>::decode(r, v)) {
            bad(r, field + ".routing_enabled",
                fmt::format("expected true or false, got {}", kind(r)));
        }
        return v;
    }

    // The connection is new and each of its ports free; otherwise the problem is reported.
    bool wiring_ok(const EthConnection& conn, const YAML::Node& c, const std::string& field) {
        if (conn.a.chip == conn.b.chip) {
            if (conn.a == conn.b || findings_) {
                problem(ClusterLintKind::SelfConnection, c, field,
                        conn.a == conn.b
                            ? fmt::format("{} is connected to itself", conn.a.str())
                            : fmt::format("{} is connected to {}: chip {} is cabled to itself",
                                          conn.a.str(), conn.b.str(), conn.a.chip));
                if (conn.a == conn.b) return false;
            }
        }
        if (const auto first = links_.find(link_key(conn.a, conn.b)); first != links_.end()) {
            problem(ClusterLintKind::DuplicateConnection, c, field,
                    fmt::format("{} <-> {} is listed again (first as {})", conn.a.str(),
                                conn.b.str(), first->second));
            return false;
        }
        for (const EthPortRef& p : {conn.a, conn.b}) {
            const auto used = d_.peers_.find(p);
            if (used == d_.peers_.end()) continue;
            problem(ClusterLintKind::AsymmetricConnection, c, field,
                    fmt::format("{} is joined to {} here but to {} by {}", p.str(),
                                p == conn.a ? conn.b.str() : conn.a.str(), used->second.str(),
                                links_.at(link_key(p, used->second))));
            return false;
        }
        return true;
    }

    void connections(const YAML::Node& list) {
        if (list.IsNull()) return;
        if (!list.IsSequence()) {
            bad(list, "ethernet_connections",
                fmt::format("expected a list of connections, got {}", kind(list)));
        }
        for (size_t i = 0; i < list.size(); ++i) {
            const YAML::Node c = list[i];
            const std::string field = fmt::format("ethernet_connections[{}]", i);
            if (!c.IsSequence() || c.size() < 2 || c.size() > 3) {
                bad(c, field,
                    fmt::format("expected [{{chip, chan}}, {{chip, chan}}] with an optional "
                                "{{routing_enabled}}, got {}",
                                c.IsSequence() ? fmt::format("a list of {}", c.size()) : kind(c)));
            }
            const auto a = port(c[0], field + "[0]");
            const auto b = port(c[1], field + "[1]");
            EthConnection conn;
            if (c.size() == 3) conn.routing_enabled = routing_enabled(c[2], field + "[2]");
            if (!a || !b) continue;
            conn.a = *a;
            conn.b = *b;
            if (!wiring_ok(conn, c, field)) continue;
            links_.emplace(link_key(conn.a, conn.b), field);
            d_.peers_.emplace(conn.a, conn.b);
            d_.peers_.emplace(conn.b, conn.a);
            d_.connections_.push_back(conn);
        }
    }

    void mmio_entry(const YAML::Node& map, const std::string& field) {
        for (const auto& kv : map) {
            const ChipId id = chip_id(kv.first, field);
            const uint32_t pci = u32(kv.second, fmt::format("{}.{}", field, id));
            if (!mmio_seen_.insert(id).second) {
                bad(kv.first, field, fmt::format("chip {} is listed twice", id));
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

    // A mask whose bits name units 0..units-1 of the arch.
    uint32_t mask(const YAML::Node& entry, const char* key, const std::string& field,
                  uint32_t units, std::string_view what) {
        const YAML::Node n = entry[key];
        if (!n) return 0;
        const std::string f = fmt::format("{}.{}", field, key);
        const uint32_t v = u32(n, f);
        if (units < 32 && v >> units != 0) {
            bad(n, f,
                fmt::format("{} has bits beyond the {} {} of {}{}", hex32(v), units, what,
                            arch_name(d_.arch_),
                            units == 0 ? "" : fmt::format(" (bits 0..{})", units - 1)));
        }
        return v;
    }

    void harvesting(const YAML::Node& n) {
        const HarvestUnits units = harvest_units(d_.arch_);
        const auto tensix = static_cast<uint32_t>(tensix_harvest_lines(d_.arch_).size());
        const std::string_view lines =
            d_.arch_ == hal::Arch::Blackhole ? "Tensix columns" : "Tensix rows";
        for_each_chip(n, "harvesting", [&](ChipId id, const YAML::Node& e, const std::string& f) {
            if (!e.IsMap()) bad(e, f, fmt::format("expected a mapping, got {}", kind(e)));
            check_keys(e, kHarvestingKeys, f);
            ChipHarvesting h;
            const YAML::Node translation = required(e, "noc_translation", f + ".");
            if (!translation.IsScalar() ||
                !YAML::convert<bool>::decode(translation, h.noc_translation)) {
                bad(translation, f + ".noc_translation",
                    fmt::format("expected true or false, got {}", kind(translation)));
            }
            required(e, "harvest_mask", f + ".");
            h.tensix_mask = mask(e, "harvest_mask", f, tensix, lines);
            h.dram_mask = mask(e, "dram_harvesting_mask", f, units.dram, "DRAM channels");
            h.eth_mask = mask(e, "eth_harvesting_mask", f, units.eth, "Ethernet cores");
            h.pcie_mask = mask(e, "pcie_harvesting_mask", f, units.pcie, "PCIe cores");
            h.l2cpu_mask = mask(e, "l2cpu_harvesting_mask", f, units.l2cpu, "L2CPU cores");
            d_.harvesting_[id] = h;
        });
    }

    // [[{board_id: N}, {board_type: T}, {chips: [..]}], ...]: each chip on at most one board.
    void boards(const YAML::Node& list) {
        if (list.IsNull()) return;
        if (!list.IsSequence())
            bad(list, "boards", fmt::format("expected a list, got {}", kind(list)));
        for (size_t i = 0; i < list.size(); ++i) {
            const std::string field = fmt::format("boards[{}]", i);
            const YAML::Node b = list[i];
            if (!b.IsSequence()) bad(b, field, fmt::format("expected a list, got {}", kind(b)));
            BoardInfo info;
            std::vector<std::pair<ChipId, YAML::Node>> chips;
            for (size_t k = 0; k < b.size(); ++k) {
                const std::string f = fmt::format("{}[{}]", field, k);
                const YAML::Node item = b[k];
                if (!item.IsMap())
                    bad(item, f, fmt::format("expected a mapping, got {}", kind(item)));
                check_keys(item, {"board_id", "board_type", "chips"}, f);
                if (item["board_id"]) info.id = u64(item["board_id"], f + ".board_id");
                if (item["board_type"]) info.type = scalar(item["board_type"], f + ".board_type");
                if (const YAML::Node c = item["chips"]) {
                    if (!c.IsSequence() && !c.IsNull())
                        bad(c, f + ".chips", fmt::format("expected a list, got {}", kind(c)));
                    for (size_t j = 0; j < c.size(); ++j) {
                        const std::string cf = fmt::format("{}.chips[{}]", f, j);
                        chips.emplace_back(chip_id(c[j], cf), c[j]);
                    }
                }
            }
            for (const auto& [chip, node] : chips) {
                const auto [it, added] = d_.board_of_.emplace(chip, d_.boards_.size());
                if (!added) {
                    bad(node, field,
                        fmt::format("chip {} is already listed in boards[{}]", chip, it->second));
                }
            }
            d_.boards_.push_back(std::move(info));
        }
    }

    std::vector<ClusterLintFinding>* findings_;
    ClusterDescriptor d_;
    std::map<std::pair<EthPortRef, EthPortRef>, std::string> links_;  // link -> its field
    std::set<ChipId> mmio_seen_;
};

namespace {

ClusterDescriptor parse_descriptor(std::string_view yaml_text, const std::string& source,
                                   std::vector<ClusterLintFinding>* findings) {
    const YAML::Node root = load_yaml(yaml_text, source, kClusterDescriptorInput);
    try {
        return ClusterDescriptorParser(source, findings).parse(root);
    } catch (const YAML::Exception& e) {  // defensive: yaml-cpp access errors
        fail(ErrorCategory::BadDescriptor, "{}: invalid cluster descriptor: {}", source, e.msg);
    }
}

}  // namespace

ClusterDescriptor ClusterDescriptor::parse(std::string_view yaml_text, const std::string& source) {
    return parse_descriptor(yaml_text, source, nullptr);
}

ClusterDescriptor ClusterDescriptor::load_file(const std::string& path) {
    return parse(read_text_file(path, kClusterDescriptorInput), path);
}

ClusterLintReport ClusterDescriptor::lint(std::string_view yaml_text, const std::string& source) {
    std::vector<ClusterLintFinding> findings;
    ClusterDescriptor usable = parse_descriptor(yaml_text, source, &findings);
    return ClusterLintReport{std::move(usable), std::move(findings)};
}

ClusterLintReport ClusterDescriptor::lint_file(const std::string& path) {
    return lint(read_text_file(path, kClusterDescriptorInput), path);
}

ClusterDescriptor ClusterDescriptor::unconnected(hal::Arch arch, uint32_t chips) {
    if (chips == 0) fail(ErrorCategory::BadInput, "a cluster needs at least one chip");
    if (chips > kMaxClusterChips) {
        fail(ErrorCategory::BadInput, "{} chips; a cluster has at most {}", chips,
             kMaxClusterChips);
    }
    ClusterDescriptor d;
    d.source_ =
        fmt::format("{} unconnected {} chip{}", chips, arch_name(arch), chips == 1 ? "" : "s");
    d.arch_ = arch;
    d.chip_count_ = chips;
    for (ChipId c = 0; c < chips; ++c) d.mmio_chips_.emplace_back(c, c);
    return d;
}

bool ClusterDescriptor::is_mmio(ChipId chip) const {
    return std::any_of(mmio_chips_.begin(), mmio_chips_.end(),
                       [&](const auto& m) { return m.first == chip; });
}

namespace {
template <typename Map>
auto find_or_none(const Map& map, const typename Map::key_type& key)
    -> std::optional<typename Map::mapped_type> {
    const auto it = map.find(key);
    if (it == map.end()) return std::nullopt;
    return it->second;
}
}  // namespace

std::optional<EthCoord> ClusterDescriptor::eth_coord(ChipId chip) const {
    return find_or_none(coords_, chip);
}

std::optional<EthPortRef> ClusterDescriptor::peer(EthPortRef port) const {
    return find_or_none(peers_, port);
}

std::vector<uint32_t> ClusterDescriptor::connected_channels(ChipId chip) const {
    std::vector<uint32_t> out;
    for (auto it = peers_.lower_bound({chip, 0}); it != peers_.end() && it->first.chip == chip;
         ++it)
        out.push_back(it->first.chan);
    return out;
}

std::optional<ChipHarvesting> ClusterDescriptor::harvesting(ChipId chip) const {
    return find_or_none(harvesting_, chip);
}

std::vector<uint32_t> ClusterDescriptor::tensix_harvest_masks() const {
    std::vector<uint32_t> masks(chip_count_, 0);
    for (const auto& [chip, h] : harvesting_) masks[chip] = h.tensix_mask;
    return masks;
}

std::optional<BoardInfo> ClusterDescriptor::board(ChipId chip) const {
    const auto index = find_or_none(board_of_, chip);
    if (!index) return std::nullopt;
    return boards_[*index];
}

std::optional<uint32_t> ClusterDescriptor::bus_id(ChipId chip) const {
    return find_or_none(bus_ids_, chip);
}

namespace {

// A Galaxy tray from the PCI bus's upper nibble (tt-metal's UBB numbering, reference
// soc_descriptors/clusters/README.md): trays 1..4; nullopt for a bus no tray has.
std::optional<uint32_t> ubb_tray(hal::Arch arch, uint32_t bus) {
    static constexpr std::array<uint32_t, 4> kWormhole{0xC, 0x8, 0x0, 0x4};
    static constexpr std::array<uint32_t, 4> kBlackhole{0x0, 0x4, 0xC, 0x8};
    const auto& nibbles = arch == hal::Arch::Blackhole ? kBlackhole : kWormhole;
    for (uint32_t t = 0; t < nibbles.size(); ++t) {
        if (nibbles[t] == ((bus >> 4) & 0xF)) return t + 1;
    }
    return std::nullopt;
}

}  // namespace

std::optional<AsicPosition> ClusterDescriptor::asic_position(ChipId chip) const {
    const auto b = board(chip);
    if (!b || b->type.find("ubb") == std::string::npos) {
        return AsicPosition{chip + 1, asic_location(chip).value_or(0)};
    }
    const auto bus = bus_id(chip);
    if (!bus) return std::nullopt;
    const auto tray = ubb_tray(arch_, *bus);
    if (!tray) return std::nullopt;
    return AsicPosition{*tray, asic_location(chip).value_or(*bus & 0xF)};
}

std::optional<uint32_t> ClusterDescriptor::asic_location(ChipId chip) const {
    return find_or_none(asic_locations_, chip);
}

std::optional<uint64_t> ClusterDescriptor::unique_id(ChipId chip) const {
    return find_or_none(unique_ids_, chip);
}

HarvestedSocs::HarvestedSocs(const SocDescriptor& soc, const ClusterDescriptor& cluster)
    : cluster_source_(cluster.source()) {
    if (soc.arch() != cluster.arch()) {
        fail(ErrorCategory::BadInput, "{}: cluster is {} but {} describes {}", cluster.source(),
             arch_name(cluster.arch()), soc.source(), arch_name(soc.arch()));
    }
    for (const uint32_t mask : cluster.tensix_harvest_masks()) {
        auto it = by_mask_.find(mask);
        if (it == by_mask_.end()) it = by_mask_.emplace(mask, soc.harvested(mask)).first;
        per_chip_.push_back(&it->second);
    }
}

const SocDescriptor& HarvestedSocs::operator()(ChipId chip) const {
    if (chip >= per_chip_.size()) {
        fail(ErrorCategory::BadInput, "{}: chip {} does not exist (chips 0..{})", cluster_source_,
             chip, per_chip_.size() - 1);
    }
    return *per_chip_[chip];
}

}  // namespace fabric
