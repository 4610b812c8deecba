// UTF-8 decoding for the text checks of input files and the escaping of error messages: both must
// agree on what a valid character is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fabric::utf8 {

struct Char {
    uint32_t code = 0;  // the code point; meaningless when length == 0
    size_t length = 0;  // bytes of a valid sequence starting at the position; 0 if invalid
};

// The character starting at text[at] (at < text.size()). Overlong forms, surrogates and code
// points above U+10FFFF are invalid, as are truncated sequences.
inline Char decode(std::string_view text, size_t at) {
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
    const uint8_t lead = byte(at);
    if (lead < 0x80) return {lead, 1};
    size_t length = 0;
    uint32_t code = 0;
    uint32_t min_code = 0;
    if ((lead & 0xE0) == 0xC0) {
        length = 2, code = lead & 0x1Fu, min_code = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3, code = lead & 0x0Fu, min_code = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4, code = lead & 0x07u, min_code = 0x10000;
    } else {
        return {};
    }
    if (text.size() - at < length) return {};
    for (size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xC0) != 0x80) return {};
        code = (code << 6) | (byte(at + i) & 0x3Fu);
    }
    if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return {};
    return {code, length};
}

// C0 and C1 control characters and DEL: what a terminal may act on instead of printing.
inline bool is_control(uint32_t code) {
    return code < 0x20 || (code >= 0x7F && code <= 0x9F);
}

// Characters that reorder how the rest of a line is displayed (bidirectional overrides and
// isolates): printed raw, a message could show something other than what it says.
inline bool is_bidi_control(uint32_t code) {
    return (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

}  // namespace fabric::utf8
