#include "fabric/error.h"

#include <charconv>

#include "fabric/coord.h"
#include "utf8.h"

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

std::string escape_control(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t at = 0; at < text.size();) {
        const utf8::Char c = utf8::decode(text, at);
        const size_t bytes = c.length == 0 ? 1 : c.length;
        if (c.length == 0 || utf8::is_control(c.code) || utf8::is_bidi_control(c.code)) {
            for (size_t i = 0; i < bytes; ++i) {
                out += fmt::format("\\x{:02x}", static_cast<uint8_t>(text[at + i]));
            }
        } else {
            out.append(text.substr(at, bytes));
        }
        at += bytes;
    }
    return out;
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
