#!/usr/bin/env bash
# The mixture-of-experts benchmark of issue 22, on the GPU machine (one H200): a Mixtral-8x7B-shaped
# model with MOE_LAYERS layers (default 2; hidden 4096, intermediate 14336, 8 experts, top-2,
# 32 query / 8 KV heads, vocab 32000; random bf16 weights), accel (accelc + accel-bench) and a
# PyTorch reference of the same checkpoint (transformers' MixtralForCausalLM, bf16, static cache,
# torch.compile where it works) in one run, summarised in OUT/summary.{md,json}.
#
#   bench/moe/run.sh [PHASE...]     PHASE: checkpoint compile check bench torch summary
#                                   (default: all, in that order; about 6-8 minutes)
#
#   checkpoint  mixtral_bench.py checkpoint: the model made on the GPU, save_pretrained (bf16
#               safetensors) into MOE_CKPT, with input_ids.npy and fp32 logits.npy of the rounded
#               weights (16 tokens)
#   compile     accelc MOE_CKPT -target=h200 -precision=MOE_PRECISION -no-tokenizer -o MOE_PLAN
#   check       accel-gpu-score against logits.npy, bf16, --tol 0.1 (a sanity check of the big
#               shapes; the fixtures carry the strict numerics; never fails the run)
#   bench       accel-bench: decode ms/step at batch 1/16/64 (128-token prompts, 64 tokens) and
#               the median of three 2048-token prefills -> OUT/accel.json
#   torch       mixtral_bench.py torch: the same decode and prefill in PyTorch, timed as
#               ../shared/peers/gptfast_peer.py times (CUDA events between steps, median)
#               -> OUT/torch.json
#   summary     mixtral_bench.py summary -> OUT/summary.md, OUT/summary.json
#
# Environment: ACCEL_BIN (accelc, accel-bench, accel-gpu-score; default build/bin), MOE_LAYERS
# (default 2), MOE_CKPT (default /dev/shm/mixtral-bench), MOE_PLAN (default
# /dev/shm/mixtral-bench.plan), OUT (default bench/moe/out), MOE_BATCHES (default 1,16,64),
# MOE_COMPILE (torch.compile mode for the PyTorch decode step: reduce-overhead (default),
# default, none), MOE_COMPILE_BUDGET_S (default 240: torch.compile is skipped for what is left
# once compiling took that long), MOE_PRECISION (accelc -precision, default bf16; int8-weight or
# fp8 time the quantised experts' kernels against the same bf16 PyTorch reference).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
BIN=${ACCEL_BIN:-build/bin}
LAYERS=${MOE_LAYERS:-2}
CKPT=${MOE_CKPT:-/dev/shm/mixtral-bench}
PLAN=${MOE_PLAN:-/dev/shm/mixtral-bench.plan}
RES=${OUT:-bench/moe/out}
BATCHES=${MOE_BATCHES:-1,16,64}
PRECISION=${MOE_PRECISION:-bf16}
mkdir -p "$RES"
export PYTHONUNBUFFERED=1
phases=${*:-checkpoint compile check bench torch summary}
ms() { echo $(( $(date +%s%N) / 1000000 )); }
all=$(ms)
status=0
for phase in $phases; do
  start=$(ms)
  echo "run.sh: == $phase" >&2
  rc=0
  case $phase in
    checkpoint)
      python3 bench/moe/mixtral_bench.py checkpoint --out "$CKPT" --layers "$LAYERS" || rc=$? ;;
    compile)
      "$BIN/accelc" "$CKPT" -target=h200 -precision="$PRECISION" -no-tokenizer -o "$PLAN" || rc=$?
      ls -l "$PLAN" >&2 || true
      "$BIN/accel-run" "$PLAN" --describe 2>/dev/null | grep -m 3 "= moe(" >&2 || true ;;
    check)
      "$BIN/accel-gpu-score" "$PLAN" --ids "$CKPT/input_ids.npy" --ref "$CKPT/logits.npy" \
        --dtype bf16 --tol 0.1 || echo "run.sh: check: accel-gpu-score exit $? (not fatal)" >&2 ;;
    bench)
      "$BIN/accel-bench" "$PLAN" --dtype bf16 --batch-sizes "$BATCHES" --input-len 128 \
        --output-len 64 --prefill-len 2048 --json "$RES/accel.json" || rc=$? ;;
    torch)
      python3 bench/moe/mixtral_bench.py torch --model-dir "$CKPT" --out "$RES/torch.json" \
        --batches "$BATCHES" --compile "${MOE_COMPILE:-reduce-overhead}" \
        --compile-budget "${MOE_COMPILE_BUDGET_S:-240}" || rc=$? ;;
    summary)
      python3 bench/moe/mixtral_bench.py summary --accel "$RES/accel.json" \
        --torch "$RES/torch.json" --out "$RES" || rc=$? ;;
    *)
      echo "run.sh: unknown phase '$phase' (checkpoint compile check bench torch summary)" >&2
      exit 2 ;;
  esac
  took=$(( $(ms) - start ))
  printf 'run.sh: %s took %d.%03d s (exit %d)\n' "$phase" $((took / 1000)) $((took % 1000)) "$rc" >&2
  [ $rc -ne 0 ] && status=1
done
took=$(( $(ms) - all ))
printf 'run.sh: all phases took %d.%03d s\n' $((took / 1000)) $((took % 1000)) >&2
exit $status
