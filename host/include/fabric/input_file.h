// Bounded reading of the files users hand the host (descriptors, firmware images). Every loader
// reads through read_input_file: the file must be a regular file (a directory, FIFO, socket or
// device such as /dev/zero is Error(BadInput), not an allocation failure or a hang) no larger than
// the limit of its kind, checked before anything is allocated for it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fabric {

// One kind of input file and the bounds the loaders put on it.
struct InputKind {
    std::string_view name;    // "SoC descriptor": used in messages
    uint64_t max_bytes;       // larger files are refused before they are read
    uint32_t max_yaml_nodes;  // YAML kinds: scalars + collections + aliases (0: not YAML)
};

// yaml-cpp keeps about 480 bytes per node (measured: 240 B of memory per byte of "[0,0,...]"), so
// the node caps below bound what a descriptor can make the parser allocate.

// tt-umd's SoC descriptors are about 3 KB and 600 nodes; a full 64 x 64 grid listing every core
// is about 5,000 nodes and 40 KB. The caps leave room for comments and four times that.
inline constexpr InputKind kSocDescriptorInput{"SoC descriptor", 256u << 10, 20'000};

// At most this many chips in a cluster descriptor. The largest published clusters have 128 chips
// (four Galaxies); a cluster eight times that is still a plausible file, while a 10,000-chip file
// is refused before anything per chip is built from it (the simulator models each chip's NOCs
// eagerly, about 3.6 MB per chip).
inline constexpr uint32_t kMaxClusterChips = 1024;
// A fully cabled chip takes about 90 nodes of connections and 40 of per-chip fields in tt-umd's
// block style (~14 bytes a node): 1024 such chips are ~130,000 nodes and ~2 MB, twice that for
// ethernet_connections_to_remote_devices as well. Worst case ~150 MB of YAML nodes.
inline constexpr InputKind kClusterDescriptorInput{"cluster descriptor", 4u << 20, 300'000};

// tt-metal's mesh graph descriptors (YAML or MGD text) are under 10 KB; the largest graph we
// expect (hundreds of meshes and their connections) stays far below these.
inline constexpr InputKind kMeshGraphInput{"mesh graph descriptor", 1u << 20, 100'000};

// The largest firmware image of this build with debug information is under 400 KB, and what an
// image may load is at most 2 MiB (elf.cpp); 16 MiB leaves room for big symbol tables.
inline constexpr InputKind kElfInput{"firmware image", 16u << 20, 0};

// The whole file `path` as bytes. Error(BadInput) naming the path for a file that cannot be opened
// or read, that is not a regular file ("not a regular file (a directory)"), or that is larger
// than kind.max_bytes ("file is N bytes; a <kind> is at most M bytes").
std::string read_input_file(const std::string& path, const InputKind& kind);

// Text files must be text: UTF-8 without NUL bytes or control characters other than tab, line
// feed and carriage return (yaml-cpp silently decodes text with NULs as UTF-16/32 and passes
// escape sequences through). Error(BadDescriptor) "<source>:<line>:<col>: ..." for the first
// offending byte.
void check_text(std::string_view text, const std::string& source);

// read_input_file, then check_text.
std::string read_text_file(const std::string& path, const InputKind& kind);

}  // namespace fabric
