#!/usr/bin/env bash
# The demo: build everything, then bring up the 1D fabric on a simulated T3000 (8 Wormhole chips,
# the ring 0-1-2-3-7-6-5-4 from soc_descriptors/t3k_cluster.yaml), send 4 KiB packets from a
# worker on every chip to every other chip, check every byte, print what each router moved and
# how fast, and terminate the routers. Extra arguments go to `fabricctl fabric run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" default
exec "$root/build/host/fabricctl" fabric run \
  --cluster "$root/soc_descriptors/t3k_cluster.yaml" --topology ring --chips 0,1,2,3,7,6,5,4 \
  --pattern all-to-all --size 4096 --packets 64 "$@"
