# Twentieth session, call 5: ncu source page of e85bd85's sm_80 D256 64 x 64
# backward (none), as the seventeenth session's of 64 x 64 (B1 H8 N4k).
set -o pipefail; W=scratch/s20; F=build-gpu/bin/fa-run; start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --section Occupancy"
G="Duration|Executed Ipc A|Warp Cycles Per Issued|Issued Warp|No Eligible|Eligible Warps|Achieved Occ|Registers Per"
timeout 200 ncu $S --import-source no -k regex:fa_bwd_sm80_bf16_d256_none_main --launch-count 1 -o /tmp/fa64 -f \
  $F --device cuda --kernel $W/base/fa_fwd_sm80_bf16_d256_none.json --bwd-kernel $W/w1/fa_bwd_sm80_bf16_d256_none.json --bwd --b 1 --hq 8 --hkv 8 --m 4096 --n 4096 > /dev/null 2>&1
ncu --import /tmp/fa64.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/e85bd85 64x64 d256: /"
ncu --import /tmp/fa64.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/e85bd85-d256-64x64-source.csv.gz
echo "   ($((SECONDS - start)) s)"
