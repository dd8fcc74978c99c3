set -o pipefail; F=build-gpu/bin/fa-run
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; }
for round in 1 2; do for k in d256_none d256_causal d128_none d128_causal; do for v in kernels_generated scratch/v1 scratch/v4 scratch/v6; do
  r=$(timeout 100 ncu --metrics gpu__time_duration.sum,sm__cycles_elapsed.max -k regex:fa_fwd --launch-skip 2 --launch-count 1 $F --device cuda --kernel $v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 3 2>&1 | grep -E '^\s+(gpu__|sm__)' | awk '{print $1"="$NF}' | tr '\n' ' ')
  echo "$round $k $v $r"
done; done; done
for round in 1 2; do for k in d256_none d256_causal d128_none d128_causal; do for v in kernels_generated scratch/v6; do
  echo "bench $round $k $v $($F --device cuda --kernel $v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; done
