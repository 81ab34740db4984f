#!/usr/bin/env bash
# Regenerates the dialect and pass reference (docs/dialects, docs/passes) from
# ODS. With --check, fails when the committed copies are out of date instead.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${ACCEL_BUILD_DIR:-build}
cmake --build "$BUILD" --target mlir-doc >/dev/null
status=0
for sub in dialects passes; do
  mkdir -p "docs/$sub"
  for f in "$BUILD/docs/$sub"/*.md; do
    dest="docs/$sub/$(basename "$f")"
    if [ "${1:-}" = "--check" ]; then
      if ! cmp -s "$f" "$dest"; then
        echo "docs: $dest is out of date with ODS; run scripts/update-docs.sh" >&2
        status=1
      fi
    else
      cp "$f" "$dest"
    fi
  done
done
exit $status
