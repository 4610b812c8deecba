// The descriptors in soc_descriptors/ (FABRIC_SOC_DESCRIPTOR_DIR of the test binary), each loaded
// once per binary: the tests share them instead of each file keeping its own loaders.
#pragma once

#include <map>
#include <string>

#include "fabric/cluster_descriptor.h"
#include "fabric/mesh_graph.h"
#include "fabric/soc_descriptor.h"

namespace fabric::test {

inline const std::string& descriptor_dir() {
    static const std::string dir = FABRIC_SOC_DESCRIPTOR_DIR;
    return dir;
}

// `file` in the descriptor folder, loaded (T::load_file) on first use.
template <typename T>
const T& descriptor(const std::string& file) {
    static std::map<std::string, T> loaded;
    auto it = loaded.find(file);
    if (it == loaded.end())
        it = loaded.emplace(file, T::load_file(descriptor_dir() + "/" + file)).first;
    return it->second;
}

inline const SocDescriptor& wh_soc() {
    return descriptor<SocDescriptor>("wormhole_b0_80_arch.yaml");
}
inline const SocDescriptor& bh_soc() {
    return descriptor<SocDescriptor>("blackhole_140_arch.yaml");
}
inline const ClusterDescriptor& cluster(const std::string& file) {
    return descriptor<ClusterDescriptor>(file);
}
inline const MeshGraph& mesh_graph(const std::string& file) {
    return descriptor<MeshGraph>(file);
}

}  // namespace fabric::test
