// Typed field reads for the descriptor parsers (SoC and cluster descriptors): every failure is an
// Error(BadDescriptor) naming the file, the line and the field.
#pragma once

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "fabric/error.h"
#include "fmt/format.h"

namespace fabric {

// Parse YAML text; malformed YAML is Error(BadDescriptor) naming source, line and column.
inline YAML::Node load_yaml(std::string_view text, const std::string& source) {
    try {
        return YAML::Load(std::string(text));
    } catch (const YAML::ParserException& e) {
        fail(ErrorCategory::BadDescriptor, "{}:{}:{}: malformed YAML: {}", source, e.mark.line + 1,
             e.mark.column + 1, e.msg);
    }
}

// A whole file; Error(BadInput) "<path>: cannot open/read <what>" when it cannot be read.
inline std::string read_text_file(const std::string& path, std::string_view what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(ErrorCategory::BadInput, "{}: cannot open {}", path, what);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) fail(ErrorCategory::BadInput, "{}: cannot read {}", path, what);
    return text.str();
}

class YamlFields {
protected:
    explicit YamlFields(const std::string& source) : source_(source) {}

    [[noreturn]] void bad(const YAML::Node& node, std::string_view field,
                          const std::string& problem) const {
        const YAML::Mark m = node.Mark();
        const std::string where = m.is_null() ? source_ : fmt::format("{}:{}", source_, m.line + 1);
        if (field.empty()) fail(ErrorCategory::BadDescriptor, "{}: {}", where, problem);
        fail(ErrorCategory::BadDescriptor, "{}: field '{}': {}", where, field, problem);
    }

    // What a node is, for "expected X, got Y" messages.
    static std::string kind(const YAML::Node& n) {
        switch (n.Type()) {
            case YAML::NodeType::Null:
                return "nothing (null)";
            case YAML::NodeType::Scalar:
                return fmt::format("the scalar '{}'", n.Scalar());
            case YAML::NodeType::Sequence:
                return "a list";
            case YAML::NodeType::Map:
                return "a mapping";
            case YAML::NodeType::Undefined:
            default:
                return "nothing";
        }
    }

    YAML::Node required(const YAML::Node& map, const char* key, std::string_view prefix = "") const {
        YAML::Node n = map[key];
        if (!n) {
            if (prefix.empty()) {
                fail(ErrorCategory::BadDescriptor, "{}: field '{}': required field is missing",
                     source_, key);
            }
            bad(map, fmt::format("{}{}", prefix, key), "required field is missing");
        }
        return n;
    }

    std::string scalar(const YAML::Node& n, std::string_view field) const {
        if (!n.IsScalar()) bad(n, field, fmt::format("expected a string, got {}", kind(n)));
        return n.Scalar();
    }

    // Decimal or 0x-prefixed hexadecimal.
    uint64_t u64(const YAML::Node& n, std::string_view field) const {
        if (!n.IsScalar()) {
            bad(n, field, fmt::format("expected an unsigned integer, got {}", kind(n)));
        }
        std::string_view s = n.Scalar();
        int base = 10;
        if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            s.remove_prefix(2);
            base = 16;
        }
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
        if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
            bad(n, field, fmt::format("expected an unsigned integer, got {}", kind(n)));
        }
        return v;
    }

    // A closed mapping: every key must be one of `known`; an unknown one is refused by name.
    void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> known,
                    std::string_view field) const {
        for (const auto& kv : map) {
            const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : kind(kv.first);
            bool found = false;
            for (std::string_view k : known) found = found || k == key;
            if (found) continue;
            std::string list;
            for (std::string_view k : known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
            bad(kv.first, field, fmt::format("unknown key '{}' (known: {})", key, list));
        }
    }

    uint32_t u32(const YAML::Node& n, std::string_view field) const {
        const uint64_t v = u64(n, field);
        if (v > UINT32_MAX) bad(n, field, fmt::format("{} does not fit in 32 bits", v));
        return static_cast<uint32_t>(v);
    }

    std::string source_;
};

}  // namespace fabric
