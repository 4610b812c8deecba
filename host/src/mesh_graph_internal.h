// What the two mesh graph descriptor parsers (mesh_graph.cpp: YAML, mesh_graph_mgd.cpp: MGD 2.0)
// and MeshGraph::resolved share: mesh size limits, host ranks and inter-mesh link checks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fabric/mesh_graph.h"

namespace fabric::detail {

// "64x8 = 512 devices; a mesh has at most 256 devices" when rows x cols is more than
// kMaxMeshDevices; nullopt otherwise. The sizes are 64-bit so that products of 32-bit descriptor
// values cannot wrap before they are checked.
std::optional<std::string> mesh_size_problem(uint64_t rows, uint64_t cols);

// Host ranks numbered row-major over a host grid (MGD: one rank per host of the mesh).
std::vector<std::vector<uint32_t>> row_major_host_ranks(uint32_t rows, uint32_t cols);

// A problem with one inter-mesh link: the message, and which end it is about (nullopt: the link).
struct LinkProblem {
    std::optional<int> end;  // 0 = from, 1 = to
    std::string message;
};

// Checks inter-mesh links one at a time as they are added: a link joins two different meshes,
// each port sends to one peer and receives from one peer, and the two directions of a cable use
// the same two ports. The ends may be on different routing planes (TG's gateways).
class InterMeshLinkChecker {
  public:
    explicit InterMeshLinkChecker(const MeshGraph& graph) : graph_(graph) {}

    // A port that does not exist: unknown mesh or device, a device not on the port's edge, or a
    // plane beyond ChipSpec::ports_per_direction.
    std::optional<std::string> port_problem(const MeshPort& port) const;

    // Adds `link`, called `name` in later messages ("Graph[3]").
    std::optional<LinkProblem> add(const InterMeshLink& link, const std::string& name);

  private:
    std::optional<LinkProblem> use(std::map<MeshPort, std::pair<MeshPort, std::string>>& used,
                                   int end, const MeshPort& port, const MeshPort& peer,
                                   const std::string& name, const char* verb) const;

    const MeshGraph& graph_;
    std::map<MeshPort, std::pair<MeshPort, std::string>> sends_;     // port -> (peer, entry)
    std::map<MeshPort, std::pair<MeshPort, std::string>> receives_;  // port -> (peer, entry)
};

}  // namespace fabric::detail
