#!/usr/bin/env bash
# The tests: build everything, run the whole suite through ctest, then build the release preset
# too (build only: every preset the README documents must build, -O3 warnings included).
# FABRIC_SKIP_RELEASE_BUILD=1 leaves the release build out (a quick local run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" default
cd "$root"
ctest --preset default -j "$(nproc)" "$@"
if [[ "${FABRIC_SKIP_RELEASE_BUILD:-0}" != 1 ]]; then
    "$root/scripts/build.sh" release
fi
