# Call 4 (2026-11-26f): L2 sections of 16 MB (FA_EXP_SECTION_MB=16) for every
# deterministic kernel: HEAD's code (scratch/s14old16: sm_80 D64/D128,
# sm_90a D128/D256) and the late addition (scratch/s14late16: D64 on {2, 2},
# D128 on the default's {4, 2}), against HEAD (scratch/s11old, 32 MB).
# Forward + backward B4 H16 N4k beside SDPA, two rounds.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26f-scripts/sections16.sh 2>&1 | tee $OUT/log", carry=[scratch/s11old, scratch/s14old16, scratch/s14late16])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
L=build-gpu/runtime/libfa_runtime.so; O=scratch/s11old; A=scratch/s14old16; B=scratch/s14late16; start=$SECONDS
for r in 1 2; do
  for k in sm80_bf16_d64_none sm80_bf16_d64_causal sm80_bf16_d128_none sm80_bf16_d128_causal; do
    echo "-- $k round $r"; timeout 150 python3 bench/bwd_variants.py $L $O/fa_fwd_$k.json def=$O/fa_bwd_$k.json \
      old@det=$O/fa_bwd_${k}_det.json old16@det=$A/fa_bwd_${k}_det.json late16@det=$B/fa_bwd_${k}_det.json 2>&1 | grep "^|"; echo "   ($((SECONDS - start)) s)"; done
  for k in sm90a_bf16_d128_none sm90a_bf16_d128_causal sm90a_bf16_d256_none sm90a_bf16_d256_causal; do
    echo "-- $k round $r"; timeout 150 python3 bench/bwd_variants.py $L $O/fa_fwd_$k.json def=$O/fa_bwd_$k.json \
      old@det=$O/fa_bwd_${k}_det.json old16@det=$A/fa_bwd_${k}_det.json 2>&1 | grep "^|"; echo "   ($((SECONDS - start)) s)"; done
done
