# For the next session (written in the twenty-second; not run): the ncu
# source pages of the e4m3 D256 and D128 forwards after 24b19ec / c929eaf
# (O through shared memory and TMA), to compare with the nineteenth
# session's page of the D256 kernel (bench/results/2026-11-27-s19-ncu/
# ours-d256-fp8-source.csv.gz) and FA3's (bench/results/2026-11-27-s18-ncu/
# fa3-d256-fp8-source.csv.gz) with the scripts of
# bench/results/2026-11-27-s19-ncu/fp8cmp/ (a helper's account: cycles per
# KV iteration by role and phase; is the consumers' wait for Vᵀ_0 at a
# tile's start visible, which would call for FA3's placement of O over the
# Vᵀ ring; what W0, the P·V wait, costs now). One device call, ~5 minutes
# (carry bench/fp8-kernels):
#   run(carry=["bench/fp8-kernels"], command="bash bench/results/2026-11-28-s22-scripts/next-session.sh > $OUT/log 2>&1; tail -c 3000 $OUT/log")
set -o pipefail; F=build-gpu/bin/fa-run
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
# First: the D256 kernels with the sync the review added (never run yet):
# every fp8 kernel at the sizes, then the paired scheduler's empty
# tile (ceil(M / 128) odd, causal) many times at large B x H, sanitizers.
bash bench/verify-fp8.sh --steps 2 2>&1 | grep -E "passed|caught|NOT CAUGHT|FAIL"
K=kernels_generated/fa_fwd_sm90a_f8E4M3FN_d256_causal.json
for i in 1 2 3 4 5 6 7 8; do for m in 1 300 1400; do
  $F --device cuda --kernel $K --b 8 --hq 16 --hkv 4 --m $m --n 2048 --layout bshd --seed $i$m --verify 2>&1 | grep -q "verdict: PASS" || echo "FAIL causal m=$m seed $i$m"
done; done; echo "empty-tile runs done"
for tool in memcheck synccheck; do echo "$tool: $(compute-sanitizer --tool $tool $F --device cuda --kernel $K --b 2 --hq 4 --hkv 2 --m 300 --n 500 --verify 2>&1 | grep -E 'ERROR SUMMARY|verdict' | tr '\n' ' ')"; done
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis"
G="Duration|SM Frequency|Executed Ipc A|Warp Cycles Per Issued|Issued Warp|No Eligible|Eligible Warps|Registers Per|Bank|Compute \(SM\)|Memory Throughput"
for d in 256 128; do K=kernels_generated/fa_fwd_sm90a_f8E4M3FN_d${d}_none
  ptxas -arch=sm_90a $K.ptx -o /tmp/ours.cubin && cuobjdump -sass /tmp/ours.cubin | gzip > $OUT/ours_fp8_d${d}_none.sass.gz
  timeout 200 ncu $S --import-source no -k regex:fa_fwd --launch-count 1 -o /tmp/ours$d -f $F --device cuda --kernel $K.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 > /tmp/ncu$d.log 2>&1; tail -2 /tmp/ncu$d.log
  ncu --import /tmp/ours$d.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/d$d: /"
  ncu --import /tmp/ours$d.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/ours-d${d}-fp8-source.csv.gz
done
