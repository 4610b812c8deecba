#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, and nothing when they are all present.
# Idempotent; quiet when there is nothing to do. Run as root or with sudo available.
set -euo pipefail

packages=(
  cmake ninja-build g++ make           # host build
  ccache                                # a rebuild in a fresh clone reuses earlier compiles
  verilator                             # the SoC model (RTL -> C++)
  gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf picolibc-riscv64-unknown-elf  # firmware
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libfmt-dev   # descriptors, fabricctl, --json, formatting
  zlib1g-dev                            # FST waveforms (Verilator trace writer)
  libprotobuf-dev protobuf-compiler     # MGD 2.0 mesh graph descriptors (protobuf text format)
  catch2                                # unit tests
  clang libclang-rt-14-dev              # libFuzzer targets for the descriptor and ELF loaders
  qemu-system-misc                      # reference ISS for differential testing of our core
  python3                               # the cluster fixture generator (checked in ctest)
  clang-format                          # scripts/format.sh (the repository's .clang-format)
  chromium libpng-dev                   # `mesh show`'s page rendered headless in a test, its PNG read
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
