#!/bin/sh
# gpu-fixtures.sh SCORE FIXTURES WORKDIR [ACCELC]
#
# Compiles every fixture (FIXTURES/models/*, FIXTURES/demo) with
# -target=h200 (when ACCELC is given; else the plans must be in
# $ACCEL_GPU_PLAN_DIR, named <fixture>.plan) and scores each on the GPU in
# f32, bf16 and f16 against its HF logits.npy (accel-gpu-score: whole,
# token by token, split-KV decode, ragged batch). The demo model also checks
# greedy agreement with generated_ids.npy. Exit 77 (skipped) without a GPU.
score=$1 fixtures=$2 work=$3 accelc=$4
"$score" --probe || exit $?
mkdir -p "$work" || exit 2
plans=${ACCEL_GPU_PLAN_DIR:-$work}
status=0
for dir in "$fixtures"/models/*/ "$fixtures"/demo/; do
  dir=${dir%/}
  name=$(basename "$dir")
  [ -f "$dir/model.onnx" ] && [ -f "$dir/logits.npy" ] || continue
  plan=$plans/$name.plan
  if [ -n "$accelc" ]; then
    plan=$work/$name.plan
    "$accelc" "$dir/model.onnx" -target=h200 -o "$plan" || { echo "FAIL: accelc $name"; status=1; continue; }
  fi
  [ -f "$plan" ] || { echo "FAIL: no plan $plan (set ACCEL_GPU_PLAN_DIR)"; status=1; continue; }
  extra=""
  if [ -f "$dir/generated_ids.npy" ]; then
    extra="--generated $dir/generated_ids.npy --prompt-len 4"
  fi
  for dt in f32 bf16 f16; do
    echo "== $name $dt"
    # shellcheck disable=SC2086
    "$score" "$plan" --ids "$dir/input_ids.npy" --ref "$dir/logits.npy" --dtype $dt $extra
    rc=$?
    [ $rc -eq 77 ] && exit 77
    [ $rc -ne 0 ] && { echo "FAIL: $name $dt (exit $rc)"; status=1; }
  done
done
exit $status
