#!/usr/bin/env bash
# The installed package (docs/install.md): `cmake --install` of BUILD_DIR to
# a temporary prefix, examples/consumer (its own consumer-opt with fa-mlir's
# dialect, passes and pipelines) configured with find_package(FaMLIR),
# built and its lit test run; then the runtime alone (-DFA_ENABLE_COMPILER=OFF)
# built, installed, and examples/consumer-runtime (C, the runtime's C API)
# built against it and run. Any failure exits non-zero.
# Usage: bash scripts/check-install.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
LLVM_PREFIX=/usr/lib/llvm-22
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
jobs="-j${FA_JOBS:-2}"

cmake --install "$BUILD_DIR" --prefix "$TMP/prefix" >/dev/null
cmake -S examples/consumer -B "$TMP/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
  -DFaMLIR_DIR="$TMP/prefix/lib/cmake/fa-mlir" >"$TMP/consumer.log" 2>&1 \
  || { cat "$TMP/consumer.log"; exit 1; }
cmake --build "$TMP/consumer" "$jobs" --target consumer-opt >/dev/null
"$LLVM_PREFIX/bin/lit" -q "$TMP/consumer/test"

cmake -S . -B "$TMP/runtime" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null
cmake --build "$TMP/runtime" "$jobs" >/dev/null
cmake --install "$TMP/runtime" --prefix "$TMP/runtime-prefix" >/dev/null
cmake -S examples/consumer-runtime -B "$TMP/consumer-runtime" -G Ninja \
  -DFaMLIR_DIR="$TMP/runtime-prefix/lib/cmake/fa-mlir" >/dev/null
cmake --build "$TMP/consumer-runtime" >/dev/null
LD_LIBRARY_PATH="$TMP/runtime-prefix/lib" "$TMP/consumer-runtime/consumer-runtime"
echo "installed package: consumer-opt's lit test passed; the runtime alone installed and used from C"
