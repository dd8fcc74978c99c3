#!/usr/bin/env bash
# Generates forward + backward kernel pairs (fa-compile --bwd) into
# bench/backward-kernels/ (not committed; carried to the GPU machine, where
# bench/verify-backward.sh verifies them), and the negative control (the
# backward without D = rowsum(dO ∘ O)) into bench/backward-kernels/negative/.
# Usage: bash bench/make-backward-kernels.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
FA_COMPILE="${1:-build}/bin/fa-compile"
OUT=bench/backward-kernels
rm -rf "$OUT"; mkdir -p "$OUT/negative" "$OUT/h100-budget"
for dtype in bf16 f16; do
  for d in 64 128; do
    for mask in none causal; do
      "$FA_COMPILE" --d $d --dtype $dtype --mask $mask --bwd -o "$OUT" >/dev/null
    done
  done
done
for mask in none causal; do
  "$FA_COMPILE" --d 256 --mask $mask --bwd -o "$OUT" >/dev/null
  # FA2's H100 tile at D256 (64 x 64, 208 KB: past an A100's 163, so not
  # in the standard set): what BENCHMARKS compares with FA2 on the H100.
  "$FA_COMPILE" --d 256 --mask $mask --bwd --shared-memory-budget 227 \
    -o "$OUT/h100-budget" >/dev/null
done
"$FA_COMPILE" --d 128 --mask "window(256,0)" --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --d 96 --mask causal_top_left --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --d 128 --dv 64 --mask causal --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --d 64 --mask causal --softcap 20 --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --d 64 --mask causal --alibi head --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --d 64 --bwd --test-omit-row-dot -o "$OUT/negative" >/dev/null
# sm_90a (TMA, wgmma, warp specialisation): the same table, and D = 256.
for dtype in bf16 f16; do
  for d in 64 128 256; do
    for mask in none causal; do
      "$FA_COMPILE" --target sm_90a --d $d --dtype $dtype --mask $mask --bwd -o "$OUT" >/dev/null
    done
  done
done
"$FA_COMPILE" --target sm_90a --d 128 --mask "window(256,0)" --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --target sm_90a --d 96 --mask causal_top_left --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --target sm_90a --d 128 --dv 64 --mask causal --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --target sm_90a --d 64 --mask causal --softcap 20 --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --target sm_90a --d 64 --mask causal --alibi head --bwd -o "$OUT" >/dev/null
"$FA_COMPILE" --target sm_90a --d 256 --dv 128 --mask "window(256,0)" --softcap 20 --bwd -o "$OUT" >/dev/null
for spec in "--d 64" "--d 64 --mask causal" "--d 128" "--d 128 --mask causal"; do
  "$FA_COMPILE" --target sm_90a $spec --bwd --deterministic -o "$OUT" >/dev/null
done
mkdir -p "$OUT/negative-sm90a"
"$FA_COMPILE" --target sm_90a --d 64 --bwd --test-omit-row-dot -o "$OUT/negative-sm90a" >/dev/null
# Deterministic backward kernels (fa_bwd_..._det), for step 5.
for spec in "--d 64" "--d 64 --mask causal" "--d 128" "--d 128 --mask causal"; do
  "$FA_COMPILE" $spec --bwd --deterministic -o "$OUT" >/dev/null
done
ls "$OUT"/fa_bwd_*.json | wc -l | xargs echo "backward kernels (with the deterministic ones):"
