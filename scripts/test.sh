#!/usr/bin/env bash
# The tests: build everything, then run the whole suite through ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" default
cd "$root"
ctest --preset default -j "$(nproc)" "$@"
