# Call 4 (2026-11-26b): main's PTX (f5acd66: scratch/old, scratch/old90)
# against the session's in the same interleaved rounds beside SDPA:
#   sm_80: old | C (masks by interval, ex2.ftz, one FFMA; addresses as
#   before: scratch/varC) | new (C + 32-bit shared addresses), fwd + bwd
#   and forward; sm_90a (only ex2.ftz and the FFMA change it): old | new.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26b-scripts/time-all.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/old", "scratch/old90", "scratch/varC"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
O=scratch/old/kernels_generated; O9=scratch/old90/kernels_generated; C=scratch/varC; N=kernels_generated
echo "== sm_90a fwd + bwd, B4 H16 N4k"
for dk in 64_none 64_causal 128_none 128_causal 256_none 256_causal; do
  timeout 80 python3 bench/bwd_variants.py $L $N/fa_fwd_sm90a_bf16_d$dk.json old=$O9/fa_bwd_sm90a_bf16_d$dk.json new=$N/fa_bwd_sm90a_bf16_d$dk.json 2>&1 | grep -v relative
done; echo "   ($((SECONDS - start)) s)"
echo "== sm_90a forwards, N 2k, 8k"
for dk in 64_none 64_causal 128_none 128_causal 256_none 256_causal; do
  timeout 80 python3 bench/variants.py $L 2048,8192 old=$O9/fa_fwd_sm90a_bf16_d$dk.json new=$N/fa_fwd_sm90a_bf16_d$dk.json 2>&1 | grep -v relative
done; echo "   ($((SECONDS - start)) s)"
echo "== sm_80 fwd + bwd, B4 H16 N4k"
for dk in 128_none 128_causal 64_none 64_causal; do
  timeout 80 python3 bench/bwd_variants.py $L $N/fa_fwd_sm80_bf16_d$dk.json old=$O/fa_bwd_sm80_bf16_d$dk.json C=$C/fa_bwd_sm80_bf16_d$dk.json new=$N/fa_bwd_sm80_bf16_d$dk.json 2>&1 | grep -v relative
done; echo "   ($((SECONDS - start)) s)"
echo "== sm_80 forwards, N 4k, 8k"
for dk in 128_none 128_causal 64_none 64_causal; do
  timeout 80 python3 bench/variants.py $L 4096,8192 old=$O/fa_fwd_sm80_bf16_d$dk.json C=$C/fa_fwd_sm80_bf16_d$dk.json new=$N/fa_fwd_sm80_bf16_d$dk.json 2>&1 | grep -v relative
done; echo "   ($((SECONDS - start)) s)"
