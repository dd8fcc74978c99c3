set -o pipefail; export PYTHONUNBUFFERED=1
echo "== verify the 64 x 128 sm_80 D128 pairs (and their deterministic kernels), sanitizers"
FA_BWD_SIZES="1x1 113x203 128x217 1023x1024" timeout 300 bash bench/verify-backward.sh --steps 235 sm80_bf16_d128 2>&1 | cut -c1-300
F=build-gpu/bin/fa-run; D=bench/backward-kernels
for k in bf16_d128_causal f16_d128_none f16_d128_causal; do
  timeout 60 $F --device cuda --kernel $D/fa_fwd_sm80_$k.json --bwd --b 2 --hq 8 --hkv 2 --m 113 --n 203 --layout bshd --verify 2>&1 | grep -E "verdict|FAIL" | tr '\n' ' '; echo " $k"; done
timeout 120 $F --device cuda --kernel $D/fa_fwd_sm80_bf16_d128_none.json --bwd --b 1 --hq 1 --hkv 1 --m 4096 --n 4096 --verify 2>&1 | grep -c PASS | sed 's/^/4096^2 PASS lines: /'
echo "== main's 64 x 64 against the branch's 64 x 128, same rounds, beside SDPA"
for k in none causal; do
  timeout 200 python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so kernels_generated/fa_fwd_sm80_bf16_d128_$k.json \
    main=scratch/main-sm80/fa_bwd_sm80_bf16_d128_$k.json branch=kernels_generated/fa_bwd_sm80_bf16_d128_$k.json
done
