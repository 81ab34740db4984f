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
scripts/fuzz.sh
