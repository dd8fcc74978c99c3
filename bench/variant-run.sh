#!/usr/bin/env bash
# The variant kernels on the GPU machine (bench/make-variant-kernels.sh made
# them): builds the runtime without the compiler, verifies every variant
# kernel of both chips against the float64 evaluation of its own regions
# (fa-run --verify, and --bwd --verify for those with a backward; the
# no-regions control must fail), then times each
# beside the built-in kernel of the same meaning, FlexAttention and SDPA's
# cuDNN in one process (bench/flex_variants.py), and the block-sparse ones
# on FlexAttention's own block masks (bench/flex_block_sparse.py).
# Usage: [FA_BENCH_CHIPS="sm_90a sm_80"] bash bench/variant-run.sh [--no-bench]
set -u
cd "$(dirname "$0")/.."
echo "== revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF \
  -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || { echo "build FAILED"; exit 1; }
FA_RUN=build-gpu/bin/fa-run
fails=0
for chip in sm_90a sm_80; do
  for manifest in bench/variant-kernels/$chip/variant_*.json; do
    name=$(basename "$manifest" .json)
    for shape in "--b 1 --hq 16 --hkv 16 --m 4096 --n 4096 --layout bhsd" \
                 "--b 2 --hq 16 --hkv 4 --m 1000 --n 1000 --layout bshd" \
                 "--b 1 --hq 16 --hkv 2 --m 1 --n 777 --layout bhsd"; do
      line=$($FA_RUN --device cuda --kernel "$manifest" $shape --seed 3 --verify 2>&1)
      code=$?
      verdict=$(echo "$line" | tail -1)
      echo "$chip $name $shape: exit $code $verdict"
      [ $code -eq 0 ] || { fails=$((fails + 1)); echo "$line" | tail -8; }
    done
    if [ -f "bench/variant-kernels/$chip/${name}_bwd.json" ]; then
      # (The float64 backward reference is the slow part: small shapes.)
      for shape in "--b 1 --hq 2 --hkv 2 --m 640 --n 640 --layout bhsd" \
                   "--b 2 --hq 4 --hkv 2 --m 333 --n 500 --layout bshd"; do
        line=$($FA_RUN --device cuda --kernel "$manifest" $shape --seed 7 --bwd --verify 2>&1)
        code=$?
        echo "$chip $name --bwd $shape: exit $code $(echo "$line" | tail -1)"
        [ $code -eq 0 ] || { fails=$((fails + 1)); echo "$line" | tail -12; }
      done
    fi
    line=$($FA_RUN --device cuda --kernel "$manifest" --b 1 --hq 16 --hkv 16 \
      --m 3000 --n 3000 --seed 4 --verify --negative-control no-regions 2>&1)
    code=$?
    echo "$chip $name no-regions (must FAIL): exit $code $(echo "$line" | tail -1)"
    [ $code -eq 1 ] || fails=$((fails + 1))
    if grep -q '"block_sparse"' "$manifest"; then
      line=$($FA_RUN --device cuda --kernel "$manifest" --b 1 --hq 16 --hkv 16 \
        --m 3000 --n 3000 --seed 5 --verify --negative-control block-lists 2>&1)
      code=$?
      echo "$chip $name block-lists (must FAIL): exit $code $(echo "$line" | tail -1)"
      [ $code -eq 1 ] || fails=$((fails + 1))
    fi
  done
done
echo "== verification: $fails unexpected results"
[ "${1:-}" = "--no-bench" ] && exit $fails
for chip in ${FA_BENCH_CHIPS:-sm_90a}; do
  python3 bench/flex_variants.py build-gpu/runtime/libfa_runtime.so bench/variant-kernels/$chip 4096,16384
  python3 bench/flex_block_sparse.py build-gpu/runtime/libfa_runtime.so bench/variant-kernels/$chip 4096,16384
  python3 bench/flex_variants_bwd.py build-gpu/runtime/libfa_runtime.so bench/variant-kernels/$chip 4096,16384
done
exit $fails
