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
#  * "kbc" (wait-after-sum-keep.diff, FA_EXP_KEEP_P + FA_EXP_WAIT_AFTER +
#    FA_EXP_CONVERT_FIRST): the branch, P_j converted before it, and
#    P_{j-1}'s words passed to the wait's asm (read, not in its text) so
#    that LLVM keeps them live to the wait and cannot coalesce P_j into
#    them: the PTX then converts P_j into fresh registers before the wait
#    and copies them into the carried ones after it (27 mov.b32 at the
#    latch). e4m3 D128 / D256: no C75xx note, 56 B spill (base 48 / 56);
#    bf16 still draws C7513 (its P path differs; not looked into).
# The device call: SASS order (base / drop / reord / branch / kbc), verify
# reord, branch and kbc, time them against base. If kbc pays at e4m3, make
# it a real op (fa.mma_wait with a kept-alive operand, the ordering branch
# as its lowering) and a strategy rule; if branch pays at bf16, likewise.
#   gen (build machine, clean lib/include):
#     bash bench/results/2026-11-27-s16-scripts/next-wait.sh gen
#   device: run(carry=["scratch/wa"], command="bash bench/results/2026-11-27-s16-scripts/next-wait.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/wa
S=bench/results/2026-11-27-s16-scripts
KS="bf16_d128_none bf16_d128_causal bf16_d64_none f8E4M3FN_d128_none f8E4M3FN_d256_none"
if [ "$1" = gen ]; then
  set -e; [ -z "$(git status --porcelain lib include)" ] || { echo "lib or include not clean"; exit 1; }
  rm -rf $W; mkdir -p $W/base $W/drop $W/reord $W/branch $W/kbc
  for k in $KS; do cp kernels_generated/fa_fwd_sm90a_$k.{json,ptx} $W/base/
    cp $W/base/fa_fwd_sm90a_$k.json $W/drop/
    python3 $S/drop-pv-wait.py $W/base/fa_fwd_sm90a_$k.ptx $W/drop/fa_fwd_sm90a_$k.ptx; done
  git apply $S/wait-after-sum-keep.diff; ninja -C build fa-compile >/dev/null
  for spec in "bf16 128 none" "bf16 128 causal" "bf16 64 none" "f8e4m3fn 128 none" "f8e4m3fn 256 none"; do set -- $spec
    build/bin/fa-compile --target sm_90a --dtype $1 -d $2 --mask $3 -o $W/reord >/dev/null
    FA_EXP_WAIT_AFTER=1 build/bin/fa-compile --target sm_90a --dtype $1 -d $2 --mask $3 -o $W/branch >/dev/null
    FA_EXP_KEEP_P=1 FA_EXP_WAIT_AFTER=1 FA_EXP_CONVERT_FIRST=1 build/bin/fa-compile --target sm_90a --dtype $1 -d $2 --mask $3 -o $W/kbc >/dev/null; done
  git checkout lib include; ninja -C build >/dev/null; cp bench/results/2026-11-27-s15-scripts/sass_order.py $W/  # the s15 copy
  for f in $W/*/*.ptx; do echo "$f $(/usr/local/cuda/bin/ptxas -arch=sm_90a -v $f -o /dev/null 2>&1 | grep -o 'C75[0-9]*\|[0-9]* bytes spill stores' | head -2 | paste -sd' ')"; done
  exit 0
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run
for k in $KS; do for v in base drop reord branch kbc; do p=$W/$v/fa_fwd_sm90a_$k.ptx
  ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin && python3 $W/sass_order.py ${p%.ptx}.cubin | grep -o 'B G1[0-9].*' | cut -c1-220 | sed "s|^|$v $k: |"; done; done
for v in reord branch kbc; do for k in $KS; do for size in 113x203 1023x1024 4096x4096; do
  echo "--kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"; done; done; done > /tmp/jobs
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "reord/branch/kbc verify" < /tmp/jobs
# One round of everything, then a second of base / kbc at e4m3 (the 600 s
# limit: ~45 bench runs).
for k in $KS; do for v in base reord branch kbc; do
  echo "1 $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done
for k in f8E4M3FN_d128_none f8E4M3FN_d256_none; do for v in kbc base; do
  echo "2 $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done
