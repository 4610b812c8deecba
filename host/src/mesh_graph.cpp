#include "fabric/mesh_graph.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "fabric/cluster_descriptor.h"
#include "fabric/error.h"
#include "fabric/soc_descriptor.h"
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

class MeshGraphParser : YamlFields {
  public:
    explicit MeshGraphParser(const std::string& source) : YamlFields(source) {}

    MeshGraph parse(const YAML::Node& root) {
        if (!root.IsMap()) {
            bad(root, "",
                fmt::format("the document must be a mapping of fields, got {}", kind(root)));
        }
        g_.source_ = source_;
        chip_spec(required(root, "ChipSpec"));
        boards(required(root, "Board"));
        meshes(required(root, "Mesh"));
        if (const YAML::Node graph = root["Graph"]) {
            g_.graph_line_ = static_cast<uint32_t>(graph.Mark().line + 1);
            connections(graph);
        }
        for (MeshSpec& m : g_.meshes_) m.channels = g_.chip_.ports_per_direction, m.policy = ChannelPolicy::Relaxed;
        return std::move(g_);
    }

  private:
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
        std::optional<uint32_t> per_dir;
        char first = 'N';
        for (MeshDir d : kMeshDirs) {
            const char key[2] = {dir_letter(d), '\0'};
            const YAML::Node p = required(ports, key, "ChipSpec.ethernet_ports.");
            const std::string field = fmt::format("ChipSpec.ethernet_ports.{}", key);
            const uint32_t v = number(p, field);
            if (v == 0) bad(p, field, "a mesh device needs at least one port per direction");
            if (per_dir && v != *per_dir) {
                bad(p, field,
                    fmt::format("{} ports but {} has {}: every direction needs the same number "
                                "of ports (one per routing plane)",
                                v, first, *per_dir));
            }
            per_dir = v;
        }
        for (const auto& kv : ports) {
            const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
            if (k != "N" && k != "E" && k != "S" && k != "W" && k != "Z") {
                bad(kv.first, "ChipSpec.ethernet_ports",
                    fmt::format("unknown direction '{}' (known: N, E, S, W, Z)", k));
            }
        }
        g_.chip_.ports_per_direction = *per_dir;
        if (const YAML::Node z = ports["Z"])
            g_.chip_.z_ports = number(z, "ChipSpec.ethernet_ports.Z");
        const uint32_t channels = arch_eth_channels(*a);
        const uint32_t used = 4 * *per_dir + g_.chip_.z_ports;
        if (used > channels) {
            bad(ports, "ChipSpec.ethernet_ports",
                fmt::format(
                    "{} ports per direction{} need {} Ethernet channels but {} has {}", *per_dir,
                    g_.chip_.z_ports ? fmt::format(" and {} Z ports", g_.chip_.z_ports) : "", used,
                    arch_name(*a), channels));
        }
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
            BoardSpec spec;
            const YAML::Node name = required(b, "name", field + ".");
            spec.name = scalar(name, field + ".name");
            if (const auto [it, inserted] = seen.emplace(spec.name, i); !inserted) {
                bad(name, field + ".name",
                    fmt::format("board '{}' is already defined by Board[{}]", spec.name,
                                it->second));
            }
            const YAML::Node type = required(b, "type", field + ".");
            std::string t = scalar(type, field + ".type");
            std::transform(t.begin(), t.end(), t.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (t != "mesh") {
                bad(type, field + ".type",
                    fmt::format("board type '{}' is not supported (known: Mesh)", type.Scalar()));
            }
            const auto [r, c] = shape(required(b, "topology", field + "."), field + ".topology");
            spec.rows = r;
            spec.cols = c;
            g_.boards_.push_back(spec);
        }
    }

    const BoardSpec& board(const YAML::Node& n, const std::string& field) const {
        const std::string name = scalar(n, field);
        for (const BoardSpec& b : g_.boards_) {
            if (b.name == name) return b;
        }
        std::string known;
        for (const BoardSpec& b : g_.boards_) known += (known.empty() ? "" : ", ") + b.name;
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
            if (!m.IsMap()) bad(m, field, fmt::format("expected a mapping, got {}", kind(m)));
            MeshSpec spec;
            const YAML::Node id = required(m, "id", field + ".");
            spec.id = number(id, field + ".id");
            const BoardSpec& b = board(required(m, "board", field + "."), field + ".board");
            spec.board = b.name;

            const YAML::Node host_topo = m["host_topology"] ? m["host_topology"] : m["topology"];
            const std::string host_field =
                field + (m["host_topology"] ? ".host_topology" : ".topology");
            if (host_topo) {
                std::tie(spec.host_rows, spec.host_cols) = shape(host_topo, host_field);
            }
            const uint32_t want_rows = spec.host_rows * b.rows, want_cols = spec.host_cols * b.cols;
            if (const YAML::Node dev = m["device_topology"]) {
                std::tie(spec.rows, spec.cols) = shape(dev, field + ".device_topology");
                if (spec.rows != want_rows || spec.cols != want_cols) {
                    bad(dev, field + ".device_topology",
                        fmt::format("[{}, {}] does not match the host topology [{}, {}] of "
                                    "board '{}' [{}, {}] (that is [{}, {}] devices)",
                                    spec.rows, spec.cols, spec.host_rows, spec.host_cols, b.name,
                                    b.rows, b.cols, want_rows, want_cols));
                }
            } else {
                spec.rows = want_rows;
                spec.cols = want_cols;
            }
            if (spec.device_count() > kMaxMeshDevices) {
                bad(m, field,
                    fmt::format("{}x{} = {} devices; a mesh has at most {}", spec.rows, spec.cols,
                                spec.device_count(), kMaxMeshDevices));
            }
            host_ranks(m, field, spec);
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
        // Each port sends to one peer and receives from one peer, and both must be the same port.
        std::map<MeshPort, std::pair<MeshPort, std::string>> sends, receives;
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
            if (link.from.node.mesh == link.to.node.mesh) {
                bad(c, field,
                    fmt::format("connects mesh {} to itself: Graph holds inter-mesh connections "
                                "only",
                                link.from.node.mesh));
            }
            if (link.from.plane != link.to.plane) {
                bad(c, field,
                    fmt::format("connects {} to {}: the k-th port of a direction only talks to "
                                "the k-th port (routing plane) of the other end",
                                link.from.str(), link.to.str()));
            }
            const auto check = [&](std::map<MeshPort, std::pair<MeshPort, std::string>>& used,
                                   const MeshPort& p, const MeshPort& peer, const YAML::Node& n,
                                   const std::string& f, const char* what) {
                const auto [it, inserted] = used.emplace(p, std::pair{peer, field});
                if (!inserted && it->second.first != peer) {
                    bad(n, f,
                        fmt::format("{} already {} {} ({})", p.str(), what, it->second.first.str(),
                                    it->second.second));
                }
                if (!inserted) {
                    bad(c, field, fmt::format("duplicate of {}", it->second.second));
                }
            };
            check(sends, link.from, link.to, c[0], field + "[0]", "sends to");
            check(receives, link.to, link.from, c[1], field + "[1]", "receives from");
            // The reverse direction of a cable must use the same two ports.
            if (const auto it = receives.find(link.from);
                it != receives.end() && it->second.first != link.to) {
                bad(c[1], field + "[1]",
                    fmt::format("{} is cabled to {} ({}), not to {}", link.from.str(),
                                it->second.first.str(), it->second.second, link.to.str()));
            }
            if (const auto it = sends.find(link.to);
                it != sends.end() && it->second.first != link.from) {
                bad(c[0], field + "[0]",
                    fmt::format("{} is cabled to {} ({}), not to {}", link.to.str(),
                                it->second.first.str(), it->second.second, link.from.str()));
            }
            g_.links_.push_back(link);
        }
    }

    MeshGraph g_;
};

MeshGraph MeshGraph::parse(std::string_view yaml_text, const std::string& source) {
    const YAML::Node root = load_yaml(yaml_text, source);
    try {
        return MeshGraphParser(source).parse(root);
    } catch (const YAML::Exception& e) {  // defensive: yaml-cpp access errors
        fail(ErrorCategory::BadDescriptor, "{}: invalid mesh graph descriptor: {}", source, e.msg);
    }
}

MeshGraph MeshGraph::load_file(const std::string& path) {
    return parse(read_text_file(path, "mesh graph descriptor"), path);
}

}  // namespace fabric
