# Prepared in the twenty-third session (not run; no device time left): the
# suspend-time hint on every mbarrier.try_wait (suspend-hint.patch; the
# D128 e4m3 account's item 3: the producer spins 15.3 M retries, 46 M warp
# instructions, 9% of the kernel's, where CUTLASS / FA3 wait with the hint
# 0x989680 and retry 0.05 M times). Predicted: e4m3 D128 −0.3 to −1.2%
# ncu cycles; every sm_90a kernel's PTX changes, so time bf16 too.
# Here (the build machine), first:
#   git apply bench/results/2026-11-28-s23-scripts/suspend-hint.patch && ninja -C build
#   mkdir -p scratch/s24/hint && build/bin/fa-compile --standard-set -o scratch/s24/hint
#   git checkout lib && ninja -C build
#   mkdir -p scratch/s24/base && cp kernels_generated/fa_*_sm90a_* scratch/s24/base/
# Then one device call (~6 minutes):
#   run(carry=["scratch/s24"], command="bash bench/results/2026-11-28-s23-scripts/next-session.sh > $OUT/log 2>&1; tail -c 4000 $OUT/log")
set -o pipefail; F=build-gpu/bin/fa-run; W=scratch/s24
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
FWD="fa_fwd_sm90a_f8E4M3FN_d128_none fa_fwd_sm90a_f8E4M3FN_d128_causal fa_fwd_sm90a_f8E4M3FN_d256_none fa_fwd_sm90a_f8E4M3FN_d256_causal fa_fwd_sm90a_bf16_d64_none fa_fwd_sm90a_bf16_d128_none fa_fwd_sm90a_bf16_d256_causal"
for n in $FWD; do for size in 1x1 113x203 1023x1024 1400x300; do mm=${size%x*}; nn=${size#*x}
  echo "--kernel $W/hint/$n.json --b 2 --hq 8 --hkv 2 --m $mm --n $nn --layout bshd"; done; done |
  FA_PARALLEL=16 FA_JOB_TIMEOUT=120 timeout 150 bash bench/verify-parallel.sh $F "verify"
$F --device cuda --kernel $W/hint/fa_fwd_sm90a_bf16_d128_causal.json --bwd --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --verify 2>&1 | grep verdict
for round in 1 2; do for n in $FWD; do for v in base hint; do
  r=$(timeout 40 ncu --metrics sm__cycles_elapsed.max -k regex:fa_fwd --launch-skip 2 --launch-count 1 $F --device cuda --kernel $W/$v/$n.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 3 2>&1 | grep -E '^\s+sm__' | awk '{print $NF}')
  echo "ncu $round $n $v $r"; done; done; done
python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so $W/base/fa_fwd_sm90a_bf16_d128_causal.json base=$W/base/fa_bwd_sm90a_bf16_d128_causal.json hint=$W/hint/fa_bwd_sm90a_bf16_d128_causal.json 2>&1 | grep "^|"
