set -o pipefail; W=scratch/next; F=build-gpu/bin/fa-run
bash bench/results/2026-11-27-s17-scripts/next-fp8-p-order.sh
for round in 1 2 3; do for n in 4096 8192 16384; do b=$((32768 / n))
  echo "$round N$n $($W/fa3_bench --dtype e4m3 --b $b --h 16 --n $n | grep '^fa3')"
  echo "$round N$n ours e4m3 $($F --device cuda --kernel $W/ours/fa_fwd_sm90a_f8E4M3FN_d128_none.json --b $b --hq 16 --hkv 16 --m $n --n $n --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
  echo "$round N$n ours e4m3 new $($F --device cuda --kernel scratch/pa/new/fa_fwd_sm90a_f8E4M3FN_d128_none.json --b $b --hq 16 --hkv 16 --m $n --n $n --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
  echo "$round N$n $($W/fa3_bench --dtype bf16 --b $b --h 16 --n $n | grep '^fa3')"
  echo "$round N$n ours bf16 $($F --device cuda --kernel $W/ours/fa_fwd_sm90a_bf16_d128_none.json --b $b --hq 16 --hkv 16 --m $n --n $n --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done
