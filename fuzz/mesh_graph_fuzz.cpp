// Fuzz target: the mesh graph descriptor loader (MeshGraph::parse, which tells the YAML form from
// the MGD 2.0 text form).
#include "fabric/input_file.h"
#include "fabric/mesh_graph.h"
#include "fuzz_target.h"
#include "yaml_dictionary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fabric::kMeshGraphInput.max_bytes) return 0;  // load_file refuses these
    fabric::fuzz::accept_or_refuse(
        [&] { (void)fabric::MeshGraph::parse(fabric::fuzz::as_text(data, size), "fuzz.yaml"); });
    return 0;
}

namespace fabric::fuzz {

std::vector<std::string> builtin_seeds() {
    return {};
}

std::vector<std::string> dictionary() {
    return yaml_tokens({"ChipSpec:",
                        "Board:",
                        "Mesh:",
                        "Graph:",
                        "RoutingTableGenerator:",
                        "arch: ",
                        "ethernet_ports:",
                        "N: ",
                        "E: ",
                        "S: ",
                        "W: ",
                        "name: ",
                        "type: ",
                        "topology: ",
                        "board: ",
                        "device_topology: ",
                        "host_topology: ",
                        "Mesh",
                        "TORUS_XY",
                        "TORUS_2D",
                        "mesh_descriptors {",
                        "graph_descriptors {",
                        "top_level_instance {",
                        "device_topology { dims: [ 4, 2 ] }",
                        "dim_types: [ RING, LINE ]",
                        "channels { count: 4 policy: STRICT }",
                        "instances { mesh { mesh_descriptor: \"M0\" mesh_id: 0 } }",
                        "connections {",
                        "nodes {",
                        "arch: WORMHOLE_B0",
                        "}"});
}

}  // namespace fabric::fuzz
