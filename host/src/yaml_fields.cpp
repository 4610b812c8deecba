#include "yaml_fields.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <unordered_map>
#include <vector>

namespace fabric {

std::string quoted(std::string_view text) {
    if (text.size() <= kMaxQuotedBytes) return fmt::format("'{}'", text);
    return fmt::format("'{}...'", text.substr(0, kMaxQuotedBytes));
}

namespace {

// A pass over the parser's events before the document tree is built: what yaml-cpp accepts
// silently but a descriptor must not have. Throws Error(BadDescriptor) naming source and line for
// a duplicate key (yaml-cpp keeps both), a second document (yaml-cpp's Load drops it, and with
// it any text after the end of the first), nesting deeper than kMaxYamlDepth, or more nodes than
// the input kind allows.
class YamlShapeCheck : public YAML::EventHandler {
  public:
    YamlShapeCheck(const std::string& source, const InputKind& kind)
        : source_(source), kind_(kind) {}

    void OnDocumentStart(const YAML::Mark& mark) override {
        if (++documents_ > 1) {
            fail(ErrorCategory::BadDescriptor,
                 "{}: text after the end of the document (a second YAML document); a {} is one "
                 "document",
                 where(mark), kind_.name);
        }
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { leaf(mark, nullptr); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { leaf(mark, nullptr); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  const std::string& value) override {
        leaf(mark, &value);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        open(mark, false);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
        open(mark, true);
    }
    void OnMapEnd() override { close(); }

  private:
    struct Frame {
        bool is_map = false;
        bool at_key = true;  // maps: the next node is a key
        size_t items = 0;    // sequences: items seen
        std::string path;    // "harvesting.0", "ethernet_connections[3]": for messages
        std::string key;     // maps: the key whose value comes next
        std::unordered_map<std::string, int> key_lines;
    };

    std::string where(const YAML::Mark& mark) const {
        return fmt::format("{}:{}:{}", source_, mark.line + 1, mark.column + 1);
    }

    // Counts the node, and for a map key checks it was not seen before in the same map.
    void node(const YAML::Mark& mark, const std::string* scalar_key) {
        if (++nodes_ > kind_.max_yaml_nodes) {
            fail(ErrorCategory::BadDescriptor, "{}: more than {} YAML nodes; a {} has at most {}",
                 where(mark), kind_.max_yaml_nodes, kind_.name, kind_.max_yaml_nodes);
        }
        if (frames_.empty() || !frames_.back().is_map || !frames_.back().at_key) return;
        Frame& map = frames_.back();
        map.key = scalar_key ? *scalar_key : "?";
        if (!scalar_key) return;
        const auto [it, inserted] = map.key_lines.emplace(*scalar_key, mark.line + 1);
        if (!inserted) {
            fail(ErrorCategory::BadDescriptor, "{}: duplicate key {}{} (lines {} and {})",
                 where(mark), quoted(*scalar_key),
                 map.path.empty() ? "" : fmt::format(" in {}", quoted(map.path)), it->second,
                 mark.line + 1);
        }
    }

    // A node is complete: the map it is in expects the other of key and value next.
    void done() {
        if (frames_.empty()) return;
        Frame& parent = frames_.back();
        if (parent.is_map) {
            parent.at_key = !parent.at_key;
        } else {
            ++parent.items;
        }
    }

    void leaf(const YAML::Mark& mark, const std::string* scalar) {
        node(mark, scalar);
        done();
    }

    std::string child_path() const {
        if (frames_.empty()) return "";
        const Frame& parent = frames_.back();
        if (!parent.is_map) return fmt::format("{}[{}]", parent.path, parent.items);
        if (parent.at_key) return parent.path;  // a collection used as a key
        return parent.path.empty() ? parent.key : fmt::format("{}.{}", parent.path, parent.key);
    }

    void open(const YAML::Mark& mark, bool is_map) {
        node(mark, nullptr);
        if (frames_.size() >= kMaxYamlDepth) {
            fail(ErrorCategory::BadDescriptor, "{}: YAML nested deeper than {} levels", where(mark),
                 kMaxYamlDepth);
        }
        Frame f;
        f.is_map = is_map;
        f.path = child_path();
        frames_.push_back(std::move(f));
    }

    void close() {
        frames_.pop_back();
        done();
    }

    const std::string& source_;
    const InputKind& kind_;
    uint32_t documents_ = 0;
    uint32_t nodes_ = 0;
    std::vector<Frame> frames_;
};

}  // namespace

YAML::Node load_yaml(std::string_view text, const std::string& source, const InputKind& kind) {
    check_text(text, source);
    const std::string owned(text);
    try {
        std::istringstream in(owned);
        YAML::Parser parser(in);
        YamlShapeCheck check(source, kind);
        while (parser.HandleNextDocument(check)) {
        }
        return YAML::Load(owned);
    } catch (const YAML::ParserException& e) {
        fail(ErrorCategory::BadDescriptor, "{}:{}:{}: malformed YAML: {}", source, e.mark.line + 1,
             e.mark.column + 1, e.msg);
    } catch (const YAML::Exception& e) {
        fail(ErrorCategory::BadDescriptor, "{}: malformed YAML: {}", source, e.msg);
    }
}

}  // namespace fabric
