#!/usr/bin/env bash
# Builds (incrementally) and runs every test: the lit suite (check-fa) and the
# GoogleTest/CTest suite. Prints both counts. Usage: bash scripts/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
[ -f "$BUILD_DIR/build.ninja" ] || { echo "no build in $BUILD_DIR: run scripts/setup.sh first" >&2; exit 2; }
cmake --build "$BUILD_DIR" -j"${FA_JOBS:-2}"

status=0
echo "== lit (check-fa)"
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" >"$BUILD_DIR/lit.log" 2>&1 || status=1
grep -vE "^(PASS|UNSUPPORTED):" "$BUILD_DIR/lit.log" || true

echo "== ctest (GoogleTest + checks)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"${FA_JOBS:-2}" >"$BUILD_DIR/ctest.log" 2>&1 || status=1
grep -vE "Test +#[0-9]+:.*Passed|Start +[0-9]+:" "$BUILD_DIR/ctest.log" || true

lit_total=$(grep -oE "Total Discovered Tests: [0-9]+" "$BUILD_DIR/lit.log" | grep -oE "[0-9]+$" || echo 0)
lit_passed=$(grep -oE "Passed *: *[0-9]+" "$BUILD_DIR/lit.log" | grep -oE "[0-9]+$" || echo 0)
lit_unsupported=$(grep -oE "Unsupported *: *[0-9]+" "$BUILD_DIR/lit.log" | grep -oE "[0-9]+$" || echo 0)
ctest_line=$(grep -E "tests passed|tests failed" "$BUILD_DIR/ctest.log" || echo "no ctest summary")
echo "== summary: lit ${lit_passed}/${lit_total} passed (${lit_unsupported} unsupported here: GPU-only); ctest: ${ctest_line}"
exit $status
