set -o pipefail; export PYTHONUNBUFFERED=1
echo "== verify the sm90a bf16 pairs (D256 dQ_i in parts, 40/232; LSE and D loaded before S)"
FA_BWD_SIZES="113x203 1023x1024" timeout 200 bash bench/verify-backward.sh --steps 2 sm90a_bf16_d 2>&1 | grep -v "^  fa_fwd" | cut -c1-200
echo "== main's PTX (old) against this revision's (new), fwd + bwd, B4 H16 N4k"
for d in 256 128 64; do for k in none causal; do
  timeout 80 python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so kernels_generated/fa_fwd_sm90a_bf16_d${d}_$k.json \
    old=scratch/v/fa_bwd_sm90a_bf16_d${d}_$k.json new=kernels_generated/fa_bwd_sm90a_bf16_d${d}_$k.json 2>&1
done; done
