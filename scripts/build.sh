#!/usr/bin/env bash
# Configure and build one preset (default: "default"): host library, fabricctl, the Verilated
# model, the firmware ELFs and the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
preset=${1:-default}
"$root/scripts/setup.sh"
cd "$root"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
