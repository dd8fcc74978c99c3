# Call 5 (thirteenth session): the fp8 kernels with 4 stages at D <= 128
# (HopperStrategy::forwardPipeline): verify every fp8 kernel (standard set
# and bench/fp8-kernels) in parallel at verify-fp8.sh's sizes, layouts and
# descales; the negative control, SASS and sanitizers (verify-fp8.sh step
# 3); the speed table (step 4); ncu of the D128 kernel.
# Device: run(carry=["bench/fp8-kernels"], command="bash bench/results/2026-11-27-s13-scripts/fp8-verify.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
for k in kernels_generated/fa_fwd_sm90a_f8E4M3FN_*.json bench/fp8-kernels/*.json; do
  spec=$(grep -o '"spec": "[^"]*"' $k | cut -d'"' -f4)
  sizes="1x1 113x203 128x217 1023x1024 4096x4096"; [[ $k == bench/* ]] && sizes="1x1 113x203 1023x1024"
  for size in $sizes; do m=${size%x*}; n=${size#*x}
    echo "--kernel $k --spec \"$spec,descale=tensor\" --b 2 --hq 4 --hkv 4 --m $m --n $n --layout bhsd"
    echo "--kernel $k --spec \"$spec,descale=head\" --b 2 --hq 8 --hkv 2 --m $m --n $n --layout bshd"; done
done > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "fp8 verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
FA_FP8_SAN_SIZES="--b_2_--hq_4_--hkv_2_--m_77_--n_131_--layout_bshd --b_1_--hq_2_--hkv_1_--m_600_--n_700" timeout 300 bash bench/verify-fp8.sh --steps 3 2>&1 | grep -v "^==" 
for k in kernels_generated/fa_fwd_sm90a_f8E4M3FN_d128_none.json kernels_generated/fa_fwd_sm90a_f8E4M3FN_d128_causal.json; do
  $F --device cuda --kernel $k --b 1 --hq 2 --hkv 2 --m 300 --n 500 --verify --negative-control no-descale > /tmp/neg.log 2>&1
  rc=$?; echo "negative control no-descale $(basename $k): exit $rc $(grep -E '^  O ' /tmp/neg.log)"; done
echo "   ($((SECONDS - start)) s)"
FA_FP8_BENCH_N="4096 8192 16384" timeout 300 bash bench/verify-fp8.sh --steps 4 2>&1 | grep -v "^=="
echo "   ($((SECONDS - start)) s)"
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters"
timeout 150 ncu $S --metrics regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active --import-source no -k regex:fa_fwd --launch-count 1 -o /tmp/s4 -f \
  $F --device cuda --kernel kernels_generated/fa_fwd_sm90a_f8E4M3FN_d128_none.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 1 > /dev/null 2>&1
ncu --import /tmp/s4.ncu-rep --print-summary none 2>&1 | grep -E "Duration|Issued Warp|No Eligible|Eligible Warps|tensor_cycles|pipe_xu|alu_cycles|fma_cycles" | sed "s/^/s4: /"
ncu --import /tmp/s4.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/f8-d128-s4-source.csv.gz
echo "   ($((SECONDS - start)) s)"
