# Seventeenth session, call 7 (device): e4m3 D128 none at block_n 128 /
# 160 / 192 / 224 (HEAD's tile). Call 6's SASS showed why ptxas waits for
# P·V right after the row max: it takes R200-R203 -- P_{j-1}'s registers,
# the A operand of the wgmma in flight -- as temporaries for the first
# exponents (no free register left), so it must wait first. A smaller S
# (112 -> 96 / 80 / 64 registers) may leave room: where is the wait, and
# what does it cost?
#   run(carry=["scratch/s17d"], command="bash bench/results/2026-11-27-s17-scripts/call7.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s17d
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS; mkdir -p $OUT/sass
for v in n128 n160 n192 n224; do p=$W/$v/fa_fwd_sm90a_f8E4M3FN_d128_none.ptx; ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin
  cuobjdump -sass ${p%.ptx}.cubin > $OUT/sass/$v.sass
  python3 $W/tok.py $OUT/sass/$v.sass | grep -o 'A W1.*' | cut -c1-200 | sed "s|^|$v: |"; done
for v in n160 n192; do for size in 1x1 113x203 1023x1024 4096x4096; do
  echo "--kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d128_none.json --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"; done; done > /tmp/jobs
FA_PARALLEL=12 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "block_n verify" < /tmp/jobs
for round in 1 2 3; do for v in n224 n128 n160 n192; do
  echo "$round $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_f8E4M3FN_d128_none.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"
