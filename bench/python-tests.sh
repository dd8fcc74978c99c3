#!/usr/bin/env bash
# The Python package on the GPU machine (no MLIR there): builds libfa_runtime and
# fa-run (-DFA_ENABLE_COMPILER=OFF), runs the Python package's tests with
# pytest against the kernels generated here by
#   PYTHONPATH=python python3 python/tests/make_kernels.py bench/python-kernels sm_90a
# (carried; gitignored), then bench/python_bench.py. The C++ launch
# (fa_mlir_native) is built first and required by the tests.
# Usage: bash bench/python-tests.sh [--no-bench]
set -u
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF \
  -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || { echo "build FAILED"; exit 1; }
export PYTHONPATH=python FA_MLIR_RUNTIME_LIB=build-gpu/runtime/libfa_runtime.so
export FA_MLIR_CACHE_DIR=bench/python-kernels FA_MLIR_REQUIRE_NATIVE=1
# The C++ launch (python/fa_mlir/_native.py), built here once, timed.
python3 -m fa_mlir._native
python3 -m pytest -v python/tests 2>&1 | grep -vE "^$|warnings.warn|DeprecationWarning" | tail -40
[ "${1:-}" = "--no-bench" ] || python3 bench/python_bench.py
