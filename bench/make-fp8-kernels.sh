#!/usr/bin/env bash
# Generates the fp8 (e4m3) sm_90a forward kernels beyond the standard set's
# D {128, 256} x {none, causal} into bench/fp8-kernels/ (not committed;
# carried to the GPU machine, where bench/verify-fp8.sh verifies them beside
# kernels_generated/): other head dims (TMA zero-fills the panel past D),
# Dv != D, top-left causal, window, softcap, ALiBi.
# Usage: bash bench/make-fp8-kernels.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
FA_COMPILE="${1:-build}/bin/fa-compile"
OUT=bench/fp8-kernels
rm -rf "$OUT"; mkdir -p "$OUT"
F=(--target sm_90a --dtype f8e4m3fn)
"$FA_COMPILE" "${F[@]}" --d 64 -o "$OUT" >/dev/null
"$FA_COMPILE" "${F[@]}" --d 96 --mask causal_top_left -o "$OUT" >/dev/null
"$FA_COMPILE" "${F[@]}" --d 128 --dv 64 --mask causal -o "$OUT" >/dev/null
"$FA_COMPILE" "${F[@]}" --d 128 --softcap 30 -o "$OUT" >/dev/null
"$FA_COMPILE" "${F[@]}" --d 128 --alibi head -o "$OUT" >/dev/null
"$FA_COMPILE" "${F[@]}" --d 128 --mask "window(256,0)" -o "$OUT" >/dev/null
# D256 stages O over V's staging ring: a window's tiles, and (M > N) its
# query tiles with no keys, which store O from registers.
"$FA_COMPILE" "${F[@]}" --d 256 --mask "window(256,0)" -o "$OUT" >/dev/null
# Dv 112 = 7 chunks: the transpose's tasks of 4, 2 and 1 (ldmatrix .x4,
# .x2, .x1; stmatrix .x2).
"$FA_COMPILE" "${F[@]}" --d 128 --dv 112 -o "$OUT" >/dev/null
ls "$OUT"/*.json | wc -l | xargs echo "fp8 kernels:"
