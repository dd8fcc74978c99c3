#!/usr/bin/env bash
# Compiles the variant kernels (bench/variants/*.mlir: score_mod / mask_mod
# regions; their backwards, but for the block-sparse ones) and the built-in
# kernels (with their backwards) of the same meaning for sm_90a and
# sm_80 into bench/variant-kernels/CHIP/, where the compiler is; the GPU
# machine verifies and times them (bench/variant-run.sh).
# Usage: bash bench/make-variant-kernels.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
build="${1:-build}"
out=bench/variant-kernels
rm -rf "$out"
for chip in sm_90a sm_80; do
  mkdir -p "$out/$chip"
  for f in bench/variants/*.mlir; do
    # The backward too, except for the block-sparse kernels (forward only).
    bwd=--bwd
    grep -q block_sparse "$f" && bwd=
    "$build/bin/fa-compile" "$f" $bwd --target "$chip" -o "$out/$chip"
  done
  for builtin in "none none" "causal causal" "window window(1023,0)"; do
    set -- $builtin
    "$build/bin/fa-compile" -d 128 --dtype bf16 --mask "$2" --target "$chip" \
      --name "builtin_$1" --bwd -o "$out/$chip"
  done
  "$build/bin/fa-compile" -d 128 --dtype bf16 --softcap 30 --target "$chip" \
    --name builtin_softcap --bwd -o "$out/$chip"
  "$build/bin/fa-compile" -d 128 --dtype bf16 --alibi head --target "$chip" \
    --name builtin_alibi --bwd -o "$out/$chip"
done
