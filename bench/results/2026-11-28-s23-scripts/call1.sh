# Twenty-third session, call 1: (a) 466594f's D256 e4m3 kernels (the
# warpgroup sync before O's staging; never run) verified: every fp8 kernel
# at the sizes, the paired scheduler's empty tiles, sanitizers.
# (b) Row max / sum in four interleaved partials (scratch/s23/new) against
# one chain per row (scratch/s23/old = HEAD): verify, ncu cycles, --bench.
set -o pipefail; export PYTHONUNBUFFERED=1; F=build-gpu/bin/fa-run; W=scratch/s23
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
start=$SECONDS
bash bench/verify-fp8.sh --steps 2 2>&1 | grep -E "passed|caught|NOT CAUGHT|FAIL|clean|ERROR" | head -20
K=kernels_generated/fa_fwd_sm90a_f8E4M3FN_d256_causal.json
for i in 1 2 3 4 5 6 7 8; do for m in 1 300 1400; do
  $F --device cuda --kernel $K --b 8 --hq 16 --hkv 4 --m $m --n 2048 --layout bshd --seed $i$m --verify 2>&1 | grep -q "verdict: PASS" || echo "FAIL causal m=$m seed $i$m"
done; done; echo "empty-tile runs done ($((SECONDS - start)) s)"
for tool in memcheck synccheck racecheck; do echo "$tool d256 causal: $(timeout 120 compute-sanitizer --tool $tool $F --device cuda --kernel $K --b 2 --hq 4 --hkv 2 --m 300 --n 500 --verify 2>&1 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|verdict' | tr '\n' ' ')"; done
echo "   ($((SECONDS - start)) s)"
# (b) verify the new kernels
NEWK="fa_fwd_sm90a_f8E4M3FN_d128_none fa_fwd_sm90a_f8E4M3FN_d128_causal fa_fwd_sm90a_f8E4M3FN_d256_none fa_fwd_sm90a_f8E4M3FN_d256_causal fa_fwd_sm90a_bf16_d128_none fa_fwd_sm90a_bf16_d64_causal fa_fwd_sm90a_bf16_d256_none fa_fwd_sm80_bf16_d128_none fa_fwd_sm80_bf16_d64_causal"
for n in $NEWK; do k=$W/new/$n.json
  for size in 1x1 113x203 128x217 1023x1024 4096x4096; do mm=${size%x*}; nn=${size#*x}
    echo "--kernel $k --b 2 --hq 4 --hkv 4 --m $mm --n $nn --layout bhsd"
    echo "--kernel $k --b 2 --hq 8 --hkv 2 --m $mm --n $nn --layout bshd"
  done; done | FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 300 bash bench/verify-parallel.sh $F "verify new"
echo "memcheck new d128 fp8: $(timeout 90 compute-sanitizer --tool memcheck $F --device cuda --kernel $W/new/fa_fwd_sm90a_f8E4M3FN_d128_none.json --b 1 --hq 2 --hkv 2 --m 300 --n 500 --verify 2>&1 | grep -E 'ERROR SUMMARY|verdict' | tr '\n' ' ')"
echo "   ($((SECONDS - start)) s)"
T="fa_fwd_sm90a_f8E4M3FN_d128_none fa_fwd_sm90a_f8E4M3FN_d256_none fa_fwd_sm90a_f8E4M3FN_d128_causal fa_fwd_sm90a_f8E4M3FN_d256_causal fa_fwd_sm90a_bf16_d128_none fa_fwd_sm90a_bf16_d64_none fa_fwd_sm90a_bf16_d256_none fa_fwd_sm80_bf16_d128_none"
for round in 1 2; do for n in $T; do for v in old new; do
  r=$(timeout 60 ncu --metrics sm__cycles_elapsed.max -k regex:fa_fwd --launch-skip 2 --launch-count 1 $F --device cuda --kernel $W/$v/$n.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 3 2>&1 | grep -E '^\s+sm__' | awk '{print $NF}')
  echo "ncu $round $n $v $r"; done; done; echo "   ($((SECONDS - start)) s)"; done
for round in 1 2; do for n in $T; do for v in old new; do
  echo "bench $round $n $v $(timeout 40 $F --device cuda --kernel $W/$v/$n.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done; done; done
echo "done ($((SECONDS - start)) s)"
