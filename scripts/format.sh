#!/usr/bin/env bash
# Formats every C++ source with clang-format, or with --check fails when a file would change.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.h' '*.cc' '*.cu' | grep -v '^build' || true)
[ ${#files[@]} -eq 0 ] && exit 0
if [ "${1:-}" = "--check" ]; then
  if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/hx-format.log; then
    echo "format-check: these files need 'make format':" >&2
    grep -oE '^[^:]+\.(h|cc|cu)' /tmp/hx-format.log | sort -u >&2
    exit 1
  fi
  echo "format-check: ${#files[@]} files clean"
else
  clang-format -i "${files[@]}"
fi
