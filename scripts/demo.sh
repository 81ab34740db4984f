#!/usr/bin/env bash
# The main job on the built-in demo model, as far as accel goes today.
#
# Today: builds accel, imports a committed model (a tiny random-weight Llama
# exported from HF transformers by torch.onnx dynamo), raises it to the
# transformer dialect and runs it token by token through the paged KV cache
# on the CPU, comparing with HF's logits. Plans and text generation need the
# end-to-end work of issue 4; this script says so plainly at the end.
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
echo
echo "== accelc $MODEL -emit=transformer (the raised model) =="
"$BUILD/bin/accelc" "$MODEL" -emit=transformer -o "$BUILD/demo.transformer.mlir"
grep -oE '= (transformer|onnx)\.[a-z_A-Z]+' "$BUILD/demo.transformer.mlir" | grep -v Constant | sort | uniq -c | sort -rn
echo
echo "== the raised model, token by token through the paged KV cache, vs HF's logits =="
"$BUILD/bin/accelc" "$MODEL" -emit=transformer -interpret -interpret-chunk=1 \
  -input input_ids="$(dirname "$MODEL")/input_ids.npy" -output-dir "$BUILD/demo-out"
python3 test/Inputs/compare_logits.py "$BUILD/demo-out/logits.npy" "$(dirname "$MODEL")/logits.npy"
echo
echo "Not there yet: plans and 'accel-run --prompt' text generation on a trained"
echo "demo model (issue 4)."
