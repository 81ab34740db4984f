#!/usr/bin/env bash
# The main job on the built-in demo model: compile it to a plan, then
# generate text from it on the CPU.
#
# The demo model (test/fixtures/demo) is a 3 M-parameter Llama with real
# weights, trained on the King James Bible, with its own byte-level BPE
# tokenizer.json; see test/fixtures/demo/README.md. Extra arguments go to
# accel-run (for example: --prompt "And God said" --temperature 0.8 --seed 1).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${ACCEL_BUILD_DIR:-build}
scripts/build.sh >/dev/null
MODEL=test/fixtures/demo/model.onnx
PLAN="$BUILD/demo.plan"

echo "== accelc $MODEL -o $PLAN =="
"$BUILD/bin/accelc" "$MODEL" -o "$PLAN"
"$BUILD/bin/accel-run" "$PLAN" --describe | sed -n '1,9p'
echo "..."
echo
echo "== what raising made of it (accelc -emit=transformer) =="
"$BUILD/bin/accelc" "$MODEL" -emit=transformer -o "$BUILD/demo.transformer.mlir"
grep -oE '= transformer\.[a-z_]+' "$BUILD/demo.transformer.mlir" | sort | uniq -c | sort -rn
echo
echo "== the plan's logits vs HF transformers', token by token through the paged KV cache =="
"$BUILD/bin/accel-run" "$PLAN" --score test/fixtures/demo/input_ids.npy \
  --logits-out "$BUILD/demo-logits.npy" --chunk 1
python3 test/Inputs/compare_logits.py "$BUILD/demo-logits.npy" test/fixtures/demo/logits.npy
echo
if [ "$#" -gt 0 ]; then
  echo "== accel-run $PLAN $* =="
  "$BUILD/bin/accel-run" "$PLAN" "$@"
else
  echo "== accel-run $PLAN --prompt \"In the beginning\" -n 64 (greedy) =="
  "$BUILD/bin/accel-run" "$PLAN" --prompt "In the beginning" -n 64
  echo
  echo "== accel-run $PLAN --prompt \"And God said\" -n 64 --temperature 0.8 --top-p 0.95 --seed 1 =="
  "$BUILD/bin/accel-run" "$PLAN" --prompt "And God said" -n 64 --temperature 0.8 --top-p 0.95 --seed 1
fi
