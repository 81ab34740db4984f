#!/usr/bin/env bash
# Installs everything accel needs to build and test on a fresh Debian 12
# machine: the system packages (LLVM/MLIR 22, ONNX, Protobuf, GoogleTest,
# OpenBLAS, CMake, Ninja, ccache) and the Python test tooling (numpy, onnx,
# onnxruntime, pinned below). Idempotent: a second run installs nothing and takes seconds.
# The CUDA toolkit is optional (found at /usr/local/cuda when present).
set -euo pipefail

APT_PACKAGES=(
  cmake ninja-build ccache g++ pkg-config
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
  libclang-rt-22-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libopenblas-dev libboost-dev libonig-dev
  python3 python3-pip
)
# onnx and onnxruntime are pinned: the ONNX conformance test (ctest
# onnx-conformance) exports its cases and expected values from them, and the
# lit tests compare with onnxruntime; a new release may add cases or change
# undefined values. A package with a different version is reinstalled.
PIP_PACKAGES=(numpy onnx==1.23.2 onnxruntime==1.32.0 tokenizers openai transformers==5.25.0 jsonschema)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "setup: system packages present"
fi

PY=${PYTHON:-python3}
pip_missing=()
for p in "${PIP_PACKAGES[@]}"; do
  name=${p%%==*}
  if [ "$name" != "$p" ]; then
    "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('$name') != '${p#*==}')" \
      2>/dev/null || pip_missing+=("$p")
  else
    "$PY" -c "import $p" 2>/dev/null || pip_missing+=("$p")
  fi
done
if [ ${#pip_missing[@]} -gt 0 ]; then
  echo "setup: pip installing ${pip_missing[*]}"
  "$PY" -m pip install -q --disable-pip-version-check "${pip_missing[@]}" ||
    "$PY" -m pip install -q --disable-pip-version-check --break-system-packages "${pip_missing[@]}"
else
  echo "setup: python test packages present"
fi

for tool in /usr/lib/llvm-22/bin/mlir-tblgen /usr/lib/llvm-22/bin/FileCheck /usr/lib/llvm-22/bin/lit; do
  [ -x "$tool" ] || { echo "setup: $tool is missing after install" >&2; exit 1; }
done
echo "setup: done"
