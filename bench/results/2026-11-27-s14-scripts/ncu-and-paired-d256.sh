# Call 3 (fourteenth session): paired causal tiles at e4m3 D256 (24/240) against one tile per block;
# ncu of the new fp8 D128 forward; the sm_80 D256 backward's profile beside FA2's.
set -o pipefail; export PYTHONUNBUFFERED=1; start=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; W=scratch/n2
for r in 1 2; do for v in final p256; do
  echo "$r d256_causal $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d256_causal.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"
$F --device cuda --kernel $W/p256/fa_fwd_sm90a_f8E4M3FN_d256_causal.json --spec "$(grep -o '"spec": "[^"]*"' $W/p256/*causal.json | cut -d'"' -f4),descale=head" --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd --verify | tail -1
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters --section Occupancy"
M="--metrics regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active,regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active"
k=f8E4M3FN_d128_none
timeout 150 ncu $S $M --import-source no -k regex:fa_fwd --launch-count 1 -o /tmp/$k -f \
  $F --device cuda --kernel kernels_generated/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 1 > /dev/null 2>&1
ncu --import /tmp/$k.ncu-rep --print-summary none 2>&1 | grep -E "Duration|Executed Ipc A|Warp Cycles Per Issued|Issue Slots Busy|Issued Warp|No Eligible|Eligible Warps|Stall|pipe|Registers Per" | sed "s/^/$k: /"
ncu --import /tmp/$k.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/$k-source.csv.gz
echo "   ($((SECONDS - start)) s)"
sed -n '/^S=/,$p' bench/results/2026-11-27-s13-scripts/next-sm80-d256-ncu.sh > /tmp/sm80.sh
sed -i 's/timeout 200 ncu/timeout 130 ncu/' /tmp/sm80.sh
bash /tmp/sm80.sh
echo "   ($((SECONDS - start)) s)"
