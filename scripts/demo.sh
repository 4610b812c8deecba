#!/usr/bin/env bash
# The demo: build everything, then bring up the 2D fabric on a simulated T3000 (8 Wormhole chips
# as one 2 x 4 mesh, soc_descriptors/t3k_mesh_graph.yaml on t3k_cluster.yaml) on both routing
# planes, send 4 KiB packets from every chip to every other chip (dimension-ordered routes, X then
# Y), check every byte, print what each router moved and how fast, and terminate the routers.
# Extra arguments go to `fabricctl mesh run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" default
exec "$root/build/host/fabricctl" mesh run \
  --mesh-graph "$root/soc_descriptors/t3k_mesh_graph.yaml" \
  --cluster "$root/soc_descriptors/t3k_cluster.yaml" \
  --planes 0,1 --bytes 4096 --packets 64 "$@"
