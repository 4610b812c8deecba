#!/usr/bin/env bash
# Long fuzzing campaigns with libFuzzer: builds the host library and the four fuzz targets with
# clang (-fsanitize=fuzzer,address,undefined) in build-fuzz/, seeds a corpus per target from the
# shipped descriptors, the firmware images of the default build and fuzz/regressions/, and runs
# each target for SECONDS (default 600). Crashes, leaks, timeouts (10 s) and allocations above
# 1 GiB (RSS above 2 GiB) are reported by libFuzzer and saved to build-fuzz/artifacts/.
#
#   fuzz/run_libfuzzer.sh [SECONDS] [TARGET...]      TARGET: soc_descriptor cluster_descriptor
#                                                           mesh_graph elf (default: all)
# Needs clang and libclang-rt-14-dev (scripts/setup.sh installs them).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(soc_descriptor cluster_descriptor mesh_graph elf)
out="$root/build-fuzz"

cmake -S "$root/fuzz" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ > "$out.configure.log" 2>&1 ||
    { cat "$out.configure.log"; exit 1; }
cmake --build "$out" -j"${FUZZ_JOBS:-2}" --target $(printf 'fuzz_%s ' "${targets[@]}")

seed_files() {
    local d="$root/soc_descriptors"
    case "$1" in
        soc_descriptor) ls "$d"/*_arch.yaml ;;
        cluster_descriptor) ls "$d"/*cluster*.yaml; find "$d/clusters" -name '*.yaml' 2>/dev/null || true ;;
        mesh_graph) ls "$d"/*mesh_graph* ;;
        elf) find "$root/build/firmware" -name '*.elf' 2>/dev/null | head -20 || true ;;
    esac
    find "$root/fuzz/regressions/$1" -type f 2>/dev/null || true
}

mkdir -p "$out/artifacts"
for t in "${targets[@]}"; do
    corpus="$out/corpus/$t"
    mkdir -p "$corpus"
    seed_files "$t" | while read -r f; do [ -f "$f" ] && cp -f "$f" "$corpus/"; done
    dict=()
    [ "$t" != elf ] && dict=(-dict="$root/fuzz/yaml.dict")
    echo "== $t: $seconds s"
    set +e
    "$out/fuzz_$t" "$corpus" "${dict[@]}" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=1048576 -print_final_stats=1 \
        -artifact_prefix="$out/artifacts/$t-" > "$out/$t.log" 2>&1
    status=$?
    set -e
    grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added)|ERROR|SUMMARY" \
        "$out/$t.log" || true
    echo "== $t: exit $status (log: $out/$t.log)"
done
