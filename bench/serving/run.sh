#!/usr/bin/env bash
# Served throughput of a plan (issue 19; docs/performance.md "Serving"): for each --max-num-seqs in
# $SEQS, starts `accel-run PLAN` as a server, sends $REQUESTS completion requests of $IN random
# token ids and $OUT_LEN new tokens each (greedy, ignore_eos) with as many in flight as the server
# runs (bench/serving/client.py), and prints one JSON line per setting: output tok/s, latency, and
# the step-time split from /metrics (host overhead = scheduler step time / engine time - 1).
#
#   bench/serving/run.sh model.plan
#
# Environment: ACCEL_BIN (default build/bin), SEQS (default "64 256 1024"), REQUESTS (2048), IN
# (128), OUT_LEN (128), BATCHED_TOKENS (--max-num-batched-tokens, default 8192), GPU_MEM
# (--gpu-memory-utilization, default 0.9), PORT (default 8765), RES (a file the JSON lines are
# appended to; default none), SERVE_FLAGS (more accel-run flags).
set -euo pipefail
cd "$(dirname "$0")/../.."
PLAN=${1:?usage: bench/serving/run.sh model.plan}
[ -f "$PLAN" ] || { echo "run.sh: no plan at '$PLAN'" >&2; exit 2; }
BIN=${ACCEL_BIN:-build/bin}
PORT=${PORT:-8765}
for seqs in ${SEQS:-64 256 1024}; do
  log=$(mktemp)
  # shellcheck disable=SC2086
  "$BIN/accel-run" "$PLAN" --port "$PORT" --max-num-seqs "$seqs" \
    --max-num-batched-tokens "${BATCHED_TOKENS:-8192}" --max-waiting "${REQUESTS:-2048}" \
    --gpu-memory-utilization "${GPU_MEM:-0.9}" --admission-ttft-target 0 ${SERVE_FLAGS:-} \
    > "$log" 2>&1 &
  server=$!
  up=0
  for _ in $(seq 1 600); do
    if ! kill -0 "$server" 2> /dev/null; then break; fi
    if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/health', timeout=2)" 2> /dev/null; then
      up=1
      break
    fi
    sleep 1
  done
  if [ "$up" != 1 ]; then
    echo "run.sh: the server did not come up at --max-num-seqs $seqs; its log:" >&2
    cat "$log" >&2
    kill "$server" 2> /dev/null || true
    exit 1
  fi
  line=$(python3 bench/serving/client.py --port "$PORT" --requests "${REQUESTS:-2048}" \
    --concurrency "$seqs" --input-len "${IN:-128}" --output-len "${OUT_LEN:-128}") || true
  kill "$server" 2> /dev/null || true
  wait "$server" 2> /dev/null || true
  line="{\"max_num_seqs\": $seqs, ${line#\{}"
  echo "$line"
  [ -n "${RES:-}" ] && echo "$line" >> "$RES"
  grep -E "CUDA graphs|accel: GPU memory" "$log" >&2 || true
  rm -f "$log"
done
