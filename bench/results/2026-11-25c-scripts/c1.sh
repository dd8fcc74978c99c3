set -o pipefail; export PYTHONUNBUFFERED=1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; O=scratch/main-kernels; N=kernels_generated
A="--bwd --bench --iters 20 --b 4 --hq 16 --hkv 16 --m 4096 --n 4096"
t() { echo "$1: $($F --device cuda --kernel $2 --bwd-kernel $3 $A 2>&1 | grep -iE 'tflop' | tr '\n' ' ')"; }
echo "== backward: main vs branch, 2 rounds interleaved"
for r in 1 2; do
for k in sm90a_bf16_d64_none sm90a_bf16_d64_causal sm90a_bf16_d128_none sm90a_bf16_d128_causal sm90a_bf16_d256_none sm90a_bf16_d256_causal sm80_bf16_d64_none sm80_bf16_d128_none sm80_bf16_d128_causal; do
  t "r$r main   $k" $N/fa_fwd_$k.json $O/fa_bwd_$k.json
  t "r$r branch $k" $N/fa_fwd_$k.json $N/fa_bwd_$k.json
done
for m in none causal; do t "r$r branch d64 128x128 $m" $N/fa_fwd_sm90a_bf16_d64_$m.json scratch/d64t128/d64_${m}_bwd.json; done
done
echo "== SDPA fwd+bwd"; timeout 120 python3 bench/bwd_sdpa.py 64 128 256
echo "== forwards: main vs branch"
V="timeout 100 python3 bench/variants.py build-gpu/runtime/libfa_runtime.so 4096,8192"
$V main=$O/fa_fwd_sm90a_bf16_d128_none.json branch=$N/fa_fwd_sm90a_bf16_d128_none.json
$V main=$O/fa_fwd_sm90a_bf16_d256_causal.json branch=$N/fa_fwd_sm90a_bf16_d256_causal.json
$V main=$O/fa_fwd_sm80_bf16_d128_none.json branch=$N/fa_fwd_sm80_bf16_d128_none.json
$V main=$O/fa_fwd_sm80_bf16_d128_causal.json branch=$N/fa_fwd_sm80_bf16_d128_causal.json
