# Call 1 (2026-11-26b): ncu of the sm_80 D128 backward's main kernel beside
# FA2's (SDPA flash) backward kernel, B4 H16 N4k bf16, none and causal.
set -o pipefail; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats --section SourceCounters"
for m in none causal; do
  echo "=== fa-mlir sm80 d128 $m"
  timeout 200 ncu $S -k regex:fa_bwd_sm80_bf16_d128_${m}_main --launch-count 1 \
    build-gpu/bin/fa-run --device cuda --kernel kernels_generated/fa_fwd_sm80_bf16_d128_$m.json \
    --bwd-kernel kernels_generated/fa_bwd_sm80_bf16_d128_$m.json --bwd --b 4 --hq 16 --hkv 16 --m 4096 --n 4096 2>&1 | grep -v "^==PROF==\|----"
  echo "=== FA2 d128 $m"
  timeout 200 ncu $S -k regex:flash_bwd_dq_dk_dv --launch-skip 1 --launch-count 1 \
    python3 bench/results/2026-11-26b-scripts/fa2_bwd_once.py 128 $m 2>&1 | grep -v "^==PROF==\|----"
done
