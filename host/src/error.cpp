#include "fabric/error.h"

#include <charconv>

#include "fabric/coord.h"

namespace fabric {

std::string_view category_name(ErrorCategory c) {
    switch (c) {
        case ErrorCategory::BadInput:
            return "bad_input";
        case ErrorCategory::BadDescriptor:
            return "bad_descriptor";
        case ErrorCategory::BadElf:
            return "bad_elf";
        case ErrorCategory::Device:
            return "device";
        case ErrorCategory::Timeout:
            return "timeout";
        case ErrorCategory::Unsupported:
            return "unsupported";
        case ErrorCategory::Fabric:
            return "fabric";
        case ErrorCategory::Internal:
            return "internal";
        default:
            return "unknown";
    }
}

std::string hex32(uint64_t value) {
    return fmt::format("0x{:08x}", value);
}

std::string CoreCoord::str() const {
    return fmt::format("{}-{}", x, y);
}

std::string CoreLocation::str() const {
    return fmt::format("chip {} core {}", chip, core.str());
}

namespace {
std::optional<uint32_t> parse_u32(std::string_view s) {
    if (s.empty() || s.size() > 9) return std::nullopt;
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}
}  // namespace

std::optional<CoreCoord> parse_core_coord(std::string_view text) {
    const auto dash = text.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    const auto x = parse_u32(text.substr(0, dash));
    const auto y = parse_u32(text.substr(dash + 1));
    if (!x || !y) return std::nullopt;
    return CoreCoord{*x, *y};
}

}  // namespace fabric
