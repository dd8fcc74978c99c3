# The fp8 table at b9742c3 (verify-fp8.sh step 4, with FA3 in the same
# process order, N 4k / 8k / 16k, none and causal; log
# ../2026-11-28-forward-e4m3-fa3-h100.log), then the ncu source pages of
# our e4m3 D128 none and FA3's for the cycle account in
# d128-ours-vs-fa3.md. Run on the GPU machine from the repository root
# with scratch/fa3/fa3_bench carried (bench/fa3/BENCH.md); the pages land
# in $OUT.
set -o pipefail; export PYTHONUNBUFFERED=1; F=build-gpu/bin/fa-run
start=$SECONDS
FA3_BENCH=scratch/fa3/fa3_bench FA_FP8_BENCH_N="4096 8192 16384" bash bench/verify-fp8.sh --steps 4 2>&1
echo "   ($((SECONDS - start)) s)"
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --section ComputeWorkloadAnalysis"
G="Duration|SM Frequency|Executed Ipc A|Warp Cycles Per Issued|Issued Warp|No Eligible|Eligible Warps|Registers Per|Compute \(SM\)"
K=kernels_generated/fa_fwd_sm90a_f8E4M3FN_d128_none
timeout 150 ncu $S --import-source no -k regex:fa_fwd --launch-count 1 -o /tmp/ours -f $F --device cuda --kernel $K.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 > /tmp/ncu1.log 2>&1; tail -1 /tmp/ncu1.log
ncu --import /tmp/ours.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/ours: /"
ncu --import /tmp/ours.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/ours-d128-fp8-source.csv.gz
echo "   ($((SECONDS - start)) s)"
timeout 150 ncu $S --import-source no -k regex:device_kernel --launch-count 1 -o /tmp/fa3 -f scratch/fa3/fa3_bench --dtype e4m3 --d 128 --b 2 --h 16 --n 8192 --iters 1 > /tmp/ncu2.log 2>&1; tail -1 /tmp/ncu2.log
ncu --import /tmp/fa3.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/fa3: /"
ncu --import /tmp/fa3.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/fa3-d128-fp8-source.csv.gz
echo "done ($((SECONDS - start)) s)"
