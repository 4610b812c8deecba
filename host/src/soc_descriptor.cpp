#include "yaml_fields.h"
#include "fabric/soc_descriptor.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "fabric/error.h"

namespace fabric {

std::string_view core_type_name(CoreType t) {
    switch (t) {
        case CoreType::Worker:
            return "functional_workers";
        case CoreType::Eth:
            return "eth";
        case CoreType::Dram:
            return "dram";
        case CoreType::Pcie:
            return "pcie";
        case CoreType::Arc:
            return "arc";
        case CoreType::RouterOnly:
            return "router_only";
        case CoreType::Security:
            return "security";
        case CoreType::L2cpu:
            return "l2cpu";
        default:
            return "unknown";
    }
}

std::optional<hal::Arch> parse_arch(std::string_view name) {
    if (name == "WORMHOLE_B0" || name == "wormhole_b0") return hal::Arch::WormholeB0;
    if (name == "BLACKHOLE" || name == "blackhole") return hal::Arch::Blackhole;
    return std::nullopt;
}

std::string_view arch_name(hal::Arch arch) {
    return hal::arch_map(arch).name;
}

// Builds a SocDescriptor from a parsed YAML document, failing with the file, line and field.
class SocDescriptorParser : YamlFields {
  public:
    explicit SocDescriptorParser(const std::string& source) : YamlFields(source) {}

    SocDescriptor parse(const YAML::Node& root) {
        if (!root.IsMap()) {
            bad(root, "",
                fmt::format("the document must be a mapping of fields, got {}", kind(root)));
        }
        d_.source_ = source_;

        const YAML::Node arch = required(root, "arch_name");
        const std::string arch_text = scalar(arch, "arch_name");
        const auto a = parse_arch(arch_text);
        if (!a) {
            bad(arch, "arch_name",
                fmt::format("unknown arch '{}' (known: WORMHOLE_B0, wormhole_b0, BLACKHOLE, "
                            "blackhole)",
                            arch_text));
        }
        d_.arch_ = *a;

        const YAML::Node grid = required(root, "grid");
        if (!grid.IsMap()) bad(grid, "grid", fmt::format("expected a mapping, got {}", kind(grid)));
        d_.grid_x_ = grid_size(required(grid, "x_size", "grid."), "grid.x_size");
        d_.grid_y_ = grid_size(required(grid, "y_size", "grid."), "grid.y_size");

        d_.worker_l1_size_ = u32(required(root, "worker_l1_size"), "worker_l1_size");
        d_.eth_l1_size_ = u32(required(root, "eth_l1_size"), "eth_l1_size");
        d_.dram_bank_size_ = u64(required(root, "dram_bank_size"), "dram_bank_size");

        core_list(required(root, "arc"), CoreType::Arc);
        core_list(required(root, "pcie"), CoreType::Pcie);
        dram(required(root, "dram"));
        core_list(required(root, "eth"), CoreType::Eth);
        core_list(required(root, "functional_workers"), CoreType::Worker);
        core_list(required(root, "router_only"), CoreType::RouterOnly);
        if (root["security"]) core_list(root["security"], CoreType::Security);
        if (root["l2cpu"]) core_list(root["l2cpu"], CoreType::L2cpu);
        if (root["features"] && !root["features"].IsMap() && !root["features"].IsNull()) {
            bad(root["features"], "features",
                fmt::format("expected a mapping, got {}", kind(root["features"])));
        }

        const auto& eth = d_.cores_[CoreType::Eth];
        for (uint32_t ch = 0; ch < eth.size(); ++ch) d_.eth_channel_at_[eth[ch]] = ch;
        return std::move(d_);
    }

  private:
    uint32_t grid_size(const YAML::Node& n, std::string_view field) const {
        const uint64_t v = u64(n, field);
        if (v == 0 || v > 64) bad(n, field, fmt::format("{} is not a grid size in 1..64", v));
        return static_cast<uint32_t>(v);
    }

    CoreCoord coord(const YAML::Node& n, const std::string& field) const {
        if (!n.IsScalar()) {
            bad(n, field, fmt::format("expected an 'x-y' core coordinate, got {}", kind(n)));
        }
        const auto c = parse_core_coord(n.Scalar());
        if (!c) {
            bad(n, field, fmt::format("'{}' is not an 'x-y' core coordinate", n.Scalar()));
        }
        if (c->x >= d_.grid_x_ || c->y >= d_.grid_y_) {
            bad(n, field,
                fmt::format("core {} is outside the {}x{} grid", c->str(), d_.grid_x_, d_.grid_y_));
        }
        return *c;
    }

    void add(const YAML::Node& n, const std::string& field, CoreCoord c, CoreType t) {
        const auto [it, inserted] = where_.emplace(c, field);
        if (!inserted) {
            bad(n, field, fmt::format("core {} is already listed as '{}'", c.str(), it->second));
        }
        d_.type_at_[c] = t;
        d_.cores_[t].push_back(c);
    }

    void require_list(const YAML::Node& n, std::string_view field) const {
        if (!n.IsSequence() && !n.IsNull()) {
            bad(n, field, fmt::format("expected a list of 'x-y' cores, got {}", kind(n)));
        }
    }

    void core_list(const YAML::Node& list, CoreType t) {
        const std::string name(core_type_name(t));
        require_list(list, name);
        d_.cores_[t];  // present even when empty
        if (list.IsNull()) return;
        for (size_t i = 0; i < list.size(); ++i) {
            const std::string field = fmt::format("{}[{}]", name, i);
            add(list[i], field, coord(list[i], field), t);
        }
    }

    void dram(const YAML::Node& list) {
        require_list(list, "dram");
        d_.cores_[CoreType::Dram];
        if (list.IsNull()) return;
        for (size_t ch = 0; ch < list.size(); ++ch) {
            const YAML::Node chan = list[ch];
            std::vector<CoreCoord> ports;
            if (chan.IsScalar()) {  // a channel with a single port may be written bare
                const std::string field = fmt::format("dram[{}]", ch);
                ports.push_back(coord(chan, field));
                add(chan, field, ports.back(), CoreType::Dram);
            } else if (chan.IsSequence()) {
                for (size_t p = 0; p < chan.size(); ++p) {
                    const std::string field = fmt::format("dram[{}][{}]", ch, p);
                    ports.push_back(coord(chan[p], field));
                    add(chan[p], field, ports.back(), CoreType::Dram);
                }
            } else {
                bad(chan, fmt::format("dram[{}]", ch),
                    fmt::format("expected a list of 'x-y' ports, got {}", kind(chan)));
            }
            d_.dram_channels_.push_back(std::move(ports));
        }
    }

    SocDescriptor d_;
    std::map<CoreCoord, std::string> where_;  // coordinate -> field that first listed it
};

SocDescriptor SocDescriptor::parse(std::string_view yaml_text, const std::string& source) {
    const YAML::Node root = load_yaml(yaml_text, source);
    try {
        return SocDescriptorParser(source).parse(root);
    } catch (const YAML::Exception& e) {  // defensive: yaml-cpp access errors
        fail(ErrorCategory::BadDescriptor, "{}: invalid descriptor: {}", source, e.msg);
    }
}

SocDescriptor SocDescriptor::load_file(const std::string& path) {
    return parse(read_text_file(path, "SoC descriptor"), path);
}

std::optional<CoreType> SocDescriptor::core_type(CoreCoord c) const {
    const auto it = type_at_.find(c);
    if (it == type_at_.end()) return std::nullopt;
    return it->second;
}

const std::vector<CoreCoord>& SocDescriptor::cores(CoreType t) const {
    static const std::vector<CoreCoord> kNone;
    const auto it = cores_.find(t);
    return it == cores_.end() ? kNone : it->second;
}

CoreCoord SocDescriptor::eth_core(uint32_t channel) const {
    const auto& eth = cores(CoreType::Eth);
    if (channel >= eth.size()) {
        fail(ErrorCategory::BadInput, "{}: eth channel {} does not exist (the chip has {}: 0..{})",
             source_, channel, eth.size(), eth.empty() ? 0 : eth.size() - 1);
    }
    return eth[channel];
}

std::optional<uint32_t> SocDescriptor::eth_channel(CoreCoord c) const {
    const auto it = eth_channel_at_.find(c);
    if (it == eth_channel_at_.end()) return std::nullopt;
    return it->second;
}

uint32_t SocDescriptor::l1_size(CoreCoord c) const {
    const auto t = core_type(c);
    if (!t) fail(ErrorCategory::BadInput, "{}: no core at {}", source_, c.str());
    switch (*t) {
        case CoreType::Eth:
            return eth_l1_size_;
        case CoreType::Worker:
            return worker_l1_size_;
        default:
            fail(ErrorCategory::BadInput, "{}: core {} is a '{}' core and has no L1", source_,
                 c.str(), core_type_name(*t));
    }
}

}  // namespace fabric
