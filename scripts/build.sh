#!/usr/bin/env bash
# Configures and builds accel into ${ACCEL_BUILD_DIR:-build} (Release, Ninja,
# ccache when present). Extra arguments go to CMake.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${ACCEL_BUILD_DIR:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build "$BUILD" -j "${ACCEL_JOBS:-$(nproc)}"
