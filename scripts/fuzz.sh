#!/usr/bin/env bash
# Fuzzes every parser of outside input, briefly (scripts/test.sh runs it
# last; docs/building.md, "Fuzzing"): a Clang + libFuzzer + ASan build of
# only what the fuzzers link (the libraries under test instrumented, in
# ${ACCEL_BUILD_DIR:-build}-fuzz), then a time-bounded run of each target
# from its seed corpus: the ONNX importer, the plan loader, the HTTP request
# parser, the tokenizer.json loader, the JSON parser, request validation and
# chat-template rendering, structured-output constraints, the Jinja
# interpreter on any template. Arguments name targets to run only those
# (scripts/fuzz.sh json http-request).
#
# ACCEL_FUZZ_SECONDS (default 120; 0 skips) is the budget of all targets
# together, shared by weight (the importer 3 parts; the plan loader, HTTP
# parser and tokenizer 2; the others 1). ACCEL_FUZZ_RUNS=N instead runs each
# target to N executions, however long that takes (the long runs that
# docs/building.md records). Any crash, abort, sanitizer report,
# leak, or input slower than -timeout fails the script and leaves the input
# under $FUZZ/artifacts. Needs ${ACCEL_BUILD_DIR:-build}/bin/accelc (the
# plan loader's seeds are compiled fixtures): scripts/build.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${ACCEL_BUILD_DIR:-build}

FUZZ_SECONDS=${ACCEL_FUZZ_SECONDS:-120}
FUZZ_RUNS=${ACCEL_FUZZ_RUNS:-0}
[ "$FUZZ_RUNS" -gt 0 ] && FUZZ_SECONDS=1 # any positive: the runs bound each target
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  FUZZ_BUILD="$BUILD-fuzz"
  if [ ! -f "$FUZZ_BUILD/build.ninja" ]; then
    cmake -S . -B "$FUZZ_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DACCEL_BUILD_FUZZERS=ON -DACCEL_BUILD_TESTS=OFF \
      -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" >/dev/null
  fi
  # name:weight, in the order they run.
  FUZZERS=(onnx-importer:3 plan-loader:2 http-request:2 tokenizer:2 json:1
           openai-request:1 chat-template:1 structured:1 jinja:1)
  if [ $# -gt 0 ]; then # only the targets named (the budget is theirs)
    chosen=()
    for want in "$@"; do
      found=""
      for f in "${FUZZERS[@]}"; do [ "${f%%:*}" = "$want" ] && found=$f; done
      [ -n "$found" ] || { echo "fuzz: no target '$want' (${FUZZERS[*]%%:*})" >&2; exit 2; }
      chosen+=("$found")
    done
    FUZZERS=("${chosen[@]}")
  fi
  targets=()
  for f in "${FUZZERS[@]}"; do targets+=("accel-${f%%:*}-fuzzer"); done
  cmake --build "$FUZZ_BUILD" -j "${ACCEL_JOBS:-$(nproc)}" --target "${targets[@]}"
  FUZZ="$ROOT/$FUZZ_BUILD/fuzz-run"
  case "$FUZZ_BUILD" in /*) FUZZ="$FUZZ_BUILD/fuzz-run" ;; esac
  rm -rf "$FUZZ" && mkdir -p "$FUZZ/artifacts"

  # Seeds: the importer's are the fixture models and a few tiny ones, the
  # plan loader's plans of three fixtures, the others' test/fuzz/make_seeds.py.
  for f in "${FUZZERS[@]}"; do
    name=${f%%:*}
    mkdir -p "$FUZZ/$name/corpus"
    case $name in
      onnx-importer)
        for m in test/fixtures/models/*/model.onnx; do
          cp "$m" "$FUZZ/$name/corpus/$(basename "$(dirname "$m")").onnx"
        done
        for c in mlp no_value_info element_types ms_domain local_function optional_inputs \
                 bad_shapes wrong_data_size not_sorted external huge_no_data; do
          python3 test/Import/Inputs/make_model.py "$c" "$FUZZ/seed/$c/model.onnx"
          cp "$FUZZ/seed/$c/model.onnx" "$FUZZ/$name/corpus/$c.onnx"
        done ;;
      plan-loader)
        for m in llama_op18 gemma2_op18 gpt2_op18; do
          "$BUILD/bin/accelc" "test/fixtures/models/$m/model.onnx" -o "$FUZZ/$name/corpus/$m.plan"
        done ;;
      *) python3 test/fuzz/make_seeds.py "$name" "$FUZZ/$name/corpus" ;;
    esac
  done

  total_weight=0
  for f in "${FUZZERS[@]}"; do total_weight=$((total_weight + ${f##*:})); done
  for f in "${FUZZERS[@]}"; do
    name=${f%%:*}
    seconds=$(( (FUZZ_SECONDS * ${f##*:} + total_weight - 1) / total_weight ))
    bound=(-max_total_time="$seconds")
    [ "$FUZZ_RUNS" -gt 0 ] && bound=(-runs="$FUZZ_RUNS")
    extra=()
    [ "$name" = plan-loader ] && extra=(-max_len=1048576)
    start=$(date +%s)
    if ! "$FUZZ_BUILD/bin/accel-$name-fuzzer" "${bound[@]}" \
        -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 "${extra[@]}" \
        -artifact_prefix="$FUZZ/artifacts/" "$FUZZ/$name/corpus" >"$FUZZ/$name/log" 2>&1; then
      tail -n 60 "$FUZZ/$name/log" >&2
      echo "fuzz: the $name fuzzer found a failure; the input is in $FUZZ/artifacts" \
           "(reproduce: $FUZZ_BUILD/bin/accel-$name-fuzzer <file>)" >&2
      exit 1
    fi
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$FUZZ/$name/log" | tail -n 1)
    took=$(( $(date +%s) - start ))
    echo "fuzz: $name ${runs:-?} executions in $took s, no failure (log: $FUZZ/$name/log)"
  done
fi
