# Call 2 (2026-11-26e): per-instruction stall samples (ncu source page,
# SASS) of the sm_80 D128 and D64 backward main kernels in MMA-block order (kernels_generated at a48c904), B1 H16 N4k bf16 none, against FA2's CSVs of the eighth session (bench/results/2026-11-26c-ncu/).
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26e-scripts/ncu-source.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
S="--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats --section Occupancy"
for d in 128 64; do
  timeout 150 ncu $S --import-source no -k regex:fa_bwd_sm80_bf16_d${d}_none_main --launch-count 1 -o /tmp/fa$d -f \
    build-gpu/bin/fa-run --device cuda --kernel kernels_generated/fa_fwd_sm80_bf16_d${d}_none.json \
    --bwd-kernel kernels_generated/fa_bwd_sm80_bf16_d${d}_none.json --bwd --b 1 --hq 16 --hkv 16 --m 4096 --n 4096 > /dev/null 2>&1
  ncu --import /tmp/fa$d.ncu-rep --print-summary none 2>&1 | grep -E "Duration|Executed Ipc A|Warp Cycles Per Issued|Issued Warp|No Eligible|Achieved Occ|Registers Per|Stall" | head -20 | sed "s/^/fa d$d: /"
  ncu --import /tmp/fa$d.ncu-rep --page source --csv --print-source sass > $OUT/fa-d$d-source.csv 2>/dev/null
done
ls -la $OUT
