set -o pipefail; export PYTHONUNBUFFERED=1
bash bench/verify-fp8.sh
F=build-gpu/bin/fa-run; W=scratch/n2
echo "== paired at D256 (24/240) vs one tile per block, causal, B2 H16 N8k"
for r in 1 2; do for v in final p256; do
  echo "$r d256_causal $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d256_causal.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done
