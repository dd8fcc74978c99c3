set -o pipefail; W=scratch/br
[ -x build-gpu/bin/fa-run ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; } || exit 1
F=build-gpu/bin/fa-run
KS="bf16_d128_none f8E4M3FN_d128_none f8E4M3FN_d256_none bf16_d128_causal"
for k in $KS; do for v in br/nb2; do p=scratch/$v/fa_fwd_sm90a_$k.ptx
  ptxas -arch=sm_90a $p -o /tmp/x.cubin && python3 $W/sass_order.py /tmp/x.cubin | sed "s|/tmp/x.cubin|$v $k|" | grep -o 'B G1.*' | cut -c1-300; done; done
for r in 1 2; do for k in $KS; do for v in rs/base br/nb br/nb2; do
  echo "$r $k $v $($F --device cuda --kernel scratch/$v/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; done
