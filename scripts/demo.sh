#!/usr/bin/env bash
# The demo: build everything, then run the demo firmware on a simulated Wormhole Ethernet core.
# It prints from the core and exits with the firmware's status.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" default
exec "$root/build/host/fabricctl" sim run --arch wormhole_b0 --core 0 \
  "$root/build/firmware/wormhole_b0/hello.elf" "$@"
