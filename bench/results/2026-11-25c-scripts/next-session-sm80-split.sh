# The first device call for branch wip/sm80-backward-column-split (written
# 2026-11-25 without device time; run from the branch's checkout).
# Here, before the call:
#   bash bench/make-backward-kernels.sh
#   bash bench/make-feature-kernels.sh
#   mkdir -p scratch/main-sm80 && for k in none causal; do for s in fwd bwd; do for e in ptx json; do
#     git show main:kernels_generated/fa_${s}_sm80_bf16_d128_$k.$e > scratch/main-sm80/fa_${s}_sm80_bf16_d128_$k.$e; done; done; done
# Device: run(command="bash bench/results/2026-11-25c-scripts/next-session-sm80-split.sh 2>&1 | tee $OUT/log",
#             carry=["scratch", "bench/backward-kernels", "bench/feature-kernels"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== verify the 64 x 128 sm_80 D128 pairs (and their deterministic kernels), sanitizers"
FA_BWD_SIZES="1x1 113x203 128x217 1023x1024" timeout 300 bash bench/verify-backward.sh --steps 235 sm80_bf16_d128 2>&1 | cut -c1-300
F=build-gpu/bin/fa-run; D=bench/backward-kernels
for k in bf16_d128_causal f16_d128_none f16_d128_causal; do
  timeout 60 $F --device cuda --kernel $D/fa_fwd_sm80_$k.json --bwd --b 2 --hq 8 --hkv 2 --m 113 --n 203 --layout bshd --verify 2>&1 | grep -E "verdict|FAIL" | tr '\n' ' '; echo " $k"; done
timeout 120 $F --device cuda --kernel $D/fa_fwd_sm80_bf16_d128_none.json --bwd --b 1 --hq 1 --hkv 1 --m 4096 --n 4096 --verify 2>&1 | grep -c PASS | sed 's/^/4096^2 PASS lines: /'
echo "== the sm_80 forwards (the branch's ldmatrix is inline PTX now): verify, then main's PTX against the branch's"
n=0; bad=0
for k in kernels_generated/fa_fwd_sm80_*.json bench/feature-kernels/fa_fwd_sm80_*.json; do
  for a in "--m 113 --n 203 --hq 8 --hkv 2 --layout bshd" "--m 1023 --n 1024 --hq 4 --hkv 4 --layout bhsd"; do n=$((n+1))
    timeout 60 $F --device cuda --kernel $k --b 2 $a --seed $n --verify > /tmp/v.log 2>&1 || { bad=$((bad+1)); echo "FAIL $k $a"; tail -3 /tmp/v.log; }
  done; done; echo "sm_80 forward verify: $((n-bad)) of $n passed"
for k in d128_none d128_causal; do
  timeout 100 python3 bench/variants.py build-gpu/runtime/libfa_runtime.so 4096,8192 \
    main=scratch/main-sm80/fa_fwd_sm80_bf16_$k.json branch=kernels_generated/fa_fwd_sm80_bf16_$k.json
done
echo "== main's 64 x 64 against the branch's 64 x 128, same rounds, beside SDPA"
for k in none causal; do
  timeout 200 python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so kernels_generated/fa_fwd_sm80_bf16_d128_$k.json \
    main=scratch/main-sm80/fa_bwd_sm80_bf16_d128_$k.json branch=kernels_generated/fa_bwd_sm80_bf16_d128_$k.json
done
