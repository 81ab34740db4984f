#!/usr/bin/env bash
# Builds accel and runs every test that needs no GPU: lit (check-accel),
# gtest units, and a runtime-only build that proves accel-run links no
# LLVM/MLIR. GPU tests (ctest label `gpu`) are reported as skipped here.
# Last, every libFuzzer target (test/fuzz) runs briefly: the ONNX importer,
# the plan loader, the HTTP request parser, the tokenizer.json loader, the
# JSON parser, request validation and chat-template rendering, sharing
# ${ACCEL_FUZZ_SECONDS:-120} seconds (ACCEL_FUZZ_SECONDS=0 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${ACCEL_BUILD_DIR:-build}

scripts/build.sh

echo "== runtime-only build (no LLVM/MLIR) =="
cmake -S . -B "$BUILD-runtime" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DACCEL_BUILD_COMPILER=OFF -DACCEL_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD-runtime" -j "${ACCEL_JOBS:-$(nproc)}" --target accel-run
if ldd "$BUILD-runtime/bin/accel-run" | grep -Ei 'libLLVM|libMLIR|libprotobuf'; then
  echo "test: the runtime-only accel-run links LLVM/MLIR or a shared protobuf" >&2
  exit 1
fi

echo "== ctest =="
(cd "$BUILD" && ctest --output-on-failure -j "${ACCEL_JOBS:-$(nproc)}" "$@")

echo "== fuzz every parser of outside input (bounded) =="
# A Clang + libFuzzer + ASan build of only what the fuzzers link (the
# libraries under test instrumented), then a time-bounded run of each
# target from its seed corpus. ACCEL_FUZZ_SECONDS (default 120; 0 skips) is
# the budget of all targets together, shared by weight (the importer 3
# parts, the plan loader, HTTP parser and tokenizer 2, the others 1). Any
# crash, abort, sanitizer report, leak, or input slower than -timeout fails
# the script and leaves the input under $FUZZ/artifacts (docs/building.md,
# "Fuzzing").
FUZZ_SECONDS=${ACCEL_FUZZ_SECONDS:-120}
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
           openai-request:1 chat-template:1)
  targets=()
  for f in "${FUZZERS[@]}"; do targets+=("accel-${f%%:*}-fuzzer"); done
  cmake --build "$FUZZ_BUILD" -j "${ACCEL_JOBS:-$(nproc)}" --target "${targets[@]}"
  FUZZ="$ROOT/$FUZZ_BUILD/fuzz-run"
  case "$FUZZ_BUILD" in /*) FUZZ="$FUZZ_BUILD/fuzz-run" ;; esac
  rm -rf "$FUZZ" && mkdir -p "$FUZZ/artifacts"

  # Seeds. The importer: the fixture models and a few tiny ones.
  mkdir -p "$FUZZ/onnx-importer/corpus"
  for m in test/fixtures/models/*/model.onnx; do
    cp "$m" "$FUZZ/onnx-importer/corpus/$(basename "$(dirname "$m")").onnx"
  done
  for c in mlp no_value_info element_types ms_domain local_function optional_inputs \
           bad_shapes wrong_data_size not_sorted external huge_no_data; do
    python3 test/Import/Inputs/make_model.py "$c" "$FUZZ/seed/$c/model.onnx"
    cp "$FUZZ/seed/$c/model.onnx" "$FUZZ/onnx-importer/corpus/$c.onnx"
  done
  # The plan loader: plans of three fixtures.
  mkdir -p "$FUZZ/plan-loader/corpus"
  for m in llama_op18 gemma2_op18 gpt2_op18; do
    "$BUILD/bin/accelc" "test/fixtures/models/$m/model.onnx" \
      -o "$FUZZ/plan-loader/corpus/$m.plan"
  done
  # The others: test/fuzz/make_seeds.py.
  for t in http-request tokenizer json openai-request chat-template; do
    python3 test/fuzz/make_seeds.py "$t" "$FUZZ/$t/corpus"
  done

  total_weight=0
  for f in "${FUZZERS[@]}"; do total_weight=$((total_weight + ${f##*:})); done
  for f in "${FUZZERS[@]}"; do
    name=${f%%:*}
    seconds=$(( (FUZZ_SECONDS * ${f##*:} + total_weight - 1) / total_weight ))
    extra=()
    [ "$name" = plan-loader ] && extra=(-max_len=1048576)
    if ! "$FUZZ_BUILD/bin/accel-$name-fuzzer" -max_total_time="$seconds" \
        -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 "${extra[@]}" \
        -artifact_prefix="$FUZZ/artifacts/" "$FUZZ/$name/corpus" >"$FUZZ/$name/log" 2>&1; then
      tail -n 60 "$FUZZ/$name/log" >&2
      echo "test: the $name fuzzer found a failure; the input is in $FUZZ/artifacts" \
           "(reproduce: $FUZZ_BUILD/bin/accel-$name-fuzzer <file>)" >&2
      exit 1
    fi
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$FUZZ/$name/log" | tail -n 1)
    echo "fuzz: $name ${runs:-?} executions in $seconds s, no failure (log: $FUZZ/$name/log)"
  done
fi
