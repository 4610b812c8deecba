// Fault specs: parsing and checking against the cluster (fault_plan.h). The injector, which needs
// the model, is in fault_injector.cpp.
#include "fabric/fault_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include "fabric/error.h"

namespace fabric {

namespace {

struct KindSyntax {
    FaultKind kind;
    std::string_view name;
    std::string_view amount;  // the field after '/', empty when the kind has none
    uint64_t amount_max;
    uint64_t amount_min;
    bool amount_optional = false;    // "/AMOUNT" may be left out (0)
    std::string_view place = "ETH";  // the field after CHIP: an eth channel, or a core (X-Y)
};

constexpr std::array<KindSyntax, 6> kKinds{{
    {FaultKind::LinkDown, "link-down", "CYCLES", kMaxFaultCycles, 1, true},
    {FaultKind::LinkFlap, "link-flap", "PERIOD", kMaxFaultCycles, 1},
    {FaultKind::LinkDrop, "link-drop", "PPM", std::numeric_limits<uint64_t>::max(), 0},
    {FaultKind::LinkDelay, "link-delay", "CYCLES", std::numeric_limits<uint32_t>::max(), 1},
    {FaultKind::RouterStall, "router-stall", "CYCLES", kMaxFaultCycles, 1},
    {FaultKind::NocHold, "noc-hold", "CYCLES", kMaxFaultCycles, 1, true, "X-Y"},
}};

const KindSyntax& syntax_of(FaultKind kind) {
    return kKinds[static_cast<size_t>(kind)];
}

// "link-flap:CHIP:ETH@CYCLE/PERIOD"
std::string form_of(const KindSyntax& k) {
    std::string form = fmt::format("{}:CHIP:{}@CYCLE", k.name, k.place);
    if (k.amount.empty()) return form;
    return form +
           (k.amount_optional ? fmt::format("[/{}]", k.amount) : fmt::format("/{}", k.amount));
    return form;
}

// Parses one spec; every complaint names the spec as written.
class SpecParser {
  public:
    explicit SpecParser(std::string_view text) : text_(text) {}

    FaultSpec parse() {
        const size_t colon = text_.find(':');
        const KindSyntax& k = kind(text_.substr(0, colon));
        kind_ = &k;
        FaultSpec f;
        f.kind = k.kind;
        f.text = std::string(text_);
        std::string_view rest = colon == std::string_view::npos ? "" : text_.substr(colon + 1);
        const std::string_view chip = take_until(rest, ':', "CHIP", k.place);
        const std::string_view place = take_until(rest, '@', k.place, "CYCLE");
        const size_t slash = rest.find('/');
        const std::string_view cycle = rest.substr(0, slash);
        f.chip = static_cast<ChipId>(number("CHIP", chip, std::numeric_limits<uint32_t>::max()));
        if (fault_on_core(k.kind)) {
            f.core = core(place);
        } else {
            f.eth =
                static_cast<uint32_t>(number("ETH", place, std::numeric_limits<uint32_t>::max()));
        }
        f.at = number("CYCLE", cycle, kMaxFaultCycles);
        const std::string_view amount =
            slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
        if (k.amount_optional && slash == std::string_view::npos) return f;
        if (k.amount.empty()) {
            if (slash != std::string_view::npos) {
                bad("unexpected '/{}' (expected {})", amount, form_of(k));
            }
            return f;
        }
        f.amount = number(k.amount, amount, k.amount_max);
        if (f.amount < k.amount_min) bad("{} must be at least {}", k.amount, k.amount_min);
        if (k.kind == FaultKind::LinkDrop && f.amount > kMaxFaultPpm) {
            bad("PPM {} is more than {} (every frame)", f.amount, kMaxFaultPpm);
        }
        return f;
    }

  private:
    template <typename... Args>
    [[noreturn]] void bad(fmt::format_string<Args...> format, Args&&... args) const {
        fail(ErrorCategory::BadInput, "fault '{}': {}", text_,
             fmt::format(format, std::forward<Args>(args)...));
    }

    const KindSyntax& kind(std::string_view name) const {
        const std::optional<FaultKind> k = fault_kind_of(name);
        if (!k) bad("unknown fault kind '{}' ({})", name, fault_kind_names());
        return syntax_of(*k);
    }

    // The text before `sep` (removed from `rest` with it). Without `sep`, the field is missing
    // when nothing is left, else the one `sep` would have introduced.
    std::string_view take_until(std::string_view& rest, char sep, std::string_view field,
                                std::string_view next) const {
        const size_t at = rest.find(sep);
        if (at == std::string_view::npos) missing(rest.empty() ? field : next);
        const std::string_view head = rest.substr(0, at);
        rest.remove_prefix(at + 1);
        return head;
    }

    [[noreturn]] void missing(std::string_view field) const {
        bad("missing {} (expected {})", field, form_of(*kind_));
    }

    uint64_t number(std::string_view field, std::string_view digits, uint64_t max) const {
        if (digits.empty()) missing(field);
        uint64_t v = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        const bool all_digits = digits.find_first_not_of("0123456789") == std::string_view::npos;
        if (!all_digits || (ec != std::errc() && ec != std::errc::result_out_of_range) ||
            end != digits.data() + digits.size()) {
            bad("{} '{}' is not a number", field, digits);
        }
        if (ec == std::errc::result_out_of_range || v > max) {
            bad("{} {} is out of range (at most {})", field, digits, max);
        }
        return v;
    }

    CoreCoord core(std::string_view text) const {
        if (text.empty()) missing("X-Y");
        const std::optional<CoreCoord> c = parse_core_coord(text);
        if (!c) bad("X-Y '{}' is not a core (expected x-y, e.g. 1-1)", text);
        return *c;
    }

    std::string_view text_;
    const KindSyntax* kind_ = nullptr;
};

}  // namespace

std::string_view fault_kind_name(FaultKind kind) {
    return syntax_of(kind).name;
}

std::optional<FaultKind> fault_kind_of(std::string_view name) {
    for (const KindSyntax& k : kKinds) {
        if (k.name == name) return k.kind;
    }
    return std::nullopt;
}

std::string fault_kind_names() {
    std::vector<std::string_view> names;
    for (const KindSyntax& k : kKinds) names.push_back(k.name);
    return fmt::format("{}", fmt::join(names, ", "));
}

FaultSpec parse_fault(std::string_view text) {
    return SpecParser(text).parse();
}

namespace {

// The port of a link fault: the chip has the channel and the channel a link. Returns its peer.
EthPortRef checked_port(const FaultSpec& spec, const ClusterDescriptor& cluster,
                        const SocDescriptor& soc) {
    const size_t eth_channels = soc.eth_channels();
    if (spec.eth >= eth_channels) {
        fail(ErrorCategory::BadInput, "fault '{}': chip {} has no eth channel {} (channels 0..{})",
             spec.text, spec.chip, spec.eth, eth_channels - 1);
    }
    const std::optional<EthPortRef> peer = cluster.peer({spec.chip, spec.eth});
    if (!peer) {
        fail(ErrorCategory::BadInput, "fault '{}': chip {} eth {} has no link in {}", spec.text,
             spec.chip, spec.eth, cluster.source());
    }
    return *peer;
}

}  // namespace

void check_fault(const FaultSpec& spec, const ClusterDescriptor& cluster, const SocDescriptor& soc,
                 std::span<const ChipId> modeled) {
    const auto bad = [&](const std::string& what) {
        fail(ErrorCategory::BadInput, "fault '{}': {}", spec.text, what);
    };
    if (spec.chip >= cluster.chip_count()) {
        bad(fmt::format("chip {} does not exist (chips 0..{} in {})", spec.chip,
                        cluster.chip_count() - 1, cluster.source()));
    }
    const bool on_link = !fault_on_core(spec.kind);
    if (!on_link && !soc.core_type(spec.core)) {
        bad(fmt::format("chip {} has no core {} in {}", spec.chip, spec.core.str(), soc.source()));
    }
    const ChipId peer_chip = on_link ? checked_port(spec, cluster, soc).chip : spec.chip;
    const auto not_modeled = [&](ChipId c) {
        return std::find(modeled.begin(), modeled.end(), c) == modeled.end();
    };
    if (not_modeled(spec.chip)) {
        bad(fmt::format("chip {} is not modeled in this run (modeled: {})", spec.chip,
                        fmt::join(modeled, ",")));
    }
    // A link whose other end is left out of the model is down from the start: nothing to break.
    if (on_link && spec.kind != FaultKind::RouterStall && not_modeled(peer_chip)) {
        bad(
            fmt::format("chip {} eth {} leads to chip {}, which is not modeled in this run "
                        "(modeled: {})",
                        spec.chip, spec.eth, peer_chip, fmt::join(modeled, ",")));
    }
}

std::string AppliedFault::describe() const {
    const std::string where =
        fault_on_core(kind) ? fmt::format("core {}", core.str()) : fmt::format("eth {}", eth);
    return fmt::format("{} chip {} {}{}{} at traffic cycle {} (device cycle {})",
                       fault_kind_name(kind), chip, where, change.empty() ? "" : " ", change,
                       traffic_cycle, device_cycle);
}

}  // namespace fabric
