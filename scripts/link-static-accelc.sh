#!/usr/bin/env bash
# Links an accelc that carries LLVM/MLIR (and OpenBLAS) inside it, from a built tree's objects,
# for machines without LLVM 22 (the GPU machine: bench/llama8b/run.sh compiles the 8B-shaped model
# there, since its weights cannot travel). Only libprotobuf.so.32, libonnx_proto.so.1 and
# libzstd.so.1 stay shared; they are copied to OUT/lib:
#
#   scripts/link-static-accelc.sh [BUILD=build] [OUT=build/static]
#   OUT/bin/accelc (about 100 MB stripped with the NVPTX backend, 19 MB with xz -6), OUT/lib/*.so*
#   on the other machine: LD_LIBRARY_PATH=OUT/lib OUT/bin/accelc model.onnx ...
# (carry it xz-compressed: a device call carries at most 64 MiB of working tree)
#
# The objects are the ones the normal (shared-LLVM) build compiled: only the link differs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-$BUILD/static}
LLVM_LIB=/usr/lib/llvm-22/lib
MULTIARCH=/usr/lib/x86_64-linux-gnu
cmake --build "$BUILD" --target accelc
mkdir -p "$OUT/bin" "$OUT/lib"
shopt -s nullglob
accel_libs=("$BUILD"/lib/libAccel*.a "$BUILD"/lib/libaccel_*.a)
blas=()
[ -f "$MULTIARCH/openblas-pthread/libopenblas.a" ] &&
  blas=("$MULTIARCH/openblas-pthread/libopenblas.a" "$(gcc -print-file-name=libgfortran.a)"
        "$(gcc -print-file-name=libquadmath.a)")
g++ -O2 -o "$OUT/bin/accelc" -Wl,--gc-sections \
  "$BUILD"/tools/accelc/CMakeFiles/accelc.dir/*.o \
  -Wl,--start-group "${accel_libs[@]}" "$LLVM_LIB"/libMLIR*.a "$LLVM_LIB"/libLLVM*.a -Wl,--end-group \
  "$MULTIARCH/libonnx_proto.so.1" "$MULTIARCH/libprotobuf.so" "${blas[@]}" \
  "$MULTIARCH/libz.a" "$MULTIARCH/libzstd.so.1" -ldl -lpthread
strip "$OUT/bin/accelc"
cp -L "$MULTIARCH/libprotobuf.so.32" "$MULTIARCH/libonnx_proto.so.1" "$MULTIARCH/libzstd.so.1" "$OUT/lib/"
if ldd "$OUT/bin/accelc" | grep -Ei 'libLLVM|libMLIR|openblas'; then
  echo "link-static-accelc: the binary still links LLVM/MLIR/OpenBLAS dynamically" >&2
  exit 1
fi
ls -l "$OUT/bin/accelc"
