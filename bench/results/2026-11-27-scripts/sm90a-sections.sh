set -o pipefail; export PYTHONUNBUFFERED=1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; W=scratch/sec
for s in 24 40; do $F --device cuda --kernel $W/s32/fa_fwd_sm90a_bf16_d256_causal.json --bwd-kernel $W/s$s/fa_bwd_sm90a_bf16_d256_causal_det.json --bwd --deterministic --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --verify | tail -1; done
for r in 1 2; do for k in sm90a_bf16_d256_causal sm90a_bf16_d256_none sm90a_bf16_d128_causal sm90a_bf16_d128_none; do
  echo "-- $k round $r"; timeout 150 python3 bench/bwd_variants.py $L $W/s32/fa_fwd_$k.json default=$W/s32/fa_bwd_$k.json s24@det=$W/s24/fa_bwd_${k}_det.json s32@det=$W/s32/fa_bwd_${k}_det.json s40@det=$W/s40/fa_bwd_${k}_det.json 2>&1 | grep "^|"; done; [ $r = 1 ] || break; done
