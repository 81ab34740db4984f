#!/usr/bin/env bash
# Builds accel and runs every test that needs no GPU: lit (check-accel),
# gtest units, and a runtime-only build that proves accel-run links no
# LLVM/MLIR. GPU tests (ctest label `gpu`) are reported as skipped here.
# Last, the ONNX importer is fuzzed for ${ACCEL_FUZZ_SECONDS:-60} seconds
# and the plan loader for half that (ACCEL_FUZZ_SECONDS=0 skips both).
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

echo "== fuzz the ONNX importer (bounded) =="
# A Clang + libFuzzer + ASan build of only what the fuzzer links (the
# importer and the onnx dialect, instrumented), then a time-bounded run from
# a corpus of the fixture models and a few tiny ones. Any crash, abort,
# sanitizer report, leak, or input slower than -timeout fails the script and
# leaves the input under $FUZZ/artifacts (docs/building.md, "Fuzzing").
FUZZ_SECONDS=${ACCEL_FUZZ_SECONDS:-60}
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  FUZZ_BUILD="$BUILD-fuzz"
  if [ ! -f "$FUZZ_BUILD/build.ninja" ]; then
    cmake -S . -B "$FUZZ_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DACCEL_BUILD_FUZZERS=ON -DACCEL_BUILD_TESTS=OFF \
      -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" >/dev/null
  fi
  cmake --build "$FUZZ_BUILD" -j "${ACCEL_JOBS:-$(nproc)}" \
    --target accel-onnx-importer-fuzzer accel-plan-loader-fuzzer
  FUZZ="$ROOT/$FUZZ_BUILD/fuzz-run"
  case "$FUZZ_BUILD" in /*) FUZZ="$FUZZ_BUILD/fuzz-run" ;; esac
  rm -rf "$FUZZ" && mkdir -p "$FUZZ/corpus" "$FUZZ/artifacts"
  for m in test/fixtures/models/*/model.onnx; do
    cp "$m" "$FUZZ/corpus/$(basename "$(dirname "$m")").onnx"
  done
  for c in mlp no_value_info element_types ms_domain local_function optional_inputs \
           bad_shapes wrong_data_size not_sorted external; do
    python3 test/Import/Inputs/make_model.py "$c" "$FUZZ/seed/$c/model.onnx"
    cp "$FUZZ/seed/$c/model.onnx" "$FUZZ/corpus/$c.onnx"
  done
  if ! "$FUZZ_BUILD/bin/accel-onnx-importer-fuzzer" -max_total_time="$FUZZ_SECONDS" \
      -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 \
      -artifact_prefix="$FUZZ/artifacts/" "$FUZZ/corpus" >"$FUZZ/log" 2>&1; then
    tail -n 60 "$FUZZ/log" >&2
    echo "test: the ONNX importer fuzzer found a failure; the input is in $FUZZ/artifacts" \
         "(reproduce: $FUZZ_BUILD/bin/accel-onnx-importer-fuzzer <file>)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$FUZZ/log" | tail -n 1)
  echo "fuzz: ${runs:-?} executions in ${FUZZ_SECONDS} s, no failure (log: $FUZZ/log)"

  # The plan loader, from plans of three fixtures.
  PLAN_FUZZ="$FUZZ/plan"
  mkdir -p "$PLAN_FUZZ/corpus"
  for m in llama_op18 gemma2_op18 gpt2_op18; do
    "$BUILD/bin/accelc" "test/fixtures/models/$m/model.onnx" -o "$PLAN_FUZZ/corpus/$m.plan"
  done
  PLAN_SECONDS=$(( (FUZZ_SECONDS + 1) / 2 ))
  if ! "$FUZZ_BUILD/bin/accel-plan-loader-fuzzer" -max_total_time="$PLAN_SECONDS" \
      -rss_limit_mb=4096 -timeout=20 -max_len=1048576 -print_final_stats=1 \
      -artifact_prefix="$FUZZ/artifacts/" "$PLAN_FUZZ/corpus" >"$PLAN_FUZZ/log" 2>&1; then
    tail -n 60 "$PLAN_FUZZ/log" >&2
    echo "test: the plan loader fuzzer found a failure; the input is in $FUZZ/artifacts" \
         "(reproduce: $FUZZ_BUILD/bin/accel-plan-loader-fuzzer <file>)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$PLAN_FUZZ/log" | tail -n 1)
  echo "fuzz: plan loader ${runs:-?} executions in ${PLAN_SECONDS} s, no failure"
fi
