#!/usr/bin/env bash
# Quick GPU check while developing: build the runtime and fa-run without
# MLIR, verify a few committed and feature kernels at two sizes, and time
# the set against bench/baseline/sm80-fwd-0fa98a2 with bench.py --quick.

set -u
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || { echo "build FAILED"; exit 1; }
R=build-gpu/bin/fa-run
for k in kernels_generated/fa_fwd_sm80_bf16_d128_causal kernels_generated/fa_fwd_sm80_bf16_d64_none kernels_generated/fa_fwd_sm80_f16_d256_causal kernels_generated/fa_fwd_sm80_bf16_d128_none_cap kernels_generated/fa_fwd_sm80_bf16_d128_none_alibi bench/feature-kernels/fa_fwd_sm80_bf16_d40_none bench/feature-kernels/fa_fwd_sm80_bf16_d64_dv40_causal bench/feature-kernels/fa_fwd_sm80_bf16_d8_none bench/feature-kernels/fa_fwd_sm80_bf16_d96_win64_16_cap_alibi; do
  for sz in "113 203" "1023 1024"; do set -- $sz
    timeout 60 $R --device cuda --kernel $k.json --b 2 --hq 8 --hkv 2 --m $1 --n $2 --layout bshd --verify 2>&1 | grep -E "verdict|error|max_abs|FAIL|fa-run" | tr '\n' ' '; echo " <- $(basename $k) $1x$2"
  done
done
timeout 300 python3 bench/bench.py build-gpu/runtime/libfa_runtime.so kernels_generated --baseline bench/baseline/sm80-fwd-0fa98a2 --quick 2>&1 | tail -40
