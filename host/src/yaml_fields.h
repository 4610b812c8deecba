// YAML for the descriptor parsers: load_yaml (text checks, shape checks, then yaml-cpp) and typed
// field reads (YamlFields) where every failure is an Error(BadDescriptor) naming the file, the line
// and the field.
#pragma once

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "fabric/error.h"
#include "fabric/input_file.h"
#include "fmt/format.h"

namespace fabric {

// Deeper nesting than any descriptor format needs (the deepest, a cluster's boards, is 4 levels):
// refused before yaml-cpp's own recursion (2000 levels) can take the stack.
inline constexpr uint32_t kMaxYamlDepth = 32;

// Long values are cut to this many bytes in messages.
inline constexpr size_t kMaxQuotedBytes = 60;

// 'text' for a message, cut to kMaxQuotedBytes with "..." (a message stays one readable line).
std::string quoted(std::string_view text);

// Parse YAML text of one input kind (yaml_fields.cpp): check_text, then a pass over the parser's
// events, then the tree. Error(BadDescriptor) naming source and line for malformed YAML and for
// what yaml-cpp accepts silently but a descriptor must not have: a duplicate key (yaml-cpp keeps
// both; the message gives both lines), a second document (yaml-cpp's Load drops it, and with it
// any text after the end of the first), nesting deeper than kMaxYamlDepth, more nodes than the
// input kind allows.
YAML::Node load_yaml(std::string_view text, const std::string& source, const InputKind& kind);

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
                return fmt::format("the scalar {}", quoted(n.Scalar()));
            case YAML::NodeType::Sequence:
                return "a list";
            case YAML::NodeType::Map:
                return "a mapping";
            case YAML::NodeType::Undefined:
            default:
                return "nothing";
        }
    }

    YAML::Node required(const YAML::Node& map, const char* key,
                        std::string_view prefix = "") const {
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
            for (std::string_view k : known)
                list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
            bad(kv.first, field, fmt::format("unknown key {} (known: {})", quoted(key), list));
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
