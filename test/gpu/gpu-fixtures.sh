#!/bin/sh
# gpu-fixtures.sh SCORE FIXTURES WORKDIR [ACCELC]
#
# Compiles every fixture (FIXTURES/models/*, FIXTURES/demo, and the Hugging
# Face checkpoint folders FIXTURES/checkpoints/*, whose plans are named
# ckpt_<name>.plan) twice, with
# -target=h200 and with -target=a100 (when ACCELC is given; else the plans
# must be in $ACCEL_GPU_PLAN_DIR, named <fixture>.plan and, for the a100
# pass, <fixture>.a100.plan), and scores each on the GPU in f32, bf16 and f16
# against its HF logits.npy (accel-gpu-score: whole, token by token,
# split-KV decode, ragged batch). Both plans carry generated kernels
# (docs/codegen.md): on an sm_90 GPU the h200 plan loads their cubin and the
# a100 (sm_80) plan their PTX, which the driver compiles. The demo model also
# checks greedy agreement with generated_ids.npy. Every plan must capture its
# decode steps in CUDA graphs (no host step, nothing eager). Exit 77 (skipped) without a
# GPU. $GPU_FIXTURE_TARGETS (default "h200 a100") picks the targets.
score=$1 fixtures=$2 work=$3 accelc=$4
"$score" --probe || exit $?
mkdir -p "$work" || exit 2
plans=${ACCEL_GPU_PLAN_DIR:-$work}
status=0
for target in ${GPU_FIXTURE_TARGETS:-h200 a100}; do
  suffix=""
  [ "$target" = a100 ] && suffix=".a100"
  for dir in "$fixtures"/models/*/ "$fixtures"/demo/ "$fixtures"/checkpoints/*/; do
    dir=${dir%/}
    name=$(basename "$dir")
    model=$dir/model.onnx
    if [ -f "$dir/config.json" ] && [ ! -f "$model" ]; then
      model=$dir name=ckpt_$name # a checkpoint folder: accelc <dir>
    fi
    [ -e "$model" ] && [ -f "$dir/logits.npy" ] || continue
    plan=$plans/$name$suffix.plan
    if [ -n "$accelc" ]; then
      plan=$work/$name$suffix.plan
      "$accelc" "$model" -target=$target -o "$plan" ||
        { echo "FAIL: accelc -target=$target $name"; status=1; continue; }
    fi
    [ -f "$plan" ] || { echo "FAIL: no plan $plan (set ACCEL_GPU_PLAN_DIR)"; status=1; continue; }
    extra=""
    if [ -f "$dir/generated_ids.npy" ]; then
      extra="--generated $dir/generated_ids.npy --prompt-len 4"
    fi
    for dt in f32 bf16 f16; do
      echo "== $name ($target) $dt"
      # shellcheck disable=SC2086
      out=$("$score" "$plan" --ids "$dir/input_ids.npy" --ref "$dir/logits.npy" --dtype $dt $extra 2>&1)
      rc=$?
      echo "$out"
      [ $rc -eq 77 ] && exit 77
      [ $rc -ne 0 ] && { echo "FAIL: $name ($target) $dt (exit $rc)"; status=1; }
      # The plan's generated kernels ran (accel-gpu-score prints the
      # executor: "..., N generated kernels (cubin for sm_90)"), unless
      # ACCEL_GPU_NO_CODEGEN=1 says the plans were built without them.
      # Every op of the plan runs on the GPU, so decode replays from CUDA
      # graphs (accel-gpu-score: "CUDA graphs: N captured", and "decode
      # steps eager: <why>" when it could not capture).
      if [ $rc -eq 0 ] && ! echo "$out" | grep -Eq "CUDA graphs: [1-9][0-9]* captured\$"; then
        echo "FAIL: $name ($target) $dt did not replay decode from CUDA graphs"; status=1
      fi
      if [ "${ACCEL_GPU_NO_CODEGEN:-0}" = 0 ] && [ $rc -eq 0 ]; then
        echo "$out" | grep -q " generated kernels (" ||
          { echo "FAIL: $name ($target) $dt did not run the plan's generated kernels"; status=1; }
      fi
    done
  done
done
exit $status
