# For the next session (written 2026-11-27, sixteenth session; PTX
# generated and ptxas-checked here, not run on a GPU). After 89da785 the
# SASS waits for P·V (W0) after the row max but still before the
# exponentials. What ptxas said here (ptxas -v, variants of
# wait-after-sum.diff, an experiment switched by environment variables):
#  * our wait dropped from the loop (drop-pv-wait.py): ptxas injects its
#    own ("C7517 warpgroup.wait is injected ... to allow use of registers
#    defined by GMMA") and serialises; with our wait present it injects
#    none, so the early W0 is OUR wait, moved up by the scheduler;
#  * P_j converted before the wait (FA_EXP_CONVERT_FIRST): "C7513 ...
#    serialized due to non wgmma instructions defining input registers of
#    a wgmma": P_j's F2FPs write P_{j-1}'s registers (the loop-carried P
#    is one register set), which the in-flight P·V reads. So the likely
#    mechanism: the scheduler hoists our wait so that those F2FPs (which
#    must follow it) can interleave with the MUFUs;
#  * a predicated wait (@p, p = sum >= 0 or NaN, even warp-uniform by
#    vote): ptxas treats it as maybe-not-executed, injects its own and
#    serialises (C7518 / C7517) -- dropped;
#  * "branch" (FA_EXP_WAIT_AFTER=1 as the diff stands): the wait inside a
#    warp-uniform branch on the row sum (vote.any of sum == 1.2345, both
#    paths wait): no C75xx note; the wait cannot move above the sum, and
#    ptxas waits at a branch. bf16 0 B spill; e4m3 D128 348 B (all 112
#    exponentials live until the branch) -- so bf16 only.
# The device call: SASS order (base / drop / reord / branch), verify reord
# and branch, time them against base. If branch pays at bf16, the e4m3
# version needs P_j in registers other than P_{j-1}'s (unroll by two now
# that the mask branch is gone: s15's fp8-unroll.diff, or a copy after
# the wait) so that the F2FPs can run before it.
#   gen (build machine, clean lib/include):
#     bash bench/results/2026-11-27-s16-scripts/next-wait.sh gen
#   device: run(carry=["scratch/wa"], command="bash bench/results/2026-11-27-s16-scripts/next-wait.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/wa
S=bench/results/2026-11-27-s16-scripts
KS="bf16_d128_none bf16_d128_causal bf16_d64_none f8E4M3FN_d128_none"
if [ "$1" = gen ]; then
  set -e; [ -z "$(git status --porcelain lib include)" ] || { echo "lib or include not clean"; exit 1; }
  rm -rf $W; mkdir -p $W/base $W/drop $W/reord $W/branch
  for k in $KS; do cp kernels_generated/fa_fwd_sm90a_$k.{json,ptx} $W/base/
    cp $W/base/fa_fwd_sm90a_$k.json $W/drop/
    python3 $S/drop-pv-wait.py $W/base/fa_fwd_sm90a_$k.ptx $W/drop/fa_fwd_sm90a_$k.ptx; done
  git apply $S/wait-after-sum.diff; ninja -C build fa-compile >/dev/null
  for spec in "bf16 128 none" "bf16 128 causal" "bf16 64 none" "f8e4m3fn 128 none"; do set -- $spec
    build/bin/fa-compile --target sm_90a --dtype $1 -d $2 --mask $3 -o $W/reord >/dev/null
    FA_EXP_WAIT_AFTER=1 build/bin/fa-compile --target sm_90a --dtype $1 -d $2 --mask $3 -o $W/branch >/dev/null; done
  git checkout lib include; ninja -C build >/dev/null; cp $S/sass_order.py $W/
  for f in $W/*/*.ptx; do echo "$f $(/usr/local/cuda/bin/ptxas -arch=sm_90a -v $f -o /dev/null 2>&1 | grep -o 'C75[0-9]*\|[0-9]* bytes spill stores' | head -2 | paste -sd' ')"; done
  exit 0
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run
for k in $KS; do for v in base drop reord branch; do p=$W/$v/fa_fwd_sm90a_$k.ptx
  ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin && python3 $W/sass_order.py ${p%.ptx}.cubin | grep -o 'B G1[0-9].*' | cut -c1-220 | sed "s|^|$v $k: |"; done; done
for v in reord branch; do for k in $KS; do for size in 113x203 1023x1024 4096x4096; do
  echo "--kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"; done; done; done > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "reord/branch verify" < /tmp/jobs
for r in 1 2; do for k in $KS; do for v in base reord branch; do
  echo "$r $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; done
