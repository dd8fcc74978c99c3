set -o pipefail; F=build-gpu/bin/fa-run
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; }
mkdir -p $OUT
for v in v1 v2 v3; do for k in d256_none d256_causal; do echo "== $v $k"; bash bench/sass-spills.sh scratch/$v/fa_fwd_sm90a_f8E4M3FN_$k.ptx | grep -E "instructions|LDL|STL" | head -30; done; done > $OUT/sass.txt 2>&1
cuobjdump --dump-sass /tmp/fa_fwd_sm90a_f8E4M3FN_d256_none.cubin > $OUT/v3-d256-none.sass 2>/dev/null
ptxas -arch=sm_90a scratch/v1/fa_fwd_sm90a_f8E4M3FN_d256_none.ptx -o /tmp/v1.cubin && cuobjdump --dump-sass /tmp/v1.cubin > $OUT/v1-d256-none.sass
for k in d256_none d256_causal; do for v in kernels_generated scratch/v1 scratch/v2 scratch/v3; do timeout 60 $F --device cuda --kernel $v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 1 --hq 2 --hkv 2 --m 1023 --n 1024 --verify 2>&1 | grep -E "verdict|max_abs" | head -2 | sed "s|^|$v $k: |"; done; done
for round in 1 2 3; do for k in d256_none d256_causal d128_none d128_causal; do for v in kernels_generated scratch/v1 scratch/v2 scratch/v3; do
  [[ $k == d128* && ( $v == scratch/v2 || $v == scratch/v3 ) ]] && continue
  echo "$round $k $v $($F --device cuda --kernel $v/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; done
