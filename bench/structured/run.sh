#!/usr/bin/env bash
# The cost of constrained decoding (issue 24's bar): accel-run on an 8B-shaped plan (with the
# 128,256-token tokenizer of make_tokenizer.py) at --max-num-seqs 64; 256 requests of 128 random
# prompt ids, 128 new tokens, temperature 1, 64 in flight: unconstrained (ignore_eos), json_object,
# json_schema and regex; client.py prints output tok/s and how many outputs validate.
#
#   bench/structured/run.sh PLAN [OUT_DIR]      (ACCEL_BIN: accel-run's folder, default build/bin)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
PLAN=$1
RES=${2:-bench/structured/out}
BIN=${ACCEL_BIN:-build/bin}
mkdir -p "$RES"
PORT=${STRUCTURED_PORT:-18123}
"$BIN/accel-run" "$PLAN" --port "$PORT" --max-num-seqs 64 --served-model-name m \
  > "$RES/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 240); do
  curl -sf "http://127.0.0.1:$PORT/health" > /dev/null 2>&1 && break
  sleep 0.5
done
python3 bench/structured/client.py "$PORT" 64 64 128 16 none > /dev/null # warm-up
for mode in none json_object json_schema regex none; do
  python3 bench/structured/client.py "$PORT" 256 64 128 128 "$mode" | tee -a "$RES/results.jsonl"
done
kill "$pid"; wait "$pid" 2>/dev/null
