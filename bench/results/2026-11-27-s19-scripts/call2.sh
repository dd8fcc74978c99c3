set -o pipefail; F=build-gpu/bin/fa-run
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; }
for k in d256_none d256_causal; do timeout 60 $F --device cuda --kernel scratch/v1/fa_fwd_sm90a_f8E4M3FN_$k.json --b 1 --hq 2 --hkv 2 --m 1023 --n 1024 --verify 2>&1 | grep -E "verdict" | sed "s|^|v1 $k: |"; done
for round in 1 2 3; do for k in d256_none d256_causal; do for v in kernels_generated scratch/v1 scratch/h1 scratch/h2 scratch/h3; do
  echo "$round $k $v $($F --device cuda --kernel $v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; done
