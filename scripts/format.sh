#!/usr/bin/env bash
# Formats every C and C++ file git tracks with the repository's .clang-format (clang-format 14,
# Debian's). `--check` changes nothing: it lists the files that differ and fails if there are any.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.c' '*.cc' '*.cpp' '*.h' '*.hpp')
if [ "${1:-}" = "--check" ]; then
  drift=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || drift+=("$f")
  done
  if [ ${#drift[@]} -ne 0 ]; then
    printf 'not formatted (run scripts/format.sh): %s\n' "${drift[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format"
else
  clang-format -i "${files[@]}"
fi
