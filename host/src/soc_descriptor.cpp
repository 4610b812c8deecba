#include "fabric/soc_descriptor.h"

#include <yaml-cpp/yaml.h>

#include <initializer_list>

#include "fabric/error.h"
#include "yaml_fields.h"

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
        case CoreType::HarvestedWorker:
            return "harvested_workers";
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

std::span<const uint32_t> tensix_harvest_lines(hal::Arch arch) {
    static constexpr uint32_t kWormholeRows[] = {11, 1, 10, 2, 9, 3, 8, 4, 7, 5};
    static constexpr uint32_t kBlackholeColumns[] = {1,  16, 2,  15, 3,  14, 4,
                                                     13, 5,  12, 6,  11, 7,  10};
    if (arch == hal::Arch::Blackhole) return kBlackholeColumns;
    return kWormholeRows;
}

namespace {

// Every top-level key of tt-umd's SoC descriptor schema (docs/yaml_schemas/soc_descriptor.yaml)
// and of the descriptors tt-metal ships (the dram_* views). Anything else is refused by name.
const std::initializer_list<std::string_view> kSocKeys = {"grid",
                                                          "arc",
                                                          "pcie",
                                                          "dram",
                                                          "harvested_dram",
                                                          "eth",
                                                          "harvested_eth",
                                                          "functional_workers",
                                                          "harvested_workers",
                                                          "router_only",
                                                          "security",
                                                          "l2cpu",
                                                          "noc0_x_to_noc1_x",
                                                          "noc0_y_to_noc1_y",
                                                          "worker_l1_size",
                                                          "dram_bank_size",
                                                          "eth_l1_size",
                                                          "arch_name",
                                                          "features",
                                                          "dram_preferred_eth_endpoint",
                                                          "dram_preferred_worker_endpoint",
                                                          "dram_address_offsets"};

}  // namespace

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
                fmt::format("unknown arch {} (known: WORMHOLE_B0, wormhole_b0, BLACKHOLE, "
                            "blackhole)",
                            quoted(arch_text)));
        }
        d_.arch_ = *a;
        check_keys(root, kSocKeys, "");

        const YAML::Node grid = required(root, "grid");
        if (!grid.IsMap()) bad(grid, "grid", fmt::format("expected a mapping, got {}", kind(grid)));
        check_keys(grid, {"x_size", "y_size"}, "grid");
        d_.grid_x_ = grid_size(required(grid, "x_size", "grid."), "grid.x_size");
        d_.grid_y_ = grid_size(required(grid, "y_size", "grid."), "grid.y_size");

        const hal::ArchMap& arch_map = hal::arch_map(d_.arch_);
        d_.worker_l1_size_ =
            l1_size(required(root, "worker_l1_size"), "worker_l1_size", kMaxWorkerL1Size);
        d_.eth_l1_size_ =
            l1_size(required(root, "eth_l1_size"), "eth_l1_size", arch_map.eth_l1_size);
        d_.dram_bank_size_ = dram_bank_size(required(root, "dram_bank_size"));

        core_list(required(root, "arc"), CoreType::Arc);
        core_list(required(root, "pcie"), CoreType::Pcie);
        dram(required(root, "dram"));
        core_list(required(root, "eth"), CoreType::Eth);
        core_list(required(root, "functional_workers"), CoreType::Worker);
        core_list(required(root, "router_only"), CoreType::RouterOnly);
        if (root["security"]) core_list(root["security"], CoreType::Security);
        if (root["l2cpu"]) core_list(root["l2cpu"], CoreType::L2cpu);
        if (root["harvested_workers"])
            core_list(root["harvested_workers"], CoreType::HarvestedWorker);
        for (const char* key : {"harvested_eth", "harvested_dram", "dram_preferred_eth_endpoint",
                                "dram_preferred_worker_endpoint"}) {
            if (root[key]) coords(root[key], key);
        }
        if (root["noc0_x_to_noc1_x"])
            numbers(root["noc0_x_to_noc1_x"], "noc0_x_to_noc1_x", d_.grid_x_);
        if (root["noc0_y_to_noc1_y"])
            numbers(root["noc0_y_to_noc1_y"], "noc0_y_to_noc1_y", d_.grid_y_);
        if (root["dram_address_offsets"]) {
            numbers(root["dram_address_offsets"], "dram_address_offsets", std::nullopt);
        }
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

    // An L1 size: the model and the loaders need a positive multiple of 4 within the arch's L1.
    uint32_t l1_size(const YAML::Node& n, std::string_view field, uint32_t arch_max) const {
        const uint32_t v = u32(n, field);
        if (v == 0 || v > arch_max || v % 4 != 0) {
            bad(n, field,
                fmt::format("{} is not an L1 size of {} (a multiple of 4 in 4..{} bytes)", v,
                            arch_name(d_.arch_), arch_max));
        }
        return v;
    }

    uint64_t dram_bank_size(const YAML::Node& n) const {
        const uint64_t v = u64(n, "dram_bank_size");
        if (v == 0 || v > kMaxDramBankSize) {
            bad(n, "dram_bank_size",
                fmt::format("{} is not a DRAM bank size in 1..{} bytes", v, kMaxDramBankSize));
        }
        return v;
    }

    // A list of unsigned integers, each below `limit` when there is one.
    void numbers(const YAML::Node& list, std::string_view field,
                 std::optional<uint32_t> limit) const {
        if (!list.IsSequence() && !list.IsNull()) {
            bad(list, field, fmt::format("expected a list of numbers, got {}", kind(list)));
        }
        for (size_t i = 0; i < list.size(); ++i) {
            const std::string f = fmt::format("{}[{}]", field, i);
            const uint64_t v = u64(list[i], f);
            if (limit && v >= *limit) {
                bad(list[i], f, fmt::format("{} is outside the grid (0..{})", v, *limit - 1));
            }
        }
    }

    // A list of coordinates the descriptor lists but the host does not use (harvested eth and
    // DRAM, preferred DRAM endpoints): checked to be coordinates in the grid.
    void coords(const YAML::Node& list, std::string_view field) const {
        require_list(list, field);
        for (size_t i = 0; i < list.size(); ++i) coord(list[i], fmt::format("{}[{}]", field, i));
    }

    CoreCoord coord(const YAML::Node& n, const std::string& field) const {
        if (!n.IsScalar()) {
            bad(n, field, fmt::format("expected an 'x-y' core coordinate, got {}", kind(n)));
        }
        const auto c = parse_core_coord(n.Scalar());
        if (!c) {
            bad(n, field, fmt::format("{} is not an 'x-y' core coordinate", quoted(n.Scalar())));
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
    const YAML::Node root = load_yaml(yaml_text, source, kSocDescriptorInput);
    try {
        return SocDescriptorParser(source).parse(root);
    } catch (const YAML::Exception& e) {  // defensive: yaml-cpp access errors
        fail(ErrorCategory::BadDescriptor, "{}: invalid descriptor: {}", source, e.msg);
    }
}

SocDescriptor SocDescriptor::load_file(const std::string& path) {
    return parse(read_text_file(path, kSocDescriptorInput), path);
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

SocDescriptor SocDescriptor::harvested(uint32_t tensix_mask) const {
    const auto lines = tensix_harvest_lines(arch_);
    if (tensix_mask >> lines.size() != 0) {
        fail(ErrorCategory::BadInput,
             "{}: Tensix harvest mask {} has bits beyond the {} {} of {} (bits 0..{})", source_,
             hex32(tensix_mask), lines.size(),
             arch_ == hal::Arch::Blackhole ? "harvestable columns" : "harvestable rows",
             arch_name(arch_), lines.size() - 1);
    }
    SocDescriptor d = *this;
    d.tensix_harvest_mask_ |= tensix_mask;
    const auto is_harvested = [&](CoreCoord c) {
        const uint32_t line = arch_ == hal::Arch::Blackhole ? c.x : c.y;
        for (size_t bit = 0; bit < lines.size(); ++bit) {
            if ((tensix_mask >> bit & 1u) != 0 && lines[bit] == line) return true;
        }
        return false;
    };
    auto& workers = d.cores_[CoreType::Worker];
    auto& harvested = d.cores_[CoreType::HarvestedWorker];
    std::vector<CoreCoord> kept;
    for (const CoreCoord& c : workers) {
        if (!is_harvested(c)) {
            kept.push_back(c);
            continue;
        }
        harvested.push_back(c);
        d.type_at_[c] = CoreType::HarvestedWorker;
    }
    workers = std::move(kept);
    return d;
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
