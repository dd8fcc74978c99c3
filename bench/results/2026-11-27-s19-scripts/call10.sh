set -o pipefail; F=build-gpu/bin/fa-run
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; }
for v in s1/fa_fwd_sm90a_f8E4M3FN_d256_none s2/fa_fwd_sm90a_f8E4M3FN_d256_causal; do for sz in "300 700" "1023 1024"; do set -- $sz
  echo "$v $1x$2: $(timeout 60 $F --device cuda --kernel scratch/$v.json --b 2 --hq 8 --hkv 2 --m $1 --n $2 --layout bshd --verify 2>&1 | grep verdict)"; done; done
for round in 1 2; do for k in d256_none d256_causal; do v=s1; [ $k = d256_causal ] && v=s2; for d in kernels_generated scratch/$v; do
  r=$(timeout 100 ncu --metrics sm__cycles_elapsed.max -k regex:fa_fwd --launch-skip 2 --launch-count 1 $F --device cuda --kernel $d/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 3 2>&1 | grep -E '^\s+sm__' | awk '{print $NF}')
  echo "ncu $round $k $d $r"; done; done; done
for round in 1 2 3; do for k in d256_none d256_causal; do v=s1; [ $k = d256_causal ] && v=s2; for d in kernels_generated scratch/$v; do
  echo "bench $round $k $d $($F --device cuda --kernel $d/fa_fwd_sm90a_f8E4M3FN_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s')"; done; done; done
