#!/usr/bin/env bash
# Regenerates the table of environment variables in docs/env.md from
# `accel-run --help-env` (runtime/Env.cpp's table): the lines between the
# BEGIN and END markers. With --check, fails when the committed copy differs
# instead. ACCEL_RUN names the binary (default: $ACCEL_BUILD_DIR/bin/accel-run).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${ACCEL_BUILD_DIR:-build}
RUN=${ACCEL_RUN:-$BUILD/bin/accel-run}
DOC=docs/env.md
BEGIN='<!-- BEGIN accel-run --help-env (scripts/update-env-doc.sh) -->'
END='<!-- END accel-run --help-env -->'
grep -qxF -- "$BEGIN" "$DOC" && grep -qxF -- "$END" "$DOC" || {
  echo "docs: $DOC lacks the markers '$BEGIN' and '$END'" >&2
  exit 1
}
table=$("$RUN" --help-env)
new=$(TABLE="$table" awk -v begin="$BEGIN" -v end="$END" '
  $0 == begin { print; print ENVIRON["TABLE"]; skip = 1; next }
  $0 == end { skip = 0 }
  !skip { print }' "$DOC")
if [ "${1:-}" = "--check" ]; then
  if [ "$new" != "$(cat "$DOC")" ]; then
    echo "docs: $DOC is out of date with accel-run --help-env; run scripts/update-env-doc.sh" >&2
    diff <(printf '%s\n' "$new") "$DOC" >&2 || true
    exit 1
  fi
else
  printf '%s\n' "$new" >"$DOC"
fi
