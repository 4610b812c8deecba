// Mesh graph descriptor: how the chips of a fabric form meshes and how the meshes connect. Two
// forms load into this one validated model (reference/mesh-graph-descriptor-2.md, host-and-pcie.md
// §6.1):
//
// - MGD 2.0, tt-metal's protobuf text format (`*.textproto`; schema host/proto/): mesh
//   descriptors (arch, device_topology dims and dim_types, host_topology, channels count and
//   policy), graph descriptors of mesh instances with their connections, and a top-level
//   instance. A connection joins two meshes with a channel count; which devices carry it is found
//   from the cluster at mapping time (topology_map.h), so it is a MeshConnection, not links.
//   MGD details: all meshes have one arch; device_topology and host_topology have exactly two
//   dims (host dims divide device dims; host ranks are numbered row-major over the host grid);
//   dim_types (or the older `types`) LINE/RING per dim, missing = LINE: RING on dim 0 is ring_ns,
//   on dim 1 ring_ew; channels { count policy } with policy STRICT when omitted (tt-metal's
//   documented default). The top-level instance is one mesh, or one graph of mesh instances
//   whose `mesh_id`s are the fabric's mesh ids. A graph's connections join two of its instances
//   (device_id optional) with a channel count; graph_topology { layout_type: ALL_TO_ALL | RING
//   channels {..} } is expanded into connections (channels from graph_topology, else from the
//   graph). assign_z_direction is kept (MeshConnection::z_direction). pinnings become pins():
//   a device on (tray_id, asic_location), one pin per device and per position. ChipSpec::arch
//   is the meshes' arch and ports_per_direction their largest channel count. Unknown fields are
//   refused (protobuf's message). Not supported, refused by name: express_connections,
//   switch_descriptors, nested graph references, routing_direction, 1-D and 3-D topologies.
//
// - The older YAML form (ChipSpec, Board, Mesh, Graph):
//
//   ChipSpec: {arch: wormhole_b0, ethernet_ports: {N: 2, E: 2, S: 2, W: 2}}  # links per direction
//   Board: [{name: T3K, type: Mesh, topology: [2, 4]}]                       # [rows, cols]
//   Mesh: [{id: 0, board: T3K, device_topology: [2, 4], host_topology: [1, 1], host_ranks: [[0]]}]
//   Graph: [ [[0, S0], [1, N0]], [[1, N0], [0, S0]] ]                       # inter-mesh ports
//
// Devices of a mesh are numbered row-major from the north-west corner: device = row * cols + col,
// device 1 is east of device 0, device `cols` is south of it.
//
// YAML ChipSpec: `ethernet_ports` N = E = S = W (0 for single-chip boards, whose meshes are 1x1),
// an optional Z; each mesh's channel count is that number, policy STRICT. The ports are logical
// (the physical channels come from the cluster), so their number is not checked against the arch.
//
// YAML Board: `type` Mesh, or a torus: TORUS_X (columns wrap: E/W, ring_ew), TORUS_Y (rows wrap:
// N/S, ring_ns), TORUS_XY or TORUS_2D (both); any case. Every mesh of the board gets the rings.
//
// YAML Mesh: `device_topology` is [rows, cols] of devices, `host_topology` [rows, cols] of boards
// (default [1, 1]); device_topology must equal host_topology x the board's topology (either may be
// left out of the two and is derived). `host_ranks` is a host_topology-shaped list of lists of MPI
// ranks (default all 0); `host_mapping`, its predecessor in tt-metal's first files, is accepted and
// ignored. The older key `topology` (when neither of the two is given) means the host topology in
// tt-metal's early files ([1, 1]) and the device topology in later ones (quanta_galaxy:
// `topology: [8, 4]` on an 8x4 board with `host_ranks: [[0]]`): host_ranks decides - if its shape
// is not `topology` but `topology` is the board times that shape, `topology` is the device
// topology. A mesh has at most kMaxMeshDevices devices (sizes computed in 64 bits). Mesh ids are
// 0..N-1 without gaps.
//
// YAML Graph: a list of *directed* inter-mesh connections [from port, to port]: traffic may leave
// the first mesh through the first port and arrives at the second (tt-metal lists both directions
// of a cable as two entries). A port is [mesh, "<Dir><index>"] with the index counted along that
// edge of the mesh, `ethernet_ports` per device: N from the north-west corner eastwards, S from the
// south-west corner eastwards, E from the north-east corner southwards, W from the north-west
// corner southwards (so on a 3x3 mesh with 4 ports per direction, E4..E7 are device 5's). This
// project also accepts [mesh, device, "<Dir><plane>"], naming the device directly. The two ends
// may be on different planes (TG: a gateway's S1 is cabled to the Galaxy's N4, plane 0 of its
// device 1); a port is cabled to one peer only.
//
// YAML RelaxedGraph: [[M<a>, M<b>, channels], ...]: meshes joined by a channel count whose links
// the topology mapping chooses (MeshConnection, policy RELAXED), as MGD connections are.
//
// Loading validates the file completely; every problem is Error(BadDescriptor) naming the file,
// the line and the field. A feature of the published formats that this project does not implement
// is refused by name ("express_connections are not supported"), never as malformed.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hal/arch_map.h"

namespace fabric {

// Routing directions in a mesh: N = towards row 0, S = towards the last row, E = towards the last
// column, W = towards column 0.
enum class MeshDir : uint8_t { N = 0, E = 1, S = 2, W = 3 };
inline constexpr std::array<MeshDir, 4> kMeshDirs{MeshDir::N, MeshDir::E, MeshDir::S, MeshDir::W};

char dir_letter(MeshDir d);                     // 'N', 'E', 'S', 'W'
std::optional<MeshDir> parse_mesh_dir(char c);  // upper or lower case
MeshDir opposite(MeshDir d);

using MeshId = uint32_t;
using MeshDeviceId = uint32_t;  // a device inside its mesh: row * cols + col

inline constexpr uint32_t kMaxMeshes = 1024;      // seeds/000 §2.2.1: up to 1024 meshes
inline constexpr uint32_t kMaxMeshDevices = 256;  // ... of 256 devices each

// A device of the fabric: (mesh, device in the mesh).
struct MeshNode {
    MeshId mesh = 0;
    MeshDeviceId device = 0;
    auto operator<=>(const MeshNode&) const = default;
    std::string str() const;  // "M0D5"
};

// "M:D" (decimal, e.g. "0:5"); nullopt if malformed.
std::optional<MeshNode> parse_mesh_node(std::string_view text);

struct ChipSpec {
    hal::Arch arch = hal::Arch::WormholeB0;  // every mesh of a graph has the same arch
    // N = E = S = W: the routing planes, the most links per neighbour pair any mesh asks for
    // (MeshSpec::channels; YAML: ethernet_ports). 0 on a graph of single-chip meshes only.
    uint32_t ports_per_direction = 0;
    uint32_t z_ports = 0;  // optional `Z`: counted against the arch's channels, unused

    // The eth channel that faces `dir` on routing plane `plane`. This project numbers the channels
    // of a mesh device logically, a block of `ports_per_direction` per direction in the order
    // N, S, E, W (WH with 4 ports per direction: N 0-3, S 4-7, E 8-11, W 12-15, the grouping of
    // galaxy_8x4_cluster.yaml); plane k is the k-th channel of each block. The physical channel
    // behind a logical one comes from the cluster descriptor at bring-up. nullopt if
    // plane >= ports_per_direction.
    std::optional<uint32_t> eth_channel(MeshDir dir, uint32_t plane) const;
    // Inverse of eth_channel: (direction, plane) of a channel; nullopt for Z or unknown channels.
    std::optional<std::pair<MeshDir, uint32_t>> channel_port(uint32_t channel) const;
};

struct BoardSpec {
    std::string name;
    uint32_t rows = 0;
    uint32_t cols = 0;
};

// How a channel count is enforced: Strict = every neighbour pair has at least `channels` live
// links; Relaxed = at least one, and the fabric runs min(live links) routing planes.
enum class ChannelPolicy : uint8_t { Strict = 0, Relaxed = 1 };
std::string_view policy_name(ChannelPolicy p);  // "STRICT", "RELAXED"

struct MeshSpec {
    MeshId id = 0;
    std::string board;  // YAML: the board name; MGD: the mesh descriptor's name ("M0")
    uint32_t rows = 0;  // device topology
    uint32_t cols = 0;
    uint32_t host_rows = 1;  // host topology (boards)
    uint32_t host_cols = 1;
    std::vector<std::vector<uint32_t>> host_ranks;  // [host_rows][host_cols]
    // Wrap-around per dimension (MGD dim_types RING; YAML board types TORUS_X / _Y / _XY / _2D):
    // ring_ns joins row 0 and the last row (N/S, dim 0), ring_ew column 0 and the last (E/W, dim
    // 1).
    bool ring_ns = false;
    bool ring_ew = false;
    uint32_t channels = 0;  // links per neighbour pair (YAML: ethernet_ports per direction)
    ChannelPolicy policy = ChannelPolicy::Strict;  // YAML: Strict

    uint32_t device_count() const { return rows * cols; }  // rows * cols <= kMaxMeshDevices
    bool is_torus() const { return ring_ns || ring_ew; }
    bool wraps(MeshDir d) const { return d == MeshDir::N || d == MeshDir::S ? ring_ns : ring_ew; }
    uint32_t row_of(MeshDeviceId d) const { return d / cols; }
    uint32_t col_of(MeshDeviceId d) const { return d % cols; }
    // The device next to `d` in direction `dir` inside this mesh; nullopt at the mesh edge (the
    // wrap-around of a ring is not a neighbour here: routes stay dimension-ordered).
    std::optional<MeshDeviceId> neighbor(MeshDeviceId d, MeshDir dir) const;
    // The devices on the `dir` edge in tt-metal's port order (see the file comment).
    std::vector<MeshDeviceId> edge_devices(MeshDir dir) const;
    // The host rank that owns device `d`.
    uint32_t host_rank_of(MeshDeviceId d) const;
};

// One Ethernet port of a mesh device on a routing plane.
struct MeshPort {
    MeshNode node;
    MeshDir dir = MeshDir::N;
    uint32_t plane = 0;
    auto operator<=>(const MeshPort&) const = default;
    std::string str() const;  // "M0D5 E plane 0"
};

// A directed inter-mesh connection between two ports: traffic leaves `from` and arrives at `to`.
// The YAML Graph names them; for an MGD graph the topology mapping finds them
// (MeshGraph::resolved). The planes of the two ends may differ (TG's gateways: S1 of a gateway to
// N4 of the Galaxy).
struct InterMeshLink {
    MeshPort from;
    MeshPort to;
    uint32_t line = 0;  // the descriptor line of the Graph entry (0: found by the mapping)
};

// A connection between two meshes as MGD 2.0 gives it: `channels` links between them, on devices
// the topology mapping chooses unless the descriptor names them (MeshRef device_id). Undirected
// unless `directional` (then traffic only goes a -> b). graph_topology ALL_TO_ALL / RING is
// expanded into these.
struct MeshConnection {
    MeshId a = 0;
    MeshId b = 0;
    std::optional<MeshDeviceId> device_a;
    std::optional<MeshDeviceId> device_b;
    uint32_t channels = 1;
    ChannelPolicy policy = ChannelPolicy::Strict;
    bool directional = false;
    bool z_direction = false;  // MGD assign_z_direction: the links are Z (third-dimension) links
    uint32_t line = 0;         // the descriptor line of the connection
};

// MGD 2.0 pinnings: a mesh device placed on a physical ASIC position (tray, location on tray).
struct AsicPin {
    MeshNode node;
    uint32_t tray_id = 0;
    uint32_t asic_location = 0;
    uint32_t line = 0;
};

enum class DescriptorForm : uint8_t { Yaml = 0, TextProto = 1 };

class MeshGraph {
  public:
    // Load and validate either form: `.textproto` / `.txtpb` / `.pbtxt` is MGD 2.0, anything else
    // by its first significant token (detect_form). Error(BadInput) if the file cannot be read,
    // Error(BadDescriptor) naming the file, line and field for anything invalid.
    static MeshGraph load_file(const std::string& path);
    // From text, the form found by its first significant token.
    static MeshGraph parse(std::string_view text, const std::string& source);
    // MGD 2.0 when the first token after comments and blank lines is a top-level MGD field
    // (mesh_descriptors, graph_descriptors, top_level_instance, pinnings, switch_descriptors),
    // else YAML (whose files start with ChipSpec, Board, ..., `---` or `{`).
    static DescriptorForm detect_form(std::string_view text);
    static MeshGraph parse_yaml(std::string_view yaml_text, const std::string& source);
    static MeshGraph parse_textproto(std::string_view text, const std::string& source);
    // One rows x cols mesh (no rings) of `channels` links per neighbour pair: the graph
    // `mesh up` derives from a cluster when no descriptor is given. `source` names it.
    static MeshGraph single_mesh(hal::Arch arch, uint32_t rows, uint32_t cols, uint32_t channels,
                                 ChannelPolicy policy, const std::string& source);

    const std::string& source() const { return source_; }
    const ChipSpec& chip_spec() const { return chip_; }
    const std::vector<BoardSpec>& boards() const { return boards_; }
    const std::vector<MeshSpec>& meshes() const { return meshes_; }  // index = mesh id
    uint32_t mesh_count() const { return static_cast<uint32_t>(meshes_.size()); }
    // Error(BadInput) for an unknown mesh.
    const MeshSpec& mesh(MeshId id) const;
    bool contains(MeshNode n) const;
    // Error(BadInput) "unknown mesh/device" unless the node exists.
    void check_node(MeshNode n) const;
    const std::vector<InterMeshLink>& links() const { return links_; }
    uint32_t graph_line() const { return graph_line_; }  // line of the `Graph` key (0: none)
    DescriptorForm form() const { return form_; }
    // MGD connections between meshes whose links the mapping has not chosen yet; empty for YAML.
    const std::vector<MeshConnection>& mesh_connections() const { return mesh_connections_; }
    const std::vector<AsicPin>& pins() const { return pins_; }
    // Whether every inter-mesh connection is known port by port (YAML, or after resolved()).
    bool links_resolved() const { return mesh_connections_.empty(); }
    uint32_t device_count() const;  // all meshes

    // This graph with its MeshConnections replaced by the port-level links the topology mapping
    // chose (added to the links it already has): each link is validated as a YAML Graph's are
    // (existing ports on the mesh edge, planes below ports_per_direction, different meshes, a
    // port cabled to one peer), and together they must realize every connection (STRICT: at
    // least `channels` links in each direction the connection carries, RELAXED: at least one; on
    // the named devices) and join no other meshes. Error(Internal) for anything refused (a
    // mapping bug).
    MeshGraph resolved(std::vector<InterMeshLink> links) const;
    // This graph with every mesh wrapping in both dimensions (`--topology torus` on a YAML Mesh
    // board, which carries no rings).
    MeshGraph as_torus() const;

  private:
    MeshGraph() = default;

    std::string source_;
    DescriptorForm form_ = DescriptorForm::Yaml;
    ChipSpec chip_;
    std::vector<BoardSpec> boards_;
    std::vector<MeshSpec> meshes_;
    std::vector<InterMeshLink> links_;
    std::vector<MeshConnection> mesh_connections_;
    std::vector<AsicPin> pins_;
    uint32_t graph_line_ = 0;

    friend class MeshGraphParser;
    friend class MgdParser;
};

}  // namespace fabric
