# For the next session (written 2026-11-27, seventeenth session; built and
# ptxas-checked here, not run on a GPU). Two measurements, one device call:
#  (1) FlashAttention-3's e4m3 and bf16 D128 forward on our H100, beside
#      our kernels (alternating processes: fa3_bench is its own binary),
#      so that issue 11's 1000 TFLOP/s (FA3's paper number) is read
#      against what FA3 does on this card; fa3_bench --check first;
#  (2) ncu of the sm_80 D256 backward on FA2's own tile and warp layout
#      (64 x 64, {S 2, dK/dV 4, dQ 4} groups: sm80-d256-64x64-fa2-layout.diff,
#      FA_EXP=1; 208 KB, H100 only; 196 B of spill): the thirteenth session
#      timed this layout at 0.2% (none) from the 32 x 64 kernel, still
#      7.5% behind FA2, so the gap is codegen, not tiling. Its source page
#      beside FA2's (bench/results/2026-11-27-s14c-ncu/fa2-d256-source.csv.gz)
#      compares the same work instruction by instruction.
#  (3) bf16 D128 none on FA3's 128 x 176 (and 192) against our 128 x 128:
#      FA3's loop issues 6.75 instructions a score at 176, ours 7.6 at 128
#      (SASS, seventeenth session); 176 measured level on 2026-11-25,
#      before the unmasked tiles had a loop of their own.
#  (4) verification of the causal sm_90a forwards whose PTX the
#      buildUnmaskedKeyRange restatement changed (min(N - 1, d) + 1 for
#      min(N, d + 1) in the tile setup; MaskUtilsTest exhaustive).
#   gen (build machine):  fetch github:Dao-AILab/flash-attention and
#     github:NVIDIA/cutlass (agent tool), then
#     bash bench/results/2026-11-27-s17-scripts/next-session.sh gen
#   device: run(carry=["scratch/next"], command="bash bench/results/2026-11-27-s17-scripts/next-session.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/next
S17=bench/results/2026-11-27-s17-scripts
if [ "$1" = gen ]; then
  set -e; [ -z "$(git status --porcelain lib include)" ] || { echo "lib or include not clean"; exit 1; }
  rm -rf $W; mkdir -p $W/ours $W/sm80
  bash bench/fa3/get-sources.sh && bash bench/fa3/build_bench.sh && cp scratch/fa3/fa3_bench $W/
  for k in f8E4M3FN_d128_none bf16_d128_none; do cp kernels_generated/fa_fwd_sm90a_$k.* $W/ours/; done
  git apply $S17/sm80-d256-64x64-fa2-layout.diff; ninja -C build fa-compile >/dev/null
  FA_EXP=1 build/bin/fa-compile --target sm_80 -d 256 --mask none --bwd --bwd-block-m 64 -o $W/sm80 >/dev/null
  git checkout lib; ninja -C build >/dev/null
  for n in 176 192; do mkdir -p $W/n$n
    build/bin/fa-compile --target sm_90a -d 128 --block-n $n -o $W/n$n >/dev/null; done
  ls -R $W; exit 0
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
$W/fa3_bench --check || echo "fa3_bench --check FAILED: its timings below are not FA3's"
for round in 1 2; do for n in 4096 8192 16384; do b=$((32768 / n))
  echo "$round N$n $($W/fa3_bench --dtype e4m3 --b $b --h 16 --n $n | head -1)"
  echo "$round N$n ours e4m3 $($F --device cuda --kernel $W/ours/fa_fwd_sm90a_f8E4M3FN_d128_none.json --b $b --hq 16 --hkv 16 --m $n --n $n --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
  echo "$round N$n $($W/fa3_bench --dtype bf16 --b $b --h 16 --n $n | head -1)"
  echo "$round N$n ours bf16 $($F --device cuda --kernel $W/ours/fa_fwd_sm90a_bf16_d128_none.json --b $b --hq 16 --hkv 16 --m $n --n $n --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"
$F --device cuda --kernel $W/sm80/fa_fwd_sm80_bf16_d256_none.json --bwd --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd --verify | tail -1
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --section Occupancy"
G="Duration|Executed Ipc A|Warp Cycles Per Issued|Issued Warp|No Eligible|Eligible Warps|Achieved Occ|Registers Per"
timeout 200 ncu $S --import-source no -k regex:fa_bwd_sm80_bf16_d256_none_main --launch-count 1 -o /tmp/fa64 -f \
  $F --device cuda --kernel $W/sm80/fa_fwd_sm80_bf16_d256_none.json --bwd --b 1 --hq 8 --hkv 8 --m 4096 --n 4096 > /dev/null 2>&1
ncu --import /tmp/fa64.ncu-rep --print-summary none 2>&1 | grep -E "$G" | sed "s/^/fa 64x64 d256: /"
ncu --import /tmp/fa64.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/fa-d256-64x64-source.csv.gz
echo "   ($((SECONDS - start)) s)"
for n in n176 n192; do for size in 113x203 1023x1024 4096x4096; do
  echo "--kernel $W/$n/fa_fwd_sm90a_bf16_d128_none.json --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"; done; done > /tmp/jobs
FA_PARALLEL=12 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "bf16 block_n verify" < /tmp/jobs
for round in 1 2 3; do for v in ours n176 n192; do
  echo "$round bf16 d128 none $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_bf16_d128_none.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"
for k in kernels_generated/fa_fwd_sm90a_{bf16,f16}_d{64,128}_causal.json; do for size in 1x1 113x203 128x217 1023x1024 4096x4096; do
  echo "--kernel $k --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"
  echo "--kernel $k --b 2 --hq 4 --hkv 4 --m ${size%x*} --n ${size#*x} --layout bhsd"; done; done > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "causal sm_90a verify (buildUnmaskedKeyRange)" < /tmp/jobs
