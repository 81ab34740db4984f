#!/usr/bin/env bash
# The main job on the built-in demo model, as far as accel goes today.
#
# Today: builds accel and imports a committed model (a tiny Llama exported
# from HF transformers by torch.onnx dynamo) into the onnx dialect. Compiling
# to a plan and generating text need the end-to-end work of issue 4; this
# script says so plainly at the end instead of pretending.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${ACCEL_BUILD_DIR:-build}
scripts/build.sh >/dev/null
MODEL=test/fixtures/models/llama_op18/model.onnx

echo "== accelc $MODEL -emit=onnx (first lines) =="
"$BUILD/bin/accelc" "$MODEL" -emit=onnx -o "$BUILD/demo.onnx.mlir"
head -n 12 "$BUILD/demo.onnx.mlir"
echo "..."
echo
echo "== op histogram of the imported graph =="
grep -oE '= onnx\.[A-Za-z_]+' "$BUILD/demo.onnx.mlir" | sort | uniq -c | sort -rn | head -n 15
echo
echo "Not there yet: -emit=transformer (raising, issue 3), plans and"
echo "'accel-run --prompt' text generation on a trained demo model (issue 4)."
