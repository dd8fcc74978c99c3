# Seventeenth session, call 6 (device): the mbarrier.arrive after each
# P·V wait (V's stage release) moved to the end of the loop body
# (sink_arrive.py; sinkk: the K release after the S wait too), e4m3 and
# bf16 D128: where ptxas puts the wait, verify, time against base.
#   run(carry=["scratch/s17c"], command="bash bench/results/2026-11-27-s17-scripts/call6.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s17c
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS; mkdir -p $OUT/sass
KS="f8E4M3FN_d128_none f8E4M3FN_d128_causal bf16_d128_none bf16_d128_causal"
for k in $KS; do for v in base sink sinkk; do p=$W/$v/fa_fwd_sm90a_$k.ptx; ptxas -arch=sm_90a $p -o ${p%.ptx}.cubin
  cuobjdump -sass ${p%.ptx}.cubin > $OUT/sass/$v-$k.sass
  python3 $W/tok.py $OUT/sass/$v-$k.sass | grep -o 'A W1.*' | cut -c1-200 | sed "s|^|$v $k: |"; done; done
for v in sink sinkk; do for k in $KS; do for size in 1x1 113x203 1023x1024 4096x4096; do
  echo "--kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 8 --hkv 2 --m ${size%x*} --n ${size#*x} --layout bshd"; done; done; done > /tmp/jobs
FA_PARALLEL=12 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "sink verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for round in 1 2 3; do for k in $KS; do for v in base sink sinkk; do
  echo "$round $k $v $($F --device cuda --kernel $W/$v/fa_fwd_sm90a_$k.json --b 2 --hq 16 --hkv 16 --m 8192 --n 8192 --bench --iters 20 2>&1 | grep -o '[0-9.]* TFLOP/s')"
done; done; echo "   ($((SECONDS - start)) s)"; done
