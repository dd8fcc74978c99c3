#!/usr/bin/env bash
# The GPU backward's checks on the GPU machine (no MLIR there):
#   1. build libfa_runtime and fa-run with -DFA_ENABLE_COMPILER=OFF;
#      (h100-budget/: kernels built with --shared-memory-budget 227, which
#      run on an H100's sm_80 path but not on an A100)
#   2. fa-run --bwd --verify for every fa_fwd_X / fa_bwd_X pair in
#      bench/backward-kernels/ (bench/make-backward-kernels.sh) at the
#      issue's sizes, MHA in [B,H,S,D] and GQA in [B,S,H,D]; the negative
#      control must be reported as a mismatch (exit 1);
#   3. compute-sanitizer memcheck, racecheck and synccheck on a small and an
#      odd size;
#   4. fa-run --bench forward + backward at N = 4096;
#   5. deterministic mode: dQ, dK, dV bit-identical over 10 runs (and
#      verified), and its cost beside the default (fa-run --deterministic).
# Usage: [FA_BWD_SIZES="1x1 113x203"] bash bench/verify-backward.sh [--steps 234] [filter]
set -u
steps=12345
if [ "${1:-}" = "--steps" ]; then steps="1$2"; shift 2; fi
want() { [[ "$steps" == *"$1"* ]]; }
filter="${1:-}"
cd "$(dirname "$0")/.."
DIR=bench/backward-kernels
OUT_DIR="${OUT:-/tmp/fa-bench}"; mkdir -p "$OUT_DIR"
echo "== backward, revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF \
  -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || { echo "build FAILED"; exit 1; }
FA_RUN=build-gpu/bin/fa-run
pairs=()
# The h100-budget kernels only where the device has their shared memory.
optin=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).shared_memory_per_block_optin)" 2>/dev/null || echo 0)
budget=""; [ "$optin" -ge 232448 ] && budget="$DIR/h100-budget/fa_fwd_*.json"
for fwd in "$DIR"/fa_fwd_*.json $budget; do
  bwd="${fwd/fa_fwd_/fa_bwd_}"
  [ -f "$bwd" ] && [[ "$(basename "$fwd")" == *"$filter"* ]] && pairs+=("$fwd")
done

if want 2; then
echo "== 2. fa-run --bwd --verify"
fails=0; runs=0
for fwd in "${pairs[@]}"; do
  name=$(basename "$fwd" .json)
  for size in ${FA_BWD_SIZES:-1x1 113x203 128x217 1023x1024 4096x4096}; do
    for heads in "mha bhsd --hq 4 --hkv 4" "gqa bshd --hq 8 --hkv 2"; do
      set -- ${size/x/ } $heads
      m=$1; n=$2; kind=$3; layout=$4; shift 4
      b=2; [ "$m" = 4096 ] && { b=1; set -- --hq 2 --hkv 1; [ $kind = mha ] && set -- --hq 1 --hkv 1; }
      runs=$((runs + 1))
      if ! timeout 300 $FA_RUN --device cuda --kernel "$fwd" --bwd --b $b "$@" --m $m --n $n \
           --layout $layout --seed $runs --verify > "$OUT_DIR/last-verify-run.log" 2>&1; then
        fails=$((fails + 1)); echo "FAIL $name m=$m n=$n $kind $layout"; tail -8 "$OUT_DIR/last-verify-run.log"
      fi
    done
  done
  echo "  $name: $(grep -A4 '^backward' "$OUT_DIR/last-verify-run.log" | tr '\n' ' ' | cut -c1-200)"
done
echo "verified: $((runs - fails)) / $runs"
for neg in "$DIR"/negative*/fa_bwd_*_no_row_dot.json; do
  [ -f "$neg" ] || continue
  # fa_bwd_X_no_row_dot is the negative control of fa_bwd_X, beside fa_fwd_X.
  base=$(basename "$neg" _no_row_dot.json)
  fwd="$DIR/${base/fa_bwd_/fa_fwd_}.json"
  $FA_RUN --device cuda --kernel "$fwd" --bwd-kernel "$neg" --negative-control no-row-dot \
    --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > "$OUT_DIR/neg.log" 2>&1
  rc=$?
  if [ $rc = 1 ]; then echo "negative control $(basename "$neg"): caught (exit 1)";
  else echo "NEGATIVE CONTROL NOT CAUGHT (exit $rc)"; tail -8 "$OUT_DIR/neg.log"; fi
done
fi

if want 3; then
echo "== 3. compute-sanitizer (memcheck, racecheck, synccheck)"
for fwd in "${pairs[@]}"; do
  for tool in memcheck racecheck synccheck; do
    for size in "--m 64 --n 64" "--m 77 --n 131"; do
      log=$(compute-sanitizer --tool $tool --error-exitcode 9 $FA_RUN --device cuda --kernel "$fwd" \
            --bwd --b 1 --hq 2 --hkv 1 $size --verify 2>&1)
      rc=$?; [ $rc = 0 ] || { echo "SANITIZER $tool $(basename "$fwd") $size: exit $rc"; echo "$log" | tail -6; }
    done
  done
done
echo "sanitizers done"
fi

if want 4; then
echo "== 4. fa-run --bench, forward + backward, B=4 H=16 N=4096"
for fwd in "${pairs[@]}"; do
  echo "$(basename "$fwd" .json): $($FA_RUN --device cuda --kernel "$fwd" --bwd --bench --iters 20 \
       --b 4 --hq 16 --hkv 16 --m 4096 --n 4096 2>&1 | grep -iE 'tflop|ms' | tr '\n' ' ')"
done
fi

if want 5; then
echo "== 5. deterministic mode (fa-run --bwd --deterministic)"
for fwd in "${pairs[@]}"; do
  name=$(basename "$fwd" .json)
  det="${fwd/fa_fwd_/fa_bwd_}"; det="${det%.json}_det.json"
  [ -f "$det" ] || continue
  for size in "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 1 --hq 4 --hkv 4 --m 113 --n 203"; do
    out=$(timeout 300 $FA_RUN --device cuda --kernel "$fwd" --bwd-kernel "$det" --bwd --deterministic --verify $size 2>&1)
    rc=$?
    echo "  $name ($size): rc=$rc $(echo "$out" | grep -E '^deterministic|verdict' | tr '\n' ' ')"
  done
  echo "  $name: $($FA_RUN --device cuda --kernel "$fwd" --bwd-kernel "$det" --bwd --deterministic --bench --iters 20 \
       --b 4 --hq 16 --hkv 16 --m 4096 --n 4096 2>&1 | grep -E 'deterministic' | tr '\n' ' ')"
done
fi
