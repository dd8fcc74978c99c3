#!/usr/bin/env bash
# Runs one fuzz target for a bounded time over its seed corpus and the
# committed crash reproducers (fuzz/crashes/<target>/, so a fixed crash stays
# fixed). Exits 1 on any crash, timeout, out-of-memory or sanitizer report,
# printing the reproducer's path and the report's summary.
# Usage: bash fuzz/run.sh TARGET SECONDS [BUILD_DIR] [libFuzzer flags...]
#   TARGET: fa-fuzz-mlir, fa-fuzz-manifest or fa-fuzz-spec
# Log: BUILD_DIR/logs/TARGET.log; new crashes: BUILD_DIR/crashes/TARGET/;
# the corpus grows in BUILD_DIR/corpus/<mlir|manifest|spec>/. FA_FUZZ_LOG,
# FA_FUZZ_ARTIFACTS and FA_FUZZ_CORPUS override those three (a long run next
# to CI's). With -fork=1 -ignore_crashes=1 a run goes on past crashes; any
# file it leaves in the artifacts directory still fails it.
set -uo pipefail
cd "$(dirname "$0")/.."
TARGET="$1"; SECONDS_BUDGET="$2"; BUILD_DIR="${3:-build-fuzz}"
shift $(( $# < 3 ? $# : 3 ))
BIN="$BUILD_DIR/bin/$TARGET"
[ -x "$BIN" ] || { echo "no $BIN: run scripts/setup.sh (it builds the fuzz targets)" >&2; exit 2; }
case "$TARGET" in
  fa-fuzz-mlir) corpus=mlir; dict=fuzz/dicts/mlir.dict ;;
  fa-fuzz-manifest) corpus=manifest; dict=fuzz/dicts/json.dict ;;
  fa-fuzz-spec) corpus=spec; dict=fuzz/dicts/spec.dict ;;
  *) echo "unknown target $TARGET" >&2; exit 2 ;;
esac
[ -d "$BUILD_DIR/corpus/$corpus" ] || bash fuzz/make-corpus.sh "$BUILD_DIR/corpus" >/dev/null
LOG="${FA_FUZZ_LOG:-$BUILD_DIR/logs/$TARGET.log}"
ARTIFACTS="${FA_FUZZ_ARTIFACTS:-$BUILD_DIR/crashes/$TARGET}"
CORPUS="${FA_FUZZ_CORPUS:-$BUILD_DIR/corpus/$corpus}"
mkdir -p "$(dirname "$LOG")" "$ARTIFACTS" "$CORPUS"
before=$(ls "$ARTIFACTS" | wc -l)
dirs=("$CORPUS")
[ -d "fuzz/crashes/$TARGET" ] && dirs+=("fuzz/crashes/$TARGET")

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
symbolizer=/usr/lib/llvm-22/bin/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"

"$BIN" -max_total_time="$SECONDS_BUDGET" -rss_limit_mb=2048 -timeout=10 \
  -max_len=65536 -dict="$dict" -print_final_stats=1 \
  -artifact_prefix="$ARTIFACTS/" "$@" "${dirs[@]}" >"$LOG" 2>&1
rc=$?
stats=$(grep -E "^#[0-9]+.*(DONE|cov:)" "$LOG" | tail -1)
after=$(ls "$ARTIFACTS" | wc -l)
if [ $rc -ne 0 ] || [ "$after" -gt "$before" ]; then
  echo "FUZZ FAILURE: $TARGET exited $rc (log: $LOG)"
  grep -E "^SUMMARY|ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error|deadly signal|Test unit written to|Running: " "$LOG" | head -8
  repro=$(grep -oE "Test unit written to [^ ]+" "$LOG" | tail -1 | cut -d' ' -f5)
  [ -n "$repro" ] && echo "reproducer: $repro  (rerun: $BIN $repro)"
  [ "$after" -gt "$before" ] && echo "new artifacts in $ARTIFACTS/: $((after - before))"
  exit 1
fi
echo "$TARGET: ${SECONDS_BUDGET}s, no crash; ${stats:-no stats}"
