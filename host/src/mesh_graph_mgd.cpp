// MGD 2.0 mesh graph descriptors (tt-metal's protobuf text format) into fabric::MeshGraph. The
// text is parsed by protobuf's TextFormat::Parser against host/proto/mesh_graph_descriptor.proto;
// this file only validates what it parsed, with the line of each field from the parser's
// ParseInfoTree. The rules are in fabric/mesh_graph.h.
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/error.h"
#include "fabric/mesh_graph.h"
#include "fabric/soc_descriptor.h"
#include "mesh_graph_internal.h"
#include "proto/mesh_graph_descriptor.pb.h"

namespace fabric {

namespace {

namespace pb = google::protobuf;
using TextTree = pb::TextFormat::ParseInfoTree;

// Keeps protobuf's first syntax error as "line:col: message" (1-based).
class FirstErrorCollector final : public pb::io::ErrorCollector {
  public:
    void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
        if (!error) error = fmt::format("{}:{}: {}", line + 1, column + 1, message);
    }
    std::optional<std::string> error;
};

// A parsed message with where it came from: its field path ("mesh_descriptors[1].channels"),
// its parse-location tree (nullptr when the message was not in the text) and its line.
template <typename M>
struct At {
    const M& msg;
    const TextTree* tree;
    std::string path;
    uint32_t line;

    static const pb::FieldDescriptor* field(std::string_view name) {
        const pb::FieldDescriptor* f = M::descriptor()->FindFieldByName(std::string(name));
        if (!f)
            fail(ErrorCategory::Internal, "MGD schema: {} has no field {}", M::descriptor()->name(),
                 name);
        return f;
    }

    std::string path_of(std::string_view name, int index = -1) const {
        std::string p = path.empty() ? std::string(name) : fmt::format("{}.{}", path, name);
        return index < 0 ? p : fmt::format("{}[{}]", p, index);
    }

    // The index the parse tree wants: -1 for a singular field, the first value of a repeated
    // field when none is given.
    static int tree_index(const pb::FieldDescriptor* f, int index) {
        if (!f->is_repeated()) return -1;
        return std::max(index, 0);
    }

    // The line of a field (of its index-th value), or this message's line if absent.
    uint32_t line_of(std::string_view name, int index = -1) const {
        if (!tree) return line;
        const pb::FieldDescriptor* f = field(name);
        const pb::TextFormat::ParseLocation loc = tree->GetLocation(f, tree_index(f, index));
        return loc.line < 0 ? line : static_cast<uint32_t>(loc.line + 1);
    }

    template <typename C>
    At<C> child(std::string_view name, const C& sub, int index = -1) const {
        const pb::FieldDescriptor* f = field(name);
        const TextTree* t = tree ? tree->GetTreeForNested(f, tree_index(f, index)) : nullptr;
        return At<C>{sub, t, path_of(name, index), line_of(name, index)};
    }
};

// One mesh descriptor, validated: the MeshSpec every instance of it gets (id aside).
struct MeshTemplate {
    MeshSpec spec;
    hal::Arch arch = hal::Arch::WormholeB0;
    uint32_t line = 0;
};

// One mesh instance of a graph.
struct Instance {
    std::string descriptor;
    MeshId id = 0;
    std::string path;  // "graph_descriptors[0].instances[3].mesh"
    uint32_t line = 0;
};

// A graph descriptor, validated: its instances (by mesh id) and its connections.
struct GraphBuild {
    std::string path;  // "graph_descriptors[2]"
    uint32_t line = 0;
    std::map<MeshId, Instance> instances;
    std::vector<MeshConnection> connections;
};

}  // namespace

class MgdParser {
  public:
    explicit MgdParser(const std::string& source) : source_(source) {}

    MeshGraph parse(std::string_view text) {
        mgd::MeshGraphDescriptor d;
        TextTree tree;
        parse_text(text, d, tree);
        const At<mgd::MeshGraphDescriptor> root{d, &tree, "", 1};
        g_.source_ = source_;
        g_.form_ = DescriptorForm::TextProto;
        refuse_switches(root);
        for (int i = 0; i < d.mesh_descriptors_size(); ++i) {
            mesh_descriptor(root.child("mesh_descriptors", d.mesh_descriptors(i), i));
        }
        if (d.mesh_descriptors_size() == 0) {
            bad(1, "mesh_descriptors", "required field is missing: a descriptor needs a mesh");
        }
        std::map<std::string, GraphBuild> graphs;
        for (int i = 0; i < d.graph_descriptors_size(); ++i) {
            graph_descriptor(root.child("graph_descriptors", d.graph_descriptors(i), i), graphs);
        }
        top_level(root, graphs);
        for (int i = 0; i < d.pinnings_size(); ++i) pin(root.child("pinnings", d.pinnings(i), i));
        return std::move(g_);
    }

  private:
    [[noreturn]] void bad(uint32_t line, std::string_view field, const std::string& problem) const {
        fail(ErrorCategory::BadDescriptor, "{}:{}: field '{}': {}", source_, line, field, problem);
    }

    template <typename M>
    [[noreturn]] void bad(const At<M>& at, std::string_view name, const std::string& problem,
                          int index = -1) const {
        bad(at.line_of(name, index), at.path_of(name, index), problem);
    }

    template <typename M>
    void require(const At<M>& at, bool present, std::string_view name) const {
        if (!present) bad(at, name, "required field is missing");
    }

    void parse_text(std::string_view text, mgd::MeshGraphDescriptor& d, TextTree& tree) const {
        FirstErrorCollector errors;
        pb::TextFormat::Parser parser;
        parser.RecordErrorsTo(&errors);
        parser.WriteLocationsTo(&tree);
        if (!parser.ParseFromString(std::string(text), &d)) {
            fail(ErrorCategory::BadDescriptor, "{}:{}", source_,
                 errors.error.value_or("1:1: malformed MGD text"));
        }
    }

    void refuse_switches(const At<mgd::MeshGraphDescriptor>& root) const {
        if (root.msg.switch_descriptors_size() > 0) {
            bad(root, "switch_descriptors", "switch_descriptors are not supported", 0);
        }
    }

    // ---- mesh descriptors ----------------------------------------------------------------------

    void mesh_descriptor(const At<mgd::MeshDescriptor>& at) {
        const mgd::MeshDescriptor& m = at.msg;
        require(at, m.has_name() && !m.name().empty(), "name");
        if (const auto it = templates_.find(m.name()); it != templates_.end()) {
            bad(at, "name",
                fmt::format("mesh descriptor '{}' is already defined (line {})", m.name(),
                            it->second.line));
        }
        if (m.express_connections_size() > 0) {
            bad(at, "express_connections", "express_connections are not supported", 0);
        }
        MeshTemplate t;
        t.line = at.line;
        t.spec.board = m.name();
        t.arch = arch(at);
        require(at, m.has_device_topology(), "device_topology");
        device_topology(at.child("device_topology", m.device_topology()), t.spec);
        require(at, m.has_host_topology(), "host_topology");
        host_topology(at.child("host_topology", m.host_topology()), t.spec);
        require(at, m.has_channels(), "channels");
        const auto [count, policy] = channels(at.child("channels", m.channels()));
        t.spec.channels = count;
        t.spec.policy = policy;
        templates_.emplace(m.name(), std::move(t));
    }

    hal::Arch arch(const At<mgd::MeshDescriptor>& at) const {
        require(at, at.msg.has_arch(), "arch");
        switch (at.msg.arch()) {
            case mgd::WORMHOLE_B0:
                return hal::Arch::WormholeB0;
            case mgd::BLACKHOLE:
                return hal::Arch::Blackhole;
            case mgd::INVALID_ARCHITECTURE:
            default:
                bad(at, "arch", "expected WORMHOLE_B0 or BLACKHOLE, got INVALID_ARCHITECTURE");
        }
    }

    // A positive dimension of a topology.
    template <typename M>
    uint32_t dim(const At<M>& at, int index) const {
        const int32_t v = at.msg.dims(index);
        if (v <= 0) {
            bad(at, "dims",
                fmt::format("dims[{}] is {}: every dimension needs at least one device", index, v));
        }
        return static_cast<uint32_t>(v);
    }

    // Exactly [rows, cols]: one or three dimensions are refused by name.
    template <typename M>
    void two_dims(const At<M>& at) const {
        const int n = at.msg.dims_size();
        if (n == 0) bad(at, "dims", "required field is missing: expected [rows, cols]");
        if (n != 2) {
            std::string dims;
            for (int32_t v : at.msg.dims())
                dims += fmt::format("{}{}", dims.empty() ? "" : ", ", v);
            bad(at, "dims",
                fmt::format("{}-dimensional topologies are not supported (dims [{}]): this "
                            "project builds 2D meshes, give [rows, cols]",
                            n, dims));
        }
    }

    void device_topology(const At<mgd::TorusTopology>& at, MeshSpec& spec) const {
        two_dims(at);
        spec.rows = dim(at, 0);
        spec.cols = dim(at, 1);
        if (const auto problem = detail::mesh_size_problem(spec.rows, spec.cols)) {
            bad(at, "dims", *problem);
        }
        const mgd::TorusTopology& t = at.msg;
        if (t.dim_types_size() > 0 && t.types_size() > 0) {
            bad(at, "types", "give dim_types or its older spelling types, not both");
        }
        const bool older = t.types_size() > 0;
        const auto& types = older ? t.types() : t.dim_types();
        const char* name = older ? "types" : "dim_types";
        if (types.size() > 2) {
            bad(at, name, fmt::format("{} types for 2 dims", types.size()));
        }
        for (int i = 0; i < types.size(); ++i) {
            if (types.Get(i) == mgd::TorusTopology::INVALID_TYPE) {
                bad(at, name, "expected LINE or RING, got INVALID_TYPE", i);
            }
        }
        spec.ring_ns = types.size() > 0 && types.Get(0) == mgd::TorusTopology::RING;
        spec.ring_ew = types.size() > 1 && types.Get(1) == mgd::TorusTopology::RING;
    }

    void host_topology(const At<mgd::MeshTopology>& at, MeshSpec& spec) const {
        two_dims(at);
        spec.host_rows = dim(at, 0);
        spec.host_cols = dim(at, 1);
        if (spec.rows % spec.host_rows != 0 || spec.cols % spec.host_cols != 0) {
            bad(at, "dims",
                fmt::format("hosts [{}, {}] do not divide the devices [{}, {}]: every host owns "
                            "an equal block of the mesh",
                            spec.host_rows, spec.host_cols, spec.rows, spec.cols));
        }
        spec.host_ranks = detail::row_major_host_ranks(spec.host_rows, spec.host_cols);
    }

    std::pair<uint32_t, ChannelPolicy> channels(const At<mgd::Channels>& at) const {
        require(at, at.msg.has_count(), "count");
        if (at.msg.count() <= 0) {
            bad(at, "count",
                fmt::format("{} channels: a connection needs at least 1", at.msg.count()));
        }
        ChannelPolicy policy = ChannelPolicy::Strict;
        if (at.msg.has_policy()) {
            switch (at.msg.policy()) {
                case mgd::STRICT:
                    break;
                case mgd::RELAXED:
                    policy = ChannelPolicy::Relaxed;
                    break;
                case mgd::INVALID_POLICY:
                default:
                    bad(at, "policy", "expected STRICT or RELAXED, got INVALID_POLICY");
            }
        }
        return {static_cast<uint32_t>(at.msg.count()), policy};
    }

    // ---- graphs --------------------------------------------------------------------------------

    void graph_descriptor(const At<mgd::GraphDescriptor>& at,
                          std::map<std::string, GraphBuild>& graphs) {
        const mgd::GraphDescriptor& g = at.msg;
        require(at, g.has_name() && !g.name().empty(), "name");
        if (const auto it = graphs.find(g.name()); it != graphs.end()) {
            bad(at, "name",
                fmt::format("graph descriptor '{}' is already defined (line {})", g.name(),
                            it->second.line));
        }
        GraphBuild build;
        build.path = at.path;
        build.line = at.line;
        if (g.instances_size() == 0)
            bad(at, "instances", "required field is missing: a graph needs at least one mesh");
        for (int i = 0; i < g.instances_size(); ++i) {
            instance(at.child("instances", g.instances(i), i), build);
        }
        for (int i = 0; i < g.connections_size(); ++i) {
            build.connections.push_back(
                connection(at.child("connections", g.connections(i), i), build));
        }
        if (g.has_graph_topology()) expand_topology(at, build);
        graphs.emplace(g.name(), std::move(build));
    }

    const MeshTemplate& mesh_template(const At<mgd::MeshRef>& at) const {
        require(at, at.msg.has_mesh_descriptor(), "mesh_descriptor");
        const auto it = templates_.find(at.msg.mesh_descriptor());
        if (it == templates_.end()) {
            std::string known;
            for (const auto& [name, t] : templates_) known += (known.empty() ? "" : ", ") + name;
            bad(at, "mesh_descriptor",
                fmt::format("unknown mesh descriptor '{}' (mesh descriptors: {})",
                            at.msg.mesh_descriptor(), known));
        }
        return it->second;
    }

    MeshId mesh_id(const At<mgd::MeshRef>& at) const {
        require(at, at.msg.has_mesh_id(), "mesh_id");
        if (at.msg.mesh_id() < 0) {
            bad(at, "mesh_id", fmt::format("must not be negative, got {}", at.msg.mesh_id()));
        }
        if (static_cast<uint32_t>(at.msg.mesh_id()) >= kMaxMeshes) {
            bad(at, "mesh_id",
                fmt::format("mesh {}: a fabric has at most {} meshes (ids 0..{})", at.msg.mesh_id(),
                            kMaxMeshes, kMaxMeshes - 1));
        }
        return static_cast<MeshId>(at.msg.mesh_id());
    }

    // A NodeRef that must be a mesh: graphs and switches are refused by name.
    At<mgd::MeshRef> mesh_ref(const At<mgd::NodeRef>& at, std::string_view what) const {
        switch (at.msg.node_ref_case()) {
            case mgd::NodeRef::kMesh:
                return at.child("mesh", at.msg.mesh());
            case mgd::NodeRef::kGraph:
                bad(at, "graph",
                    fmt::format("{} names graph '{}': nested graphs are not supported (a graph "
                                "of meshes only)",
                                what, at.msg.graph().graph_descriptor()));
            case mgd::NodeRef::kSwitch:
                bad(at, "switch",
                    fmt::format("{} names a switch: switches are not supported", what));
            case mgd::NodeRef::NODE_REF_NOT_SET:
            default:
                bad(at.line, at.path, fmt::format("{} names no mesh", what));
        }
    }

    void instance(const At<mgd::NodeRef>& node, GraphBuild& build) const {
        const At<mgd::MeshRef> at = mesh_ref(node, "an instance");
        Instance inst;
        inst.descriptor = mesh_template(at).spec.board;
        inst.id = mesh_id(at);
        inst.path = at.path;
        inst.line = at.line;
        if (at.msg.has_device_id()) {
            bad(at, "device_id", "an instance is a whole mesh: device_id belongs in connections");
        }
        const auto [it, inserted] = build.instances.emplace(inst.id, inst);
        if (!inserted) {
            bad(at, "mesh_id",
                fmt::format("mesh {} is already an instance of this graph (line {})", inst.id,
                            it->second.line));
        }
    }

    // One end of a connection: an instance of the graph, and maybe one of its devices.
    std::pair<MeshId, std::optional<MeshDeviceId>> endpoint(const At<mgd::NodeRef>& node,
                                                            const GraphBuild& build) const {
        const At<mgd::MeshRef> at = mesh_ref(node, "a connection");
        const MeshTemplate& t = mesh_template(at);
        const MeshId id = mesh_id(at);
        const auto it = build.instances.find(id);
        if (it == build.instances.end()) {
            bad(at, "mesh_id", fmt::format("mesh {} is not an instance of this graph", id));
        }
        if (it->second.descriptor != t.spec.board) {
            bad(at, "mesh_descriptor",
                fmt::format("mesh {} is an instance of '{}', not '{}' (line {})", id,
                            it->second.descriptor, t.spec.board, it->second.line));
        }
        if (!at.msg.has_device_id()) return {id, std::nullopt};
        const int32_t device = at.msg.device_id();
        if (device < 0 || static_cast<uint32_t>(device) >= t.spec.device_count()) {
            bad(at, "device_id",
                fmt::format("unknown device {} in mesh {} ({}x{}: devices 0..{})", device, id,
                            t.spec.rows, t.spec.cols, t.spec.device_count() - 1));
        }
        return {id, static_cast<MeshDeviceId>(device)};
    }

    MeshConnection connection(const At<mgd::Connection>& at, const GraphBuild& build) const {
        const mgd::Connection& c = at.msg;
        if (c.nodes_size() != 2) {
            bad(at, "nodes", fmt::format("a connection joins 2 nodes, got {}", c.nodes_size()));
        }
        if (c.routing_direction_size() > 0) {
            bad(at, "routing_direction",
                "routing_direction is not supported: the directions of a connection come from "
                "the cluster's cabling",
                0);
        }
        MeshConnection mc;
        std::tie(mc.a, mc.device_a) = endpoint(at.child("nodes", c.nodes(0), 0), build);
        std::tie(mc.b, mc.device_b) = endpoint(at.child("nodes", c.nodes(1), 1), build);
        if (mc.a == mc.b) {
            bad(at, "nodes",
                fmt::format("connects mesh {} to itself: connections join two meshes", mc.a));
        }
        require(at, c.has_channels(), "channels");
        std::tie(mc.channels, mc.policy) = channels(at.child("channels", c.channels()));
        mc.directional = c.directional();
        mc.z_direction = c.assign_z_direction();
        mc.line = at.line;
        return mc;
    }

    // graph_topology: a connection between every pair of instances (ALL_TO_ALL) or between
    // neighbours in instance order, the last back to the first (RING), in the order listed.
    void expand_topology(const At<mgd::GraphDescriptor>& graph, GraphBuild& build) const {
        const At<mgd::GraphTopology> at = graph.child("graph_topology", graph.msg.graph_topology());
        require(at, at.msg.has_layout_type(), "layout_type");
        if (at.msg.layout_type() == mgd::GraphTopology::INVALID_TYPE) {
            bad(at, "layout_type", "expected ALL_TO_ALL or RING, got INVALID_TYPE");
        }
        MeshConnection proto;
        if (at.msg.has_channels()) {
            std::tie(proto.channels, proto.policy) =
                channels(at.child("channels", at.msg.channels()));
        } else if (graph.msg.has_channels()) {
            std::tie(proto.channels, proto.policy) =
                channels(graph.child("channels", graph.msg.channels()));
        } else {
            bad(at, "channels",
                "required field is missing: graph_topology needs channels (in graph_topology or in "
                "the graph)");
        }
        proto.z_direction = at.msg.assign_z_direction();
        proto.line = at.line;
        std::vector<MeshId> order;
        for (int i = 0; i < graph.msg.instances_size(); ++i) {
            order.push_back(static_cast<MeshId>(graph.msg.instances(i).mesh().mesh_id()));
        }
        const auto add = [&](MeshId a, MeshId b) {
            MeshConnection mc = proto;
            mc.a = a;
            mc.b = b;
            build.connections.push_back(mc);
        };
        if (at.msg.layout_type() == mgd::GraphTopology::ALL_TO_ALL) {
            for (size_t i = 0; i < order.size(); ++i) {
                for (size_t j = i + 1; j < order.size(); ++j) add(order[i], order[j]);
            }
        } else if (order.size() == 2) {
            add(order[0], order[1]);  // a ring of two is one connection
        } else if (order.size() > 2) {
            for (size_t i = 0; i < order.size(); ++i) add(order[i], order[(i + 1) % order.size()]);
        }
    }

    // ---- the top-level instance ----------------------------------------------------------------

    void top_level(const At<mgd::MeshGraphDescriptor>& root,
                   const std::map<std::string, GraphBuild>& graphs) {
        require(root, root.msg.has_top_level_instance(), "top_level_instance");
        const At<mgd::NodeRef> node =
            root.child("top_level_instance", root.msg.top_level_instance());
        if (node.msg.has_graph()) {
            top_level_graph(node.child("graph", node.msg.graph()), graphs);
        } else {
            top_level_mesh(mesh_ref(node, "top_level_instance"));
        }
        g_.chip_.arch = arch_of_.front();
        for (const MeshSpec& m : g_.meshes_) {
            g_.chip_.ports_per_direction = std::max(g_.chip_.ports_per_direction, m.channels);
        }
    }

    void top_level_mesh(const At<mgd::MeshRef>& at) {
        const MeshTemplate& t = mesh_template(at);
        const MeshId id = mesh_id(at);
        if (id != 0) {
            bad(at, "mesh_id", fmt::format("the only mesh of the fabric has id 0, got {}", id));
        }
        if (at.msg.has_device_id()) {
            bad(at, "device_id", "the top-level instance is a whole mesh, not a device");
        }
        add_mesh(t, Instance{t.spec.board, 0, at.path, at.line});
    }

    void top_level_graph(const At<mgd::GraphRef>& at,
                         const std::map<std::string, GraphBuild>& graphs) {
        require(at, at.msg.has_graph_descriptor(), "graph_descriptor");
        if (at.msg.has_sub_ref() || at.msg.has_mesh() || at.msg.has_graph()) {
            const char* sub = at.msg.has_sub_ref() ? "sub_ref"
                              : at.msg.has_mesh()  ? "mesh"
                                                   : "graph";
            bad(at, sub,
                "the top-level instance is a whole graph: sub-references are not supported");
        }
        if (at.msg.graph_id() < 0) {
            bad(at, "graph_id", fmt::format("must not be negative, got {}", at.msg.graph_id()));
        }
        const auto it = graphs.find(at.msg.graph_descriptor());
        if (it == graphs.end()) {
            std::string known;
            for (const auto& [name, g] : graphs) known += (known.empty() ? "" : ", ") + name;
            bad(at, "graph_descriptor",
                fmt::format("unknown graph descriptor '{}' (graph descriptors: {})",
                            at.msg.graph_descriptor(), known.empty() ? "none" : known));
        }
        MeshId expect = 0;
        for (const auto& [id, inst] : it->second.instances) {
            if (id != expect) {
                bad(it->second.line, it->second.path + ".instances",
                    fmt::format("mesh ids must be 0..{} without gaps; mesh {} is missing",
                                it->second.instances.size() - 1, expect));
            }
            add_mesh(templates_.at(inst.descriptor), inst);
            ++expect;
        }
        g_.mesh_connections_ = it->second.connections;
    }

    void add_mesh(const MeshTemplate& t, const Instance& inst) {
        if (!g_.meshes_.empty() && t.arch != arch_of_.front()) {
            bad(inst.line, inst.path,
                fmt::format("mesh {} ('{}') is {} but mesh 0 ('{}') is {}: every mesh of a fabric "
                            "has the same arch",
                            inst.id, t.spec.board, arch_name(t.arch), g_.meshes_.front().board,
                            arch_name(arch_of_.front())));
        }
        MeshSpec spec = t.spec;
        spec.id = inst.id;
        g_.meshes_.push_back(std::move(spec));
        arch_of_.push_back(t.arch);
    }

    // ---- pinnings ------------------------------------------------------------------------------

    void pin(const At<mgd::AsicPinning>& at) {
        require(at, at.msg.has_logical_fabric_node_id(), "logical_fabric_node_id");
        require(at, at.msg.has_physical_asic_position(), "physical_asic_position");
        const auto node = at.child("logical_fabric_node_id", at.msg.logical_fabric_node_id());
        const auto pos = at.child("physical_asic_position", at.msg.physical_asic_position());
        require(node, node.msg.has_mesh_id(), "mesh_id");
        require(node, node.msg.has_chip_id(), "chip_id");
        require(pos, pos.msg.has_tray_id(), "tray_id");
        require(pos, pos.msg.has_asic_location(), "asic_location");
        AsicPin p;
        p.node = MeshNode{node.msg.mesh_id(), node.msg.chip_id()};
        p.tray_id = pos.msg.tray_id();
        p.asic_location = pos.msg.asic_location();
        p.line = at.line;
        if (p.node.mesh >= g_.meshes_.size()) {
            bad(node, "mesh_id",
                fmt::format("unknown mesh {} (meshes 0..{})", p.node.mesh, g_.meshes_.size() - 1));
        }
        const MeshSpec& m = g_.meshes_[p.node.mesh];
        if (p.node.device >= m.device_count()) {
            bad(node, "chip_id",
                fmt::format("unknown device {} in mesh {} ({}x{}: devices 0..{})", p.node.device,
                            p.node.mesh, m.rows, m.cols, m.device_count() - 1));
        }
        for (const AsicPin& other : g_.pins_) {
            if (other.node == p.node) {
                bad(at.line, at.path,
                    fmt::format("{} is already pinned (line {})", p.node.str(), other.line));
            }
            if (other.tray_id == p.tray_id && other.asic_location == p.asic_location) {
                bad(at.line, at.path,
                    fmt::format("tray {} ASIC {} already holds {} (line {})", p.tray_id,
                                p.asic_location, other.node.str(), other.line));
            }
        }
        g_.pins_.push_back(p);
    }

    std::string source_;
    MeshGraph g_;
    std::map<std::string, MeshTemplate> templates_;
    std::vector<hal::Arch> arch_of_;  // per mesh of g_
};

MeshGraph MeshGraph::parse_textproto(std::string_view text, const std::string& source) {
    return MgdParser(source).parse(text);
}

}  // namespace fabric
