# Call 3 (2026-11-26c): the turn passed a step late (the sm_90a writer after
# its next Q block's reduce-adds; sm_80 before its next turn) with acquire
# polls and release increments (scratch/detNew2), against call 1's order
# alone (scratch/detNew), beside the default kernel and SDPA, B4 H16 N4k
# fwd + bwd; each det variant's second run compared bit for bit. Then the
# SASS of the sm_80 D64 default and deterministic kernels (whose mode-off
# launch costs 2.5x: call 2) into $OUT.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26c-scripts/det-pass.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/detNew", "scratch/detNew2"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; A=scratch/detNew; N=scratch/detNew2; start=$SECONDS
for k in sm90a_bf16_d128_causal sm90a_bf16_d256_causal sm90a_bf16_d64_causal sm90a_bf16_d128_none sm90a_bf16_d256_none sm90a_bf16_d64_none \
         sm80_bf16_d128_causal sm80_bf16_d128_none sm80_bf16_d64_causal sm80_bf16_d64_none; do
  echo "-- $k"; timeout 80 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$N/fa_bwd_$k.json order@det=$A/fa_bwd_${k}_det.json \
    pass@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
mkdir -p $OUT/sass
for k in sm80_bf16_d64_none sm80_bf16_d64_none_det; do
  ptxas -arch=sm_90 $N/fa_bwd_$k.ptx -o /tmp/$k.cubin && cuobjdump --dump-sass /tmp/$k.cubin > $OUT/sass/$k.sass
done; ls -la $OUT/sass
