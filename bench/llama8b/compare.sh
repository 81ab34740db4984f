#!/usr/bin/env bash
# Several plans of the Llama-3-8B-shaped model side by side, in one run on the GPU machine
# (docs/performance.md: FP8 vs BF16 for issue 7, TP=2 vs TP=1 for issue 8):
#
#   bench/llama8b/compare.sh NAME=FLAGS...     e.g. bf16="-precision=bf16" fp8="-precision=w8a8-fp8"
#                                              tp2="-precision=bf16 -tp=2"
#
# For each NAME: accelc FLAGS -target=h200 into $PLAN_DIR/NAME.plan (up to $JOBS compiles at a time:
# each takes about 62 GB of memory at 32 layers), the plan's logits against HF's fp32 logits
# (accel-gpu-score on one GPU; a -tp plan through accel-run --score on as many), then accel-bench
# (decode batches 1, 16, 64 after a 128-token prompt, one 2048-token prefill) into $RES/NAME.json.
# The check reports the error (a random 32-layer model compounds quantisation error: w8a8-fp8 is
# about 0.5 of max |logit| off HF fp32 there); it fails nothing.
# The model is bench/llama8b/run.sh's export ($LLAMA8B_DIR, default /dev/shm/llama8b);
# compare_summary.py prints the table. Environment: ACCEL_BIN (default build/bin), RES (default
# bench/llama8b/out), PLAN_DIR (default /tmp), JOBS (default 2), PHASES (default
# "compile check bench").
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${ACCEL_BIN:-build/bin}
DIR=${LLAMA8B_DIR:-/dev/shm/llama8b}
RES=${RES:-bench/llama8b/out}
PLAN_DIR=${PLAN_DIR:-/tmp}
JOBS=${JOBS:-2}
mkdir -p "$RES"
names=()
declare -A flags
for spec in "$@"; do
  names+=("${spec%%=*}")
  flags[${spec%%=*}]=${spec#*=}
done
[ ${#names[@]} -gt 0 ] || { echo "usage: compare.sh NAME=FLAGS..." >&2; exit 2; }
t() { date +%s; }
for phase in ${PHASES:-compile check bench}; do
  start=$(t)
  for name in "${names[@]}"; do
    plan=$PLAN_DIR/$name.plan
    case $phase in
      compile)
        while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 2; done
        # shellcheck disable=SC2086
        ( /usr/bin/time -f "$name: accelc %e s, %M KB peak" "$BIN/accelc" "$DIR/model.onnx" \
            -target=h200 ${flags[$name]} -no-tokenizer -o "$plan" > "$RES/$name.compile.log" 2>&1
          echo "$name: accelc exit $? ($(du -h "$plan" 2>/dev/null | cut -f1))"
          tail -1 "$RES/$name.compile.log" ) & ;;
      check)
        if [[ "${flags[$name]}" == *-tp=* ]]; then
          "$BIN/accel-run" "$plan" --score "$DIR/input_ids.npy" --logits-out "$RES/$name.logits.npy" \
            > "$RES/$name.check.log" 2>&1 &&
            python3 test/Precision/Inputs/compare_precision.py "$RES/$name.logits.npy" \
              "$DIR/logits.npy" --rtol 1 --min-agree 0 2>&1 | sed "s/^/$name: /"
        else
          "$BIN/accel-gpu-score" "$plan" --ids "$DIR/input_ids.npy" --ref "$DIR/logits.npy" \
            --dtype bf16 --tol 1 2>&1 | tail -3 | sed "s/^/$name: /"
        fi ;;
      bench)
        "$BIN/accel-bench" "$plan" --dtype bf16 --json "$RES/$name.json" > "$RES/$name.bench.log" 2>&1
        echo "$name: accel-bench exit $?"; grep -E "decode step|prefill" "$RES/$name.bench.log" ;;
      *)
        echo "compare.sh: unknown phase '$phase' (compile check bench)" >&2; exit 2 ;;
    esac
  done
  wait
  echo "compare.sh: $phase took $(( $(t) - start )) s" >&2
done
