#!/usr/bin/env bash
# Generates the kernels that prove the GPU lowering takes its math from the
# tiled IR (issue: softcap, ALiBi, any head dim, Dv != D) into
# bench/feature-kernels/ (not committed; carried to the GPU machine, where
# bench/run.sh verifies them beside kernels_generated/).
# Usage: bash bench/make-feature-kernels.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
FA_COMPILE="${1:-build}/bin/fa-compile"
OUT=bench/feature-kernels
rm -rf "$OUT"; mkdir -p "$OUT"
for d in 8 40 80 96 112 160 224; do
  "$FA_COMPILE" --d $d -o "$OUT" >/dev/null
done
"$FA_COMPILE" --d 80 --mask causal -o "$OUT" >/dev/null
"$FA_COMPILE" --d 224 --dtype f16 --mask causal -o "$OUT" >/dev/null
"$FA_COMPILE" --d 64 --dv 40 --mask causal -o "$OUT" >/dev/null     # Dv < D, Dv = 8 mod 16
"$FA_COMPILE" --d 112 --dv 160 -o "$OUT" >/dev/null                 # Dv > D
"$FA_COMPILE" --d 64 --mask causal --softcap 20 -o "$OUT" >/dev/null
"$FA_COMPILE" --d 64 --mask causal --alibi head -o "$OUT" >/dev/null
"$FA_COMPILE" --d 96 --mask "window(64,16)" --alibi head --softcap 30 -o "$OUT" >/dev/null
# The same features on sm_90a (TMA, wgmma): any head dim (TMA zero-fills
# the panel past D), Dv != D, softcap, ALiBi, window, f16.
H=(--target sm_90a)
for d in 8 40 96 160 192 224; do
  "$FA_COMPILE" "${H[@]}" --d $d -o "$OUT" >/dev/null
done
"$FA_COMPILE" "${H[@]}" --d 96 --mask causal_top_left -o "$OUT" >/dev/null
"$FA_COMPILE" "${H[@]}" --d 64 --dv 40 --mask causal -o "$OUT" >/dev/null
"$FA_COMPILE" "${H[@]}" --d 112 --dv 160 -o "$OUT" >/dev/null
"$FA_COMPILE" "${H[@]}" --d 128 --softcap 30 -o "$OUT" >/dev/null
"$FA_COMPILE" "${H[@]}" --d 128 --alibi head -o "$OUT" >/dev/null
"$FA_COMPILE" "${H[@]}" --d 128 --mask "window(256,0)" -o "$OUT" >/dev/null
# Past D128 causal kernels run 128 x 80 (the per-row intervals over a
# block_n that is not a power of two), windows 128 x 64 (with softcap).
"$FA_COMPILE" "${H[@]}" --d 192 --mask causal -o "$OUT" >/dev/null
"$FA_COMPILE" "${H[@]}" --d 256 --mask "window(256,0)" --softcap 20 -o "$OUT" >/dev/null
"$FA_COMPILE" "${H[@]}" --d 96 --mask "window(64,16)" --alibi head --softcap 30 -o "$OUT" >/dev/null
ls "$OUT"/*.json | wc -l | xargs echo "feature kernels:"
