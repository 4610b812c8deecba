// Temporary: until the mesh graph loaders land.
#include "fabric/error.h"
#include "fabric/mesh_graph.h"

namespace fabric {

std::string_view policy_name(ChannelPolicy p) {
    return p == ChannelPolicy::Strict ? "STRICT" : "RELAXED";
}

uint32_t MeshGraph::device_count() const {
    uint32_t n = 0;
    for (const MeshSpec& m : meshes_) n += m.device_count();
    return n;
}

MeshGraph MeshGraph::resolved(std::vector<InterMeshLink> links) const {
    MeshGraph g = *this;
    g.links_ = std::move(links);
    g.mesh_connections_.clear();
    return g;
}

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

}  // namespace fabric
