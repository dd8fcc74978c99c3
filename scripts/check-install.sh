#!/usr/bin/env bash
# The installed package (docs/install.md), found the way MLIR's is: by
# prefix alone (CMAKE_PREFIX_PATH). `cmake --install` of BUILD_DIR to a
# temporary prefix, then:
#   examples/consumer-c    a C file including every fa-c header, calling
#                          MLIR's C API and fa-mlir's, linking
#                          FaMLIR::MLIRFACAPI alone: built and run;
#   examples/consumer      its own consumer-opt with fa-mlir's dialect,
#                          passes and pipelines: built, its lit test run;
# then the runtime alone (-DFA_ENABLE_COMPILER=OFF) built, installed, and
# examples/consumer-runtime (C, the runtime's C API) built against it and
# run. Any failure exits non-zero.
# Usage: bash scripts/check-install.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
LLVM_PREFIX=/usr/lib/llvm-22
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
jobs="-j${FA_JOBS:-2}"

# Configures examples/$1 into $TMP/$1 against prefix $2; prints the log on
# failure.
configure() {
  cmake -S "examples/$1" -B "$TMP/$1" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$2" >"$TMP/$1.log" 2>&1 || { cat "$TMP/$1.log"; exit 1; }
}

cmake --install "$BUILD_DIR" --prefix "$TMP/prefix" >/dev/null
configure consumer-c "$TMP/prefix"
cmake --build "$TMP/consumer-c" "$jobs" >/dev/null
"$TMP/consumer-c/consumer-c"

configure consumer "$TMP/prefix"
cmake --build "$TMP/consumer" "$jobs" --target consumer-opt >/dev/null
"$LLVM_PREFIX/bin/lit" -q "$TMP/consumer/test"

cmake -S . -B "$TMP/runtime" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null
cmake --build "$TMP/runtime" "$jobs" >/dev/null
cmake --install "$TMP/runtime" --prefix "$TMP/runtime-prefix" >/dev/null
configure consumer-runtime "$TMP/runtime-prefix"
cmake --build "$TMP/consumer-runtime" >/dev/null
LD_LIBRARY_PATH="$TMP/runtime-prefix/lib" "$TMP/consumer-runtime/consumer-runtime"
echo "installed package, found by prefix: the C consumer ran; consumer-opt's lit test passed; the runtime alone installed and used from C"
