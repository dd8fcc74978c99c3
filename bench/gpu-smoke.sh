#!/usr/bin/env bash
# Quick GPU check (used while developing): build the runtime and fa-run
# without MLIR, then verify a few kernels.
set -u
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
K=kernels_generated
for args in "$K/fa_fwd_sm80_bf16_d64_none.json --m 128 --n 128" \
            "$K/fa_fwd_sm80_bf16_d64_causal.json --b 2 --hq 6 --hkv 2 --m 113 --n 203" \
            "$K/fa_fwd_sm80_f16_d128_none.json --m 1 --n 1" \
            "$K/fa_fwd_sm80_bf16_d128_causal.json --m 1023 --n 1024 --layout bshd"; do
  echo "== $args"
  ./build-gpu/bin/fa-run --device cuda --kernel $args --seed 3 --verify 2>&1 | tail -6
done
