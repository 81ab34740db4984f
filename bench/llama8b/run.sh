#!/usr/bin/env bash
# The Llama-3-8B-shaped benchmark of issue 5, on the GPU machine (docs/performance.md):
# accel (accelc + accel-bench) and PyTorch + HF transformers (eager, static cache) in one run.
#
#   bench/llama8b/run.sh [PHASE...]        PHASE: export compile check bench hf summary (default: all)
#                                          checkpoint / compile-ckpt: the same model as a bf16 HF
#                                          checkpoint (save_pretrained, ~1 min) into LLAMA8B_CKPT
#                                          (default /dev/shm/llama8b-ckpt), and `accelc DIR` of it
#                                          into the plan (then check against its logits.npy)
#                                          export-bg / wait: the export detached, and waiting for it
#                                          (a device call is limited to 10 minutes; the 32-layer
#                                          export alone takes about 7: start it with export-bg in one
#                                          call, then run `wait compile check bench` in the next)
#
# Environment: ACCEL_BIN (accelc, accel-bench, accel-gpu-score; default build/bin), LLAMA8B_DIR
# (the exported model; default /dev/shm/llama8b: the 32 GB of fp32 weights stay in memory rather
# than on the machine's slow disk), LLAMA8B_PLAN (default /tmp/llama8b.plan: the 16 GB plan on disk
# leaves the machine's memory to accelc, about 62 GB at 32 layers), OUT (results;
# default bench/llama8b/out), ACCELC_FLAGS (default -precision=bf16), LLAMA8B_LAYERS (default 32).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${ACCEL_BIN:-build/bin}
DIR=${LLAMA8B_DIR:-/dev/shm/llama8b}
PLAN=${LLAMA8B_PLAN:-/tmp/llama8b.plan}
CKPT=${LLAMA8B_CKPT:-/dev/shm/llama8b-ckpt}
RES=${OUT:-bench/llama8b/out}
FLAGS=${ACCELC_FLAGS:--precision=bf16}
mkdir -p "$RES"
export PYTHONUNBUFFERED=1
phases=${*:-export compile check bench hf summary}
t() { date +%s; }
for phase in $phases; do
  start=$(t)
  case $phase in
    export)
      python3 bench/llama8b/export.py --out "$DIR" --layers "${LLAMA8B_LAYERS:-32}" --ref-tokens 16 ;;
    export-bg)
      mkdir -p "$DIR"
      setsid nohup python3 bench/llama8b/export.py --out "$DIR" --layers "${LLAMA8B_LAYERS:-32}" \
        --ref-tokens 16 > "$DIR.export.log" 2>&1 < /dev/null &
      echo "run.sh: export started in the background (log $DIR.export.log)" >&2 ;;
    wait)
      while pgrep -f "export.py --out $DIR" > /dev/null; do sleep 3; done
      tail -3 "$DIR.export.log" 2>/dev/null || true
      [ -f "$DIR/model.onnx" ] || { echo "run.sh: the export left no $DIR/model.onnx" >&2; exit 1; } ;;
    compile)
      # shellcheck disable=SC2086
      "$BIN/accelc" "$DIR/model.onnx" -target=h200 $FLAGS -no-tokenizer -o "$PLAN"
      ls -l "$PLAN"
      "$BIN/accel-run" "$PLAN" --describe | head -12 ;;
    checkpoint)
      python3 bench/llama8b/export_checkpoint.py --out "$CKPT" --layers "${LLAMA8B_LAYERS:-32}" ;;
    compile-ckpt)
      # shellcheck disable=SC2086
      /usr/bin/time -v "$BIN/accelc" "$CKPT" -target=h200 $FLAGS -no-tokenizer -o "$PLAN" 2>&1 |
        grep -E "error|Elapsed|Maximum resident" >&2
      "$BIN/accel-gpu-score" "$PLAN" --ids "$CKPT/input_ids.npy" --ref "$CKPT/logits.npy" \
        --dtype bf16 --tol 0.1 || true ;;
    check)
      # The plan's logits against HF's fp32 logits of the same random weights (a sanity check of
      # the 8B-shaped pipeline; the fixtures carry the strict numerics).
      "$BIN/accel-gpu-score" "$PLAN" --ids "$DIR/input_ids.npy" --ref "$DIR/logits.npy" \
        --dtype bf16 --tol 0.1 || true ;;
    bench)
      "$BIN/accel-bench" "$PLAN" --dtype bf16 --json "$RES/accel.json" ;;
    hf)
      python3 bench/llama8b/hf_baseline.py --model-dir "$DIR" --out "$RES/hf.json" ;;
    summary)
      python3 bench/llama8b/summarize.py "$RES/accel.json" "$RES/hf.json" | tee "$RES/summary.md" ;;
    *)
      echo "run.sh: unknown phase '$phase' (export export-bg wait checkpoint compile compile-ckpt check bench hf summary)" >&2
      exit 2 ;;
  esac
  echo "run.sh: $phase took $(( $(t) - start )) s" >&2
done
