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
#
# Mixtures of experts: the transformers-made checkpoints (FIXTURES/checkpoints/{mixtral,
# qwen3_moe,qwen2_moe}, when export_checkpoints.py has made them) are scored like the others
# (ckpt_<name>), and the numpy-made ones of test/Import/Inputs/moe_checkpoint.py (Mixtral,
# Qwen3-MoE, Qwen2-MoE with a shared expert; float64 reference logits; their tokens reach every
# expert) are written into WORK/moe_checkpoints when python3 has numpy and scored as
# moe_<family>; $GPU_FIXTURE_MOE=0 leaves them out.
#
# Every mixture-of-experts fixture is also compiled for h200 with quantised experts (by ACCELC, or
# found in $ACCEL_GPU_PLAN_DIR; without either it is reported not scored), -precision=int8-weight
# and -precision=fp8 (i8 / f8E4M3FN per expert and row; named <name>.int8-weight.plan /
# <name>.fp8.plan), and scored in bf16 within 6e-2 and 1.5e-1 of max |logit| (on the CPU in f32
# these precisions reach up to 2.6e-2 and 8.9e-2 on the moe_* fixtures, qwen2_moe the largest;
# bf16's own rounding adds up to 1.9e-2 there);
# $GPU_FIXTURE_MOE_QUANT=0 leaves them out.
#
# $GPU_FIXTURES (space-separated plan names, e.g. "moe_mixtral ckpt_mixtral") scores those alone;
# $GPU_FIXTURE_DTYPES (default "f32 bf16 f16") picks the compute dtypes.
score=$1 fixtures=$2 work=$3 accelc=$4
"$score" --probe || exit $?
mkdir -p "$work" || exit 2
plans=${ACCEL_GPU_PLAN_DIR:-$work}
status=0
# score_plan LABEL PLAN DIR ARGS...: accel-gpu-score PLAN against DIR's
# input_ids.npy and logits.npy with ARGS; a failure, or a plan whose decode
# did not replay from CUDA graphs or whose generated kernels did not run,
# sets status=1; no GPU exits 77.
score_plan() {
  label=$1 plan=$2 dir=$3
  shift 3
  echo "== $label"
  out=$("$score" "$plan" --ids "$dir/input_ids.npy" --ref "$dir/logits.npy" "$@" 2>&1)
  rc=$?
  echo "$out"
  [ $rc -eq 77 ] && exit 77
  [ $rc -ne 0 ] && { echo "FAIL: $label (exit $rc)"; status=1; }
  # The plan's generated kernels ran (accel-gpu-score prints the executor:
  # "..., N generated kernels (cubin for sm_90)"), unless
  # ACCEL_GPU_NO_CODEGEN=1 says the plans were built without them. Every op
  # of the plan runs on the GPU, so decode replays from CUDA graphs
  # (accel-gpu-score: "CUDA graphs: N captured", and "decode steps eager:
  # <why>" when it could not capture).
  if [ $rc -eq 0 ] && ! echo "$out" | grep -Eq "CUDA graphs: [1-9][0-9]* captured\$"; then
    echo "FAIL: $label did not replay decode from CUDA graphs"; status=1
  fi
  if [ "${ACCEL_GPU_NO_CODEGEN:-0}" = 0 ] && [ $rc -eq 0 ]; then
    echo "$out" | grep -q " generated kernels (" ||
      { echo "FAIL: $label did not run the plan's generated kernels"; status=1; }
  fi
}
moe_dirs=""
if [ "${GPU_FIXTURE_MOE:-1}" != 0 ] && python3 -c "import numpy" 2>/dev/null; then
  for family in mixtral qwen3_moe qwen2_moe; do
    if python3 "$fixtures/../Import/Inputs/moe_checkpoint.py" write $family \
         "$work/moe_checkpoints/$family" > "$work/moe_checkpoints.$family.log" 2>&1; then
      moe_dirs="$moe_dirs $work/moe_checkpoints/$family/"
    else
      cat "$work/moe_checkpoints.$family.log"; echo "FAIL: moe_checkpoint.py write $family"; status=1
    fi
  done
fi
ran=0
for target in ${GPU_FIXTURE_TARGETS:-h200 a100}; do
  suffix=""
  [ "$target" = a100 ] && suffix=".a100"
  # shellcheck disable=SC2086
  for dir in "$fixtures"/models/*/ "$fixtures"/demo/ "$fixtures"/checkpoints/*/ $moe_dirs; do
    dir=${dir%/}
    name=$(basename "$dir")
    model=$dir/model.onnx
    if [ -f "$dir/config.json" ] && [ ! -f "$model" ]; then
      model=$dir name=ckpt_$name # a checkpoint folder: accelc <dir>
      case $dir in "$work"/moe_checkpoints/*) name=moe_$(basename "$dir") ;; esac
    fi
    [ -e "$model" ] && [ -f "$dir/logits.npy" ] || continue
    if [ -n "${GPU_FIXTURES:-}" ]; then
      case " $GPU_FIXTURES " in *" $name "*) ;; *) continue ;; esac
    fi
    ran=$((ran + 1))
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
    for dt in ${GPU_FIXTURE_DTYPES:-f32 bf16 f16}; do
      # shellcheck disable=SC2086
      score_plan "$name ($target) $dt" "$plan" "$dir" --dtype $dt $extra
    done
  done
done
# Quantised experts (the moe step's _q GEMVs and dequantised cuBLASLt slices).
if [ "${GPU_FIXTURE_MOE_QUANT:-1}" != 0 ]; then
  # shellcheck disable=SC2086
  for dir in "$fixtures"/checkpoints/mixtral/ "$fixtures"/checkpoints/qwen3_moe/ \
             "$fixtures"/checkpoints/qwen2_moe/ $moe_dirs; do
    dir=${dir%/}
    [ -f "$dir/config.json" ] && [ -f "$dir/logits.npy" ] || continue
    name=ckpt_$(basename "$dir")
    case $dir in "$work"/moe_checkpoints/*) name=moe_$(basename "$dir") ;; esac
    for prec in int8-weight fp8; do
      qname=$name.$prec
      if [ -n "${GPU_FIXTURES:-}" ]; then
        case " $GPU_FIXTURES " in *" $name "* | *" $qname "*) ;; *) continue ;; esac
      fi
      tol=6e-2
      [ $prec = fp8 ] && tol=1.5e-1
      plan=$plans/$qname.plan
      if [ -n "$accelc" ]; then
        plan=$work/$qname.plan
        "$accelc" "$dir" -target=h200 -precision=$prec -o "$plan" ||
          { echo "FAIL: accelc -target=h200 -precision=$prec $name"; status=1; continue; }
      elif [ ! -f "$plan" ]; then
        echo "== $qname: not scored (no ACCELC, and no $plan)"; continue
      fi
      ran=$((ran + 1))
      score_plan "$qname (h200) bf16" "$plan" "$dir" --dtype bf16 --tol $tol
    done
  done
fi
if [ "$ran" = 0 ]; then
  echo "no fixture to score${GPU_FIXTURES:+ among: $GPU_FIXTURES}"
  [ $status = 0 ] && exit 77
fi
exit $status
