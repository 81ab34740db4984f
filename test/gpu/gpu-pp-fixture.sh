#!/bin/sh
# gpu-pp-fixture.sh ACCEL_RUN FIXTURES WORKDIR [ACCELC]
#
# Pipelined plans on the GPU (TpGpuExecutor: one GpuExecutor per stage, the
# stages handing over through device memory, GpuPipeline.h); on a machine
# with one GPU the stages share it. llama_op18 and the demo model are
# compiled with -target=h200 at -pp=1 and -pp=2 (the demo at -pp=4 too) by
# ACCELC when given (else the plans are those of $ACCEL_GPU_PLAN_DIR or
# WORKDIR named <fixture>.pp<M>.plan: at least the -pp=2 ones) and scored by
# accel-run, whole, token by token (CUDA graphs), token by token eagerly and
# in chunks of 3, and at -tp=2 -pp=2 with --share-gpus (plans named
# <fixture>.pptp2pp2.plan):
#   - f32: within 1e-4 of HF's logits.npy, and within 1e-6 of max |logit|
#     of the same fixture at -pp=1 on the GPU (when that plan is there;
#     1e-5 at -tp=2, whose ranks sum their partials apart);
#   - bf16: within 2e-2 of HF's;
# then the demo's greedy generation at -pp=2 (and 4, and -tp=2 -pp=2)
# against HF's generated_ids.npy, from accel-run and from one completion
# served over HTTP at -pp=2 and -tp=2 -pp=2 (its text against /detokenize
# of HF's ids). Exit 77 (skipped)
# without a GPU. $ACCEL_PP_FIXTURES picks the fixtures (default: both).
run=$1 fixtures=$2 work=$3 accelc=$4
mkdir -p "$work" || exit 2
plans=${ACCEL_GPU_PLAN_DIR:-$work}
command -v python3 >/dev/null || { echo "SKIP: no python3 (numpy) to compare logits"; exit 77; }
status=0
compare() { # got want tol
  python3 - "$1" "$2" "$3" <<'PY'
import sys
import numpy as np
got, want, tol = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64), float(sys.argv[3])
got, want = got.reshape(-1, want.shape[-1]), want.reshape(-1, want.shape[-1])
if got.shape != want.shape:
    print(f"FAIL: logits {got.shape}, reference {want.shape}"); sys.exit(1)
rel = np.abs(got - want).max() / max(1e-30, np.abs(want).max())
agree = (got.argmax(-1) == want.argmax(-1)).mean()
print(f"  max |diff| / max |logit| = {rel:.3g} (tolerance {tol:g}), argmax agreement {agree:.3f}")
sys.exit(0 if rel <= tol else 1)
PY
}
for fixture in ${ACCEL_PP_FIXTURES:-llama_op18 demo}; do
  dir=$fixtures/models/$fixture
  [ "$fixture" = demo ] && dir=$fixtures/demo
  # "tp2pp2": -tp=2 -pp=2, run with --share-gpus (the ranks share a GPU
  # where there is one).
  stages="1 2 tp2pp2"
  [ "$fixture" = demo ] && stages="1 2 4 tp2pp2"
  for pp in $stages; do
    plan=$plans/$fixture.pp$pp.plan
    if [ -n "$accelc" ]; then
      plan=$work/$fixture.pp$pp.plan
      split=-pp=$pp
      [ "$pp" = tp2pp2 ] && split="-tp=2 -pp=2"
      # shellcheck disable=SC2086
      "$accelc" "$dir/model.onnx" -target=h200 $split -o "$plan" ||
        { echo "FAIL: accelc -target=h200 $split $fixture"; exit 1; }
    fi
    [ -f "$plan" ] || [ "$pp" != 2 ] || { echo "FAIL: no plan $plan"; exit 1; }
  done
  for dt in f32 bf16; do
    for mode in "--chunk 0" "--chunk 1" "--chunk 1 --enforce-eager" "--chunk 3"; do
      tag=$(echo "$mode" | tr -d ' -')
      for pp in $stages; do
        [ -f "$plans/$fixture.pp$pp.plan" ] || continue
        out=$work/$fixture.pp$pp.$dt.$tag.npy
        rm -f "$out"
        echo "== $fixture -pp=$pp $dt $mode"
        # shellcheck disable=SC2086
        share=""
        [ "$pp" = tp2pp2 ] && share=--share-gpus
        # shellcheck disable=SC2086
        msg=$("$run" "$plans/$fixture.pp$pp.plan" --score "$dir/input_ids.npy" --logits-out "$out" \
              --dtype $dt --gpu-memory-utilization 0.3 $mode $share 2>&1)
        rc=$?
        if [ $rc -ne 0 ]; then
          echo "$msg"
          case $msg in
          *"no NVIDIA driver"*|*"sees no GPU"*|*"libcuda"*) echo "SKIP: $msg"; exit 77 ;;
          esac
          echo "FAIL: $fixture -pp=$pp $dt $mode (exit $rc)"; status=1; continue
        fi
        tol=2e-2
        [ "$dt" = f32 ] && tol=1e-4
        compare "$out" "$dir/logits.npy" $tol || { echo "FAIL: $fixture -pp=$pp $dt $mode against HF"; status=1; }
        if [ "$pp" != 1 ] && [ "$dt" = f32 ] && [ -f "$work/$fixture.pp1.$dt.$tag.npy" ]; then
          echo "  against -pp=1 on the GPU:"
          same=1e-6 # the same kernels in the same order; TP sums its partials apart
          [ "$pp" = tp2pp2 ] && same=1e-5
          compare "$out" "$work/$fixture.pp1.$dt.$tag.npy" $same ||
            { echo "FAIL: $fixture -pp=$pp $dt $mode against -pp=1"; status=1; }
        fi
      done
    done
  done
done

# Greedy generation of the demo at -pp=2 (and 4, and -tp=2 -pp=2 with
# --share-gpus) against HF's tokens (the first 4 ids of generated_ids.npy
# are the prompt); then one completion served over HTTP at -pp=2 and at
# -tp=2 -pp=2: HF's greedy tokens (as text).
case " ${ACCEL_PP_FIXTURES:-llama_op18 demo} " in *" demo "*) ;; *) exit $status ;; esac
demo=$fixtures/demo
python3 -c "import numpy as np; a = np.load('$demo/generated_ids.npy').reshape(-1); np.save('$work/prompt.npy', a[:4])" || exit 1
for pp in 2 4 tp2pp2; do
  [ -f "$plans/demo.pp$pp.plan" ] || continue
  share=""
  [ "$pp" = tp2pp2 ] && share=--share-gpus
  echo "== demo -pp=$pp greedy generation"
  # shellcheck disable=SC2086
  ids=$("$run" "$plans/demo.pp$pp.plan" --prompt-ids "$work/prompt.npy" -n 48 --ignore-eos --print-ids \
        --gpu-memory-utilization 0.3 $share 2>/dev/null | grep -E '^ids:' | head -1)
  python3 - "$demo/generated_ids.npy" "$ids" <<'PY' || { echo "FAIL: demo -pp=$pp greedy"; status=1; }
import re, sys
import numpy as np
want = [int(v) for v in np.load(sys.argv[1]).reshape(-1)[4:]]
got = [int(v) for v in re.findall(r"-?\d+", sys.argv[2])]
got = got[-len(want):] if len(got) >= len(want) else got
same = sum(1 for a, b in zip(got, want) if a == b)
print(f"  {same} of {len(want)} tokens equal HF's" + ("" if got == want else f": got {got}"))
sys.exit(0 if got == want else 1)
PY
done

for pp in 2 tp2pp2; do
  [ -f "$plans/demo.pp$pp.plan" ] || { [ "$pp" = tp2pp2 ] && continue; echo "FAIL: no plan $plans/demo.pp$pp.plan"; exit 1; }
  share=""
  [ "$pp" = tp2pp2 ] && share=--share-gpus
  log=$work/serve.pp$pp.log
  # shellcheck disable=SC2086
  "$run" "$plans/demo.pp$pp.plan" --port 0 --gpu-memory-utilization 0.3 $share > "$log" 2>&1 &
  pid=$!
  port=""
  for _ in $(seq 1 120); do
    port=$(grep -oE 'serving .* at http://[^ ]*:[0-9]+' "$log" | grep -oE '[0-9]+$' | head -1)
    [ -n "$port" ] && break
    sleep 1
  done
  if [ -z "$port" ]; then
    cat "$log"; echo "FAIL: demo -pp=$pp did not start serving"; kill $pid 2>/dev/null; exit 1
  fi
  python3 - "$port" "$demo/generated_ids.npy" "$pp" <<'PY' || { cat "$log"; echo "FAIL: the served completion at -pp=$pp"; status=1; }
import json, sys, urllib.request
import numpy as np
base = f"http://127.0.0.1:{sys.argv[1]}"
ids = [int(v) for v in np.load(sys.argv[2]).reshape(-1)]
def post(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=120))
name = json.load(urllib.request.urlopen(base + "/v1/models", timeout=60))["data"][0]["id"]
got = post("/v1/completions", {"model": name, "prompt": ids[:4], "max_tokens": len(ids) - 4,
                               "temperature": 0, "ignore_eos": True})["choices"][0]["text"]
want = post("/detokenize", {"model": name, "tokens": ids[4:]})["prompt"]
print(f"== served demo -pp={sys.argv[3]}: {got!r}")
if got != want:
    print(f"FAIL: HF's tokens read {want!r}"); sys.exit(1)
PY
  kill $pid 2>/dev/null; wait $pid 2>/dev/null
done
exit $status
