# Twentieth session, call 2: forward + backward timings (see call1.sh)
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s20; F=build-gpu/bin/fa-run
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
echo "== sm_80 D256 forward + backward, B4 H16 N4k ($((SECONDS - start)) s)"
for round in 1 2; do for mask in none causal; do k=sm80_bf16_d256_$mask
  python3 bench/bwd_variants.py $L $W/base/fa_fwd_$k.json base=$W/base/fa_bwd_$k.json new32=$W/new32/fa_bwd_$k.json plain64=$W/plain64/fa_bwd_$k.json pred64=$W/pred64/fa_bwd_$k.json new64=$W/new64/fa_bwd_$k.json dq64=$W/dq64/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
done; echo "   ($((SECONDS - start)) s)"; done
echo "== the other cells, base vs new32 (one round)"
for k in sm80_bf16_d64_none sm80_bf16_d64_causal sm80_bf16_d128_none sm80_bf16_d128_causal sm90a_bf16_d128_none sm90a_bf16_d128_causal sm90a_bf16_d256_none sm90a_bf16_d256_causal; do
  python3 bench/bwd_variants.py $L $W/base/fa_fwd_$k.json base=$W/base/fa_bwd_$k.json new32=$W/new32/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$k /"
done; echo "   ($((SECONDS - start)) s)"
