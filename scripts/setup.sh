#!/usr/bin/env bash
# Installs what is missing, configures and builds fa-mlir, builds the fuzz
# targets (clang, ASan+UBSan, in <build-dir>-fuzz), then runs the main job.
# Usage: bash scripts/setup.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
FUZZ_DIR="${BUILD_DIR%/}-fuzz"
LLVM_PREFIX=/usr/lib/llvm-22

packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libgtest-dev
          ninja-build ccache cmake g++ clang-22 libfuzzer-22-dev)
missing=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

echo "== configuring $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
  -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
  -DMLIR_LINK_MLIR_DYLIB=ON >/dev/null

echo "== building (-j${FA_JOBS:-2})"
cmake --build "$BUILD_DIR" -j"${FA_JOBS:-2}"

# The libFuzzer targets (fuzz/, docs/reliability.md): clang with ASan, UBSan
# and coverage over the project's code, in a build directory of their own.
# Only the libraries the targets need are built.
echo "== configuring $FUZZ_DIR (fuzz targets, clang-22)"
cmake -S . -B "$FUZZ_DIR" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
  -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
  -DMLIR_LINK_MLIR_DYLIB=ON -DFA_ENABLE_TESTS=OFF -DFA_ENABLE_FUZZERS=ON >/dev/null

echo "== building the fuzz targets (-j${FA_JOBS:-2})"
cmake --build "$FUZZ_DIR" -j"${FA_JOBS:-2}" --target fa-fuzzers
bash fuzz/make-corpus.sh "$FUZZ_DIR/corpus"

echo "== main job: examples/attention.mlir through fa-opt"
bash scripts/main-job.sh "$BUILD_DIR"
