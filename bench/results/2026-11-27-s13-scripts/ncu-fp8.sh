# Call 3 (thirteenth session): where the fp8 D128 forward's cycles go. ncu
# (pipes, stalls, per-instruction stall samples) of the committed sm_90a
# e4m3 D128 kernel and the bf16 D128 kernel at B2 H16 N8k, plus the SASS
# of both. Device: run(command="bash bench/results/2026-11-27-s13-scripts/ncu-fp8.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters --section Occupancy"
M="--metrics regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active,regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active"
for k in f8E4M3FN_d128_none bf16_d128_none; do
  K=kernels_generated/fa_fwd_sm90a_$k.json
  timeout 200 ncu $S $M --import-source no -k regex:fa_fwd --launch-count 1 -o /tmp/$k -f \
    build-gpu/bin/fa-run --device cuda --kernel $K --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 1 > /dev/null 2>&1
  ncu --import /tmp/$k.ncu-rep --print-summary none 2>&1 | grep -E "Duration|Executed Ipc A|Warp Cycles Per Issued|Issue Slots Busy|Issued Warp|No Eligible|Eligible Warps|Active Warps Per|Stall|pipe|Registers Per" | sed "s/^/$k: /"
  ncu --import /tmp/$k.ncu-rep --page source --csv --print-source sass > $OUT/$k-source.csv 2>/dev/null
done
# SASS of both kernels (the runtime JITs the PTX; ptxas here gives the same code)
for k in f8E4M3FN_d128_none bf16_d128_none; do
  ptxas -arch=sm_90a -O3 kernels_generated/fa_fwd_sm90a_$k.ptx -o /tmp/$k.cubin && cuobjdump --dump-sass /tmp/$k.cubin > $OUT/$k.sass; done
ls -la $OUT; gzip $OUT/*.csv
