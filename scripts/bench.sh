#!/usr/bin/env bash
# Benchmarks: figures, not tests. Builds the default preset, then prints each benchmark's figures.
# docs/PERFORMANCE.md records them beside the silicon numbers they compete with.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" default >/dev/null
b="$root/build"
echo "== machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
echo "== simulator speed: one tile, hand-encoded loops"
"$b/benchmarks/sim_speed/sim_speed" 20000000
echo "== simulator speed: compute-bound firmware (firmware/benchmarks/compute_bound.cpp)"
"$b/benchmarks/sim_speed/sim_speed" --elf "$b/firmware/wormhole_b0/compute_bound.elf"
echo "== Ethernet: bandwidth, round trip, ring latency (firmware on eth cores in the model)"
"$b/benchmarks/eth_bench/eth_bench" all
echo "== 1D fabric: bandwidth, latency per hop, router cost (routers + worker adapter in the model)"
"$b/benchmarks/fabric_bench/fabric_bench" all
echo "== fabric mux: bandwidth vs a direct router connection, fairness, header-only cost"
"$b/benchmarks/mux_bench/mux_bench" all
echo "== topology mapping: real-shaped clusters up to 128 chips (host only)"
"$b/benchmarks/map_bench/map_bench"
echo "== 2D fabric: 8x4 galaxy bring-up, all-to-all on 2x4 and 4x4 meshes vs the bisection bound"
"$b/benchmarks/mesh_bench/mesh_bench" all
echo "== parallel simulation: the galaxy bring-up and the all-to-all again, the chips on 2 threads"
"$b/benchmarks/mesh_bench/mesh_bench" bringup --threads 2
"$b/benchmarks/mesh_bench/mesh_bench" alltoall --quick --bytes 1024 --threads 2
echo "== sockets: a stream over one hop of the 1D and 2D fabric by page and ring size"
"$b/benchmarks/socket_bench/socket_bench"
echo "== collectives: ring all-gather, reduce-scatter, all-reduce on the t3k (1D ring, 2D mesh) by size and rings"
"$b/benchmarks/ccl_bench/ccl_bench"
exit 0
