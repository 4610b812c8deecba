#include "fabric/mesh_graph.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "fabric/cluster_descriptor.h"
#include "fabric/error.h"
#include "fabric/soc_descriptor.h"
#include "mesh_graph_internal.h"
#include "yaml_fields.h"

namespace fabric {

char dir_letter(MeshDir d) {
    switch (d) {
        case MeshDir::N:
            return 'N';
        case MeshDir::E:
            return 'E';
        case MeshDir::S:
            return 'S';
        case MeshDir::W:
            return 'W';
        default:
            return '?';
    }
}

std::optional<MeshDir> parse_mesh_dir(char c) {
    switch (c) {
        case 'N':
        case 'n':
            return MeshDir::N;
        case 'E':
        case 'e':
            return MeshDir::E;
        case 'S':
        case 's':
            return MeshDir::S;
        case 'W':
        case 'w':
            return MeshDir::W;
        default:
            return std::nullopt;
    }
}

MeshDir opposite(MeshDir d) {
    switch (d) {
        case MeshDir::N:
            return MeshDir::S;
        case MeshDir::S:
            return MeshDir::N;
        case MeshDir::E:
            return MeshDir::W;
        case MeshDir::W:
            return MeshDir::E;
        default:
            fail(ErrorCategory::Internal, "opposite: bad direction {}", static_cast<int>(d));
    }
}

std::string MeshNode::str() const {
    return fmt::format("M{}D{}", mesh, device);
}

namespace {

std::optional<uint32_t> parse_u32(std::string_view s) {
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

}  // namespace

std::optional<MeshNode> parse_mesh_node(std::string_view text) {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const auto m = parse_u32(text.substr(0, colon));
    const auto d = parse_u32(text.substr(colon + 1));
    if (!m || !d) return std::nullopt;
    return MeshNode{*m, *d};
}

std::string MeshPort::str() const {
    return fmt::format("{} {} plane {}", node.str(), dir_letter(dir), plane);
}

namespace {

// Channel blocks in the order N, S, E, W (as in galaxy_8x4_cluster.yaml).
constexpr std::array<MeshDir, 4> kChannelBlocks{MeshDir::N, MeshDir::S, MeshDir::E, MeshDir::W};

uint32_t channel_block(MeshDir d) {
    switch (d) {
        case MeshDir::N:
            return 0;
        case MeshDir::S:
            return 1;
        case MeshDir::E:
            return 2;
        case MeshDir::W:
            return 3;
        default:
            fail(ErrorCategory::Internal, "channel_block: bad direction {}", static_cast<int>(d));
    }
}

}  // namespace

std::optional<uint32_t> ChipSpec::eth_channel(MeshDir dir, uint32_t plane) const {
    if (plane >= ports_per_direction) return std::nullopt;
    return channel_block(dir) * ports_per_direction + plane;
}

std::optional<std::pair<MeshDir, uint32_t>> ChipSpec::channel_port(uint32_t channel) const {
    if (ports_per_direction == 0 || channel >= 4 * ports_per_direction) return std::nullopt;
    return std::pair{kChannelBlocks[channel / ports_per_direction], channel % ports_per_direction};
}

std::optional<MeshDeviceId> MeshSpec::neighbor(MeshDeviceId d, MeshDir dir) const {
    const uint32_t r = row_of(d), c = col_of(d);
    switch (dir) {
        case MeshDir::N:
            return r == 0 ? std::nullopt : std::optional<MeshDeviceId>(d - cols);
        case MeshDir::S:
            return r + 1 == rows ? std::nullopt : std::optional<MeshDeviceId>(d + cols);
        case MeshDir::E:
            return c + 1 == cols ? std::nullopt : std::optional<MeshDeviceId>(d + 1);
        case MeshDir::W:
            return c == 0 ? std::nullopt : std::optional<MeshDeviceId>(d - 1);
        default:
            return std::nullopt;
    }
}

std::vector<MeshDeviceId> MeshSpec::edge_devices(MeshDir dir) const {
    std::vector<MeshDeviceId> out;
    switch (dir) {
        case MeshDir::N:
            for (uint32_t c = 0; c < cols; ++c) out.push_back(c);
            break;
        case MeshDir::S:
            for (uint32_t c = 0; c < cols; ++c) out.push_back((rows - 1) * cols + c);
            break;
        case MeshDir::E:
            for (uint32_t r = 0; r < rows; ++r) out.push_back(r * cols + cols - 1);
            break;
        case MeshDir::W:
            for (uint32_t r = 0; r < rows; ++r) out.push_back(r * cols);
            break;
        default:
            break;
    }
    return out;
}

uint32_t MeshSpec::host_rank_of(MeshDeviceId d) const {
    const uint32_t board_rows = rows / host_rows, board_cols = cols / host_cols;
    return host_ranks.at(row_of(d) / board_rows).at(col_of(d) / board_cols);
}

const MeshSpec& MeshGraph::mesh(MeshId id) const {
    if (id >= meshes_.size()) {
        fail(ErrorCategory::BadInput, "unknown mesh {} ({} has meshes 0..{})", id, source_,
             meshes_.size() - 1);
    }
    return meshes_[id];
}

bool MeshGraph::contains(MeshNode n) const {
    return n.mesh < meshes_.size() && n.device < meshes_[n.mesh].device_count();
}

void MeshGraph::check_node(MeshNode n) const {
    const MeshSpec& m = mesh(n.mesh);
    if (n.device >= m.device_count()) {
        fail(ErrorCategory::BadInput, "unknown device {} in mesh {} (devices 0..{})", n.device,
             n.mesh, m.device_count() - 1);
    }
}

std::string_view policy_name(ChannelPolicy p) {
    switch (p) {
        case ChannelPolicy::Strict:
            return "STRICT";
        case ChannelPolicy::Relaxed:
            return "RELAXED";
        default:
            return "?";
    }
}

uint32_t MeshGraph::device_count() const {
    uint32_t n = 0;
    for (const MeshSpec& m : meshes_) n += m.device_count();
    return n;
}

namespace detail {

std::optional<std::string> mesh_size_problem(uint64_t rows, uint64_t cols) {
    uint64_t devices = 0;
    if (__builtin_mul_overflow(rows, cols, &devices)) {
        return fmt::format("{}x{} devices; a mesh has at most {} devices", rows, cols,
                           kMaxMeshDevices);
    }
    if (devices <= kMaxMeshDevices) return std::nullopt;
    return fmt::format("{}x{} = {} devices; a mesh has at most {} devices", rows, cols, devices,
                       kMaxMeshDevices);
}

std::vector<std::vector<uint32_t>> row_major_host_ranks(uint32_t rows, uint32_t cols) {
    std::vector<std::vector<uint32_t>> ranks(rows, std::vector<uint32_t>(cols));
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) ranks[r][c] = r * cols + c;
    }
    return ranks;
}

std::optional<std::string> InterMeshLinkChecker::port_problem(const MeshPort& port) const {
    if (!graph_.contains(port.node)) return fmt::format("{} does not exist", port.node.str());
    const std::vector<MeshDeviceId> edge = graph_.mesh(port.node.mesh).edge_devices(port.dir);
    if (std::find(edge.begin(), edge.end(), port.node.device) == edge.end()) {
        return fmt::format("{} is not on the {} edge of mesh {}", port.node.str(),
                           dir_letter(port.dir), port.node.mesh);
    }
    const uint32_t planes = graph_.chip_spec().ports_per_direction;
    if (port.plane >= planes) {
        return fmt::format("{}: plane {} does not exist ({} ports per direction)", port.str(),
                           port.plane, planes);
    }
    return std::nullopt;
}

std::optional<LinkProblem> InterMeshLinkChecker::use(
    std::map<MeshPort, std::pair<MeshPort, std::string>>& used, int end, const MeshPort& port,
    const MeshPort& peer, const std::string& name, const char* verb) const {
    const auto [it, inserted] = used.emplace(port, std::pair{peer, name});
    if (inserted) return std::nullopt;
    if (it->second.first != peer) {
        return LinkProblem{end, fmt::format("{} already {} {} ({})", port.str(), verb,
                                            it->second.first.str(), it->second.second)};
    }
    return LinkProblem{std::nullopt, fmt::format("duplicate of {}", it->second.second)};
}

std::optional<LinkProblem> InterMeshLinkChecker::add(const InterMeshLink& link,
                                                     const std::string& name) {
    if (link.from.node.mesh == link.to.node.mesh) {
        return LinkProblem{std::nullopt,
                           fmt::format("connects mesh {} to itself: Graph holds inter-mesh "
                                       "connections only",
                                       link.from.node.mesh)};
    }
    if (auto p = use(sends_, 0, link.from, link.to, name, "sends to")) return p;
    if (auto p = use(receives_, 1, link.to, link.from, name, "receives from")) return p;
    // The reverse direction of a cable must use the same two ports.
    if (const auto it = receives_.find(link.from);
        it != receives_.end() && it->second.first != link.to) {
        return LinkProblem{1,
                           fmt::format("{} is cabled to {} ({}), not to {}", link.from.str(),
                                       it->second.first.str(), it->second.second, link.to.str())};
    }
    if (const auto it = sends_.find(link.to); it != sends_.end() && it->second.first != link.from) {
        return LinkProblem{0,
                           fmt::format("{} is cabled to {} ({}), not to {}", link.to.str(),
                                       it->second.first.str(), it->second.second, link.from.str())};
    }
    return std::nullopt;
}

}  // namespace detail

namespace {

// tt-metal's board types and the dimensions in which they wrap (columns: E/W, rows: N/S).
struct BoardType {
    std::string_view name;
    bool ring_ns;
    bool ring_ew;
};
constexpr std::array<BoardType, 5> kBoardTypes{{{"Mesh", false, false},
                                                {"TORUS_X", false, true},
                                                {"TORUS_Y", true, false},
                                                {"TORUS_XY", true, true},
                                                {"TORUS_2D", true, true}}};

bool same_ignoring_case(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) ==
               std::tolower(static_cast<unsigned char>(y));
    });
}

}  // namespace

class MeshGraphParser : YamlFields {
  public:
    explicit MeshGraphParser(const std::string& source) : YamlFields(source) {}

    MeshGraph parse(const YAML::Node& root) {
        if (!root.IsMap()) {
            bad(root, "",
                fmt::format("the document must be a mapping of fields, got {}", kind(root)));
        }
        // The sections first: a file of another kind (a cluster descriptor) is told by what it
        // lacks before the keys it has.
        for (const char* section : {"ChipSpec", "Board", "Mesh"}) required(root, section);
        check_keys(root, {"ChipSpec", "Board", "Mesh", "Graph", "RelaxedGraph"}, "");
        g_.source_ = source_;
        g_.form_ = DescriptorForm::Yaml;
        chip_spec(required(root, "ChipSpec"));
        boards(required(root, "Board"));
        meshes(required(root, "Mesh"));
        if (const YAML::Node graph = root["Graph"]) {
            g_.graph_line_ = static_cast<uint32_t>(graph.Mark().line + 1);
            connections(graph);
        }
        if (const YAML::Node relaxed = root["RelaxedGraph"]) relaxed_connections(relaxed);
        return std::move(g_);
    }

  private:
    // One Board entry and the rings of its type.
    struct Board {
        BoardSpec spec;
        bool ring_ns = false;
        bool ring_ew = false;
    };

    // A count or id: an unsigned integer; a negative number gets its own message.
    uint32_t number(const YAML::Node& n, std::string_view field) const {
        if (n.IsScalar() && !n.Scalar().empty() && n.Scalar()[0] == '-') {
            bad(n, field, fmt::format("must not be negative, got {}", n.Scalar()));
        }
        return u32(n, field);
    }

    // [rows, cols], both >= 1.
    std::pair<uint32_t, uint32_t> shape(const YAML::Node& n, const std::string& field) const {
        if (!n.IsSequence() || n.size() != 2) {
            bad(n, field,
                fmt::format("expected [rows, cols], got {}",
                            n.IsSequence() ? fmt::format("a list of {}", n.size()) : kind(n)));
        }
        const uint32_t r = number(n[0], field + "[0]");
        const uint32_t c = number(n[1], field + "[1]");
        if (r == 0 || c == 0) bad(n, field, fmt::format("[{}, {}] has no devices", r, c));
        return {r, c};
    }

    void chip_spec(const YAML::Node& n) {
        if (!n.IsMap()) bad(n, "ChipSpec", fmt::format("expected a mapping, got {}", kind(n)));
        check_keys(n, {"arch", "ethernet_ports"}, "ChipSpec");
        const YAML::Node arch = required(n, "arch", "ChipSpec.");
        const auto a = parse_arch(scalar(arch, "ChipSpec.arch"));
        if (!a) {
            bad(arch, "ChipSpec.arch",
                fmt::format("unknown arch '{}' (known: wormhole_b0, blackhole)", arch.Scalar()));
        }
        g_.chip_.arch = *a;
        const YAML::Node ports = required(n, "ethernet_ports", "ChipSpec.");
        if (!ports.IsMap()) {
            bad(ports, "ChipSpec.ethernet_ports",
                fmt::format("expected {{N: n, E: n, S: n, W: n}}, got {}", kind(ports)));
        }
        check_keys(ports, {"N", "E", "S", "W", "Z"}, "ChipSpec.ethernet_ports");
        std::optional<uint32_t> per_dir;
        char first = 'N';
        for (MeshDir d : kMeshDirs) {
            const char key[2] = {dir_letter(d), '\0'};
            const YAML::Node p = required(ports, key, "ChipSpec.ethernet_ports.");
            const std::string field = fmt::format("ChipSpec.ethernet_ports.{}", key);
            const uint32_t v = number(p, field);
            if (per_dir && v != *per_dir) {
                bad(p, field,
                    fmt::format("{} ports but {} has {}: every direction needs the same number "
                                "of ports (one per routing plane)",
                                v, first, *per_dir));
            }
            per_dir = v;
        }
        g_.chip_.ports_per_direction = *per_dir;
        if (const YAML::Node z = ports["Z"])
            g_.chip_.z_ports = number(z, "ChipSpec.ethernet_ports.Z");
    }

    void boards(const YAML::Node& n) {
        if (!n.IsSequence() || n.size() == 0) {
            bad(n, "Board", fmt::format("expected a list of boards, got {}", kind(n)));
        }
        std::map<std::string, size_t> seen;
        for (size_t i = 0; i < n.size(); ++i) {
            const YAML::Node b = n[i];
            const std::string field = fmt::format("Board[{}]", i);
            if (!b.IsMap()) bad(b, field, fmt::format("expected a mapping, got {}", kind(b)));
            check_keys(b, {"name", "type", "topology"}, field);
            Board board;
            const YAML::Node name = required(b, "name", field + ".");
            board.spec.name = scalar(name, field + ".name");
            if (const auto [it, inserted] = seen.emplace(board.spec.name, i); !inserted) {
                bad(name, field + ".name",
                    fmt::format("board '{}' is already defined by Board[{}]", board.spec.name,
                                it->second));
            }
            board_type(required(b, "type", field + "."), field + ".type", board);
            std::tie(board.spec.rows, board.spec.cols) =
                shape(required(b, "topology", field + "."), field + ".topology");
            g_.boards_.push_back(board.spec);
            boards_.push_back(board);
        }
    }

    void board_type(const YAML::Node& n, const std::string& field, Board& board) const {
        const std::string t = scalar(n, field);
        for (const BoardType& known : kBoardTypes) {
            if (same_ignoring_case(t, known.name)) {
                board.ring_ns = known.ring_ns;
                board.ring_ew = known.ring_ew;
                return;
            }
        }
        bad(n, field,
            fmt::format("board type '{}' is not supported (known: Mesh, TORUS_X, TORUS_Y, "
                        "TORUS_XY, TORUS_2D)",
                        t));
    }

    const Board& board(const YAML::Node& n, const std::string& field) const {
        const std::string name = scalar(n, field);
        for (const Board& b : boards_) {
            if (b.spec.name == name) return b;
        }
        std::string known;
        for (const Board& b : boards_) known += (known.empty() ? "" : ", ") + b.spec.name;
        bad(n, field, fmt::format("unknown board '{}' (boards: {})", name, known));
    }

    void meshes(const YAML::Node& n) {
        if (!n.IsSequence() || n.size() == 0) {
            bad(n, "Mesh", fmt::format("expected a list of meshes, got {}", kind(n)));
        }
        if (n.size() > kMaxMeshes) {
            bad(n, "Mesh", fmt::format("{} meshes; at most {}", n.size(), kMaxMeshes));
        }
        std::map<MeshId, std::pair<MeshSpec, YAML::Node>> by_id;
        for (size_t i = 0; i < n.size(); ++i) {
            const YAML::Node m = n[i];
            const std::string field = fmt::format("Mesh[{}]", i);
            MeshSpec spec = mesh(m, field);
            const YAML::Node id = m["id"];
            const auto [it, inserted] = by_id.emplace(spec.id, std::pair{spec, id});
            if (!inserted) {
                bad(id, field + ".id",
                    fmt::format("mesh {} is already defined (line {})", spec.id,
                                it->second.second.Mark().line + 1));
            }
        }
        MeshId expect = 0;
        for (const auto& [id, entry] : by_id) {
            if (id != expect) {
                bad(entry.second, "Mesh",
                    fmt::format("mesh ids must be 0..{} without gaps; mesh {} is missing",
                                by_id.size() - 1, expect));
            }
            g_.meshes_.push_back(entry.first);
            ++expect;
        }
    }

    MeshSpec mesh(const YAML::Node& m, const std::string& field) const {
        if (!m.IsMap()) bad(m, field, fmt::format("expected a mapping, got {}", kind(m)));
        check_keys(m,
                   {"id", "board", "device_topology", "host_topology", "topology", "host_ranks",
                    "host_mapping"},
                   field);
        MeshSpec spec;
        spec.id = number(required(m, "id", field + "."), field + ".id");
        const Board& b = board(required(m, "board", field + "."), field + ".board");
        spec.board = b.spec.name;
        spec.ring_ns = b.ring_ns;
        spec.ring_ew = b.ring_ew;
        spec.channels = g_.chip_.ports_per_direction;
        // ethernet_ports is the most planes: a pair with fewer links runs fewer (tt-metal's older
        // control plane took the fewest links along a row or column).
        spec.policy = ChannelPolicy::Relaxed;
        topologies(m, field, b.spec, spec);
        if (spec.device_count() > 1 && g_.chip_.ports_per_direction == 0) {
            bad(m, field,
                fmt::format("{}x{} devices need Ethernet ports between them, but "
                            "ChipSpec.ethernet_ports is 0 per direction",
                            spec.rows, spec.cols));
        }
        host_ranks(m, field, spec);
        return spec;
    }

    // device_topology and host_topology (or the older `topology`): sets rows/cols and
    // host_rows/host_cols, checking the size in 64 bits before anything is multiplied in 32.
    void topologies(const YAML::Node& m, const std::string& field, const BoardSpec& b,
                    MeshSpec& spec) const {
        const YAML::Node dev = m["device_topology"];
        const YAML::Node host = m["host_topology"];
        const YAML::Node legacy = m["topology"];
        if (legacy && (dev || host)) {
            bad(legacy, field + ".topology",
                "the older key 'topology' cannot be combined with device_topology or "
                "host_topology");
        }
        if (host) std::tie(spec.host_rows, spec.host_cols) = shape(host, field + ".host_topology");
        std::optional<std::pair<uint32_t, uint32_t>> device;
        if (dev) device = shape(dev, field + ".device_topology");
        if (legacy) {
            const auto t = shape(legacy, field + ".topology");
            if (const auto hosts = hosts_if_legacy_topology_is_device(m, b, t)) {
                device = t;
                std::tie(spec.host_rows, spec.host_cols) = *hosts;
            } else {
                std::tie(spec.host_rows, spec.host_cols) = t;
            }
        }
        const uint64_t want_rows = uint64_t{spec.host_rows} * b.rows;
        const uint64_t want_cols = uint64_t{spec.host_cols} * b.cols;
        if (device && (device->first != want_rows || device->second != want_cols)) {
            const YAML::Node at = dev ? dev : legacy;
            bad(at, field + (dev ? ".device_topology" : ".topology"),
                fmt::format("[{}, {}] does not match the host topology [{}, {}] of "
                            "board '{}' [{}, {}] (that is [{}, {}] devices)",
                            device->first, device->second, spec.host_rows, spec.host_cols, b.name,
                            b.rows, b.cols, want_rows, want_cols));
        }
        if (const auto problem = detail::mesh_size_problem(want_rows, want_cols)) {
            bad(m, field, *problem);
        }
        spec.rows = static_cast<uint32_t>(want_rows);
        spec.cols = static_cast<uint32_t>(want_cols);
    }

    // tt-metal's first files give `topology` as the host topology ([1, 1]), later ones as the
    // device topology (`topology: [8, 4]` on an 8x4 board, one host): host_ranks tells them apart.
    // The host topology (host_ranks' shape) when `topology` is the device topology.
    std::optional<std::pair<uint32_t, uint32_t>> hosts_if_legacy_topology_is_device(
        const YAML::Node& m, const BoardSpec& b, std::pair<uint32_t, uint32_t> t) const {
        const YAML::Node ranks = m["host_ranks"];
        if (!ranks || !ranks.IsSequence() || ranks.size() == 0 || !ranks[0].IsSequence() ||
            ranks[0].size() == 0) {
            return std::nullopt;
        }
        const uint64_t host_rows = ranks.size(), host_cols = ranks[0].size();
        if (t.first == host_rows && t.second == host_cols) return std::nullopt;
        if (t.first != host_rows * b.rows || t.second != host_cols * b.cols) return std::nullopt;
        return std::pair{static_cast<uint32_t>(host_rows), static_cast<uint32_t>(host_cols)};
    }

    void host_ranks(const YAML::Node& m, const std::string& field, MeshSpec& spec) const {
        const YAML::Node n = m["host_ranks"];
        if (!n) {
            spec.host_ranks.assign(spec.host_rows, std::vector<uint32_t>(spec.host_cols, 0));
            return;
        }
        const std::string f = field + ".host_ranks";
        if (!n.IsSequence() || n.size() != spec.host_rows) {
            bad(n, f,
                fmt::format("expected {} row(s) of ranks (the host topology is [{}, {}]), got {}",
                            spec.host_rows, spec.host_rows, spec.host_cols,
                            n.IsSequence() ? fmt::format("{} row(s)", n.size()) : kind(n)));
        }
        for (size_t r = 0; r < n.size(); ++r) {
            const std::string rf = fmt::format("{}[{}]", f, r);
            if (!n[r].IsSequence() || n[r].size() != spec.host_cols) {
                bad(n[r], rf,
                    fmt::format("expected {} rank(s) (the host topology is [{}, {}]), got {}",
                                spec.host_cols, spec.host_rows, spec.host_cols,
                                n[r].IsSequence() ? fmt::format("{}", n[r].size()) : kind(n[r])));
            }
            std::vector<uint32_t> row;
            for (size_t c = 0; c < n[r].size(); ++c) {
                row.push_back(number(n[r][c], fmt::format("{}[{}]", rf, c)));
            }
            spec.host_ranks.push_back(std::move(row));
        }
    }

    // One end of a connection: [mesh, "<Dir><edge port>"] or [mesh, device, "<Dir><plane>"].
    MeshPort port(const YAML::Node& n, const std::string& field) const {
        if (!n.IsSequence() || (n.size() != 2 && n.size() != 3)) {
            bad(n, field,
                fmt::format("expected [mesh, <Dir><port>] or [mesh, device, <Dir><plane>], got {}",
                            n.IsSequence() ? fmt::format("a list of {}", n.size()) : kind(n)));
        }
        const YAML::Node mesh_node = n[0];
        const MeshId mesh_id = number(mesh_node, field + "[0]");
        if (mesh_id >= g_.meshes_.size()) {
            bad(mesh_node, field + "[0]",
                fmt::format("unknown mesh {} (meshes 0..{})", mesh_id, g_.meshes_.size() - 1));
        }
        const MeshSpec& mesh = g_.meshes_[mesh_id];
        const YAML::Node pn = n[n.size() - 1];
        const std::string pfield = fmt::format("{}[{}]", field, n.size() - 1);
        const std::string p = scalar(pn, pfield);
        const auto dir = p.empty() ? std::nullopt : parse_mesh_dir(p[0]);
        const auto index = p.size() < 2 ? std::nullopt : parse_u32(std::string_view(p).substr(1));
        if (!dir || !index) {
            bad(pn, pfield,
                fmt::format("expected a port like E0 (direction N/E/S/W and an index), got '{}'",
                            p));
        }
        const uint32_t ports = g_.chip_.ports_per_direction;
        if (ports == 0) {
            bad(pn, pfield,
                fmt::format("mesh {} has no port {}: ChipSpec.ethernet_ports is 0 per direction",
                            mesh_id, p));
        }
        const std::vector<MeshDeviceId> edge = mesh.edge_devices(*dir);
        MeshPort out;
        out.node.mesh = mesh_id;
        out.dir = *dir;
        if (n.size() == 2) {
            if (*index >= edge.size() * ports) {
                bad(pn, pfield,
                    fmt::format("mesh {} ({}x{}, {} ports per direction) has no port {}: its {} "
                                "edge has ports {}0..{}{}",
                                mesh_id, mesh.rows, mesh.cols, ports, p, dir_letter(*dir),
                                dir_letter(*dir), dir_letter(*dir), edge.size() * ports - 1));
            }
            out.node.device = edge[*index / ports];
            out.plane = *index % ports;
        } else {
            const YAML::Node dn = n[1];
            out.node.device = number(dn, field + "[1]");
            if (out.node.device >= mesh.device_count()) {
                bad(dn, field + "[1]",
                    fmt::format("unknown device {} in mesh {} (devices 0..{})", out.node.device,
                                mesh_id, mesh.device_count() - 1));
            }
            if (std::find(edge.begin(), edge.end(), out.node.device) == edge.end()) {
                bad(dn, field + "[1]",
                    fmt::format("device {} of mesh {} is not on the {} edge, so its {} ports "
                                "connect inside the mesh",
                                out.node.device, mesh_id, dir_letter(*dir), dir_letter(*dir)));
            }
            if (*index >= ports) {
                bad(pn, pfield,
                    fmt::format("plane {} does not exist: {} ports per direction (planes 0..{})",
                                *index, ports, ports - 1));
            }
            out.plane = *index;
        }
        return out;
    }

    void connections(const YAML::Node& list) {
        if (list.IsNull()) return;
        if (!list.IsSequence()) {
            bad(list, "Graph", fmt::format("expected a list of connections, got {}", kind(list)));
        }
        detail::InterMeshLinkChecker checker(g_);
        for (size_t i = 0; i < list.size(); ++i) {
            const YAML::Node c = list[i];
            const std::string field = fmt::format("Graph[{}]", i);
            if (!c.IsSequence() || c.size() != 2) {
                bad(c, field,
                    fmt::format("expected [from port, to port], got {}",
                                c.IsSequence() ? fmt::format("a list of {}", c.size()) : kind(c)));
            }
            InterMeshLink link;
            link.from = port(c[0], field + "[0]");
            link.to = port(c[1], field + "[1]");
            link.line = static_cast<uint32_t>(c.Mark().line + 1);
            if (const auto problem = checker.add(link, field)) {
                if (!problem->end) bad(c, field, problem->message);
                const int end = *problem->end;
                bad(c[end], fmt::format("{}[{}]", field, end), problem->message);
            }
            g_.links_.push_back(link);
        }
    }

    // [[M0, M1, 8], ...]: two meshes and the number of links the mapping must find between them.
    void relaxed_connections(const YAML::Node& list) {
        if (list.IsNull()) return;
        if (!list.IsSequence()) {
            bad(list, "RelaxedGraph",
                fmt::format("expected a list of [M<a>, M<b>, channels], got {}", kind(list)));
        }
        for (size_t i = 0; i < list.size(); ++i) {
            const YAML::Node c = list[i];
            const std::string field = fmt::format("RelaxedGraph[{}]", i);
            if (!c.IsSequence() || c.size() != 3) {
                bad(c, field,
                    fmt::format("expected [M<a>, M<b>, channels], got {}",
                                c.IsSequence() ? fmt::format("a list of {}", c.size()) : kind(c)));
            }
            MeshConnection mc;
            mc.a = relaxed_mesh(c[0], field + "[0]");
            mc.b = relaxed_mesh(c[1], field + "[1]");
            if (mc.a == mc.b) bad(c, field, fmt::format("connects mesh {} to itself", mc.a));
            mc.channels = number(c[2], field + "[2]");
            if (mc.channels == 0) bad(c[2], field + "[2]", "a connection needs at least 1 channel");
            mc.policy = ChannelPolicy::Relaxed;
            mc.line = static_cast<uint32_t>(c.Mark().line + 1);
            g_.mesh_connections_.push_back(mc);
        }
    }

    // "M3" or 3: a mesh of this descriptor.
    MeshId relaxed_mesh(const YAML::Node& n, const std::string& field) const {
        const std::string text = scalar(n, field);
        const std::string_view digits = !text.empty() && (text[0] == 'M' || text[0] == 'm')
                                            ? std::string_view(text).substr(1)
                                            : std::string_view(text);
        const auto id = parse_u32(digits);
        if (!id) bad(n, field, fmt::format("expected a mesh like M0, got '{}'", text));
        if (*id >= g_.meshes_.size()) {
            bad(n, field,
                fmt::format("unknown mesh {} (meshes 0..{})", *id, g_.meshes_.size() - 1));
        }
        return *id;
    }

    MeshGraph g_;
    std::vector<Board> boards_;
};

MeshGraph MeshGraph::parse_yaml(std::string_view yaml_text, const std::string& source) {
    const YAML::Node root = load_yaml(yaml_text, source, kMeshGraphInput);
    try {
        return MeshGraphParser(source).parse(root);
    } catch (const YAML::Exception& e) {  // defensive: yaml-cpp access errors
        fail(ErrorCategory::BadDescriptor, "{}: invalid mesh graph descriptor: {}", source, e.msg);
    }
}

namespace {

// The fields an MGD 2.0 file can start with.
constexpr std::array<std::string_view, 5> kMgdTopLevelFields{
    "mesh_descriptors", "graph_descriptors", "top_level_instance", "pinnings",
    "switch_descriptors"};

bool has_mgd_extension(std::string_view path) {
    for (std::string_view ext : {".textproto", ".txtpb", ".pbtxt"}) {
        if (path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext) return true;
    }
    return false;
}

// The first identifier of the text after blank lines and '#' comments.
std::string_view first_token(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '#') {
            const size_t eol = text.find('\n', i);
            i = eol == std::string_view::npos ? text.size() : eol + 1;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
        } else {
            break;
        }
    }
    size_t end = i;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
        ++end;
    }
    return text.substr(i, end - i);
}

}  // namespace

DescriptorForm MeshGraph::detect_form(std::string_view text) {
    const std::string_view token = first_token(text);
    for (std::string_view field : kMgdTopLevelFields) {
        if (token == field) return DescriptorForm::TextProto;
    }
    return DescriptorForm::Yaml;
}

MeshGraph MeshGraph::parse(std::string_view text, const std::string& source) {
    if (detect_form(text) == DescriptorForm::TextProto) return parse_textproto(text, source);
    return parse_yaml(text, source);
}

MeshGraph MeshGraph::load_file(const std::string& path) {
    const std::string text = read_text_file(path, kMeshGraphInput);
    if (has_mgd_extension(path)) return parse_textproto(text, path);
    return parse(text, path);
}

namespace {

using LinksByPair = std::map<std::pair<MeshId, MeshId>, std::vector<const InterMeshLink*>>;

void check_direction_realized(const MeshGraph& graph, const MeshConnection& c, MeshId from,
                              std::optional<MeshDeviceId> from_device, MeshId to,
                              std::optional<MeshDeviceId> to_device, const LinksByPair& by_pair) {
    uint32_t found = 0;
    if (const auto it = by_pair.find({from, to}); it != by_pair.end()) {
        for (const InterMeshLink* l : it->second) {
            const bool on_devices = (!from_device || l->from.node.device == *from_device) &&
                                    (!to_device || l->to.node.device == *to_device);
            if (on_devices) ++found;
        }
    }
    const uint32_t need = c.policy == ChannelPolicy::Strict ? c.channels : 1;
    if (found < need) {
        fail(ErrorCategory::Internal,
             "{}:{}: the connection of mesh {} and mesh {} ({} channels, {}) has {} resolved "
             "link(s) from mesh {} to mesh {}",
             graph.source(), c.line, c.a, c.b, c.channels, policy_name(c.policy), found, from, to);
    }
}

// Every MeshConnection of `graph` has its links in `chosen` (at least `channels` of them in each
// direction it carries traffic when STRICT, at least one when RELAXED, on its devices when the
// descriptor names them), and no chosen link joins meshes that no connection joins.
void check_links_realize_connections(const MeshGraph& graph,
                                     const std::vector<InterMeshLink>& chosen) {
    LinksByPair by_pair;
    for (const InterMeshLink& l : chosen) {
        by_pair[{l.from.node.mesh, l.to.node.mesh}].push_back(&l);
    }
    std::set<std::pair<MeshId, MeshId>> connected;
    for (const MeshConnection& c : graph.mesh_connections()) {
        connected.insert({c.a, c.b});
        if (!c.directional) connected.insert({c.b, c.a});
        check_direction_realized(graph, c, c.a, c.device_a, c.b, c.device_b, by_pair);
        if (!c.directional) {
            check_direction_realized(graph, c, c.b, c.device_b, c.a, c.device_a, by_pair);
        }
    }
    for (const auto& [pair, links] : by_pair) {
        if (!connected.count(pair)) {
            fail(ErrorCategory::Internal,
                 "{}: resolved links {} -> {} join meshes {} and {}, which no connection joins",
                 graph.source(), links.front()->from.str(), links.front()->to.str(), pair.first,
                 pair.second);
        }
    }
}

}  // namespace

MeshGraph MeshGraph::as_torus() const {
    MeshGraph g = *this;
    for (MeshSpec& m : g.meshes_) m.ring_ns = m.ring_ew = true;
    return g;
}

MeshGraph MeshGraph::single_mesh(hal::Arch arch, uint32_t rows, uint32_t cols, uint32_t channels,
                                 ChannelPolicy policy, const std::string& source) {
    MeshGraph g;
    g.source_ = source;
    g.chip_.arch = arch;
    g.chip_.ports_per_direction = channels;
    g.boards_.push_back({"derived", rows, cols});
    MeshSpec m;
    m.board = "derived";
    m.rows = rows;
    m.cols = cols;
    m.host_ranks = {{0}};
    m.channels = channels;
    m.policy = policy;
    g.meshes_.push_back(m);
    return g;
}

MeshGraph MeshGraph::resolved(std::vector<InterMeshLink> links) const {
    MeshGraph out = *this;
    out.mesh_connections_.clear();
    detail::InterMeshLinkChecker checker(out);
    for (const InterMeshLink& l : links_) checker.add(l, fmt::format("line {}", l.line));
    for (size_t i = 0; i < links.size(); ++i) {
        const InterMeshLink& l = links[i];
        const std::string name = fmt::format("resolved link {}", i);
        std::optional<std::string> problem = checker.port_problem(l.from);
        if (!problem) problem = checker.port_problem(l.to);
        if (!problem) {
            if (const auto p = checker.add(l, name)) problem = p->message;
        }
        if (problem) {
            fail(ErrorCategory::Internal, "{}: {} ({} -> {}): {}", source_, name, l.from.str(),
                 l.to.str(), *problem);
        }
    }
    check_links_realize_connections(*this, links);
    out.links_.insert(out.links_.end(), links.begin(), links.end());
    return out;
}

}  // namespace fabric
