# Call 3 (2026-11-26f): where the deterministic D64 kernel's time goes:
# HEAD's and the late-add kernels launched with and without the mode, and
# the late-add kernel with L2 sections of 8, 16 and 64 MB (FA_EXP_SECTION_MB;
# committed: 32). Forward + backward B4 H16 N4k beside SDPA.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26f-scripts/sections.sh 2>&1 | tee $OUT/log", carry=[scratch/s11old, scratch/s12new, scratch/s13sec8, scratch/s13sec16, scratch/s13sec64])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
L=build-gpu/runtime/libfa_runtime.so; O=scratch/s11old; N=scratch/s12new; start=$SECONDS
for r in 1 2; do for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k round $r"; timeout 150 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json def=$O/fa_bwd_$k.json \
    old@det=$O/fa_bwd_${k}_det.json old=$O/fa_bwd_${k}_det.json late@det=$N/fa_bwd_${k}_det.json late=$N/fa_bwd_${k}_det.json \
    s8@det=scratch/s13sec8/fa_bwd_${k}_det.json s8=scratch/s13sec8/fa_bwd_${k}_det.json \
    s16@det=scratch/s13sec16/fa_bwd_${k}_det.json s16=scratch/s13sec16/fa_bwd_${k}_det.json \
    s64@det=scratch/s13sec64/fa_bwd_${k}_det.json 2>&1 | grep "^|"; echo "   ($((SECONDS - start)) s)"; done; done
