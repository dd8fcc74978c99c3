# Call 7 (2026-11-26c): call 4 again on the committed kernels (after the
# empty Q range of call 6). The session's kernels (scratch/detNew4: turns in
# decreasing KV-block order under a mask, passed a step late with acquire /
# release, dQ's sm_80 additions as red.global.add.f32 inline PTX; the D256
# writer passing after its next step's first part) beside the default
# kernels and SDPA, B4 H16 N4k, forward + backward. sm_80: main's default
# kernels (scratch/mainStd, kernels_generated at c065b0f) against the new
# ones (the red change).
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26c-scripts/det-final2.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/detNew4", "scratch/mainStd"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; N=scratch/detNew4; start=$SECONDS
ptxas -arch=sm_90 $N/fa_bwd_sm80_bf16_d64_none_det.ptx -o /tmp/d.cubin && echo "sm_80 D64 det SASS: $(cuobjdump --dump-sass /tmp/d.cubin | grep -c 'REDG.E.ADD.F32') REDG.F32, $(cuobjdump --dump-sass /tmp/d.cubin | grep -c 'ATOMG.E.ADD.F32') ATOMG.F32"
for k in sm80_bf16_d64_none sm80_bf16_d64_causal sm80_bf16_d128_none sm80_bf16_d128_causal; do
  echo "-- $k"; timeout 80 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json main=scratch/mainStd/fa_bwd_$k.json default=$N/fa_bwd_$k.json \
    det@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
for k in sm90a_bf16_d256_causal sm90a_bf16_d256_none; do
  echo "-- $k"; timeout 80 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$N/fa_bwd_$k.json \
    det@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
for k in sm90a_bf16_d128_causal sm90a_bf16_d128_none sm90a_bf16_d64_causal sm90a_bf16_d64_none; do
  echo "-- $k"; timeout 80 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$N/fa_bwd_$k.json \
    det@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
