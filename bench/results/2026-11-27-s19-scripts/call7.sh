set -o pipefail; F=build-gpu/bin/fa-run; K=kernels_generated/fa_fwd_sm90a_f8E4M3FN_d256_none
[ -x $F ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null; }
ptxas -arch=sm_90a $K.ptx -o /tmp/ours.cubin && cuobjdump -sass /tmp/ours.cubin | gzip > $OUT/ours_fp8_d256_none.sass.gz
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis"
G="Duration|SM Frequency|Executed Ipc A|Warp Cycles Per Issued|Issued Warp|No Eligible|Eligible Warps|Registers Per|Bank|Compute \(SM\)|Memory Throughput"
timeout 200 ncu $S --import-source no -k regex:fa_fwd --launch-count 1 -o /tmp/ours -f $F --device cuda --kernel $K.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 > /tmp/ncu1.log 2>&1; tail -2 /tmp/ncu1.log
ncu --import /tmp/ours.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/ours: /"
ncu --import /tmp/ours.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/ours-d256-fp8-source.csv.gz
