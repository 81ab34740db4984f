#!/bin/sh
# gpu-speculative.sh SCORE ACCEL_RUN ACCELC SOURCE WORKDIR
#
# Speculative decoding on the GPU (issue 23): the demo model and three
# fixtures compiled with -target=h100, greedy generation with prompt lookup,
# with the plan as its own draft (100% accepted) and with another plan of the
# same vocabulary as the draft (rollback) gives exactly the plain greedy
# tokens (test/Plan/Inputs/check_speculative.py); then the demo's HF tokens
# with an int8-weight draft. Exit 77 (skipped) without a GPU.
score=$1 run=$2 accelc=$3 src=$4 work=$5
"$score" --probe || exit $?
mkdir -p "$work" || exit 2
fx=$src/test/fixtures
# A second engine (the draft) shares the GPU: the target's KV cache takes
# less than the default 90% of it.
kv="--gpu-memory-utilization 0.6"
"$accelc" "$fx/models/mistral_op18/model.onnx" -target=h100 -o "$work/other.plan" || exit 1
python3 "$src/test/Plan/Inputs/check_speculative.py" --accel-run "$run" --accelc "$accelc" \
  --out "$work" --other "$work/other.plan" --target h100 --run-arg=--gpu-memory-utilization --run-arg=0.6 \
  "$fx/models/llama_op18" "$fx/models/qwen2_op18" "$fx/models/gemma2_op18" || exit 1
"$accelc" "$fx/demo/model.onnx" -target=h100 -o "$work/demo.plan" || exit 1
"$accelc" "$fx/demo/model.onnx" -target=h100 -precision=int8-weight -o "$work/demo-i8.plan" || exit 1
status=0
for spec in "--speculative-method ngram --num-speculative-tokens 4" \
            "--draft $work/demo.plan --num-speculative-tokens 4" \
            "--draft $work/demo-i8.plan --num-speculative-tokens 8"; do
  # shellcheck disable=SC2086
  "$run" "$work/demo.plan" $kv --prompt "In the beginning" -n 48 --print-ids $spec \
    > "$work/demo.out" 2> "$work/demo.err" || { cat "$work/demo.err"; exit 1; }
  tail -1 "$work/demo.err"
  python3 "$src/test/Plan/Inputs/check_generation.py" "$work/demo.out" \
    "$fx/demo/generated_ids.npy" "$fx/demo/generated.txt" ||
    { echo "FAIL: demo with $spec"; status=1; }
done
[ $status -eq 0 ] && echo "gpu-speculative: ok"
exit $status
