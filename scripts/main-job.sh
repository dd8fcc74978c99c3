#!/usr/bin/env bash
# The main job: compile an attention op and verify it.
#  1. fa-opt: show examples/attention.mlir after each algorithm pass.
#  2. fa-run --device cpu: compile an example spec through fa-tile,
#     fa-fuse-online-softmax, fa-recompute-backward and fa-to-cpu, JIT it,
#     run it on fresh random inputs, and verify O, LSE, dQ, dK, dV against the
#     float64 reference. (The GPU path is --device cuda; bench/README.md.)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
FA_OPT="$BUILD_DIR/bin/fa-opt"
FA_RUN="$BUILD_DIR/bin/fa-run"

echo "-- fa-tile + fa-fuse-online-softmax: one KV loop per Q block, carrying (m, l, acc)"
"$FA_OPT" examples/attention.mlir --fa-tile --fa-fuse-online-softmax --canonicalize --cse \
  | grep -E "scf.for .*iter_args.*tensor<64xf32>, tensor<64xf32>|fa\.(qk_scores|row_max|exp_shifted|row_sum|scale_rows|matmul)" \
  | sed 's/^ */  /' | head -12
echo "-- no M x N buffer after tiling:"
"$FA_OPT" examples/attention.mlir --fa-tile --fa-fuse-online-softmax \
  --fa-check-no-quadratic-buffers="query-len=113 key-len=203" >/dev/null && echo "  none"
echo "-- fa-run --device cpu: compile, run and verify forward + backward"
"$FA_RUN" --device cpu --spec "d=72,dv=72,dtype=bf16,mask=causal,softcap=0" \
  --b 2 --hq 6 --hkv 2 --m 113 --n 203 --seed 7 --verify --bwd
