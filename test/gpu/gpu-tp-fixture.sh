#!/bin/sh
# gpu-tp-fixture.sh ACCEL_RUN FIXTURES WORKDIR [ACCELC]
#
# A tensor-parallel plan on two GPUs (TpGpuExecutor, NCCL): the fixture
# llama_op18 compiled with -target=h200 -tp=2 (by ACCELC when given; else
# the plan is $ACCEL_GPU_TP_PLAN, or $ACCEL_GPU_PLAN_DIR/llama_op18.tp2.plan)
# and scored by accel-run, whole and token by token (CUDA graphs for the
# decode steps, then --enforce-eager), in f32 (1e-4 of max |logit|) and bf16
# (2e-2), against its HF logits.npy. Exit 77 (skipped) without two GPUs or
# without NCCL ($ACCEL_LIBNCCL, docs/gpu-backend.md).
run=$1 fixtures=$2 work=$3 accelc=$4
dir=$fixtures/models/llama_op18
mkdir -p "$work" || exit 2
# NVLink multicast stays off on shared machines (docs/gpu-backend.md).
: "${NCCL_NVLS_ENABLE:=0}"
export NCCL_NVLS_ENABLE
plan=${ACCEL_GPU_TP_PLAN:-${ACCEL_GPU_PLAN_DIR:-$work}/llama_op18.tp2.plan}
if [ -n "$accelc" ]; then
  plan=$work/llama_op18.tp2.plan
  "$accelc" "$dir/model.onnx" -target=h200 -tp=2 -o "$plan" ||
    { echo "FAIL: accelc -target=h200 -tp=2 llama_op18"; exit 1; }
fi
[ -f "$plan" ] || { echo "FAIL: no plan $plan (set ACCEL_GPU_TP_PLAN)"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: no python3 (numpy) to compare logits"; exit 77; }
status=0
for dt in f32 bf16; do
  tol=2e-2
  [ "$dt" = f32 ] && tol=1e-4
  for mode in "--chunk 0" "--chunk 1" "--chunk 1 --enforce-eager" "--chunk 3"; do
    out=$work/llama_op18.tp2.$dt.npy
    rm -f "$out"
    echo "== llama_op18 -tp=2 $dt $mode"
    # shellcheck disable=SC2086
    msg=$("$run" "$plan" --score "$dir/input_ids.npy" --logits-out "$out" --dtype $dt \
          --gpu-memory-utilization 0.2 $mode 2>&1)
    rc=$?
    echo "$msg"
    if [ $rc -ne 0 ]; then
      case $msg in
      *"this machine has"*|*"need NCCL"*|*"no NVIDIA driver"*|*"sees no GPU"*)
        echo "SKIP: $msg"; exit 77 ;;
      esac
      echo "FAIL: llama_op18 -tp=2 $dt $mode (exit $rc)"; status=1; continue
    fi
    python3 - "$out" "$dir/logits.npy" "$tol" <<'PY' || status=1
import sys
import numpy as np
got, want, tol = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64), float(sys.argv[3])
got, want = got.reshape(-1, want.shape[-1]), want.reshape(-1, want.shape[-1])
if got.shape != want.shape:
    print(f"FAIL: logits {got.shape}, reference {want.shape}"); sys.exit(1)
rel = np.abs(got - want).max() / max(1e-30, np.abs(want).max())
agree = (got.argmax(-1) == want.argmax(-1)).mean()
print(f"max |diff| / max |logit| = {rel:.3g} (tolerance {tol:g}), argmax agreement {agree:.3f}")
sys.exit(0 if rel <= tol else 1)
PY
  done
done
exit $status
