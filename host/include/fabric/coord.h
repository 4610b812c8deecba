// Core coordinates: NOC0 (x, y) of a core on one chip, and (chip, x, y) of a core in a cluster.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabric {

struct CoreCoord {
    uint32_t x = 0;
    uint32_t y = 0;

    auto operator<=>(const CoreCoord&) const = default;
    std::string str() const;  // "x-y", the descriptor spelling
};

// Parse the descriptor spelling "x-y" (decimal, no sign, no spaces). nullopt if malformed.
std::optional<CoreCoord> parse_core_coord(std::string_view text);

using ChipId = uint32_t;

struct CoreLocation {
    ChipId chip = 0;
    CoreCoord core;

    auto operator<=>(const CoreLocation&) const = default;
    std::string str() const;  // "chip 0 core 9-0"
};

}  // namespace fabric
